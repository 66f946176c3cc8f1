--
-- Security: row-level security, column privileges and privilege checks.
-- Every SQL function that takes a relation, called by roles under row
-- security policies (ENABLE and FORCE ROW LEVEL SECURITY, a policy that
-- shows 1 row in 3), with column grants only, with BYPASSRLS and as the
-- owner; then the offloaded query paths (GpuScan, GpuJoin, GpuAgg, over
-- the heap and over a column cache, with the engine chosen by
-- gpuext.device and with the CPU engine) against stock PostgreSQL for the
-- restricted roles, including quals that would fail on a hidden row; and
-- the extension's own SQL: function privileges, the event trigger's
-- search_path, the capture setting's context.
--
\set VERBOSITY terse
\set SHOW_CONTEXT never
SET gpuext.regression_test_mode = on;
-- commits flushed at once, so that VACUUM can set pages all-visible
SET synchronous_commit = on;

CREATE ROLE regress_gpuext_sec_owner;
CREATE ROLE regress_gpuext_sec_user;
CREATE ROLE regress_gpuext_sec_cols;
CREATE ROLE regress_gpuext_sec_bypass BYPASSRLS;
CREATE ROLE regress_gpuext_sec_monitor IN ROLE pg_monitor;

-- three rows, the policy shows the first; FORCE: the owner sees one too
CREATE TABLE sec_small (id int, secret int, bx box, p point, note text);
INSERT INTO sec_small VALUES
  (1, 10, box '(0,0),(1,1)', point '(0.5,0.5)', 'shown'),
  (2, 20, box '(2,2),(3,3)', point '(2.5,2.5)', 'hidden'),
  (3, 30, box '(4,4),(5,5)', point '(4.5,4.5)', 'hidden');
CREATE INDEX sec_small_bx ON sec_small USING gpuext_gist (bx);
CREATE INDEX sec_small_p ON sec_small USING gpuext_gist (p);
CREATE INDEX sec_small_secret ON sec_small USING gpuext_ptree (secret);
ALTER TABLE sec_small ENABLE ROW LEVEL SECURITY;
ALTER TABLE sec_small FORCE ROW LEVEL SECURITY;
CREATE POLICY sec_small_first ON sec_small USING (id = 1);
-- the same rows, ENABLE only: the owner is not subject to the policy
CREATE TABLE sec_noforce (LIKE sec_small);
INSERT INTO sec_noforce SELECT * FROM sec_small;
CREATE INDEX sec_noforce_bx ON sec_noforce USING gpuext_gist (bx);
CREATE INDEX sec_noforce_secret ON sec_noforce USING gpuext_ptree (secret);
ALTER TABLE sec_noforce ENABLE ROW LEVEL SECURITY;
CREATE POLICY sec_noforce_first ON sec_noforce USING (id = 1);
-- the same rows, policies that an index of each access method can serve
CREATE TABLE sec_near (LIKE sec_small);
INSERT INTO sec_near SELECT * FROM sec_small;
CREATE INDEX sec_near_bx ON sec_near USING gpuext_gist (bx);
ALTER TABLE sec_near ENABLE ROW LEVEL SECURITY;
CREATE POLICY sec_near_box ON sec_near USING (bx && box '(-1,-1),(1.5,1.5)');
CREATE TABLE sec_low (LIKE sec_small);
INSERT INTO sec_low SELECT * FROM sec_small;
CREATE INDEX sec_low_secret ON sec_low USING gpuext_ptree (secret);
ALTER TABLE sec_low ENABLE ROW LEVEL SECURITY;
CREATE POLICY sec_low_low ON sec_low USING (secret <= 10);
-- a fact table (the policy shows grp 1: a row in 3; the one row whose
-- secret is 7 is hidden) and a dimension table with a policy of its own
CREATE TABLE sec_fact (id int, grp int, secret int, v int8, f float8, d date);
INSERT INTO sec_fact
  SELECT g, g % 3, CASE WHEN g = 5 THEN 7 ELSE g * 10 END, g * 3, g / 4.0, date '2024-01-01' + g % 400
    FROM generate_series(1, 3000) g;
