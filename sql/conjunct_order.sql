--
-- Conjunct order: GpuScan, GpuJoin and GpuAgg evaluate a row's quals in
-- the order PostgreSQL's plan would (createplan.c's order_qual_clauses:
-- cheaper first), so a row that one qual rejects and another would raise
-- an error on gives the same result or the same SQLSTATE as stock
-- PostgreSQL.  Each query is run on stock PostgreSQL, then offloaded
-- (gpuext.force_offload) on the engine of the test run and on the CPU
-- engine.
--
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
RESET client_min_messages;
SET gpuext.regression_test_mode = on;

CREATE TABLE co_f (k int, x int, y int, t text);
INSERT INTO co_f SELECT i % 10, i, 1, 'r' || i FROM generate_series(1, 2000) i;
-- the one row on which x + 1 overflows, and t::int fails everywhere
INSERT INTO co_f VALUES (1, 2147483647, 1, 'big');
CREATE TABLE co_d (k int, name text);
INSERT INTO co_d SELECT i, 'd' || i FROM generate_series(0, 9) i;
ANALYZE co_f, co_d;

-- co_run(query, node): the query's result (row count) or SQLSTATE on stock
-- PostgreSQL, offloaded, and offloaded on the CPU engine; the offloaded
-- plans must contain 'node'.
CREATE FUNCTION co_run(q text, node text) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  result text := '';
  line text;
  n bigint;
  found_node bool;
  cfg text;
BEGIN
  FOREACH cfg IN ARRAY ARRAY['stock', 'offloaded', 'cpu engine'] LOOP
    PERFORM set_config('gpuext.enabled', (cfg <> 'stock')::text, true);
    PERFORM set_config('gpuext.force_offload', (cfg <> 'stock')::text, true);
    PERFORM set_config('gpuext.device', CASE cfg WHEN 'cpu engine' THEN 'cpu' ELSE 'auto' END, true);
    IF cfg <> 'stock' THEN
      found_node := false;
      FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF position(node IN line) > 0 THEN
          found_node := true;
        END IF;
      END LOOP;
      IF NOT found_node THEN
        result := result || cfg || ': no ' || node || '; ';
        CONTINUE;
      END IF;
    END IF;
    BEGIN
      EXECUTE q;
      GET DIAGNOSTICS n = ROW_COUNT;
      result := result || cfg || ': ' || n || ' rows; ';
    EXCEPTION WHEN OTHERS THEN
      result := result || cfg || ': ' || SQLSTATE || '; ';
    END;
  END LOOP;
  PERFORM set_config('gpuext.enabled', 'on', true);
  PERFORM set_config('gpuext.force_offload', 'off', true);
  PERFORM set_config('gpuext.device', 'auto', true);
  RETURN rtrim(result, '; ');
END;
$fn$;

SET gpuext.force_offload = on;

-- GpuScan: x + 1 > 0 (two operators) is cheaper than y + 0 + 0 < 0 (three),
-- so PostgreSQL evaluates it first and raises 22003 on the last row
EXPLAIN (COSTS OFF) SELECT * FROM co_f WHERE y + 0 + 0 < 0 AND x + 1 > 0;
SELECT co_run('SELECT * FROM co_f WHERE y + 0 + 0 < 0 AND x + 1 > 0', 'GpuScan');
-- (false for every row when evaluated first: no error)
SELECT co_run('SELECT * FROM co_f WHERE y < 0 AND x + 1 > 0', 'GpuScan');

-- GpuScan: a host qual that can fail (t::int) comes first in PostgreSQL's
-- order; the device qual after it stays on the host too (a Seq Scan here,
-- with no device qual left) and the row raises 22P02
EXPLAIN (COSTS OFF) SELECT * FROM co_f WHERE t::int > 0 AND y * 2 + 1 < 0;
SELECT co_run('SELECT * FROM co_f WHERE t::int > 0 AND y * 2 + 1 < 0', 'Seq Scan');
-- ... but a device qual before it runs on the device
EXPLAIN (COSTS OFF) SELECT * FROM co_f WHERE t::int > 0 AND y < 0;
SELECT co_run('SELECT * FROM co_f WHERE t::int > 0 AND y < 0', 'GpuScan');
-- ... and a host qual that cannot fail (leakproof text_lt) lets the
-- device run the quals after it
EXPLAIN (COSTS OFF) SELECT * FROM co_f WHERE t < 'z' AND y * 2 + 1 < 0;
SELECT co_run('SELECT * FROM co_f WHERE t < ''z'' AND y * 2 + 1 < 0', 'GpuScan');

