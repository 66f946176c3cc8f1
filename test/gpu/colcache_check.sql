-- GPU check, not yet in the GPU suite (its expected output must come from
-- a GPU): GpuScan reading a column cache's device copy
-- (gpuext.cache_gpu = on).  Run on the GPU machine with
--   bash test/bench/sql-on-cluster.sh colcache 56200 test/gpu/colcache_check.sql
-- Every boolean must be t and every diff "0 only offloaded, 0 only stock";
-- once it is, move it to test/gpu/sql/gpu_colcache.sql with its output as
-- test/gpu/expected/gpu_colcache.out.  Results equal stock PostgreSQL's (EXCEPT ALL
-- both ways), NULLs included; the batches ran on the GPU with cached pages
-- and no fallback; the copy is made once and used again by the next
-- query; a write stops the cache (the GPU reads heap pages again), a
-- rebuild makes a new copy, a drop frees the device memory.
\set VERBOSITY terse
\set SHOW_CONTEXT never
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
RESET client_min_messages;
SET gpuext.cpu_fallback = off;
SET gpuext.force_offload = on;
SET gpuext.enable_gpuagg = off;
SET gpuext.cache_gpu = on;
SET synchronous_commit = on;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE gcc (id int, i2 int2, i4 int4, i8 int8, f8 float8, b bool, d date, t text)
  WITH (autovacuum_enabled = off);
INSERT INTO gcc
  SELECT g, (g % 300)::int2, CASE WHEN g % 11 = 0 THEN NULL ELSE g % 1000 END, g * 7::int8,
         CASE WHEN g % 13 = 0 THEN NULL ELSE g / 7.0 END, g % 3 = 0,
         date '2020-01-01' + g % 500, 'row' || g
    FROM generate_series(1, 1000000) g;
VACUUM ANALYZE gcc;
SELECT gpuext_cache_enable('gcc') > 0 AS cached;
SELECT pages = blocks AS all_pages, rows, state FROM gpuext_caches();

-- offloaded (GPU, cache) against stock, as multisets of rows
CREATE FUNCTION gcc_diff(q text) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  a text[];
  b text[];
  only_a bigint;
  only_b bigint;
BEGIN
  EXECUTE 'SELECT coalesce(array_agg(r::text), ''{}'') FROM (' || q || ') r' INTO a;
  PERFORM set_config('gpuext.enabled', 'off', true);
  EXECUTE 'SELECT coalesce(array_agg(r::text), ''{}'') FROM (' || q || ') r' INTO b;
  PERFORM set_config('gpuext.enabled', 'on', true);
  SELECT count(*) INTO only_a FROM (SELECT unnest(a) EXCEPT ALL SELECT unnest(b)) x;
  SELECT count(*) INTO only_b FROM (SELECT unnest(b) EXCEPT ALL SELECT unnest(a)) x;
  RETURN format('%s rows, %s only offloaded, %s only stock', cardinality(a), only_a, only_b);
END;
$fn$;
-- the GpuScan's EXPLAIN ANALYZE figures of a query
CREATE FUNCTION gcc_explain(q text, OUT cached bigint, OUT gpu_batches bigint,
                            OUT cpu_batches bigint, OUT fallbacks bigint, OUT heap_kb bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  plan json;
  p json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  p := plan->0->'Plan';
  IF p->>'Custom Plan Provider' IS DISTINCT FROM 'GpuScan' THEN
    p := p->'Plans'->0;
  END IF;
  cached := (p->>'Cached Pages')::bigint;
  gpu_batches := (p->>'GPU Batches')::bigint;
  cpu_batches := (p->>'CPU Batches')::bigint;
  fallbacks := (p->>'Fallback Batches')::bigint;
  heap_kb := (p->>'Heap Bytes Read')::bigint;
END;
$fn$;

SELECT device_memory_in_use AS mem_before FROM gpuext_status() \gset
SELECT gcc_diff($$SELECT * FROM gcc WHERE i4 > 990$$);
SELECT cached = (SELECT pages FROM gpuext_caches()) AS all_cached, gpu_batches > 0 AS on_gpu,
       cpu_batches = 0 AS no_cpu, fallbacks = 0 AS no_fallback, heap_kb = 0 AS no_heap_read
  FROM gcc_explain($$SELECT id FROM gcc WHERE i4 > 990$$);
SELECT device_memory_in_use > :mem_before AS copy_on_device FROM gpuext_status();
SELECT device_memory_in_use AS mem_with_copy FROM gpuext_status() \gset
SELECT gcc_diff($$SELECT id, ctid FROM gcc WHERE i4 IS NULL AND b$$);
SELECT gcc_diff($$SELECT id FROM gcc WHERE f8 IS NULL OR (f8 < 100 AND i2 = 7)$$);
SELECT gcc_diff($$SELECT id FROM gcc WHERE d = '2020-02-02' AND i8 % 3 = 0$$);
SELECT gcc_diff($$SELECT id FROM gcc WHERE 1000 / (i4 - 500) > 100$$);
SELECT device_memory_in_use = :mem_with_copy AS copy_used_again FROM gpuext_status();
-- a qual on an uncached column: heap pages
SELECT cached IS NULL AS not_cached, gpu_batches > 0 AS on_gpu
  FROM gcc_explain($$SELECT id FROM gcc WHERE t LIKE 'row99%' AND i4 > 0$$);

-- a write stops the cache: the GPU reads heap pages, the answer is stock's
UPDATE gcc SET i4 = 995 WHERE id % 100000 = 1;
SELECT state FROM gpuext_caches();
SELECT gcc_diff($$SELECT * FROM gcc WHERE i4 > 990$$);
SELECT cached IS NULL AS not_cached, gpu_batches > 0 AS on_gpu
  FROM gcc_explain($$SELECT id FROM gcc WHERE i4 > 990$$);
-- a rebuild: a new copy (the old one is freed), partly cached
VACUUM gcc;
SELECT gpuext_cache_enable('gcc') > 0 AS cached;
SELECT gcc_diff($$SELECT * FROM gcc WHERE i4 > 990$$);
SELECT cached > 0 AS cached, gpu_batches > 0 AS on_gpu, fallbacks = 0 AS no_fallback
  FROM gcc_explain($$SELECT id FROM gcc WHERE i4 > 990$$);
-- drop: the service frees the copy (its idle sweep, within a few seconds)
SELECT gpuext_cache_drop('gcc');
SELECT pg_sleep(3);
SELECT device_memory_in_use <= :mem_before AS copy_freed FROM gpuext_status();
SELECT gcc_diff($$SELECT * FROM gcc WHERE i4 > 990$$);

DROP TABLE gcc;
DROP FUNCTION gcc_diff(text);
DROP FUNCTION gcc_explain(text);
