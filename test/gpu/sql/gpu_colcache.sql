-- GPU-only: GpuScan, GpuJoin (its scanned table) and GpuAgg (alone and
-- fused with a join) reading a column cache's device copy
-- (gpuext.cache_gpu = on).  Every boolean is t (on_gpu included) and every
-- diff "0 only offloaded, 0 only stock" (the division by zero query ERRORs:
-- stock PostgreSQL raises it too).  Results equal stock PostgreSQL's
-- (EXCEPT ALL both ways), NULLs included; the batches ran on the GPU with
-- cached pages and no fallback; the copy is made once and used again by
-- the next query; a write stops the cache (the GPU reads heap pages
-- again), a rebuild makes a new copy, a drop frees the device memory.
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

-- GpuJoin probing with the cached table's rows (join_probe_kernel<true>),
-- and GpuAgg fused with it (join_agg_kernel<true>)
CREATE TABLE gcc_dim (k int, name text, v int8) WITH (autovacuum_enabled = off);
INSERT INTO gcc_dim SELECT g, 'd' || g, g * 3 FROM generate_series(0, 1200) g;
INSERT INTO gcc_dim VALUES (5, 'dup5', 1), (NULL, 'null', 0);
CREATE TABLE gcc_dim2 (s int2, label text) WITH (autovacuum_enabled = off);
INSERT INTO gcc_dim2 SELECT g, 'l' || g FROM generate_series(0, 150) g;
ANALYZE gcc_dim, gcc_dim2;
-- the figures of the first GpuJoin or GpuAgg of a query's EXPLAIN ANALYZE
CREATE FUNCTION gcc_node(q text, OUT node text, OUT engine text, OUT cached bigint,
                         OUT read_for_rows bigint, OUT gpu_batches bigint, OUT cpu_batches bigint,
                         OUT fallbacks bigint, OUT heap_kb bigint, OUT result_from text)
LANGUAGE plpgsql AS $fn$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  WITH RECURSIVE n(p, depth) AS (
    SELECT plan->0->'Plan', 0
    UNION ALL
    SELECT c, n.depth + 1 FROM n, json_array_elements(n.p->'Plans') AS c
  )
  SELECT p->>'Custom Plan Provider' || ' on ' || (p->>'Relation Name'), p->>'Engine', (p->>'Cached Pages')::bigint,
         (p->>'Cached Pages Read for Rows')::bigint, (p->>'GPU Batches')::bigint,
         (p->>'CPU Batches')::bigint, (p->>'Fallback Batches')::bigint,
         (p->>'Heap Bytes Read')::bigint, p->>'Result From'
    INTO node, engine, cached, read_for_rows, gpu_batches, cpu_batches, fallbacks, heap_kb, result_from
    FROM n WHERE p->>'Custom Plan Provider' IN ('GpuJoin', 'GpuAgg')
   ORDER BY depth LIMIT 1;
END;
$fn$;
SELECT gcc_diff($$SELECT f.id, f.t, d.name FROM gcc f JOIN gcc_dim d ON f.i4 = d.k WHERE f.i2 < 10$$);
SELECT gcc_diff($$SELECT f.id, d.name, d2.label FROM gcc f JOIN gcc_dim d ON f.i4 = d.k
                   LEFT JOIN gcc_dim2 d2 ON f.i2 = d2.s WHERE f.f8 < 1000$$);
SELECT gcc_diff($$SELECT f.id FROM gcc f WHERE EXISTS (SELECT 1 FROM gcc_dim2 d WHERE d.s = f.i2) AND f.b$$);
SELECT gcc_diff($$SELECT f.id, f.i4 FROM gcc f WHERE NOT EXISTS (SELECT 1 FROM gcc_dim d WHERE d.k = f.i4)$$);
SELECT gcc_diff($$SELECT f.id, d.v FROM gcc f JOIN gcc_dim d ON f.i8 % 1000 = d.k WHERE f.d < '2020-01-10'$$);
SELECT node, engine = 'GPU' AS on_gpu, cached = (SELECT pages FROM gpuext_caches()) AS all_cached,
       read_for_rows > 0 AS rows_pinned, gpu_batches > 0 AS gpu_batches, cpu_batches = 0 AS no_cpu,
       fallbacks = 0 AS no_fallback, heap_kb = 0 AS no_heap_read
  FROM gcc_node($$SELECT f.id, f.t, d.name FROM gcc f JOIN gcc_dim d ON f.i4 = d.k WHERE f.i2 < 10$$);
SET gpuext.enable_gpuagg = on;
SELECT gcc_diff($$SELECT f.i2 % 10 AS k, count(*), sum(f.i8), min(f.d), max(f.f8) FROM gcc f
                   JOIN gcc_dim d ON f.i4 = d.k GROUP BY 1$$);
SELECT gcc_diff($$SELECT count(*), sum(f.i4) FROM gcc f JOIN gcc_dim d ON f.i4 = d.k
                   JOIN gcc_dim2 d2 ON f.i2 = d2.s WHERE f.b$$);
