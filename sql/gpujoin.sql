--
-- GpuJoin: hash joins of a scanned table with inner relations, compared
-- with stock PostgreSQL (gpuext.enabled = off) as multisets of rows.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;

-- gj_diff(query): run the query offloaded (gpuext.force_offload = on; the
-- plan must show a GpuJoin, else 'not offloaded'), then on stock
-- PostgreSQL, and compare the rows as multisets of their text images
-- (EXCEPT ALL both ways).  Returns 'ok N rows', 'MISMATCH ...',
-- 'error SQLSTATE both (message)' or 'ERROR MISMATCH ...'.
CREATE FUNCTION gj_diff(q text) RETURNS text
LANGUAGE plpgsql
SET gpuext.force_offload = on
SET gpuext.enabled = on
SET gpuext.enable_gpuagg = off
AS $fn$
DECLARE
  agg text := 'SELECT coalesce(array_agg(gx_r::text), ''{}'') FROM (' || q || ') AS gx_r';
  line text;
  offloaded bool := false;
  r_on text[];
  r_off text[];
  st_on text;
  st_off text;
  msg_on text;
  msg_off text;
  only_on text[];
  only_off text[];
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || agg LOOP
    IF line LIKE '%GpuJoin%' THEN
      offloaded := true;
    END IF;
  END LOOP;
  IF NOT offloaded THEN
    RETURN 'not offloaded';
  END IF;
  BEGIN
    EXECUTE agg INTO r_on;
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st_on = RETURNED_SQLSTATE, msg_on = MESSAGE_TEXT;
  END;
  PERFORM set_config('gpuext.enabled', 'off', true);
  BEGIN
    EXECUTE agg INTO r_off;
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st_off = RETURNED_SQLSTATE, msg_off = MESSAGE_TEXT;
  END;
  IF st_on IS NOT NULL OR st_off IS NOT NULL THEN
    IF st_on IS NOT DISTINCT FROM st_off AND msg_on IS NOT DISTINCT FROM msg_off THEN
      RETURN format('error %s both (%s)', st_on, msg_on);
    END IF;
    RETURN format('ERROR MISMATCH: offloaded %s, stock %s',
                  coalesce(st_on || ' (' || msg_on || ')', 'no error'),
                  coalesce(st_off || ' (' || msg_off || ')', 'no error'));
  END IF;
  SELECT coalesce(array_agg(x ORDER BY x COLLATE "C"), '{}') INTO only_on
    FROM (SELECT unnest(r_on) EXCEPT ALL SELECT unnest(r_off)) AS d(x);
  SELECT coalesce(array_agg(x ORDER BY x COLLATE "C"), '{}') INTO only_off
    FROM (SELECT unnest(r_off) EXCEPT ALL SELECT unnest(r_on)) AS d(x);
  IF cardinality(only_on) = 0 AND cardinality(only_off) = 0 THEN
    RETURN format('ok %s rows', cardinality(r_on));
  END IF;
  RETURN format('MISMATCH: offloaded %s rows, stock %s rows; only offloaded: %s; only stock: %s',
                cardinality(r_on), cardinality(r_off),
                array_to_string(only_on[1:5], ' '), array_to_string(only_off[1:5], ' '));
END;
$fn$;

-- gj_plan(query): EXPLAIN (COSTS OFF) as gj_diff plans its offloaded run
CREATE FUNCTION gj_plan(q text) RETURNS SETOF text
LANGUAGE plpgsql
SET gpuext.force_offload = on
SET gpuext.enabled = on
SET gpuext.enable_gpuagg = off
SET gpuext.regression_test_mode = on
AS $fn$
BEGIN
  RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q;
END;
$fn$;

-- the outer (fact) table: NULLs, duplicates, 0, every key type
CREATE TABLE gj_fact (id int, a int4, b int8, s int2, c text, bp char(4),
                      x float8, y float4, n numeric, dt date, ts timestamp, flag bool);
INSERT INTO gj_fact
SELECT g,
       CASE WHEN g % 13 = 0 THEN NULL ELSE g % 100 END,
       CASE WHEN g % 17 = 0 THEN NULL ELSE (g % 37)::int8 END,
       (g % 7)::int2,
       CASE WHEN g % 19 = 0 THEN NULL ELSE 'k' || (g % 50) END,
       CASE WHEN g % 23 = 0 THEN NULL ELSE (g % 9)::text END,
       CASE WHEN g % 29 = 0 THEN NULL WHEN g % 31 = 0 THEN -0.0::float8
            WHEN g % 37 = 0 THEN 'NaN' ELSE (g % 10)::float8 / 2 END,
       (g % 10)::float4 / 2,
       CASE WHEN g % 41 = 0 THEN NULL ELSE (g % 20)::numeric / 4 END,
       date '2020-01-01' + g % 30,
       timestamp '2020-01-01 00:00' + (g % 24) * interval '1 hour',
       g % 3 = 0
