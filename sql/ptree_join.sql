-- PtreeBatchJoin: inner joins that probe a gpuext_ptree index a batch of
-- outer rows at a time must return exactly what PostgreSQL's own join
-- returns (EXCEPT ALL both ways), for every batch size.  No autovacuum on
-- the tables: an analyze in the middle would change the plans the battery
-- expects (the grouped query stops using PtreeBatchJoin)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
SET gpuext.enable_gpuscan = off;
SET gpuext.enable_gpuagg = off;
SET gpuext.enable_gpujoin = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;

CREATE TABLE pji (k int, b bigint, t text, d date, w int) WITH (autovacuum_enabled = off);
INSERT INTO pji SELECT CASE WHEN g % 50 = 0 THEN NULL ELSE g % 700 END, (g % 900)::bigint * 1000,
                       'key' || (g % 500), date '2020-01-01' + g % 300, g
  FROM generate_series(1, 8000) g;
CREATE INDEX pji_k ON pji USING gpuext_ptree (k);
CREATE INDEX pji_b ON pji USING gpuext_ptree (b) WITH (delta_pages = 2);
CREATE INDEX pji_t ON pji USING gpuext_ptree (t);
CREATE INDEX pji_d ON pji USING gpuext_ptree (d);
CREATE TABLE pjo (a int, a8 bigint, s text, e date, x int) WITH (autovacuum_enabled = off);
INSERT INTO pjo SELECT CASE WHEN g % 37 = 0 THEN NULL ELSE (g * 13) % 800 END, (g % 1000)::bigint * 1000,
                       'key' || (g % 600), date '2020-01-01' + g % 400, g
  FROM generate_series(1, 3000) g;
ANALYZE pji, pjo;

-- q with PtreeBatchJoin and without it: same rows, and the node used
CREATE FUNCTION pj_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  line text;
  used boolean := false;
  n bigint;
  diff bigint;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line ~ 'PtreeBatchJoin' THEN used := true; END IF;
  END LOOP;
  EXECUTE 'CREATE TEMP TABLE pj_a AS ' || q;
  PERFORM set_config('gpuext.enable_ptree_join', 'off', true);
  EXECUTE 'CREATE TEMP TABLE pj_b AS ' || q;
  PERFORM set_config('gpuext.enable_ptree_join', 'on', true);
  SELECT count(*) INTO diff FROM
    ((SELECT * FROM pj_a EXCEPT ALL SELECT * FROM pj_b)
     UNION ALL
     (SELECT * FROM pj_b EXCEPT ALL SELECT * FROM pj_a)) x;
  SELECT count(*) INTO n FROM pj_a;
  DROP TABLE pj_a, pj_b;
  RETURN n || ' rows, ' ||
    CASE WHEN NOT used THEN 'PtreeBatchJoin NOT used' WHEN diff = 0 THEN 'same' ELSE diff || ' differ' END;
END $$;

CREATE FUNCTION pj_battery() RETURNS TABLE (query text, batch_1024 text, batch_7 text, no_mirror text) LANGUAGE plpgsql AS $$
DECLARE
  qs text[] := ARRAY[
    'SELECT o.x, i.w FROM pjo o JOIN pji i ON i.k = o.a',
    'SELECT o.x, i.w FROM pjo o JOIN pji i ON o.a = i.k WHERE i.w % 3 = 0 AND o.x > 100',
    'SELECT o.x, i.w, i.t FROM pjo o JOIN pji i ON i.k = o.a AND i.w < o.x',
    'SELECT o.x, i.w FROM pjo o JOIN pji i ON i.b = o.a8',
    'SELECT o.x, i.w FROM pjo o JOIN pji i ON i.b = o.a',
    'SELECT o.x, i.w FROM pjo o JOIN pji i ON i.t = o.s',
    'SELECT o.x, i.w FROM pjo o JOIN pji i ON i.d = o.e WHERE o.x < 500',
    'SELECT o.x, i.w FROM pjo o JOIN pji i ON i.k = o.a + 1',
    'SELECT o.x, i.w, o2.x AS x2 FROM pjo o JOIN pjo o2 ON o2.x = o.x + 1 JOIN pji i ON i.k = o2.a',
    'SELECT s.x, i.w FROM (SELECT DISTINCT a, x FROM pjo WHERE x < 300) s JOIN pji i ON i.k = s.a',
    'SELECT count(*), sum(i.w) FROM pjo o JOIN pji i ON i.k = o.a GROUP BY o.x % 5',
    'SELECT o.x FROM pjo o WHERE EXISTS (SELECT 1 FROM pjo o2 JOIN pji i ON i.k = o2.a WHERE o2.x = o.x AND i.w > 7000)'];
  q text;
