-- SQL functions: gpuext_status() and gpuext_devices() (columns, sane
-- values), gpuext_page_counts() against the truth from ctid and
-- pageinspect on every engine (deleted, updated, vacuumed, empty tables,
-- small batches), bad input with SQLSTATEs, privileges, and cancellation
-- of a long request by statement_timeout.  Only booleans and exact row
-- counts are printed, so the output is the same with and without a GPU.
\set VERBOSITY terse
\set SHOW_CONTEXT never
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
CREATE EXTENSION IF NOT EXISTS pageinspect;
RESET client_min_messages;

--
-- gpuext_status()
--
SELECT * FROM gpuext_status() WHERE false;
SELECT service_state IN ('ready', 'no gpu') AS service_up,
       service_pid IS NOT NULL AND service_pid <> pg_backend_pid() AS has_service_pid,
       detail IS NOT NULL AS has_detail,
       (service_state = 'ready') = (devices > 0) AS devices_match_state,
       devices BETWEEN 0 AND 8 AS devices_in_range,
       requests_served >= 0 AND requests_failed >= 0 AND requests_cancelled >= 0 AS requests_ok,
       gpu_batches >= 0 AND cpu_batches >= 0 AND fallbacks >= 0 AS batches_ok,
       bytes_read >= 0 AND bytes_returned >= 0 AND device_time_ms >= 0 AS volumes_ok,
       device_memory_in_use = 0 AS no_device_memory_held,
       dma_arena_in_use = 0 AS no_arena_held,
       service_restarts >= 0 AS restarts_ok
  FROM gpuext_status();
-- one row, every time
SELECT count(*) FROM gpuext_status();

--
-- gpuext_devices()
--
SELECT * FROM gpuext_devices() WHERE false;
SELECT count(*) >= 1 AS has_rows,
       bool_and(engine IN ('gpu', 'cpu')) AS engine_ok,
       count(*) FILTER (WHERE engine = 'cpu') = 0 OR count(*) = 1 AS cpu_row_alone,
       count(*) FILTER (WHERE engine = 'gpu') = (SELECT devices FROM gpuext_status()) AS matches_status,
       count(DISTINCT device_index) = count(*) AS distinct_indexes,
       bool_and(CASE engine
                WHEN 'gpu' THEN device_index >= 0 AND name <> '' AND sm_count > 0
                     AND memory_total > 0 AND memory_free BETWEEN 0 AND memory_total
                     AND memory_used_by_gpuext = 0
                     AND compute_capability ~ '^[0-9]+\.[0-9]+$' AND status = 'ready'
                ELSE device_index = -1 AND name = 'CPU engine' AND sm_count IS NULL
                     AND memory_total IS NULL AND memory_free IS NULL
                     AND memory_used_by_gpuext IS NULL AND compute_capability IS NULL
                     AND status <> ''
                END) AS rows_ok
  FROM gpuext_devices();

--
-- gpuext_page_counts(): compared with the truth
--
-- the truth: visible tuples per page from ctid, normal line pointers per
-- page from pageinspect; pages without a visible tuple are left out
CREATE FUNCTION page_truth(rel regclass, OUT blkno bigint, OUT tuples int, OUT visible int)
RETURNS SETOF record LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format($q$
    WITH vis AS (SELECT (ctid::text::point)[0]::bigint AS blkno, count(*)::int AS visible
                   FROM %s GROUP BY 1),
         lps AS (SELECT b AS blkno, count(*) FILTER (WHERE lp_flags = 1)::int AS tuples
                   FROM generate_series(0, pg_relation_size(%L::regclass)
                                           / current_setting('block_size')::int - 1) b,
                        LATERAL heap_page_items(get_raw_page(%L, b)) GROUP BY 1)
    SELECT vis.blkno, lps.tuples, vis.visible FROM vis LEFT JOIN lps USING (blkno)$q$,
    rel, rel, rel::text);
END $$;

