-- GPU-only: gpuext_ptree batched lookups on the GPU (a device copy of an
-- index's prefix-tree mirror held by the GPU service, and the lookup
-- kernel of cuda/ptree.cu) against stock PostgreSQL, as multisets of rows:
-- = ANY scans, plain and bitmap, over int4, int8, date, timestamp and text
-- keys (duplicates, NULLs, misses, many keys sharing their first 32 bits,
-- short and long text), an array of 1.2M keys (several lookup batches in
-- flight), after inserts into the delta and after a merge (a new
-- generation, a new copy); PtreeBatchJoin with batches of 1024, 7 and
-- 50000 outer rows.  Every lookup batch on the GPU (cpu_fallback off,
-- gpuext.ptree_gpu_batch_min = 1; the GPU batch counter grows, no
-- fallback; EXPLAIN ANALYZE shows GPU batches).  Then the copy's life: kept
-- from one query to the next, freed by an aborted transaction and when the
-- backend exits; gpuext.gpu_memory_limit, gpuext.device_copy_memory(_total)
-- and gpuext.max_tasks_per_database leave the lookups on the CPU engine; injected faults fall back (cpu_fallback on) or fail with 53200 /
-- 58000 (off); a stalled lookup ends with statement_timeout.  Then merges
-- planned on the GPU (the same index pages as merges that compare keys).
-- Written
-- without a GPU to run on: the expected output assumes the kernel is right.
\set VERBOSITY terse
\set SHOW_CONTEXT never
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
RESET client_min_messages;
SET gpuext.cpu_fallback = off;
SET gpuext.regression_test_mode = on;
SET gpuext.ptree_gpu_batch_min = 1;
-- the stock side of every comparison is PostgreSQL's own plan
SET gpuext.enable_gpuscan = off;
SET gpuext.enable_gpuagg = off;
SET gpuext.enable_gpujoin = off;

CREATE TABLE gpt (id int, i int, b bigint, d date, ts timestamp, t text COLLATE "C")
  WITH (autovacuum_enabled = off);
INSERT INTO gpt SELECT g,
  CASE WHEN g % 101 = 0 THEN NULL ELSE (g * 7919) % 150000 - 20000 END,
  -- about ten keys share each 32-bit prefix: the slot is binary searched
  CASE WHEN g % 103 = 0 THEN NULL ELSE ((g % 3000) / 10 - 150)::bigint * 4294967296 + (g % 10) * 1000003 END,
  date '2000-01-01' + (g % 20000),
  timestamp '2020-01-01' + (g % 50000) * interval '37 seconds',
  CASE WHEN g % 97 = 0 THEN NULL
       WHEN g % 5 = 0 THEN repeat('x', g % 300) || (g % 1000)
       ELSE 'key' || (g % 40000) END
  FROM generate_series(1, 200000) g;
INSERT INTO gpt (id, i, t) VALUES (-1, 0, ''), (-2, 1, 'a'), (-3, 2, 'ab'), (-4, 3, 'abc'),
  (-5, 4, 'abcd'), (-6, 5, 'abcde'), (-7, 6, 'key'), (-8, 7, 'abc');
CREATE INDEX gpt_i ON gpt USING gpuext_ptree (i);
CREATE INDEX gpt_b ON gpt USING gpuext_ptree (b);
CREATE INDEX gpt_d ON gpt USING gpuext_ptree (d);
CREATE INDEX gpt_ts ON gpt USING gpuext_ptree (ts);
CREATE INDEX gpt_t ON gpt USING gpuext_ptree (t);
CREATE TABLE gpo (a int, a8 bigint, s text COLLATE "C", x int) WITH (autovacuum_enabled = off);
INSERT INTO gpo SELECT CASE WHEN g % 37 = 0 THEN NULL ELSE (g * 31) % 160000 - 20000 END,
                       ((g % 3100) / 10 - 155)::bigint * 4294967296 + (g % 12) * 1000003,
                       CASE WHEN g % 3 = 0 THEN 'key' || (g % 45000) ELSE repeat('x', g % 310) || (g % 1000) END,
                       g
  FROM generate_series(1, 300000) g;
ANALYZE gpt, gpo;