SELECT gcc_diff($$SELECT d.name, count(*), sum(f.i8) FROM gcc f JOIN gcc_dim d ON f.i4 = d.k
                   WHERE f.f8 < 50000 GROUP BY d.name$$);
SELECT gcc_diff($$SELECT f.b, count(*) FROM gcc f WHERE NOT EXISTS (SELECT 1 FROM gcc_dim2 d WHERE d.s = f.i2)
                   GROUP BY f.b$$);
SELECT node, engine = 'GPU' AS on_gpu, cached = (SELECT pages FROM gpuext_caches()) AS all_cached,
       gpu_batches > 0 AS gpu_batches, cpu_batches = 0 AS no_cpu, fallbacks = 0 AS no_fallback,
       heap_kb = 0 AS no_heap_read, result_from
  FROM gcc_node($$SELECT f.i2 % 10 AS k, count(*), sum(f.i8) FROM gcc f JOIN gcc_dim d ON f.i4 = d.k GROUP BY 1$$);
SET gpuext.enable_gpuagg = off;
SELECT device_memory_in_use = :mem_with_copy AS copy_used_again_by_joins FROM gpuext_status();

-- a write stops the cache: the GPU reads heap pages, the answer is stock's
UPDATE gcc SET i4 = 995 WHERE id % 100000 = 1;
SELECT state FROM gpuext_caches();
SELECT gcc_diff($$SELECT * FROM gcc WHERE i4 > 990$$);
SELECT cached IS NULL AS not_cached, gpu_batches > 0 AS on_gpu
  FROM gcc_explain($$SELECT id FROM gcc WHERE i4 > 990$$);
SELECT gcc_diff($$SELECT f.id, f.i4, d.name FROM gcc f JOIN gcc_dim d ON f.i4 = d.k WHERE f.i4 > 900$$);
SELECT node, cached IS NULL AS not_cached, gpu_batches > 0 AS on_gpu
  FROM gcc_node($$SELECT f.id, f.i4, d.name FROM gcc f JOIN gcc_dim d ON f.i4 = d.k WHERE f.i4 > 900$$);
-- a rebuild: a new copy (the old one is freed), partly cached
VACUUM gcc;
SELECT gpuext_cache_enable('gcc') > 0 AS cached;
SELECT gcc_diff($$SELECT * FROM gcc WHERE i4 > 990$$);
SELECT cached > 0 AS cached, gpu_batches > 0 AS on_gpu, fallbacks = 0 AS no_fallback
  FROM gcc_explain($$SELECT id FROM gcc WHERE i4 > 990$$);
-- joins over a partly cached table (rebuilt after an UPDATE, no VACUUM:
-- the written pages are not all-visible): cached and heap pages in one batch
UPDATE gcc SET i8 = i8 + 1 WHERE id % 50000 = 7;
SELECT gpuext_cache_enable('gcc') > 0 AS cached;
SELECT pages < blocks AS partly_cached, state FROM gpuext_caches();
SELECT gcc_diff($$SELECT f.id, f.i4, d.name FROM gcc f JOIN gcc_dim d ON f.i4 = d.k WHERE f.i4 > 900$$);
SELECT gcc_diff($$SELECT f.id FROM gcc f WHERE NOT EXISTS (SELECT 1 FROM gcc_dim d WHERE d.k = f.i4)$$);
SELECT node, cached > 0 AS cached, gpu_batches > 0 AS on_gpu, fallbacks = 0 AS no_fallback, heap_kb > 0 AS some_heap
  FROM gcc_node($$SELECT f.id, f.i4, d.name FROM gcc f JOIN gcc_dim d ON f.i4 = d.k WHERE f.i4 > 900$$);
SET gpuext.enable_gpuagg = on;
SELECT gcc_diff($$SELECT d.name, count(*), sum(f.i8) FROM gcc f JOIN gcc_dim d ON f.i4 = d.k GROUP BY d.name$$);
SELECT node, cached > 0 AS cached, gpu_batches > 0 AS on_gpu, fallbacks = 0 AS no_fallback, result_from
  FROM gcc_node($$SELECT d.name, count(*), sum(f.i8) FROM gcc f JOIN gcc_dim d ON f.i4 = d.k GROUP BY d.name$$);
SET gpuext.enable_gpuagg = off;
-- drop: the service frees the copy (its idle sweep, within a few seconds)
SELECT gpuext_cache_drop('gcc');
SELECT pg_sleep(3);
SELECT device_memory_in_use <= :mem_before AS copy_freed FROM gpuext_status();
SELECT gcc_diff($$SELECT * FROM gcc WHERE i4 > 990$$);

DROP TABLE gcc, gcc_dim, gcc_dim2;
DROP FUNCTION gcc_diff(text);
DROP FUNCTION gcc_explain(text);
DROP FUNCTION gcc_node(text);
