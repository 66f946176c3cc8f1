--
-- GpuAgg: bugs found when this suite was written, one reproducer each,
-- with PostgreSQL's answer as the expected output (the device must give
-- the same, or run PostgreSQL's plan instead).  Each stays as a
-- regression test once fixed.  Whole results are compared with
-- gx_agg_diff, as "no MISMATCH" (same rows or the same error, whether the
-- fix runs them on the device, falls back at execution or keeps the
-- stock plan), then shown.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
SET max_parallel_workers_per_gather = 0;

--
-- 1. sum(numeric) past the 128-bit accumulator: every value fits the
-- device (below 10^38 at the accumulator's scale), their sum does not;
-- it must not wrap around
--
CREATE TABLE gx_agg_b1 (id int, g int, n numeric, n38 numeric(38,0));
INSERT INTO gx_agg_b1
SELECT x, x % 2, 9000000000000000000000, 90000000000000000000000000000000000000
  FROM generate_series(1, 40) x;
ANALYZE gx_agg_b1;
SELECT gx_agg_diff($$SELECT g, sum(n) AS s, avg(n) AS a FROM gx_agg_b1 GROUP BY g$$, false) !~ 'MISMATCH' AS same_as_stock;
SELECT gx_agg_diff($$SELECT g, sum(n38) AS s, avg(n38) AS a FROM gx_agg_b1 GROUP BY g$$, false) !~ 'MISMATCH' AS same_as_stock;
SELECT gx_agg_diff($$SELECT sum(n38) AS s FROM gx_agg_b1 WHERE g = 0 AND n38 > 0$$, false) !~ 'MISMATCH' AS same_as_stock;
SET gpuext.force_offload = on;
SELECT g, sum(n), avg(n), sum(n38) FROM gx_agg_b1 GROUP BY g ORDER BY g;
-- two rows are enough: 9e37 + 9e37 > 2^127
SELECT sum(n38) FROM gx_agg_b1 WHERE id <= 2;
SELECT sum(n38) FROM gx_agg_b1 WHERE g = 0 AND n38 > 0 HAVING count(*) > 0;
RESET gpuext.force_offload;
DROP TABLE gx_agg_b1;

--
-- 2. float sums and averages that overflow: PostgreSQL raises "value out
-- of range: overflow" (sum: the sum becomes infinite from finite inputs;
-- avg: also when the sum of squares it keeps does), the device returns
-- Infinity or a number
--
CREATE TABLE gx_agg_b2 (g int, f float8, f4 float4);
INSERT INTO gx_agg_b2 VALUES (1, 1e308, 1), (1, 1e308, 1), (1, 1e308, 1),
                             (2, 1e200, 1), (2, 1, 1), (3, 1e200, 1), (3, -1e200, 1);
ANALYZE gx_agg_b2;
SELECT gx_agg_diff($$SELECT sum(f) AS s FROM gx_agg_b2 WHERE g = 1$$, false) !~ 'MISMATCH' AS same_as_stock;
SELECT gx_agg_diff($$SELECT g, sum(f) AS s FROM gx_agg_b2 WHERE g = 1 GROUP BY g$$, false) !~ 'MISMATCH' AS same_as_stock;
SELECT gx_agg_diff($$SELECT avg(f) AS a FROM gx_agg_b2 WHERE g = 1$$, false) !~ 'MISMATCH' AS same_as_stock;
SELECT gx_agg_diff($$SELECT avg(f) AS a FROM gx_agg_b2 WHERE g = 2$$, false) !~ 'MISMATCH' AS same_as_stock;
SELECT gx_agg_diff($$SELECT avg(f) AS a, sum(f) AS s FROM gx_agg_b2 WHERE g = 3$$, false) !~ 'MISMATCH' AS same_as_stock;
SET gpuext.force_offload = on;
SELECT sum(f) FROM gx_agg_b2 WHERE g = 1;
SELECT avg(f) FROM gx_agg_b2 WHERE g = 2;
SELECT sum(f) FROM gx_agg_b2 WHERE g = 3;
SELECT avg(f) FROM gx_agg_b2 WHERE g = 3;
RESET gpuext.force_offload;
-- a -0.0 in the group hid the largest |input| (its sign bit made it the
-- largest bit pattern); found by the differential fuzzer
INSERT INTO gx_agg_b2 VALUES (4, '-0', 1), (4, -1.7976931348623157e308, 1), (4, -1e300, 1);
SELECT gx_agg_diff($$SELECT sum(f) AS s FROM gx_agg_b2 WHERE g = 4$$, false) !~ 'MISMATCH' AS same_as_stock;
SET gpuext.force_offload = on;
SELECT sum(f) FROM gx_agg_b2 WHERE g = 4;
RESET gpuext.force_offload;
DROP TABLE gx_agg_b2;