-- col = ANY(ARRAY(arr)) [AND extra] with a plain index scan and with a
-- bitmap scan of the gpuext_ptree index, against PostgreSQL's hashed
-- semi-join of the same keys (gpuext off)
CREATE FUNCTION gpt_any(col text, arr text, extra text DEFAULT 'true') RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  q text := format('SELECT * FROM gpt WHERE %s = ANY(ARRAY(%s)) AND %s', col, arr, extra);
  stock text := format('SELECT * FROM gpt WHERE %s IN (SELECT unnest(ARRAY(%s))) AND %s', col, arr, extra);
  kinds text[] := ARRAY['Index Scan using', 'Bitmap Index Scan on'];
  line text;
  used boolean;
  n bigint;
  diff bigint;
  result text := '';
BEGIN
  PERFORM set_config('gpuext.enabled', 'off', true);
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  EXECUTE 'CREATE TEMP TABLE gpt_stock AS ' || stock;
  PERFORM set_config('gpuext.enabled', 'on', true);
  PERFORM set_config('enable_seqscan', 'off', true);
  FOR k IN 1 .. 2 LOOP
    PERFORM set_config('enable_indexscan', CASE WHEN k = 1 THEN 'on' ELSE 'off' END, true);
    PERFORM set_config('enable_bitmapscan', CASE WHEN k = 2 THEN 'on' ELSE 'off' END, true);
    used := false;
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
      IF position(kinds[k] IN line) > 0 THEN used := true; END IF;
    END LOOP;
    EXECUTE 'CREATE TEMP TABLE gpt_idx AS ' || q;
    SELECT count(*) INTO diff FROM
      ((SELECT * FROM gpt_idx EXCEPT ALL SELECT * FROM gpt_stock)
       UNION ALL
       (SELECT * FROM gpt_stock EXCEPT ALL SELECT * FROM gpt_idx)) x;
    SELECT count(*) INTO n FROM gpt_idx;
    DROP TABLE gpt_idx;
    result := result || CASE WHEN k = 1 THEN 'plain: ' ELSE ', bitmap: ' END || n || ' rows ' ||
      CASE WHEN NOT used THEN 'index NOT used' WHEN diff = 0 THEN 'same' ELSE diff || ' differ' END;
  END LOOP;
  DROP TABLE gpt_stock;
  RETURN result;
END;
$fn$;

-- a join with PtreeBatchJoin (batches of gpuext.ptree_join_batch) against
-- PostgreSQL's hash join (gpuext off)
CREATE FUNCTION gpt_join(q text, batch int) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  line text;
  used boolean := false;
  n bigint;
  diff bigint;
BEGIN
  PERFORM set_config('gpuext.enabled', 'off', true);
  EXECUTE 'CREATE TEMP TABLE gpt_stock AS ' || q;
  PERFORM set_config('gpuext.enabled', 'on', true);
  PERFORM set_config('gpuext.ptree_join_batch', batch::text, true);
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line ~ 'PtreeBatchJoin' THEN used := true; END IF;
  END LOOP;
  EXECUTE 'CREATE TEMP TABLE gpt_idx AS ' || q;
  SELECT count(*) INTO diff FROM
    ((SELECT * FROM gpt_idx EXCEPT ALL SELECT * FROM gpt_stock)
     UNION ALL
     (SELECT * FROM gpt_stock EXCEPT ALL SELECT * FROM gpt_idx)) x;
  SELECT count(*) INTO n FROM gpt_idx;
  DROP TABLE gpt_idx, gpt_stock;
  RETURN n || ' rows ' ||
    CASE WHEN NOT used THEN 'PtreeBatchJoin NOT used' WHEN diff = 0 THEN 'same' ELSE diff || ' differ' END;
END;
$fn$;

-- the engine lines of EXPLAIN ANALYZE (shown outside regression_test_mode)
CREATE FUNCTION gpt_engine(q text, batch int DEFAULT 1024) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
DECLARE
  line text;
BEGIN
  PERFORM set_config('gpuext.regression_test_mode', 'off', true);
  PERFORM set_config('gpuext.ptree_join_batch', batch::text, true);
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    line := btrim(line);
    IF line LIKE 'Engine:%' OR line LIKE 'Fallback Batches:%' THEN
      RETURN NEXT line;
    ELSIF line LIKE 'GPU Batches:%' THEN
      RETURN NEXT 'GPU Batches > 0: ' || (split_part(line, ': ', 2)::int > 0);
    END IF;
  END LOOP;
END;
$fn$;

-- count(*) of an = ANY scan of gpt_i (errors reach the caller)
CREATE FUNCTION gpt_count(arr text) RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE
  n bigint;
