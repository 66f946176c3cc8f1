-- The cost model steers the planner: small tables stay on the CPU, large
-- ones go to the GPU, and raising the GPU's setup cost sends them back.
-- gpuext.device = gpu makes the planner cost for the GPU even on a machine
-- without one (execution then falls back to the CPU engine), so these plan
-- checks run everywhere.  Also: gpuext_calibrate() and its privileges.
SET gpuext.regression_test_mode = on;
SET gpuext.device = gpu;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE cm_small AS SELECT g AS id, g % 10 AS a FROM generate_series(1, 200) g;
CREATE TABLE cm_big AS SELECT g AS id, g % 1000 AS a, g / 3.0 AS b FROM generate_series(1, 300000) g;
VACUUM ANALYZE cm_small;
VACUUM ANALYZE cm_big;

-- a small table never goes to the GPU: the setup cost dominates
EXPLAIN (COSTS OFF) SELECT * FROM cm_small WHERE a < 3;
EXPLAIN (COSTS OFF) SELECT a, count(*) FROM cm_small GROUP BY a;
-- a large one does
EXPLAIN (COSTS OFF) SELECT count(*) FROM cm_big WHERE a < 3;
EXPLAIN (COSTS OFF) SELECT a % 10 AS k, count(*), sum(b) FROM cm_big GROUP BY 1;
-- a GPU that is expensive to start loses
SET gpuext.gpu_setup_us = 1e8;
EXPLAIN (COSTS OFF) SELECT count(*) FROM cm_big WHERE a < 3;
EXPLAIN (COSTS OFF) SELECT a % 10 AS k, count(*), sum(b) FROM cm_big GROUP BY 1;
RESET gpuext.gpu_setup_us;
-- so does a slow link, when the host work is cheap
SET gpuext.link_read_gbps = 0.01;
EXPLAIN (COSTS OFF) SELECT count(*) FROM cm_big WHERE a < 3;
RESET gpuext.link_read_gbps;
-- stock index and bitmap scans are costed again with their page costs
-- times gpuext.index_cost_scale (what gpuext_calibrate() measures for
-- pages in memory): at PostgreSQL's page costs a GPU scan of the whole
-- table looks cheaper than a selective bitmap scan, at calibrated ones not
CREATE INDEX cm_big_a ON cm_big (a);
SET gpuext.index_cost_scale = 1;
EXPLAIN (COSTS OFF) SELECT id, b FROM cm_big WHERE a IN (1, 2, 3, 4, 5, 6, 7, 8);
SET gpuext.index_cost_scale = 0.05;
EXPLAIN (COSTS OFF) SELECT id, b FROM cm_big WHERE a IN (1, 2, 3, 4, 5, 6, 7, 8);
-- the re-costed estimate is PostgreSQL's own with both page costs times
-- the factor; and gpuext.enabled = off leaves PostgreSQL's costs alone
-- (cm_cost: the plan's total cost, or with child its first child's;
-- cm_explain: the plan)
CREATE FUNCTION cm_explain(q text) RETURNS json AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN j->0->'Plan';
END $$ LANGUAGE plpgsql;
CREATE FUNCTION cm_cost(q text, child boolean DEFAULT false) RETURNS float8 AS $$
DECLARE j json := cm_explain(q);
BEGIN
  IF child THEN
    j := j->'Plans'->0;
  END IF;
  RETURN (j->>'Total Cost')::float8;
END $$ LANGUAGE plpgsql;
SET gpuext.enable_gpuscan = off;
CREATE TEMP TABLE cm_costs AS
  SELECT cm_cost('SELECT id, b FROM cm_big WHERE a IN (1, 2, 3, 4, 5, 6, 7, 8)') AS recosted;
SET gpuext.enabled = off;
ALTER TABLE cm_costs ADD stock float8, ADD scaled_by_hand float8;
UPDATE cm_costs SET stock = cm_cost('SELECT id, b FROM cm_big WHERE a IN (1, 2, 3, 4, 5, 6, 7, 8)');
SET seq_page_cost = 0.05;
SET random_page_cost = 0.2;
UPDATE cm_costs SET scaled_by_hand = cm_cost('SELECT id, b FROM cm_big WHERE a IN (1, 2, 3, 4, 5, 6, 7, 8)');
RESET seq_page_cost;
RESET random_page_cost;
SELECT recosted < stock / 5 AS much_cheaper, abs(recosted - scaled_by_hand) < 1e-6 AS same_as_postgres,
       abs(cm_cost('SELECT id, b FROM cm_big WHERE a IN (1, 2, 3, 4, 5, 6, 7, 8)') - stock) < 1e-6 AS off_unchanged
  FROM cm_costs;
