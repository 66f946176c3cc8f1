--
-- gpuext_gist: the R-tree index access method.  Every operator gives the
-- same rows through the index (index scans and bitmap scans, also as the
-- inner side of nested loops: rescans) as a sequential scan and as
-- PostgreSQL's own GiST index, on data with degenerate boxes, duplicates,
-- NULLs, NaN and infinite coordinates, and values within EPSILON of each
-- other; again after inserts (splits), deletes and VACUUM.
--
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
RESET client_min_messages;
SET gpuext.enabled = off;	-- this suite is about the index alone

-- the data: a grid of boxes, degenerate boxes, near-EPSILON neighbours,
-- duplicates, NULLs, NaN and infinities
CREATE TABLE gg_seq (id int, bx box, pt point);
INSERT INTO gg_seq
SELECT g, box(point(g % 50, g / 50), point(g % 50 + g % 4, g / 50 + g % 3)),
       point(g % 50 + 0.5, g / 50 + 0.25)
  FROM generate_series(1, 2000) g;
INSERT INTO gg_seq VALUES
  (3001, box '(5,5),(5,5)', point '(5,5)'),
  (3002, box '(5,5),(5,5)', point '(5,5)'),
  (3003, box '(5,5),(9,5)', point '(5.0000005,5)'),
  (3004, box '(5.0000005,5.0000005),(5.0000005,5.0000005)', point '(5.000002,5)'),
  (3005, box '(10,10),(20,20)', point '(10,10)'),
  (3006, box '(10.0000009,10),(20.0000009,20)', point '(20.0000009,20)'),
  (3007, NULL, NULL),
  (3008, NULL, point '(1,1)'),
  (3009, box '(1,1),(2,2)', NULL),
  (3010, box '(NaN,1),(2,2)', point '(NaN,1)'),
  (3011, box '(NaN,NaN),(NaN,NaN)', point '(NaN,NaN)'),
  (3012, box '(-Infinity,0),(Infinity,1)', point '(Infinity,0)'),
  (3013, box '(0,-Infinity),(1,Infinity)', point '(-Infinity,-Infinity)'),
  (3014, box '(-1e300,-1e300),(1e300,1e300)', point '(1e300,-1e300)'),
  (3015, box '(-3,-3),(-1,-1)', point '(-2,-2)'),
  (3016, box '(10,10),(20,20)', point '(10,10)');
CREATE TABLE gg_gx (LIKE gg_seq);
INSERT INTO gg_gx SELECT * FROM gg_seq;
CREATE TABLE gg_gist (LIKE gg_seq);
-- PostgreSQL's GiST gets overflow errors and other answers on NaN and
-- infinite coordinates: it gets the finite rows only
INSERT INTO gg_gist SELECT * FROM gg_seq WHERE id NOT BETWEEN 3010 AND 3014;
-- small nodes: a deep tree from few rows
CREATE INDEX gg_gx_bx ON gg_gx USING gpuext_gist (bx) WITH (node_size = 16);
CREATE INDEX gg_gx_pt ON gg_gx USING gpuext_gist (pt) WITH (node_size = 8, fillfactor = 50);
CREATE INDEX gg_gist_bx ON gg_gist USING gist (bx);
CREATE INDEX gg_gist_pt ON gg_gist USING gist (pt);
ANALYZE gg_seq, gg_gx, gg_gist;
SELECT levels, leaf_entries, heap_tuples FROM gpuext_gist_check('gg_gx_bx', true);
SELECT levels, leaf_entries, heap_tuples FROM gpuext_gist_check('gg_gx_pt', true);

