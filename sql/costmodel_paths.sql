-- Path generation and costing across gpuext's nodes, planned for the GPU
-- (gpuext.device = gpu: EXPLAIN only, so it runs without one) with fixed
-- cost parameters: those gpuext_calibrate() measured on the H100 of the
-- benchmarks (docs/benchmarks.md, session 7).
SET gpuext.regression_test_mode = on;
SET gpuext.device = gpu;
SET gpuext.storage_seq_read_us = 5.191;
SET gpuext.storage_random_read_us = 37.8;
SET gpuext.cost_unit_us = 3.302;
SET gpuext.index_cost_scale = 0.07605;
SET gpuext.host_page_us = 0.3573;
-- (not the visibility checks of pages not all-visible: how many pages
-- VACUUM can mark so right after loading depends on what else runs)
SET gpuext.host_visibility_us = 0;
SET gpuext.parallel_page_share = 0.8662;
-- (launching workers costs nothing beyond parallel_setup_cost: not
-- measured then; sections 4 and 5 set it)
SET gpuext.parallel_worker_us = 0;
SET gpuext.parallel_start_us = 0;
SET gpuext.client_row_us = 0.4321;
SET gpuext.cpu_engine_row_ns = 11.08;
SET gpuext.host_tuple_us = 0.07688;
SET gpuext.host_group_us = 0.0173;
SET gpuext.link_copy_gbps = 54.96;
SET gpuext.link_write_gbps = 55.1;
SET gpuext.link_read_gbps = 50.79;
SET gpuext.device_gather_ns = 0.02519;
SET gpuext.device_atomic_ns = 0.05826;
SET gpuext.gpu_batch_us = 19.62;
SET gpuext.gpu_setup_us = 46.8;
-- (GpuAgg's fixed cost was gpu_setup_us's then; measured apart since)
SET gpuext.gpuagg_setup_us = 46.8;
SET work_mem = '64MB';
SET max_parallel_workers = 8;

-- 1. GpuAgg fused over a GpuJoin whose own path loses to a stock join.
-- 2 000 probes joined by the primary key of 400 000 rows: the stock plan
-- (index lookups, or a merge join) beats a GpuJoin that forms every joined
-- row on the host, so add_path drops the GpuJoin path from the join
-- relation; the aggregation over the same join, fused, keeps only groups
-- on the device and is the cheapest plan, serial and with workers allowed.
CREATE TABLE cmp_keys (k int8 PRIMARY KEY, payload int4, pad text);
INSERT INTO cmp_keys SELECT g, g % 1000, repeat('x', 40) FROM generate_series(1, 400000) g;
CREATE TABLE cmp_probes (id int4 NOT NULL, pk int8 NOT NULL);
INSERT INTO cmp_probes SELECT g, 1 + (g * 7919) % 400000 FROM generate_series(1, 100000) g;
ALTER TABLE cmp_keys SET (parallel_workers = 8);
ALTER TABLE cmp_probes SET (parallel_workers = 8);
VACUUM (FREEZE, ANALYZE) cmp_keys;
VACUUM (FREEZE, ANALYZE) cmp_probes;
SET max_parallel_workers_per_gather = 0;
-- the joined rows themselves: a stock join
EXPLAIN (COSTS OFF)
SELECT p.id, k.payload FROM cmp_probes p JOIN cmp_keys k ON k.k = p.pk WHERE p.id < 2000;
-- aggregated: GpuAgg over the join, serial and with workers
EXPLAIN (COSTS OFF)
SELECT count(*), sum(k.payload) FROM cmp_probes p JOIN cmp_keys k ON k.k = p.pk WHERE p.id < 2000;
SET max_parallel_workers_per_gather = 8;
EXPLAIN (COSTS OFF)
SELECT count(*), sum(k.payload) FROM cmp_probes p JOIN cmp_keys k ON k.k = p.pk WHERE p.id < 2000;
-- over three relations (a GpuJoin of two extended by a third depth)
CREATE TABLE cmp_dim (d int4 PRIMARY KEY, name text);
INSERT INTO cmp_dim SELECT g, 'd' || g FROM generate_series(0, 999) g;
VACUUM (FREEZE, ANALYZE) cmp_dim;
EXPLAIN (COSTS OFF)
SELECT d.name, count(*) FROM cmp_probes p JOIN cmp_keys k ON k.k = p.pk
  JOIN cmp_dim d ON d.d = k.payload WHERE p.id < 2000 GROUP BY d.name;
