--
-- GpuScan execution: partial pushdown, plan shapes, rescans, cursors,
-- LIMIT, prepared statements, parallel query, system columns, dropped and
-- added columns, TOASTed values, empty tables, DML, visibility.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
-- GpuScan alone (GpuAgg, aggregation fused with the scan, has its own tests)
SET gpuext.enable_gpuagg = off;

--
-- partial pushdown: quals the device cannot run stay host quals of the
-- same node ("Filter:"), the others run on the device ("GPU Filter:")
--
SELECT * FROM gx_plan($$SELECT id FROM gx_ints WHERE i4 > 0 AND md5(id::text) LIKE 'a%'$$);
SELECT * FROM gx_plan($$SELECT id FROM gx_ints WHERE i4 > 0 AND random() < 2 AND i2 < 0$$);
SELECT * FROM gx_plan($$SELECT id FROM gx_ints WHERE i4 > 0 AND (i2 < 0 OR md5(id::text) LIKE 'a%')$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > 0 AND md5(id::text) LIKE 'a%'$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > 0 AND random() < 2 AND i2 < 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > 0 AND (i2 < 0 OR md5(id::text) LIKE 'a%')$$);
SELECT gx_diff($$SELECT id, md5(id::text) FROM gx_ints WHERE md5(id::text) > md5(i4::text) AND i8 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t LIKE 'str1%' AND length(t) = 5 AND upper(t) = 'STR12'$$);
-- no device qual at all: no GpuScan
SELECT * FROM gx_plan($$SELECT id FROM gx_ints WHERE md5(id::text) LIKE 'a%'$$);
SELECT * FROM gx_plan($$SELECT id FROM gx_ints$$);
SELECT * FROM gx_where($$SELECT id FROM gx_ints WHERE md5(id::text) LIKE 'a%' OR i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE md5(id::text) LIKE 'a%' OR i4 > 0$$);
-- a qual too big for the device's registers stays on the host
SELECT * FROM gx_where($$SELECT id FROM gx_ints WHERE i4 + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 14 + 15 + 16 + 17 + 18 > 0 AND i2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 14 + 15 + 16 + 17 + 18 > 0 AND i2 > 0$$);
-- many device quals in one program
SELECT gx_diff($$SELECT id FROM gx_wide WHERE b IS NOT NULL AND t LIKE 't%' AND i2 > 10 AND n > 1 AND f8 > 1 AND c <> 'a' AND d > '2020-02-01' AND i8 > 0 AND vc LIKE 'v%' AND f4 > 1 AND ts > '2020-01-02' AND i4 > 3 AND tz > '2020-01-01' AND n2 > 1 AND last LIKE 'last%'$$);

--
-- EXPLAIN: regression_test_mode hides the engine, so the output is the
-- same on any machine; EXPLAIN ANALYZE counts pages and rechecked rows
--
SET gpuext.force_offload = on;
EXPLAIN (COSTS OFF) SELECT id FROM gx_ints WHERE i4 > 0 AND md5(id::text) LIKE 'a%';
EXPLAIN (COSTS OFF, VERBOSE) SELECT id, i2 FROM gx_ints WHERE i4 > 0;
EXPLAIN (COSTS OFF) SELECT a.id FROM gx_ints a JOIN gx_floats b USING (id) WHERE a.i4 > 0 AND b.f8 < 0;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM gx_ints WHERE i4 > 0 AND i2 < 0;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM gx_ints WHERE i4 > 0 AND md5(id::text) LIKE 'a%';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) SELECT id FROM gx_floats WHERE f4 > 0;
-- without regression_test_mode EXPLAIN names the engine
CREATE FUNCTION gx_engine_lines() RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE l text; n bigint := 0;
BEGIN
  FOR l IN EXPLAIN (COSTS OFF) SELECT id FROM gx_ints WHERE i4 > 0 LOOP
    IF l ~ 'Engine: (GPU|CPU engine)$' THEN n := n + 1; END IF;
  END LOOP;
  RETURN n;
END $fn$;
SET gpuext.regression_test_mode = off;
SELECT gx_engine_lines();
SET gpuext.regression_test_mode = on;
SELECT gx_engine_lines();
DROP FUNCTION gx_engine_lines();
RESET gpuext.force_offload;