-- the queries
CREATE TABLE gg_q (qid int, qb box, qp point);
INSERT INTO gg_q VALUES
  (1, box '(10,10),(20,20)', point '(10,10)'),
  (2, box '(5,5),(5,5)', point '(5,5)'),
  (3, box '(4.9999995,4.9999995),(5.0000005,5.0000005)', point '(5.0000005,5)'),
  (4, box '(0,0),(49,40)', point '(20.0000009,20)'),
  (5, box '(-100,-100),(100,100)', point '(5.0000015,5)'),
  (6, box '(25.5,7.25),(25.5,7.25)', point '(25.5,7.25)'),
  (7, box '(3,3),(6,4)', point '(30.5,30.25)'),
  (8, box '(NaN,1),(2,2)', point '(NaN,1)'),
  (9, box '(NaN,NaN),(NaN,NaN)', point '(NaN,NaN)'),
  (10, box '(-Infinity,0),(Infinity,1)', point '(Infinity,0)'),
  (11, box '(-Infinity,-Infinity),(Infinity,Infinity)', point '(-Infinity,-Infinity)'),
  (12, box '(1000,1000),(2000,2000)', point '(1000,1000)'),
  (13, box '(10.000001,10),(20.000001,20)', point '(10.000001,10)'),
  (14, box '(12,2),(15,2)', point '(12.5,2.25)'),
  (15, box '(-3,-3),(-1,-1)', point '(-2,-2)'),
  (16, box '(0,-Infinity),(1,Infinity)', point '(1e300,-1e300)');
CREATE TABLE gg_gist_q AS SELECT qid FROM gg_q WHERE qid NOT IN (8, 9, 10, 11, 16);

-- gg_cmp(predicate): the rows (t.id, q.qid) of "gg_X t, gg_q q WHERE
-- predicate" from a sequential scan, from gpuext_gist by index scans and by
-- bitmap scans (EXPLAIN must show the index), and from GiST (on its finite
-- rows and queries: gg_gist_q); 'ok N rows' when all are equal.
CREATE FUNCTION gg_cmp(pred text) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
  q text := 'SELECT t.id, q.qid FROM %s t, gg_q q WHERE ' || pred;
  plan text;
  p text;
  n bigint;
  bad bigint;
  mode text;
BEGIN
  SET LOCAL enable_hashjoin = off;
  SET LOCAL enable_mergejoin = off;
  SET LOCAL enable_material = off;
  SET LOCAL enable_indexscan = off;
  SET LOCAL enable_bitmapscan = off;
  EXECUTE format('CREATE TEMP TABLE gg_r_seq AS ' || q, 'gg_seq');
  SELECT count(*) INTO n FROM gg_r_seq;
  SET LOCAL enable_seqscan = off;
  FOREACH mode IN ARRAY ARRAY['indexscan', 'bitmapscan', 'gist'] LOOP
    IF mode = 'bitmapscan' THEN
      SET LOCAL enable_bitmapscan = on;
      SET LOCAL enable_indexscan = off;
    ELSE
      SET LOCAL enable_bitmapscan = off;
      SET LOCAL enable_indexscan = on;
    END IF;
    IF mode <> 'gist' THEN
      plan := '';
      FOR p IN EXECUTE 'EXPLAIN (COSTS OFF) ' || format(q, 'gg_gx') LOOP
        plan := plan || p;
      END LOOP;
      IF plan !~ 'gg_gx_' THEN
        DROP TABLE gg_r_seq;
        RETURN 'NOT INDEXED ' || mode;
      END IF;
    END IF;
    EXECUTE format('CREATE TEMP TABLE gg_r AS ' || q,
                   CASE mode WHEN 'gist' THEN 'gg_gist' ELSE 'gg_gx' END);
    IF mode = 'gist' THEN
      DELETE FROM gg_r WHERE qid NOT IN (SELECT qid FROM gg_gist_q);
      CREATE TEMP TABLE gg_r_ref AS SELECT * FROM gg_r_seq
       WHERE id IN (SELECT id FROM gg_gist) AND qid IN (SELECT qid FROM gg_gist_q);
    ELSE
      CREATE TEMP TABLE gg_r_ref AS SELECT * FROM gg_r_seq;
    END IF;
    SELECT count(*) INTO bad FROM
      ((SELECT * FROM gg_r EXCEPT ALL SELECT * FROM gg_r_ref)
       UNION ALL
       (SELECT * FROM gg_r_ref EXCEPT ALL SELECT * FROM gg_r)) d;
    DROP TABLE gg_r_ref;
    DROP TABLE gg_r;
    IF bad <> 0 THEN
      DROP TABLE gg_r_seq;
      RETURN format('MISMATCH %s: %s rows differ', mode, bad);
    END IF;
  END LOOP;
  DROP TABLE gg_r_seq;
  RETURN format('ok %s rows', n);
