-- The load test's tables (test/load/run.sh): a fact table of :rows rows and a
-- dimension table of 10 000, every value a function of the row number (the
-- same data on every machine), loaded in slices so several sessions can
-- fill it at once.  psql variables: rows (total), lo and hi (this slice's
-- row numbers; the first slice, lo = 1, also creates the tables).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SELECT :lo = 1 AS first_slice \gset
\if :first_slice
DROP TABLE IF EXISTS load_fact, load_dim;
CREATE TABLE load_fact (
    id       int8 NOT NULL,
    k        int4 NOT NULL,      -- group key, 1024 values
    dim_id   int4 NOT NULL,      -- load_dim.id, 1 .. 10 000
    qty      int4 NOT NULL,      -- 1 .. 50
    price    numeric(12,2) NOT NULL,
    disc     numeric(4,2) NOT NULL,  -- 0.00 .. 0.10
    tax      numeric(4,2) NOT NULL,  -- 0.00 .. 0.08
    flag     char(1) NOT NULL,   -- A N R
    status   char(1) NOT NULL,   -- F O
    shipdate date NOT NULL,      -- 1992-01-01 .. 1998-11-30
    f        float8 NOT NULL     -- [0, 1)
);
CREATE TABLE load_dim (
    id     int4 PRIMARY KEY,
    region int4 NOT NULL,        -- 0 .. 24
    name   text NOT NULL
);
INSERT INTO load_dim
SELECT g, g % 25, 'dim ' || g FROM generate_series(1, 10000) g;
\endif
INSERT INTO load_fact
SELECT g,
       hashint8extended(g, 1) & 1023,
       1 + ((hashint8extended(g, 2) & 1073741823) % 10000),
       1 + ((hashint8extended(g, 3) & 1073741823) % 50),
       900 + ((hashint8extended(g, 4) & 1073741823) % 100000) / 100.0,
       ((hashint8extended(g, 5) & 1073741823) % 11) / 100.0,
       ((hashint8extended(g, 6) & 1073741823) % 9) / 100.0,
       substr('ANR', 1 + ((hashint8extended(g, 7) & 1073741823) % 3)::int, 1),
       CASE WHEN hashint8extended(g, 8) & 1 = 0 THEN 'F' ELSE 'O' END,
       date '1992-01-01' + ((hashint8extended(g, 9) & 1073741823) % 2526)::int,
       (hashint8extended(g, 10) & 16777215) / 16777216.0
  FROM generate_series(:lo::int8, :hi::int8) g;