--
-- batch sizes: one page per batch, a few pages, the default
--
SET gpuext.max_batch_pages = 1;
SELECT gx_diff($$SELECT id, i2 FROM gx_ints WHERE i2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE t LIKE '%1%' AND vc LIKE '%2%'$$);
SET gpuext.max_batch_pages = 3;
SELECT gx_diff($$SELECT id, i2 FROM gx_ints WHERE i2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE t LIKE '%1%' AND vc LIKE '%2%'$$);
RESET gpuext.max_batch_pages;
SELECT gx_diff($$SELECT id, i2 FROM gx_ints WHERE i2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE t LIKE '%1%' AND vc LIKE '%2%'$$);

--
-- tuples with NULLs in changing places, short and long varlenas: every
-- column of gx_wide, read by the device after all the others
--
SELECT gx_diff($$SELECT id FROM gx_wide WHERE b$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE t LIKE 't1%' OR t LIKE 'ttt%'$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE i2 % 3 = 0$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE n * 4 = id$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE f8 * 2 = id$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE c = 'q'$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE d - '2020-01-01'::date = id % 400$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE i8 = id * 1000000007::int8$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE vc LIKE 'vvvv%' OR vc LIKE 'v2_'$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE f4 * 8 = id$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE ts > '2020-03-01'$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE i4 = id * 3$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE tz < '2020-03-01 00:00+00'$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE n2 > 500$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE last LIKE 'last1_'$$);
SELECT gx_diff($$SELECT id FROM gx_wide WHERE last IS NULL AND i4 IS NULL$$);
SELECT gx_diff($$SELECT * FROM gx_wide WHERE last LIKE 'last1%' AND b IS NOT NULL$$);

-- columns of types the device does not read (fixed-length of various
-- sizes and alignments, varlenas, a domain) before the columns it reads
CREATE DOMAIN gx_posint AS int CHECK (VALUE > 0);
CREATE TABLE gx_odd (u uuid, iv interval, nm name, tt timetz, pt point, by bytea, js jsonb,
                     ch "char", mo money, dm gx_posint, k int, s text);
INSERT INTO gx_odd
SELECT md5(g::text)::uuid, g * interval '1 min', 'n' || g, '12:00+02'::timetz, point(g, g),
       decode(md5(g::text), 'hex'), jsonb_build_object('a', g), 'x', g, g, g, 's' || g
  FROM generate_series(1, 3000) g;
ANALYZE gx_odd;
SELECT * FROM gx_where($$SELECT k FROM gx_odd WHERE k % 7 = 0 AND dm > 100 AND s LIKE 's1%'$$);
SELECT gx_diff($$SELECT k FROM gx_odd WHERE k % 7 = 0 AND dm > 100 AND s LIKE 's1%'$$);
SELECT gx_diff($$SELECT * FROM gx_odd WHERE dm > 2990 OR s = 's7'$$);
DROP TABLE gx_odd;
DROP DOMAIN gx_posint;