END
$f$;

-- gg_plan(predicate): does the gpuext_gist plan use the index?
CREATE FUNCTION gg_plan(pred text, scan text) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
  p text;
  plan text := '';
BEGIN
  SET LOCAL enable_hashjoin = off;
  SET LOCAL enable_mergejoin = off;
  SET LOCAL enable_material = off;
  SET LOCAL enable_seqscan = off;
  IF scan = 'bitmap' THEN
    SET LOCAL enable_indexscan = off;
  ELSE
    SET LOCAL enable_bitmapscan = off;
  END IF;
  FOR p IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT t.id, q.qid FROM gg_gx t, gg_q q WHERE ' || pred LOOP
    IF p ~ 'gg_gx_' THEN
      plan := plan || btrim(p) || ' ';
    END IF;
  END LOOP;
  RETURN btrim(plan);
END
$f$;

SELECT gg_plan('t.bx && q.qb', 'index');
SELECT gg_plan('t.bx && q.qb', 'bitmap');
SELECT gg_plan('t.pt <@ q.qb', 'index');
SELECT gg_plan('t.pt ~= q.qp', 'bitmap');

-- every operator, both ways the planner can put the argument
SELECT gg_cmp('t.bx && q.qb');
SELECT gg_cmp('q.qb && t.bx');
SELECT gg_cmp('t.bx @> q.qb');
SELECT gg_cmp('t.bx <@ q.qb');
SELECT gg_cmp('q.qb @> t.bx');
SELECT gg_cmp('t.bx ~= q.qb');
SELECT gg_cmp('t.bx @> q.qp');
SELECT gg_cmp('t.pt <@ q.qb');
SELECT gg_cmp('t.pt ~= q.qp');
-- two keys on one column
SELECT gg_cmp('t.bx && q.qb AND t.bx @> box ''(11,11),(11,11)''');
SELECT gg_cmp('t.bx <@ q.qb AND t.bx && box ''(0,0),(10,10)''');

-- "&& ANY(array)": one batched walk; NULL elements, empty and NULL arrays
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM gg_gx WHERE bx && ANY (ARRAY[box '(1,1),(2,2)', box '(30,30),(31,31)']);
CREATE TEMP TABLE gg_arr AS
SELECT id FROM gg_gx WHERE bx && ANY ((SELECT array_agg(qb ORDER BY qid) FROM gg_q WHERE qid NOT IN (5, 11))::box[]);
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT count(*) AS rows,
       (SELECT count(*) FROM
          ((SELECT id FROM gg_arr EXCEPT ALL
            SELECT id FROM gg_seq WHERE bx && ANY ((SELECT array_agg(qb) FROM gg_q WHERE qid NOT IN (5, 11))::box[]))
           UNION ALL
           (SELECT id FROM gg_seq WHERE bx && ANY ((SELECT array_agg(qb) FROM gg_q WHERE qid NOT IN (5, 11))::box[])
            EXCEPT ALL SELECT id FROM gg_arr)) d) AS differ
  FROM gg_arr;
SET enable_seqscan = off;
SELECT count(*) FROM gg_gx WHERE bx && ANY (ARRAY[NULL::box, box '(1,1),(2,2)']);
SELECT count(*) FROM gg_seq WHERE bx && ANY (ARRAY[NULL::box, box '(1,1),(2,2)']);
SELECT count(*) FROM gg_gx WHERE bx && ANY (ARRAY[]::box[]);
SELECT count(*) FROM gg_gx WHERE bx && ANY (NULL::box[]);
SELECT count(*) FROM gg_gx WHERE bx && NULL::box;
SELECT count(*) FROM gg_gx WHERE pt ~= ANY (ARRAY[point '(5,5)', point '(NaN,1)', point '(10,10)']);
SELECT count(*) FROM gg_seq WHERE pt ~= ANY (ARRAY[point '(5,5)', point '(NaN,1)', point '(10,10)']);
SELECT count(*) FROM gg_gx WHERE bx @> ANY (ARRAY[point '(5,5)', point '(11,11)']) AND bx && box '(0,0),(12,12)';
SELECT count(*) FROM gg_seq WHERE bx @> ANY (ARRAY[point '(5,5)', point '(11,11)']) AND bx && box '(0,0),(12,12)';
RESET enable_seqscan;

