-- GPU-only: GpuJoin's CUDA kernels (gpuext.gpujoin_kernels = on) against
-- stock PostgreSQL, as multisets of rows: build with compare-and-swap,
-- probe of pages read in place (inner, left, semi, anti, several depths,
-- duplicate and NULL keys, cross-type, text and numeric keys), and the
-- aggregation fused with the join; every batch on the GPU (cpu_fallback
-- off, the GPU batch counter grows, no fallback).  Written without a GPU
-- to run on: the expected output assumes the kernels are right.
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
RESET client_min_messages;
SET gpuext.cpu_fallback = off;
SET gpuext.gpujoin_kernels = on;
SET gpuext.regression_test_mode = on;

CREATE FUNCTION gjg_diff(q text) RETURNS text LANGUAGE plpgsql
SET gpuext.force_offload = on SET gpuext.enabled = on
AS $fn$
DECLARE
  r_on text[]; r_off text[]; only_on text[]; only_off text[]; line text; plan text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    plan := plan || line;
  END LOOP;
  IF plan NOT LIKE '%Depth 1%' THEN
    RETURN 'not offloaded';
  END IF;
  EXECUTE 'SELECT coalesce(array_agg(r::text), ''{}'') FROM (' || q || ') r' INTO r_on;
  PERFORM set_config('gpuext.enabled', 'off', true);
  EXECUTE 'SELECT coalesce(array_agg(r::text), ''{}'') FROM (' || q || ') r' INTO r_off;
  SELECT coalesce(array_agg(x ORDER BY x COLLATE "C"), '{}') INTO only_on
    FROM (SELECT unnest(r_on) EXCEPT ALL SELECT unnest(r_off)) AS d(x);
  SELECT coalesce(array_agg(x ORDER BY x COLLATE "C"), '{}') INTO only_off
    FROM (SELECT unnest(r_off) EXCEPT ALL SELECT unnest(r_on)) AS d(x);
  IF cardinality(only_on) = 0 AND cardinality(only_off) = 0 THEN
    RETURN format('ok %s rows%s', cardinality(r_on),
                  CASE WHEN plan LIKE '%GpuAgg%' THEN ', fused' ELSE '' END);
  END IF;
  RETURN format('MISMATCH: only offloaded: %s; only stock: %s',
                array_to_string(only_on[1:5], ' '), array_to_string(only_off[1:5], ' '));
END;
$fn$;

CREATE FUNCTION gjg_explain_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
BEGIN
  RETURN QUERY EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q;
END;
$fn$;

CREATE TABLE gjg_fact (id int, a int4, b int8, c text, n numeric, x float8);
INSERT INTO gjg_fact
SELECT g, CASE WHEN g % 13 = 0 THEN NULL ELSE g % 1000 END, (g % 37)::int8,
       'k' || (g % 50), (g % 20)::numeric / 4, (g % 10)::float8 / 2
  FROM generate_series(1, 300000) g;
CREATE TABLE gjg_d1 (k int4, name text);
INSERT INTO gjg_d1 SELECT g, 'd1_' || g FROM generate_series(0, 800) g;
INSERT INTO gjg_d1 VALUES (5, 'dup5a'), (5, 'dup5b'), (NULL, 'nullkey'), (0, 'zero2');
CREATE TABLE gjg_d2 (k int8, c text, v int);
INSERT INTO gjg_d2 SELECT g, 'k' || g, g * 10 FROM generate_series(0, 30) g;
CREATE TABLE gjg_dn (n numeric, label text);
INSERT INTO gjg_dn VALUES (0, 'zero'), (1.25, 'a'), (1.250, 'a2'), (2.5, 'b'), (NULL, 'null');
CREATE TABLE gjg_big AS SELECT g AS k, g % 97 AS v FROM generate_series(1, 200000) g;
ANALYZE gjg_fact, gjg_d1, gjg_d2, gjg_dn, gjg_big;