ALTER TABLE sec_fact ENABLE ROW LEVEL SECURITY;
ALTER TABLE sec_fact FORCE ROW LEVEL SECURITY;
CREATE POLICY sec_fact_grp ON sec_fact USING (grp = 1);
CREATE TABLE sec_dim (k int, name text);
INSERT INTO sec_dim SELECT g, 'n' || (g % 10) FROM generate_series(1, 100) g;
ALTER TABLE sec_dim ENABLE ROW LEVEL SECURITY;
CREATE POLICY sec_dim_even ON sec_dim USING (k % 2 = 0);
ALTER TABLE sec_small OWNER TO regress_gpuext_sec_owner;
ALTER TABLE sec_noforce OWNER TO regress_gpuext_sec_owner;
ALTER TABLE sec_near OWNER TO regress_gpuext_sec_owner;
ALTER TABLE sec_low OWNER TO regress_gpuext_sec_owner;
ALTER TABLE sec_fact OWNER TO regress_gpuext_sec_owner;
ALTER TABLE sec_dim OWNER TO regress_gpuext_sec_owner;
GRANT SELECT ON sec_small, sec_noforce, sec_near, sec_low, sec_fact, sec_dim
  TO regress_gpuext_sec_user, regress_gpuext_sec_bypass;
GRANT SELECT (id, grp, v) ON sec_fact TO regress_gpuext_sec_cols;
GRANT SELECT (id, bx) ON sec_small TO regress_gpuext_sec_cols;
GRANT SELECT ON sec_dim TO regress_gpuext_sec_cols;
VACUUM (FREEZE, ANALYZE) sec_small, sec_noforce, sec_near, sec_low, sec_fact, sec_dim;

-- what each role sees of the small table
SET ROLE regress_gpuext_sec_user;
SELECT id, note FROM sec_small ORDER BY id;
RESET ROLE;
SET ROLE regress_gpuext_sec_owner;
SELECT id, note FROM sec_small ORDER BY id;
SELECT id, note FROM sec_noforce ORDER BY id;
RESET ROLE;
SET ROLE regress_gpuext_sec_bypass;
SELECT id, note FROM sec_small ORDER BY id;
RESET ROLE;

--
-- gpuext_page_counts(rel): SELECT on the table, and no policy applying
--
SET ROLE regress_gpuext_sec_user;
SELECT sum(visible) AS visible FROM gpuext_page_counts('sec_small');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT sum(visible) AS visible FROM gpuext_page_counts('sec_small', 'cpu');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT sum(visible) AS visible FROM gpuext_page_counts('sec_noforce');
\echo sqlstate :LAST_ERROR_SQLSTATE
-- row_security = off does not switch the policies off for the function
SET row_security = off;
SELECT sum(visible) AS visible FROM gpuext_page_counts('sec_small');
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET row_security;
RESET ROLE;
-- the owner: under FORCE the policy applies, without it the owner reads all
SET ROLE regress_gpuext_sec_owner;
SELECT sum(visible) AS visible FROM gpuext_page_counts('sec_small');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT sum(visible) AS visible FROM gpuext_page_counts('sec_noforce');
-- a TOAST table's rows are its table's: the table's policies apply
SELECT count(*) >= 0 AS counted
  FROM gpuext_page_counts((SELECT reltoastrelid FROM pg_class WHERE oid = 'sec_small'::regclass));
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT count(*) >= 0 AS counted
  FROM gpuext_page_counts((SELECT reltoastrelid FROM pg_class WHERE oid = 'sec_noforce'::regclass));
