-- gpuext_ptree: random single-column predicates (=, <, <=, >, >=, byte-order
-- text operators, = ANY with NULLs and batches, IS [NOT] NULL, conjunctions, int4
-- and int8 extremes, empty and non-ASCII text, infinite dates) over an index
-- with merged and pending inserts and deletes: every answer through the index
-- (plain or bitmap, batch or per element) must equal the sequential scan's;
-- the mismatches are listed (none expected).  Deterministic: setseed.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
CREATE TABLE fz (i int, b bigint, t text, d date);
SELECT setseed(0.42) AS seeded;
INSERT INTO fz SELECT
  CASE WHEN r < 0.05 THEN NULL WHEN r < 0.08 THEN 2147483647 WHEN r < 0.11 THEN -2147483648 ELSE (random() * 200 - 100)::int END,
  CASE WHEN r < 0.05 THEN NULL WHEN r < 0.08 THEN 9223372036854775807 WHEN r < 0.11 THEN -9223372036854775808 ELSE (random() * 2e6 - 1e6)::bigint END,
  CASE WHEN r < 0.05 THEN NULL WHEN r < 0.08 THEN '' WHEN r < 0.11 THEN 'é' || (random()*5)::int ELSE substr(md5(random()::text), 1, (random()*4)::int) END,
  CASE WHEN r < 0.05 THEN NULL WHEN r < 0.07 THEN 'infinity'::date WHEN r < 0.09 THEN '-infinity'::date ELSE date '2000-01-01' + (random()*100)::int END
FROM (SELECT random() r FROM generate_series(1, 6000)) s;
CREATE INDEX fz_i ON fz USING gpuext_ptree (i) WITH (delta_pages = 1);
CREATE INDEX fz_b ON fz USING gpuext_ptree (b) WITH (delta_pages = 2);
CREATE INDEX fz_t ON fz USING gpuext_ptree (t) WITH (delta_pages = 1);
CREATE INDEX fz_d ON fz USING gpuext_ptree (d);
INSERT INTO fz SELECT (random() * 200 - 100)::int, (random() * 2e6 - 1e6)::bigint, substr(md5(random()::text), 1, (random()*3)::int), date '2000-01-01' + (random()*100)::int FROM generate_series(1, 3000);
DELETE FROM fz WHERE random() < 0.1;
CREATE FUNCTION fz_run(n int) RETURNS TABLE (q text, idx text, seq text) LANGUAGE plpgsql AS $$
DECLARE
  cols text[] := ARRAY['i','b','t','d'];
  c text; qq text; cond text; k int; j int; a text; r1 text; r2 text; r3 text;
  ops text[] := ARRAY['=','<','<=','>','>='];
  top text[] := ARRAY['=','~<~','~<=~','~>~','~>=~'];
BEGIN
  FOR j IN 1..n LOOP
    c := cols[1 + floor(random()*4)::int];
    cond := '';
    FOR k IN 1..(1 + floor(random()*3)::int) LOOP
      IF cond <> '' THEN cond := cond || ' AND '; END IF;
      a := CASE c
        WHEN 'i' THEN (CASE WHEN random() < 0.1 THEN '2147483647' WHEN random() < 0.1 THEN '(-2147483648)' ELSE ((random()*240-120)::int)::text END)
        WHEN 'b' THEN (CASE WHEN random() < 0.1 THEN '9223372036854775807' WHEN random() < 0.3 THEN ((random()*200-100)::int)::text ELSE ((random()*2.2e6-1.1e6)::bigint)::text || '::bigint' END)
        WHEN 't' THEN quote_literal(substr(md5(random()::text), 1, (random()*3)::int))
        ELSE quote_literal(CASE WHEN random() < 0.1 THEN 'infinity' ELSE (date '2000-01-01' + (random()*110-5)::int)::text END) || '::date' END;
      IF random() < 0.15 THEN
        cond := cond || c || ' IS ' || CASE WHEN random() < 0.5 THEN 'NULL' ELSE 'NOT NULL' END;
      ELSIF random() < 0.25 THEN
        cond := cond || c || ' = ANY(ARRAY[' || a || ', ' || a || ', NULL' || CASE c WHEN 'i' THEN ', 1, 2, 3, 50' WHEN 'b' THEN ', 0::bigint' WHEN 't' THEN ', ''a'', ''''' ELSE ', ''2000-01-05''::date' END || '])';
      ELSIF random() < 0.1 THEN
        cond := cond || c || ' = ANY(ARRAY(SELECT ' || CASE c WHEN 'i' THEN 'g' WHEN 'b' THEN 'g::bigint * 997' WHEN 't' THEN 'substr(md5(g::text), 1, 2)' ELSE 'date ''2000-01-01'' + g' END || ' FROM generate_series(-150, 150) g))';
      ELSE
        cond := cond || c || ' ' || CASE WHEN c = 't' THEN top[1 + floor(random()*5)::int] ELSE ops[1 + floor(random()*5)::int] END || ' ' || a;
      END IF;
    END LOOP;
    qq := 'SELECT count(*) || '':'' || coalesce(sum(hashtext(coalesce(i::text,''n'') || coalesce(b::text,''n'') || coalesce(t,''n'') || coalesce(d::text,''n''))), 0) FROM fz WHERE ' || cond;
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', (random() < 0.5)::text, true);
    PERFORM set_config('gpuext.ptree_batch_min', CASE WHEN random() < 0.5 THEN '0' ELSE '2' END, true);
    EXECUTE qq INTO r1;
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    EXECUTE qq INTO r2;
    PERFORM set_config('enable_indexscan', 'on', true);
    IF r1 IS DISTINCT FROM r2 THEN q := cond; idx := r1; seq := r2; RETURN NEXT; END IF;
  END LOOP;
END $$;
SET gpuext.enabled = off;
SELECT * FROM fz_run(1000);
SELECT gpuext_ptree_check('fz_i', true), gpuext_ptree_check('fz_b', true), gpuext_ptree_check('fz_t', true), gpuext_ptree_check('fz_d', true);
DROP TABLE fz;
DROP FUNCTION fz_run(int);
