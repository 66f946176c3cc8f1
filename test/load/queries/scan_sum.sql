-- a filtered count and sum over the fact table (GpuScan, or GpuAgg without keys)
SELECT count(*), sum(qty) FROM load_fact WHERE qty BETWEEN 10 AND 20 AND f < 0.5;