BEGIN
  FOREACH q IN ARRAY qs LOOP
    query := q;
    PERFORM set_config('gpuext.ptree_join_batch', '1024', true);
    batch_1024 := pj_same(q);
    PERFORM set_config('gpuext.ptree_join_batch', '7', true);
    batch_7 := pj_same(q);
    -- too large for a mirror: one descent per probe
    PERFORM set_config('gpuext.ptree_mirror_max_mb', '0', true);
    PERFORM set_config('gpuext.ptree_join_batch', '100', true);
    no_mirror := pj_same(q);
    PERFORM set_config('gpuext.ptree_mirror_max_mb', '1024', true);
    RETURN NEXT;
  END LOOP;
END $$;

SELECT * FROM pj_battery();
EXPLAIN (COSTS OFF) SELECT o.x, i.w FROM pjo o JOIN pji i ON i.k = o.a WHERE i.w % 3 = 0;

-- the delta (inserts after the build), deleted and updated rows
INSERT INTO pji SELECT g % 800, (g % 1200)::bigint * 1000, 'key' || (g % 650), date '2020-01-01' + g % 350, -g
  FROM generate_series(1, 2500) g;
DELETE FROM pji WHERE w % 11 = 0;
UPDATE pji SET k = k + 1 WHERE w % 13 = 0;
SELECT * FROM pj_battery() WHERE batch_1024 !~ 'same' OR batch_7 !~ 'same' OR no_mirror !~ 'same';
SELECT count(*) AS battery_ok FROM pj_battery() WHERE batch_1024 ~ 'same' AND batch_7 ~ 'same' AND no_mirror ~ 'same';
VACUUM pji;
SELECT count(*) AS battery_ok FROM pj_battery() WHERE batch_1024 ~ 'same' AND batch_7 ~ 'same' AND no_mirror ~ 'same';

-- rescans: the join in a correlated subquery, run again for each outer row
SELECT pj_same('SELECT z.g, (SELECT sum(i.w) FROM pjo o JOIN pji i ON i.k = o.a WHERE o.x % 100 = z.g) FROM generate_series(1, 5) z(g)');
EXPLAIN (COSTS OFF) SELECT z.g, (SELECT sum(i.w) FROM pjo o JOIN pji i ON i.k = o.a WHERE o.x % 100 = z.g) FROM generate_series(1, 5) z(g);

-- not offered: operators outside the operator family (int4 column, int8
-- outer), outer joins, row locks, UPDATE ... FROM, when disabled
SELECT pj_same('SELECT o.x, i.w FROM pjo o JOIN pji i ON i.k = o.a8');
SELECT pj_same('SELECT o.x, i.w FROM pjo o JOIN pji i ON i.k < o.a AND i.k > o.a - 2');
EXPLAIN (COSTS OFF) SELECT o.x, i.w FROM pjo o LEFT JOIN pji i ON i.k = o.a;
EXPLAIN (COSTS OFF) SELECT o.x, i.w FROM pjo o JOIN pji i ON i.k = o.a FOR UPDATE OF i;
EXPLAIN (COSTS OFF) UPDATE pjo o SET x = o.x FROM pji i WHERE i.k = o.a;
SET gpuext.enable_ptree_join = off;
EXPLAIN (COSTS OFF) SELECT o.x, i.w FROM pjo o JOIN pji i ON i.k = o.a;
RESET gpuext.enable_ptree_join;
-- bounds of the batch size
SET gpuext.ptree_join_batch = 0;
SET gpuext.ptree_join_batch = 1000001;