-- rows of gpuext_page_counts(rel, engine) that differ from the truth, both
-- ways (EXCEPT ALL); no rows means equal.  The function runs first: its
-- heap_page_prune_opt() may prune a page, and the truth then sees the
-- same pruned page.
CREATE FUNCTION page_diff(rel regclass, engine text DEFAULT 'auto')
RETURNS TABLE (side text, blkno bigint, tuples int, visible int)
LANGUAGE plpgsql AS $$
BEGIN
  CREATE TEMP TABLE pc_got AS SELECT * FROM gpuext_page_counts(rel, engine);
  CREATE TEMP TABLE pc_truth AS SELECT * FROM page_truth(rel);
  RETURN QUERY
    (SELECT 'extra', * FROM (TABLE pc_got EXCEPT ALL TABLE pc_truth) x)
    UNION ALL
    (SELECT 'missing', * FROM (TABLE pc_truth EXCEPT ALL TABLE pc_got) y)
    ORDER BY 1, 2;
  DROP TABLE pc_got;
  DROP TABLE pc_truth;
END $$;

-- rows of different widths, so pages hold different numbers of tuples
CREATE TABLE pc (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO pc SELECT g, repeat('x', g % 97) FROM generate_series(1, 20000) g;
SELECT * FROM page_diff('pc', 'cpu');
SELECT * FROM page_diff('pc', 'auto');
-- 'gpu' falls back to the CPU engine without a GPU (cpu_fallback = on)
SELECT * FROM page_diff('pc', 'gpu');
-- the default engine is auto
SELECT count(*) > 100 AS many_pages, sum(visible) AS rows, bool_and(tuples = visible) AS all_visible
  FROM gpuext_page_counts('pc');

-- deleted, updated and inserted rows of the current transaction: the
-- deleted versions are still normal line pointers, and no longer visible
BEGIN;
DELETE FROM pc WHERE id % 3 = 0;
UPDATE pc SET pad = 'updated' WHERE id % 7 = 1;
INSERT INTO pc SELECT g, 'new' FROM generate_series(20001, 20500) g;
SELECT * FROM page_diff('pc', 'cpu');
SELECT * FROM page_diff('pc', 'auto');
SELECT sum(visible) AS rows, count(*) FILTER (WHERE tuples > visible) > 0 AS some_invisible
  FROM gpuext_page_counts('pc', 'cpu');
SELECT sum(visible) AS rows FROM gpuext_page_counts('pc', 'auto');
-- a page with nothing visible is left out
SAVEPOINT whole_page;
DELETE FROM pc WHERE (ctid::text::point)[0] = 1;
SELECT count(*) AS page_1_rows FROM gpuext_page_counts('pc', 'cpu') WHERE blkno = 1;
SELECT count(*) AS page_1_rows FROM gpuext_page_counts('pc', 'auto') WHERE blkno = 1;
SELECT * FROM page_diff('pc', 'auto');
ROLLBACK TO whole_page;
SELECT count(*) AS page_1_rows FROM gpuext_page_counts('pc', 'auto') WHERE blkno = 1;
COMMIT;

-- committed deletes (the function may prune pages as it reads them)
SELECT * FROM page_diff('pc', 'cpu');
SELECT * FROM page_diff('pc', 'auto');
SELECT sum(visible) AS rows FROM gpuext_page_counts('pc', 'auto');

-- vacuumed: dead tuples gone, pages all-visible
VACUUM pc;
SELECT * FROM page_diff('pc', 'cpu');
SELECT * FROM page_diff('pc', 'auto');
SELECT sum(visible) AS rows FROM gpuext_page_counts('pc', 'auto');

-- many small batches
SET gpuext.max_batch_pages = 3;
SELECT * FROM page_diff('pc', 'cpu');
SELECT * FROM page_diff('pc', 'auto');
SET gpuext.max_batch_pages = 1;
SELECT * FROM page_diff('pc', 'auto');
RESET gpuext.max_batch_pages;

-- serializable transactions take the tuple-by-tuple path
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT * FROM page_diff('pc', 'cpu');
SELECT * FROM page_diff('pc', 'auto');
COMMIT;

-- the most tuples a page can hold (zero-column rows: 291 per page)
CREATE TABLE pc_narrow () WITH (autovacuum_enabled = off);
INSERT INTO pc_narrow SELECT FROM generate_series(1, 3000);
SELECT max(tuples) AS max_tuples FROM gpuext_page_counts('pc_narrow', 'cpu');
BEGIN;
DELETE FROM pc_narrow WHERE ctid IN (SELECT ctid FROM pc_narrow TABLESAMPLE BERNOULLI (30) REPEATABLE (42));
SELECT * FROM page_diff('pc_narrow', 'cpu');
SELECT * FROM page_diff('pc_narrow', 'auto');
COMMIT;
VACUUM pc_narrow;
SELECT * FROM page_diff('pc_narrow', 'auto');

-- empty tables: no rows
CREATE TABLE pc_empty (a int);
SELECT count(*) FROM gpuext_page_counts('pc_empty', 'cpu');
SELECT count(*) FROM gpuext_page_counts('pc_empty', 'auto');
-- every row deleted: no page has a visible tuple
CREATE TABLE pc_gone (a int) WITH (autovacuum_enabled = off);
INSERT INTO pc_gone SELECT generate_series(1, 1000);
DELETE FROM pc_gone;
SELECT count(*) FROM gpuext_page_counts('pc_gone', 'cpu');
SELECT count(*) FROM gpuext_page_counts('pc_gone', 'auto');
VACUUM pc_gone;
SELECT count(*) FROM gpuext_page_counts('pc_gone', 'auto');
-- a page emptied by VACUUM in the middle of a table keeps one unused line
-- pointer and is all-visible.
-- It has no visible tuple, so it is left out.
CREATE TABLE pc_hole (a int) WITH (autovacuum_enabled = off);
INSERT INTO pc_hole SELECT generate_series(1, 1000);
DELETE FROM pc_hole WHERE (ctid::text::point)[0] = 1;
VACUUM pc_hole;
SELECT * FROM gpuext_page_counts('pc_hole', 'cpu') WHERE visible = 0;
SELECT * FROM gpuext_page_counts('pc_hole', 'auto') WHERE visible = 0;
-- the other pages are right
SELECT * FROM page_diff('pc_hole', 'auto') WHERE visible > 0;

-- other heap relations: materialized views, unlogged tables, TOAST tables
CREATE MATERIALIZED VIEW pc_mv AS SELECT * FROM pc WHERE id % 2 = 0;
SELECT * FROM page_diff('pc_mv', 'cpu');
SELECT * FROM page_diff('pc_mv', 'auto');
CREATE UNLOGGED TABLE pc_unlogged AS SELECT * FROM pc;
SELECT * FROM page_diff('pc_unlogged', 'cpu');
SELECT * FROM page_diff('pc_unlogged', 'auto');
CREATE TABLE pc_toasted (id int, doc text) WITH (autovacuum_enabled = off);
ALTER TABLE pc_toasted ALTER COLUMN doc SET STORAGE EXTERNAL;
INSERT INTO pc_toasted SELECT g, repeat(md5(g::text), 200) FROM generate_series(1, 200) g;
SELECT reltoastrelid::regclass AS toast FROM pg_class WHERE relname = 'pc_toasted' \gset
SELECT count(*) > 0 AS toast_has_rows FROM :toast;
SELECT * FROM page_diff(:'toast', 'cpu');
SELECT * FROM page_diff(:'toast', 'auto');

-- the CPU engine counts its batches
SELECT cpu_batches AS cpu_batches_before FROM gpuext_status() \gset
SELECT count(*) > 0 AS has_pages FROM gpuext_page_counts('pc', 'cpu');
SELECT cpu_batches > :cpu_batches_before AS cpu_batches_grew FROM gpuext_status();

--
-- gpuext_page_counts(): bad input
--
-- no such relation (regclass 0 is '-', a valid regclass value)
SELECT 0::regclass;
SELECT * FROM gpuext_page_counts(0);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT * FROM gpuext_page_counts(4294967295);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT * FROM gpuext_page_counts('no_such_table');
\echo sqlstate :LAST_ERROR_SQLSTATE
-- not a heap: index, sequence, view, partitioned table, composite type
CREATE INDEX pc_id ON pc (id);
CREATE SEQUENCE pc_seq;
CREATE VIEW pc_view AS SELECT * FROM pc;
CREATE TABLE pc_parted (a int) PARTITION BY RANGE (a);
CREATE TYPE pc_type AS (a int);
SELECT * FROM gpuext_page_counts('pc_id');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT * FROM gpuext_page_counts('pc_seq');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT * FROM gpuext_page_counts('pc_view');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT * FROM gpuext_page_counts('pc_parted');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT * FROM gpuext_page_counts('pc_type');
\echo sqlstate :LAST_ERROR_SQLSTATE
-- engines are 'auto', 'gpu' and 'cpu', exactly
SELECT * FROM gpuext_page_counts('pc', 'GPU');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT * FROM gpuext_page_counts('pc', '');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT * FROM gpuext_page_counts('pc', 'tpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
-- STRICT: NULL arguments give no rows
SELECT count(*) FROM gpuext_page_counts(NULL);
SELECT count(*) FROM gpuext_page_counts('pc', NULL);
SELECT count(*) FROM gpuext_page_counts(NULL, NULL);

--
-- gpuext_service_roundtrip()
--
SELECT requests_served AS served_before FROM gpuext_status() \gset
SELECT gpuext_service_roundtrip(10) > 0 AS roundtrip_ok;
SELECT gpuext_service_roundtrip() > 0 AS default_roundtrip_ok;
SELECT requests_served >= :served_before + 1010 AS served_grew,
       dma_arena_in_use = 0 AS no_arena_held
  FROM gpuext_status();
SELECT gpuext_service_roundtrip(0);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_service_roundtrip(-1);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_service_roundtrip(2000000);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_service_roundtrip(NULL);

--
-- gpuext_debug_sleep()
--
SELECT gpuext_debug_sleep(10) IN ('gpu', 'cpu') AS slept;
SELECT gpuext_debug_sleep(10, 16) IN ('gpu', 'cpu') AS slept_holding_memory;
SELECT gpuext_debug_sleep(0, 0, 'cpu');
SELECT gpuext_debug_sleep(-1);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_debug_sleep(3600001);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_debug_sleep(0, -1);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_debug_sleep(0, 1048577);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_debug_sleep(0, 0, 'fpga');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_debug_sleep(NULL);
SELECT gpuext_debug_sleep(10, NULL);
SELECT gpuext_debug_sleep(10, 0, NULL);

-- statement_timeout cancels a long request; nothing stays held
SET statement_timeout = '200ms';
SELECT gpuext_debug_sleep(10000, 64);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_debug_sleep(10000, 0, 'cpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET statement_timeout;
SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 AS released FROM gpuext_status();
-- a cancel that arrives before the request starts
SELECT pg_cancel_backend(pg_backend_pid()), gpuext_debug_sleep(10000, 16);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 AS released FROM gpuext_status();
-- and the session works on
SELECT gpuext_debug_sleep(1, 16) IN ('gpu', 'cpu') AS slept;
SELECT * FROM page_diff('pc', 'auto');

--
-- privileges
--
CREATE ROLE regress_gpuext_fn_user;
CREATE ROLE regress_gpuext_fn_monitor IN ROLE pg_monitor;
SET ROLE regress_gpuext_fn_user;
-- gpuext_status() is for pg_monitor
SELECT service_state IS NOT NULL FROM gpuext_status();
\echo sqlstate :LAST_ERROR_SQLSTATE
-- listing devices is for pg_monitor, timing the service for superusers
SELECT count(*) >= 1 AS has_devices FROM gpuext_devices();
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_service_roundtrip(1) > 0 AS roundtrip_ok;
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_version();
-- page counts need SELECT on the table
SELECT count(*) FROM gpuext_page_counts('pc');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT count(*) FROM gpuext_page_counts('pc', 'cpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
-- gpuext_debug_sleep: not executable, and superuser only even if granted
SELECT gpuext_debug_sleep(1);
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT SELECT ON pc TO regress_gpuext_fn_user;
GRANT EXECUTE ON FUNCTION gpuext_debug_sleep(int, int, text) TO regress_gpuext_fn_user;
SET ROLE regress_gpuext_fn_user;
SELECT sum(visible) AS rows FROM gpuext_page_counts('pc');
SELECT sum(visible) AS rows FROM gpuext_page_counts('pc', 'cpu');
SELECT gpuext_debug_sleep(1);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_debug_sleep(1, 0, 'cpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;
-- pg_monitor members may read the status
SET ROLE regress_gpuext_fn_monitor;
SELECT service_state IN ('ready', 'no gpu') AS service_up FROM gpuext_status();
SELECT count(*) >= 1 AS has_devices FROM gpuext_devices();
SELECT count(*) FROM gpuext_page_counts('pc');
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;

-- clean up
DROP OWNED BY regress_gpuext_fn_user;
DROP ROLE regress_gpuext_fn_user;
DROP ROLE regress_gpuext_fn_monitor;
DROP TABLE pc, pc_narrow, pc_empty, pc_gone, pc_hole, pc_unlogged, pc_toasted, pc_parted CASCADE;
DROP SEQUENCE pc_seq;
DROP TYPE pc_type;
DROP FUNCTION page_diff(regclass, text), page_truth(regclass);
SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 AS released FROM gpuext_status();