RESET ROLE;
-- BYPASSRLS, and column grants only (no table privilege: refused)
SET ROLE regress_gpuext_sec_bypass;
SELECT sum(visible) AS visible FROM gpuext_page_counts('sec_small');
RESET ROLE;
SET ROLE regress_gpuext_sec_cols;
SELECT sum(visible) AS visible FROM gpuext_page_counts('sec_fact');
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;
-- a superuser bypasses row-level security
SELECT sum(visible) AS visible FROM gpuext_page_counts('sec_small');

--
-- gpuext_gist_probe(index, boxes): SELECT on the table, no policy applying
--
SET ROLE regress_gpuext_sec_user;
SELECT query, ctid FROM gpuext_gist_probe('sec_small_bx', ARRAY[box '(-10,-10),(10,10)']) ORDER BY ctid;
\echo sqlstate :LAST_ERROR_SQLSTATE
-- narrowing boxes would locate a hidden row
SELECT count(*) FROM gpuext_gist_probe('sec_small_bx', ARRAY[box '(2,2),(2.5,2.5)', box '(4.9,4.9),(6,6)']);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT count(*) FROM gpuext_gist_probe('sec_small_p', ARRAY[box '(-10,-10),(10,10)'], '<@');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT count(*) FROM gpuext_gist_probe('sec_noforce_bx', ARRAY[box '(-10,-10),(10,10)']);
\echo sqlstate :LAST_ERROR_SQLSTATE
-- what the same question asked with a query gives
SELECT count(*) FROM sec_small WHERE bx && box '(-10,-10),(10,10)';
RESET ROLE;
SET ROLE regress_gpuext_sec_owner;
SELECT count(*) FROM gpuext_gist_probe('sec_small_bx', ARRAY[box '(-10,-10),(10,10)']);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT count(*) FROM gpuext_gist_probe('sec_noforce_bx', ARRAY[box '(-10,-10),(10,10)']);
RESET ROLE;
SET ROLE regress_gpuext_sec_bypass;
SELECT count(*) FROM gpuext_gist_probe('sec_small_bx', ARRAY[box '(-10,-10),(10,10)']);
RESET ROLE;
-- a column grant on the key is not enough: the probe returns row locations
SET ROLE regress_gpuext_sec_cols;
SELECT count(*) FROM gpuext_gist_probe('sec_small_bx', ARRAY[box '(-10,-10),(10,10)']);
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT count(*) FROM gpuext_gist_probe('sec_small_bx', ARRAY[box '(-10,-10),(10,10)']);

--
-- gpuext_gist_check(index): not PUBLIC; granted, the index's owner only,
-- and no policy applying
--
SET ROLE regress_gpuext_sec_user;
SELECT leaf_entries FROM gpuext_gist_check('sec_small_bx', true);
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT EXECUTE ON FUNCTION gpuext_gist_check(regclass, boolean)
  TO regress_gpuext_sec_user, regress_gpuext_sec_owner, regress_gpuext_sec_bypass;
SET ROLE regress_gpuext_sec_user;
SELECT leaf_entries, heap_tuples FROM gpuext_gist_check('sec_small_bx', true);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT leaf_entries, heap_tuples FROM gpuext_gist_check('sec_noforce_bx', false);
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;
SET ROLE regress_gpuext_sec_bypass;
SELECT leaf_entries, heap_tuples FROM gpuext_gist_check('sec_noforce_bx', true);
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;
SET ROLE regress_gpuext_sec_owner;
SELECT leaf_entries, heap_tuples FROM gpuext_gist_check('sec_small_bx', true);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT leaf_entries, heap_tuples FROM gpuext_gist_check('sec_noforce_bx', true);
RESET ROLE;
REVOKE EXECUTE ON FUNCTION gpuext_gist_check(regclass, boolean)
  FROM regress_gpuext_sec_user, regress_gpuext_sec_owner, regress_gpuext_sec_bypass;
SELECT leaf_entries, heap_tuples FROM gpuext_gist_check('sec_small_bx', true);

