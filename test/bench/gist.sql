-- gpuext_gist benchmark (issue 9 item 5): batched box queries and a
-- spatial join, gpuext_gist against PostgreSQL's GiST on the same data.
-- Run by test/bench/gist.sh (or: psql -v rows=N -v queries=Q -f gist.sql
-- in a database with gpuext).  Prints one line per case and method as it
-- is measured (WARNING: result: ...; a run cut short still reports what it
-- measured) and a table at the end: the best of the runs in ms and the row
-- count; the row counts of a case must agree (the script raises an error
-- otherwise).
--
-- Variables (psql -v NAME=VALUE):
--   rows     boxes indexed (side 0-10 x 0-6 on a 10000 x 10000 plane)
--   queries  windows of the && ANY batch (side wmin .. wmin + wspan)
--   outer    boxes of the join's outer side (shaped like the indexed ones:
--            about 6 pairs each at 10 M rows); default: queries
--   reps     runs of each case, the best kept; gpureps for the GPU cases
--            (the first run of a node copies the tree to the device, the
--            later ones take the session's copy: gpuext.gist_device_cache)
--   slow_ms  statement_timeout of the slow cases (serial GiST, the plain
--            nested loop over gpuext_gist, the probe function), reported
--            as "> slow_ms ms" when cut; 0: no limit
--   explain  1: EXPLAIN ANALYZE once for the GPU cases (engine, batches)
-- Each index has its own copy of the table (gb_gx: gpuext_gist, gb_gist:
-- GiST), so that the planner cannot mix the two indexes in a plan.
\set ON_ERROR_STOP on
\if :{?rows}
\else
\set rows 1000000
\endif
\if :{?queries}
\else
\set queries 1000
\endif
\if :{?outer}
\else
\set outer :queries
\endif
\if :{?reps}
\else
\set reps 3
\endif
\if :{?gpureps}
\else
\set gpureps :reps
\endif
\if :{?wmin}
\else
\set wmin 20
\endif
\if :{?wspan}
\else
\set wspan 40
\endif
\if :{?slow_ms}
\else
\set slow_ms 0
\endif
\if :{?explain}
\else
\set explain 0
\endif
SET client_min_messages = warning;
SET gpuext.enabled = off;	-- the index alone, not GpuScan/GpuAgg; on for the
							-- cases whose batches may go to the GPU
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET maintenance_work_mem = '2GB';
-- a bitmap of millions of rows stays exact (a lossy page rechecks each of
-- its rows against every window of the array)
SET work_mem = '1GB';

DROP TABLE IF EXISTS gb_gx, gb_gist, gb_q, gb_o, gb_times;
SELECT now() AS started \gset
-- boxes of side 0..10 x 0..6 on a 10000 x 10000 plane, a deterministic scramble
CREATE TABLE gb_gx AS
SELECT g AS id,
       box(point(x, y), point(x + (g % 11), y + (g % 7))) AS bx
  FROM (SELECT g, (g * 7919) % 10000 AS x, (g * 104729 / 10000) % 10000 AS y
          FROM generate_series(1::bigint, :rows) g) s;
CREATE TABLE gb_gist AS SELECT * FROM gb_gx;
-- the batch's windows (side wmin .. wmin + wspan) and the join's outer
-- boxes (shaped like the indexed ones), at seeded random places
SELECT setseed(0.42);
CREATE TABLE gb_q AS
SELECT g AS qid,
       box(point(x, y), point(x + w, y + h)) AS qb
  FROM (SELECT g, random() * 9900 AS x, random() * 9900 AS y,
               :wmin + random() * :wspan AS w, :wmin + random() * :wspan AS h
          FROM generate_series(1, :queries) g) s;
CREATE TABLE gb_o AS
SELECT g AS oid_,
       box(point(x, y), point(x + random() * 10, y + random() * 6)) AS ob
  FROM (SELECT g, random() * 10000 AS x, random() * 10000 AS y
          FROM generate_series(1, :outer) g) s;
CREATE TEMP TABLE gb_times (case_name text, method text, ms float8, nrows bigint);

-- each step's time as it comes
CREATE FUNCTION pg_temp.gb_note(what text, t0 timestamptz) RETURNS void
LANGUAGE plpgsql AS $f$
BEGIN
  RAISE WARNING 'step: % | % ms | % s since start', what,
    round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric),
    round(extract(epoch FROM clock_timestamp() - current_setting('gb.started')::timestamptz)::numeric);
END
$f$;
SELECT set_config('gb.started', :'started', false);
SELECT pg_temp.gb_note('tables', :'started');