-- inserts (many splits with 16-entry nodes), deletes, VACUUM
INSERT INTO gg_seq
SELECT g, box(point((g * 7) % 61, (g * 13) % 47), point((g * 7) % 61 + g % 5, (g * 13) % 47 + g % 2)),
       point((g * 11) % 53, (g * 3) % 41)
  FROM generate_series(4001, 7000) g;
INSERT INTO gg_seq SELECT id + 10000, bx, pt FROM gg_seq WHERE id > 3000 AND id < 3100;
INSERT INTO gg_gx SELECT * FROM gg_seq WHERE id > 4000;
INSERT INTO gg_gist SELECT * FROM gg_seq WHERE id > 4000 AND id NOT BETWEEN 13010 AND 13014;
SELECT levels, leaf_entries, heap_tuples FROM gpuext_gist_check('gg_gx_bx', true);
SELECT levels, leaf_entries, heap_tuples FROM gpuext_gist_check('gg_gx_pt', true);
DELETE FROM gg_seq WHERE id % 3 = 0 OR id BETWEEN 3001 AND 3005;
DELETE FROM gg_gx WHERE id % 3 = 0 OR id BETWEEN 3001 AND 3005;
DELETE FROM gg_gist WHERE id % 3 = 0 OR id BETWEEN 3001 AND 3005;
UPDATE gg_gx SET bx = box(point(id % 20, 1), point(id % 20 + 1, 2)) WHERE id % 7 = 0;
UPDATE gg_seq SET bx = box(point(id % 20, 1), point(id % 20 + 1, 2)) WHERE id % 7 = 0;
UPDATE gg_gist SET bx = box(point(id % 20, 1), point(id % 20 + 1, 2)) WHERE id % 7 = 0;
VACUUM gg_seq, gg_gx, gg_gist;
SELECT levels, leaf_entries, heap_tuples FROM gpuext_gist_check('gg_gx_bx', true);
SELECT levels, leaf_entries, heap_tuples FROM gpuext_gist_check('gg_gx_pt', true);
SELECT gg_cmp('t.bx && q.qb');
SELECT gg_cmp('t.bx @> q.qb');
SELECT gg_cmp('t.bx <@ q.qb');
SELECT gg_cmp('t.bx ~= q.qb');
SELECT gg_cmp('t.bx @> q.qp');
SELECT gg_cmp('t.pt <@ q.qb');
SELECT gg_cmp('t.pt ~= q.qp');
-- a third of the rows deleted: emptied leaves stay in the tree
DELETE FROM gg_gx WHERE id < 2000;
VACUUM gg_gx;
SELECT levels, leaf_entries, heap_tuples FROM gpuext_gist_check('gg_gx_bx', true);
SET enable_seqscan = off;
SELECT count(*) FROM gg_gx WHERE bx && box '(0,0),(10,10)';
RESET enable_seqscan;
INSERT INTO gg_gx SELECT * FROM gg_seq WHERE id < 2000;
SELECT levels, leaf_entries, heap_tuples FROM gpuext_gist_check('gg_gx_bx', true);
SELECT gg_cmp('t.bx && q.qb');
-- REINDEX packs it again
REINDEX INDEX gg_gx_bx;
SELECT levels, leaf_entries, heap_tuples FROM gpuext_gist_check('gg_gx_bx', true);
SELECT gg_cmp('t.bx && q.qb');

-- gpuext_gist_probe: a batch of probes, one result list each (the batched
-- level-synchronous walk); HOT-updated rows come back as their visible
-- version; compared with the join it answers
UPDATE gg_gx SET id = id WHERE id % 11 = 0;
CREATE FUNCTION gg_probe_cmp(idx text, col text, op text) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
  n bigint;
  bad bigint;