BEGIN
  PERFORM set_config('enable_seqscan', 'off', true);
  EXECUTE format('SELECT count(*) FROM gpt WHERE i = ANY(ARRAY(%s))', arr) INTO n;
  RETURN n;
END;
$fn$;

CREATE FUNCTION gpt_memory() RETURNS bigint LANGUAGE sql AS
  'SELECT coalesce(sum(memory_used_by_gpuext), 0)::bigint FROM gpuext_devices()';
-- an aborted transaction's device copies are freed by the service after
-- the backend has handed them over: true once none is left (10 s at most)
CREATE FUNCTION gpt_memory_freed() RETURNS bool LANGUAGE plpgsql AS $fn$
BEGIN
  FOR i IN 1 .. 1000 LOOP
    IF gpt_memory() = 0 THEN
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.01);
  END LOOP;
  RETURN false;
END
$fn$;

--
-- = ANY scans and joins, every batch on the GPU
--
SELECT gpu_batches AS gpu_before, fallbacks AS fallbacks_before FROM gpuext_status() \gset
SELECT gpt_any('i', 'SELECT generate_series(-25000, 140000, 7)');
SELECT gpt_any('i', 'SELECT generate_series(-25000, 140000, 7)', 'i > 5000 AND id % 2 = 0');
SELECT gpt_any('i', 'SELECT g FROM generate_series(1, 300) g UNION ALL SELECT NULL UNION ALL SELECT 7');
SELECT gpt_any('b', 'SELECT ((g / 10) - 160)::bigint * 4294967296 + (g % 12) * 1000003 FROM generate_series(0, 3200, 3) g');
SELECT gpt_any('d', 'SELECT date ''1999-12-01'' + g FROM generate_series(0, 21000, 5) g');
SELECT gpt_any('ts', 'SELECT timestamp ''2020-01-01'' + g * interval ''37 seconds'' FROM generate_series(-100, 60000, 9) g');
SELECT gpt_any('ts', 'SELECT timestamp ''2020-01-01'' + g * interval ''11 seconds'' FROM generate_series(0, 20000) g');
SELECT gpt_any('t', 'SELECT ''key'' || g FROM generate_series(0, 45000, 11) g UNION ALL SELECT unnest(''{"",a,ab,abc,abcd,abcde,abcdef,key,k,x,xx}''::text[])');
SELECT gpt_any('t', 'SELECT repeat(''x'', g % 300) || (g % 1000) FROM generate_series(0, 3000, 13) g');
-- 1.2M keys: several lookup batches, two in flight
SELECT gpt_any('i', 'SELECT generate_series(-100000, 1100000)');
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.i = o.a', 1024);
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.i = o.a', 7);
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.i = o.a', 50000);
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.i = o.a + 1 WHERE i.id % 3 = 0', 1024);
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.b = o.a8 WHERE o.x % 50 = 0', 1024);
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.t = o.s', 1024);
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.t = o.s', 50000);
SELECT gpu_batches > :gpu_before AS ran_on_gpu, fallbacks = :fallbacks_before AS no_fallback
  FROM gpuext_status();
SELECT * FROM gpt_engine('SELECT count(*) FROM gpo o JOIN gpt i ON i.i = o.a');
SELECT * FROM gpt_engine('SELECT count(*) FROM gpo o JOIN gpt i ON i.t = o.s', 7);
-- gpuext.ptree_gpu_batch_min: smaller batches stay on the CPU engine
SET gpuext.ptree_gpu_batch_min = 100000;
SELECT * FROM gpt_engine('SELECT count(*) FROM gpo o JOIN gpt i ON i.i = o.a');
SET gpuext.ptree_gpu_batch_min = 0;
SELECT * FROM gpt_engine('SELECT count(*) FROM gpo o JOIN gpt i ON i.i = o.a', 50000);
SET gpuext.ptree_gpu_batch_min = 1;
-- parallel: the leader's batches on the GPU, the workers' on the CPU
-- engine in the leader's mirror (mapped); the same rows
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 4;
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.i = o.a', 1024);
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.t = o.s', 50000);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- the delta (inserts after the build), then a merge: a new generation
INSERT INTO gpt SELECT -g, g % 150000 - 20000, ((g % 3000) / 10 - 150)::bigint * 4294967296 + (g % 7) * 999,
                       date '2000-01-01' + (g % 21000), timestamp '2020-01-01' + g * interval '13 seconds',
                       'key' || (g % 47000) || 'n'
  FROM generate_series(1, 3000) g;