--
-- rescans: GpuScan on the inner side of a nested loop
--
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_memoize = off;
-- plain rescans, no parameters (a nested loop keeps the nullable side of
-- a LEFT JOIN inner)
SELECT * FROM gx_plan($$SELECT s.x, i.id FROM (VALUES (1), (2), (3), (4)) s(x) LEFT JOIN gx_ints i ON i.i2 = s.x * 100 AND i.i4 > 0$$);
SELECT gx_diff($$SELECT s.x, i.id FROM (VALUES (1), (2), (3), (4)) s(x) LEFT JOIN gx_ints i ON i.i2 = s.x * 100 AND i.i4 > 0$$);
-- with a parameter from the outer side (LATERAL), and from a correlated subquery
SELECT * FROM gx_plan($$SELECT o.id, s.c FROM gx_intx o, LATERAL (SELECT count(*) c FROM gx_ints i WHERE i.i2 < o.i2) s WHERE o.i4 = 0 AND o.i8 = 0$$);
SELECT gx_diff($$SELECT o.id, s.c FROM gx_intx o, LATERAL (SELECT count(*) c FROM gx_ints i WHERE i.i2 < o.i2) s WHERE o.i4 = 0 AND o.i8 = 0$$);
SELECT gx_diff($$SELECT o.id, s.c FROM gx_intx o, LATERAL (SELECT count(*) c FROM gx_ints i WHERE i.i8 > o.i8 / 1000000000) s WHERE o.i4 = 1 AND o.i2 = 1$$);
SELECT gx_diff($$SELECT o.id, s.c FROM gx_intx o, LATERAL (SELECT count(*) c FROM gx_floats i WHERE i.f4 < o.i2) s WHERE o.i4 = 2 AND o.i8 = 2$$);
SELECT * FROM gx_plan($$SELECT o.id, (SELECT count(*) FROM gx_ints i WHERE i.i4 > o.i4 / 100000) FROM gx_intx o WHERE o.i2 = 2 AND o.i8 = 2$$);
SELECT gx_diff($$SELECT o.id, (SELECT count(*) FROM gx_ints i WHERE i.i4 > o.i4 / 100000) FROM gx_intx o WHERE o.i2 = 2 AND o.i8 = 2$$);
SELECT gx_diff($$SELECT o.id, (SELECT max(i.id) FROM gx_ints i WHERE i.i2 = o.id % 1000 AND i.b) FROM gx_ints o WHERE o.id < 60 AND o.i4 > 0$$);
-- the parameter decides whether rows raise: i4 + 1 overflows, i4 + 0 does not
SELECT gx_diff($$SELECT o.id, (SELECT count(*) FROM gx_intx i WHERE i.i4 + o.i4 > 0) FROM gx_intx o WHERE o.i2 = 0 AND o.i8 = 0 AND o.i4 = 0$$);
SELECT gx_diff($$SELECT o.id, (SELECT count(*) FROM gx_intx i WHERE i.i4 + o.i4 > 0) FROM gx_intx o WHERE o.i2 = 0 AND o.i8 = 0 AND o.i4 BETWEEN 0 AND 1$$);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET enable_memoize;

--
-- cursors: forward fetches as stock PostgreSQL.  GpuScan cannot scan
-- backward: a cursor declared without SCROLL then refuses backward fetches
-- (PostgreSQL documents that those depend on the plan; a seqscan happens
-- to allow them); a SCROLL cursor gets a Material node and works.
--
SET gpuext.force_offload = on;
BEGIN;
DECLARE c1 CURSOR FOR SELECT id, i2 FROM gx_ints WHERE i2 > 990;
FETCH 3 FROM c1;
FETCH 2 FROM c1;
FETCH BACKWARD 1 FROM c1;
ROLLBACK;
BEGIN;
DECLARE c2 SCROLL CURSOR FOR SELECT id, i2 FROM gx_ints WHERE i2 > 990;
FETCH 3 FROM c2;
FETCH BACKWARD 2 FROM c2;
FETCH LAST FROM c2;
FETCH ABSOLUTE 2 FROM c2;
MOVE FORWARD 2 IN c2;
FETCH RELATIVE 0 FROM c2;
CLOSE c2;
DECLARE c3 NO SCROLL CURSOR FOR SELECT id, i2 FROM gx_ints WHERE i2 > 990;
FETCH 2 FROM c3;
FETCH BACKWARD 1 FROM c3;
ROLLBACK;
-- the same with stock PostgreSQL
SET gpuext.enabled = off;
BEGIN;
DECLARE c1 CURSOR FOR SELECT id, i2 FROM gx_ints WHERE i2 > 990;
FETCH 3 FROM c1;
FETCH 2 FROM c1;
FETCH BACKWARD 1 FROM c1;
FETCH FORWARD 2 FROM c1;
CLOSE c1;
ROLLBACK;
BEGIN;
DECLARE c2 SCROLL CURSOR FOR SELECT id, i2 FROM gx_ints WHERE i2 > 990;
FETCH 3 FROM c2;
FETCH BACKWARD 2 FROM c2;
FETCH LAST FROM c2;
FETCH ABSOLUTE 2 FROM c2;
MOVE FORWARD 2 IN c2;
FETCH RELATIVE 0 FROM c2;
CLOSE c2;
DECLARE c3 NO SCROLL CURSOR FOR SELECT id, i2 FROM gx_ints WHERE i2 > 990;
FETCH 2 FROM c3;
FETCH BACKWARD 1 FROM c3;
ROLLBACK;
RESET gpuext.enabled;
-- a cursor that reaches a row raising an error, and one WITH HOLD
BEGIN;
DECLARE c4 CURSOR FOR SELECT id, i4 FROM gx_intx WHERE i4 + 1 > 2147483646;
FETCH 1 FROM c4;
FETCH 100 FROM c4;
ROLLBACK;
BEGIN;
DECLARE c5 CURSOR WITH HOLD FOR SELECT id, i2 FROM gx_ints WHERE i2 > 995;
FETCH 2 FROM c5;
COMMIT;
FETCH ALL FROM c5;
CLOSE c5;
RESET gpuext.force_offload;