RESET gpuext.enabled;
RESET gpuext.enable_gpuscan;
RESET gpuext.index_cost_scale;
-- partial (parallel) sequential scans are costed again with the share of
-- their page cost that gpuext.parallel_page_share says the workers divide
-- (what gpuext_calibrate() measures): share 1 and two workers (with the
-- leader's part, PostgreSQL's divisor is 2.4) take pages * (1 - 1 / 2.4)
-- off a partial scan; share 0, the default, changes nothing
SET gpuext.enable_gpuscan = off;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT id, b FROM cm_big WHERE a = 7;
CREATE TEMP TABLE cm_pcosts AS SELECT cm_cost('SELECT id, b FROM cm_big WHERE a = 7', true) AS share0;
SET gpuext.parallel_page_share = 1;
ALTER TABLE cm_pcosts ADD share1 float8, ADD stock float8;
UPDATE cm_pcosts SET share1 = cm_cost('SELECT id, b FROM cm_big WHERE a = 7', true);
SET gpuext.enabled = off;
UPDATE cm_pcosts SET stock = cm_cost('SELECT id, b FROM cm_big WHERE a = 7', true);
RESET gpuext.enabled;
SELECT abs((share0 - share1) - relpages * (1 - 1 / 2.4)) < 0.02 AS pages_divided,
       abs(share0 - stock) < 1e-6 AS default_unchanged, share1 < share0 AS cheaper
  FROM cm_pcosts, pg_class WHERE relname = 'cm_big';
RESET gpuext.parallel_page_share;
RESET gpuext.enable_gpuscan;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET enable_indexscan;
RESET enable_bitmapscan;
SET max_parallel_workers_per_gather = 0;
-- rows sent to the client (output.c): gpuext.client_row_us (what
-- gpuext_calibrate() measures; 0, the default, charges nothing) is
-- charged to every serial plan of a single-table SELECT for each row it
-- returns; a Gather's leader sends the rows while its workers scan, so
-- its partial plan is charged the slower of the two instead of their sum.
-- A GPU scan that returns a fifth of the table then loses to the stock
-- parallel plan.
DROP INDEX cm_big_a;
SET max_parallel_workers_per_gather = 2;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT id, b FROM cm_big WHERE a < 200;
SET gpuext.client_row_us = 2;
EXPLAIN (COSTS OFF) SELECT id, b FROM cm_big WHERE a < 200;
-- the serial charge is rows * client_row_us / cost_unit_us; nothing for
-- rows that go to an aggregate; and gpuext.enabled = off charges nothing
SET gpuext.enable_gpuscan = off;
SET max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE cm_ocosts AS
  SELECT cm_cost('SELECT id, b FROM cm_big WHERE a < 200') AS charged,
         cm_cost('SELECT count(*) FROM cm_big WHERE a < 200') AS agg_charged;
SET gpuext.client_row_us = 0;
ALTER TABLE cm_ocosts ADD plain float8, ADD agg_plain float8, ADD stock float8;
UPDATE cm_ocosts SET plain = cm_cost('SELECT id, b FROM cm_big WHERE a < 200'),
                     agg_plain = cm_cost('SELECT count(*) FROM cm_big WHERE a < 200');
SET gpuext.client_row_us = 2;
SET gpuext.enabled = off;
UPDATE cm_ocosts SET stock = cm_cost('SELECT id, b FROM cm_big WHERE a < 200');
RESET gpuext.enabled;
SELECT abs((charged - plain) - rows * 2 / current_setting('gpuext.cost_unit_us')::float8) < 0.01 AS rows_charged,
       abs(agg_charged - agg_plain) < 1e-6 AS aggregate_unchanged,
       abs(stock - plain) < 1e-6 AS off_unchanged
  FROM cm_ocosts, (SELECT (cm_explain('SELECT id, b FROM cm_big WHERE a < 200')->>'Plan Rows')::float8 AS rows) r;
RESET gpuext.client_row_us;
RESET gpuext.enable_gpuscan;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;
DROP FUNCTION cm_cost(text, boolean);
DROP FUNCTION cm_explain(text);
-- the plans still give PostgreSQL's answers (here on the CPU engine)
SELECT count(*) FROM cm_big WHERE a < 3;
SELECT a % 10 AS k, count(*), sum(b) FROM cm_big GROUP BY 1 ORDER BY 1;
SET gpuext.enabled = off;
SELECT count(*) FROM cm_big WHERE a < 3;
SELECT a % 10 AS k, count(*), sum(b) FROM cm_big GROUP BY 1 ORDER BY 1;
RESET gpuext.enabled;
RESET gpuext.device;