FROM generate_series(1, 6000) g;
INSERT INTO gj_fact VALUES (0, 0, 0, 0, '', '', 0, 0, 0, date '2020-01-01',
                            timestamp '2020-01-01', false);
-- values the device cannot decode (compressed text, numeric NaN): rechecked on the host
INSERT INTO gj_fact (id, a, b, c, n) VALUES
  (7001, 5, 5, repeat('k1', 3000), 'NaN'), (7002, 6, 6, 'k2', 1e40);

-- inner tables
CREATE TABLE gj_dim1 (k int4, name text);
INSERT INTO gj_dim1 SELECT g, 'd1_' || g FROM generate_series(0, 80) g;
INSERT INTO gj_dim1 VALUES (5, 'dup5a'), (5, 'dup5b'), (NULL, 'nullkey'), (0, 'zero2');
CREATE TABLE gj_dim2 (k int8, c text, v int);
INSERT INTO gj_dim2 SELECT g, 'k' || g, g * 10 FROM generate_series(0, 30) g;
INSERT INTO gj_dim2 VALUES (3, 'k3', 31), (NULL, NULL, 0);
CREATE TABLE gj_dim3 (s int2, label text);
INSERT INTO gj_dim3 SELECT g, 'd3_' || g FROM generate_series(0, 5) g;
CREATE TABLE gj_dimf (f float8, y float4, label text);
INSERT INTO gj_dimf VALUES (0, 0, 'zero'), (-0.0, -0.0, 'negzero'), ('NaN', 'NaN', 'nan'),
  (1.5, 1.5, 'one.five'), (2, 2, 'two'), (NULL, NULL, 'null');
CREATE TABLE gj_dimn (n numeric, label text);
INSERT INTO gj_dimn VALUES (0, 'zero'), (0.00, 'zero2'), (1.25, 'a'), (1.250, 'a2'),
  (2.5, 'b'), ('NaN', 'nan'), (1e40, 'huge'), (NULL, 'null');
CREATE TABLE gj_dimt (c varchar, bp char(6), label text);
INSERT INTO gj_dimt VALUES ('k1', '1', 'one'), ('k2', '2  ', 'two'), ('k1', '1 ', 'one again'),
  ('', '', 'empty'), ('K1', '9', 'upper'), (repeat('k1', 3000), '3', 'long');
CREATE TABLE gj_dimd (dt date, ts timestamp, flag bool, label text);
INSERT INTO gj_dimd SELECT date '2020-01-01' + g, timestamp '2020-01-01' + g * interval '1 hour',
                           g % 2 = 0, 'd' || g FROM generate_series(0, 10) g;
CREATE TABLE gj_empty (k int, v text);
ANALYZE gj_fact, gj_dim1, gj_dim2, gj_dim3, gj_dimf, gj_dimn, gj_dimt, gj_dimd, gj_empty;

-- small batches: many batches per scan
SET gpuext.max_batch_pages = 4;

