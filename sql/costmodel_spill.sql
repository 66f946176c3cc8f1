-- PostgreSQL's spilling operators re-costed with separate write costs
-- (gpuext.recost_spills): a hashed aggregation that spills and a sort that
-- goes to disk pay (write / read - 1) times PostgreSQL's price for the
-- pages they write; nothing else changes.  The storage parameters are set
-- here, so the test does not depend on what a calibration stored (nor on
-- the calibrated charge for rows sent to the client, output.c, nor on the
-- calibrated charges per group and per row of a hashed aggregation and for
-- a Gather's launches, tested last).  The GPU paths stay out: with a GPU,
-- GpuAgg (which never spills) rightly wins once writes are dear, and this
-- test is about PostgreSQL's plans.
SET max_parallel_workers_per_gather = 0;
SET gpuext.enable_gpuagg = off;
SET gpuext.enable_gpuscan = off;
SET work_mem = '1MB';
SET gpuext.storage_seq_read_us = 20;
SET gpuext.storage_random_read_us = 100;
SET gpuext.storage_seq_write_us = 20;
SET gpuext.storage_random_write_us = 100;
SET gpuext.client_row_us = 0;
SET gpuext.stock_group_us = 0;
SET gpuext.stock_agg_row_us = 0;
SET gpuext.stock_byref_us = 0;
SET gpuext.stock_join_row_us = 0;
SET gpuext.stock_deform_us = 0;
CREATE TABLE cs_t (a int, b int, t text);
INSERT INTO cs_t SELECT g, g % 1000, md5(g::text) FROM generate_series(1, 200000) g;
ANALYZE cs_t;
-- the top plan node (its strategy, and Finalize over a Gather) and its total cost
CREATE FUNCTION cs_plan(q text, OUT node text, OUT total float8) AS $$
DECLARE
  j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  node := CASE WHEN j->0->'Plan'->>'Partial Mode' = 'Finalize' THEN 'Finalize ' ELSE '' END ||
          coalesce(j->0->'Plan'->>'Strategy' || ' ', '') || (j->0->'Plan'->>'Node Type');
  total := (j->0->'Plan'->>'Total Cost')::float8;
END $$ LANGUAGE plpgsql;
-- the plan of q for each value of a parameter
CREATE FUNCTION cs_sweep(guc text, vals float8[], q text)
RETURNS TABLE (value float8, node text, total float8) AS $$
BEGIN
  FOREACH value IN ARRAY vals LOOP
    PERFORM set_config(guc, value::text, true);
    SELECT p.node, round(p.total) INTO node, total FROM cs_plan(q) p;
    RETURN NEXT;
  END LOOP;
END $$ LANGUAGE plpgsql;

-- writes as cheap as reads: exactly PostgreSQL's costs
SELECT node, total FROM cs_plan('SELECT a, count(*) FROM cs_t GROUP BY a');
SET gpuext.recost_spills = off;
SELECT node, total FROM cs_plan('SELECT a, count(*) FROM cs_t GROUP BY a');
RESET gpuext.recost_spills;

-- sweep the random write cost: the spilling hashed aggregation loses to a
-- sort and a sorted aggregation once writes cost 3 to 4 reads
SELECT value AS random_write_us, node, total
  FROM cs_sweep('gpuext.storage_random_write_us', '{100, 150, 200, 300, 400, 800}',
                'SELECT a, count(*) FROM cs_t GROUP BY a');
SET gpuext.storage_random_write_us = 400;

-- an external sort costs more with dearer sequential writes ...
SELECT value AS seq_write_us, node, total
  FROM cs_sweep('gpuext.storage_seq_write_us', '{20, 40, 80}', 'SELECT * FROM cs_t ORDER BY t');
SET gpuext.storage_seq_write_us = 40;

-- ... but nothing that stays in memory changes: the same costs as with
-- the re-costing off
CREATE FUNCTION cs_unchanged(q text) RETURNS boolean AS $$
DECLARE
  on_cost float8;
  off_cost float8;
BEGIN
  SELECT total INTO on_cost FROM cs_plan(q);
  PERFORM set_config('gpuext.recost_spills', 'off', true);
  SELECT total INTO off_cost FROM cs_plan(q);
  PERFORM set_config('gpuext.recost_spills', 'on', true);
  RETURN on_cost = off_cost;
END $$ LANGUAGE plpgsql;
SELECT cs_unchanged('SELECT b, count(*) FROM cs_t GROUP BY b') AS few_groups;
SELECT cs_unchanged('SELECT * FROM cs_t ORDER BY t LIMIT 10') AS bounded_sort;
SELECT cs_unchanged('SELECT * FROM cs_t WHERE a < 1000 ORDER BY t') AS small_sort;
SELECT NOT cs_unchanged('SELECT * FROM cs_t ORDER BY t') AS external_sort;
SET work_mem = '64MB';
SELECT cs_unchanged('SELECT a, count(*) FROM cs_t GROUP BY a') AS fits_work_mem;
SELECT cs_unchanged('SELECT * FROM cs_t ORDER BY t') AS sort_fits_work_mem;
SET work_mem = '1MB';

-- the re-costed plan is above the spill (a LIMIT over the sorted
-- aggregation pays the whole surcharge: it is paid before the first row)
EXPLAIN (COSTS OFF) SELECT a, count(*) FROM cs_t GROUP BY a ORDER BY a LIMIT 5;
SELECT a, count(*) FROM cs_t GROUP BY a ORDER BY a LIMIT 5;

-- gpuext.enabled = off is stock PostgreSQL: no re-costing
SET gpuext.enabled = off;
SELECT node FROM cs_plan('SELECT a, count(*) FROM cs_t GROUP BY a');
RESET gpuext.enabled;

-- both plans give the same groups
SELECT count(*), sum(c) FROM (SELECT a, count(*) c FROM cs_t GROUP BY a) s;
SET gpuext.recost_spills = off;
SELECT count(*), sum(c) FROM (SELECT a, count(*) c FROM cs_t GROUP BY a) s;

-- a hashed aggregation's groups: gpuext.stock_group_us a group (what
-- calibration measures a group taking beyond the estimate once the table
-- outgrows the CPU's caches), at gpuext.cost_unit_us a unit, whether it
-- spills or not and with spill re-costing off: 200 000 groups, less the
-- 10 000 whose table stays in the caches, at 1 us and 5 us a unit are
-- 38 000 units more
SET work_mem = '64MB';
SET enable_sort = off;
SET gpuext.cost_unit_us = 5;
CREATE TEMP TABLE cs_costs AS
SELECT (SELECT total FROM cs_plan('SELECT a, count(*) FROM cs_t GROUP BY a')) AS without;
SET gpuext.stock_group_us = 1;
SELECT node, round(total - (SELECT without FROM cs_costs)) AS more
  FROM cs_plan('SELECT a, count(*) FROM cs_t GROUP BY a');
SET gpuext.stock_group_us = 0;
-- ... and its rows: gpuext.stock_agg_row_us a row (hashing its keys and
-- finding its group, beyond the planner's one operator a key): 200 000
-- rows at 0.5 us and 5 us a unit are 20 000 units more; the same grouping
-- sorted (by b: no index) pays the same, and an aggregation without
-- grouping nothing
RESET enable_sort;
SET enable_hashagg = off;
CREATE TEMP TABLE cs_sorted AS
SELECT q, (SELECT total FROM cs_plan(q)) AS without FROM (VALUES
  ('SELECT b, count(*) FROM cs_t GROUP BY b'), ('SELECT count(*) FROM cs_t')) v(q);
RESET enable_hashagg;
SET enable_sort = off;
SET gpuext.stock_agg_row_us = 0.5;
SELECT node, round(total - (SELECT without FROM cs_costs)) AS more
  FROM cs_plan('SELECT a, count(*) FROM cs_t GROUP BY a');
SET enable_hashagg = off;
RESET enable_sort;
SELECT q, node, round(total - without) AS more FROM cs_sorted, cs_plan(q);
RESET enable_hashagg;
SET enable_sort = off;
SET gpuext.stock_agg_row_us = 0;
-- ... and its steps over by-reference values: gpuext.stock_byref_us a row
-- and by-reference aggregate or group key, whatever the strategy (sum(a)
-- none, min(t) one, grouped by t as well two): 200 000 rows at 0.5 us and
-- 5 us a unit are 20 000 units a step
CREATE TEMP TABLE cs_byref AS
SELECT q, (SELECT total FROM cs_plan(q)) AS without FROM (VALUES
  ('SELECT b, sum(a) FROM cs_t GROUP BY b'), ('SELECT min(t) FROM cs_t'),
  ('SELECT b, min(t) FROM cs_t GROUP BY b'), ('SELECT t, min(t) FROM cs_t GROUP BY t')) v(q);
SET gpuext.stock_byref_us = 0.5;
SELECT q, round((SELECT total FROM cs_plan(q)) - without) AS more FROM cs_byref;
-- (the aggregations of a DISTINCT and of a set operation are not the
-- query's grouping: not charged, and planned as before)
SELECT count(*) FROM (SELECT t FROM cs_t WHERE a < 100 UNION SELECT t FROM cs_t WHERE a < 50) s;
SELECT count(*) FROM (SELECT DISTINCT t FROM cs_t WHERE a < 100) s;
SET gpuext.stock_byref_us = 0;
-- a stock hash join whose rows an aggregation takes: gpuext.stock_join_row_us
-- an outer row (200 000 at 0.5 us and 5 us a unit: 20 000 units); the same
-- join with no aggregation above it is not charged
SET gpuext.enable_gpujoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
CREATE TABLE cs_d AS SELECT g AS b FROM generate_series(0, 999) g;
ANALYZE cs_d;
CREATE TEMP TABLE cs_join AS
SELECT q, (SELECT total FROM cs_plan(q)) AS without FROM (VALUES
  ('SELECT count(*) FROM cs_t JOIN cs_d USING (b)'), ('SELECT a FROM cs_t JOIN cs_d USING (b)')) v(q);
SET gpuext.stock_join_row_us = 0.5;
SELECT q, node, round(total - without) AS more FROM cs_join, cs_plan(q);
SET gpuext.stock_join_row_us = 0;
RESET enable_mergejoin;
RESET enable_nestloop;
RESET gpuext.enable_gpujoin;
-- a stock sequential scan whose filter reads columns past a variable-width
-- one: gpuext.stock_deform_us a row read and such column (c: one past t,
-- then b and c: two), less, a row returned, those its output reads too
-- (200 000 rows, half of them returned, at 0.5 us and 5 us a unit: 20 000
-- units a column; in thousands, the half being an estimate); a filter on
-- the columns before t, or no filter, is not charged
CREATE TABLE cs_w (a int, t text, b int, c int);
INSERT INTO cs_w SELECT g, 'x', g, g FROM generate_series(1, 200000) g;
ANALYZE cs_w;
CREATE TEMP TABLE cs_deform AS
SELECT q, (SELECT total FROM cs_plan(q)) AS without FROM (VALUES
  ('SELECT count(*) FROM cs_w WHERE c <= 100000'), ('SELECT a FROM cs_w WHERE c <= 100000'),
  ('SELECT c FROM cs_w WHERE c <= 100000'), ('SELECT t, b, c FROM cs_w WHERE b <= 100000'),
  ('SELECT c FROM cs_w WHERE a <= 100000'), ('SELECT c FROM cs_w')) v(q);
SET gpuext.stock_deform_us = 0.5;
SELECT q, node, round((total - without) / 1000) AS thousands_more FROM cs_deform, cs_plan(q);
SET gpuext.stock_deform_us = 0;
RESET enable_sort;

-- a stock Gather under an aggregation pays its workers' launches beyond
-- parallel_setup_cost: free launches keep the parallel plan, a first
-- worker that starts 100 ms late (20 000 units at 5 us) sends the count
-- back to a serial scan
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET gpuext.parallel_worker_us = 0;
SELECT value, node FROM cs_sweep('gpuext.parallel_start_us', '{0, 100000}',
                                 'SELECT count(*) FROM cs_t WHERE b < 500');

RESET ALL;
DROP TABLE cs_t, cs_d, cs_w;
DROP FUNCTION cs_plan(text), cs_unchanged(text), cs_sweep(text, float8[], text);
