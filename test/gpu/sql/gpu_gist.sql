-- GPU-only: gpuext_gist's batched searches on the GPU (cuda/rtree.cu,
-- GX_REQ_RTREE_*) against stock PostgreSQL (sequential scans, PostgreSQL's
-- own operators), as multisets of rows: GistJoin for every operator, on a
-- deep tree (node_size 16) and a wide one (204), batches of several sizes,
-- rescans inside a correlated subquery, "&& ANY(array)" index and bitmap
-- scans with and without a second key (the filter keys on the device),
-- gpuext_gist_probe, probes whose results overflow a request's first
-- guess (sent again) and whose visits overflow it (split); every batch on
-- the GPU (cpu_fallback off, the GPU batch counter grows, no fallback);
-- then an injected kernel fault and gpuext.gpu_memory_limit, with the
-- fallback off (an ERROR) and on (the pages walk, same rows); device
-- copies kept across queries (gpuext.gist_device_cache) until an insert; a
-- stalled request ends with statement_timeout; device memory is released.
-- First run on an H100 on 2026-11-22.
\set VERBOSITY terse
\set SHOW_CONTEXT never
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
RESET client_min_messages;
SET gpuext.cpu_fallback = off;
SET gpuext.gist_walk = auto;
SET gpuext.gist_gpu_min_batch = 2;
-- GistJoin, not a GpuJoin on the extra equality (the GPU's cost model may
-- prefer it)
SET gpuext.enable_gpujoin = off;

-- the data: a grid of boxes, degenerate boxes, near-EPSILON neighbours,
-- duplicates, NULLs, NaN and infinities
CREATE TABLE ggs (id int, bx box, pt point);
INSERT INTO ggs
SELECT g, box(point(g % 200, g / 200), point(g % 200 + g % 4, g / 200 + g % 3)),
       point(g % 200 + 0.5, g / 200 + 0.25)
  FROM generate_series(1, 20000) g;
INSERT INTO ggs VALUES
  (90001, box '(5,5),(5,5)', point '(5,5)'),
  (90002, box '(5,5),(5,5)', point '(5,5)'),
  (90003, box '(5,5),(9,5)', point '(5.0000005,5)'),
  (90004, box '(5.0000005,5.0000005),(5.0000005,5.0000005)', point '(5.000002,5)'),
  (90005, box '(10,10),(20,20)', point '(10,10)'),
  (90006, box '(10.0000009,10),(20.0000009,20)', point '(20.0000009,20)'),
  (90007, NULL, NULL),
  (90008, box '(NaN,1),(2,2)', point '(NaN,1)'),
  (90009, box '(NaN,NaN),(NaN,NaN)', point '(NaN,NaN)'),
  (90010, box '(-Infinity,0),(Infinity,1)', point '(Infinity,0)'),
  (90011, box '(-1e300,-1e300),(1e300,1e300)', point '(1e300,-1e300)');
CREATE TABLE ggx (LIKE ggs);
INSERT INTO ggx SELECT * FROM ggs;
CREATE INDEX ggx_bx ON ggx USING gpuext_gist (bx) WITH (node_size = 16);
CREATE INDEX ggx_pt ON ggx USING gpuext_gist (pt);
CREATE TABLE ggw (LIKE ggs);
INSERT INTO ggw SELECT * FROM ggs;
CREATE INDEX ggw_bx ON ggw USING gpuext_gist (bx);
-- the queries: small windows, points, a few wide ones, NaN and NULL
CREATE TABLE ggq (qid int, qb box, qp point);
INSERT INTO ggq
SELECT g, box(point((g * 37) % 200, (g * 11) % 100),
              point((g * 37) % 200 + (g % 5) * 2, (g * 11) % 100 + (g % 3) * 2)),
       point((g * 37) % 200 + 0.5, (g * 11) % 100 + 0.25)
  FROM generate_series(1, 500) g;