--
-- gpuext_ptree_check(index): the index's owner, no policy applying
--
SET ROLE regress_gpuext_sec_user;
SELECT gpuext_ptree_check('sec_small_secret', true);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_ptree_check('sec_noforce_secret', false);
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;
SET ROLE regress_gpuext_sec_owner;
SELECT gpuext_ptree_check('sec_small_secret', true);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_ptree_check('sec_small_secret', false);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_ptree_check('sec_noforce_secret', true);
RESET ROLE;
SELECT gpuext_ptree_check('sec_small_secret', true);

-- gpuext_ptree_merge_stats() takes no relation: this backend's counters
SET ROLE regress_gpuext_sec_user;
SELECT gpu_merges >= 0 AND cpu_merges >= 0 AS counters FROM gpuext_ptree_merge_stats();
RESET ROLE;

--
-- column caches: the owner builds and drops them (whatever the policies:
-- the cache is read only by scans, which apply them); gpuext_caches()
-- hides the row counts of tables whose policies apply to the caller
--
SET ROLE regress_gpuext_sec_user;
SELECT gpuext_cache_enable('sec_fact');
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_cache_drop('sec_fact');
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;
SET ROLE regress_gpuext_sec_owner;
SELECT gpuext_cache_enable('sec_fact') > 0 AS cached;
SELECT gpuext_cache_enable('sec_noforce') > 0 AS cached;
SELECT relation, pages > 0 AS pages, rows, bytes > 0 AS bytes, state
  FROM gpuext_caches() ORDER BY relation::text;
RESET ROLE;
SET ROLE regress_gpuext_sec_user;
SELECT relation, pages > 0 AS pages, rows, bytes > 0 AS bytes, state
  FROM gpuext_caches() ORDER BY relation::text;
-- a table that exists is not forgotten
SELECT gpuext_cache_forget('sec_fact'::regclass);
RESET ROLE;
SET ROLE regress_gpuext_sec_bypass;
SELECT relation, rows FROM gpuext_caches() ORDER BY relation::text;
RESET ROLE;
SET ROLE regress_gpuext_sec_cols;
SELECT relation, rows FROM gpuext_caches() ORDER BY relation::text;
RESET ROLE;
SELECT relation, rows FROM gpuext_caches() ORDER BY relation::text;

--
-- superuser-only functions, granted or not
--
SET ROLE regress_gpuext_sec_user;
SELECT * FROM gpuext_calibrate_workload(ARRAY['SELECT count(*) FROM sec_fact'], ARRAY['SELECT 1']);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_service_roundtrip(1) > 0 AS roundtrip_ok;
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT count(*) >= 1 AS has_devices FROM gpuext_devices();
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT EXECUTE ON FUNCTION gpuext_calibrate_workload(text[], text[], int, bigint, boolean)
  TO regress_gpuext_sec_user;
GRANT EXECUTE ON FUNCTION gpuext_service_roundtrip(int) TO regress_gpuext_sec_user;
SET ROLE regress_gpuext_sec_user;
SELECT * FROM gpuext_calibrate_workload(ARRAY['SELECT count(*) FROM sec_fact'], ARRAY['SELECT 1']);
\echo sqlstate :LAST_ERROR_SQLSTATE
SELECT gpuext_service_roundtrip(1) > 0 AS roundtrip_ok;
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;
REVOKE EXECUTE ON FUNCTION gpuext_calibrate_workload(text[], text[], int, bigint, boolean)
  FROM regress_gpuext_sec_user;