-- GpuJoin: the scanned table's quals in PostgreSQL's order
EXPLAIN (COSTS OFF)
SELECT f.x, d.name FROM co_f f LEFT JOIN co_d d ON f.k = d.k WHERE f.y + 0 + 0 < 0 AND f.x + 1 > 0;
SELECT co_run('SELECT f.x, d.name FROM co_f f LEFT JOIN co_d d ON f.k = d.k
               WHERE f.y + 0 + 0 < 0 AND f.x + 1 > 0', 'GpuJoin');
SELECT co_run('SELECT f.x, d.name FROM co_f f LEFT JOIN co_d d ON f.k = d.k
               WHERE f.y < 0 AND f.x + 1 > 0', 'GpuJoin');
-- GpuJoin: the join's other clauses (host filters) in PostgreSQL's order
EXPLAIN (COSTS OFF)
SELECT f.x, d.name FROM co_f f JOIN co_d d ON f.k = d.k AND d.k + f.y + 0 + 0 < 0 AND f.x + d.k > 0;
SELECT co_run('SELECT f.x, d.name FROM co_f f JOIN co_d d
               ON f.k = d.k AND d.k + f.y + 0 + 0 < 0 AND f.x + d.k > 0', 'GpuJoin');
SELECT co_run('SELECT f.x, d.name FROM co_f f JOIN co_d d
               ON f.k = d.k AND d.k + f.y < 0 AND f.x + d.k > 0', 'GpuJoin');
-- GpuJoin: a scanned table's host qual that can fail, before a device qual
SELECT co_run('SELECT f.x, d.name FROM co_f f LEFT JOIN co_d d ON f.k = d.k
               WHERE f.t::int > 0 AND f.y * 2 + 1 < 0', 'GpuJoin');

-- GpuAgg over a scan, and fused over a join
EXPLAIN (COSTS OFF) SELECT k, count(*) FROM co_f WHERE y + 0 + 0 < 0 AND x + 1 > 0 GROUP BY k;
SELECT co_run('SELECT k, count(*) FROM co_f WHERE y + 0 + 0 < 0 AND x + 1 > 0 GROUP BY k', 'GpuAgg');
SELECT co_run('SELECT count(*) FROM co_f WHERE y + 0 + 0 < 0 AND x + 1 > 0', 'GpuAgg');
SELECT co_run('SELECT k, count(*) FROM co_f WHERE y < 0 AND x + 1 > 0 GROUP BY k', 'GpuAgg');
EXPLAIN (COSTS OFF)
SELECT d.name, count(*) FROM co_f f LEFT JOIN co_d d ON f.k = d.k
 WHERE f.y + 0 + 0 < 0 AND f.x + 1 > 0 GROUP BY d.name;
SELECT co_run('SELECT d.name, count(*) FROM co_f f LEFT JOIN co_d d ON f.k = d.k
               WHERE f.y + 0 + 0 < 0 AND f.x + 1 > 0 GROUP BY d.name', 'GpuAgg');
-- an aggregate's FILTER and its input: the input only for rows the
-- FILTER passes, as PostgreSQL
SELECT co_run('SELECT k, sum(x + 1) FILTER (WHERE y < 0) FROM co_f GROUP BY k', 'GpuAgg');

-- AND inside one qual keeps its written order, on every engine
SELECT co_run('SELECT * FROM co_f WHERE (y + 0 + 0 < 0 AND x + 1 > 0) IS TRUE', 'GpuScan');
SELECT co_run('SELECT * FROM co_f WHERE (x + 1 > 0 AND y + 0 + 0 < 0) IS TRUE', 'GpuScan');

RESET gpuext.force_offload;
DROP FUNCTION co_run(text, text);
DROP TABLE co_f, co_d;
