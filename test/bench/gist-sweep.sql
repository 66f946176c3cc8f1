-- gpuext_gist node-size sweep (issue 9 item 5): for each node_size, the
-- build, and && ANY batches of 1 .. queries windows walked by the GPU
-- (gpuext on, gpuext.gist_gpu_min_batch = 2, the session's device copy)
-- and on the index pages (the CPU walk), to show where the GPU starts to
-- win.  Run by GIST_SWEEP=1 test/bench/gist.sh ROWS QUERIES REPS (or psql
-- -v rows=N -v queries=Q -f gist-sweep.sql in a database with gpuext).
-- Each batch is a serial bitmap scan, SELECT count(*) ... WHERE bx &&
-- ANY(first b windows); printed as it is measured (WARNING: sweep: ...):
-- the query's time and the Bitmap Index Scan's (the index walk alone,
-- from EXPLAIN ANALYZE), best of reps; for the GPU also the first run
-- (copies the tree to the device).  Batches of 1 are timed as singles
-- queries with one window each (ms per query; && ANY of that window twice,
-- the GPU's smallest batch), also as a plain bx && w query (no ANY) on the
-- CPU.  The row counts of the GPU and CPU runs must agree (the script
-- raises an error otherwise).
--
-- Variables (psql -v NAME=VALUE): rows, queries, reps (as gist.sql);
-- wmin, wspan (window sides, default 5 and 10); node_sizes (default
-- 16,32,64,128,204; 8 .. 204: a node is one 8 kB page whatever its size,
-- so node_size 16 makes an index 13x the default's, 6 GB at 10 M rows);
-- batches (default 10,100,1000,10000,100000, those above queries left
-- out); singles (default 200).
\set ON_ERROR_STOP on
\if :{?rows}
\else
\set rows 1000000
\endif
\if :{?queries}
\else
\set queries 10000
\endif
\if :{?reps}
\else
\set reps 2
\endif
\if :{?wmin}
\else
\set wmin 5
\endif
\if :{?wspan}
\else
\set wspan 10
\endif
\if :{?node_sizes}
\else
\set node_sizes '16,32,64,128,204'
\endif
\if :{?batches}
\else
\set batches '10,100,1000,10000,100000'
\endif
\if :{?singles}
\else
\set singles 200
\endif
SET client_min_messages = warning;
SET gpuext.enabled = off;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET maintenance_work_mem = '2GB';
-- a bitmap of millions of rows stays exact (a lossy page rechecks each of
-- its rows against every window of the array)
SET work_mem = '1GB';

DROP TABLE IF EXISTS gb_sw, gb_q;
SELECT now() AS started \gset
SELECT set_config('gb.started', :'started', false);
-- the boxes of gist.sql and its windows
CREATE TABLE gb_sw AS
SELECT g AS id,
       box(point(x, y), point(x + (g % 11), y + (g % 7))) AS bx
  FROM (SELECT g, (g * 7919) % 10000 AS x, (g * 104729 / 10000) % 10000 AS y
          FROM generate_series(1::bigint, :rows) g) s;
SELECT setseed(0.42);
CREATE TABLE gb_q AS
SELECT g AS qid,
       box(point(x, y), point(x + w, y + h)) AS qb
  FROM (SELECT g, random() * 9900 AS x, random() * 9900 AS y,
               :wmin + random() * :wspan AS w, :wmin + random() * :wspan AS h
          FROM generate_series(1, :queries) g) s;
VACUUM ANALYZE gb_sw, gb_q;
CREATE TEMP TABLE gb_sweep (node_size int, batch int, method text,
                            ms float8, index_ms float8, first_ms float8, nrows bigint);

-- the settings of a walk: 'gpu' (gpuext on, batches of any size to the
-- GPU, the device copy kept) or 'cpu' (the index pages)
CREATE FUNCTION pg_temp.sw_set(walk text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM set_config('enable_seqscan', 'off', false);
  PERFORM set_config('enable_indexscan', 'off', false);
  PERFORM set_config('gpuext.enabled', CASE walk WHEN 'gpu' THEN 'on' ELSE 'off' END, false);
  PERFORM set_config('gpuext.gist_device_cache', CASE walk WHEN 'gpu' THEN 'on' ELSE 'off' END, false);
  PERFORM set_config('gpuext.gist_gpu_min_batch', CASE walk WHEN 'gpu' THEN '2' ELSE '64' END, false);
END
$f$;

-- one batch under a walk: best of reps of the query and of its Bitmap
-- Index Scan (EXPLAIN ANALYZE), the first run, the row count
CREATE FUNCTION pg_temp.sw_batch(ns int, b int, walk text, reps int) RETURNS void
LANGUAGE plpgsql AS $f$
DECLARE
  arr box[];
  j jsonb;
  best float8 := 'Infinity';
  best_ix float8 := 'Infinity';
  first float8;
  n bigint;
BEGIN
  SELECT array_agg(qb ORDER BY qid) INTO arr FROM gb_q WHERE qid <= b;
  PERFORM pg_temp.sw_set(walk);
  FOR i IN 1 .. reps LOOP
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM gb_sw WHERE bx && ANY ($1)'
      INTO j USING arr;
    IF i = 1 THEN
      first := (j->0->>'Execution Time')::float8;
    END IF;
    best := least(best, (j->0->>'Execution Time')::float8);
    best_ix := least(best_ix, (jsonb_path_query_first(j,
      'strict $.**?(@."Node Type" == "Bitmap Index Scan")."Actual Total Time"'))::float8);
    n := (jsonb_path_query_first(j,
      'strict $.**?(@."Node Type" == "Bitmap Index Scan")."Actual Rows"'))::bigint;
  END LOOP;
  INSERT INTO gb_sweep VALUES (ns, b, walk, best, best_ix, first, n);
  RAISE WARNING 'sweep: node_size % | batch % | % | % ms (index % ms, first % ms) | % rows',
    ns, b, walk, round(best::numeric, 2), round(best_ix::numeric, 2), round(first::numeric, 2), n;
END
$f$;

-- singles queries of one window each, ms per query: && ANY(ARRAY[w, w])
-- under a walk (twice the same window: 2 is the GPU's smallest batch,
-- gpuext.gist_gpu_min_batch), or ('plain') bx && w on the index pages
CREATE FUNCTION pg_temp.sw_single(ns int, walk text, singles int) RETURNS void
LANGUAGE plpgsql AS $f$
DECLARE
  t0 timestamptz;
  w box;
  c bigint;
  n bigint := 0;
  ms float8;
BEGIN
  PERFORM pg_temp.sw_set(CASE walk WHEN 'plain' THEN 'cpu' ELSE walk END);
  IF walk = 'gpu' THEN	-- the device copy first, outside the timing
    EXECUTE 'SELECT count(*) FROM gb_sw WHERE bx && ANY ($1)' INTO c
      USING ARRAY[(SELECT qb FROM gb_q WHERE qid = 1), (SELECT qb FROM gb_q WHERE qid = 1)];
  END IF;
  t0 := clock_timestamp();
  FOR w IN SELECT qb FROM gb_q WHERE qid <= singles ORDER BY qid LOOP
    IF walk = 'plain' THEN
      EXECUTE 'SELECT count(*) FROM gb_sw WHERE bx && $1' INTO c USING w;
    ELSE
      EXECUTE 'SELECT count(*) FROM gb_sw WHERE bx && ANY ($1)' INTO c USING ARRAY[w, w];
    END IF;
    n := n + c;
  END LOOP;
  ms := extract(epoch FROM clock_timestamp() - t0) * 1000 / singles;
  INSERT INTO gb_sweep VALUES (ns, 1, walk, ms, NULL, NULL, n);
  RAISE WARNING 'sweep: node_size % | batch 1 (% queries) | % | % ms per query | % rows in all',
    ns, singles, walk, round(ms::numeric, 3), n;
END
$f$;

-- one node size: build, then every batch size on the GPU and the CPU walk
CREATE FUNCTION pg_temp.sw_node(ns int, batches int[], reps int, singles int) RETURNS void
LANGUAGE plpgsql AS $f$
DECLARE
  t0 timestamptz;
  b int;
BEGIN
  DROP INDEX IF EXISTS gb_sw_bx;
  t0 := clock_timestamp();
  EXECUTE format('CREATE INDEX gb_sw_bx ON gb_sw USING gpuext_gist (bx) WITH (node_size = %s)', ns);
  RAISE WARNING 'sweep: node_size % | build % ms | % | % s since start', ns,
    round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric),
    pg_size_pretty(pg_relation_size('gb_sw_bx')),
    round(extract(epoch FROM clock_timestamp() - current_setting('gb.started')::timestamptz)::numeric);
  PERFORM pg_temp.sw_single(ns, 'plain', singles);
  PERFORM pg_temp.sw_single(ns, 'cpu', singles);
  PERFORM pg_temp.sw_single(ns, 'gpu', singles);
  FOREACH b IN ARRAY batches LOOP
    PERFORM pg_temp.sw_batch(ns, b, 'cpu', reps);
    PERFORM pg_temp.sw_batch(ns, b, 'gpu', reps);
  END LOOP;
END
$f$;

-- one statement (one transaction) per node size: the dropped index's
-- files go at its end
SELECT format('SELECT pg_temp.sw_node(%s, %L::int[], %s, %s)', ns,
              (SELECT array_agg(b) FROM unnest(string_to_array(:'batches', ',')::int[]) b
                WHERE b <= :queries), :reps, :singles)
  FROM unnest(string_to_array(:'node_sizes', ',')::int[]) WITH ORDINALITY u(ns, k)
 ORDER BY k \gexec

SELECT node_size, batch, method, round(ms::numeric, 3) AS ms,
       round(index_ms::numeric, 3) AS index_ms, round(first_ms::numeric, 2) AS first_ms, nrows
  FROM gb_sweep ORDER BY node_size, batch, method;
-- GPU over CPU walk per node size and batch (> 1: the GPU is faster)
SELECT c.node_size, c.batch,
       round((c.ms / g.ms)::numeric, 2) AS query_speedup,
       round((c.index_ms / nullif(g.index_ms, 0))::numeric, 2) AS index_speedup
  FROM gb_sweep c JOIN gb_sweep g USING (node_size, batch)
 WHERE c.method = 'cpu' AND g.method = 'gpu'
 ORDER BY 1, 2;
DO $$
BEGIN
  IF EXISTS (SELECT FROM gb_sweep GROUP BY node_size, batch
              HAVING count(DISTINCT nrows) > 1) THEN
    RAISE EXCEPTION 'gpuext_gist sweep: the walks disagree on the row count';
  END IF;
END
$$;
DROP TABLE gb_sw, gb_q;
