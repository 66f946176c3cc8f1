-- Repeatability of gpuext_calibrate(): five calibrations in a row, each
-- parameter's least and greatest value, their ratio and the five values
-- (docs/architecture.md, "Calibration", states the tolerance).  Run on a
-- throwaway cluster:
--   bash test/bench/sql-on-cluster.sh calrep 57000 test/bench/calibrate-repeat.sql
CREATE EXTENSION IF NOT EXISTS gpuext;
CREATE TEMP TABLE reps (run int, parameter text, value float8);
INSERT INTO reps SELECT 1, parameter, measured FROM gpuext_calibrate();
INSERT INTO reps SELECT 2, parameter, measured FROM gpuext_calibrate();
INSERT INTO reps SELECT 3, parameter, measured FROM gpuext_calibrate();
INSERT INTO reps SELECT 4, parameter, measured FROM gpuext_calibrate();
INSERT INTO reps SELECT 5, parameter, measured FROM gpuext_calibrate();
SELECT parameter, round(min(value)::numeric, 4) AS least, round(max(value)::numeric, 4) AS greatest,
       round((max(value) / nullif(min(value), 0))::numeric, 2) AS ratio,
       string_agg(round(value::numeric, 4)::text, ' ' ORDER BY run) AS "values"
  FROM reps GROUP BY 1 ORDER BY 1;
