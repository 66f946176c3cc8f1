-- GPU-only basics (run when the service has a GPU): the devices are
-- Hopper or newer; gpuext_page_counts on the GPU equals the CPU engine and
-- the ctid truth on a table of 1M rows with deleted rows, in one batch and
-- in many; the GPU counters grow; gpuext_debug_sleep runs on the GPU;
-- injected faults (alloc, kernel), gpuext.gpu_memory_limit (and its
-- default, 80 % of the GPU) and gpuext.max_tasks_per_database give
-- SQLSTATE 53200 / 58000 with cpu_fallback off and run on the CPU engine
-- (or PostgreSQL's plan) with it on; a stalled transfer ends with statement_timeout; device
-- memory is released at the end.
\set VERBOSITY terse
\set SHOW_CONTEXT never
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
RESET client_min_messages;
-- nothing below may fall back to the CPU engine unless it says so
SET gpuext.cpu_fallback = off;

--
-- the devices
--
SELECT service_state, devices > 0 AS has_devices FROM gpuext_status();
-- the suites before this one end their sessions just before it starts: the
-- service frees what they held as it notices them gone (up to 20 s here)
DO $$
BEGIN
  FOR i IN 1..200 LOOP
    EXIT WHEN (SELECT bool_and(memory_used_by_gpuext = 0) FROM gpuext_devices());
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT count(*) >= 1 AS has_rows,
       bool_and(engine = 'gpu') AS all_gpu,
       bool_and(string_to_array(compute_capability, '.')::int[] >= '{9,0}') AS sm90_or_newer,
       bool_and(status = 'ready') AS all_ready,
       bool_and(memory_total > 0 AND memory_free > 0 AND memory_free <= memory_total) AS memory_ok,
       bool_and(memory_used_by_gpuext = 0) AS nothing_used
  FROM gpuext_devices();

--
-- page counts: GPU = CPU engine = ctid, 1M rows
--
CREATE TABLE gb (id int, val int) WITH (autovacuum_enabled = off);
INSERT INTO gb SELECT g, g % 1000 FROM generate_series(1, 1000000) g;
SELECT count(*) > 4096 AS more_pages_than_one_batch FROM gpuext_page_counts('gb', 'gpu');
SELECT gpu_batches AS gpu_batches_before, bytes_read AS bytes_read_before,
       requests_served AS served_before
  FROM gpuext_status() \gset
-- the deleted rows are still there, invisible: nothing can be pruned yet
BEGIN;
DELETE FROM gb WHERE id % 7 = 0;
DELETE FROM gb WHERE id BETWEEN 500000 AND 502000;
SELECT count(*) AS differences FROM (
  (SELECT * FROM gpuext_page_counts('gb', 'gpu') EXCEPT ALL SELECT * FROM gpuext_page_counts('gb', 'cpu'))
  UNION ALL
  (SELECT * FROM gpuext_page_counts('gb', 'cpu') EXCEPT ALL SELECT * FROM gpuext_page_counts('gb', 'gpu'))) d;
SELECT count(*) AS differences FROM (
  (SELECT blkno, visible FROM gpuext_page_counts('gb', 'gpu')
   EXCEPT ALL
   SELECT (ctid::text::point)[0]::bigint, count(*)::int FROM gb GROUP BY 1)
  UNION ALL
  (SELECT (ctid::text::point)[0]::bigint, count(*)::int FROM gb GROUP BY 1
   EXCEPT ALL
   SELECT blkno, visible FROM gpuext_page_counts('gb', 'gpu'))) d;
SELECT sum(visible) AS rows, sum(tuples) AS line_pointers FROM gpuext_page_counts('gb', 'gpu');
COMMIT;
SELECT gpu_batches > :gpu_batches_before AS gpu_batches_grew,
       bytes_read > :bytes_read_before AS bytes_read_grew,
       requests_served > :served_before AS served_grew
  FROM gpuext_status();
-- committed: prune what can be pruned first, so both engines see the same pages
SELECT count(*) FROM gb;
SELECT count(*) AS differences FROM (
  (SELECT * FROM gpuext_page_counts('gb', 'gpu') EXCEPT ALL SELECT * FROM gpuext_page_counts('gb', 'cpu'))
  UNION ALL
  (SELECT * FROM gpuext_page_counts('gb', 'cpu') EXCEPT ALL SELECT * FROM gpuext_page_counts('gb', 'gpu'))) d;
-- vacuumed, all-visible pages
VACUUM gb;
SELECT count(*) AS differences FROM (
  (SELECT * FROM gpuext_page_counts('gb', 'gpu') EXCEPT ALL SELECT * FROM gpuext_page_counts('gb', 'cpu'))
  UNION ALL
  (SELECT * FROM gpuext_page_counts('gb', 'cpu') EXCEPT ALL SELECT * FROM gpuext_page_counts('gb', 'gpu'))) d;
SELECT sum(visible) AS rows FROM gpuext_page_counts('gb', 'gpu');
-- many small batches
SET gpuext.max_batch_pages = 100;
SELECT gpu_batches AS gpu_batches_before FROM gpuext_status() \gset
SELECT count(*) AS differences FROM (
  (SELECT * FROM gpuext_page_counts('gb', 'gpu') EXCEPT ALL SELECT * FROM gpuext_page_counts('gb', 'cpu'))
  UNION ALL
  (SELECT * FROM gpuext_page_counts('gb', 'cpu') EXCEPT ALL SELECT * FROM gpuext_page_counts('gb', 'gpu'))) d;
SELECT gpu_batches >= :gpu_batches_before + 2 * 44 AS one_batch_per_100_pages FROM gpuext_status();
RESET gpuext.max_batch_pages;
-- 'auto' is the GPU here
SELECT gpu_batches AS gpu_batches_before FROM gpuext_status() \gset
SELECT sum(visible) AS rows FROM gpuext_page_counts('gb');
SELECT gpu_batches > :gpu_batches_before AS auto_used_the_gpu FROM gpuext_status();

--
-- gpuext_debug_sleep on the GPU
--
SELECT gpuext_debug_sleep(50, 16, 'gpu');
SELECT gpuext_debug_sleep(50, 16);
SELECT gpuext_debug_sleep(50, 16, 'cpu');
SELECT device_memory_in_use = 0 AS released FROM gpuext_status();

--
-- injected faults
--
SELECT fallbacks AS fallbacks_before, requests_failed AS failed_before FROM gpuext_status() \gset
-- device allocation fails: 53200, or the CPU engine
SET gpuext.debug_inject_fault = 'alloc';
SET gpuext.cpu_fallback = off;
SELECT gpuext_debug_sleep(10, 16, 'gpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT count(*) FROM gpuext_page_counts('gb', 'gpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
SET gpuext.cpu_fallback = on;
SELECT gpuext_debug_sleep(10, 16, 'gpu');
SELECT sum(visible) AS rows FROM gpuext_page_counts('gb', 'gpu');
SET gpuext.cpu_fallback = notice;
SELECT gpuext_debug_sleep(10, 16, 'gpu');
-- one NOTICE per call, not per batch
SET gpuext.max_batch_pages = 1000;
SELECT sum(visible) AS rows FROM gpuext_page_counts('gb', 'gpu');
RESET gpuext.max_batch_pages;
-- the kernel reports an error: 58000, or the CPU engine
SET gpuext.debug_inject_fault = 'kernel';
SET gpuext.cpu_fallback = off;
SELECT gpuext_debug_sleep(10, 16, 'gpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT count(*) FROM gpuext_page_counts('gb', 'gpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
SET gpuext.cpu_fallback = on;
SELECT gpuext_debug_sleep(10, 16, 'gpu');
SELECT sum(visible) AS rows FROM gpuext_page_counts('gb', 'gpu');
RESET gpuext.debug_inject_fault;
SELECT fallbacks > :fallbacks_before AS fallbacks_grew,
       requests_failed > :failed_before AS failures_counted,
       device_memory_in_use = 0 AS released
  FROM gpuext_status();
-- the device still works
SET gpuext.cpu_fallback = off;
SELECT gpuext_debug_sleep(10, 16, 'gpu');
SELECT sum(visible) AS rows FROM gpuext_page_counts('gb', 'gpu');

--
-- gpuext.gpu_memory_limit
--
SET gpuext.gpu_memory_limit = '8MB';
SELECT gpuext_debug_sleep(10, 16, 'gpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_debug_sleep(10, 8, 'gpu');
SET gpuext.cpu_fallback = on;
SELECT gpuext_debug_sleep(10, 16, 'gpu');
SET gpuext.cpu_fallback = off;
RESET gpuext.gpu_memory_limit;
SELECT gpuext_debug_sleep(10, 16, 'gpu');
-- by default, 80 % of the smallest GPU's memory: a reservation of 85 %
-- is refused before the service tries to allocate it
SHOW gpuext.gpu_memory_limit;
SELECT gpuext_debug_sleep(10, (SELECT (min(memory_total) / 1048576 * 0.85)::int FROM gpuext_devices()), 'gpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_debug_sleep(10, 16, 'gpu');

--
-- cancellation on the device
--
SET statement_timeout = '300ms';
SELECT gpuext_debug_sleep(60000, 64, 'gpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
SET gpuext.debug_inject_fault = 'transfer_stall';
SELECT gpuext_debug_sleep(10, 16, 'gpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT count(*) FROM gpuext_page_counts('gb', 'gpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET gpuext.debug_inject_fault;
RESET statement_timeout;
SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 AS released FROM gpuext_status();
SELECT gpuext_debug_sleep(10, 16, 'gpu');

--
-- a group table whose creation failed on the device had no owner and
-- stayed in device memory until the backend exited (found on the H100 by
-- 006_join_cancel_crash): the service frees it at once
--
SET gpuext.force_offload = on;
SET max_parallel_workers_per_gather = 0;
SET gpuext.debug_inject_fault = 'kernel';
SELECT val % 10 AS k, count(*) FROM gb GROUP BY 1 ORDER BY 1 LIMIT 1;
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET gpuext.debug_inject_fault;
SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 AS released FROM gpuext_status();

--
-- a database's share of the service's tasks: a group table is a task;
-- with gpuext.max_tasks_per_database = 0 the aggregation fails with 53200
-- (cpu_fallback off) or runs PostgreSQL's plan (on)
--
SET gpuext.max_tasks_per_database = 0;
SELECT val % 10 AS k, count(*) FROM gb GROUP BY 1 ORDER BY 1 LIMIT 1;
\echo sqlstate :LAST_ERROR_SQLSTATE
SET gpuext.cpu_fallback = on;
SELECT val % 10 AS k, count(*) FROM gb GROUP BY 1 ORDER BY 1 LIMIT 1;
SET gpuext.cpu_fallback = off;
RESET gpuext.max_tasks_per_database;
SELECT val % 10 AS k, count(*) FROM gb GROUP BY 1 ORDER BY 1 LIMIT 1;
SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 AS released FROM gpuext_status();
RESET gpuext.force_offload;
RESET max_parallel_workers_per_gather;

--
-- the end: nothing held
--
DROP TABLE gb;
RESET ALL;
SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 AS released FROM gpuext_status();
SELECT bool_and(memory_used_by_gpuext = 0) AS nothing_used FROM gpuext_devices();