SELECT gpu_batches AS gpu_before, fallbacks AS fallbacks_before FROM gpuext_status() \gset
SELECT gjg_diff('SELECT f.id, d.name FROM gjg_fact f JOIN gjg_d1 d ON f.a = d.k');
SELECT gjg_diff('SELECT f.id, d.name FROM gjg_fact f LEFT JOIN gjg_d1 d ON f.a = d.k');
SELECT gjg_diff('SELECT f.id FROM gjg_fact f WHERE EXISTS (SELECT 1 FROM gjg_d1 d WHERE d.k = f.a)');
SELECT gjg_diff('SELECT f.id FROM gjg_fact f WHERE NOT EXISTS (SELECT 1 FROM gjg_d2 d WHERE d.k = f.b)');
SELECT gjg_diff('SELECT f.id, d1.name, d2.v FROM gjg_fact f JOIN gjg_d1 d1 ON f.a = d1.k JOIN gjg_d2 d2 ON f.b = d2.k AND f.c = d2.c');
SELECT gjg_diff('SELECT f.id, d.label FROM gjg_fact f JOIN gjg_dn d ON f.n = d.n');
SELECT gjg_diff('SELECT f.id, b.v FROM gjg_fact f JOIN gjg_big b ON f.id = b.k');
SELECT gjg_diff('SELECT f.a % 10, count(*), sum(f.id) FROM gjg_fact f JOIN gjg_d1 d ON f.a = d.k GROUP BY f.a % 10');
SELECT gjg_diff('SELECT d.name, count(*), sum(f.b) FROM gjg_fact f JOIN gjg_d1 d ON f.a = d.k GROUP BY d.name');
SELECT gjg_diff('SELECT d2.c, count(*) FROM gjg_fact f JOIN gjg_d1 d1 ON f.a = d1.k LEFT JOIN gjg_d2 d2 ON f.b = d2.k GROUP BY d2.c');
SELECT gpu_batches > :gpu_before AS ran_on_gpu, fallbacks = :fallbacks_before AS no_fallback
  FROM gpuext_status();
-- the fused aggregation's result comes from the device
SET gpuext.force_offload = on;
SELECT line FROM (SELECT btrim(l) AS line FROM gjg_explain_lines(
  'SELECT d.name, count(*) FROM gjg_fact f JOIN gjg_d1 d ON f.a = d.k GROUP BY d.name') l) s
 WHERE line LIKE 'Result From%';
-- in parallel: the leader builds and uploads the inner tables once, before
-- its workers start; each participant probes its share of the pages with
-- that device copy and adds to the one device group table; the last
-- returns it
SET max_parallel_workers_per_gather = 4;
SET parallel_setup_cost = 10;
-- gjg_fact is the scanned side (with force_offload a parallel GpuJoin
-- scanning gjg_d1, gjg_fact its inner table, costs as little)
ALTER TABLE gjg_d1 SET (parallel_workers = 0);
SET min_parallel_table_scan_size = 0;
SELECT gjg_diff('SELECT d.name, count(*), sum(f.b) FROM gjg_fact f JOIN gjg_d1 d ON f.a = d.k GROUP BY d.name');
SELECT bool_or(line ~ '^Inner Build: leader, shared with [0-9]+ workers?$') AS built_once
  FROM (SELECT btrim(l) AS line FROM gjg_explain_lines(
    'SELECT d.name, count(*) FROM gjg_fact f JOIN gjg_d1 d ON f.a = d.k GROUP BY d.name') l) s;
-- a parallel GpuJoin (no aggregation): the workers map the leader's
-- tables and use its device copy, with and without the leader taking part
SET gpuext.enable_gpuagg = off;
SELECT gpu_batches AS gpu_before, fallbacks AS fallbacks_before FROM gpuext_status() \gset
SELECT gjg_diff('SELECT f.id, d1.name, d2.v FROM gjg_fact f JOIN gjg_d1 d1 ON f.a = d1.k JOIN gjg_d2 d2 ON f.b = d2.k AND f.c = d2.c');
-- (the planner may prefer the serial GpuJoin here: with force_offload the
-- paths cost their real cost over 10^6, and on the GPU parallel workers do
-- not make a device-bound join cheaper; gpujoin_parallel covers the
-- parallel plans on both engines)
SELECT NOT bool_or(line ~ '^-> +Parallel Custom Scan \(GpuJoin\)')
       OR bool_or(line ~ '^Inner Build: leader, shared with [0-9]+ workers?$') AS built_once_if_parallel
  FROM (SELECT btrim(l) AS line FROM gjg_explain_lines(
    'SELECT f.id, d.name FROM gjg_fact f JOIN gjg_d1 d ON f.a = d.k') l) s;
SET parallel_leader_participation = off;
SELECT gjg_diff('SELECT f.id, d.label FROM gjg_fact f JOIN gjg_dn d ON f.n = d.n');
SELECT gjg_diff('SELECT f.id, b.v FROM gjg_fact f JOIN gjg_big b ON f.id = b.k');
RESET parallel_leader_participation;
SELECT gpu_batches > :gpu_before AS ran_on_gpu, fallbacks = :fallbacks_before AS no_fallback
  FROM gpuext_status();
RESET gpuext.enable_gpuagg;
ALTER TABLE gjg_d1 RESET (parallel_workers);
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET min_parallel_table_scan_size;
RESET gpuext.force_offload;
SELECT sum(memory_used_by_gpuext) = 0 AS device_memory_released FROM gpuext_devices();
