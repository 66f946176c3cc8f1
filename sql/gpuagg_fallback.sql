--
-- GpuAgg: what stays with PostgreSQL.  Aggregations the planner keeps
-- for the stock plan (no GpuAgg), and GpuAgg nodes that run their child,
-- PostgreSQL's own plan, at execution; gpuext.cpu_fallback = notice says
-- so exactly once; gpuext.gpu_memory_limit.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
SET max_parallel_workers_per_gather = 0;

--
-- not on the device: the planner keeps PostgreSQL's plan
--
-- DISTINCT and ORDER BY in aggregates
SELECT gx_agg_diff($$SELECT g, count(DISTINCT k) AS c FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(DISTINCT i2) AS s, count(*) AS c FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(i4 ORDER BY id) AS s FROM gx_agg GROUP BY g$$);
-- aggregates the device does not have
SELECT gx_agg_diff($$SELECT g, bool_or(b) AS s FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, min(t) AS a, max(vc) AS b FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, min(n) AS a, max(n2) AS b FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, corr(f8, f4) AS a, covar_pop(f8, f4) AS b FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, bool_and(b) AS a, bit_or(i4) AS b FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, string_agg(vc, ',' ORDER BY id) AS a FROM gx_agg WHERE id < 100 GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c, bit_and(i4) AS s FROM gx_agg GROUP BY g$$);
-- grouping sets, rollup, cube
SELECT gx_agg_diff($$SELECT g, b, count(*) AS c FROM gx_agg GROUP BY ROLLUP (g, b)$$);
SELECT gx_agg_diff($$SELECT g, b, count(*) AS c FROM gx_agg GROUP BY GROUPING SETS ((g), (b), ())$$);
-- joins, subqueries, set operations as the input
SELECT gx_agg_diff($$SELECT a.g, count(*) AS c FROM gx_agg a JOIN gx_aggx x ON a.id = x.id GROUP BY a.g$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c FROM (SELECT * FROM gx_agg ORDER BY id LIMIT 1000) s GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c FROM (SELECT g FROM gx_agg UNION ALL SELECT g FROM gx_aggx) s GROUP BY g$$);
-- a view over one table is that table: GpuAgg
CREATE VIEW gx_agg_view AS SELECT id, g, i4 * 2 AS i4x2 FROM gx_agg WHERE b;
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(i4x2) AS s FROM gx_agg_view GROUP BY g$$);
DROP VIEW gx_agg_view;
-- an inheritance parent and a partitioned table: PostgreSQL's plan
CREATE TABLE gx_agg_parent (g int, v int);
CREATE TABLE gx_agg_child () INHERITS (gx_agg_parent);
INSERT INTO gx_agg_parent SELECT x % 3, x FROM generate_series(1, 100) x;
INSERT INTO gx_agg_child SELECT x % 3, x FROM generate_series(1, 100) x;
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(v) AS s FROM gx_agg_parent GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(v) AS s FROM ONLY gx_agg_parent GROUP BY g$$);
DROP TABLE gx_agg_parent CASCADE;
CREATE TABLE gx_agg_part (g int, v int) PARTITION BY RANGE (v);
CREATE TABLE gx_agg_part1 PARTITION OF gx_agg_part FOR VALUES FROM (0) TO (50);
CREATE TABLE gx_agg_part2 PARTITION OF gx_agg_part FOR VALUES FROM (50) TO (1000);
INSERT INTO gx_agg_part SELECT x % 3, x FROM generate_series(1, 100) x;
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(v) AS s FROM gx_agg_part GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(v) AS s FROM gx_agg_part1 GROUP BY g$$);
DROP TABLE gx_agg_part;
-- a scan qual the device cannot run
SELECT gx_agg_diff($$SELECT g, count(*) AS c FROM gx_agg WHERE t ~ '^key1' GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c FROM gx_agg WHERE random() >= 0 GROUP BY g$$);
-- an aggregate input the device cannot compute
SELECT gx_agg_diff($$SELECT g, count(md5(t)) AS c FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(length(t)) AS s FROM gx_agg GROUP BY g$$);
-- the plans
SET gpuext.force_offload = on;
EXPLAIN (COSTS OFF) SELECT g, count(DISTINCT k) FROM gx_agg GROUP BY g;
EXPLAIN (COSTS OFF) SELECT g, string_agg(t, ',') FROM gx_agg GROUP BY g;
EXPLAIN (COSTS OFF) SELECT g, b, count(*) FROM gx_agg GROUP BY ROLLUP (g, b);
RESET gpuext.force_offload;

