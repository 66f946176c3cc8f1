--
-- GpuScan: device quals that read the value of a subquery or of an outer
-- row (PARAM_EXEC): InitPlans (uncorrelated subqueries), SubPlans
-- (correlated subqueries) and LATERAL references.  The value is only
-- known once the subquery has run or the outer row has been read, so the
-- device program must be built with the value, not before.
--
-- Parameters of text, numeric and array types are in
-- test/t/020_gpuscan_param_exec.pl, on a cluster of its own: a device
-- program built before the value exists would dereference a null pointer
-- and crash the server the other suites run on.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
-- GpuScan alone (GpuAgg, aggregation fused with the scan, has its own tests)
SET gpuext.enable_gpuagg = off;

SELECT * FROM gx_plan($$SELECT id FROM gx_ints WHERE i4 > (SELECT 50000)$$);
SELECT * FROM gx_plan($$SELECT count(*) FROM gx_ints WHERE i2 = (SELECT max(i2) FROM gx_ints WHERE i4 < 0)$$);

-- InitPlans of integer, float and date types
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > (SELECT 50000)$$);
SELECT gx_diff($$SELECT count(*) FROM gx_ints WHERE i4 > (SELECT 50000)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 = (SELECT max(i2) FROM gx_ints WHERE i4 < 0)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8 < (SELECT min(i8) FROM gx_ints) + 100000000$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f8 > (SELECT avg(f8) FROM gx_floats) * 2$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d < (SELECT '1980-01-01'::date)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (SELECT true) AND i2 < 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > (SELECT 50000) AND i2 < (SELECT -500)$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i4 + (SELECT 1) > 0$$);
SET gpuext.force_offload = on;
SELECT count(*) FROM gx_ints WHERE i4 > (SELECT 50000);
SELECT id, i2 FROM gx_ints WHERE i2 = (SELECT max(i2) FROM gx_ints WHERE i4 < 0) ORDER BY id LIMIT 3;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT count(*) FROM gx_ints WHERE i4 > (SELECT 50000);
SELECT id, i2 FROM gx_ints WHERE i2 = (SELECT max(i2) FROM gx_ints WHERE i4 < 0) ORDER BY id LIMIT 3;
RESET gpuext.enabled;

-- an InitPlan used on the inner side of a nested loop
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_memoize = off;
SELECT gx_diff($$SELECT o.id, s.c FROM gx_intx o, LATERAL (SELECT count(*) c FROM gx_ints i WHERE i.i2 < o.i2 AND i.i4 > (SELECT 0)) s WHERE o.i4 = 0 AND o.i8 = 0$$);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET enable_memoize;