--
-- LIMIT: the scan stops early, rows it does not reach never raise
--
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > 0 ORDER BY id LIMIT 10$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > 0 ORDER BY i4 DESC, id LIMIT 10 OFFSET 20$$);
-- without ORDER BY both scans return rows in physical order
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > 0 LIMIT 7$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > 0 LIMIT 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE 1000000 / (700 - id) > 0 LIMIT 3$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE 1000000 / (700 - id) > 0 LIMIT 800$$);
SELECT gx_diff($$SELECT id FROM (SELECT id FROM gx_ints WHERE i2 > 0 LIMIT 100) s WHERE id % 2 = 0$$);
SET gpuext.force_offload = on;
SELECT id, i4 FROM gx_ints WHERE i4 > 99990 LIMIT 3;
SELECT id FROM gx_intx WHERE 1000000 / (700 - id) > 0 LIMIT 2;
RESET gpuext.force_offload;

--
-- prepared statements: parameters in generic plans
--
SET plan_cache_mode = force_generic_plan;
SET gpuext.force_offload = on;
PREPARE pi(int, int2) AS SELECT count(*), sum(id) FROM gx_ints WHERE i4 > $1 AND i2 < $2;
PREPARE pt(text) AS SELECT count(*) FROM gx_texts WHERE t LIKE $1;
PREPARE pn(numeric) AS SELECT count(*) FROM gx_nums WHERE n2 > $1;
PREPARE pa(int[]) AS SELECT count(*) FROM gx_ints WHERE i4 = ANY ($1) OR i2 = ANY ($1);
PREPARE pn2(numeric) AS SELECT count(*) FROM gx_nums WHERE n2 > $1 AND id > 0;
PREPARE pt2(text) AS SELECT count(*) FROM gx_texts WHERE t LIKE $1 AND id > 0;
EXPLAIN (COSTS OFF) EXECUTE pi(0, 0);
EXECUTE pi(0, 0);
EXECUTE pi(-50000, 500);
EXECUTE pi(NULL, 1);
EXECUTE pt('str1%');
EXECUTE pt('%7');
EXECUTE pt(NULL);
EXECUTE pt('a\');
EXECUTE pn(5000.5);
EXECUTE pn('NaN');
EXECUTE pn(1e50);
EXECUTE pa('{1,2,3,-963,-889}');
EXECUTE pa('{}');
EXECUTE pa(NULL);
EXECUTE pn2(1e50);
EXECUTE pt2(NULL);
-- parameter values the device cannot hold move their qual to the host
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE pn2(1e50);
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE pt2(NULL);
-- the same statements after changing gpuext.device and gpuext.enabled
SET gpuext.device = cpu;
EXECUTE pi(0, 0);
EXECUTE pt('str1%');
EXECUTE pn(5000.5);
RESET gpuext.device;
EXECUTE pi(0, 0);
SET gpuext.enabled = off;
EXECUTE pi(0, 0);
EXECUTE pt('str1%');
EXECUTE pn(5000.5);
EXECUTE pa('{1,2,3,-963,-889}');
SET gpuext.enabled = on;
RESET gpuext.force_offload;
-- stock results
SET gpuext.enabled = off;
DEALLOCATE ALL;
PREPARE pi(int, int2) AS SELECT count(*), sum(id) FROM gx_ints WHERE i4 > $1 AND i2 < $2;
PREPARE pt(text) AS SELECT count(*) FROM gx_texts WHERE t LIKE $1;
PREPARE pn(numeric) AS SELECT count(*) FROM gx_nums WHERE n2 > $1;
PREPARE pa(int[]) AS SELECT count(*) FROM gx_ints WHERE i4 = ANY ($1) OR i2 = ANY ($1);
PREPARE pn2(numeric) AS SELECT count(*) FROM gx_nums WHERE n2 > $1 AND id > 0;
PREPARE pt2(text) AS SELECT count(*) FROM gx_texts WHERE t LIKE $1 AND id > 0;
EXECUTE pi(0, 0);
EXECUTE pi(-50000, 500);
EXECUTE pi(NULL, 1);
EXECUTE pt('str1%');
EXECUTE pt('%7');
EXECUTE pt(NULL);
EXECUTE pt('a\');
EXECUTE pn(5000.5);
EXECUTE pn('NaN');
EXECUTE pn(1e50);
EXECUTE pa('{1,2,3,-963,-889}');
EXECUTE pa('{}');
EXECUTE pa(NULL);
EXECUTE pn2(1e50);
EXECUTE pt2(NULL);
RESET gpuext.enabled;
DEALLOCATE ALL;
RESET plan_cache_mode;

--
-- parallel query: a Gather over a parallel GpuScan
--
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET gpuext.max_batch_pages = 2;
SELECT * FROM gx_plan($$SELECT id FROM gx_ints WHERE i4 > 0$$);
SELECT * FROM gx_plan($$SELECT count(*), sum(i8) FROM gx_ints WHERE i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > 0$$);
SELECT gx_diff($$SELECT count(*), sum(i8), min(i2) FROM gx_ints WHERE i4 > 0 AND i2 < 0$$);
SELECT gx_diff($$SELECT * FROM gx_wide WHERE last LIKE 'last1%' OR f4 > 100$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t LIKE '%7%' AND md5(t) > '8'$$);
SELECT gx_diff($$SELECT id, n FROM gx_nums WHERE n > 1000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 / (i2 % 5) > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i4 + 1 > 0$$);
-- a Gather over a parallel GpuScan, rescanned on the inner side of a nested loop
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_memoize = off;
SELECT * FROM gx_plan($$SELECT v.x, s.id FROM (VALUES (1), (2), (3)) v(x) LEFT JOIN (SELECT id FROM gx_ints WHERE i4 > 99000) s ON s.id % 3 = v.x - 1$$);
SELECT gx_diff($$SELECT v.x, s.id FROM (VALUES (1), (2), (3)) v(x) LEFT JOIN (SELECT id FROM gx_ints WHERE i4 > 99000) s ON s.id % 3 = v.x - 1$$);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET enable_memoize;
SET gpuext.force_offload = on;
SELECT count(*), sum(i8), min(i2), max(i4) FROM gx_ints WHERE i4 > 0 AND i2 < 0;
SELECT count(*) FROM gx_ints WHERE i4 / (i2 % 5) > 0;
RESET gpuext.force_offload;
RESET gpuext.max_batch_pages;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

--
-- system columns: selected (xmin only compared, never printed) and used
-- in host quals
--
SELECT gx_diff($$SELECT ctid, xmin, cmin, xmax, tableoid::regclass, id FROM gx_ints WHERE i4 > 0$$);
SELECT gx_diff($$SELECT ctid, id FROM gx_ints WHERE ctid > '(10,0)' AND ctid < '(12,0)' AND i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE xmin = xmin AND i4 > 0$$);
SET gpuext.force_offload = on;
SELECT ctid, id, tableoid::regclass, xmin <> '0' AS has_xmin FROM gx_ints WHERE id < 4 AND i4 > -100000 ORDER BY id;
RESET gpuext.force_offload;

--
-- dropped columns and columns added later: with no default (NULL in the
-- old rows) and with a DEFAULT (the old rows read the "missing" value)
--
CREATE TABLE gx_evolve (id int, a int2, gone1 int8, b int4, gone2 text, c text);
INSERT INTO gx_evolve
SELECT g, g % 100, g, g * 10, repeat('z', g % 300), 'c' || g FROM generate_series(1, 2000) g;
ALTER TABLE gx_evolve DROP COLUMN gone1;
ALTER TABLE gx_evolve DROP COLUMN gone2;
ALTER TABLE gx_evolve ADD COLUMN d int;
ALTER TABLE gx_evolve ADD COLUMN e int DEFAULT 42;
ALTER TABLE gx_evolve ADD COLUMN f text DEFAULT 'dflt';
ALTER TABLE gx_evolve ADD COLUMN g numeric DEFAULT 1.5;
ALTER TABLE gx_evolve ADD COLUMN h float8 DEFAULT 'NaN';
INSERT INTO gx_evolve (id, a, b, c, d, e, f, g, h)
SELECT g, g % 100, g * 10, 'c' || g, g, g % 50, 'new' || g, g / 2.0, g * 0.25 FROM generate_series(2001, 3000) g;
UPDATE gx_evolve SET e = 7 WHERE id % 100 = 0;
SELECT attname, atthasmissing, attisdropped FROM pg_attribute
 WHERE attrelid = 'gx_evolve'::regclass AND attnum > 0 ORDER BY attnum;
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE b > 15000$$);
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE c LIKE 'c1%'$$);
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE d IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE d > 2500$$);
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE e = 42$$);
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE e <> 42$$);
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE e IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE f = 'dflt'$$);
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE f LIKE 'new2%'$$);
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE g = 1.5$$);
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE g > 1000$$);
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE h = 'NaN'$$);
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE h < 600$$);
SELECT gx_diff($$SELECT id FROM gx_evolve WHERE a = 7 AND e > 40 AND f <> 'x' AND g > 1$$);
SELECT gx_diff($$SELECT * FROM gx_evolve WHERE a < 3$$);
SET gpuext.force_offload = on;
SELECT count(*) FILTER (WHERE e = 42) AS e42, count(*) FILTER (WHERE f = 'dflt') AS fdflt,
       count(*) FILTER (WHERE d IS NULL) AS dnull
  FROM gx_evolve WHERE e = 42 OR f = 'dflt' OR d IS NULL;
