--
-- Column caches: gpuext_cache_enable / gpuext_cache_drop / gpuext_caches,
-- their errors, and GpuScan and GpuAgg reading cached pages (CPU engine:
-- the GPU's copy of the cache is not built yet) with results equal to
-- stock PostgreSQL's before and after every kind of write.  Uses gx_diff
-- from gpuscan_setup and gx_agg_diff from gpuagg_setup.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
SET gpuext.enable_gpuagg = off;
SET gpuext.device = cpu;
-- commits flushed at once, so that VACUUM can set pages all-visible right
-- after them (the test cluster runs with synchronous_commit = off)
SET synchronous_commit = on;

-- the "Cached Pages" of a query's GpuScan under EXPLAIN ANALYZE (NULL: the
-- scan did not use a cache), as gx_diff runs it offloaded
CREATE FUNCTION gx_cached_pages(q text) RETURNS bigint
LANGUAGE plpgsql
SET gpuext.force_offload = on
SET gpuext.enabled = on
AS $fn$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  RETURN (SELECT (p->>'Cached Pages')::bigint
            FROM json_array_elements(plan) AS top(t),
                 LATERAL (SELECT t->'Plan' UNION ALL SELECT t->'Plan'->'Plans'->0) AS x(p)
           WHERE p->>'Custom Plan Provider' IN ('GpuScan', 'GpuAgg'));
END;
$fn$;

-- what the test tables' caches look like (no timestamps)
CREATE VIEW gx_caches AS
  SELECT relation, columns, pages, blocks, rows, state FROM gpuext_caches() ORDER BY relation::text;

CREATE TABLE cc (id int, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, b bool,
                 d date, ts timestamp, tz timestamptz, t text, gone int, n numeric);
INSERT INTO cc
  SELECT g, (g % 300)::int2, CASE WHEN g % 11 = 0 THEN NULL ELSE g % 1000 END, g * 1000003::int8,
         (g % 97) / 4.0, CASE WHEN g % 13 = 0 THEN NULL ELSE g / 7.0 END, g % 3 = 0,
         date '2020-01-01' + g % 500, timestamp '2020-01-01' + g * interval '1 minute',
         timestamptz '2020-01-01 00:00+00' + g * interval '1 hour',
         'row' || g, g, g / 3.0
    FROM generate_series(1, 20000) g;
ALTER TABLE cc DROP COLUMN gone;
ALTER TABLE cc ADD COLUMN late int DEFAULT 42;
VACUUM (FREEZE, ANALYZE) cc;

--
-- errors
--
SELECT gpuext_cache_enable(NULL);
SELECT gpuext_cache_enable('cc', ARRAY['t']);
SELECT gpuext_cache_enable('cc', ARRAY['n']);
SELECT gpuext_cache_enable('cc', ARRAY['nope']);
SELECT gpuext_cache_enable('cc', ARRAY['ctid']);
SELECT gpuext_cache_enable('cc', ARRAY['i4', NULL]);
SELECT gpuext_cache_enable('cc', ARRAY[]::text[]);
SELECT gpuext_cache_enable('cc', ARRAY['i4', 'i4']);
SELECT gpuext_cache_enable('cc', ARRAY['gone']);
CREATE VIEW cc_view AS SELECT * FROM cc;
SELECT gpuext_cache_enable('cc_view');
CREATE INDEX cc_id ON cc (id);
SELECT gpuext_cache_enable('cc_id');
SELECT gpuext_cache_enable('pg_class');
CREATE TEMP TABLE cc_temp (a int);
SELECT gpuext_cache_enable('cc_temp');
CREATE TABLE cc_part (a int) PARTITION BY RANGE (a);
CREATE TABLE cc_part1 PARTITION OF cc_part FOR VALUES FROM (0) TO (100);
SELECT gpuext_cache_enable('cc_part');
SELECT gpuext_cache_enable('cc_part1');
CREATE TABLE cc_parent (a int);
CREATE TABLE cc_child () INHERITS (cc_parent);
SELECT gpuext_cache_enable('cc_child');
CREATE TABLE cc_texts (t text, n numeric);
SELECT gpuext_cache_enable('cc_texts');
CREATE TABLE cc_trig (a int);
CREATE FUNCTION cc_noop() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NULL; END$$;
CREATE TRIGGER gpuext_cache_stmt AFTER INSERT ON cc_trig FOR EACH STATEMENT EXECUTE FUNCTION cc_noop();
SELECT gpuext_cache_enable('cc_trig');
SELECT gpuext_cache_invalidate();
-- only the owner (or a superuser) builds or drops a cache
CREATE ROLE gx_cc_other;
GRANT SELECT ON cc TO gx_cc_other;
SET ROLE gx_cc_other;
SELECT gpuext_cache_enable('cc');
SELECT gpuext_cache_drop('cc');
RESET ROLE;
SELECT * FROM gx_caches;