INSERT INTO ggq VALUES
  (4001, box '(5,5),(5,5)', point '(5,5)'),
  (4002, box '(4.9999995,4.9999995),(5.0000005,5.0000005)', point '(5.0000005,5)'),
  (4003, box '(0,0),(200,40)', point '(20.0000009,20)'),
  (4004, box '(NaN,1),(2,2)', point '(NaN,1)'),
  (4005, box '(-Infinity,0),(Infinity,1)', point '(Infinity,0)'),
  (4006, box '(10.000001,10),(20.000001,20)', point '(10.000001,10)'),
  (4007, NULL, NULL);
ANALYZE ggs, ggx, ggw, ggq;

-- ggs_cmp(table, pred): the rows (t.id, q.qid) of "table t JOIN ggq q ON
-- pred" by GistJoin and by stock PostgreSQL on ggs, as multisets
CREATE FUNCTION ggs_cmp(tab text, pred text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
  plan text := '';
  line text;
  r_gpu text[];
  r_ref text[];
  only_gpu text[];
  only_ref text[];
BEGIN
  SET LOCAL enable_nestloop = off;
  SET LOCAL enable_hashjoin = off;
  SET LOCAL enable_mergejoin = off;
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT t.id, q.qid FROM ' || tab || ' t JOIN ggq q ON ' || pred LOOP
    plan := plan || line;
  END LOOP;
  IF plan NOT LIKE '%GistJoin%' THEN
    RETURN 'NOT A GistJoin';
  END IF;
  EXECUTE 'SELECT coalesce(array_agg(t.id || '' '' || q.qid), ''{}'') FROM ' || tab ||
          ' t JOIN ggq q ON ' || pred INTO r_gpu;
  SET LOCAL enable_nestloop = on;
  SET LOCAL gpuext.enabled = off;
  EXECUTE 'SELECT coalesce(array_agg(t.id || '' '' || q.qid), ''{}'') FROM ggs t JOIN ggq q ON ' ||
          pred INTO r_ref;
  SELECT coalesce(array_agg(x ORDER BY x), '{}') INTO only_gpu
    FROM (SELECT unnest(r_gpu) EXCEPT ALL SELECT unnest(r_ref)) AS d(x);
  SELECT coalesce(array_agg(x ORDER BY x), '{}') INTO only_ref
    FROM (SELECT unnest(r_ref) EXCEPT ALL SELECT unnest(r_gpu)) AS d(x);
  IF cardinality(only_gpu) = 0 AND cardinality(only_ref) = 0 THEN
    RETURN format('ok %s rows', cardinality(r_gpu));
  END IF;
  RETURN format('MISMATCH: only GPU: %s; only stock: %s',
                array_to_string(only_gpu[1:5], ' '), array_to_string(only_ref[1:5], ' '));
END;
$f$;

CREATE FUNCTION ggs_explain_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $fn$
BEGIN
  SET LOCAL enable_nestloop = off;
  SET LOCAL enable_hashjoin = off;
  SET LOCAL enable_mergejoin = off;
  RETURN QUERY EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q;
END;
$fn$;

SELECT gpu_batches AS gpu_before, fallbacks AS fallbacks_before FROM gpuext_status() \gset

-- GistJoin, every operator, deep and wide trees, several batch sizes
SELECT ggs_cmp('ggx', 't.bx && q.qb');
SELECT ggs_cmp('ggx', 'q.qb && t.bx');
SELECT ggs_cmp('ggx', 't.bx @> q.qb');
SELECT ggs_cmp('ggx', 't.bx <@ q.qb');
SELECT ggs_cmp('ggx', 't.bx ~= q.qb');
SELECT ggs_cmp('ggx', 't.bx @> q.qp');
SELECT ggs_cmp('ggx', 't.pt <@ q.qb');
SELECT ggs_cmp('ggx', 't.pt ~= q.qp');
SELECT ggs_cmp('ggx', 't.bx && q.qb AND t.id % 3 = q.qid % 3');
SELECT ggs_cmp('ggw', 't.bx && q.qb');
SELECT ggs_cmp('ggw', 't.bx <@ q.qb');
SET gpuext.gist_join_batch = 7;
SELECT ggs_cmp('ggx', 't.bx && q.qb');
SELECT ggs_cmp('ggw', 't.bx @> q.qb');
SET gpuext.gist_join_batch = 100000;
SELECT ggs_cmp('ggx', 't.bx && q.qb');
SELECT ggs_cmp('ggx', 't.pt <@ q.qb');
RESET gpuext.gist_join_batch;

-- a result list far beyond the first guess (sent again) and wide windows
-- whose visits overflow a request (split): everything, 40 times
CREATE TABLE ggq_wide AS SELECT g AS qid, box '(-1,-1),(400,400)' AS qb FROM generate_series(1, 40) g;
SELECT count(*) AS wide_rows,
       count(*) = 40 * (SELECT count(*) FROM ggs WHERE bx && box '(-1,-1),(400,400)') AS wide_ok
  FROM gpuext_gist_probe('ggx_bx', (SELECT array_agg(qb ORDER BY qid) FROM ggq_wide));

-- the batch probe, against the join of stock PostgreSQL
SELECT count(*) AS probe_rows,
       count(*) = (SELECT count(*) FROM ggs t JOIN ggq q ON t.bx && q.qb) AS probe_count_ok,
       sum(hashint4(t.id) # hashint4(p.query)) =
         (SELECT sum(hashint4(t.id) # hashint4(q.rn::int))
            FROM ggs t JOIN (SELECT qb, row_number() OVER (ORDER BY qid) AS rn FROM ggq) q
              ON t.bx && q.qb) AS probe_rows_ok
  FROM gpuext_gist_probe('ggx_bx', (SELECT array_agg(qb ORDER BY qid) FROM ggq)) p
  JOIN ggx t ON t.ctid = p.ctid;

-- "&& ANY(array)": index scans and bitmap scans, one key and two
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(id) FROM ggx WHERE bx && ANY ((SELECT array_agg(qb) FROM ggq WHERE qid % 7 = 0)::box[]);
SELECT count(*), sum(id) FROM ggx WHERE bx && ANY ((SELECT array_agg(qb) FROM ggq WHERE qid % 7 = 0)::box[])
   AND bx <@ box '(0,0),(150,100)';
SET enable_bitmapscan = on;
SET enable_indexscan = off;
SELECT count(*), sum(id) FROM ggx WHERE bx && ANY ((SELECT array_agg(qb) FROM ggq WHERE qid % 7 = 0)::box[]);
SELECT count(*), sum(id) FROM ggx WHERE pt <@ ANY ((SELECT array_agg(qb) FROM ggq WHERE qid % 5 = 0)::box[]);
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexscan;
SET gpuext.enabled = off;
SELECT count(*), sum(id) FROM ggs WHERE bx && ANY ((SELECT array_agg(qb) FROM ggq WHERE qid % 7 = 0)::box[]);
SELECT count(*), sum(id) FROM ggs WHERE bx && ANY ((SELECT array_agg(qb) FROM ggq WHERE qid % 7 = 0)::box[])
   AND bx <@ box '(0,0),(150,100)';
SELECT count(*), sum(id) FROM ggs WHERE pt <@ ANY ((SELECT array_agg(qb) FROM ggq WHERE qid % 5 = 0)::box[]);
RESET gpuext.enabled;

-- rescans: the join inside a correlated subquery (one device copy of the
-- tree for all of them)
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
CREATE TEMP TABLE ggs_sub AS
SELECT q.qid, (SELECT count(*) FROM ggq q2 JOIN ggx t ON t.bx && q2.qb
                WHERE q2.qid BETWEEN q.qid AND q.qid + 50) AS n
  FROM ggq q WHERE q.qid % 25 = 0;
RESET enable_nestloop;
RESET enable_hashjoin;
RESET enable_mergejoin;
SET gpuext.enable_gist_join = off;
SELECT count(*) AS queries,
       count(*) FILTER (WHERE s.n = (SELECT count(*) FROM ggq q2 JOIN ggs t ON t.bx && q2.qb
                                     WHERE q2.qid BETWEEN s.qid AND s.qid + 50)) AS agree
  FROM ggs_sub s;
RESET gpuext.enable_gist_join;

SELECT gpu_batches > :gpu_before AS ran_on_gpu, fallbacks = :fallbacks_before AS no_fallback
  FROM gpuext_status();

-- EXPLAIN ANALYZE says where the batches ran
SELECT line FROM (SELECT btrim(l) AS line FROM ggs_explain_lines(
  'SELECT count(*) FROM ggx t JOIN ggq q ON t.bx && q.qb') l) s
 WHERE line ~ '^(Engine|Fallbacks):';
SELECT line ~ '^GPU Batches: [1-9]' AS gpu_batches_shown FROM (SELECT btrim(l) AS line FROM ggs_explain_lines(
  'SELECT count(*) FROM ggx t JOIN ggq q ON t.bx && q.qb') l) s
 WHERE line LIKE 'GPU Batches:%';

-- faults: an injected kernel error and a search over gpuext.gpu_memory_limit
-- raise an ERROR with the fallback off, and walk the pages with it on
SET gpuext.debug_inject_fault = 'kernel';
SELECT ggs_cmp('ggx', 't.bx && q.qb');
SET gpuext.cpu_fallback = on;
SELECT ggs_cmp('ggx', 't.bx && q.qb');
SELECT line FROM (SELECT btrim(l) AS line FROM ggs_explain_lines(
  'SELECT count(*) FROM ggx t JOIN ggq q ON t.bx && q.qb') l) s
 WHERE line ~ '^Engine:';
RESET gpuext.debug_inject_fault;
SET gpuext.cpu_fallback = off;
CREATE TABLE ggq_many AS SELECT g AS qid, box(point(g % 200, g % 100), point(g % 200 + 1, g % 100 + 1)) AS qb
  FROM generate_series(1, 60000) g;
SET gpuext.gist_join_batch = 60000;
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET gpuext.gist_walk = pages;
SELECT count(*) AS many_ref FROM ggx t JOIN ggq_many q ON t.bx && q.qb \gset
SET gpuext.gist_walk = auto;
-- the tree (about 1 MB) fits, the visit lists of 60000 probes do not
SET gpuext.gpu_memory_limit = '4MB';
SELECT count(*) FROM ggx t JOIN ggq_many q ON t.bx && q.qb;
SET gpuext.cpu_fallback = on;
SELECT count(*) = :many_ref AS same_after_fallback FROM ggx t JOIN ggq_many q ON t.bx && q.qb;
SELECT fallbacks > :fallbacks_before AS fell_back FROM gpuext_status();
RESET enable_nestloop;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET gpuext.gist_join_batch;
RESET gpuext.gpu_memory_limit;
SET gpuext.cpu_fallback = off;

-- gpuext.gist_device_cache: a GistJoin's device copy kept for later
-- queries while the index is unchanged (same rows, the copy stays on the
-- device), an insert makes it unused (the new rows are found), a delete
-- leaves it (the heap fetch drops the rows); off frees it at the next GPU
-- search
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
CREATE TABLE ggc AS SELECT * FROM ggs;
CREATE INDEX ggc_bx ON ggc USING gpuext_gist (bx);
ANALYZE ggc;
SET gpuext.gist_walk = pages;
SELECT count(*) AS c_ref FROM ggc t JOIN ggq q ON t.bx && q.qb \gset
SET gpuext.gist_walk = auto;
SET gpuext.gist_device_cache = on;
SELECT count(*) = :c_ref AS cache_first FROM ggc t JOIN ggq q ON t.bx && q.qb;
SELECT device_memory_in_use > 0 AS copy_kept FROM gpuext_status();
SELECT count(*) = :c_ref AS cache_again FROM ggc t JOIN ggq q ON t.bx && q.qb;
INSERT INTO ggc SELECT id + 100000, bx, pt FROM ggs WHERE id % 10 = 0;
SET gpuext.gist_walk = pages;
SELECT count(*) AS c_ref2 FROM ggc t JOIN ggq q ON t.bx && q.qb \gset
SET gpuext.gist_walk = auto;
SELECT :c_ref2 > :c_ref AS grew, count(*) = :c_ref2 AS cache_after_insert
  FROM ggc t JOIN ggq q ON t.bx && q.qb;
DELETE FROM ggc WHERE id % 7 = 0;
SET gpuext.gist_walk = pages;
SELECT count(*) AS c_ref3 FROM ggc t JOIN ggq q ON t.bx && q.qb \gset
SET gpuext.gist_walk = auto;
SELECT count(*) = :c_ref3 AS cache_after_delete FROM ggc t JOIN ggq q ON t.bx && q.qb;
SET gpuext.gist_device_cache = off;
SELECT count(*) = :c_ref3 AS no_cache FROM ggc t JOIN ggq q ON t.bx && q.qb;
SELECT device_memory_in_use = 0 AS copies_freed FROM gpuext_status();
DROP TABLE ggc;
RESET enable_nestloop;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- a parallel GistJoin: the leader copies the tree to the device before
-- its workers start and every participant searches that copy; the same
-- rows as the pages walk, in small batches so that every participant
-- sends several, with the session cache off (the leader frees its copy
-- after the workers are done) and on
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuext.gist_join_batch = 16;
SET gpuext.gist_gpu_min_batch = 2;
SET gpuext.gist_walk = pages;
SELECT count(*) AS p_ref FROM ggq q JOIN ggx t ON t.bx && q.qb \gset
SET gpuext.gist_walk = auto;
SELECT bool_or(l ~ 'Gather') AS parallel_plan
  FROM ggs_explain_lines('SELECT count(*) FROM ggq q JOIN ggx t ON t.bx && q.qb') l;
SELECT count(*) = :p_ref AS parallel_same FROM ggq q JOIN ggx t ON t.bx && q.qb;
SELECT device_memory_in_use = 0 AS parallel_copy_freed FROM gpuext_status();
SET gpuext.gist_device_cache = on;
SELECT count(*) = :p_ref AS parallel_cached_same FROM ggq q JOIN ggx t ON t.bx && q.qb;
SELECT count(*) = :p_ref AS parallel_cached_again FROM ggq q JOIN ggx t ON t.bx && q.qb;
SET gpuext.gist_device_cache = off;
SELECT count(*) = :p_ref AS parallel_after_cache FROM ggq q JOIN ggx t ON t.bx && q.qb;
SELECT device_memory_in_use = 0 AS parallel_cache_freed FROM gpuext_status();
RESET gpuext.gist_gpu_min_batch;
RESET gpuext.gist_join_batch;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET enable_nestloop;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- cancellation: a stalled load of the tree ends with statement_timeout
-- and leaves nothing on the device
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET statement_timeout = '500ms';
SET gpuext.debug_inject_fault = 'transfer_stall';
SELECT count(*) FROM ggx t JOIN ggq q ON t.bx && q.qb;
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET gpuext.debug_inject_fault;
RESET statement_timeout;
RESET enable_nestloop;
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 AS released FROM gpuext_status();

DROP TABLE ggs, ggx, ggw, ggq, ggq_wide, ggq_many;
DROP FUNCTION ggs_cmp(text, text), ggs_explain_lines(text);
SELECT sum(memory_used_by_gpuext) = 0 AS device_memory_released FROM gpuext_devices();