SELECT * FROM gx_evolve WHERE id IN (1, 100, 2001, 2100) AND e >= 0 ORDER BY id;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM gx_evolve WHERE e = 42;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM gx_evolve WHERE d IS NULL;
RESET gpuext.force_offload;

--
-- TOASTed and compressed values: the device rechecks those rows on the
-- host, and steps over them when the qual reads other columns
--
CREATE TABLE gx_toast (id int, t text, k int, t2 text);
ALTER TABLE gx_toast ALTER COLUMN t2 SET STORAGE EXTERNAL;
INSERT INTO gx_toast
SELECT g,
       CASE g % 6
         WHEN 0 THEN repeat('x', 100000)
         WHEN 1 THEN repeat('abc', 10000) || g
         WHEN 2 THEN (SELECT string_agg(md5((g * 1000 + i)::text), '') FROM generate_series(1, 300) i)
         WHEN 3 THEN 'short' || g
         WHEN 4 THEN repeat('y', 3000)
         ELSE NULL END,
       g,
       CASE WHEN g % 4 = 0 THEN repeat('e', 5000) || g ELSE 'e' || g END
  FROM generate_series(1, 120) g;
SELECT id % 6 AS kind, bool_and(pg_column_size(t) < octet_length(t)) AS compressed,
       max(octet_length(t)) AS length
  FROM gx_toast GROUP BY 1 ORDER BY 1;
