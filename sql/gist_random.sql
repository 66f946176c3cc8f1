--
-- gpuext_gist under random inserts, deletes, updates and vacuums (fixed
-- seed): after every round, every operator through the index (index scans,
-- bitmap scans, GistJoin, probes) equals a sequential scan, and the
-- checker passes; the last rounds through the tree mirror's requests.
--
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
RESET client_min_messages;
SET gpuext.enabled = off;
SELECT setseed(0.4242);
CREATE TABLE gr (id serial, bx box, pt point);
CREATE INDEX gr_bx ON gr USING gpuext_gist (bx) WITH (node_size = 12);
CREATE INDEX gr_pt ON gr USING gpuext_gist (pt) WITH (node_size = 9);
CREATE TABLE grq (qid int, qb box, qp point);

-- a random box: mostly small, some large, some degenerate, a few NULL
CREATE FUNCTION gr_box() RETURNS box LANGUAGE sql AS $$
  SELECT CASE WHEN r < 0.03 THEN NULL
              WHEN r < 0.15 THEN box(point(x, y), point(x, y))
              WHEN r < 0.25 THEN box(point(x, y), point(x + w * 20, y))
              WHEN r < 0.30 THEN box(point(x, y), point(x + w * 400, y + h * 400))
              ELSE box(point(x, y), point(x + w * 8, y + h * 8)) END
    FROM (SELECT random() AS r, floor(random() * 1000) / 4 AS x, floor(random() * 1000) / 4 AS y,
                 random() AS w, random() AS h) s
$$;

-- one round of changes, then every operator four ways against the seq scan
CREATE FUNCTION gr_round(n int) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
  op text;
  q text;
  ref text;
  got text;
  way text;
  bad int := 0;
  checks int := 0;
BEGIN
  INSERT INTO gr (bx, pt)
  SELECT gr_box(), CASE WHEN random() < 0.05 THEN NULL
                        ELSE point(floor(random() * 1000) / 4, floor(random() * 1000) / 4) END
    FROM generate_series(1, 300 + n * 20);
  DELETE FROM gr WHERE random() < 0.12;
  UPDATE gr SET bx = gr_box() WHERE random() < 0.05;
  UPDATE gr SET id = id WHERE random() < 0.05;		-- HOT
  TRUNCATE grq;
  INSERT INTO grq SELECT g, gr_box(), point(floor(random() * 1000) / 4, floor(random() * 1000) / 4)
    FROM generate_series(1, 12) g;
  FOREACH op IN ARRAY ARRAY['t.bx && q.qb', 't.bx @> q.qb', 't.bx <@ q.qb', 't.bx ~= q.qb',
                            't.bx @> q.qp', 't.pt <@ q.qb', 't.pt ~= q.qp'] LOOP
    q := 'SELECT count(*) || '' '' || coalesce(sum(hashint4(t.id) # hashint4(q.qid)), 0) '
         'FROM gr t JOIN grq q ON ' || op;
    SET LOCAL gpuext.enable_gist_join = off;
    SET LOCAL enable_indexscan = off;
    SET LOCAL enable_bitmapscan = off;
    EXECUTE q INTO ref;
    FOREACH way IN ARRAY ARRAY['index', 'bitmap', 'gistjoin'] LOOP
      SET LOCAL enable_seqscan = off;
      SET LOCAL enable_hashjoin = off;
      SET LOCAL enable_mergejoin = off;
      EXECUTE format('SET LOCAL enable_indexscan = %s', way = 'index');
      EXECUTE format('SET LOCAL enable_bitmapscan = %s', way = 'bitmap');
      EXECUTE format('SET LOCAL gpuext.enable_gist_join = %s', way = 'gistjoin');
      EXECUTE format('SET LOCAL enable_nestloop = %s', way <> 'gistjoin');
      EXECUTE q INTO got;
      checks := checks + 1;
      IF got <> ref THEN
        bad := bad + 1;
        RAISE NOTICE 'round % %: seq scan % %: %', n, op, ref, way, got;
      END IF;
    END LOOP;
    RESET enable_seqscan; RESET enable_indexscan; RESET enable_bitmapscan;
    RESET enable_nestloop; RESET enable_hashjoin; RESET enable_mergejoin;
    RESET gpuext.enable_gist_join;
  END LOOP;
  -- the batch probe of every && window
  SELECT count(*) || ' ' || coalesce(sum(hashint4(t.id) # hashint4(q.qid)), 0) INTO ref
    FROM gr t JOIN grq q ON t.bx && q.qb;
  SELECT count(*) || ' ' || coalesce(sum(hashint4(t.id) # hashint4(p.query)), 0) INTO got
    FROM gpuext_gist_probe('gr_bx', (SELECT array_agg(qb ORDER BY qid) FROM grq)) p
    JOIN gr t ON t.ctid = p.ctid;
  checks := checks + 1;
  IF got <> ref THEN
    bad := bad + 1;
    RAISE NOTICE 'round % probe: seq scan % probe %', n, ref, got;
  END IF;
  PERFORM gpuext_gist_check('gr_bx', true);
  PERFORM gpuext_gist_check('gr_pt', true);
  RETURN format('round %s: %s checks, %s differ', n, checks, bad);
END
$f$;

SELECT gr_round(1);
SELECT gr_round(2);
SELECT gr_round(3);
VACUUM gr;
SELECT gr_round(4);
SELECT gr_round(5);
SELECT gr_round(6);
VACUUM gr;
SELECT gr_round(7);
SELECT gr_round(8);
DELETE FROM gr WHERE id % 4 <> 0;
VACUUM gr;
SELECT gr_round(9);
SELECT gr_round(10);
REINDEX INDEX gr_bx;
SELECT gr_round(11);
SELECT gr_round(12);
VACUUM gr;
-- two more rounds with every search through the GPU service's request on
-- the CPU engine's copy of the tree (gpuext.gist_walk = mirror)
SET gpuext.gist_walk = mirror;
SELECT gr_round(13);
DELETE FROM gr WHERE id % 3 = 0;
VACUUM gr;
SELECT gr_round(14);
RESET gpuext.gist_walk;
VACUUM gr;
SELECT levels > 1 AS deep, leaf_entries = heap_tuples AS all_indexed
  FROM gpuext_gist_check('gr_bx', true);

DROP TABLE gr, grq;
DROP FUNCTION gr_round(int), gr_box();
RESET ALL;