--
-- GpuAgg at execution: when the device cannot finish exactly, the node
-- returns what its child, PostgreSQL's plan, returns
--
-- more groups than the device table was sized for: a table without
-- statistics (the planner guesses 200 groups) with 50000
CREATE TABLE gx_agg_nostats (id int, v int) WITH (autovacuum_enabled = off);
INSERT INTO gx_agg_nostats SELECT x, x % 100 FROM generate_series(1, 50000) x;
SELECT gx_agg_diff($$SELECT id, count(*) AS c, sum(v) AS s FROM gx_agg_nostats GROUP BY id$$);
SELECT gx_agg_diff($$SELECT v, count(*) AS c, sum(id) AS s FROM gx_agg_nostats GROUP BY v$$);
SELECT * FROM gx_agg_explain($$SELECT id, count(*) FROM gx_agg_nostats GROUP BY id$$, true);
-- gpuext.cpu_fallback = notice: one NOTICE when PostgreSQL's plan runs
-- instead, none when the device's result is used
CREATE TABLE gx_agg_fb (id int, g int, n numeric);
INSERT INTO gx_agg_fb SELECT x, x % 4, x * 0.25 FROM generate_series(1, 2000) x;
ANALYZE gx_agg_fb;
SET gpuext.cpu_fallback = notice;
SET gpuext.force_offload = on;
SELECT g, count(*), sum(n) FROM gx_agg_fb GROUP BY g ORDER BY g;
UPDATE gx_agg_fb SET n = 'NaN' WHERE id = 1000;
SELECT g, count(*), sum(n) FROM gx_agg_fb GROUP BY g ORDER BY g;
SELECT count(*), sum(n) FROM gx_agg_fb WHERE g = 0;
SELECT count(*), sum(c) FROM (SELECT id, count(*) AS c FROM gx_agg_nostats GROUP BY id) s;
-- in EXPLAIN ANALYZE too
SELECT * FROM gx_agg_explain($$SELECT g, sum(n) FROM gx_agg_fb WHERE id > 100 GROUP BY g$$, true);
-- not when the planner chose PostgreSQL's plan (no GpuAgg ran)
SELECT g, count(DISTINCT n) FROM gx_agg_fb GROUP BY g ORDER BY g;
-- twice in a query: one NOTICE each
SELECT (SELECT sum(n) FROM gx_agg_fb WHERE g = 1) AS a, (SELECT sum(n) FROM gx_agg_fb WHERE g = 2) AS b;
RESET gpuext.force_offload;
-- rescanned with another parameter value: PostgreSQL's plan (a hashed
-- aggregation, which keeps its table unless told that a parameter
-- changed) aggregates the new rows (counts 500, 1500 and 2000)
SET gpuext.force_offload = on;
SET enable_sort = off;
SELECT o.v, (SELECT sum(c) FROM (SELECT g, count(*) AS c, sum(n) AS s FROM gx_agg_fb
                                  WHERE id <= o.v GROUP BY g) x WHERE s IS NOT NULL) AS rows
  FROM (VALUES (500), (1500), (2000)) o(v);
EXPLAIN (COSTS OFF) SELECT o.v, (SELECT sum(c) FROM (SELECT g, count(*) AS c, sum(n) AS s FROM gx_agg_fb
                                  WHERE id <= o.v GROUP BY g) x WHERE s IS NOT NULL) AS rows
  FROM (VALUES (500), (1500), (2000)) o(v);
RESET enable_sort;
RESET gpuext.force_offload;
-- gpuext.cpu_fallback = off: a value the device cannot aggregate is no
-- GPU failure, PostgreSQL's plan still runs, silently
SET gpuext.cpu_fallback = off;
SET gpuext.force_offload = on;
SELECT g, count(*), sum(n) FROM gx_agg_fb GROUP BY g ORDER BY g;
RESET gpuext.force_offload;
RESET gpuext.cpu_fallback;
SET gpuext.enabled = off;
SELECT g, count(*), sum(n) FROM gx_agg_fb GROUP BY g ORDER BY g;
SELECT count(*), sum(n) FROM gx_agg_fb WHERE g = 0;
SELECT (SELECT sum(n) FROM gx_agg_fb WHERE g = 1) AS a, (SELECT sum(n) FROM gx_agg_fb WHERE g = 2) AS b;
SELECT count(*), sum(c) FROM (SELECT id, count(*) AS c FROM gx_agg_nostats GROUP BY id) s;
RESET gpuext.enabled;
DROP TABLE gx_agg_fb;
-- with statistics the table is sized for them
ANALYZE gx_agg_nostats;
SELECT gx_agg_diff($$SELECT id, count(*) AS c, sum(v) AS s FROM gx_agg_nostats GROUP BY id$$);

-- gpuext.gpu_memory_limit: on a GPU a group table larger than the limit
-- is not made and PostgreSQL's plan runs; the CPU engine has no such
-- limit.  Either way, the same rows.
SET gpuext.gpu_memory_limit = '1MB';
SELECT gx_agg_diff($$SELECT id, count(*) AS c, sum(v) AS s FROM gx_agg_many GROUP BY id$$, false);
SELECT gx_agg_diff($$SELECT t, count(*) AS c, min(id) AS m FROM gx_agg_many GROUP BY t$$, false);
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(i8) AS s FROM gx_agg GROUP BY g$$, false);
SET gpuext.force_offload = on;
SELECT count(*), sum(c) FROM (SELECT id, count(*) AS c FROM gx_agg_many GROUP BY id) s;
RESET gpuext.force_offload;
RESET gpuext.gpu_memory_limit;
DROP TABLE gx_agg_nostats;