SELECT count(*) FILTER (WHERE pg_column_size(t2) >= 5000) AS t2_uncompressed FROM gx_toast;
SELECT gx_diff($$SELECT id FROM gx_toast WHERE t = repeat('x', 100000)$$);
SELECT gx_diff($$SELECT id FROM gx_toast WHERE t LIKE 'x%'$$);
SELECT gx_diff($$SELECT id FROM gx_toast WHERE t LIKE '%c1_'$$);
SELECT gx_diff($$SELECT id FROM gx_toast WHERE t LIKE '%a%'$$);
SELECT gx_diff($$SELECT id FROM gx_toast WHERE substr(t, 29995, 20) LIKE 'abcabc1%'$$);
SELECT gx_diff($$SELECT id FROM gx_toast WHERE t <> 'short3'$$);
SELECT gx_diff($$SELECT id FROM gx_toast WHERE t IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_toast WHERE k % 5 = 0$$);
SELECT gx_diff($$SELECT id FROM gx_toast WHERE t2 LIKE 'e1%'$$);
SELECT gx_diff($$SELECT id FROM gx_toast WHERE t2 LIKE 'eeeee%1_'$$);
SELECT gx_diff($$SELECT id, t, t2 FROM gx_toast WHERE k > 100$$);
SET gpuext.force_offload = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM gx_toast WHERE k % 5 = 0;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM gx_toast WHERE t LIKE 'x%';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM gx_toast WHERE t2 LIKE 'e1%';
SELECT id, length(t), substr(t, 1, 5) FROM gx_toast WHERE t LIKE 'x%' AND id < 30 ORDER BY id;
RESET gpuext.force_offload;