BEGIN
  EXECUTE format($q$
    CREATE TEMP TABLE gg_p AS
    SELECT p.query, t.id FROM gpuext_gist_probe(%L, (SELECT array_agg(qb ORDER BY qid) FROM gg_q), %L) p
      JOIN gg_gx t ON t.ctid = p.ctid$q$, idx, op);
  EXECUTE format($q$
    CREATE TEMP TABLE gg_j AS
    SELECT q.qid AS query, t.id FROM gg_q q JOIN gg_gx t ON t.%I %s q.qb$q$, col, op);
  SELECT count(*) INTO n FROM gg_j;
  SELECT count(*) INTO bad FROM
    ((SELECT * FROM gg_p EXCEPT ALL SELECT * FROM gg_j)
     UNION ALL
     (SELECT * FROM gg_j EXCEPT ALL SELECT * FROM gg_p)) d;
  DROP TABLE gg_p, gg_j;
  RETURN CASE WHEN bad = 0 THEN format('ok %s rows', n) ELSE format('MISMATCH: %s rows differ', bad) END;
END
$f$;
SELECT gg_probe_cmp('gg_gx_bx', 'bx', '&&');
SELECT gg_probe_cmp('gg_gx_bx', 'bx', '@>');
SELECT gg_probe_cmp('gg_gx_bx', 'bx', '<@');
SELECT gg_probe_cmp('gg_gx_bx', 'bx', '~=');
SELECT gg_probe_cmp('gg_gx_pt', 'pt', '<@');
SELECT p.query, t.id
  FROM gpuext_gist_probe('gg_gx_bx', ARRAY[NULL, box '(10,10),(20,20)', NULL, box '(-3,-3),(-1,-1)'], '~=') p
  JOIN gg_gx t ON t.ctid = p.ctid ORDER BY 1, 2;
SELECT count(*) FROM gpuext_gist_probe('gg_gx_bx', ARRAY[]::box[]);
SELECT count(*) FROM gpuext_gist_probe('gg_gx_bx', NULL);
SELECT * FROM gpuext_gist_probe('gg_gx_bx', ARRAY[box '(1,1),(2,2)'], '<<');
SELECT * FROM gpuext_gist_probe('gg_gx_pt', ARRAY[box '(1,1),(2,2)'], '&&');
SELECT * FROM gpuext_gist_probe('gg_gist_pt', ARRAY[box '(1,1),(2,2)']);
SELECT * FROM gpuext_gist_probe(NULL, ARRAY[box '(1,1),(2,2)']);
DROP FUNCTION gg_probe_cmp(text, text, text);

-- GistJoin: spatial joins as batches of index probes (the outer rows'
-- keys in batches of gpuext.gist_join_batch, one walk a batch); small
-- batches, a NULL key, dead and HOT-updated inner rows, extra join clauses
-- and inner restrictions on the host, rescans inside a correlated subquery
INSERT INTO gg_q VALUES (17, NULL, NULL);
CREATE FUNCTION gg_join_cmp(pred text) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
  q text := 'SELECT t.id, q.qid FROM gg_gx t JOIN gg_q q ON ' || pred;
  plan text := '';
  p text;
  n bigint;
  bad bigint;
BEGIN
  SET LOCAL gpuext.enable_gist_join = off;
  SET LOCAL enable_indexscan = off;
  SET LOCAL enable_bitmapscan = off;
  EXECUTE 'CREATE TEMP TABLE gg_j_ref AS ' || q;
  SET LOCAL gpuext.enable_gist_join = on;
  SET LOCAL gpuext.gist_join_batch = 5;
  SET LOCAL enable_nestloop = off;
  SET LOCAL enable_hashjoin = off;
  SET LOCAL enable_mergejoin = off;
  FOR p IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    plan := plan || p;
  END LOOP;
  IF plan !~ 'GistJoin' THEN
    DROP TABLE gg_j_ref;
    RETURN 'NOT A GistJoin';
  END IF;
  EXECUTE 'CREATE TEMP TABLE gg_j AS ' || q;
  SELECT count(*) INTO n FROM gg_j_ref;
  SELECT count(*) INTO bad FROM
    ((SELECT * FROM gg_j EXCEPT ALL SELECT * FROM gg_j_ref)
     UNION ALL
     (SELECT * FROM gg_j_ref EXCEPT ALL SELECT * FROM gg_j)) d;
  DROP TABLE gg_j, gg_j_ref;
  RETURN CASE WHEN bad = 0 THEN format('ok %s rows', n) ELSE format('MISMATCH: %s rows differ', bad) END;