-- plans
SELECT * FROM gj_plan('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT * FROM gj_plan('SELECT f.id FROM gj_fact f LEFT JOIN gj_dim1 d ON f.a = d.k WHERE f.id > 10');
SELECT * FROM gj_plan('SELECT f.id, d1.name, d2.c, d3.label FROM gj_fact f
  JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k LEFT JOIN gj_dim3 d3 ON f.s = d3.s');

-- inner joins
SELECT gj_diff('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT gj_diff('SELECT f.*, d.* FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id % 3 = 1');
SELECT gj_diff('SELECT f.id, d.v FROM gj_fact f JOIN gj_dim2 d ON f.b = d.k');
-- cross-type keys: int4 = int8, int2 = int4, int2 = int8, float4 = float8
SELECT gj_diff('SELECT f.id, d.c FROM gj_fact f JOIN gj_dim2 d ON f.a = d.k');
SELECT gj_diff('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.s = d.k');
SELECT gj_diff('SELECT f.id, d.c FROM gj_fact f JOIN gj_dim2 d ON f.s = d.k');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimf d ON f.y = d.f');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimf d ON f.x = d.f');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimf d ON f.x = d.y');
-- numeric (scales, NaN, beyond 128 bits), text, varchar, bpchar, date, timestamp, bool
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimn d ON f.n = d.n');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimt d ON f.c = d.c');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimt d ON f.bp = d.bp');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimd d ON f.dt = d.dt');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimd d ON f.ts = d.ts');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f JOIN gj_dimd d ON f.flag = d.flag AND f.dt = d.dt');
-- expressions as keys, several keys, other join quals (host filter)
SELECT gj_diff('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a + 1 = d.k');
SELECT gj_diff('SELECT f.id, d.v FROM gj_fact f JOIN gj_dim2 d ON f.b = d.k AND f.c = d.c');
SELECT gj_diff('SELECT f.id, d.v FROM gj_fact f JOIN gj_dim2 d ON f.b = d.k AND f.id < d.v * 100');
SELECT gj_diff('SELECT f.id, d.v FROM gj_fact f JOIN gj_dim2 d ON f.b = d.k + 1');
-- scan quals on the device and on the host
SELECT gj_diff('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.x > 1 AND f.c LIKE ''k1%''');
SELECT gj_diff('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE md5(f.c) < ''8''');
-- left, semi, anti
SELECT gj_diff('SELECT f.id, d.name FROM gj_fact f LEFT JOIN gj_dim1 d ON f.a = d.k');
SELECT gj_diff('SELECT f.id, d.label FROM gj_fact f LEFT JOIN gj_dimn d ON f.n = d.n');
SELECT gj_diff('SELECT f.id, d.v FROM gj_fact f LEFT JOIN gj_dim2 d ON f.b = d.k WHERE coalesce(d.v, -1) < 100');
SELECT gj_diff('SELECT f.id FROM gj_fact f WHERE EXISTS (SELECT 1 FROM gj_dim1 d WHERE d.k = f.a)');
SELECT gj_diff('SELECT f.id FROM gj_fact f WHERE f.c IN (SELECT c FROM gj_dimt)');
SELECT gj_diff('SELECT f.id FROM gj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_dim1 d WHERE d.k = f.a)');
SELECT gj_diff('SELECT f.id FROM gj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_dimn d WHERE d.n = f.n)');
-- depth 2 and 3: each row probes every inner relation in one pass
SELECT gj_diff('SELECT f.id, d1.name, d2.c FROM gj_fact f JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k');
SELECT gj_diff('SELECT f.id, d1.name, d2.c, d3.label FROM gj_fact f
  JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k LEFT JOIN gj_dim3 d3 ON f.s = d3.s');
SELECT gj_diff('SELECT f.id, d1.name FROM gj_fact f LEFT JOIN gj_dim1 d1 ON f.a = d1.k
  WHERE NOT EXISTS (SELECT 1 FROM gj_dim2 d2 WHERE d2.k = f.b) AND EXISTS (SELECT 1 FROM gj_dim3 d3 WHERE d3.s = f.s)');
SELECT gj_diff('SELECT f.id, d1.name, d2.v FROM gj_fact f JOIN gj_dim1 d1 ON f.a = d1.k
  JOIN gj_dim2 d2 ON f.b = d2.k AND d1.k < d2.v');
-- duplicate-heavy keys: every inner row has one of 3 keys
CREATE TABLE gj_dups AS SELECT g % 3 AS k, g AS v FROM generate_series(1, 600) g;
ANALYZE gj_dups;
SELECT gj_diff('SELECT f.id, d.v FROM gj_fact f JOIN gj_dups d ON f.s = d.k WHERE f.id < 1000');
SELECT gj_diff('SELECT f.id, d.v, d2.v FROM gj_fact f JOIN gj_dups d ON f.s = d.k JOIN gj_dups d2 ON f.a = d2.k WHERE f.id < 300');
SELECT gj_diff('SELECT f.id FROM gj_fact f WHERE f.s IN (SELECT k FROM gj_dups)');
-- empty inner, empty outer
SELECT gj_diff('SELECT f.id, e.v FROM gj_fact f JOIN gj_empty e ON f.a = e.k');
SELECT gj_diff('SELECT f.id, e.v FROM gj_fact f LEFT JOIN gj_empty e ON f.a = e.k');
SELECT gj_diff('SELECT f.id FROM gj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_empty e WHERE e.k = f.a)');
SELECT gj_diff('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id < 0');
-- an empty scanned table: the inner plans do not run (nor raise their errors), as in PostgreSQL
SELECT * FROM gj_plan('SELECT e.v, x.z FROM gj_empty e JOIN (SELECT k, 1 / (k - k) AS z FROM gj_dim1 OFFSET 0) x ON e.k = x.k');
SELECT gj_diff('SELECT e.v, x.z FROM gj_empty e JOIN (SELECT k, 1 / (k - k) AS z FROM gj_dim1 OFFSET 0) x ON e.k = x.k');
-- an inner side that is itself a join, an aggregate, a subquery
SELECT gj_diff('SELECT f.id, x.name, x.v FROM gj_fact f
  JOIN (SELECT d1.k, d1.name, d2.v FROM gj_dim1 d1 JOIN gj_dim2 d2 ON d1.k = d2.v) x ON f.a = x.k');
SELECT gj_diff('SELECT f.id, x.cnt FROM gj_fact f JOIN (SELECT k, count(*) AS cnt FROM gj_dim1 GROUP BY k) x ON f.a = x.k');
-- errors keep PostgreSQL's SQLSTATE and message (rows rechecked on the host)
SELECT gj_diff('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE 100 / (f.id - 50) > 0');

-- prepared statements, generic plans: Params in scan quals
SET plan_cache_mode = force_generic_plan;
SET gpuext.force_offload = on;
PREPARE gj_p(int, int) AS
  SELECT count(*), sum(f.id), count(d.name) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k
   WHERE f.id > $1 AND f.a < $2;
EXECUTE gj_p(100, 50);
EXECUTE gj_p(5000, 10);
SET gpuext.enabled = off;
EXECUTE gj_p(100, 50);
EXECUTE gj_p(5000, 10);
RESET gpuext.enabled;
DEALLOCATE gj_p;
RESET plan_cache_mode;

-- rescans with new parameter values: correlated subqueries
SELECT gj_diff('SELECT o.k, (SELECT count(*) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.b = o.k)
  FROM gj_dim2 o');
SELECT gj_diff('SELECT o.s, (SELECT count(*) FROM gj_fact f JOIN gj_dim2 d ON f.b = d.k AND d.v > o.s * 10)
  FROM gj_dim3 o');

-- EXPLAIN ANALYZE: rows per depth
SET gpuext.enable_gpuagg = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT f.id, d1.name, d2.c FROM gj_fact f JOIN gj_dim1 d1 ON f.a = d1.k LEFT JOIN gj_dim2 d2 ON f.b = d2.k
 WHERE f.id <= 1000;

-- an inner side larger than gpuext.gpu_memory_limit: kept in host memory, same rows
CREATE TABLE gj_bigdim AS SELECT g AS k, g % 97 AS v FROM generate_series(1, 60000) g;
ANALYZE gj_bigdim;
SET gpuext.gpu_memory_limit = '1MB';
SELECT gj_diff('SELECT f.id, b.v FROM gj_fact f LEFT JOIN gj_bigdim b ON f.id = b.k');
SELECT gj_diff('SELECT f.id FROM gj_fact f WHERE f.a IN (SELECT v FROM gj_bigdim)');
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(b.v) FROM gj_fact f LEFT JOIN gj_bigdim b ON f.id = b.k;
RESET gpuext.gpu_memory_limit;
RESET gpuext.force_offload;

-- parallel query: workers share the outer scan, the leader builds the inner
-- tables for all (more in gpujoin_parallel)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT * FROM gj_plan('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT gj_diff('SELECT f.id, d.name FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k');
SELECT * FROM gj_plan('SELECT f.id, d1.name, d2.v FROM gj_fact f LEFT JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k');
SELECT gj_diff('SELECT f.id, d1.name, d2.v FROM gj_fact f LEFT JOIN gj_dim1 d1 ON f.a = d1.k JOIN gj_dim2 d2 ON f.b = d2.k');
SELECT gj_diff('SELECT f.id FROM gj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_dimn d WHERE d.n = f.n)');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- not offloaded: full joins; left joins with a non-key join clause
SELECT gj_diff('SELECT f.id, d.name FROM gj_fact f FULL JOIN gj_dim1 d ON f.a = d.k');
SELECT gj_diff('SELECT f.id, d.v FROM gj_fact f LEFT JOIN gj_dim2 d ON f.b = d.k AND f.id < d.v');
RESET gpuext.max_batch_pages;

--
-- GpuAgg over GpuJoin: the scan, the join and the aggregation in one node
-- (group keys and aggregate inputs from the scanned table), only groups
-- come back.  gj_agg_diff compares with stock PostgreSQL as gj_diff does,
-- and requires a GpuAgg with the join fused into it.
--
CREATE FUNCTION gj_agg_diff(q text) RETURNS text
LANGUAGE plpgsql
SET gpuext.force_offload = on
SET gpuext.enabled = on
AS $fn$
DECLARE
  line text;
  fused bool := false;
  r_on text[];
  r_off text[];
  only_on text[];
  only_off text[];
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line LIKE 'Custom Scan (GpuAgg)%' THEN
      fused := true;
    END IF;
    IF line LIKE '%Depth 1:%' AND fused THEN
      EXECUTE 'SELECT coalesce(array_agg(r::text), ''{}'') FROM (' || q || ') r' INTO r_on;
      PERFORM set_config('gpuext.enabled', 'off', true);
      EXECUTE 'SELECT coalesce(array_agg(r::text), ''{}'') FROM (' || q || ') r' INTO r_off;
      SELECT coalesce(array_agg(x ORDER BY x COLLATE "C"), '{}') INTO only_on
        FROM (SELECT unnest(r_on) EXCEPT ALL SELECT unnest(r_off)) AS d(x);
      SELECT coalesce(array_agg(x ORDER BY x COLLATE "C"), '{}') INTO only_off
        FROM (SELECT unnest(r_off) EXCEPT ALL SELECT unnest(r_on)) AS d(x);
      IF cardinality(only_on) = 0 AND cardinality(only_off) = 0 THEN
        RETURN format('ok %s groups', cardinality(r_on));
      END IF;
      RETURN format('MISMATCH: only offloaded: %s; only stock: %s',
                    array_to_string(only_on[1:5], ' '), array_to_string(only_off[1:5], ' '));
    END IF;
  END LOOP;
  RETURN 'not fused';
END;
$fn$;

RESET gpuext.enable_gpuagg;
SET gpuext.max_batch_pages = 4;
SET gpuext.force_offload = on;
EXPLAIN (COSTS OFF)
SELECT f.s, count(*), sum(f.b) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY f.s;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*), sum(f.id) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k JOIN gj_dim2 d2 ON f.b = d2.k
 WHERE f.id > 100;
RESET gpuext.force_offload;
-- duplicate inner keys multiply a row's contributions
SELECT gj_agg_diff('SELECT f.s, count(*), sum(f.b), min(f.id), max(f.id), avg(f.a) FROM gj_fact f
  JOIN gj_dim1 d ON f.a = d.k GROUP BY f.s');
SELECT gj_agg_diff('SELECT count(*), count(f.c), sum(f.n) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k
  JOIN gj_dim2 d2 ON f.b = d2.k WHERE f.id % 5 <> 0');
SELECT gj_agg_diff('SELECT f.c, count(*) FROM gj_fact f JOIN gj_dimt d ON f.c = d.c GROUP BY f.c');
SELECT gj_agg_diff('SELECT f.s, count(*), sum(f.id) FROM gj_fact f JOIN gj_dups d ON f.s = d.k GROUP BY f.s');
-- (an expression of an inner column as group key: not fused)
SELECT gj_agg_diff('SELECT d.v % 7, count(*), sum(f.id) FROM gj_fact f JOIN gj_dups d ON f.s = d.k GROUP BY d.v % 7');
-- left, semi, anti
SELECT gj_agg_diff('SELECT f.s, count(*), sum(f.a) FROM gj_fact f LEFT JOIN gj_dim1 d ON f.a = d.k GROUP BY f.s');
SELECT gj_agg_diff('SELECT f.dt, count(*) FROM gj_fact f WHERE EXISTS (SELECT 1 FROM gj_dim1 d WHERE d.k = f.a) GROUP BY f.dt');
SELECT gj_agg_diff('SELECT count(*), sum(f.b) FROM gj_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_dim2 d WHERE d.k = f.b)');
-- HAVING, expressions of keys
SELECT gj_agg_diff('SELECT f.a % 7 AS g, count(*) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k
  GROUP BY f.a % 7 HAVING count(*) > 500');
-- empty inner; an outer side estimated empty is hashed instead (not fused)
SELECT gj_agg_diff('SELECT count(*), sum(f.a) FROM gj_fact f JOIN gj_empty e ON f.a = e.k');
SELECT gj_agg_diff('SELECT f.s, count(*) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id < 0 GROUP BY f.s');
SELECT gj_diff('SELECT f.s, count(*) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id < 0 GROUP BY f.s');
-- an inner key the device cannot hold (numeric NaN): PostgreSQL's plan, same result
SELECT gj_agg_diff('SELECT count(*), sum(f.a) FROM gj_fact f JOIN gj_dimn d ON f.n = d.n');
SET gpuext.force_offload = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM gj_fact f JOIN gj_dimn d ON f.n = d.n;
RESET gpuext.force_offload;
-- group keys from inner relations: stored with the inner rows, loaded for
-- each joined row (every combination of duplicate keys is a joined row)
SET gpuext.force_offload = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT d.name, count(*), sum(f.b) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY d.name;
RESET gpuext.force_offload;
SELECT gj_agg_diff('SELECT d.name, count(*), sum(f.b) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY d.name');
SELECT gj_agg_diff('SELECT d1.name, d2.c, f.s, count(*), sum(f.id) FROM gj_fact f JOIN gj_dim1 d1 ON f.a = d1.k
  LEFT JOIN gj_dim2 d2 ON f.b = d2.k GROUP BY d1.name, d2.c, f.s');
SELECT gj_agg_diff('SELECT d2.v, d3.label, count(*) FROM gj_fact f JOIN gj_dim2 d2 ON f.b = d2.k
  JOIN gj_dim3 d3 ON f.s = d3.s GROUP BY d2.v, d3.label HAVING count(*) > 10');
SELECT gj_agg_diff('SELECT d.f, d.label, count(*), sum(f.a) FROM gj_fact f JOIN gj_dimf d ON f.x = d.f GROUP BY d.f, d.label');
SELECT gj_agg_diff('SELECT d.dt, d.ts, d.flag, count(*) FROM gj_fact f JOIN gj_dimd d ON f.dt = d.dt GROUP BY d.dt, d.ts, d.flag');
SELECT gj_agg_diff('SELECT d.bp, d.c, count(*) FROM gj_fact f JOIN gj_dimt d ON f.bp = d.bp GROUP BY d.bp, d.c');
SELECT gj_agg_diff('SELECT d.n, count(*), sum(f.n) FROM gj_fact f JOIN gj_dimn d ON f.n = d.n
  WHERE d.n IN (0.25, 2.5, 5) GROUP BY d.n');
SELECT gj_agg_diff('SELECT d.label, count(*) FROM gj_fact f JOIN gj_dimn d ON f.a = d.n GROUP BY d.label');
-- aggregate inputs from inner relations too (NULL for unmatched left rows)
SELECT gj_agg_diff('SELECT f.s, sum(d.v), avg(d.v), count(d.c), min(d.v), max(d.k) FROM gj_fact f
  JOIN gj_dim2 d ON f.b = d.k GROUP BY f.s');
SELECT gj_agg_diff('SELECT d1.name, sum(d2.v), count(d2.c), count(*) FROM gj_fact f JOIN gj_dim1 d1 ON f.a = d1.k
  LEFT JOIN gj_dim2 d2 ON f.b = d2.k GROUP BY d1.name');
SELECT gj_agg_diff('SELECT sum(d.n), count(*) FROM gj_fact f JOIN gj_dimn d ON f.n = d.n WHERE d.n IN (0.25, 2.5, 1.25)');
SELECT gj_agg_diff('SELECT d.f, avg(d.y), count(*) FROM gj_fact f JOIN gj_dimf d ON f.x = d.f GROUP BY d.f');
-- a key over columns of two relations: not fused (the join still is a GpuJoin)
SELECT gj_agg_diff('SELECT d.k + f.s, count(*) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k GROUP BY d.k + f.s');
-- rescans and generic plans
SELECT gj_diff('SELECT o.k, (SELECT count(*) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.b = o.k)
  FROM gj_dim2 o');
SET plan_cache_mode = force_generic_plan;
SET gpuext.force_offload = on;
PREPARE gj_q(int) AS
  SELECT f.s, count(*), sum(f.id) FROM gj_fact f JOIN gj_dim1 d ON f.a = d.k WHERE f.id > $1
   GROUP BY f.s ORDER BY f.s;
EXECUTE gj_q(1000);
EXECUTE gj_q(5990);
SET gpuext.enabled = off;
EXECUTE gj_q(1000);
EXECUTE gj_q(5990);
RESET gpuext.enabled;
DEALLOCATE gj_q;
RESET plan_cache_mode;
RESET gpuext.force_offload;
RESET gpuext.max_batch_pages;