--
-- empty tables, and tables whose rows are all dead
--
CREATE TABLE gx_empty (id int, v int);
SELECT gx_diff($$SELECT id FROM gx_empty WHERE v > 0$$);
SELECT gx_diff($$SELECT count(*) FROM gx_empty WHERE v > 0$$);
CREATE TABLE gx_dead (id int, v int);
INSERT INTO gx_dead SELECT g, g FROM generate_series(1, 1000) g;
DELETE FROM gx_dead;
SELECT gx_diff($$SELECT id FROM gx_dead WHERE v > 0$$);
SET gpuext.force_offload = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM gx_empty WHERE v > 0;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM gx_dead WHERE v > 0;
RESET gpuext.force_offload;

--
-- visibility: the transaction's own changes, savepoints, HOT updates
--
BEGIN;
DELETE FROM gx_evolve WHERE id % 10 = 0;
UPDATE gx_evolve SET b = -b WHERE id % 10 = 1;
INSERT INTO gx_evolve (id, a, b, c) VALUES (9001, 1, 1, 'own');
SELECT gx_diff($$SELECT id, b FROM gx_evolve WHERE b < 100 OR c = 'own'$$);
SAVEPOINT s1;
DELETE FROM gx_evolve WHERE id % 10 = 1;
SELECT gx_diff($$SELECT id, b FROM gx_evolve WHERE b < 100 OR c = 'own'$$);
ROLLBACK TO s1;
SELECT gx_diff($$SELECT id, b FROM gx_evolve WHERE b < 100 OR c = 'own'$$);
ROLLBACK;
SELECT gx_diff($$SELECT id, b FROM gx_evolve WHERE b < 100 OR c = 'own'$$);
UPDATE gx_evolve SET e = e + 1 WHERE id % 7 = 0;
UPDATE gx_evolve SET e = e + 1 WHERE id % 7 = 0;
SELECT gx_diff($$SELECT id, e FROM gx_evolve WHERE e > 40$$);
SELECT gx_diff($$SELECT count(*) FROM gx_evolve WHERE id > 0$$);

--
-- DML through a GpuScan: UPDATE, DELETE, SELECT FOR UPDATE
--
SET gpuext.force_offload = on;
EXPLAIN (COSTS OFF) UPDATE gx_evolve SET b = b + 1 WHERE a = 5 AND e > 0;
BEGIN;
UPDATE gx_evolve SET b = b + 1 WHERE a = 5 AND e > 0;
WITH d AS (DELETE FROM gx_evolve WHERE a = 6 AND c LIKE 'c1%' RETURNING id, a, c)
SELECT * FROM d ORDER BY id;
SELECT id, a FROM gx_evolve WHERE a = 7 AND id < 500 ORDER BY id FOR UPDATE;
SELECT count(*), sum(b) FROM gx_evolve WHERE a IN (5, 6);
ROLLBACK;
SET gpuext.enabled = off;
BEGIN;
UPDATE gx_evolve SET b = b + 1 WHERE a = 5 AND e > 0;
WITH d AS (DELETE FROM gx_evolve WHERE a = 6 AND c LIKE 'c1%' RETURNING id, a, c)
SELECT * FROM d ORDER BY id;
SELECT id, a FROM gx_evolve WHERE a = 7 AND id < 500 ORDER BY id FOR UPDATE;
SELECT count(*), sum(b) FROM gx_evolve WHERE a IN (5, 6);
ROLLBACK;
RESET gpuext.enabled;
RESET gpuext.force_offload;

