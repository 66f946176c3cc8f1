--
-- Parallel GpuJoin: the leader runs the inner plans and builds the inner
-- tables once, before its workers start, in a DSM segment that every
-- participant reads (and on a GPU uploads them once: the workers use its
-- device copy).  Compared with stock PostgreSQL (gj_diff, gpujoin.sql's
-- tables and functions) under forced parallel plans.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET gpuext.max_batch_pages = 4;

-- the lines of EXPLAIN ANALYZE (offloaded, as gj_diff runs it) that do not
-- depend on how the outer pages fell to the participants
CREATE FUNCTION gjp_explain(q text) RETURNS SETOF text
LANGUAGE plpgsql
SET gpuext.force_offload = on
SET gpuext.enabled = on
SET gpuext.enable_gpuagg = off
AS $fn$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ '(Gather|GpuJoin|Workers|Inner Build|Loop)' OR line ~ '^ *Depth [0-9]:' THEN
      RETURN NEXT regexp_replace(line, 'actual rows=[0-9]+ ', 'actual rows=N ');
    END IF;
  END LOOP;
END;
$fn$;

-- the plans are parallel GpuJoins
SELECT * FROM gj_plan('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT * FROM gj_plan('SELECT f.id, d1.name, d2.c, d3.label FROM gj_fact f
  JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k LEFT JOIN gj_dim3 d3 ON f.s = d3.s');

-- the same rows as stock: inner, left, semi, anti joins, several depths,
-- duplicate keys, text keys (stored beside the rows), keys the device
-- cannot hold (numeric NaN, beyond 128 bits: compared on the host with the
-- stored key values), values it cannot decode (rechecked on the host)
SELECT gj_diff('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT gj_diff('SELECT f.*, d.* FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id % 3 = 1');
SELECT gj_diff('SELECT f.id, d1.name, d2.c, d3.label FROM gj_fact f
  JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k LEFT JOIN gj_dim3 d3 ON f.s = d3.s');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f LEFT JOIN gj_dimt d ON f.c = d.c');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimt d ON f.bp = d.bp');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimn d ON f.n = d.n');
SELECT gj_diff('SELECT f.id FROM gj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_dimn d WHERE d.n = f.n)');
SELECT gj_diff('SELECT f.id FROM gj_fact f WHERE f.c IN (SELECT c FROM gj_dimt)');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimf d ON f.x = d.f');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimd d ON f.dt = d.dt AND f.flag = d.flag');
SELECT gj_diff('SELECT f.id, d.k FROM gj_fact f JOIN gj_bigdim d ON f.id = d.k');
-- an empty inner side
SELECT gj_diff('SELECT f.id, e.v FROM gj_fact f LEFT JOIN gj_empty e ON f.a = e.k');