--
-- 3. an output column that is functionally dependent on the group key
-- (GROUP BY the primary key): the plan fails with "variable not found in
-- subplan target list"
--
CREATE TABLE gx_agg_b3 (id int PRIMARY KEY, name text, v int);
INSERT INTO gx_agg_b3 SELECT x, 'n' || x % 7, x FROM generate_series(1, 100) x;
ANALYZE gx_agg_b3;
SET gpuext.force_offload = on;
SELECT id, name, sum(v) FROM gx_agg_b3 GROUP BY id ORDER BY id LIMIT 3;
SELECT id, name, sum(v) FROM gx_agg_b3 GROUP BY id, name ORDER BY id LIMIT 3;
SELECT name, count(*) FROM (SELECT id, name FROM gx_agg_b3 GROUP BY id) s GROUP BY name ORDER BY name;
RESET gpuext.force_offload;
DROP TABLE gx_agg_b3;

--
-- 4. an output expression equal to a scan qual (WHERE g > 5 ... SELECT
-- g > 5) reads NULL: the qual's junk column of the node's tuple, which
-- is never filled in
--
CREATE TABLE gx_agg_b4 (id int, g int, n numeric);
INSERT INTO gx_agg_b4 SELECT x, x % 10, x % 3 FROM generate_series(1, 100) x;
INSERT INTO gx_agg_b4 VALUES (101, NULL, NULL);
ANALYZE gx_agg_b4;
SELECT gx_agg_diff($$SELECT g, g > 5 AS big, count(*) AS c FROM gx_agg_b4 WHERE g > 5 GROUP BY g$$, false) !~ 'MISMATCH' AS same_as_stock;
SELECT gx_agg_diff($$SELECT n = 1 AS one, count(*) AS c FROM gx_agg_b4 WHERE n = 1 GROUP BY n$$, false) !~ 'MISMATCH' AS same_as_stock;
SET gpuext.force_offload = on;
SELECT g, g > 5 AS big, count(*) FROM gx_agg_b4 WHERE g > 5 GROUP BY g ORDER BY g;
SELECT g IS NULL AS gnull, count(*) FROM gx_agg_b4 WHERE g IS NULL GROUP BY g;
SELECT g, (g > 5) IS TRUE AS big, count(*) FROM gx_agg_b4 WHERE g > 5 AND g < 8 GROUP BY g ORDER BY g;
RESET gpuext.force_offload;
DROP TABLE gx_agg_b4;

--
-- 5. a bpchar key without a length (typmod -1) loses its trailing
-- blanks: PostgreSQL returns the key as the rows hold it ('ab  ', from
-- char(4) values; for a plain bpchar column, the first row's value)
--
CREATE TABLE gx_agg_b5 (c char(4), b bpchar);
INSERT INTO gx_agg_b5 SELECT (ARRAY['a', 'ab', 'abc '])[x % 3 + 1], (ARRAY['a ', 'ab  ', 'x'])[x % 3 + 1]
  FROM generate_series(1, 300) x;
ANALYZE gx_agg_b5;
SELECT gx_agg_diff($$SELECT c::bpchar AS k, count(*) AS n FROM gx_agg_b5 GROUP BY 1$$, false) !~ 'MISMATCH' AS same_as_stock;
SELECT gx_agg_diff($$SELECT b, count(*) AS n FROM gx_agg_b5 GROUP BY b$$, false) !~ 'MISMATCH' AS same_as_stock;
SET gpuext.force_offload = on;
SELECT '[' || (c::bpchar)::text || ']' AS trimmed, octet_length(c::bpchar) AS bytes, count(*)
  FROM gx_agg_b5 GROUP BY c::bpchar ORDER BY 1;
SELECT '[' || b::text || ']' AS trimmed, octet_length(b) AS bytes, count(*) FROM gx_agg_b5 GROUP BY b ORDER BY 1;
RESET gpuext.force_offload;
DROP TABLE gx_agg_b5;

--
-- 6. text keys in a nondeterministic collation are grouped by their bytes:
-- 'a' and 'A' are one group in a case-insensitive collation, two on the
-- device.  (Needs ICU; without it the collation made here is
-- deterministic and the check is trivially true.)
--
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_collation WHERE collprovider = 'i') THEN
    CREATE COLLATION gx_agg_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
  ELSE
    CREATE COLLATION gx_agg_ci FROM "C";
  END IF;
