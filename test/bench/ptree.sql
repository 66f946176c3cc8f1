-- gpuext_ptree against btree: = ANY batches and index nested-loop joins
-- (PostgreSQL's, and gpuext's PtreeBatchJoin).
-- Two copies of the same data, one indexed by each access method; every
-- query runs on both and the answers are compared.  Run with psql on a
-- database with gpuext (test/bench/ptree.sh does: it prints the timings).
--   psql -X -v rows=1000000 -f test/bench/ptree.sql
\set ON_ERROR_STOP on
\if :{?rows}
\else
\set rows 1000000
\endif
SET gpuext.enabled = off;		-- the index access methods alone
SET max_parallel_workers_per_gather = 0;
DROP TABLE IF EXISTS bpt_btree, bpt_ptree, bpt_probes;
CREATE TABLE bpt_btree (k int8, i int4, t text, pad text);
INSERT INTO bpt_btree SELECT (g::int8 * 7919) % (:rows * 4), g % 100000, 'key' || (g % 200000), repeat('x', 40)
  FROM generate_series(1, :rows) g;
CREATE TABLE bpt_ptree AS SELECT * FROM bpt_btree;
CREATE TABLE bpt_probes AS SELECT (g::int8 * 104729) % (:rows * 4) AS k FROM generate_series(1, :rows / 10) g;
\timing on
\echo == build
CREATE INDEX bpt_btree_k ON bpt_btree (k);
CREATE INDEX bpt_ptree_k ON bpt_ptree USING gpuext_ptree (k);
CREATE INDEX bpt_btree_t ON bpt_btree (t);
CREATE INDEX bpt_ptree_t ON bpt_ptree USING gpuext_ptree (t);
\timing off
VACUUM ANALYZE bpt_btree, bpt_ptree, bpt_probes;
SELECT pg_size_pretty(pg_relation_size('bpt_btree_k')) AS btree_size,
       pg_size_pretty(pg_relation_size('bpt_ptree_k')) AS ptree_size;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
\timing on
\echo == = ANY, 100 keys (at least gpuext.ptree_batch_min, 64: the first batch builds this backend mirror of the index)
SELECT count(*), sum(i) FROM bpt_btree WHERE k = ANY(ARRAY(SELECT g::int8 * 7 FROM generate_series(1, 100) g));
SELECT count(*), sum(i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT g::int8 * 7 FROM generate_series(1, 100) g));
\echo == = ANY, 10000 keys (a batch in the prefix-tree mirror)
SELECT count(*), sum(i) FROM bpt_btree WHERE k = ANY(ARRAY(SELECT g::int8 * 7 FROM generate_series(1, 10000) g));
SELECT count(*), sum(i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT g::int8 * 7 FROM generate_series(1, 10000) g));
\echo == = ANY, 100000 keys
SELECT count(*), sum(i) FROM bpt_btree WHERE k = ANY(ARRAY(SELECT g::int8 * 7 FROM generate_series(1, 100000) g));
SELECT count(*), sum(i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT g::int8 * 7 FROM generate_series(1, 100000) g));
\echo == = ANY, 100000 keys, gpuext on (the batch on the GPU when the service has one)
SET gpuext.enabled = on;
SET gpuext.enable_gpuscan = off;
SET gpuext.enable_gpuagg = off;
SELECT count(*), sum(i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT g::int8 * 7 FROM generate_series(1, 100000) g));
SELECT count(*), sum(i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT g::int8 * 7 FROM generate_series(1, 100000) g));
SET gpuext.enabled = off;
\echo == = ANY, 10000 text keys
SELECT count(*), sum(i) FROM bpt_btree WHERE t = ANY(ARRAY(SELECT 'key' || g * 3 FROM generate_series(1, 10000) g));
SELECT count(*), sum(i) FROM bpt_ptree WHERE t = ANY(ARRAY(SELECT 'key' || g * 3 FROM generate_series(1, 10000) g));
\echo == index nested-loop join, rows/10 probes
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_btree b ON b.k = p.k;
SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_ptree b ON b.k = p.k;
\echo == the same join as a PtreeBatchJoin (batches of outer rows against the mirror)
SET gpuext.enabled = on;
SET gpuext.enable_gpuscan = off;
SET gpuext.enable_gpuagg = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_ptree b ON b.k = p.k;
SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_ptree b ON b.k = p.k;
SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_ptree b ON b.k = p.k;
SET gpuext.enabled = off;
\echo == the best stock plan for the join: hash join, serial and with 8 workers
RESET enable_seqscan;
RESET enable_hashjoin;
SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_btree b ON b.k = p.k;
SET max_parallel_workers_per_gather = 8;
SELECT count(*), sum(b.i) FROM bpt_probes p JOIN bpt_btree b ON b.k = p.k;
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off;
SET enable_hashjoin = off;
\echo == after 2 percent more rows (the ptree delta, merged every 32 pages)
\timing on
INSERT INTO bpt_btree SELECT g::int8 * 3 + 1, g % 100000, 'new' || g, '' FROM generate_series(1, :rows / 50) g;
INSERT INTO bpt_ptree SELECT g::int8 * 3 + 1, g % 100000, 'new' || g, '' FROM generate_series(1, :rows / 50) g;
SELECT count(*), sum(i) FROM bpt_btree WHERE k = ANY(ARRAY(SELECT g::int8 * 7 FROM generate_series(1, 10000) g));
SELECT count(*), sum(i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT g::int8 * 7 FROM generate_series(1, 10000) g));
\timing off
\echo == the answers agree
SELECT (SELECT count(*) FROM bpt_probes p JOIN bpt_btree b ON b.k = p.k) =
       (SELECT count(*) FROM bpt_probes p JOIN bpt_ptree b ON b.k = p.k) AS join_same,
       (SELECT array_agg(i ORDER BY i) FROM bpt_btree WHERE k = ANY(ARRAY(SELECT g::int8 * 7 FROM generate_series(1, 20000) g))) =
       (SELECT array_agg(i ORDER BY i) FROM bpt_ptree WHERE k = ANY(ARRAY(SELECT g::int8 * 7 FROM generate_series(1, 20000) g))) AS any_same;
SELECT gpuext_ptree_check('bpt_ptree_k', true) IS NOT NULL AS ptree_k_checked;
DROP TABLE bpt_btree, bpt_ptree, bpt_probes;
