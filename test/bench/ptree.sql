-- gpuext_ptree against btree: = ANY batches and index nested-loop joins
-- (PostgreSQL's, and gpuext's PtreeBatchJoin, serial and parallel), the
-- best stock plans for the join, index sizes and build times, and the
-- device's lookups per second.
-- Two copies of the same data, one indexed by each access method; every
-- query runs on both and the answers are compared at the end (the join's
-- count and sum from every method, the = ANY answers).  Run with psql on
-- a database with gpuext (test/bench/ptree.sh does: it prints the timings).
--   psql -X -v rows=1000000 [-v keytype=int8] [-v workers=8] -f test/bench/ptree.sql
-- rows: table rows (keys unique, spread over 4 x rows); probes: rows / 10,
-- a quarter of them matching.  keytype: int4 (default, the issue's) or
-- int8.  Above 20 M rows ("large") the cases that say nothing more at that
-- size are left out: the text keys, the serial hash join, the ptree
-- index nested loop without batches (the btree one is the reference and
-- stays), and the insert case adds 10,000 rows instead of 2 percent (each
-- delta merge rewrites the whole index); -v large=on|off decides instead.
\set ON_ERROR_STOP on
\if :{?rows}
\else
\set rows 1000000
\endif
\if :{?keytype}
\else
\set keytype int4
\endif
\if :{?workers}
\else
\set workers 8
\endif
\if :{?large}
\else
SELECT :rows > 20000000 AS large \gset
\endif
SELECT :rows / 10 AS probes \gset
\echo == :rows rows of :keytype keys, :probes probes, :workers workers for the parallel cases, large = :large
SET gpuext.enabled = off;		-- the index access methods alone
SET max_parallel_workers_per_gather = 0;
SET maintenance_work_mem = '4GB';
SET max_parallel_maintenance_workers = :workers;
SET work_mem = '1GB';			-- the stock hash joins in memory
SET gpuext.ptree_mirror_max_mb = 16384;	-- a mirror of 100 M keys is about 1.5 GB
DROP TABLE IF EXISTS bpt_btree, bpt_ptree, bpt_probes;
-- EXPLAIN ANALYZE of q as JSON, for the figures it holds
CREATE FUNCTION pg_temp.explain_json(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO plan;
  RETURN plan::jsonb;
END $$;
-- unlogged: no WAL for the data load (reads are the same)
CREATE UNLOGGED TABLE bpt_btree (k :keytype, i int4, t text, pad text);
\timing on
\echo == load
INSERT INTO bpt_btree SELECT ((g::int8 * 7919) % (:rows::int8 * 4)):::keytype, g % 100000,
       'key' || (g % 200000), repeat('x', 40)
  FROM generate_series(1, :rows) g;
CREATE UNLOGGED TABLE bpt_ptree AS SELECT * FROM bpt_btree;
CREATE UNLOGGED TABLE bpt_probes AS
  SELECT ((g::int8 * 104729) % (:rows::int8 * 4)):::keytype AS k FROM generate_series(1, :probes) g;
VACUUM ANALYZE bpt_btree, bpt_ptree, bpt_probes;
-- the parallel cases get all their workers (the planner would scale them
-- with the tables' sizes)
ALTER TABLE bpt_btree SET (parallel_workers = :workers);
ALTER TABLE bpt_ptree SET (parallel_workers = :workers);
ALTER TABLE bpt_probes SET (parallel_workers = :workers);
\echo == build (btree with up to :workers workers; gpuext_ptree builds serially)
CREATE INDEX bpt_btree_k ON bpt_btree (k);
CREATE INDEX bpt_ptree_k ON bpt_ptree USING gpuext_ptree (k);
\if :large
\else
CREATE INDEX bpt_btree_t ON bpt_btree (t);
CREATE INDEX bpt_ptree_t ON bpt_ptree USING gpuext_ptree (t);
\endif
\timing off
SELECT pg_size_pretty(pg_relation_size('bpt_btree_k')) AS btree_size,
       pg_size_pretty(pg_relation_size('bpt_ptree_k')) AS ptree_size,
       round(pg_relation_size('bpt_ptree_k')::numeric / pg_relation_size('bpt_btree_k'), 3) AS ptree_over_btree;
-- every table and index in shared buffers (when they fit), so that no
-- case pays for the first reads of the others' pages
SELECT count(*) > 0 AS has_prewarm FROM pg_available_extensions WHERE name = 'pg_prewarm' \gset
\if :has_prewarm
\timing on
\echo == pg_prewarm of the tables and indexes
CREATE EXTENSION IF NOT EXISTS pg_prewarm;
SELECT sum(pg_prewarm(c)) AS blocks_prewarmed
  FROM unnest(ARRAY['bpt_btree', 'bpt_ptree', 'bpt_probes', 'bpt_btree_k', 'bpt_ptree_k']::regclass[]) c;
\timing off
\endif
SET enable_seqscan = off;
SET enable_bitmapscan = off;
\timing on
\echo == = ANY, 100 keys (at least gpuext.ptree_batch_min, 64: the first batch builds this backend mirror of the index)
SELECT count(*), sum(i) FROM bpt_btree WHERE k = ANY(ARRAY(SELECT (g * 7):::keytype FROM generate_series(1, 100) g));
SELECT count(*), sum(i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT (g * 7):::keytype FROM generate_series(1, 100) g));
\echo == = ANY, 10000 keys (a batch in the prefix-tree mirror)
SELECT count(*), sum(i) FROM bpt_btree WHERE k = ANY(ARRAY(SELECT (g * 7):::keytype FROM generate_series(1, 10000) g));
SELECT count(*), sum(i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT (g * 7):::keytype FROM generate_series(1, 10000) g));
\echo == = ANY, 100000 keys
SELECT count(*), sum(i) FROM bpt_btree WHERE k = ANY(ARRAY(SELECT (g * 7):::keytype FROM generate_series(1, 100000) g));
SELECT count(*), sum(i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT (g * 7):::keytype FROM generate_series(1, 100000) g));
\echo == = ANY, 100000 keys, gpuext on (the batch on the GPU when the service has one; the first run loads the device copy)
SET gpuext.enabled = on;
SET gpuext.enable_gpuscan = off;
SET gpuext.enable_gpuagg = off;
SET gpuext.enable_gpujoin = off;	-- the index batch join, not the GPU hash join
SELECT count(*), sum(i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT (g * 7):::keytype FROM generate_series(1, 100000) g));
SELECT count(*), sum(i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT (g * 7):::keytype FROM generate_series(1, 100000) g));
SET gpuext.enabled = off;
\if :large
\else
\echo == = ANY, 10000 text keys
SELECT count(*), sum(i) FROM bpt_btree WHERE t = ANY(ARRAY(SELECT 'key' || g * 3 FROM generate_series(1, 10000) g));
SELECT count(*), sum(i) FROM bpt_ptree WHERE t = ANY(ARRAY(SELECT 'key' || g * 3 FROM generate_series(1, 10000) g));
\endif
\echo == the join of :probes probes: the btree index nested loop (serial: the reference)
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*) AS c_btree_nl, sum(b.i) AS s_btree_nl FROM bpt_probes p JOIN bpt_btree b ON b.k = p.k \gset
\echo count :c_btree_nl sum :s_btree_nl
\if :large
\else
\echo == the ptree index nested loop, one descent per probe
SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_ptree b ON b.k = p.k;
\endif
\echo == PtreeBatchJoin, serial (batches of gpuext.ptree_join_batch outer rows against the mirror; on the GPU when the service has one; the first run may build the mirror and load its device copy)
SET gpuext.enabled = on;
SET gpuext.enable_gpuscan = off;
SET gpuext.enable_gpuagg = off;
SET gpuext.enable_gpujoin = off;	-- the index batch join, not the GPU hash join
EXPLAIN (COSTS OFF) SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_ptree b ON b.k = p.k;
SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_ptree b ON b.k = p.k;
SELECT count(*) AS c_ptree, sum(b.i) AS s_ptree FROM bpt_probes p JOIN bpt_ptree b ON b.k = p.k \gset
\echo count :c_ptree sum :s_ptree
\echo == PtreeBatchJoin with :workers workers (they map the leader mirror and look up on the CPU engine; the leader batches on the GPU)
RESET enable_seqscan;
SET enable_nestloop = off;		-- only the parallel PtreeBatchJoin (not a join method)
SET max_parallel_workers_per_gather = :workers;
SET parallel_setup_cost = 0;
EXPLAIN (COSTS OFF) SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_ptree b ON b.k = p.k;
SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_ptree b ON b.k = p.k;
SELECT count(*) AS c_ptree_par, sum(b.i) AS s_ptree_par FROM bpt_probes p JOIN bpt_ptree b ON b.k = p.k \gset
\echo count :c_ptree_par sum :s_ptree_par
RESET parallel_setup_cost;
RESET enable_nestloop;
SET max_parallel_workers_per_gather = 0;
\echo == device lookups per second: the join lookups in batches of 1 M probes, Device Time of EXPLAIN ANALYZE (the service timing of each batch: probes to the device, the lookup kernel, results back)
SET gpuext.ptree_join_batch = 1000000;
SET enable_seqscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT (j->>'Engine') AS engine, (j->>'GPU Batches')::bigint AS gpu_batches,
       (j->>'Probes')::bigint AS probes, (j->>'Device Time')::numeric AS device_ms,
       CASE WHEN (j->>'Device Time')::numeric > 0
            THEN to_char((j->>'Probes')::numeric / ((j->>'Device Time')::numeric / 1000), '9.99EEEE')
            ELSE 'n/a (no GPU batches)' END AS device_lookups_per_s
  FROM (SELECT x AS j FROM jsonb_path_query(
          (SELECT pg_temp.explain_json('SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_ptree b ON b.k = p.k')),
          'strict $.**') x
        WHERE jsonb_typeof(x) = 'object' AND x->>'Custom Plan Provider' = 'PtreeBatchJoin') s;