-- and the same answers as PostgreSQL (here on the CPU engine)
SET max_parallel_workers_per_gather = 0;
SELECT count(*), sum(k.payload) FROM cmp_probes p JOIN cmp_keys k ON k.k = p.pk WHERE p.id < 2000;
SET gpuext.enabled = off;
SELECT count(*), sum(k.payload) FROM cmp_probes p JOIN cmp_keys k ON k.k = p.pk WHERE p.id < 2000;
RESET gpuext.enabled;

-- 2. A parallel gpuext scan plans at most PostgreSQL's workers for the
-- table, and no more than its batches less the leader's (each process
-- takes gpuext.max_batch_pages pages a batch; cmp_keys has about 4 100
-- pages, so with 300-page batches 14 batches: 13 workers, PostgreSQL's 8
-- still).  (Batches are also capped by a share of shared_buffers, here
-- 303 pages: the test cluster's 256MB.)  Of those it takes the fewest
-- that end the scan first (sections 4 and 5): with launches that cost
-- nothing, all 8.
SELECT relpages BETWEEN 3700 AND 4500 AS pages_as_assumed FROM pg_class WHERE relname = 'cmp_keys';
SET max_parallel_workers_per_gather = 8;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET gpuext.max_batch_pages = 300;
EXPLAIN (COSTS OFF) SELECT k, payload FROM cmp_keys WHERE payload = 7;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;

-- 3. Under an ORDER BY of a single relation, partial paths are compared
-- with the sort of their rows in each process: the GpuScan's processes
-- each sort their share of the rows.
EXPLAIN (COSTS OFF) SELECT k, payload FROM cmp_keys WHERE payload < 200 ORDER BY payload, k;
RESET gpuext.max_batch_pages;

-- 4. Launching workers: the first starts gpuext.parallel_start_us after
-- the query, the next ones gpuext.parallel_worker_us apart, and the query
-- waits for the last to end; what that adds beyond the even share of the
-- work, less parallel_setup_cost, is charged to gpuext's partial paths.
-- With parallel_setup_cost at 0, an aggregation of cmp_keys runs under a
-- Gather while a launch costs nothing; when a worker starts 2 ms late,
-- after the 1.5 ms of page work the leader alone needs, its serial GpuAgg
-- is the cheaper plan (on the H100, TPC-H Q6 at 0.1 took 7.6 ms with 7
-- workers against 4.3 ms serial, session 10).
SET gpuext.max_batch_pages = 100;
SET parallel_setup_cost = 0;
EXPLAIN (COSTS OFF) SELECT count(*), sum(payload) FROM cmp_keys WHERE payload < 500;
SET gpuext.parallel_start_us = 2000;
EXPLAIN (COSTS OFF) SELECT count(*), sum(payload) FROM cmp_keys WHERE payload < 500;
RESET gpuext.parallel_start_us;
-- 5. ... and a partial path takes no more workers than pay for their
-- start: with the device's reads free (the host's page work alone), and
-- workers starting 98 us apart, worker w starts after w x 98 us and the
-- page work of 1.5 ms ends soonest with 4 of the table's 8; with starts
-- next to free, with all 8 (on the H100 a GpuScan of scan_t, 400 MB, ran
-- 22 ms under 4 workers and 16.4 to 17.4 under 6 to 16, session 12)
SET gpuext.link_read_gbps = 1e6;
SET gpuext.parallel_worker_us = 98;
EXPLAIN (COSTS OFF) SELECT count(*), sum(payload) FROM cmp_keys WHERE payload < 500;
SET gpuext.parallel_worker_us = 0.001;
EXPLAIN (COSTS OFF) SELECT count(*), sum(payload) FROM cmp_keys WHERE payload < 500;
RESET gpuext.link_read_gbps;
RESET parallel_setup_cost;
RESET gpuext.parallel_worker_us;
RESET gpuext.max_batch_pages;
RESET max_parallel_workers_per_gather;
DROP TABLE cmp_probes, cmp_keys, cmp_dim;
