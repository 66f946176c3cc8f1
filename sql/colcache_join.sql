--
-- Column caches under GpuJoin and GpuAgg fused with GpuJoin: the scanned
-- (outer, fact) table's cached pages are probed from the cache's columns
-- (CPU engine here; the GPU reads the cache's device copy behind
-- gpuext.cache_gpu), rows the join returns come from the heap page, pinned
-- only for them.  Results equal stock PostgreSQL's before and after
-- writes.  Uses gj_diff, gj_agg_diff and the inner tables of gpujoin.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
SET gpuext.device = cpu;
-- commits flushed at once, so that VACUUM can set pages all-visible right
-- after them (the test cluster runs with synchronous_commit = off)
SET synchronous_commit = on;
-- small batches: many batches per scan, cached and heap pages mixed
SET gpuext.max_batch_pages = 4;

-- the GpuJoin's or GpuAgg's "Cached Pages" and "Cached Pages Read for
-- Rows" under EXPLAIN ANALYZE, offloaded as gj_diff / gj_agg_diff run the
-- query (cached NULL: no cache was used)
CREATE FUNCTION cj_cached(q text, OUT node text, OUT cached bigint, OUT read_for_rows bigint)
LANGUAGE plpgsql
SET gpuext.force_offload = on
SET gpuext.enabled = on
AS $fn$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  WITH RECURSIVE n(p, depth) AS (
    SELECT plan->0->'Plan', 0
    UNION ALL
    SELECT c, n.depth + 1 FROM n, json_array_elements(n.p->'Plans') AS c
  )
  SELECT p->>'Custom Plan Provider', (p->>'Cached Pages')::bigint,
         (p->>'Cached Pages Read for Rows')::bigint
    INTO node, cached, read_for_rows
    FROM n WHERE p->>'Custom Plan Provider' IN ('GpuJoin', 'GpuAgg')
   ORDER BY depth LIMIT 1;
END;
$fn$;

-- the planner's total cost of a query's first GpuScan, GpuJoin or GpuAgg
-- (offloaded; with cache = false as if no cache existed).  Forced paths
-- cost a millionth (gx_cost_forced) and EXPLAIN shows two decimals: the
-- smallest cost unit keeps their differences visible
CREATE FUNCTION cj_cost(q text, cache bool DEFAULT true) RETURNS float8
LANGUAGE plpgsql
SET gpuext.force_offload = on
SET gpuext.enabled = on
SET gpuext.cost_unit_us = 0.001
AS $fn$
DECLARE
  plan json;
  cost float8;
BEGIN
  PERFORM set_config('gpuext.enable_cache', cache::text, true);
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
  WITH RECURSIVE n(p, depth) AS (
    SELECT plan->0->'Plan', 0
    UNION ALL
    SELECT c, n.depth + 1 FROM n, json_array_elements(n.p->'Plans') AS c
  )
  SELECT (p->>'Total Cost')::float8 INTO cost
    FROM n WHERE p->>'Custom Plan Provider' IN ('GpuScan', 'GpuJoin', 'GpuAgg')
   ORDER BY depth LIMIT 1;
  RETURN cost;
END;
$fn$;

-- the fact table: NULLs, duplicates, 0, -0 and NaN, every fixed-width key type
CREATE TABLE cj_fact (id int, a int4, b int8, s int2, c text, x float8, y float4,
                      dt date, ts timestamp, flag bool)
  WITH (autovacuum_enabled = off);
INSERT INTO cj_fact
SELECT g,
       CASE WHEN g % 13 = 0 THEN NULL ELSE g % 100 END,
       CASE WHEN g % 17 = 0 THEN NULL ELSE (g % 37)::int8 END,
       (g % 7)::int2,
       CASE WHEN g % 19 = 0 THEN NULL ELSE 'k' || (g % 50) END,
       CASE WHEN g % 29 = 0 THEN NULL WHEN g % 31 = 0 THEN -0.0::float8
            WHEN g % 37 = 0 THEN 'NaN' ELSE (g % 10)::float8 / 2 END,
       (g % 10)::float4 / 2,
       date '2020-01-01' + g % 30,
       timestamp '2020-01-01 00:00' + (g % 24) * interval '1 hour',
       g % 3 = 0
FROM generate_series(1, 20000) g;
VACUUM (FREEZE, ANALYZE) cj_fact;
SELECT gpuext_cache_enable('cj_fact') > 0 AS cached;
SELECT columns, pages = blocks AS all_pages, rows, state FROM gpuext_caches()
 WHERE relation = 'cj_fact'::regclass;

