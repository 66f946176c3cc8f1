--
-- GpuAgg with values known only at execution: prepared statements (custom
-- and generic plans), InitPlans in the scan qual, GpuAgg as a correlated
-- subquery (rescanned with a new outer value each time), LATERAL, and
-- cursors.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
SET max_parallel_workers_per_gather = 0;

-- InitPlans (uncorrelated subqueries) in the scan qual
SELECT * FROM gx_agg_explain($$SELECT g, count(*), sum(i4) FROM gx_agg WHERE i2 < (SELECT 50) GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(i4) AS s FROM gx_agg WHERE i2 < (SELECT 50) GROUP BY g$$);
SELECT gx_agg_diff($$SELECT count(*) AS c, sum(i8) AS s FROM gx_agg WHERE i4 > (SELECT avg(i4) FROM gx_agg)$$);
SELECT gx_agg_diff($$SELECT k, count(*) AS c FROM gx_agg WHERE d < (SELECT max(d) - 5000 FROM gx_agg) GROUP BY k$$);
SELECT gx_agg_diff($$SELECT g, sum(n) AS s FROM gx_agg WHERE n2 > (SELECT 100.5::numeric) AND f8 < (SELECT 50.0::float8) GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c FROM gx_agg WHERE t = (SELECT 'key7'::text) GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c FROM gx_agg WHERE i2 < (SELECT NULL::int) GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(i2) AS s FROM gx_agg WHERE i2 > (SELECT max(i2) FROM gx_agg) GROUP BY g$$);
SELECT gx_agg_diff($$SELECT count(*) AS c, sum(i2) AS s FROM gx_agg WHERE i2 > (SELECT max(i2) FROM gx_agg)$$);
-- an InitPlan in an aggregate's FILTER and input
SELECT gx_agg_diff($$SELECT g, count(*) FILTER (WHERE i4 > (SELECT 0)) AS c, sum(i2 + (SELECT 1)) AS s FROM gx_agg GROUP BY g$$);
-- an InitPlan in HAVING and in the output
SELECT gx_agg_diff($$SELECT g, count(*) + (SELECT 1) AS c FROM gx_agg GROUP BY g HAVING sum(i4) > (SELECT 0)$$);
SET gpuext.force_offload = on;
SELECT g, count(*), sum(i4) FROM gx_agg WHERE i2 < (SELECT 50) GROUP BY g ORDER BY g;
SELECT * FROM gx_agg_explain($$SELECT g, count(*), sum(i4) FROM gx_agg WHERE i2 < (SELECT 50) GROUP BY g$$, true);
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT g, count(*), sum(i4) FROM gx_agg WHERE i2 < (SELECT 50) GROUP BY g ORDER BY g;
RESET gpuext.enabled;

-- prepared statements: custom plans for the first executions, then a
-- generic plan with the parameter as a Param
SET gpuext.force_offload = on;
PREPARE gx_agg_p1(int) AS
  SELECT g, count(*), sum(i4), min(i2) FROM gx_agg WHERE i2 < $1 GROUP BY g ORDER BY g;
EXECUTE gx_agg_p1(50);
EXECUTE gx_agg_p1(-900);
EXECUTE gx_agg_p1(-2000);
EXECUTE gx_agg_p1(50);
EXECUTE gx_agg_p1(50);
EXECUTE gx_agg_p1(50);
EXECUTE gx_agg_p1(-900);
SET plan_cache_mode = force_generic_plan;
PREPARE gx_agg_p2(int, numeric, text) AS
  SELECT k % 3 AS k3, count(*), sum(n), avg(i8) FROM gx_agg
   WHERE i2 < $1 AND n2 > $2 AND t <> $3 GROUP BY k % 3 ORDER BY 1;
