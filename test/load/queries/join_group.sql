-- a hash join with the dimension table, grouped by its column (GpuAgg over GpuJoin)
SELECT d.region, count(*), sum(f.qty)
  FROM load_fact f JOIN load_dim d ON d.id = f.dim_id
 WHERE d.region < 10 GROUP BY d.region ORDER BY d.region;