SELECT gpt_any('i', 'SELECT generate_series(-25000, 140000, 7)');
SELECT gpt_any('t', 'SELECT ''key'' || g || ''n'' FROM generate_series(0, 47000, 3) g');
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.i = o.a', 1024);
DELETE FROM gpt WHERE id % 5 = 1;
VACUUM gpt;
SELECT gpt_any('i', 'SELECT generate_series(-25000, 140000, 7)');
SELECT gpt_any('b', 'SELECT ((g / 10) - 160)::bigint * 4294967296 + (g % 12) * 1000003 FROM generate_series(0, 3200, 3) g');
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.i = o.a', 1024);
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.t = o.s', 1024);
SELECT gpu_batches > :gpu_before AS ran_on_gpu, fallbacks = :fallbacks_before AS no_fallback
  FROM gpuext_status();

--
-- the device copy's life
--
-- kept from one query to the next (the same generation: no second copy)
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.i = o.a', 1024);
SELECT gpt_memory() AS memory_kept \gset
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.i = o.a', 7);
SELECT :memory_kept > 0 AS copies_kept, gpt_memory() = :memory_kept AS no_new_copy;
-- an aborted transaction frees them
SELECT 1 / 0;
SELECT gpt_memory_freed() AS freed_by_abort;
-- a copy over gpuext.gpu_memory_limit is not made: the CPU engine, no
-- error (an index of a million keys: gpt's compact copies are under 1 MB)
CREATE TABLE gpt_big AS SELECT g AS id, g::int8 * 3 AS k FROM generate_series(1, 1000000) g;
CREATE INDEX gpt_big_k ON gpt_big USING gpuext_ptree (k);
ANALYZE gpt_big;
SET gpuext.gpu_memory_limit = '1MB';
SELECT * FROM gpt_engine('SELECT count(*) FROM gpo o JOIN gpt_big i ON i.k = o.x::int8');
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt_big i ON i.k = o.x::int8', 1024);
SELECT gpt_memory() = 0 AS no_copy;
RESET gpuext.gpu_memory_limit;
-- nor one over this backend's share of the copies kept between queries
-- (gpuext.device_copy_memory)
SET gpuext.device_copy_memory = '1MB';
SELECT * FROM gpt_engine('SELECT count(*) FROM gpo o JOIN gpt_big i ON i.k = o.x::int8');
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt_big i ON i.k = o.x::int8', 1024);
SELECT gpt_memory() = 0 AS no_copy;
RESET gpuext.device_copy_memory;
-- nor over every backend's (gpuext.device_copy_memory_total, postgresql.conf)
ALTER SYSTEM SET gpuext.device_copy_memory_total = '1MB';
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SHOW gpuext.device_copy_memory_total;
SELECT * FROM gpt_engine('SELECT count(*) FROM gpo o JOIN gpt_big i ON i.k = o.x::int8');
SELECT gpt_memory() = 0 AS no_copy;
ALTER SYSTEM RESET gpuext.device_copy_memory_total;
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
-- a database's share of the service's tasks: with the copy of gpt_big's
-- mirror kept (one task), gpuext.max_tasks_per_database = 1 leaves no room
-- for a copy of gpt's: the CPU engine, no error
SELECT * FROM gpt_engine('SELECT count(*) FROM gpo o JOIN gpt_big i ON i.k = o.x::int8');
SET gpuext.max_tasks_per_database = 1;
SELECT * FROM gpt_engine('SELECT count(*) FROM gpo o JOIN gpt i ON i.i = o.a');
RESET gpuext.max_tasks_per_database;
SELECT * FROM gpt_engine('SELECT count(*) FROM gpo o JOIN gpt i ON i.i = o.a');

--
-- injected faults
--
SELECT fallbacks AS fallbacks_before FROM gpuext_status() \gset
-- a copy on the device, then its lookups' device memory cannot be had:
-- 53200 (the aborted transaction frees the copy) or the CPU engine
SELECT gpt_any('i', 'SELECT generate_series(-25000, 140000, 7)');
SET gpuext.debug_inject_fault = 'alloc';
SELECT gpt_count('SELECT generate_series(-25000, 140000, 7)');
\echo sqlstate :LAST_ERROR_SQLSTATE
-- no room for the copy itself: a decision, the CPU engine even with cpu_fallback off
SELECT gpt_any('i', 'SELECT generate_series(-25000, 140000, 7)');
SELECT gpt_memory() = 0 AS no_copy;
RESET gpuext.debug_inject_fault;
SELECT gpt_any('i', 'SELECT generate_series(-25000, 140000, 7)');
SET gpuext.cpu_fallback = on;
SET gpuext.debug_inject_fault = 'alloc';
SELECT gpt_any('i', 'SELECT generate_series(-25000, 140000, 7)');
RESET gpuext.debug_inject_fault;
SET gpuext.cpu_fallback = off;
-- the kernel reports an error: the CPU engine, or 58000
SELECT gpt_any('i', 'SELECT generate_series(-25000, 140000, 7)');
SET gpuext.debug_inject_fault = 'kernel';
SET gpuext.cpu_fallback = on;
SELECT gpt_any('i', 'SELECT generate_series(-25000, 140000, 7)');
SELECT gpt_join('SELECT o.x, i.id FROM gpo o JOIN gpt i ON i.i = o.a', 1024);
SET gpuext.cpu_fallback = off;
SELECT gpt_count('SELECT generate_series(-25000, 140000, 7)');
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET gpuext.debug_inject_fault;
SELECT fallbacks > :fallbacks_before AS fallbacks_grew FROM gpuext_status();
-- a stalled lookup ends with statement_timeout, and nothing stays held
SELECT gpt_any('i', 'SELECT generate_series(-25000, 140000, 7)');
SET gpuext.debug_inject_fault = 'transfer_stall';
SET statement_timeout = '500ms';
SELECT gpt_count('SELECT generate_series(-25000, 140000, 7)');
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET statement_timeout;
RESET gpuext.debug_inject_fault;
SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 AS released FROM gpuext_status();
-- the device still works
SELECT gpu_batches AS gpu_before FROM gpuext_status() \gset
SELECT gpt_any('i', 'SELECT generate_series(-25000, 140000, 7)');
SELECT gpu_batches > :gpu_before AS ran_on_gpu FROM gpuext_status();

--
-- the backend's exit frees its copies
--
SELECT gpt_memory() > 0 AS copies_held;
\c
DO $$
BEGIN
  FOR k IN 1 .. 100 LOOP
    EXIT WHEN gpt_memory() = 0;
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT gpt_memory() = 0 AS freed_at_exit;
DROP TABLE gpt, gpo, gpt_big;
DROP FUNCTION gpt_any(text, text, text), gpt_join(text, int), gpt_engine(text, int), gpt_count(text),
  gpt_memory();

--
-- merges planned on the GPU (issue 8: GX_REQ_PTREE_MERGE, CUB radix sorts
-- by (key, TID), duplicate removal, each entry ranked in the device copy
-- of main's mirror): the same index pages as merges that compare keys,
-- for int4, int8, date and timestamp with NULLs, keys main has, deletes
-- and VACUUM; every plan on the GPU (cpu_fallback off), one of 120 K
-- entries
--
SET gpuext.cpu_fallback = off;
SET gpuext.ptree_gpu_batch_min = 1;
CREATE FUNCTION gm_pages(i regclass) RETURNS text LANGUAGE sql AS $$
  SELECT md5(string_agg(substring(pg_read_binary_file(pg_relation_filepath(i), blk * 8192, 8192) FROM 25),
                        ''::bytea ORDER BY blk))
    FROM generate_series(0, pg_relation_size(i) / 8192 - 1) blk $$;
CREATE FUNCTION gm_run(tab text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TABLE %I (i int4, b int8, d date, ts timestamp)', tab);
  EXECUTE format('INSERT INTO %I SELECT g %% 5000 - 2500, g * 7 %% 3001, date ''2020-01-01'' + g %% 900,
                    timestamp ''2020-01-01'' + g * interval ''1 minute'' FROM generate_series(1, 20000) g', tab);
  EXECUTE format('CREATE INDEX %I ON %I USING gpuext_ptree (i) WITH (delta_pages = 2)', tab || '_i', tab);
  EXECUTE format('CREATE INDEX %I ON %I USING gpuext_ptree (b) WITH (delta_pages = 3)', tab || '_b', tab);
  EXECUTE format('CREATE INDEX %I ON %I USING gpuext_ptree (d) WITH (delta_pages = 1)', tab || '_d', tab);
  EXECUTE format('CREATE INDEX %I ON %I USING gpuext_ptree (ts) WITH (delta_pages = 2)', tab || '_ts', tab);
  EXECUTE format('INSERT INTO %I SELECT CASE WHEN g %% 13 = 0 THEN NULL ELSE (g * 31) %% 9000 - 4000 END,
                    CASE WHEN g %% 17 = 0 THEN NULL ELSE g %% 4000 - 500 END,
                    CASE WHEN g %% 19 = 0 THEN NULL ELSE date ''2019-06-01'' + g %% 1500 END,
                    CASE WHEN g %% 11 = 0 THEN NULL ELSE timestamp ''2019-12-01'' + g %% 2000 * interval ''7 minutes'' END
                    FROM generate_series(1, 12000) g', tab);
  EXECUTE format('DELETE FROM %I WHERE i %% 7 = 3', tab);
  EXECUTE format('INSERT INTO %I SELECT g, -g, NULL, NULL FROM generate_series(1, 1000) g', tab);
END $$;
SELECT gpu_merges AS gm_gpu, cpu_merges AS gm_cpu FROM gpuext_ptree_merge_stats() \gset
SELECT fallbacks AS gm_fallbacks FROM gpuext_status() \gset
SET gpuext.ptree_merge_plan = on;
SELECT gm_run('gm_a');
VACUUM gm_a;
SET gpuext.ptree_merge_plan = off;
SELECT gm_run('gm_b');
VACUUM gm_b;
RESET gpuext.ptree_merge_plan;
SELECT gpu_merges - :gm_gpu > 30 AS gpu_merges, cpu_merges = :gm_cpu AS no_cpu_merges
  FROM gpuext_ptree_merge_stats();
SELECT fallbacks = :gm_fallbacks AS no_fallback FROM gpuext_status();
CHECKPOINT;
SELECT c, gm_pages(('gm_a_' || c)::regclass) = gm_pages(('gm_b_' || c)::regclass) AS same_pages,
       gpuext_ptree_check(('gm_a_' || c)::regclass, true) IS NOT NULL AS checked
  FROM unnest(ARRAY['i', 'b', 'd', 'ts']) c;
-- one plan of 120 K entries (delta_pages 300), against btree's answers
CREATE TABLE gm_big (k int4);
INSERT INTO gm_big SELECT (g::bigint * 7919 % 1000003)::int4 FROM generate_series(1, 300000) g;
CREATE INDEX gm_big_k ON gm_big USING gpuext_ptree (k) WITH (delta_pages = 300);
SELECT gpu_merges AS gm_gpu, planned_entries AS gm_entries FROM gpuext_ptree_merge_stats() \gset
SET gpuext.ptree_merge_plan = on;
INSERT INTO gm_big SELECT (g::bigint * 104729 % 1000003)::int4 FROM generate_series(1, 130000) g;
RESET gpuext.ptree_merge_plan;
SELECT gpu_merges - :gm_gpu AS gpu_merges, planned_entries - :gm_entries > 100000 AS big_plan
  FROM gpuext_ptree_merge_stats();
SELECT gpuext_ptree_check('gm_big_k', true) IS NOT NULL AS checked;
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*), sum(k::bigint) FROM gm_big WHERE k BETWEEN 1000 AND 900000;
RESET enable_seqscan; RESET enable_bitmapscan;
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*), sum(k::bigint) FROM gm_big WHERE k BETWEEN 1000 AND 900000;
RESET enable_indexscan; RESET enable_bitmapscan;
-- an injected kernel fault: the plan reruns on the CPU engine (cpu_fallback on)
SET gpuext.cpu_fallback = on;
SET gpuext.debug_inject_fault = 'kernel';
SET gpuext.ptree_merge_plan = on;
SELECT cpu_merges AS gm_cpu FROM gpuext_ptree_merge_stats() \gset
INSERT INTO gm_big SELECT (g::bigint * 15485863 % 1000003)::int4 FROM generate_series(1, 130000) g;
RESET gpuext.debug_inject_fault;
RESET gpuext.ptree_merge_plan;
SET gpuext.cpu_fallback = off;
SELECT cpu_merges - :gm_cpu AS cpu_merges FROM gpuext_ptree_merge_stats();
SELECT gpuext_ptree_check('gm_big_k', true) IS NOT NULL AS checked;
DROP TABLE gm_a, gm_b, gm_big;
DROP FUNCTION gm_pages(regclass), gm_run(text);