SELECT * FROM gx_agg_explain($$EXECUTE gx_agg_p2(0, 0, 'key1')$$);
EXECUTE gx_agg_p2(0, 0, 'key1');
EXECUTE gx_agg_p2(500, -5000.5, 'key2');
EXECUTE gx_agg_p2(-2000, 0, 'key1');
SELECT * FROM gx_agg_explain($$EXECUTE gx_agg_p2(500, -5000.5, 'key2')$$, true);
-- a parameter as the input of an aggregate and a key
PREPARE gx_agg_p3(int) AS SELECT g % $1 AS m, sum(i2 * $1) FROM gx_agg GROUP BY 1 ORDER BY 1;
EXECUTE gx_agg_p3(3);
EXECUTE gx_agg_p3(4);
RESET plan_cache_mode;
RESET gpuext.force_offload;
-- the same, stock
SET gpuext.enabled = off;
PREPARE gx_agg_s1(int) AS
  SELECT g, count(*), sum(i4), min(i2) FROM gx_agg WHERE i2 < $1 GROUP BY g ORDER BY g;
EXECUTE gx_agg_s1(50);
EXECUTE gx_agg_s1(-900);
EXECUTE gx_agg_s1(-2000);
PREPARE gx_agg_s2(int, numeric, text) AS
  SELECT k % 3 AS k3, count(*), sum(n), avg(i8) FROM gx_agg
   WHERE i2 < $1 AND n2 > $2 AND t <> $3 GROUP BY k % 3 ORDER BY 1;
EXECUTE gx_agg_s2(0, 0, 'key1');
EXECUTE gx_agg_s2(500, -5000.5, 'key2');
PREPARE gx_agg_s3(int) AS SELECT g % $1 AS m, sum(i2 * $1) FROM gx_agg GROUP BY 1 ORDER BY 1;
EXECUTE gx_agg_s3(3);
EXECUTE gx_agg_s3(4);
RESET gpuext.enabled;
DEALLOCATE ALL;

-- GpuAgg as a correlated subquery: rescanned once per outer row, with
-- the outer value in its scan qual
SELECT * FROM gx_agg_explain($$SELECT x.g, (SELECT sum(i4) FROM gx_agg a WHERE a.g = x.g) FROM gx_aggx x WHERE x.id <= 8$$, true);
SELECT gx_agg_diff($$SELECT x.id, (SELECT sum(i4) FROM gx_agg a WHERE a.g = x.g) AS s FROM gx_aggx x WHERE x.id <= 20$$);
SELECT gx_agg_diff($$SELECT x.id, (SELECT count(*) FROM gx_agg a WHERE a.i2 < x.id - 10) AS c FROM gx_aggx x WHERE x.id <= 20$$);
SELECT gx_agg_diff($$SELECT x.id, (SELECT max(a.d) FROM gx_agg a WHERE a.k = x.id AND a.b) AS m FROM gx_aggx x WHERE x.id <= 40$$);
-- an inner aggregation with no rows for some outer rows: NULL sums, count 0
SELECT gx_agg_diff($$SELECT x.id, (SELECT sum(i4) FROM gx_agg a WHERE a.id = x.id * 1000) AS s, (SELECT count(*) FROM gx_agg a WHERE a.id = x.id * 1000) AS c FROM gx_aggx x WHERE x.id <= 30$$);
-- correlated with GROUP BY in the subquery (EXISTS, IN, scalar)
SELECT gx_agg_diff($$SELECT x.id FROM gx_aggx x WHERE x.id <= 50 AND x.id IN (SELECT count(*) / 10 FROM gx_agg a WHERE a.g = x.g GROUP BY a.k)$$);
SELECT gx_agg_diff($$SELECT x.id, (SELECT max(c) FROM (SELECT k, count(*) AS c FROM gx_agg a WHERE a.i2 > x.id * 10 GROUP BY k) s) AS m FROM gx_aggx x WHERE x.id <= 12$$);
-- rescans where the device gives up for some outer values and not others:
-- x.lim at n's scales (up to 3) is beyond the device unless it is 0
SELECT gx_agg_diff($$SELECT x.id, (SELECT sum(n) FROM gx_aggn a WHERE a.g = x.g AND a.n > x.lim) AS s FROM (SELECT id, g, (id - 4) * 1e37 AS lim FROM gx_aggx OFFSET 0) x WHERE x.id <= 8$$);
SELECT * FROM gx_agg_explain($$SELECT x.id, (SELECT sum(n) FROM gx_aggn a WHERE a.g = x.g AND a.n > x.lim) AS s FROM (SELECT id, g, (id - 4) * 1e37 AS lim FROM gx_aggx OFFSET 0) x WHERE x.id = 4$$, true);
SELECT * FROM gx_agg_explain($$SELECT x.id, (SELECT sum(n) FROM gx_aggn a WHERE a.g = x.g AND a.n > x.lim) AS s FROM (SELECT id, g, (id - 4) * 1e37 AS lim FROM gx_aggx OFFSET 0) x WHERE x.id = 5$$, true);
-- one NOTICE for each rescan that ran PostgreSQL's plan (all but id 4)
SET gpuext.cpu_fallback = notice;
SET gpuext.force_offload = on;
SELECT x.id, (SELECT sum(n) FROM gx_aggn a WHERE a.g = x.g AND a.n > x.lim) AS s
  FROM (SELECT id, g, (id - 4) * 1e37 AS lim FROM gx_aggx OFFSET 0) x WHERE x.id <= 6 ORDER BY x.id;