-- where the lookups run: on the GPU when there is one, for lookups of
-- gpuext.ptree_gpu_batch_min keys or more (any with force_offload), else
-- on the CPU engine (also when gpuext.device = gpu finds no GPU and
-- cpu_fallback is on); the same rows on every engine
SET gpuext.ptree_gpu_batch_min = 1;
SELECT pj_same('SELECT o.x, i.w FROM pjo o JOIN pji i ON i.k = o.a');
SELECT pj_same('SELECT o.x, i.w FROM pjo o JOIN pji i ON i.t = o.s');
SET gpuext.device = gpu;
SELECT pj_same('SELECT o.x, i.w FROM pjo o JOIN pji i ON i.b = o.a8');
RESET gpuext.device;
SET gpuext.ptree_gpu_batch_min = 0;
SELECT pj_same('SELECT o.x, i.w FROM pjo o JOIN pji i ON i.k = o.a');
SET gpuext.ptree_gpu_batch_min = 100000;
SET gpuext.force_offload = on;
SELECT pj_same('SELECT o.x, i.w FROM pjo o JOIN pji i ON i.d = o.e');
RESET gpuext.force_offload;
-- = ANY through the index and as a sequential scan
SET gpuext.ptree_gpu_batch_min = 1;
SET enable_seqscan = off;
SELECT count(*), sum(w) FROM pji WHERE k = ANY(ARRAY(SELECT generate_series(-5, 900, 3)));
SET enable_seqscan = on;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(w) FROM pji WHERE k = ANY(ARRAY(SELECT generate_series(-5, 900, 3)));
RESET enable_indexscan;
RESET enable_bitmapscan;
RESET gpuext.ptree_gpu_batch_min;
-- EXPLAIN ANALYZE: batches and probes (the engine and its batches, shown
-- otherwise, are hidden by gpuext.regression_test_mode)
SET gpuext.regression_test_mode = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT o.x, i.w FROM pjo o JOIN pji i ON i.k = o.a;
RESET gpuext.regression_test_mode;
SET gpuext.ptree_gpu_batch_min = -1;

-- parallel: the workers of a Gather share the outer rows, each probing its
-- own batches in the leader's mirror (mapped), or, without a mirror (over
-- the cap), walking the pages; every outer row probed once
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT o.x, i.w FROM pjo o JOIN pji i ON i.k = o.a;
CREATE FUNCTION pj_probes(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO plan;
  RETURN (SELECT (x->>'Probes')::bigint FROM jsonb_path_query(plan::jsonb, 'strict $.**') x
          WHERE jsonb_typeof(x) = 'object' AND x->>'Custom Plan Provider' = 'PtreeBatchJoin');
END $$;
SELECT pj_probes('SELECT o.x, i.w FROM pjo o JOIN pji i ON i.k = o.a') AS probes;
SELECT * FROM pj_battery() WHERE batch_1024 !~ 'same' OR batch_7 !~ 'same' OR no_mirror !~ 'same';
SELECT count(*) AS parallel_battery_ok FROM pj_battery()
  WHERE batch_1024 ~ 'same' AND batch_7 ~ 'same' AND no_mirror ~ 'same';
SELECT pj_same('SELECT o.x, i.w FROM pjo o JOIN pji i ON i.t = o.s');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

DROP TABLE pji, pjo;
DROP FUNCTION pj_battery(), pj_same(text), pj_probes(text);
