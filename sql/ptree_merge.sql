-- gpuext_ptree planned merges (issue 8, seed 003): with
-- gpuext.ptree_merge_plan = on the delta of an int4, int8, date or
-- timestamp index is sorted by (key, TID), exact duplicates dropped and
-- each entry ranked in main's mirror (here on the CPU engine; the GPU's
-- plan is in test/gpu/sql/gpu_ptree.sql), then spliced into main as its
-- leaves stream past.  The same workload on two tables, one merged with
-- plans, one by comparing keys (off), must give the same index pages, page
-- for page (page headers aside: LSNs), and the rows of sequential scans;
-- the workload has new keys, keys main has, keys repeated in the delta,
-- NULLs (also in an index whose main is NULLs only), an empty main, a
-- posting list longer than a page, deletes and VACUUM (bulk delete merges
-- the delta dropping dead TIDs) and keys of both signs.
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
RESET client_min_messages;
SET gpuext.device = cpu;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- an index's pages, without their headers
CREATE FUNCTION pm_pages(i regclass) RETURNS text LANGUAGE sql AS $$
  SELECT md5(string_agg(substring(pg_read_binary_file(pg_relation_filepath(i), blk * 8192, 8192) FROM 25),
                        ''::bytea ORDER BY blk))
    FROM generate_series(0, pg_relation_size(i) / 8192 - 1) blk $$;