SELECT clock_timestamp() AS t0 \gset
CREATE INDEX gb_gx_bx ON gb_gx USING gpuext_gist (bx);
SELECT pg_temp.gb_note('build gpuext_gist', :'t0');
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX gb_gist_bx ON gb_gist USING gist (bx);
SELECT pg_temp.gb_note('build GiST', :'t0');
SELECT clock_timestamp() AS t0 \gset
VACUUM ANALYZE gb_gx, gb_gist, gb_q, gb_o;
SELECT pg_temp.gb_note('vacuum analyze', :'t0');
SELECT pg_size_pretty(pg_relation_size('gb_gx_bx')) AS gpuext_gist_size,
       pg_size_pretty(pg_relation_size('gb_gist_bx')) AS gist_size,
       pg_size_pretty(pg_relation_size('gb_gx')) AS table_size;

-- time q (a query returning one count) under the settings, best of reps;
-- a run cut by statement_timeout (set around the call) ends the case
-- ("> N ms", no row count); with explain, one EXPLAIN ANALYZE of q after
CREATE FUNCTION pg_temp.gb_time(case_name text, method text, q text, settings text,
                                reps int, explain bool DEFAULT false)
RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
  t0 timestamptz;
  best float8 := 'Infinity';
  n bigint;
  cut bool := false;
  line text;
  s0 record;
  s1 record;
BEGIN
  IF settings <> '' THEN
    EXECUTE settings;
  END IF;
  FOR i IN 1 .. reps LOOP
    t0 := clock_timestamp();
    BEGIN
      EXECUTE q INTO n;
    EXCEPTION WHEN query_canceled THEN
      cut := true;
      n := NULL;
      best := extract(epoch FROM clock_timestamp() - t0) * 1000;
      EXIT;
    END;
    best := least(best, extract(epoch FROM clock_timestamp() - t0) * 1000);
  END LOOP;
  IF explain AND NOT cut THEN
    SELECT gpu_batches, cpu_batches, device_time_ms INTO s0 FROM gpuext_status();
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) ' || q LOOP
      RAISE WARNING 'explain: %', line;
    END LOOP;
    SELECT gpu_batches, cpu_batches, device_time_ms INTO s1 FROM gpuext_status();
    RAISE WARNING 'explain: (service: % GPU batches, % CPU batches, % ms device time)',
      s1.gpu_batches - s0.gpu_batches, s1.cpu_batches - s0.cpu_batches,
      round((s1.device_time_ms - s0.device_time_ms)::numeric, 1);
  END IF;
  RESET enable_seqscan; RESET enable_bitmapscan; RESET enable_indexscan;
  RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_material;
  RESET enable_nestloop; RESET gpuext.enable_gist_join;
  RESET gpuext.gist_join_batch; RESET gpuext.gist_device_cache; SET gpuext.enabled = off;
  SET max_parallel_workers_per_gather = 0; RESET parallel_setup_cost;
  RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
  IF cut THEN
    INSERT INTO gb_times VALUES (case_name, method || ' (cut)', best, NULL);
    RAISE WARNING 'result: % | % | > % ms (statement_timeout) | rows unknown',
      case_name, method, round(best::numeric);
  ELSE
    INSERT INTO gb_times VALUES (case_name, method, best, n);
    RAISE WARNING 'result: % | % | % ms | % rows', case_name, method, round(best::numeric, 2), n;
  END IF;
END
$f$;

\set par 'SET max_parallel_workers_per_gather = 8; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; '
\set gpu 'SET gpuext.enabled = on; SET gpuext.gist_device_cache = on; '
\set batch 'SELECT count(*) FROM %s WHERE bx && ANY ((SELECT array_agg(qb) FROM gb_q)::box[])'
SELECT format(:'batch', 'gb_gist') AS batch_gist, format(:'batch', 'gb_gx') AS batch_gx \gset
\set join_gist 'SELECT count(*) FROM gb_o o JOIN gb_gist t ON t.bx && o.ob'
\set join_gx 'SELECT count(*) FROM gb_o o JOIN gb_gx t ON t.bx && o.ob'
\set nl 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_material = off; '
\set gj 'SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off; '

-- 1. a batch of box queries: rows overlapping any of the windows.  GiST
-- with 8 workers is the reference (a parallel bitmap heap scan: the
-- leader builds the bitmap, one descent per element)
SELECT pg_temp.gb_time('batch && ANY', 'gist bitmap, 8 workers', :'batch_gist',
  'SET enable_seqscan = off; ' || :'par', :reps);