--
-- a cache of every cacheable column (NULLs, a dropped and an added column)
--
SELECT gpuext_cache_enable('cc') > 0 AS cached;
SELECT relation, columns, pages = blocks AS all_pages, rows, state FROM gx_caches;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'cc'::regclass ORDER BY tgname;
-- gpuext_caches() lists the tables the caller may read
SET ROLE gx_cc_other;
SELECT relation, state FROM gpuext_caches();
RESET ROLE;
REVOKE SELECT ON cc FROM gx_cc_other;
SET ROLE gx_cc_other;
SELECT relation, state FROM gpuext_caches();
RESET ROLE;

SELECT gx_diff($$SELECT * FROM cc WHERE i4 > 500$$);
SELECT gx_diff($$SELECT id, ctid FROM cc WHERE i4 IS NULL$$);
SELECT gx_diff($$SELECT * FROM cc WHERE f8 IS NULL OR f8 < 10$$);
SELECT gx_diff($$SELECT id FROM cc WHERE i2 = 9 AND b$$);
SELECT gx_diff($$SELECT id FROM cc WHERE i8 % 7 = 1 AND f4 > 3$$);
SELECT gx_diff($$SELECT id FROM cc WHERE d BETWEEN '2020-03-01' AND '2020-03-05'$$);
SELECT gx_diff($$SELECT id FROM cc WHERE ts < '2020-01-02' OR tz > '2022-01-01'$$);
SELECT gx_diff($$SELECT id FROM cc WHERE late = 42 AND i4 < 10$$);
-- a row that errors on the device is rechecked on the host: same error
SELECT gx_diff($$SELECT id FROM cc WHERE 1000 / (i4 - 500) > 0$$);
SELECT gx_diff($$SELECT id FROM cc WHERE i2 * 1000 > 0$$);
-- the scans read the cache
SELECT gx_cached_pages($$SELECT * FROM cc WHERE i4 > 500$$) = (SELECT pages FROM gx_caches) AS all_cached;
SELECT gx_cached_pages($$SELECT id FROM cc WHERE i2 = 9 AND b$$) > 0 AS cached;
-- a qual on a column the cache lacks reads the heap
SELECT gx_cached_pages($$SELECT id FROM cc WHERE t LIKE 'row1%' AND i4 > 0$$) AS not_cached;
SELECT gx_diff($$SELECT id FROM cc WHERE t LIKE 'row1%' AND i4 > 0$$);
-- gpuext.enable_cache = off reads the heap
SET gpuext.enable_cache = off;
SELECT gx_cached_pages($$SELECT * FROM cc WHERE i4 > 500$$) AS not_cached;
RESET gpuext.enable_cache;
-- EXPLAIN ANALYZE counts cached pages, and those read for their rows
SET gpuext.force_offload = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM cc WHERE i4 = 5;
RESET gpuext.force_offload;
-- parallel scans
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT gx_diff($$SELECT * FROM cc WHERE i4 > 900$$);
SELECT gx_cached_pages($$SELECT * FROM cc WHERE i4 > 900$$) IS NOT NULL AS cache_opened;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
-- GpuAgg reads the cache too (count(*) needs no heap page at all)
SET gpuext.enable_gpuagg = on;
SELECT gx_agg_diff($$SELECT count(*) FROM cc WHERE i4 > 500$$);
SELECT gx_agg_diff($$SELECT count(*) AS n, count(i4) AS n4, sum(i4), min(f8), max(tz) FROM cc$$);
SELECT gx_agg_diff($$SELECT i2 % 10 AS k, count(*), sum(i8), min(d), max(ts), avg(f8) FROM cc WHERE b GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT b, count(*) FROM cc WHERE i4 IS NULL OR f8 IS NULL GROUP BY b$$);
SELECT gx_cached_pages($$SELECT count(*) FROM cc WHERE i4 > 500$$) = (SELECT pages FROM gx_caches) AS all_cached;
SET gpuext.force_offload = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM cc WHERE i4 > 500;
RESET gpuext.force_offload;
-- a GpuAgg needing an uncached column reads the heap
SELECT gx_cached_pages($$SELECT count(*) FROM cc WHERE t LIKE 'row5%'$$) AS not_cached;
SELECT gx_agg_diff($$SELECT count(*) FROM cc WHERE t LIKE 'row5%'$$);
SET gpuext.enable_gpuagg = off;
-- the GPU path (gpuext.cache_gpu = on): on a GPU the kernels read the
-- cache's device copy; without one the batches fall back to the CPU
-- engine, which reads the same cache.  Same answers either way
SET gpuext.device = gpu;
SET gpuext.cache_gpu = on;
SELECT gx_diff($$SELECT * FROM cc WHERE i4 > 500$$);
SELECT gx_diff($$SELECT id, ctid FROM cc WHERE i4 IS NULL OR f8 IS NULL$$);
SELECT gx_cached_pages($$SELECT * FROM cc WHERE i4 > 500$$) = (SELECT pages FROM gx_caches) AS all_cached;
SET gpuext.enable_gpuagg = on;
SELECT gx_agg_diff($$SELECT i2 % 10 AS k, count(*), sum(i8), min(d), max(ts) FROM cc WHERE b GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT count(*) FROM cc WHERE i4 > 500 AND f8 IS NOT NULL$$);
SET gpuext.enable_gpuagg = off;
RESET gpuext.cache_gpu;
SET gpuext.device = cpu;
-- cursors and rescans
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id FROM cc WHERE i4 = 17 ORDER BY id;
FETCH 2 FROM c;
FETCH ABSOLUTE 1 FROM c;
COMMIT;
SELECT gx_diff($$SELECT v.x, s.c FROM (VALUES (1), (2), (3)) v(x), LATERAL (SELECT count(*) c FROM cc WHERE i4 = v.x + 3) s$$);