-- a table with the four indexes; empty (nothing in main at the first merge) or filled
CREATE FUNCTION pm_create(tab text, fill bool) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TABLE %I (i int4, b int8, d date, ts timestamp)', tab);
  IF fill THEN
    EXECUTE format('INSERT INTO %I SELECT g %% 5000 - 2500, g * 7 %% 3001, date ''2020-01-01'' + g %% 900,
                      timestamp ''2020-01-01'' + g * interval ''1 minute'' FROM generate_series(1, 20000) g', tab);
    -- one key with a posting list longer than a page
    EXECUTE format('INSERT INTO %I SELECT 77, 77, date ''2020-03-03'', timestamp ''2020-03-03'' FROM generate_series(1, 3000)', tab);
  END IF;
  EXECUTE format('CREATE INDEX %I ON %I USING gpuext_ptree (i) WITH (delta_pages = 2)', tab || '_i', tab);
  EXECUTE format('CREATE INDEX %I ON %I USING gpuext_ptree (b) WITH (delta_pages = 3)', tab || '_b', tab);
  EXECUTE format('CREATE INDEX %I ON %I USING gpuext_ptree (d) WITH (delta_pages = 1)', tab || '_d', tab);
  EXECUTE format('CREATE INDEX %I ON %I USING gpuext_ptree (ts) WITH (delta_pages = 2)', tab || '_ts', tab);
END $$;

-- inserts of new keys, keys main has, keys repeated in the delta and NULLs
CREATE FUNCTION pm_insert(tab text, lo int, hi int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('INSERT INTO %I SELECT CASE WHEN g %% 13 = 0 THEN NULL ELSE (g * 31) %% 9000 - 4000 END,
                    CASE WHEN g %% 17 = 0 THEN NULL ELSE g %% 4000 - 500 END,
                    CASE WHEN g %% 19 = 0 THEN NULL ELSE date ''2019-06-01'' + g %% 1500 END,
                    CASE WHEN g %% 11 = 0 THEN NULL ELSE timestamp ''2019-12-01'' + g %% 2000 * interval ''7 minutes'' END
                    FROM generate_series(%s, %s) g', tab, lo, hi);
  EXECUTE format('INSERT INTO %I SELECT 77, 77, date ''2020-03-03'', timestamp ''2020-03-03'' FROM generate_series(1, 500)', tab);
END $$;

-- the pages of each index of a against b's, and the index scans of a against seqscans
CREATE FUNCTION pm_compare(a text, b text) RETURNS TABLE (col text, same_pages bool, rows_ok bool, checked text)
LANGUAGE plpgsql AS $$
DECLARE
  c text;
  n1 bigint;
  n2 bigint;
BEGIN
  CHECKPOINT;
  FOREACH c IN ARRAY ARRAY['i', 'b', 'd', 'ts'] LOOP
    col := c;
    same_pages := pm_pages((a || '_' || c)::regclass) = pm_pages((b || '_' || c)::regclass);
    SET LOCAL enable_indexscan = on;
    EXECUTE format('SELECT count(*) FROM (SELECT %I, ctid FROM %I WHERE %I >= (SELECT min(%I) FROM %I)
                      UNION ALL SELECT %I, ctid FROM %I WHERE %I IS NULL) x', c, a, c, c, a, c, a, c) INTO n1;
    SET LOCAL enable_indexscan = off;
    SET LOCAL enable_seqscan = on;
    EXECUTE format('SELECT count(*) FROM %I', a) INTO n2;
    SET LOCAL enable_seqscan = off;
    SET LOCAL enable_indexscan = on;
    rows_ok := n1 = n2;
    PERFORM gpuext_ptree_check((a || '_' || c)::regclass, true);
    checked := 'ok';
    RETURN NEXT;
  END LOOP;
END $$;

CREATE FUNCTION pm_stats() RETURNS TABLE (gpu bigint, cpu bigint, compare bigint, entries bigint)
LANGUAGE sql AS $$ SELECT gpu_merges, cpu_merges, compare_merges, planned_entries FROM gpuext_ptree_merge_stats() $$;

SELECT * FROM pm_stats() \gset before_

-- filled main; plan on (pm_a) and off (pm_b)
SET gpuext.ptree_merge_plan = on;
SELECT pm_create('pm_a', true);
SELECT pm_insert('pm_a', 1, 15000);
DELETE FROM pm_a WHERE i % 7 = 3 OR b % 11 = 0;
SELECT pm_insert('pm_a', 15001, 16000);
VACUUM pm_a;
SELECT pm_insert('pm_a', 16001, 20000);
SET gpuext.ptree_merge_plan = off;
SELECT pm_create('pm_b', true);
SELECT pm_insert('pm_b', 1, 15000);
DELETE FROM pm_b WHERE i % 7 = 3 OR b % 11 = 0;
SELECT pm_insert('pm_b', 15001, 16000);
VACUUM pm_b;
SELECT pm_insert('pm_b', 16001, 20000);
RESET gpuext.ptree_merge_plan;
SELECT * FROM pm_compare('pm_a', 'pm_b');

-- merges planned on the CPU engine, none on the GPU
SELECT s.gpu - :before_gpu AS gpu_merges, s.cpu - :before_cpu > 20 AS cpu_merges,
       s.entries - :before_entries > 30000 AS planned_entries FROM pm_stats() s;

-- an empty main at the first merge, then a main of NULLs only
SET gpuext.ptree_merge_plan = on;
SELECT pm_create('pm_c', false);
INSERT INTO pm_c SELECT NULL, NULL, NULL, NULL FROM generate_series(1, 3000);
SELECT pm_insert('pm_c', 1, 6000);
SET gpuext.ptree_merge_plan = off;
SELECT pm_create('pm_d', false);
INSERT INTO pm_d SELECT NULL, NULL, NULL, NULL FROM generate_series(1, 3000);
SELECT pm_insert('pm_d', 1, 6000);
RESET gpuext.ptree_merge_plan;
SELECT * FROM pm_compare('pm_c', 'pm_d');

-- auto (the default) plans only where the backend has the index's
-- mirror: not after a merge (a new generation), so these merges compare
-- keys
SELECT * FROM pm_stats() \gset before_
SELECT pm_insert('pm_c', 6001, 9000);
SELECT s.cpu - :before_cpu AS cpu_merges, s.compare - :before_compare > 0 AS compare_merges FROM pm_stats() s;

-- and where a batched lookup (= ANY of gpuext.ptree_batch_min keys) has
-- just built the mirror, the next merge is planned with it
SELECT * FROM pm_stats() \gset before_
SET gpuext.ptree_batch_min = 2;
SELECT count(*) FROM pm_c WHERE i = ANY('{1,2,3,4,5,6,7,8}');
RESET gpuext.ptree_batch_min;
SELECT pm_insert('pm_c', 9001, 9300);
SELECT s.cpu - :before_cpu AS cpu_merges FROM pm_stats() s;
SELECT gpuext_ptree_check('pm_c_i', true);

-- text keys always compare
CREATE TABLE pm_t (t text);
CREATE INDEX pm_t_t ON pm_t USING gpuext_ptree (t) WITH (delta_pages = 1);
SET gpuext.ptree_merge_plan = on;
SELECT * FROM pm_stats() \gset before_
INSERT INTO pm_t SELECT 'k' || g FROM generate_series(1, 2000) g;
SELECT s.cpu - :before_cpu AS cpu_merges, s.compare - :before_compare > 0 AS compare_merges FROM pm_stats() s;
SELECT gpuext_ptree_check('pm_t_t', true);
RESET gpuext.ptree_merge_plan;

-- delta_percent: the delta may grow to that share of main's pages
CREATE TABLE pm_p (i int4);
INSERT INTO pm_p SELECT g FROM generate_series(1, 200000) g;
CREATE INDEX pm_p_i ON pm_p USING gpuext_ptree (i) WITH (delta_pages = 1, delta_percent = 5);
SELECT * FROM pm_stats() \gset before_
INSERT INTO pm_p SELECT g FROM generate_series(1, 4000) g;
SELECT (s.cpu + s.compare) - (:before_cpu + :before_compare) AS merges FROM pm_stats() s;
ALTER INDEX pm_p_i SET (delta_percent = 0);
INSERT INTO pm_p SELECT g FROM generate_series(1, 4000) g;
SELECT (s.cpu + s.compare) - (:before_cpu + :before_compare) > 5 AS merged FROM pm_stats() s;
SELECT gpuext_ptree_check('pm_p_i', true);

DROP TABLE pm_a, pm_b, pm_c, pm_d, pm_t, pm_p;
DROP FUNCTION pm_pages(regclass), pm_create(text, bool), pm_insert(text, int, int), pm_compare(text, text), pm_stats();