END
$f$;
SET gpuext.gist_join_batch = 5;
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF)
SELECT t.id, q.qid FROM gg_gx t JOIN gg_q q ON t.bx && q.qb AND t.id > q.qid WHERE t.id % 2 = 0;
RESET enable_nestloop;
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT gg_join_cmp('t.bx && q.qb');
SELECT gg_join_cmp('q.qb && t.bx');
SELECT gg_join_cmp('t.bx @> q.qb');
SELECT gg_join_cmp('q.qb @> t.bx');
SELECT gg_join_cmp('t.bx <@ q.qb');
SELECT gg_join_cmp('t.bx ~= q.qb');
SELECT gg_join_cmp('t.bx @> q.qp');
SELECT gg_join_cmp('t.pt <@ q.qb');
SELECT gg_join_cmp('t.pt ~= q.qp');
SELECT gg_join_cmp('t.bx && q.qb AND t.id > q.qid * 100 WHERE t.id % 2 = 0');
SELECT gg_join_cmp('t.bx && box(q.qp, q.qp)');
-- rescans: the join inside a correlated subquery
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF)
SELECT q.qid, (SELECT count(*) FROM gg_q q2 JOIN gg_gx t ON t.bx && q2.qb WHERE q2.qid = q.qid) AS n
  FROM gg_q q;
CREATE TEMP TABLE gg_sub AS
SELECT q.qid, (SELECT count(*) FROM gg_q q2 JOIN gg_gx t ON t.bx && q2.qb WHERE q2.qid = q.qid) AS n
  FROM gg_q q;
RESET enable_nestloop;
RESET enable_hashjoin;
RESET enable_mergejoin;
SET gpuext.enable_gist_join = off;
SELECT count(*) AS queries,
       count(*) FILTER (WHERE s.n = (SELECT count(*) FROM gg_gx t WHERE t.bx && q.qb)) AS agree
  FROM gg_sub s JOIN gg_q q USING (qid);
RESET gpuext.enable_gist_join;
RESET gpuext.gist_join_batch;
DELETE FROM gg_q WHERE qid = 17;
DROP FUNCTION gg_join_cmp(text);

-- gpuext.gist_walk = mirror: every search goes through the GPU service's
-- request (GX_REQ_RTREE_SEARCH) on the CPU engine, over a copy of the tree
-- in the layout the device searches: batches split when their visits
-- overflow a request, sent again when their results do not fit
SET gpuext.gist_walk = mirror;
SELECT gg_cmp('t.bx && q.qb');
SELECT gg_cmp('t.bx <@ q.qb');
SELECT gg_cmp('t.bx ~= q.qb');
SELECT gg_cmp('t.pt <@ q.qb');
SELECT gg_cmp('t.bx && q.qb AND t.bx @> box ''(11,11),(11,11)''');
SET enable_seqscan = off;
SELECT count(*) FROM gg_gx WHERE bx && ANY ((SELECT array_agg(qb) FROM gg_q WHERE qid NOT IN (5, 11))::box[]);
RESET enable_seqscan;
SELECT count(*) FROM gg_seq WHERE bx && ANY ((SELECT array_agg(qb) FROM gg_q WHERE qid NOT IN (5, 11))::box[]);
SELECT count(*) FROM gpuext_gist_probe('gg_gx_bx', (SELECT array_agg(qb ORDER BY qid) FROM gg_q));
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT t.id, q.qid FROM gg_gx t JOIN gg_q q ON t.bx && q.qb;
SET gpuext.gist_join_batch = 3;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT t.id, q.qid FROM gg_gx t JOIN gg_q q ON t.pt <@ q.qb;
RESET gpuext.gist_join_batch;
RESET enable_nestloop;
RESET enable_hashjoin;
RESET enable_mergejoin;
-- auto: batches below gpuext.gist_gpu_min_batch, and every batch without
-- a GPU, walk the pages
RESET gpuext.gist_walk;
SHOW gpuext.gist_walk;
SELECT count(*) FROM gpuext_gist_probe('gg_gx_bx', (SELECT array_agg(qb ORDER BY qid) FROM gg_q));