--
-- other relations: partitions, inheritance, materialized views,
-- unlogged tables; temporary tables are not offloaded
--
CREATE TABLE gx_part (id int, v int) PARTITION BY RANGE (id);
CREATE TABLE gx_part_1 PARTITION OF gx_part FOR VALUES FROM (0) TO (1000);
CREATE TABLE gx_part_2 PARTITION OF gx_part FOR VALUES FROM (1000) TO (2000);
INSERT INTO gx_part SELECT g, g % 97 FROM generate_series(0, 1999) g;
CREATE TABLE gx_inh_parent (id int, v int);
CREATE TABLE gx_inh_child (w int) INHERITS (gx_inh_parent);
INSERT INTO gx_inh_parent SELECT g, g % 13 FROM generate_series(1, 500) g;
INSERT INTO gx_inh_child SELECT g, g % 13, g FROM generate_series(501, 1000) g;
CREATE MATERIALIZED VIEW gx_mat AS SELECT id, i4 FROM gx_ints WHERE i2 > 0;
CREATE UNLOGGED TABLE gx_unlogged AS SELECT id, i4 FROM gx_ints;
CREATE TEMP TABLE gx_temp AS SELECT id, i4 FROM gx_ints;
ANALYZE gx_part, gx_inh_parent, gx_inh_child, gx_mat, gx_unlogged, gx_temp;
SELECT * FROM gx_plan($$SELECT id FROM gx_part WHERE v = 5$$);
SELECT * FROM gx_plan($$SELECT id FROM gx_part WHERE v = 5 AND id < 500$$);
SELECT * FROM gx_plan($$SELECT id FROM gx_inh_parent WHERE v = 5$$);
SELECT * FROM gx_plan($$SELECT id FROM gx_temp WHERE i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_part WHERE v = 5$$);
SELECT gx_diff($$SELECT id FROM gx_part WHERE v = 5 AND id < 500$$);
SELECT gx_diff($$SELECT * FROM gx_inh_parent WHERE v = 5$$);
SELECT gx_diff($$SELECT * FROM ONLY gx_inh_parent WHERE v = 5$$);
SELECT gx_diff($$SELECT * FROM gx_inh_child WHERE v = 5 AND w > 600$$);
SELECT gx_diff($$SELECT id FROM gx_mat WHERE i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_unlogged WHERE i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_temp WHERE i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > 90000 UNION ALL SELECT id FROM gx_floats WHERE f4 > 120$$);

--
-- security barrier views: the view's quals run before the user's, so a
-- leaky host qual keeps the whole scan off the device
--
CREATE TABLE gx_secret (id int, owner text, v int);
INSERT INTO gx_secret VALUES (1, 'me', 10), (2, 'you', 20), (3, 'me', 30), (4, 'you', 40);
ANALYZE gx_secret;
CREATE VIEW gx_mine WITH (security_barrier) AS SELECT * FROM gx_secret WHERE owner = 'me';
CREATE FUNCTION gx_leak(int) RETURNS bool LANGUAGE plpgsql COST 0.0000001 AS
$$ BEGIN RAISE NOTICE 'gx_leak saw %', $1; RETURN true; END $$;
SELECT * FROM gx_where($$SELECT * FROM gx_mine WHERE v > 15$$);
SELECT * FROM gx_where($$SELECT * FROM gx_mine WHERE gx_leak(v)$$);
SET gpuext.force_offload = on;
SELECT * FROM gx_mine WHERE v > 15;
SELECT * FROM gx_mine WHERE gx_leak(v) ORDER BY id;
RESET gpuext.force_offload;
SELECT * FROM gx_mine WHERE gx_leak(v) ORDER BY id;
-- row-level security: the policy's quals come first, a leaky user qual
-- must only see the rows they let through
ALTER TABLE gx_secret ENABLE ROW LEVEL SECURITY;
CREATE POLICY gx_secret_mine ON gx_secret USING (owner = 'me');
CREATE ROLE regress_gx_user;
GRANT SELECT ON gx_secret TO regress_gx_user;
SET ROLE regress_gx_user;
SELECT * FROM gx_where($$SELECT * FROM gx_secret WHERE v > 15$$);
SELECT * FROM gx_where($$SELECT * FROM gx_secret WHERE gx_leak(v)$$);
SELECT gx_diff($$SELECT * FROM gx_secret WHERE v > 15$$);
SET gpuext.force_offload = on;
SELECT * FROM gx_secret WHERE v > 15;
SELECT * FROM gx_secret WHERE gx_leak(v) ORDER BY id;
RESET gpuext.force_offload;
SELECT * FROM gx_secret WHERE gx_leak(v) ORDER BY id;
RESET ROLE;
DROP POLICY gx_secret_mine ON gx_secret;
REVOKE SELECT ON gx_secret FROM regress_gx_user;
DROP ROLE regress_gx_user;

DROP VIEW gx_mine;
DROP FUNCTION gx_leak(int);
DROP TABLE gx_secret, gx_part, gx_inh_parent, gx_inh_child, gx_unlogged, gx_temp,
  gx_empty, gx_dead, gx_toast, gx_evolve;
DROP MATERIALIZED VIEW gx_mat;
