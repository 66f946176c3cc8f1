-- gpuext_calibrate_workload(): the parameters that decide between
-- PostgreSQL's plan and gpuext's, refined against the user's queries by
-- simulated annealing (training set), judged on queries the search did not
-- see (test set).  Timings differ from run to run, so this checks the
-- shape of the report, its invariants and the rules, not the values.
SET max_parallel_workers_per_gather = 0;
CREATE TABLE cw_small AS SELECT g AS id, g % 10 AS k, g * 1.5 AS v FROM generate_series(1, 1000) g;
CREATE TABLE cw_big AS SELECT g AS id, g % 100 AS k, (g % 997)::float8 AS v FROM generate_series(1, 100000) g;
VACUUM ANALYZE cw_small, cw_big;
CREATE TEMP TABLE cw_stored_before AS SELECT * FROM gpuext_calibration_values;

CREATE TEMP TABLE cw_report AS
SELECT * FROM gpuext_calibrate_workload(
  ARRAY['SELECT count(*) FROM cw_small WHERE k = 3',
        'SELECT k, count(*), sum(id) FROM cw_big GROUP BY k',
        'SELECT count(*) FROM cw_big WHERE v < 10',
        'SELECT id FROM cw_big WHERE k = 5 AND id < 3000'],
  ARRAY['SELECT k, avg(v) FROM cw_big WHERE id % 2 = 0 GROUP BY k',
        'SELECT count(*) FROM cw_small WHERE v > 100'],
  iterations => 100, apply => false);
-- every tuned parameter, then the figures of both sets
SELECT item, unit, after >= 0 AS non_negative FROM cw_report ORDER BY item;
-- queries with a gpuext plan: all of them here; the same before and after
SELECT item, before, after FROM cw_report WHERE item LIKE '%queries with a choice';
-- the faster plans take what they take, whatever the parameters
SELECT item, before = after AS same FROM cw_report WHERE item LIKE '%time of the faster plans';
-- the picked plans are never faster than the faster plans
SELECT a.item, a.before >= b.before - 1e-9 AND a.after >= b.after - 1e-9 AS not_below_best
  FROM cw_report a
  JOIN (SELECT split_part(item, ':', 1) AS set, before, after FROM cw_report
         WHERE item LIKE '%time of the faster plans') b ON a.item = b.set || ': time of the picked plans'
 ORDER BY a.item;
-- apply => false stores nothing
SELECT after AS stored FROM cw_report WHERE item = 'stored';
SELECT count(*) = (SELECT count(*) FROM cw_stored_before) AS unchanged FROM gpuext_calibration_values;

-- with apply (the default), the values are stored only when the test set
-- is no slower; when they are, they are what the report says (stored with
-- 6 significant digits)
CREATE TEMP TABLE cw_report2 AS
SELECT * FROM gpuext_calibrate_workload(
  ARRAY['SELECT k, count(*), sum(id) FROM cw_big GROUP BY k', 'SELECT count(*) FROM cw_small'],
  ARRAY['SELECT count(*) FROM cw_big WHERE v > 500'], iterations => 50);
SELECT CASE WHEN (SELECT after FROM cw_report2 WHERE item = 'stored') = 1
            THEN (SELECT bool_and(abs(c.value - r.after) <= 1e-5 * abs(r.after))
                    FROM cw_report2 r JOIN gpuext_calibration_values c ON c.parameter = r.item)
            ELSE (SELECT after <= before FROM cw_report2 WHERE item = 'test: time of the picked plans') IS NOT NULL
       END AS consistent;

-- bad input: clean errors
\set VERBOSITY sqlstate
SELECT * FROM gpuext_calibrate_workload(ARRAY['DELETE FROM cw_small'], ARRAY['SELECT 1']);
SELECT * FROM gpuext_calibrate_workload(ARRAY['SELECT 1; DROP TABLE cw_small'], ARRAY['SELECT 1']);
SELECT * FROM gpuext_calibrate_workload(ARRAY['WITH d AS (DELETE FROM cw_small RETURNING *) SELECT count(*) FROM d'], ARRAY['SELECT 1']);
SELECT * FROM gpuext_calibrate_workload(ARRAY[]::text[], ARRAY['SELECT 1']);
SELECT * FROM gpuext_calibrate_workload(ARRAY['SELECT 1'], ARRAY[]::text[]);
SELECT * FROM gpuext_calibrate_workload(ARRAY['SELECT 1', NULL], ARRAY['SELECT 1']);
SELECT * FROM gpuext_calibrate_workload(ARRAY['SELECT 1'], ARRAY['SELECT 1'], -1);
SELECT * FROM gpuext_calibrate_workload(ARRAY['SELECT * FROM no_such_table'], ARRAY['SELECT 1']);
SELECT count(*) FROM gpuext_calibrate_workload(NULL, ARRAY['SELECT 1']);
-- superuser only
CREATE ROLE cw_user;
SET ROLE cw_user;
SELECT * FROM gpuext_calibrate_workload(ARRAY['SELECT 1'], ARRAY['SELECT 1']);
RESET ROLE;
DROP ROLE cw_user;
\set VERBOSITY default
SELECT count(*) AS rows_left FROM cw_small;

DROP TABLE cw_small, cw_big;
RESET ALL;
-- leave no calibration behind (costmodel's included): the tests after this
-- one plan with the default parameters, whatever this machine measured
DELETE FROM gpuext_calibration_values;