-- the inner tables were built once, by the leader, and both workers took them
SELECT * FROM gjp_explain('SELECT f.id, d1.name, d2.c FROM gj_fact f
  JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k');

-- a leader that does not take part: it still builds the tables, and the
-- workers do all the probing with them (its own counts are 0)
SET parallel_leader_participation = off;
SELECT gj_diff('SELECT f.id, d1.name, d2.c, d3.label FROM gj_fact f
  JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k LEFT JOIN gj_dim3 d3 ON f.s = d3.s');
SELECT gj_diff('SELECT f.*, d.* FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id % 3 = 1');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f LEFT JOIN gj_dimt d ON f.c = d.c');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimt d ON f.bp = d.bp');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimn d ON f.n = d.n');
SELECT gj_diff('SELECT f.id FROM gj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_dimn d WHERE d.n = f.n)');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimf d ON f.x = d.f');
SELECT gj_diff('SELECT f.id, d.k FROM gj_fact f JOIN gj_bigdim d ON f.id = d.k');
SET gpuext.force_offload = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT f.id, d1.name, d2.c FROM gj_fact f JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k;
-- inner tables over gpuext.gpu_memory_limit stay in host memory: the
-- leader decides for everyone (on a GPU the workers then run their batches
-- on the CPU engine too, with the leader's tables)
ALTER TABLE gj_bigdim SET (parallel_workers = 0);
SET gpuext.gpu_memory_limit = '1MB';
SELECT gj_diff('SELECT f.id, b.v FROM gj_fact f LEFT JOIN gj_bigdim b ON f.id = b.k');
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT f.id, b.v FROM gj_fact f LEFT JOIN gj_bigdim b ON f.id = b.k;
RESET gpuext.gpu_memory_limit;
ALTER TABLE gj_bigdim RESET (parallel_workers);
RESET gpuext.force_offload;
RESET parallel_leader_participation;

-- no DSM segment for the tables (/dev/shm full, injected here): each
-- participant builds its own, as a serial GpuJoin does; the same rows
SET gpuext.debug_inject_fault = no_dsm;
SELECT gj_diff('SELECT f.id, d1.name, d2.c, d3.label FROM gj_fact f
  JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k LEFT JOIN gj_dim3 d3 ON f.s = d3.s');
SELECT gj_diff('SELECT f.id FROM gj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_dimn d WHERE d.n = f.n)');
SELECT * FROM gjp_explain('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k');
SET parallel_leader_participation = off;
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f LEFT JOIN gj_dimt d ON f.c = d.c');
RESET parallel_leader_participation;
RESET gpuext.debug_inject_fault;

-- no worker starts (max_parallel_workers = 0): the leader builds the
-- tables and runs the whole scan; with parallel_leader_participation off
-- too (the leader then runs it anyway)
SET max_parallel_workers = 0;
SELECT gj_diff('SELECT f.id, d1.name, d2.c FROM gj_fact f
  JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k');
SELECT * FROM gjp_explain('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k');
SET parallel_leader_participation = off;
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f LEFT JOIN gj_dimt d ON f.c = d.c');
RESET parallel_leader_participation;
RESET max_parallel_workers;

-- rescans: a Gather on the inner side of a nested loop (no Material in
-- between) runs again for every outer row; the inner tables, whose plans
-- depend on no parameter, are built once for all of them
CREATE TABLE gjp_outer (v int) WITH (parallel_workers = 0);
INSERT INTO gjp_outer VALUES (1), (2), (3);
ANALYZE gjp_outer;
SET enable_material = off;
SET enable_hashjoin = off;
-- gj_fact is the scanned (outer) side: with force_offload every GpuJoin
-- path costs nothing, and a parallel one scanning gj_dim1 (gj_fact the
-- inner table) would tie with it
ALTER TABLE gj_dim1 SET (parallel_workers = 0);
SET enable_mergejoin = off;
SELECT gj_diff('SELECT o.v, j.id FROM gjp_outer o,
  (SELECT f.id, f.s FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k OFFSET 0) j WHERE j.s <= o.v');
SELECT * FROM gjp_explain('SELECT o.v, j.id FROM gjp_outer o,
  (SELECT f.id, f.s FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k OFFSET 0) j WHERE j.s <= o.v');
-- a parameter of the inner plans that changes with every scan (an
-- InitPlan of a correlated subquery): the tables are built again each time
SELECT gj_diff('SELECT o.v, (SELECT count(*) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k
   WHERE d.k < (SELECT o.v * 10)) FROM gjp_outer o');
SELECT * FROM gjp_explain('SELECT o.v, (SELECT count(*) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k
   WHERE d.k < (SELECT o.v * 10)) FROM gjp_outer o');
ALTER TABLE gj_dim1 RESET (parallel_workers);
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- an error in an inner plan, raised while the leader builds the tables
-- (before its workers start): the query fails as stock's does, and the
-- next one runs
SELECT gj_diff('SELECT f.id, d.x FROM gj_fact f
  JOIN (SELECT k, 1 / (k - 5) AS x FROM gj_dim1 OFFSET 0) d ON f.a = d.k');
SELECT gj_diff('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k');

DROP TABLE gjp_outer;
DROP FUNCTION gjp_explain(text);
RESET gpuext.max_batch_pages;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