SELECT pg_temp.gb_time('batch && ANY', 'gpuext_gist bitmap, 8 workers, gpuext on (GPU if any)', :'batch_gx',
  'SET enable_seqscan = off; SET enable_indexscan = off; ' || :'gpu' || :'par', :gpureps, :explain = 1);
SELECT pg_temp.gb_time('batch && ANY', 'gpuext_gist bitmap, gpuext on (GPU if any)', :'batch_gx',
  'SET enable_seqscan = off; SET enable_indexscan = off; ' || :'gpu', :gpureps, :explain = 1);
SELECT pg_temp.gb_time('batch && ANY', 'gpuext_gist bitmap, 8 workers', :'batch_gx',
  'SET enable_seqscan = off; SET enable_indexscan = off; ' || :'par', :reps);
SELECT pg_temp.gb_time('batch && ANY', 'gpuext_gist bitmap', :'batch_gx',
  'SET enable_seqscan = off; SET enable_indexscan = off', :reps);
SELECT pg_temp.gb_time('batch && ANY', 'gpuext_gist index', :'batch_gx',
  'SET enable_seqscan = off; SET enable_bitmapscan = off', :reps);
SET statement_timeout = :slow_ms;
SELECT pg_temp.gb_time('batch && ANY', 'gist bitmap', :'batch_gist',
  'SET enable_seqscan = off', :reps);
RESET statement_timeout;

-- 2. a spatial join: every (outer box, row) pair that overlaps.  The only
-- stock plan for && is a nested loop (no hash or merge join for it); the
-- reference is the GiST nested loop with 8 workers (a parallel scan of the
-- outer side, one index descent per outer row)
SELECT pg_temp.gb_time('join o && t', 'gist nested loop, 8 workers', :'join_gist',
  :'nl' || :'par', :reps);
SELECT pg_temp.gb_time('join o && t', 'gpuext_gist GistJoin, 8 workers, gpuext on (GPU if any)', :'join_gx',
  :'gj' || :'gpu' || 'SET gpuext.gist_join_batch = 65536; ' || :'par', :gpureps, :explain = 1);
SELECT pg_temp.gb_time('join o && t', 'gpuext_gist GistJoin, 8 workers, batches of 16384, gpuext on (GPU if any)', :'join_gx',
  :'gj' || :'gpu' || 'SET gpuext.gist_join_batch = 16384; ' || :'par', :gpureps, :explain = 1);
SELECT pg_temp.gb_time('join o && t', 'gpuext_gist GistJoin, gpuext on (GPU if any)', :'join_gx',
  :'gj' || :'gpu' || 'SET gpuext.gist_join_batch = 65536', :gpureps, :explain = 1);
SELECT pg_temp.gb_time('join o && t', 'gpuext_gist GistJoin, 8 workers', :'join_gx',
  :'gj' || :'par', :reps);
SELECT pg_temp.gb_time('join o && t', 'gpuext_gist GistJoin', :'join_gx',
  :'gj', :reps);
SET statement_timeout = :slow_ms;
SELECT pg_temp.gb_time('join o && t', 'gpuext_gist_probe batch, gpuext on (GPU if any)',
  'SELECT count(*) FROM gpuext_gist_probe(''gb_gx_bx'', (SELECT array_agg(ob ORDER BY oid_) FROM gb_o), ''&&'')',
  :'gpu', :gpureps);
SELECT pg_temp.gb_time('join o && t', 'gpuext_gist_probe batch',
  'SELECT count(*) FROM gpuext_gist_probe(''gb_gx_bx'', (SELECT array_agg(ob ORDER BY oid_) FROM gb_o), ''&&'')',
  '', :reps);
SELECT pg_temp.gb_time('join o && t', 'gpuext_gist nested loop', :'join_gx',
  :'nl' || 'SET gpuext.enable_gist_join = off', :reps);
SELECT pg_temp.gb_time('join o && t', 'gist nested loop', :'join_gist', :'nl', :reps);
RESET statement_timeout;

SELECT case_name, method, round(ms::numeric, 2) AS ms, nrows FROM gb_times ORDER BY case_name, ms;
SELECT pg_temp.gb_note('all', :'started');
DO $$
BEGIN
  IF (SELECT count(DISTINCT nrows) FROM gb_times GROUP BY case_name ORDER BY 1 DESC LIMIT 1) > 1 THEN
    RAISE EXCEPTION 'gpuext_gist benchmark: the methods of a case disagree on the row count';
  END IF;
END
$$;
DROP TABLE gb_gx, gb_gist, gb_q, gb_o;