--
-- writes: each one stops the cache until it is rebuilt, in the writing
-- transaction too, and the results stay stock's
--
-- INSERT in the same transaction as the query
BEGIN;
INSERT INTO cc (id, i4) VALUES (-1, 7);
SELECT gx_diff($$SELECT id FROM cc WHERE i4 = 7$$);
SELECT gx_cached_pages($$SELECT id FROM cc WHERE i4 = 7$$) AS not_cached;
ROLLBACK;
-- an aborted write leaves the cache stopped (counted before it could commit)
SELECT state FROM gx_caches;
SELECT gx_cached_pages($$SELECT id FROM cc WHERE i4 = 7$$) AS not_cached;
SELECT gx_diff($$SELECT id FROM cc WHERE i4 = 7$$);
-- rebuild: the pages all-visible again are cached
VACUUM cc;
SELECT gpuext_cache_enable('cc', ARRAY['id', 'i4', 'f8']) > 0 AS cached;
SELECT relation, columns, pages = blocks AS all_pages, rows, state FROM gx_caches;
SELECT gx_cached_pages($$SELECT id FROM cc WHERE i4 = 7$$) > 0 AS cached;
-- UPDATE: the rebuilt cache holds only the pages still all-visible
UPDATE cc SET i4 = i4 + 1 WHERE id % 1000 = 0;
SELECT state FROM gx_caches;
SELECT gx_diff($$SELECT id, i4 FROM cc WHERE i4 % 100 = 1$$);
SELECT gpuext_cache_enable('cc', ARRAY['id', 'i4', 'f8']) > 0 AS cached;
SELECT pages < blocks AS some_pages, state FROM gx_caches;
SELECT gx_cached_pages($$SELECT id, i4 FROM cc WHERE i4 % 100 = 1$$) > 0 AS cached;
SELECT gx_diff($$SELECT id, i4 FROM cc WHERE i4 % 100 = 1$$);
-- DELETE, then vacuum and rebuild
DELETE FROM cc WHERE id % 5 = 0;
SELECT state FROM gx_caches;
SELECT gx_diff($$SELECT id FROM cc WHERE i4 < 50$$);
VACUUM cc;
SELECT gpuext_cache_enable('cc', ARRAY['id', 'i4', 'f8']) > 0 AS cached;
SELECT pages = blocks AS all_pages, state FROM gx_caches;
SELECT gx_cached_pages($$SELECT id FROM cc WHERE i4 < 50$$) > 0 AS cached;
SELECT gx_diff($$SELECT id FROM cc WHERE i4 < 50$$);
-- a write through an updatable view counts too
UPDATE cc_view SET f8 = 0 WHERE id = 1;
SELECT state FROM gx_caches;
SELECT gx_diff($$SELECT id FROM cc WHERE f8 = 0$$);
SELECT gpuext_cache_enable('cc', ARRAY['id', 'i4', 'f8']) > 0 AS cached;
-- COPY counts
COPY cc (id, i4) FROM stdin;
-2	7
\.
SELECT state FROM gx_caches;
SELECT gx_diff($$SELECT id FROM cc WHERE i4 = 7$$);
VACUUM cc;
SELECT gpuext_cache_enable('cc', ARRAY['id', 'i4', 'f8']) > 0 AS cached;
-- session_replication_role = replica: the ALWAYS trigger still fires
SET session_replication_role = replica;
INSERT INTO cc (id, i4) VALUES (-3, 7);
RESET session_replication_role;
SELECT state FROM gx_caches;
SELECT gx_diff($$SELECT id FROM cc WHERE i4 = 7$$);
VACUUM cc;
SELECT gpuext_cache_enable('cc', ARRAY['id', 'i4', 'f8']) > 0 AS cached;
-- disabling the triggers stops the cache for good (until rebuilt), even
-- when they are enabled again
ALTER TABLE cc DISABLE TRIGGER ALL;
SELECT state FROM gx_caches;
INSERT INTO cc (id, i4) VALUES (-4, 7);
ALTER TABLE cc ENABLE ALWAYS TRIGGER gpuext_cache_stmt;
ALTER TABLE cc ENABLE REPLICA TRIGGER gpuext_cache_row;
SELECT state FROM gx_caches;
SELECT gx_cached_pages($$SELECT id FROM cc WHERE i4 = 7$$) AS not_cached;
SELECT gx_diff($$SELECT id FROM cc WHERE i4 = 7$$);
VACUUM cc;
SELECT gpuext_cache_enable('cc', ARRAY['id', 'i4', 'f8']) > 0 AS cached;
-- VACUUM FULL writes a new file
VACUUM FULL cc;
SELECT state FROM gx_caches;
SELECT gx_cached_pages($$SELECT id FROM cc WHERE i4 = 7$$) AS not_cached;
SELECT gx_diff($$SELECT id FROM cc WHERE i4 = 7$$);
VACUUM cc;
SELECT gpuext_cache_enable('cc', ARRAY['id', 'i4', 'f8']) > 0 AS cached;
SELECT state FROM gx_caches;
-- becoming an inheritance child (writes through the parent do not fire the
-- child's statement triggers) stops the cache, also after it is detached
CREATE TABLE cc_base (id int, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, b bool,
                      d date, ts timestamp, tz timestamptz, t text, n numeric, late int);
ALTER TABLE cc INHERIT cc_base;
SELECT state FROM gx_caches;
SELECT gx_cached_pages($$SELECT id FROM cc WHERE i4 = 7$$) AS not_cached;
ALTER TABLE cc NO INHERIT cc_base;
SELECT state FROM gx_caches;
SELECT gx_diff($$SELECT id FROM cc WHERE i4 = 7$$);
DROP TABLE cc_base;
SELECT gpuext_cache_enable('cc', ARRAY['id', 'i4', 'f8']) > 0 AS cached;
SELECT state FROM gx_caches;
-- TRUNCATE in a transaction that rolls back: the count moved anyway
BEGIN;
TRUNCATE cc;
SELECT gx_diff($$SELECT id FROM cc WHERE i4 = 7$$);
ROLLBACK;
SELECT state FROM gx_caches;
SELECT gx_diff($$SELECT id FROM cc WHERE i4 = 7$$);
-- a cache built in a transaction that aborts leaves nothing behind
SELECT gpuext_cache_drop('cc');
BEGIN;
SELECT gpuext_cache_enable('cc', ARRAY['id', 'i4']) > 0 AS cached;
SELECT count(*) FROM gx_caches;
ROLLBACK;
SELECT count(*) FROM gx_caches;
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'cc'::regclass;
-- a cache built in the writing transaction, then written to
BEGIN;
SELECT gpuext_cache_enable('cc', ARRAY['id', 'i4']) > 0 AS cached;
SELECT gx_cached_pages($$SELECT id FROM cc WHERE i4 = 7$$) > 0 AS cached;
DELETE FROM cc WHERE i4 = 7;
SELECT gx_cached_pages($$SELECT id FROM cc WHERE i4 = 7$$) AS not_cached;
SELECT gx_diff($$SELECT id FROM cc WHERE i4 = 7$$);
ROLLBACK;
SELECT count(*) FROM gx_caches;

-- drop
SELECT gpuext_cache_enable('cc', ARRAY['id', 'i4']) > 0 AS cached;
SELECT gpuext_cache_drop('cc');
SELECT gpuext_cache_drop('cc');
SELECT count(*) FROM gx_caches;
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'cc'::regclass;
SELECT gx_cached_pages($$SELECT id FROM cc WHERE i4 = 7$$) AS not_cached;
-- the memory limit
SET gpuext.cache_memory_limit = 0;
SELECT gpuext_cache_enable('cc');
RESET gpuext.cache_memory_limit;
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'cc'::regclass;
-- a dropped table's cache goes with it
CREATE TABLE cc_gone (a int);
INSERT INTO cc_gone SELECT generate_series(1, 100);
VACUUM cc_gone;
SELECT gpuext_cache_enable('cc_gone');
DROP TABLE cc_gone;
SELECT count(*) FROM gpuext_caches();
-- an empty table
CREATE TABLE cc_empty (a int);
SELECT gpuext_cache_enable('cc_empty');
SELECT gx_diff($$SELECT a FROM cc_empty WHERE a > 0$$);
SELECT gpuext_cache_drop('cc_empty');

DROP TABLE cc_empty, cc_texts, cc_trig, cc_part, cc_parent CASCADE;
DROP FUNCTION cc_noop();
DROP VIEW cc_view;
DROP TABLE cc;
REVOKE ALL ON SCHEMA public FROM gx_cc_other;
DROP ROLE gx_cc_other;
DROP VIEW gx_caches;
DROP FUNCTION gx_cached_pages(text);

-- triggers altered in the transaction that created them: the new row
-- versions have the same xmin as the ones the cache recorded, so a write
-- made while they were disabled must still stop the cache (VACUUM then
-- sets the page all-visible again, with the write in it)
CREATE TABLE cc_tx (id int, v int);
INSERT INTO cc_tx SELECT g, g % 10 FROM generate_series(1, 2000) g;
VACUUM cc_tx;
BEGIN;
SELECT gpuext_cache_enable('cc_tx') > 0 AS cached;
ALTER TABLE cc_tx DISABLE TRIGGER gpuext_cache_stmt;
DELETE FROM cc_tx WHERE id <= 10;
ALTER TABLE cc_tx ENABLE ALWAYS TRIGGER gpuext_cache_stmt;
COMMIT;
VACUUM cc_tx;
SELECT gx_diff($$SELECT id FROM cc_tx WHERE v >= 0$$);
SELECT gpuext_cache_drop('cc_tx');
DROP TABLE cc_tx;

-- a dropped database's caches go too: DROP DATABASE fires no sql_drop
-- event trigger, and nobody can connect there to drop them, so they must
-- not keep their memory (counted against gpuext.cache_memory_limit)
\set regdb :DBNAME
CREATE DATABASE gx_cc_gone_db;
\c gx_cc_gone_db
SET synchronous_commit = on;
CREATE EXTENSION gpuext;
CREATE TABLE cc_big (a int8);
INSERT INTO cc_big SELECT generate_series(1, 60000);
VACUUM cc_big;
SELECT gpuext_cache_enable('cc_big') > 0 AS cached;
\c :regdb
DROP DATABASE gx_cc_gone_db WITH (FORCE);
SET synchronous_commit = on;
CREATE TABLE cc_big (a int8);
INSERT INTO cc_big SELECT generate_series(1, 60000);
VACUUM cc_big;
SET gpuext.cache_memory_limit = '1MB';
SELECT gpuext_cache_enable('cc_big') > 0 AS cached;
RESET gpuext.cache_memory_limit;
SELECT gpuext_cache_drop('cc_big');
DROP TABLE cc_big;
-- so do the caches of tables dropped while no event trigger fires
-- (session_replication_role = replica: sql_drop does not run)
CREATE TABLE cc_big (a int8);
INSERT INTO cc_big SELECT generate_series(1, 60000);
VACUUM cc_big;
SELECT gpuext_cache_enable('cc_big') > 0 AS cached;
SET session_replication_role = replica;
DROP TABLE cc_big;
RESET session_replication_role;
CREATE TABLE cc_big2 (a int8);
INSERT INTO cc_big2 SELECT generate_series(1, 60000);
VACUUM cc_big2;
SET gpuext.cache_memory_limit = '1MB';
SELECT gpuext_cache_enable('cc_big2') > 0 AS cached;
RESET gpuext.cache_memory_limit;
SELECT gpuext_cache_drop('cc_big2');
DROP TABLE cc_big2;
-- a cache built in a savepoint that is rolled back leaves no entry (its
-- triggers are rolled back with it); one built in a released savepoint
-- stays with the transaction
CREATE TABLE cc_sp (a int8);
INSERT INTO cc_sp SELECT generate_series(1, 1000);
VACUUM cc_sp;
BEGIN;
SAVEPOINT s1;
SELECT gpuext_cache_enable('cc_sp') > 0 AS cached;
ROLLBACK TO s1;
SELECT count(*) AS entries FROM gpuext_caches() WHERE relation = 'cc_sp'::regclass;
SAVEPOINT s2;
SAVEPOINT s3;
SELECT gpuext_cache_enable('cc_sp') > 0 AS cached;
RELEASE s3;
RELEASE s2;
COMMIT;
SELECT count(*) AS entries, min(state) AS state FROM gpuext_caches() WHERE relation = 'cc_sp'::regclass;
SELECT gpuext_cache_drop('cc_sp');
DROP TABLE cc_sp;