REVOKE EXECUTE ON FUNCTION gpuext_service_roundtrip(int) FROM regress_gpuext_sec_user;
-- gpuext_devices() is for pg_monitor, as gpuext_status() is
SET ROLE regress_gpuext_sec_monitor;
SELECT count(*) >= 1 AS has_devices FROM gpuext_devices();
SELECT gpuext_service_roundtrip(1) > 0 AS roundtrip_ok;
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT gpuext_service_roundtrip(1) > 0 AS roundtrip_ok;
-- who may execute what
SELECT p.oid::regprocedure AS function,
       has_function_privilege('regress_gpuext_sec_user', p.oid, 'EXECUTE') AS plain_role,
       has_function_privilege('regress_gpuext_sec_monitor', p.oid, 'EXECUTE') AS pg_monitor
  FROM pg_proc p
 WHERE p.proname IN ('gpuext_version', 'gpuext_devices', 'gpuext_status', 'gpuext_page_counts',
                     'gpuext_service_roundtrip', 'gpuext_debug_sleep', 'gpuext_calibrate',
                     'gpuext_calibrate_workload', 'gpuext_gist_check', 'gpuext_gist_probe',
                     'gpuext_ptree_check', 'gpuext_ptree_merge_stats', 'gpuext_cache_enable',
                     'gpuext_cache_drop', 'gpuext_caches', 'gpuext_cache_forget')
 ORDER BY p.proname;

--
-- gpuext.debug_capture_dir writes raw pages to files: only the server's
-- configuration sets it
--
SELECT name, context FROM pg_settings WHERE name LIKE 'gpuext.debug_capture%' ORDER BY name;
SET ROLE regress_gpuext_sec_user;
SET gpuext.debug_capture_dir = '/tmp';
\echo sqlstate :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET gpuext.debug_capture_dir = '/tmp';
\echo sqlstate :LAST_ERROR_SQLSTATE
RESET ROLE;

--
-- the event trigger calls its function by schema, whatever the dropping
-- session's search_path
--
SELECT p.proconfig FROM pg_proc p WHERE p.proname = 'gpuext_cache_sql_drop';
CREATE SCHEMA regress_gpuext_evil;
CREATE FUNCTION regress_gpuext_evil.gpuext_cache_forget(rel oid) RETURNS boolean
LANGUAGE plpgsql AS $$BEGIN RAISE NOTICE 'the search_path chose regress_gpuext_evil'; RETURN false; END$$;
CREATE TABLE sec_dropped (a int);
SET search_path = regress_gpuext_evil, public;
DROP TABLE sec_dropped;
RESET search_path;
DROP SCHEMA regress_gpuext_evil CASCADE;

--
-- offloaded query paths for the restricted roles, against stock
-- PostgreSQL: sec_diff(query, plan) runs the query with gpuext forced
-- (force: gpuext.force_offload; EXPLAIN must show plan, a LIKE pattern,
-- else 'not offloaded') and with gpuext.enabled = off, and compares the
-- rows as multisets (EXCEPT ALL both ways), or the SQLSTATEs when either
-- fails ('refused' when the query cannot even be planned)
--
CREATE FUNCTION sec_diff(q text, plan text, force bool DEFAULT true) RETURNS text
LANGUAGE plpgsql
SET gpuext.force_offload = on
SET gpuext.enabled = on
AS $fn$
DECLARE
  agg text := 'SELECT coalesce(array_agg(r::text), ''{}'') FROM (' || q || ') AS r';
  line text;
  offloaded bool := false;
  r_on text[];
  r_off text[];
  st_on text;
  st_off text;
  msg_on text;
  only_on text[];
  only_off text[];
