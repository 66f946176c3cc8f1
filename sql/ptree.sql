-- gpuext_ptree index access method: index scans must return exactly what
-- sequential scans return, through inserts (delta), merges, updates,
-- deletes, VACUUM, REINDEX, VACUUM FULL, TRUNCATE and on unlogged tables
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
SET gpuext.enabled = off;		-- compare with stock PostgreSQL's own scans

-- runs q with the index forced and with a sequential scan; the two result
-- multisets must be equal (EXCEPT ALL both ways) and the index used
CREATE FUNCTION ptree_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  line text;
  used boolean := false;
  n bigint;
  diff bigint;
BEGIN
  PERFORM set_config('enable_seqscan', 'off', true);
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line ~ 'Index Scan using|Bitmap Index Scan on' THEN used := true; END IF;
  END LOOP;
  EXECUTE 'CREATE TEMP TABLE ptree_r_idx AS ' || q;
  PERFORM set_config('enable_seqscan', 'on', true);
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  EXECUTE 'CREATE TEMP TABLE ptree_r_seq AS ' || q;
  PERFORM set_config('enable_indexscan', 'on', true);
  PERFORM set_config('enable_bitmapscan', 'on', true);
  SELECT count(*) INTO diff FROM
    ((SELECT * FROM ptree_r_idx EXCEPT ALL SELECT * FROM ptree_r_seq)
     UNION ALL
     (SELECT * FROM ptree_r_seq EXCEPT ALL SELECT * FROM ptree_r_idx)) x;
  SELECT count(*) INTO n FROM ptree_r_idx;
  DROP TABLE ptree_r_idx, ptree_r_seq;
  RETURN n || ' rows, ' ||
    CASE WHEN NOT used THEN 'index NOT used' WHEN diff = 0 THEN 'same' ELSE diff || ' differ' END;
END $$;

-- every query of the battery, plain index scans and then bitmap scans
CREATE FUNCTION ptree_battery(tab text) RETURNS TABLE (query text, plain text, bitmap text)
LANGUAGE plpgsql AS $$
DECLARE
  qs text[] := ARRAY[
    'SELECT * FROM %s WHERE i = 7',
    'SELECT * FROM %s WHERE i < 3',
    'SELECT * FROM %s WHERE i <= 3 AND i > -2',
    'SELECT * FROM %s WHERE i >= 290',
    'SELECT * FROM %s WHERE i > 1000',
    'SELECT * FROM %s WHERE i = ANY(''{1,5,5,9,NULL,-3}'')',
    'SELECT * FROM %s WHERE i = ANY(''{}'')',
    'SELECT * FROM %s WHERE i = ANY(''{2,4,6}'') AND i > 3',
    'SELECT * FROM %s WHERE i IS NULL',
    'SELECT * FROM %s WHERE i IS NOT NULL',
    'SELECT * FROM %s WHERE i = (SELECT NULL::int)',
    'SELECT * FROM %s WHERE i = ANY(''{NULL,NULL}'')',
    'SELECT * FROM %s WHERE b = 4000000000',
    'SELECT * FROM %s WHERE b BETWEEN -3000 AND 3000',
    'SELECT * FROM %s WHERE b > 2490000::bigint',
    'SELECT * FROM %s WHERE b = ANY(''{-2500000,0,17,4000000000}''::int8[])',
    'SELECT * FROM %s WHERE b = ANY(ARRAY(SELECT g::bigint * 1000 FROM generate_series(-100, 2000) g))',
    'SELECT * FROM %s WHERE t = ''key42''',
    'SELECT * FROM %s WHERE t ~<~ ''key2''',
    'SELECT * FROM %s WHERE t ~>=~ ''key5'' AND t ~<=~ ''key6''',
    'SELECT * FROM %s WHERE t = ANY(''{key1,key10,key100,nokey,""}'')',
    'SELECT * FROM %s WHERE t IS NULL',
    'SELECT * FROM %s WHERE tc < ''key15'' COLLATE "C"',
    'SELECT * FROM %s WHERE tc >= ''key8'' COLLATE "C"',
    'SELECT * FROM %s WHERE d = ''2021-03-04''',
    'SELECT * FROM %s WHERE d > ''2021-12-25''',
    'SELECT * FROM %s WHERE d = ''infinity''',
    'SELECT * FROM %s WHERE ts >= ''2020-06-01 12:00'' AND ts < ''2020-06-03''',
    'SELECT * FROM %s WHERE ts = ''-infinity'''];
  q text;