END
$$;
CREATE TABLE gx_agg_b6 (id int, t text COLLATE gx_agg_ci, u text);
INSERT INTO gx_agg_b6 SELECT x, v, v
  FROM generate_series(1, 100) x, LATERAL (SELECT (ARRAY['a', 'A', 'b', 'B', 'c'])[x % 5 + 1] AS v) v;
ANALYZE gx_agg_b6;
SELECT gx_agg_diff($$SELECT t, count(*) AS c FROM gx_agg_b6 GROUP BY t$$, false) !~ 'MISMATCH' AS same_as_stock;
SELECT gx_agg_diff($$SELECT u COLLATE gx_agg_ci AS u, count(*) AS c FROM gx_agg_b6 GROUP BY 1$$, false) !~ 'MISMATCH' AS same_as_stock;
SELECT gx_agg_diff($$SELECT lower(t) AS l, count(*) AS c, sum(id) AS s FROM gx_agg_b6 GROUP BY t$$, false) !~ 'MISMATCH' AS same_as_stock;
DROP TABLE gx_agg_b6;
DROP COLLATION gx_agg_ci;

--
-- 7. GROUPING() with a plain GROUP BY (no grouping sets) fails: "GroupingFunc
-- found in non-Agg plan node"
--
SET gpuext.force_offload = on;
SELECT g, GROUPING(g) AS gr, count(*) FROM gx_agg GROUP BY g ORDER BY g LIMIT 3;
SELECT g FROM gx_agg GROUP BY g HAVING GROUPING(g) = 0 ORDER BY g LIMIT 2;
RESET gpuext.force_offload;

--
-- 8. sum(float8) of only negative zeros is -0 in PostgreSQL (its first
-- input is the starting sum), 0 on the device (which starts from +0);
-- avg is 0 in both (PostgreSQL starts it from +0)
--
CREATE TABLE gx_agg_b8 (g int, f float8);
INSERT INTO gx_agg_b8 SELECT x % 2, CASE WHEN x % 2 = 0 THEN '-0'::float8 ELSE 0 END FROM generate_series(1, 10) x;
ANALYZE gx_agg_b8;
SET gpuext.force_offload = on;
SELECT g, sum(f), avg(f), min(f), max(f) FROM gx_agg_b8 GROUP BY g ORDER BY g;
SELECT sum(f) FROM gx_agg_b8 WHERE g = 0;
RESET gpuext.force_offload;
DROP TABLE gx_agg_b8;

--
-- 9. (found on the GPU machine by the 10,000-query fuzz run) a GpuAgg or
-- GpuJoin on the CPU engine that ended in an error kept its table's slot:
-- after 64 such errors in one session every later one failed with "too
-- many CPU engine group tables"
--
CREATE TABLE gx_agg_b9 (g int, v int);
INSERT INTO gx_agg_b9 SELECT x % 3, x FROM generate_series(1, 100) x;
CREATE TABLE gx_agg_b9d (k int, w int);
INSERT INTO gx_agg_b9d SELECT x, x % 5 FROM generate_series(0, 2) x;
ANALYZE gx_agg_b9;
ANALYZE gx_agg_b9d;
SET gpuext.force_offload = on;
SET gpuext.device = cpu;
CREATE FUNCTION gx_agg_b9_errors(n int) RETURNS int AS $$
DECLARE
  errors int := 0;
BEGIN
  FOR i IN 1 .. n LOOP
    BEGIN
      PERFORM g, sum(1 / (v - v)) FROM gx_agg_b9 GROUP BY g;
    EXCEPTION WHEN division_by_zero THEN
      errors := errors + 1;
    END;
    BEGIN
      PERFORM b.w, sum(1 / (a.v - a.v)) FROM gx_agg_b9 a JOIN gx_agg_b9d b ON a.g = b.k GROUP BY b.w;
    EXCEPTION WHEN division_by_zero THEN
      errors := errors + 1;
    END;
  END LOOP;
  RETURN errors;
END $$ LANGUAGE plpgsql;
SELECT gx_agg_b9_errors(100) AS errors;
EXPLAIN (COSTS OFF) SELECT b.w, count(*), sum(a.v) FROM gx_agg_b9 a JOIN gx_agg_b9d b ON a.g = b.k GROUP BY b.w;
SELECT b.w, count(*), sum(a.v) FROM gx_agg_b9 a JOIN gx_agg_b9d b ON a.g = b.k GROUP BY b.w ORDER BY 1;
SELECT g, count(*), sum(v) FROM gx_agg_b9 GROUP BY g ORDER BY g;
RESET gpuext.device;
RESET gpuext.force_offload;
DROP FUNCTION gx_agg_b9_errors(int);
DROP TABLE gx_agg_b9, gx_agg_b9d;