-- calibration: superuser only
CREATE ROLE cm_user;
SET ROLE cm_user;
\set VERBOSITY sqlstate
SELECT * FROM gpuext_calibrate();
\set VERBOSITY default
RESET ROLE;
DROP ROLE cm_user;
-- it measures storage and the CPU everywhere (and the GPU where there is
-- one), stores the values, and they are in force in this session
SELECT count(*) >= 7 AS measured_enough,
       bool_and(measured > 0 AND measured < 1e6)
         FILTER (WHERE parameter NOT IN ('parallel_page_share', 'host_row_page_us',
                                         'cpu_engine_setup_us', 'cpu_engine_agg_setup_us',
                                         'parallel_worker_us', 'parallel_start_us',
                                         'stock_group_us', 'stock_agg_row_us', 'stock_byref_us',
                                         'stock_join_row_us', 'stock_deform_us')) AS plausible,
       -- (these may be 0: about 0 on the CPU engine, or a CPU engine scan no
       -- slower than PostgreSQL's on a tiny table, or no worker free)
       bool_and(measured >= 0 AND measured < 1e6)
         FILTER (WHERE parameter IN ('host_row_page_us', 'cpu_engine_setup_us',
                                     'cpu_engine_agg_setup_us', 'parallel_worker_us',
                                     'parallel_start_us', 'stock_group_us',
                                     'stock_agg_row_us', 'stock_byref_us',
                                     'stock_join_row_us', 'stock_deform_us')) AS zero_or_more,
       bool_and(measured BETWEEN 0 AND 1) FILTER (WHERE parameter = 'parallel_page_share') AS share_plausible
  FROM gpuext_calibrate();
SELECT parameter FROM gpuext_calibration_values
 WHERE parameter IN ('cost_unit_us', 'host_page_us', 'index_cost_scale', 'storage_seq_read_us',
                     'storage_random_read_us', 'storage_seq_write_us',
                     'storage_random_write_us', 'cpu_engine_row_ns', 'host_group_us',
                     'host_tuple_us', 'parallel_page_share', 'client_row_us',
                     'host_row_page_us', 'cpu_engine_setup_us', 'cpu_engine_agg_setup_us')
 ORDER BY 1;
-- pages in memory cost less than PostgreSQL's defaults say, never more
SELECT value BETWEEN 0.01 AND 1 AS index_scale_plausible
  FROM gpuext_calibration_values WHERE parameter = 'index_cost_scale';
-- a stored value becomes this session's default at the next planning ...
SELECT abs(value_in_force - calibrated) < 1e-3 * calibrated AS in_force, source
  FROM gpuext_calibration WHERE parameter = 'cost_unit_us';
-- ... and a session's own SET still wins
SET gpuext.cost_unit_us = 123;
SELECT value_in_force, source FROM gpuext_calibration WHERE parameter = 'cost_unit_us';
RESET gpuext.cost_unit_us;
-- repeatable (docs/architecture.md, "Calibration"): calibrations agree
-- within the stated tolerance for the CPU figures that plans depend on:
-- within a factor of 1.5 here (on an idle machine they stay within 15 %;
-- this test shares its machine), or within 0.05 us for the small per-row
-- ones (0.25 us for host_row_page_us, per page: on the 2-core machine
-- three calibrations gave 0, 0.23 and 0.16; host_group_us on the GPU is
-- 0.01-0.03 us, its floor 0.01, and an H100 run of this test in session
-- 14 had two calibrations more than 1.5 times apart) and 50 us for the
-- fixed costs.  Two of three calibrations must
-- agree, as a burst of other work on a shared machine can slow every run
-- of one measurement.  (Storage figures, synced writes, vary too much on
-- a shared machine to be checked.)
CREATE TEMP TABLE cm_cal AS SELECT 1 AS run, parameter, value FROM gpuext_calibration_values;
SELECT count(*) > 0 AS again FROM gpuext_calibrate();
INSERT INTO cm_cal SELECT 2, parameter, value FROM gpuext_calibration_values;
SELECT count(*) > 0 AS again FROM gpuext_calibrate();
INSERT INTO cm_cal SELECT 3, parameter, value FROM gpuext_calibration_values;
SELECT f.parameter,
       bool_or(c.value BETWEEN f.value / 1.5 AND f.value * 1.5
               OR (f.parameter IN ('host_tuple_us', 'client_row_us', 'host_group_us')
                   AND abs(c.value - f.value) <= 0.05)
               OR (f.parameter = 'host_row_page_us' AND abs(c.value - f.value) <= 0.25)
               OR (f.parameter IN ('cpu_engine_setup_us', 'cpu_engine_agg_setup_us')
                   AND abs(c.value - f.value) <= 50)) AS within_tolerance
  FROM cm_cal f JOIN cm_cal c ON c.parameter = f.parameter AND c.run > f.run
 WHERE f.parameter IN ('cost_unit_us', 'host_page_us', 'host_visibility_us', 'cpu_engine_row_ns',
                       'index_cost_scale', 'host_group_us', 'client_row_us', 'host_tuple_us',
                       'host_row_page_us', 'cpu_engine_setup_us', 'cpu_engine_agg_setup_us')
 GROUP BY 1 ORDER BY 1;
-- the settings left as they were
SHOW gpuext.enabled;
SHOW max_parallel_workers_per_gather;
DROP TABLE cm_small, cm_big;