BEGIN
  PERFORM set_config('gpuext.force_offload', force::text, true);
  BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
      IF line LIKE plan THEN
        offloaded := true;
      END IF;
    END LOOP;
  EXCEPTION WHEN OTHERS THEN
    RETURN 'refused: ' || SQLSTATE;
  END;
  IF NOT offloaded THEN
    RETURN 'not offloaded';
  END IF;
  BEGIN
    EXECUTE agg INTO r_on;
  EXCEPTION WHEN OTHERS THEN
    st_on := SQLSTATE;
    msg_on := SQLERRM;
  END;
  PERFORM set_config('gpuext.enabled', 'off', true);
  BEGIN
    EXECUTE agg INTO r_off;
  EXCEPTION WHEN OTHERS THEN
    st_off := SQLSTATE;
  END;
  PERFORM set_config('gpuext.enabled', 'on', true);
  IF st_on IS NOT NULL OR st_off IS NOT NULL THEN
    IF st_on IS NOT DISTINCT FROM st_off THEN
      RETURN 'error ' || st_on || ' both';
    END IF;
    RETURN 'ERROR MISMATCH gpuext ' || coalesce(st_on || ' (' || msg_on || ')', 'ok')
           || ', stock ' || coalesce(st_off, 'ok');
  END IF;
  SELECT coalesce(array_agg(x), '{}') INTO only_on
    FROM (SELECT unnest(r_on) EXCEPT ALL SELECT unnest(r_off)) s(x);
  SELECT coalesce(array_agg(x), '{}') INTO only_off
    FROM (SELECT unnest(r_off) EXCEPT ALL SELECT unnest(r_on)) s(x);
  IF cardinality(only_on) = 0 AND cardinality(only_off) = 0 THEN
    RETURN 'ok ' || cardinality(r_on) || ' rows';
  END IF;
  RETURN 'MISMATCH ' || cardinality(only_on) || ' rows only with gpuext, '
         || cardinality(only_off) || ' only with stock';
END;
$fn$;

-- the cached pages an offloaded query read (NULL: none), under EXPLAIN ANALYZE
CREATE FUNCTION sec_cached_pages(q text) RETURNS bigint
LANGUAGE plpgsql
SET gpuext.force_offload = on
SET gpuext.enabled = on
AS $fn$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  RETURN (SELECT max(v::text::bigint)
            FROM jsonb_path_query(plan::jsonb, 'strict $.**."Cached Pages"') v);
END;
$fn$;

-- a function that is not leakproof: it tells of every row it sees
CREATE FUNCTION sec_leak(id int, secret int) RETURNS bool
LANGUAGE plpgsql COST 0.0001 AS $$
BEGIN
  RAISE NOTICE 'sec_leak saw row % (secret %)', id, secret;
  RETURN true;
END
$$;

-- the queries, as a table: every one for every restricted role and engine
CREATE TABLE sec_queries (n int, plan text, q text);
INSERT INTO sec_queries VALUES
  (1, '%GpuScan%', 'SELECT * FROM sec_fact'),
  (2, '%GpuScan%', 'SELECT id, v FROM sec_fact WHERE v > 600'),
  (3, '%GpuScan%', 'SELECT id FROM sec_fact WHERE 100 / (secret - 7) >= 0'),
  (4, '%GpuScan%', 'SELECT id, grp FROM sec_fact WHERE grp <> 1 OR id = 5'),
  (5, '%GpuJoin%', 'SELECT f.id, d.name FROM sec_fact f JOIN sec_dim d ON d.k = f.id'),
  (6, '%GpuJoin%', 'SELECT f.id, d.name FROM sec_fact f JOIN sec_dim d ON d.k = f.id WHERE 100 / (f.secret - 7) >= 0'),
  (7, '%GpuJoin%', 'SELECT f.id FROM sec_fact f WHERE EXISTS (SELECT 1 FROM sec_dim d WHERE d.k = f.id) AND f.v > 10'),
  (8, '%GpuAgg%', 'SELECT grp, count(*), sum(v), min(d), max(f) FROM sec_fact GROUP BY grp'),
  (9, '%GpuAgg%', 'SELECT count(*), sum(v) FROM sec_fact WHERE 100 / (secret - 7) >= 0'),
  (10, '%GpuAgg%', 'SELECT d.name, count(*), sum(f.v) FROM sec_fact f JOIN sec_dim d ON d.k = f.id GROUP BY d.name'),
  (11, '%GpuAgg%', 'SELECT d.name, count(*) FROM sec_fact f JOIN sec_dim d ON d.k = f.id WHERE 100 / (f.secret - 7) >= 0 GROUP BY d.name'),
  (12, '%GpuScan%', 'SELECT id, v FROM sec_fact WHERE id < 100'),
  (13, '%GpuAgg%', 'SELECT grp, count(*), sum(v) FROM sec_fact WHERE id > 10 GROUP BY grp');
