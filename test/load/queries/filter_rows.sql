-- a selective filter returning rows (GpuScan): about 1 row in 5000
\set k random(0, 7)
SELECT id, qty, price, shipdate FROM load_fact WHERE k = :k AND qty > 40 ORDER BY id;