RESET gpuext.ptree_join_batch;
SET gpuext.enabled = off;
\echo == the best stock plans for the join, with :workers workers: the planner choice, and the btree index nested loop
RESET enable_seqscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
\if :large
\else
\echo -- serial hash join
SET enable_nestloop = off;
SET enable_mergejoin = off;
SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_btree b ON b.k = p.k;
RESET enable_nestloop;
RESET enable_mergejoin;
\endif
SET max_parallel_workers_per_gather = :workers;
\echo -- the planner choice
EXPLAIN (COSTS OFF) SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_btree b ON b.k = p.k;
SELECT count(*) AS c_stock_par, sum(b.i) AS s_stock_par FROM bpt_probes p JOIN bpt_btree b ON b.k = p.k \gset
\echo count :c_stock_par sum :s_stock_par
\echo -- the btree index nested loop
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET parallel_setup_cost = 0;
EXPLAIN (COSTS OFF) SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_btree b ON b.k = p.k;
SELECT count(*) AS c_btree_par, sum(b.i) AS s_btree_par FROM bpt_probes p JOIN bpt_btree b ON b.k = p.k \gset
\echo count :c_btree_par sum :s_btree_par
RESET parallel_setup_cost;
SET max_parallel_workers_per_gather = 0;
\if :large
SELECT 10000 AS nins \gset
\else
SELECT :rows / 50 AS nins \gset
\endif
\echo == after :nins more rows (the ptree delta, merged every 32 pages)
INSERT INTO bpt_btree SELECT (g::int8 * 3 + 1):::keytype, g % 100000, 'new' || g, '' FROM generate_series(1, :nins) g;
INSERT INTO bpt_ptree SELECT (g::int8 * 3 + 1):::keytype, g % 100000, 'new' || g, '' FROM generate_series(1, :nins) g;
SELECT count(*), sum(i) FROM bpt_btree WHERE k = ANY(ARRAY(SELECT (g * 7):::keytype FROM generate_series(1, 10000) g));
SELECT count(*), sum(i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT (g * 7):::keytype FROM generate_series(1, 10000) g));
\timing off
SELECT greatest(:nins, 30000) AS mins \gset
\echo == merges of an int index alone (:mins rows each, at least 2 merges of 32 delta pages): comparing keys, planned (gpuext on: on the GPU when the service has one), and with delta_percent = 2
CREATE UNLOGGED TABLE bpt_merge AS SELECT k FROM bpt_btree;
CREATE INDEX bpt_merge_k ON bpt_merge USING gpuext_ptree (k);
CREATE UNLOGGED TABLE bpt_merge_ins AS SELECT (g::int8 * 5 + 2):::keytype AS k FROM generate_series(1, 3 * :mins) g;
\timing on
SET gpuext.ptree_merge_plan = off;
SELECT * FROM gpuext_ptree_merge_stats() \gset m_
INSERT INTO bpt_merge SELECT k FROM bpt_merge_ins LIMIT :mins;
SELECT compare_merges - :m_compare_merges AS compare_merges, round(merge_ms - :m_merge_ms) AS merge_ms
  FROM gpuext_ptree_merge_stats();