GRANT SELECT ON sec_queries TO PUBLIC;
-- a superuser (no policy applies: the hidden row fails) and the owner
-- (FORCE: the policy applies)
SELECT n, sec_diff(q, plan) FROM sec_queries WHERE n IN (2, 3, 6, 8, 11) ORDER BY n;
SET ROLE regress_gpuext_sec_owner;
SELECT n, sec_diff(q, plan) FROM sec_queries WHERE n IN (1, 3, 6, 8, 11) ORDER BY n;
RESET ROLE;
-- a security-barrier view: its quals, too, run before the query's
CREATE VIEW sec_fact_grp1 WITH (security_barrier) AS
  SELECT id, grp, secret, v FROM sec_fact WHERE grp = 1;
SELECT sec_diff('SELECT id FROM sec_fact_grp1 WHERE 100 / (secret - 7) >= 0', '%GpuScan%');
SELECT sec_diff('SELECT count(*), sum(v) FROM sec_fact_grp1 WHERE 100 / (secret - 7) >= 0', '%Gpu%');
SELECT sec_diff('SELECT g.id, d.name FROM sec_fact_grp1 g JOIN sec_dim d ON d.k = g.id WHERE 100 / (g.secret - 7) >= 0', '%Gpu%');
DROP VIEW sec_fact_grp1;

