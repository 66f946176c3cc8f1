-- GROUP BY of 1024 groups (GpuAgg); avg(f) is a float: compared to 1e-9
SELECT k, count(*), sum(qty), avg(f) FROM load_fact WHERE disc > 0.02 GROUP BY k ORDER BY k;