SET gpuext.enabled = on;
SET gpuext.ptree_merge_plan = on;
SELECT * FROM gpuext_ptree_merge_stats() \gset m_
INSERT INTO bpt_merge SELECT k FROM bpt_merge_ins OFFSET :mins LIMIT :mins;
SELECT gpu_merges - :m_gpu_merges AS gpu_merges, cpu_merges - :m_cpu_merges AS cpu_merges,
       round(plan_ms - :m_plan_ms) AS plan_ms, round(merge_ms - :m_merge_ms) AS merge_ms
  FROM gpuext_ptree_merge_stats();
SET gpuext.enabled = off;
RESET gpuext.ptree_merge_plan;
ALTER INDEX bpt_merge_k SET (delta_percent = 2);
SELECT * FROM gpuext_ptree_merge_stats() \gset m_
INSERT INTO bpt_merge SELECT k FROM bpt_merge_ins OFFSET 2 * :mins;
SELECT compare_merges - :m_compare_merges AS compare_merges, round(merge_ms - :m_merge_ms) AS merge_ms
  FROM gpuext_ptree_merge_stats();
SELECT count(*) FROM bpt_merge WHERE k = ANY(ARRAY(SELECT (g * 5 + 2):::keytype FROM generate_series(1, 1000) g));
\timing off
\if :large
\else
SELECT gpuext_ptree_check('bpt_merge_k', true) IS NOT NULL AS merge_k_checked;
\endif
DROP TABLE bpt_merge, bpt_merge_ins;
\echo == the answers agree
SELECT :'c_btree_nl' = :'c_ptree' AND :'s_btree_nl' = :'s_ptree' AS ptree_join_same,
       :'c_btree_nl' = :'c_ptree_par' AND :'s_btree_nl' = :'s_ptree_par' AS ptree_parallel_join_same,
       :'c_btree_nl' = :'c_stock_par' AND :'s_btree_nl' = :'s_stock_par' AS stock_parallel_same,
       :'c_btree_nl' = :'c_btree_par' AND :'s_btree_nl' = :'s_btree_par' AS btree_parallel_same,
       (SELECT array_agg(i ORDER BY i) FROM bpt_btree WHERE k = ANY(ARRAY(SELECT (g * 7):::keytype FROM generate_series(1, 20000) g))) =
       (SELECT array_agg(i ORDER BY i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT (g * 7):::keytype FROM generate_series(1, 20000) g))) AS any_same;
\if :large
\else
SELECT gpuext_ptree_check('bpt_ptree_k', true) IS NOT NULL AS ptree_k_checked;
\endif
DROP TABLE bpt_btree, bpt_ptree, bpt_probes;