-- GistJoin needing no inner column (count(*)): rows on pages that are
-- all-visible during the walk are counted without a heap fetch; deleted
-- rows before and after VACUUM, new rows; over the pages and through the
-- CPU engine's copy (the device path); then a parallel GistJoin (the
-- workers of a Gather share the outer rows)
CREATE TABLE gg_vis AS SELECT * FROM gg_seq;
CREATE INDEX gg_vis_bx ON gg_vis USING gpuext_gist (bx) WITH (node_size = 16);
ANALYZE gg_vis;
CREATE FUNCTION gg_count_cmp(settings text) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
  q text := 'SELECT count(*) FROM gg_q q JOIN gg_vis t ON t.bx && q.qb';
  ref bigint;
  got bigint;
  got_mirror bigint;
  plan text := '';
  p text;
BEGIN
  SET LOCAL gpuext.enable_gist_join = off;
  SET LOCAL enable_indexscan = off;
  SET LOCAL enable_bitmapscan = off;
  EXECUTE q INTO ref;
  SET LOCAL gpuext.enable_gist_join = on;
  SET LOCAL enable_nestloop = off;
  SET LOCAL enable_hashjoin = off;
  SET LOCAL enable_mergejoin = off;
  IF settings <> '' THEN
    EXECUTE settings;
  END IF;
  FOR p IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    plan := plan || p || ' ';
  END LOOP;
  EXECUTE q INTO got;
  -- and through the CPU engine's copy (the device path's all-visible flags)
  SET LOCAL gpuext.gist_walk = mirror;
  EXECUTE q INTO got_mirror;
  IF got_mirror <> got THEN
    RETURN format('MISMATCH: pages %s, mirror %s', got, got_mirror);
  END IF;
  RETURN format('%s %s rows%s%s', CASE WHEN got = ref THEN 'ok' ELSE 'MISMATCH: expected ' || ref || ', got' END,
                got, CASE WHEN plan ~ 'GistJoin' THEN ', GistJoin' ELSE '' END,
                CASE WHEN plan ~ 'Gather' THEN ', parallel' ELSE '' END);
END
$f$;
SELECT gg_count_cmp('');
VACUUM gg_vis;
SELECT gg_count_cmp('');
DELETE FROM gg_vis WHERE id % 4 = 1;
SELECT gg_count_cmp('');
VACUUM gg_vis;
SELECT gg_count_cmp('');
INSERT INTO gg_vis SELECT id + 100000, bx, pt FROM gg_seq WHERE id % 5 = 0;
SELECT gg_count_cmp('');
SELECT gg_count_cmp('SET LOCAL max_parallel_workers_per_gather = 2; '
                    'SET LOCAL parallel_setup_cost = 0; SET LOCAL parallel_tuple_cost = 0; '
                    'SET LOCAL min_parallel_table_scan_size = 0');
SELECT gg_count_cmp('SET LOCAL max_parallel_workers_per_gather = 2; '
                    'SET LOCAL parallel_setup_cost = 0; SET LOCAL parallel_tuple_cost = 0; '
                    'SET LOCAL min_parallel_table_scan_size = 0; SET LOCAL gpuext.gist_join_batch = 3');
DROP FUNCTION gg_count_cmp(text);
DROP TABLE gg_vis;