-- the restricted user, the engine gpuext.device picks, from the heap pages
SET ROLE regress_gpuext_sec_user;
SET gpuext.enable_cache = off;
SELECT n, sec_diff(q, plan) FROM sec_queries ORDER BY n;
-- the same on the CPU engine
SET gpuext.device = cpu;
SELECT n, sec_diff(q, plan) FROM sec_queries ORDER BY n;
RESET gpuext.device;
RESET gpuext.enable_cache;
-- and from the column cache (the owner built it above)
SET gpuext.device = cpu;
SELECT n, sec_diff(q, plan) FROM sec_queries ORDER BY n;
SELECT sec_cached_pages('SELECT id, v FROM sec_fact WHERE v > 600') > 0 AS cached;
SELECT sec_cached_pages('SELECT count(*), sum(v) FROM sec_fact WHERE 100 / (secret - 7) >= 0') > 0 AS cached;
SELECT sec_cached_pages('SELECT f.id FROM sec_fact f JOIN sec_dim d ON d.k = f.id WHERE f.v > 0') > 0 AS cached;
RESET gpuext.device;
-- the policy's qual runs first, on the device and on the host
SET gpuext.force_offload = on;
EXPLAIN (COSTS OFF) SELECT id FROM sec_fact WHERE 100 / (secret - 7) >= 0;
EXPLAIN (COSTS OFF) SELECT f.id, d.name FROM sec_fact f JOIN sec_dim d ON d.k = f.id WHERE 100 / (f.secret - 7) >= 0;
SET gpuext.enable_gpuagg = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM sec_fact f JOIN sec_dim d ON d.k = f.id WHERE 100 / (f.secret - 7) >= 0;
RESET gpuext.enable_gpuagg;
-- a qual that is not leakproof sees only the rows the policy shows
SELECT id FROM sec_small WHERE sec_leak(id, secret);
SELECT f.id FROM sec_small f JOIN sec_dim d ON d.k = f.id + 1 WHERE sec_leak(f.id, f.secret);
RESET gpuext.force_offload;
-- index scans of both access methods (user quals with leakproof
-- operators, the policy's own quals), and the batched joins (not planned
-- under row-level security)
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT sec_diff('SELECT id FROM sec_small WHERE secret = ANY (ARRAY[10, 20, 30])', '%sec_small_secret%', false);
SELECT sec_diff('SELECT id FROM sec_small WHERE secret > 0', '%sec_small_secret%', false);
SELECT sec_diff('SELECT id, note FROM sec_near', '%sec_near_bx%', false);
SELECT sec_diff('SELECT id, note FROM sec_low', '%sec_low_secret%', false);
SET enable_indexscan = off;
SET enable_bitmapscan = on;
SELECT sec_diff('SELECT id FROM sec_small WHERE secret = ANY (ARRAY[10, 20, 30])', '%sec_small_secret%', false);
SELECT sec_diff('SELECT id, note FROM sec_near', '%sec_near_bx%', false);
SELECT sec_diff('SELECT id, note FROM sec_low', '%sec_low_secret%', false);
RESET enable_indexscan;
RESET enable_bitmapscan;
RESET enable_seqscan;
SELECT sec_diff('SELECT s.id, d.k FROM sec_dim d JOIN sec_small s ON s.secret = d.k * 5', '%', false);
SELECT sec_diff('SELECT s.id, d.k FROM sec_dim d JOIN sec_small s ON s.bx && box(point(d.k - 2, d.k - 2), point(d.k - 1.5, d.k - 1.5))', '%', false);
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
-- (not planned: 'not offloaded')
SELECT sec_diff('SELECT s.id, d.k FROM sec_dim d JOIN sec_small s ON s.bx && box(point(d.k - 2, d.k - 2), point(d.k - 1.5, d.k - 1.5))', '%GistJoin%');
RESET ROLE;
-- (GistJoin is what a role the policies do not apply to gets)
SET ROLE regress_gpuext_sec_bypass;
SELECT sec_diff('SELECT s.id, d.k FROM sec_dim d JOIN sec_small s ON s.bx && box(point(d.k - 2, d.k - 2), point(d.k - 1.5, d.k - 1.5))', '%GistJoin%');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;
RESET ROLE;

-- a role with column grants: the columns it may read, and no others
SET ROLE regress_gpuext_sec_cols;
SELECT n, sec_diff(q, plan) FROM sec_queries WHERE n IN (1, 2, 5, 12, 13) ORDER BY n;
SELECT sec_diff('SELECT grp, count(*), sum(v) FROM sec_fact GROUP BY grp', '%GpuAgg%');
SELECT sec_diff('SELECT f.id, d.name FROM sec_fact f JOIN sec_dim d ON d.k = f.id WHERE f.v > 10', '%GpuJoin%');
SELECT count(*) FROM sec_fact WHERE secret > 0;
SET gpuext.force_offload = on;
SELECT count(*) FROM sec_fact WHERE secret > 0;
RESET gpuext.force_offload;
RESET ROLE;

-- BYPASSRLS sees every row, offloaded as stock
SET ROLE regress_gpuext_sec_bypass;
SELECT n, sec_diff(q, plan) FROM sec_queries WHERE n IN (2, 3, 6, 8, 11) ORDER BY n;
RESET ROLE;

-- clean up
SELECT gpuext_cache_drop('sec_fact'), gpuext_cache_drop('sec_noforce');
DROP TABLE sec_small, sec_noforce, sec_near, sec_low, sec_fact, sec_dim, sec_queries;
DROP FUNCTION sec_diff(text, text, bool), sec_cached_pages(text), sec_leak(int, int);
DROP ROLE regress_gpuext_sec_owner;
DROP ROLE regress_gpuext_sec_user;
DROP ROLE regress_gpuext_sec_cols;
DROP ROLE regress_gpuext_sec_bypass;
DROP ROLE regress_gpuext_sec_monitor;
SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 AS released FROM gpuext_status();