BEGIN
  FOREACH q IN ARRAY qs LOOP
    query := q;
    PERFORM set_config('enable_bitmapscan', 'off', true);
    plain := ptree_same(format(q, tab));
    PERFORM set_config('enable_bitmapscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'off', true);
    bitmap := ptree_same(format(q, tab));
    PERFORM set_config('enable_indexscan', 'on', true);
    RETURN NEXT;
  END LOOP;
END $$;

-- data: duplicates (posting lists longer than a page), NULLs, negative
-- numbers, extremes, infinities, texts of many lengths
CREATE FUNCTION ptree_fill(tab text, lo int, hi int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format($f$
    INSERT INTO %s
    SELECT CASE WHEN g %% 97 = 0 THEN NULL ELSE (g * 37) %% 301 - 5 END,
           CASE WHEN g %% 89 = 0 THEN NULL WHEN g %% 1000 = 1 THEN 4000000000 ELSE (g %% 5000 - 2500)::bigint * 1000 END,
           CASE WHEN g %% 83 = 0 THEN NULL ELSE 'key' || (g %% 1200) || repeat('x', g %% 7) END,
           CASE WHEN g %% 79 = 0 THEN NULL ELSE 'key' || (g %% 300) END,
           CASE WHEN g %% 73 = 0 THEN NULL WHEN g %% 501 = 0 THEN 'infinity'::date ELSE date '2020-01-01' + g %% 800 END,
           CASE WHEN g %% 71 = 0 THEN NULL WHEN g %% 601 = 0 THEN '-infinity'::timestamp
                ELSE timestamp '2020-01-01' + g * interval '17 minutes' END
      FROM generate_series(%s, %s) g $f$, tab, lo, hi);
END $$;

CREATE TABLE pt (i int, b bigint, t text, tc text COLLATE "C", d date, ts timestamp);
SELECT ptree_fill('pt', 1, 10000);
CREATE INDEX pt_i ON pt USING gpuext_ptree (i);
CREATE INDEX pt_b ON pt USING gpuext_ptree (b) WITH (delta_pages = 3);
CREATE INDEX pt_t ON pt USING gpuext_ptree (t);
CREATE INDEX pt_tc ON pt USING gpuext_ptree (tc text_c_ptree_ops);
CREATE INDEX pt_d ON pt USING gpuext_ptree (d) WITH (delta_pages = 1, fillfactor = 50);
CREATE INDEX pt_ts ON pt USING gpuext_ptree (ts);
ANALYZE pt;

CREATE FUNCTION ptree_check_all(tab regclass) RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(c.relname || CASE WHEN gpuext_ptree_check(c.oid, true)::text = '' THEN ':ok' END, ' ' ORDER BY c.relname)
    FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
   WHERE x.indrelid = tab AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'gpuext_ptree')
$$;

-- after the build
SELECT ptree_check_all('pt');
SELECT * FROM ptree_battery('pt');

-- inserts go to the delta (pt_b and pt_d merge several times on the way)
SELECT ptree_fill('pt', 10001, 14000);
SELECT ptree_check_all('pt');
SELECT * FROM ptree_battery('pt') WHERE plain <> bitmap OR plain !~ 'same';
SELECT count(*) AS battery_ok FROM ptree_battery('pt') WHERE plain ~ 'same' AND bitmap ~ 'same';

-- updates and deletes, then VACUUM (bulk delete merges without dead TIDs)
UPDATE pt SET i = i + 1, t = t || 'u' WHERE i % 10 = 3;
DELETE FROM pt WHERE b % 7000 = 0;
SELECT ptree_check_all('pt');
SELECT count(*) AS battery_ok FROM ptree_battery('pt') WHERE plain ~ 'same' AND bitmap ~ 'same';
VACUUM pt;
SELECT ptree_check_all('pt');
SELECT count(*) AS battery_ok FROM ptree_battery('pt') WHERE plain ~ 'same' AND bitmap ~ 'same';
-- VACUUM gave the pages of old generations to the free space map: more
-- inserts and merges reuse them
SELECT pg_relation_size('pt_d') / 8192 AS before \gset
SELECT ptree_fill('pt', 14001, 16000);
VACUUM pt;
SELECT ptree_fill('pt', 16001, 18000);
SELECT pg_relation_size('pt_d') / 8192 <= :before * 2 AS pages_reused;
SELECT ptree_check_all('pt');

-- REINDEX, VACUUM FULL, CLUSTER-free rewrite, TRUNCATE
REINDEX TABLE pt;
SELECT ptree_check_all('pt');
SELECT count(*) AS battery_ok FROM ptree_battery('pt') WHERE plain ~ 'same' AND bitmap ~ 'same';
REINDEX TABLE CONCURRENTLY pt;
SELECT ptree_check_all('pt');
VACUUM FULL pt;
SELECT ptree_check_all('pt');
SELECT count(*) AS battery_ok FROM ptree_battery('pt') WHERE plain ~ 'same' AND bitmap ~ 'same';
BEGIN;
TRUNCATE pt;
SELECT ptree_check_all('pt');
SELECT count(*) FROM pt WHERE i = 7;
SELECT ptree_fill('pt', 1, 3000);
SELECT ptree_check_all('pt');
SELECT count(*) AS battery_ok FROM ptree_battery('pt') WHERE plain ~ 'same' AND bitmap ~ 'same';
ROLLBACK;
SELECT ptree_check_all('pt');

-- unlogged table (the empty index's init fork)
CREATE UNLOGGED TABLE upt (LIKE pt);
CREATE INDEX upt_i ON upt USING gpuext_ptree (i) WITH (delta_pages = 2);
CREATE INDEX upt_t ON upt USING gpuext_ptree (t);
SELECT ptree_fill('upt', 1, 8000);
SELECT ptree_check_all('upt');
SELECT ptree_same('SELECT * FROM upt WHERE i = ANY(''{1,2,3}'') OR i IS NULL');
SELECT ptree_same('SELECT * FROM upt WHERE t ~>~ ''key9''');
DELETE FROM upt WHERE i < 0;
VACUUM upt;
SELECT ptree_check_all('upt');
SELECT ptree_same('SELECT * FROM upt WHERE i <= 2');

-- empty table and a table of NULLs only
CREATE TABLE ept (i int);
CREATE INDEX ept_i ON ept USING gpuext_ptree (i) WITH (delta_pages = 2);
SELECT gpuext_ptree_check('ept_i', true);
SELECT ptree_same('SELECT * FROM ept WHERE i = 1');
INSERT INTO ept SELECT NULL FROM generate_series(1, 2000);
SELECT gpuext_ptree_check('ept_i', true);
SELECT ptree_same('SELECT * FROM ept WHERE i IS NULL');
SELECT ptree_same('SELECT * FROM ept WHERE i > 0');
-- posting lists longer than a page, merged from the delta several times
INSERT INTO ept SELECT 5 FROM generate_series(1, 3000);
INSERT INTO ept SELECT g % 3 + 4 FROM generate_series(1, 3000) g;
SELECT gpuext_ptree_check('ept_i', true);
SELECT ptree_same('SELECT * FROM ept WHERE i = 5');
SELECT ptree_same('SELECT * FROM ept WHERE i >= 5');
DELETE FROM ept WHERE i = 5 AND ctid < '(10,0)';
VACUUM ept;
SELECT gpuext_ptree_check('ept_i', true);
SELECT ptree_same('SELECT * FROM ept WHERE i = ANY(''{4,5}'') OR i IS NULL');

-- a partial index and an expression index
CREATE INDEX pt_part ON pt USING gpuext_ptree (b) WHERE i > 100;
CREATE INDEX pt_expr ON pt USING gpuext_ptree ((i * 2));
SELECT gpuext_ptree_check('pt_part', true), gpuext_ptree_check('pt_expr', true);
SELECT ptree_same('SELECT * FROM pt WHERE b = 5000 AND i > 100');
SELECT ptree_same('SELECT * FROM pt WHERE i * 2 = 20');
DROP INDEX pt_part, pt_expr;

-- reloptions: bounds and names
CREATE INDEX bad ON pt USING gpuext_ptree (i) WITH (delta_pages = 0);
CREATE INDEX bad ON pt USING gpuext_ptree (i) WITH (delta_pages = 100001);
CREATE INDEX bad ON pt USING gpuext_ptree (i) WITH (fillfactor = 5);
CREATE INDEX bad ON pt USING gpuext_ptree (i) WITH (fillfactor = 101);
CREATE INDEX bad ON pt USING gpuext_ptree (i) WITH (nosuch = 1);
ALTER INDEX pt_i SET (delta_pages = 7);
SELECT reloptions FROM pg_class WHERE relname = 'pt_i';
ALTER INDEX pt_i SET (delta_pages = -1);

-- what the access method refuses
CREATE INDEX bad ON pt USING gpuext_ptree (i, b);
CREATE INDEX bad ON pt USING gpuext_ptree (i) INCLUDE (b);
CREATE UNIQUE INDEX bad ON pt USING gpuext_ptree (i);
CREATE INDEX bad ON pt USING gpuext_ptree ((i::float8));
CREATE INDEX bad ON pt USING gpuext_ptree (t text_c_ptree_ops);	-- not the C collation
CREATE TABLE longkey (t text);
CREATE INDEX longkey_t ON longkey USING gpuext_ptree (t);
INSERT INTO longkey VALUES (repeat('a', 1024));
INSERT INTO longkey VALUES (repeat('a', 1025));
INSERT INTO longkey SELECT string_agg(md5(g::text), '') FROM generate_series(1, 40) g;
DROP TABLE longkey;

-- operator classes: all valid, and what they hold
SELECT c.opcname, amvalidate(c.oid), c.opcdefault
  FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
 WHERE a.amname = 'gpuext_ptree' ORDER BY 1;
SELECT c.opcname, string_agg(o.amopstrategy || ':' || o.amopopr::regoperator::text, ' ' ORDER BY o.amopstrategy)
  FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod JOIN pg_amop o ON o.amopfamily = c.opcfamily
 WHERE a.amname = 'gpuext_ptree' GROUP BY 1 ORDER BY 1;
-- an operator class with a foreign operator fails validation
CREATE OPERATOR CLASS bad_ptree_ops FOR TYPE int4 USING gpuext_ptree AS OPERATOR 3 <>;
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'bad_ptree_ops';
DROP OPERATOR CLASS bad_ptree_ops USING gpuext_ptree;
-- no ordered scans: ORDER BY sorts
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT i FROM pt WHERE i > 295 ORDER BY i;
RESET enable_seqscan;
-- = ANY with a large array uses the index
EXPLAIN (COSTS OFF) SELECT * FROM pt WHERE b = ANY(ARRAY(SELECT g::bigint FROM generate_series(1, 5000) g));

-- = ANY batches: looked up in the prefix-tree mirror (gpuext.ptree_batch_min
-- elements or more) or one descent per element; both as a sequential scan
CREATE TABLE mpt (i int, b bigint, t text, d date);
INSERT INTO mpt SELECT g % 5000, (g % 7000)::bigint * 100003 - 300000000, 'k' || (g % 3000), date '2000-01-01' + g % 900
  FROM generate_series(1, 20000) g;
INSERT INTO mpt VALUES (NULL, NULL, NULL, NULL), (70000, 0, '', 'infinity');
CREATE INDEX mpt_i ON mpt USING gpuext_ptree (i);
CREATE INDEX mpt_b ON mpt USING gpuext_ptree (b) WITH (delta_pages = 2);
CREATE INDEX mpt_t ON mpt USING gpuext_ptree (t);
CREATE INDEX mpt_d ON mpt USING gpuext_ptree (d);
CREATE FUNCTION ptree_batches() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  q text;
BEGIN
  FOREACH q IN ARRAY ARRAY[
    'SELECT * FROM mpt WHERE i = ANY(ARRAY(SELECT generate_series(-10, 6000, 3)))',
    'SELECT * FROM mpt WHERE i = ANY(ARRAY(SELECT generate_series(60000, 80000, 10000)))',
    'SELECT * FROM mpt WHERE b = ANY(ARRAY(SELECT g::bigint * 100003 - 300000000 FROM generate_series(-10, 8000, 7) g))',
    'SELECT * FROM mpt WHERE t = ANY(ARRAY(SELECT ''k'' || g FROM generate_series(1, 4000, 5) g) || ''{"",k,k1x}''::text[])',
    'SELECT * FROM mpt WHERE t = ANY(ARRAY(SELECT ''k'' || g FROM generate_series(1, 4000, 5) g)) AND t ~>~ ''k2''',
    'SELECT * FROM mpt WHERE d = ANY(ARRAY(SELECT date ''2000-01-01'' + g FROM generate_series(-5, 1000, 2) g) || ''{infinity}''::date[])',
    'SELECT * FROM mpt WHERE i = ANY(ARRAY(SELECT generate_series(1, 500))) AND i = ANY(''{5,7,9,5000}'')'] LOOP
    PERFORM set_config('gpuext.ptree_batch_min', '0', true);
    RETURN NEXT 'descents: ' || ptree_same(q);
    PERFORM set_config('gpuext.ptree_batch_min', '64', true);
    RETURN NEXT 'batch:    ' || ptree_same(q);
  END LOOP;
END $$;
SELECT * FROM ptree_batches();
-- after inserts (in the delta, and merged: the mirror is rebuilt for the new generation)
INSERT INTO mpt SELECT g % 5000 + 3, (g % 7000)::bigint * 100003 - 299999999, 'k' || (g % 3000) || 'n', date '2000-01-01' + g % 1000
  FROM generate_series(1, 3000) g;
SELECT * FROM ptree_batches();
DELETE FROM mpt WHERE i % 3 = 0;
VACUUM mpt;
SELECT * FROM ptree_batches();
DROP TABLE mpt;
DROP FUNCTION ptree_batches();

-- keys that share their leading bytes (int8 keys near 2^40, text keys with
-- a common prefix): the mirror's 32-bit prefix starts after those bytes;
-- probes that lack them, are shorter or are the shared bytes alone
CREATE TABLE spt (b bigint, t text);
INSERT INTO spt SELECT (1::bigint << 40) + g * 7, 'prefix-' || g FROM generate_series(1, 5000) g;
CREATE INDEX spt_b ON spt USING gpuext_ptree (b);
CREATE INDEX spt_t ON spt USING gpuext_ptree (t);
SELECT ptree_same('SELECT * FROM spt WHERE b = ANY(ARRAY(SELECT (1::bigint << 40) + g FROM generate_series(-100, 40000, 3) g) || ''{0,-1,1099511627776,2199023255552}''::bigint[])');
SELECT ptree_same('SELECT * FROM spt WHERE t = ANY(ARRAY(SELECT ''prefix-'' || g FROM generate_series(1, 6000, 7) g) || ''{"",p,pre,prefix,prefix-,prefix-0,prefix-1,prefiy-1,q}''::text[])');
DROP TABLE spt;

-- a mirror over gpuext.ptree_mirror_max_mb once built (sparse keys: a
-- KISS node each, which the estimate leaves out): refused, remembered for
-- the generation, and the batch descends the directory
CREATE TABLE wpt (b bigint);
INSERT INTO wpt SELECT g::bigint * 1000003 FROM generate_series(1, 2000) g;
CREATE INDEX wpt_b ON wpt USING gpuext_ptree (b);
SET gpuext.ptree_mirror_max_mb = 1;
SELECT ptree_same('SELECT * FROM wpt WHERE b = ANY(ARRAY(SELECT g::bigint * 1000003 FROM generate_series(-5, 3000, 2) g))');
SELECT ptree_same('SELECT * FROM wpt WHERE b = ANY(ARRAY(SELECT g::bigint * 1000003 FROM generate_series(-5, 3000, 3) g))');
RESET gpuext.ptree_mirror_max_mb;
SELECT ptree_same('SELECT * FROM wpt WHERE b = ANY(ARRAY(SELECT g::bigint * 1000003 FROM generate_series(-5, 3000, 2) g))');
DROP TABLE wpt;

-- the checker's errors, with their SQLSTATEs
CREATE FUNCTION ptree_err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT ptree_err('SELECT gpuext_ptree_check(NULL, true)');
SELECT ptree_err('SELECT gpuext_ptree_check(''pt_i'', NULL)');
SELECT ptree_err('SELECT gpuext_ptree_check(''pt'', false)');
SELECT ptree_err('SELECT gpuext_ptree_check(''nosuch'', false)');
CREATE INDEX pt_btree ON pt (i);
SELECT ptree_err('SELECT gpuext_ptree_check(''pt_btree'', false)');
DROP INDEX pt_btree;
CREATE ROLE ptree_nobody;
GRANT SELECT ON pt TO ptree_nobody;
SET ROLE ptree_nobody;
SELECT ptree_err('SELECT gpuext_ptree_check(''pt_i'', false)');
RESET ROLE;
REVOKE SELECT ON pt FROM ptree_nobody;
DROP ROLE ptree_nobody;
-- the default: structure only
SELECT gpuext_ptree_check('pt_i');

DROP TABLE pt, upt, ept;
DROP FUNCTION ptree_battery(text), ptree_same(text), ptree_fill(text, int, int), ptree_check_all(regclass),
  ptree_err(text);