--
-- GpuJoin over the cached table
--
-- inner joins: every cached column type as a key, cross-type keys,
-- duplicate inner keys, expressions, several keys, a host filter
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT gj_diff('SELECT f.*, d.* FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id % 3 = 1');
SELECT gj_diff('SELECT f.id, d.v FROM cj_fact f JOIN gj_dim2 d ON f.b = d.k');
SELECT gj_diff('SELECT f.id, d.c FROM cj_fact f JOIN gj_dim2 d ON f.a = d.k');
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.s = d.k');
SELECT gj_diff('SELECT f.id, d.label FROM cj_fact f JOIN gj_dimf d ON f.x = d.f');
SELECT gj_diff('SELECT f.id, d.label FROM cj_fact f JOIN gj_dimf d ON f.y = d.f');
SELECT gj_diff('SELECT f.id, d.label FROM cj_fact f JOIN gj_dimd d ON f.dt = d.dt');
SELECT gj_diff('SELECT f.id, d.label FROM cj_fact f JOIN gj_dimd d ON f.ts = d.ts');
SELECT gj_diff('SELECT f.id, d.label FROM cj_fact f JOIN gj_dimd d ON f.flag = d.flag AND f.dt = d.dt');
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a + 1 = d.k');
SELECT gj_diff('SELECT f.id, d.v FROM cj_fact f JOIN gj_dim2 d ON f.b = d.k AND f.id < d.v * 100');
SELECT gj_diff('SELECT f.id, d.v FROM cj_fact f JOIN gj_dups d ON f.s = d.k WHERE f.id < 1000');
-- device quals on cached columns, host quals on the heap row
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.x > 1 AND f.b < 20');
SELECT gj_diff('SELECT f.id, f.c, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.x > 1 AND md5(f.c) < ''8''');
-- left, semi, anti
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f LEFT JOIN gj_dim1 d ON f.a = d.k');
SELECT gj_diff('SELECT f.id, d.v FROM cj_fact f LEFT JOIN gj_dim2 d ON f.b = d.k WHERE coalesce(d.v, -1) < 100');
SELECT gj_diff('SELECT f.id FROM cj_fact f WHERE EXISTS (SELECT 1 FROM gj_dim1 d WHERE d.k = f.a)');
SELECT gj_diff('SELECT f.id, f.c FROM cj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_dim1 d WHERE d.k = f.a)');
SELECT gj_diff('SELECT f.id FROM cj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_empty e WHERE e.k = f.a)');
-- three depths in one pass
SELECT gj_diff('SELECT f.id, d1.name, d2.c, d3.label FROM cj_fact f
  JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k LEFT JOIN gj_dim3 d3 ON f.s = d3.s');
SELECT gj_diff('SELECT f.id, d1.name FROM cj_fact f LEFT JOIN gj_dim1 d1 ON f.a = d1.k
  WHERE NOT EXISTS (SELECT 1 FROM gj_dim2 d2 WHERE d2.k = f.b) AND EXISTS (SELECT 1 FROM gj_dim3 d3 WHERE d3.s = f.s)');
-- a row the device cannot decide is rechecked on the host from the heap
-- page: the same error as PostgreSQL's
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE 100 / (f.id - 50) > 0');
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.a * 100000000 > 0');
-- rescans: correlated subqueries
SELECT gj_diff('SELECT o.k, (SELECT count(*) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.b = o.k)
  FROM gj_dim2 o');
-- the joins read the cache: every page of the table, and only the pages
-- with rows the join returns are read from the heap
SELECT node, cached = (SELECT pages FROM gpuext_caches() WHERE relation = 'cj_fact'::regclass) AS all_cached,
       read_for_rows
  FROM cj_cached('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id < 400');
SELECT node, cached > 0 AS cached, read_for_rows
  FROM cj_cached('SELECT f.id FROM cj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_dim1 d WHERE d.k = f.a)');
SELECT node, cached > 0 AS cached, read_for_rows
  FROM cj_cached('SELECT f.id FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id + 0 < 0');
-- a key or device qual on a column the cache lacks: heap pages
SELECT node, cached AS not_cached FROM cj_cached('SELECT f.id, d.v FROM cj_fact f JOIN gj_dim2 d ON f.c = d.c');
SELECT gj_diff('SELECT f.id, d.v FROM cj_fact f JOIN gj_dim2 d ON f.c = d.c');
SELECT node, cached AS not_cached FROM cj_cached('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.c LIKE ''k1%''');
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.c LIKE ''k1%''');
-- gpuext.enable_cache = off: heap pages
SET gpuext.enable_cache = off;
SELECT node, cached AS not_cached FROM cj_cached('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k');
RESET gpuext.enable_cache;
SET gpuext.force_offload = on;
SET gpuext.enable_gpuagg = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT f.id, d1.name, d2.c FROM cj_fact f JOIN gj_dim1 d1 ON f.a = d1.k LEFT JOIN gj_dim2 d2 ON f.b = d2.k
 WHERE f.id <= 1000;
RESET gpuext.enable_gpuagg;
RESET gpuext.force_offload;

--
-- GpuAgg fused with GpuJoin over the cached table: no heap page at all
--
SELECT gj_agg_diff('SELECT f.s, count(*), sum(f.b), min(f.id), max(f.id), avg(f.a) FROM cj_fact f
  JOIN gj_dim1 d ON f.a = d.k GROUP BY f.s');
SELECT gj_agg_diff('SELECT count(*), sum(f.x), max(f.ts) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k
  JOIN gj_dim2 d2 ON f.b = d2.k WHERE f.id % 5 <> 0');
SELECT gj_agg_diff('SELECT f.s, count(*), sum(f.a) FROM cj_fact f LEFT JOIN gj_dim1 d ON f.a = d.k GROUP BY f.s');
SELECT gj_agg_diff('SELECT f.dt, count(*) FROM cj_fact f WHERE EXISTS (SELECT 1 FROM gj_dim1 d WHERE d.k = f.a) GROUP BY f.dt');
SELECT gj_agg_diff('SELECT count(*), sum(f.b) FROM cj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_dim2 d WHERE d.k = f.b)');
SELECT gj_agg_diff('SELECT f.s, count(*), sum(f.id) FROM cj_fact f JOIN gj_dups d ON f.s = d.k GROUP BY f.s');
-- inner group keys and aggregate inputs, stored with the inner rows
SELECT gj_agg_diff('SELECT d.name, count(*), sum(f.b) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY d.name');
SELECT gj_agg_diff('SELECT d1.name, sum(d2.v), count(d2.c), count(*) FROM cj_fact f JOIN gj_dim1 d1 ON f.a = d1.k
  LEFT JOIN gj_dim2 d2 ON f.b = d2.k GROUP BY d1.name');
-- a group key the cache lacks: heap pages
SELECT gj_agg_diff('SELECT f.c, count(*) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY f.c');
SELECT node, cached AS not_cached FROM cj_cached('SELECT f.c, count(*) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY f.c');
SELECT node, cached = (SELECT pages FROM gpuext_caches() WHERE relation = 'cj_fact'::regclass) AS all_cached,
       read_for_rows
  FROM cj_cached('SELECT f.s, count(*), sum(f.b) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY f.s');
SET gpuext.force_offload = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT d.name, count(*), sum(f.b) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.x < 3 GROUP BY d.name;
RESET gpuext.force_offload;

--
-- costs: the cached pages cost no host page work and no transfer (only
-- the pages pinned for returned rows cost host work), on the CPU engine
-- and on the GPU (gpuext.cache_gpu: the GPU reads the cache only with it)
--
SELECT cj_cost(q) < cj_cost(q, false) AS cheaper
  FROM (VALUES ('SELECT id FROM cj_fact WHERE a = 7'),
               ('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id = 77'),
               ('SELECT f.s, count(*), sum(f.b) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY f.s'),
               ('SELECT s, count(*), sum(b) FROM cj_fact WHERE x < 3 GROUP BY s')) v(q);
-- a join whose rows come from every page pins every page again: no
-- saving on the CPU engine
SELECT cj_cost(q) = cj_cost(q, false) AS same
  FROM (VALUES ('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k')) v(q);
-- a column the cache lacks: costed as heap pages
SELECT cj_cost(q) = cj_cost(q, false) AS same
  FROM (VALUES ('SELECT id FROM cj_fact WHERE c = ''k7'''),
               ('SELECT f.id, d.v FROM cj_fact f JOIN gj_dim2 d ON f.c = d.c'),
               ('SELECT f.c, count(*) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY f.c')) v(q);
-- returned rows: their pages are pinned, so a scan returning every row
-- saves less than one returning few
SELECT cj_cost('SELECT id FROM cj_fact WHERE a = 7') / cj_cost('SELECT id FROM cj_fact WHERE a = 7', false) <
       cj_cost('SELECT id FROM cj_fact WHERE a >= 0') / cj_cost('SELECT id FROM cj_fact WHERE a >= 0', false)
       AS fewer_rows_save_more;
SET gpuext.device = gpu;
SELECT cj_cost(q) = cj_cost(q, false) AS same_without_cache_gpu
  FROM (VALUES ('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k'),
               ('SELECT f.s, count(*), sum(f.b) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY f.s')) v(q);
SET gpuext.cache_gpu = on;
SELECT cj_cost(q) < cj_cost(q, false) AS cheaper
  FROM (VALUES ('SELECT id FROM cj_fact WHERE a = 7'),
               ('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id = 77'),
               ('SELECT f.s, count(*), sum(f.b) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY f.s')) v(q);
RESET gpuext.cache_gpu;
SET gpuext.device = cpu;

--
-- parallel: workers share the outer scan, each reads the cache
--
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT * FROM gj_plan('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT gj_diff('SELECT f.id, d1.name, d2.v FROM cj_fact f LEFT JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k');
SELECT gj_diff('SELECT f.id FROM cj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_dim1 d WHERE d.k = f.a)');
SELECT node, cached IS NOT NULL AS cache_opened
  FROM cj_cached('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT gj_agg_diff('SELECT f.s, count(*), sum(f.b) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY f.s');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

--
-- the GPU path (gpuext.cache_gpu = on): on a GPU the join kernels read the
-- cache's device copy; without one the batches run on the CPU engine,
-- which reads the same cache.  Same answers either way
--
SET gpuext.device = gpu;
SET gpuext.cache_gpu = on;
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.x < 2');
SELECT gj_diff('SELECT f.id, f.c FROM cj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_dim2 d WHERE d.k = f.b)');
SELECT gj_agg_diff('SELECT d.name, count(*), sum(f.b) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY d.name');
RESET gpuext.cache_gpu;
SET gpuext.device = cpu;

--
-- writes: each one stops the cache until it is rebuilt (joins read heap
-- pages meanwhile), and a rebuilt cache holds the pages still all-visible
--
-- INSERT in the same transaction as the query
BEGIN;
INSERT INTO cj_fact (id, a, b, s) VALUES (-1, 5, 5, 1);
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.b = 5');
SELECT node, cached AS not_cached FROM cj_cached('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT gj_agg_diff('SELECT f.s, count(*) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY f.s');
ROLLBACK;
SELECT state FROM gpuext_caches() WHERE relation = 'cj_fact'::regclass;
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.b = 5');
-- UPDATE: stopped, then rebuilt without VACUUM (the updated pages are not
-- all-visible: read from the heap, the others from the cache)
VACUUM cj_fact;
SELECT gpuext_cache_enable('cj_fact') > 0 AS cached;
UPDATE cj_fact SET a = a + 1, b = NULL WHERE id % 1000 = 0;
SELECT state FROM gpuext_caches() WHERE relation = 'cj_fact'::regclass;
SELECT node, cached AS not_cached FROM cj_cached('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT cj_cost(q) = cj_cost(q, false) AS costed_uncached
  FROM (VALUES ('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k')) v(q);
SELECT gj_diff('SELECT f.id, f.a, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id % 500 = 0');
SELECT gpuext_cache_enable('cj_fact') > 0 AS cached;
SELECT pages < blocks AS some_pages, state FROM gpuext_caches() WHERE relation = 'cj_fact'::regclass;
SELECT node, cached > 0 AS cached, cached < (SELECT blocks FROM gpuext_caches() WHERE relation = 'cj_fact'::regclass) AS not_all
  FROM cj_cached('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT gj_diff('SELECT f.id, f.a, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id % 500 = 0');
SELECT gj_diff('SELECT f.id, d.v FROM cj_fact f LEFT JOIN gj_dim2 d ON f.b = d.k WHERE f.id % 250 = 0');
SELECT gj_diff('SELECT f.id FROM cj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_dim2 d WHERE d.k = f.b)');
SELECT gj_agg_diff('SELECT f.s, count(*), sum(f.a), count(f.b) FROM cj_fact f LEFT JOIN gj_dim2 d ON f.b = d.k GROUP BY f.s');
SELECT gj_agg_diff('SELECT d.name, count(*) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY d.name');
-- DELETE: stopped; after VACUUM and a rebuild every page is cached again
DELETE FROM cj_fact WHERE id % 7 = 0;
SELECT state FROM gpuext_caches() WHERE relation = 'cj_fact'::regclass;
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id < 2000');
SELECT gj_agg_diff('SELECT f.s, count(*), sum(f.b) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY f.s');
VACUUM cj_fact;
SELECT gpuext_cache_enable('cj_fact') > 0 AS cached;
SELECT pages = blocks AS all_pages, state FROM gpuext_caches() WHERE relation = 'cj_fact'::regclass;
SELECT node, cached > 0 AS cached FROM cj_cached('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT gj_diff('SELECT f.id, d.name FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id < 2000');
SELECT gj_diff('SELECT f.id, f.c, d.label FROM cj_fact f JOIN gj_dimd d ON f.dt = d.dt WHERE f.flag');
SELECT gj_agg_diff('SELECT f.s, count(*), sum(f.b) FROM cj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY f.s');

SELECT gpuext_cache_drop('cj_fact');
DROP TABLE cj_fact;
DROP FUNCTION cj_cached(text, OUT text, OUT bigint, OUT bigint);
DROP FUNCTION cj_cost(text, bool);
RESET gpuext.max_batch_pages;