RESET gpuext.force_offload;
RESET gpuext.cpu_fallback;
SET gpuext.enabled = off;
SELECT x.id, (SELECT sum(n) FROM gx_aggn a WHERE a.g = x.g AND a.n > x.lim) AS s
  FROM (SELECT id, g, (id - 4) * 1e37 AS lim FROM gx_aggx OFFSET 0) x WHERE x.id <= 6 ORDER BY x.id;
RESET gpuext.enabled;
SET gpuext.force_offload = on;
SELECT x.id, (SELECT sum(i4) FROM gx_agg a WHERE a.g = x.g) AS s,
       (SELECT count(*) FROM gx_agg a WHERE a.i2 < x.id - 10) AS c
  FROM gx_aggx x WHERE x.id <= 6 ORDER BY x.id;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT x.id, (SELECT sum(i4) FROM gx_agg a WHERE a.g = x.g) AS s,
       (SELECT count(*) FROM gx_agg a WHERE a.i2 < x.id - 10) AS c
  FROM gx_aggx x WHERE x.id <= 6 ORDER BY x.id;
RESET gpuext.enabled;

-- LATERAL: the same aggregation for each outer row, on a nested loop
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_memoize = off;
SELECT gx_agg_diff($$SELECT x.id, s.* FROM gx_aggx x, LATERAL (SELECT a.g, count(*) AS c, sum(a.i4) AS s FROM gx_agg a WHERE a.k = x.id GROUP BY a.g) s WHERE x.id <= 5$$);
SELECT gx_agg_diff($$SELECT x.id, s.c FROM gx_aggx x LEFT JOIN LATERAL (SELECT count(*) AS c FROM gx_agg a WHERE a.i2 = x.id GROUP BY a.b) s ON true WHERE x.id <= 10$$);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_memoize;

-- cursors: fetch part of the groups, then the rest
SET gpuext.force_offload = on;
BEGIN;
DECLARE gx_agg_c CURSOR FOR SELECT k, count(*), sum(i4) FROM gx_agg GROUP BY k ORDER BY k;
FETCH 3 FROM gx_agg_c;
FETCH 2 FROM gx_agg_c;
MOVE 30 IN gx_agg_c;
FETCH ALL FROM gx_agg_c;
CLOSE gx_agg_c;
-- without ORDER BY: the groups in the node's order; their count
DECLARE gx_agg_c2 CURSOR FOR SELECT id, count(*) FROM gx_agg_many GROUP BY id;
MOVE 49990 IN gx_agg_c2;
FETCH ALL FROM gx_agg_c2 \g /dev/null
CLOSE gx_agg_c2;
COMMIT;
RESET gpuext.force_offload;
