--
-- GpuAgg under parallel query settings.  On a GPU, parallel workers feed
-- one device table and the last one returns the groups; the CPU engine
-- has no parallel GpuAgg and the planner takes the serial one, whose
-- fallback child may itself be a parallel plan.  Either way the results
-- must be PostgreSQL's (which this file compares with a parallel stock
-- plan), so only results are checked here, not plans.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;

-- the stock plans compared with are parallel
SET gpuext.enabled = off;
EXPLAIN (COSTS OFF) SELECT g, count(*), sum(i4) FROM gx_agg GROUP BY g;
RESET gpuext.enabled;

-- few groups, many groups, no GROUP BY
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(i4) AS s, avg(n) AS a, min(d) AS m, sum(f8) AS f FROM gx_agg GROUP BY g$$, false);
SELECT gx_agg_diff($$SELECT k, b, count(*) AS c, sum(i8) AS s, max(tz) AS m FROM gx_agg GROUP BY k, b$$, false);
SELECT gx_agg_diff($$SELECT count(*) AS c, sum(i2) AS s, avg(f4) AS a, max(ts) AS m FROM gx_agg$$, false);
SELECT gx_agg_diff($$SELECT id, count(*) AS c, sum(v) AS s FROM gx_agg_many GROUP BY id$$, false);
SELECT gx_agg_diff($$SELECT t, count(*) AS c FROM gx_agg_many WHERE v < 50 GROUP BY t$$, false);
SELECT gx_agg_diff($$SELECT s, count(*) AS c, sum(i4) AS a FROM gx_agg GROUP BY s$$, false);
-- FILTER, HAVING, expressions, scan quals
SELECT gx_agg_diff($$SELECT g, count(*) FILTER (WHERE b) AS c, sum(i4) FILTER (WHERE i2 > 0) AS s FROM gx_agg WHERE i8 > 0 GROUP BY g HAVING count(*) > 900$$, false);
SELECT gx_agg_diff($$SELECT i4 % 7 AS m, sum(n2) / count(*) AS q FROM gx_agg WHERE d > '1990-01-01' GROUP BY 1$$, false);
-- empty input
SELECT gx_agg_diff($$SELECT count(*) AS c, sum(i4) AS s FROM gx_agg WHERE i4 > 1000000$$, false);
SELECT gx_agg_diff($$SELECT g, count(*) AS c FROM gx_agg WHERE i4 > 1000000 GROUP BY g$$, false);
SELECT gx_agg_diff($$SELECT count(*) AS c, sum(i4) AS s FROM gx_agg_empty$$, false);
-- integer sums past 2^63, numeric scales
SELECT gx_agg_diff($$SELECT g, sum(i8) AS s, avg(i8) AS a FROM gx_aggx GROUP BY g$$, false);
SELECT gx_agg_diff($$SELECT g, sum(n)::text AS s, avg(n)::text AS a, sum(n10)::text AS s10 FROM gx_aggn GROUP BY g$$, false);
-- values the device gives up on: PostgreSQL's plan (maybe a parallel one)
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(n) AS s FROM gx_aggn WHERE n38 * 1000 > 0 GROUP BY g$$, false);
CREATE TABLE gx_agg_pnan (id int, g int, n numeric);
INSERT INTO gx_agg_pnan SELECT x, x % 5, x * 0.5 FROM generate_series(1, 30000) x;
UPDATE gx_agg_pnan SET n = 'NaN' WHERE id = 12345;
ANALYZE gx_agg_pnan;
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(n) AS s, avg(n) AS a FROM gx_agg_pnan GROUP BY g$$, false);
SELECT gx_agg_diff($$SELECT count(*) AS c, sum(n) AS s FROM gx_agg_pnan$$, false);
SELECT gx_agg_diff($$SELECT id, count(*) AS c FROM gx_agg_pnan WHERE n > 0 OR n IS NULL GROUP BY id$$, false);
SET gpuext.force_offload = on;
SELECT g, count(*), sum(n), avg(n) FROM gx_agg_pnan GROUP BY g ORDER BY g;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT g, count(*), sum(n), avg(n) FROM gx_agg_pnan GROUP BY g ORDER BY g;
RESET gpuext.enabled;
DROP TABLE gx_agg_pnan;
-- InitPlans and correlated subqueries
SELECT gx_agg_diff($$SELECT g, count(*) AS c FROM gx_agg WHERE i2 < (SELECT 50) GROUP BY g$$, false);
SELECT gx_agg_diff($$SELECT x.id, (SELECT sum(i4) FROM gx_agg a WHERE a.g = x.g) AS s FROM gx_aggx x WHERE x.id <= 5$$, false);
-- many batches per participant
SET gpuext.max_batch_pages = 4;
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(i8) AS s FROM gx_agg GROUP BY g$$, false);
SELECT gx_agg_diff($$SELECT id % 5000 AS m, count(*) AS c, sum(v) AS s FROM gx_agg_many GROUP BY 1$$, false);
RESET gpuext.max_batch_pages;
-- the same query twice in one statement (two GpuAggs, maybe two
-- parallel aggregations)
SELECT gx_agg_diff($$SELECT (SELECT count(*) FROM gx_agg WHERE b) AS a, (SELECT sum(i4) FROM gx_agg WHERE NOT b) AS b$$, false);
SET gpuext.force_offload = on;
SELECT g, count(*), sum(i4), min(i2), max(d) FROM gx_agg GROUP BY g ORDER BY g;
SELECT count(*), sum(c) FROM (SELECT id, count(*) AS c FROM gx_agg_many GROUP BY id) s;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT g, count(*), sum(i4), min(i2), max(d) FROM gx_agg GROUP BY g ORDER BY g;
SELECT count(*), sum(c) FROM (SELECT id, count(*) AS c FROM gx_agg_many GROUP BY id) s;
RESET gpuext.enabled;