-- empty tables, all-NULL tables, CREATE INDEX CONCURRENTLY, unlogged
CREATE TABLE gg_empty (bx box);
CREATE INDEX gg_empty_bx ON gg_empty USING gpuext_gist (bx);
SELECT * FROM gpuext_gist_check('gg_empty_bx', true);
SET enable_seqscan = off;
SELECT count(*) FROM gg_empty WHERE bx && box '(0,0),(1,1)';
INSERT INTO gg_empty VALUES (box '(0,0),(1,1)'), (NULL);
SELECT count(*) FROM gg_empty WHERE bx && box '(0,0),(1,1)';
RESET enable_seqscan;
SELECT * FROM gpuext_gist_check('gg_empty_bx', true);
CREATE TABLE gg_nulls (bx box);
INSERT INTO gg_nulls SELECT NULL FROM generate_series(1, 100);
CREATE INDEX gg_nulls_bx ON gg_nulls USING gpuext_gist (bx);
SELECT * FROM gpuext_gist_check('gg_nulls_bx', true);
CREATE INDEX CONCURRENTLY gg_gx_bx2 ON gg_gx USING gpuext_gist (bx);
SELECT levels, leaf_entries, heap_tuples FROM gpuext_gist_check('gg_gx_bx2', true);
DROP INDEX gg_gx_bx2;
CREATE UNLOGGED TABLE gg_unlogged (bx box);
INSERT INTO gg_unlogged SELECT box(point(g, g), point(g + 1, g + 1)) FROM generate_series(1, 1000) g;
CREATE INDEX gg_unlogged_bx ON gg_unlogged USING gpuext_gist (bx) WITH (node_size = 8);
INSERT INTO gg_unlogged SELECT box(point(g, g), point(g + 1, g + 1)) FROM generate_series(1, 1000) g;
SELECT * FROM gpuext_gist_check('gg_unlogged_bx', true);
SET enable_seqscan = off;
SELECT count(*) FROM gg_unlogged WHERE bx && box '(10,10),(20,20)';
RESET enable_seqscan;

-- reloptions
CREATE INDEX gg_bad ON gg_empty USING gpuext_gist (bx) WITH (node_size = 4);
CREATE INDEX gg_bad ON gg_empty USING gpuext_gist (bx) WITH (node_size = 1000);
CREATE INDEX gg_bad ON gg_empty USING gpuext_gist (bx) WITH (fillfactor = 5);
CREATE INDEX gg_bad ON gg_empty USING gpuext_gist (bx) WITH (fillfactor = 101);
CREATE INDEX gg_bad ON gg_empty USING gpuext_gist (bx) WITH (no_such_option = 1);
CREATE INDEX gg_bad ON gg_empty USING gpuext_gist (bx) WITH (node_size = 'wide');
CREATE INDEX gg_ok ON gg_empty USING gpuext_gist (bx) WITH (node_size = 204, fillfactor = 100);
SELECT reloptions FROM pg_class WHERE relname = 'gg_ok';
DROP INDEX gg_ok;

-- what the access method can and cannot do
CREATE INDEX gg_bad ON gg_empty USING gpuext_gist (bx, bx);
CREATE UNIQUE INDEX gg_bad ON gg_empty USING gpuext_gist (bx);
CREATE TABLE gg_int (i int);
CREATE INDEX gg_bad ON gg_int USING gpuext_gist (i);
SELECT opc.opcname, amvalidate(opc.oid)
  FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
 WHERE am.amname = 'gpuext_gist' ORDER BY 1;
SELECT amop.amopstrategy, amop.amopopr::regoperator
  FROM pg_amop amop JOIN pg_am am ON am.oid = amop.amopmethod
 WHERE am.amname = 'gpuext_gist' ORDER BY 1;

-- the checker's errors
SELECT gpuext_gist_check('gg_gist_pt', false);
SELECT gpuext_gist_check('gg_gx', false);
SELECT gpuext_gist_check(NULL, false);
SELECT gpuext_gist_check('gg_gx_bx', NULL);
CREATE INDEX gg_btree ON gg_int (i);
SELECT gpuext_gist_check('gg_btree', true);

DROP TABLE gg_seq, gg_gx, gg_gist, gg_q, gg_gist_q, gg_empty, gg_nulls, gg_unlogged, gg_int;
DROP FUNCTION gg_cmp(text), gg_plan(text, text);
RESET ALL;
