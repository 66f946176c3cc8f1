--
-- gpuext_debug_inject_fault(kind, count): the next 'count' device launches
-- ('kernel') or device allocations ('alloc') fail, on the GPU (the
-- service) and on the CPU engine alike, and the failure takes the way a
-- real one takes: with gpuext.cpu_fallback = off a clean ERROR (58000 for
-- a kernel error, 53200 for out of device memory), with on the batch
-- reruns on the CPU engine (a GpuAgg runs PostgreSQL's plan) with the
-- right result, and gpuext_status() counts the fallback.  'none' clears
-- both; bad arguments and plain roles get clean errors.  Only booleans
-- and query results are printed: the same output with and without a GPU.
--
\set VERBOSITY terse
\set SHOW_CONTEXT never
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
RESET client_min_messages;
SET gpuext.regression_test_mode = on;
SET gpuext.force_offload = on;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE fault_t AS SELECT g AS a, g % 10 AS k FROM generate_series(1, 20000) g;
VACUUM ANALYZE fault_t;
-- a GpuScan and a GpuAgg
EXPLAIN (COSTS OFF) SELECT a FROM fault_t WHERE a % 1000 = 7;
EXPLAIN (COSTS OFF) SELECT k, count(*) FROM fault_t WHERE a > 5 GROUP BY k;

-- bad arguments
SELECT gpuext_debug_inject_fault('disk', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT gpuext_debug_inject_fault('kernel', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT gpuext_debug_inject_fault(NULL, 1) IS NULL AS strict;

-- a kernel error, no fallback: ERROR 58000, once
SET gpuext.cpu_fallback = off;
SELECT gpuext_debug_inject_fault('kernel', 1);
\set VERBOSITY default
SELECT a FROM fault_t WHERE a % 1000 = 7 ORDER BY a;
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT a FROM fault_t WHERE a % 1000 = 7 ORDER BY a;

-- an allocation failure, no fallback: ERROR 53200, once
SELECT gpuext_debug_inject_fault('alloc', 1);
SELECT a FROM fault_t WHERE a % 1000 = 7 ORDER BY a;
\echo :LAST_ERROR_SQLSTATE
SELECT a FROM fault_t WHERE a % 1000 = 7 ORDER BY a;

-- with the fallback: the right rows, and one fallback counted
SET gpuext.cpu_fallback = on;
SELECT fallbacks AS fallbacks_before FROM gpuext_status() \gset
SELECT gpuext_debug_inject_fault('kernel', 1);
SELECT a FROM fault_t WHERE a % 1000 = 7 ORDER BY a;
SELECT fallbacks - :fallbacks_before AS fallbacks_counted FROM gpuext_status();
SELECT fallbacks AS fallbacks_before FROM gpuext_status() \gset
SELECT gpuext_debug_inject_fault('alloc', 1);
SELECT a FROM fault_t WHERE a % 1000 = 7 ORDER BY a;
SELECT fallbacks - :fallbacks_before AS fallbacks_counted FROM gpuext_status();

-- a GpuAgg: PostgreSQL's plan gives the groups
SELECT fallbacks AS fallbacks_before FROM gpuext_status() \gset
SELECT gpuext_debug_inject_fault('kernel', 1);
SELECT k, count(*) FROM fault_t WHERE a > 5 GROUP BY k ORDER BY k;
SELECT fallbacks - :fallbacks_before AS fallbacks_counted FROM gpuext_status();
SET gpuext.cpu_fallback = off;
SELECT gpuext_debug_inject_fault('kernel', 1);
SELECT k, count(*) FROM fault_t WHERE a > 5 GROUP BY k ORDER BY k;
\echo :LAST_ERROR_SQLSTATE
SET gpuext.cpu_fallback = on;

-- 'none' clears what is left
SELECT gpuext_debug_inject_fault('kernel', 1000);
SELECT gpuext_debug_inject_fault('alloc', 1000);
SELECT gpuext_debug_inject_fault('none');
SET gpuext.cpu_fallback = off;
SELECT fallbacks AS fallbacks_before FROM gpuext_status() \gset
SELECT count(*) FROM (SELECT a FROM fault_t WHERE a % 1000 = 7) s;
SELECT k, count(*) FROM fault_t WHERE a > 5 GROUP BY k ORDER BY k;
SELECT fallbacks - :fallbacks_before AS no_fallback FROM gpuext_status();
RESET gpuext.cpu_fallback;

-- superusers only
CREATE ROLE regress_gpuext_fault_user;
SET ROLE regress_gpuext_fault_user;
SELECT gpuext_debug_inject_fault('kernel', 1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT EXECUTE ON FUNCTION gpuext_debug_inject_fault(text, int) TO regress_gpuext_fault_user;
SET ROLE regress_gpuext_fault_user;
SELECT gpuext_debug_inject_fault('kernel', 1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP OWNED BY regress_gpuext_fault_user;
DROP ROLE regress_gpuext_fault_user;

DROP TABLE fault_t;