-- a GpuAgg fused over a GpuJoin in parallel (each participant builds the
-- inner tables and probes its share of the pages; on the CPU engine, which
-- cannot share a group table, the last participant runs the stock plan):
-- the same groups either way.  (The plan shown is the CPU engine's: on a
-- GPU a parallel GpuAgg is given only the workers its batches keep busy,
-- three batches in flight each (gx_parallel_scan_workers): too few for
-- this 300 K-row table, and the serial fused plan wins there.)
CREATE TABLE gx_agg_pfact AS
SELECT x AS id, x % 500 AS k, x % 97 AS v FROM generate_series(1, 300000) x;
CREATE TABLE gx_agg_pdim AS SELECT x AS k, 'g' || (x % 7) AS label FROM generate_series(0, 499) x;
ANALYZE gx_agg_pfact;
ANALYZE gx_agg_pdim;
SET max_parallel_workers_per_gather = 4;
SET parallel_setup_cost = 10;
SET parallel_tuple_cost = 0.1;
SET gpuext.force_offload = on;
SET gpuext.device = cpu;
EXPLAIN (COSTS OFF)
SELECT d.label, count(*), sum(f.v) FROM gx_agg_pfact f JOIN gx_agg_pdim d ON f.k = d.k GROUP BY d.label;
RESET gpuext.device;
SELECT d.label, count(*), sum(f.v), max(f.id) FROM gx_agg_pfact f JOIN gx_agg_pdim d ON f.k = d.k
 GROUP BY d.label ORDER BY 1;
SET gpuext.enabled = off;
SELECT d.label, count(*), sum(f.v), max(f.id) FROM gx_agg_pfact f JOIN gx_agg_pdim d ON f.k = d.k
 GROUP BY d.label ORDER BY 1;
RESET gpuext.enabled;
-- an inner side whose cheapest plan is parallel (a Gather, which cannot
-- run inside a participant): the parallel form takes the inner table's
-- parallel-safe plan, and a hashed aggregation over the parallel-safe
-- join plan as its fallback (PostgreSQL's own grouping plans all hold the
-- Gather); the same groups.  Planned as the CPU engine plans it (on the
-- GPU a serial GpuScan is kept out of parallel plans, src/gpuscan.c, and
-- the inner scan stays under its own Gather)
CREATE TABLE gx_agg_pdim2 AS
SELECT x AS k, 'h' || (x % 5) AS label, repeat('x', 200) AS pad FROM generate_series(0, 199999) x;
ANALYZE gx_agg_pdim2;
SET min_parallel_table_scan_size = 0;
SET gpuext.device = cpu;
EXPLAIN (COSTS OFF)
SELECT d.label, count(*), sum(f.v) FROM gx_agg_pfact f JOIN gx_agg_pdim2 d ON f.k = d.k
 WHERE d.pad LIKE 'x%' AND d.k < 500 GROUP BY d.label;
RESET gpuext.device;
SELECT d.label, count(*), sum(f.v), max(f.id) FROM gx_agg_pfact f JOIN gx_agg_pdim2 d ON f.k = d.k
 WHERE d.pad LIKE 'x%' AND d.k < 500 GROUP BY d.label ORDER BY 1;
SET gpuext.enabled = off;
SELECT d.label, count(*), sum(f.v), max(f.id) FROM gx_agg_pfact f JOIN gx_agg_pdim2 d ON f.k = d.k
 WHERE d.pad LIKE 'x%' AND d.k < 500 GROUP BY d.label ORDER BY 1;
RESET gpuext.enabled;
RESET min_parallel_table_scan_size;
RESET gpuext.force_offload;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET max_parallel_workers_per_gather = 2;
DROP TABLE gx_agg_pfact, gx_agg_pdim, gx_agg_pdim2;
