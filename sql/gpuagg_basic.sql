--
-- GpuAgg: the aggregates, with and without GROUP BY; NULL inputs; empty
-- input; one group; FILTER; HAVING; output expressions over aggregates;
-- ORDER BY and LIMIT above the node; several device batches per query.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
SET max_parallel_workers_per_gather = 0;

-- plan shapes: the node holds the keys, the aggregates and the scan quals;
-- HAVING and the output expressions are the node's own host work
SELECT * FROM gx_agg_explain($$SELECT g, count(*), sum(i4) FROM gx_agg GROUP BY g$$);
SELECT * FROM gx_agg_explain($$SELECT count(*), min(i2), max(i8) FROM gx_agg WHERE i4 > 0$$);
SELECT * FROM gx_agg_explain($$SELECT g, sum(i4) / count(*) FROM gx_agg GROUP BY g HAVING count(*) > 1000$$);
SELECT * FROM gx_agg_explain($$SELECT g, sum(i4) / count(*) AS q, max(i2) + 1 AS m FROM gx_agg WHERE i8 > 0 GROUP BY g HAVING min(i4) < 0$$, false, true);

-- every aggregate, no GROUP BY (one group)
SELECT gx_agg_diff($$SELECT count(*) AS c FROM gx_agg$$);
SELECT gx_agg_diff($$SELECT count(*) AS c, count(i4) AS c4, count(b) AS cb, count(t) AS ct, count(n) AS cn FROM gx_agg$$);
SELECT gx_agg_diff($$SELECT sum(i2) AS s2, sum(i4) AS s4, sum(i8) AS s8, sum(n) AS sn, sum(n2) AS sn2, sum(f8) AS sf8 FROM gx_agg$$);
SELECT gx_agg_diff($$SELECT avg(i2) AS a2, avg(i4) AS a4, avg(i8) AS a8, avg(n) AS an, avg(f4) AS af4, avg(f8) AS af8 FROM gx_agg$$);
SELECT gx_agg_diff($$SELECT min(i2) AS a, max(i2) AS b, min(i4) AS c, max(i4) AS d, min(i8) AS e, max(i8) AS f FROM gx_agg$$);
SELECT gx_agg_diff($$SELECT min(f4) AS a, max(f4) AS b, min(f8) AS c, max(f8) AS d FROM gx_agg$$);
SELECT gx_agg_diff($$SELECT min(d) AS a, max(d) AS b, min(ts) AS c, max(ts) AS d, min(tz) AS e, max(tz) AS f FROM gx_agg$$);

-- every aggregate, by a small group key
SELECT gx_agg_diff($$SELECT g, count(*) AS c, count(i4) AS c4, count(n) AS cn FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(i2) AS s2, sum(i4) AS s4, sum(i8) AS s8, sum(n) AS sn, sum(f8) AS sf8 FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, avg(i2) AS a2, avg(i4) AS a4, avg(i8) AS a8, avg(n) AS an, avg(f8) AS af8 FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, min(i4) AS a, max(i4) AS b, min(f8) AS c, max(f4) AS d, min(d) AS e, max(tz) AS f FROM gx_agg GROUP BY g$$);
-- and the exact result of a few, to see them
SET gpuext.force_offload = on;
SELECT g, count(*), count(i4), sum(i2), sum(i8), avg(i4), min(i2), max(d), sum(n), sum(n2)
  FROM gx_agg GROUP BY g ORDER BY g;
SELECT count(*), sum(i4), avg(n2), min(ts), max(tz), min(f4), max(f4) FROM gx_agg;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT g, count(*), count(i4), sum(i2), sum(i8), avg(i4), min(i2), max(d), sum(n), sum(n2)
  FROM gx_agg GROUP BY g ORDER BY g;
SELECT count(*), sum(i4), avg(n2), min(ts), max(tz), min(f4), max(f4) FROM gx_agg;
RESET gpuext.enabled;

-- the same aggregate twice, and an aggregate of an expression
SELECT gx_agg_diff($$SELECT g, sum(i4) AS a, sum(i4) AS b, count(*) AS c, count(*) AS d FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(i4 + i2) AS a, sum(i4 * 2) AS b, avg(i8 - i4) AS c, max(i2 * 3) AS e FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(CASE WHEN b THEN i4 ELSE 0 END) AS a, count(NULLIF(i2, 0)) AS c, sum(coalesce(i2, 100)) AS s FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(n * 2) AS a, sum(n2 + n) AS b, avg(n2 * 3) AS c, sum(f8 * 2) AS d FROM gx_agg GROUP BY g$$);
-- a group key that is not in the output, and a constant key
SELECT gx_agg_diff($$SELECT count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT 1 AS one, count(*) AS c FROM gx_agg GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT 'x'::text AS x, g, count(*) AS c FROM gx_agg GROUP BY 1, g$$);
-- GROUP BY without aggregates
SELECT gx_agg_diff($$SELECT g FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT k, b FROM gx_agg GROUP BY k, b$$);

-- NULL inputs: count(x) skips them, sum/avg/min/max ignore them, and a
-- group with only NULLs has a NULL sum and a count of 0
SELECT gx_agg_diff($$SELECT k, count(*) AS c, count(i2) AS c2, sum(i2) AS s2, min(i2) AS mn FROM gx_agg GROUP BY k$$);
SELECT gx_agg_diff($$SELECT id % 13 AS m, count(i2) AS c, sum(i2) AS s, avg(i2) AS a, min(i2) AS lo, max(i2) AS hi FROM gx_agg GROUP BY id % 13$$);
SET gpuext.force_offload = on;
SELECT id % 13 AS m, count(*), count(i2), sum(i2), avg(i2), min(i2), max(i2)
  FROM gx_agg WHERE id % 13 IN (0, 1) GROUP BY id % 13 ORDER BY 1;
SELECT count(*), count(i2), sum(i2), avg(i2), min(i2), max(f8), sum(f8), avg(f4), sum(n)
  FROM gx_agg WHERE i2 IS NULL AND f8 IS NULL AND f4 IS NULL AND n IS NULL;
RESET gpuext.force_offload;

-- empty input: no GROUP BY gives one row (count 0, the others NULL),
-- GROUP BY gives no rows
SELECT gx_agg_diff($$SELECT count(*) AS c, count(i4) AS c4, sum(i4) AS s, sum(i8) AS s8, avg(n) AS a, min(d) AS m, sum(f8) AS f FROM gx_agg_empty$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(i4) AS s FROM gx_agg_empty GROUP BY g$$);
SELECT gx_agg_diff($$SELECT count(*) AS c, sum(i4) AS s, max(tz) AS m FROM gx_agg WHERE i4 > 1000000$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c FROM gx_agg WHERE i4 > 1000000 GROUP BY g$$);
SET gpuext.force_offload = on;
SELECT count(*), count(i4), sum(i4), sum(i8), avg(n), min(d), max(f4), sum(f8), avg(f8) FROM gx_agg_empty;
SELECT g, count(*) FROM gx_agg_empty GROUP BY g;
SELECT count(*), sum(i4) FROM gx_agg WHERE i4 > 1000000;
SELECT count(*), sum(i4) FROM gx_agg WHERE i4 > 1000000 HAVING count(*) > 0;
SELECT count(*) + 1 AS c1, coalesce(sum(i4), -1) AS s FROM gx_agg WHERE i4 > 1000000;
SELECT * FROM gx_agg_explain($$SELECT count(*), sum(i4) FROM gx_agg_empty$$, true);
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT count(*), count(i4), sum(i4), sum(i8), avg(n), min(d), max(f4), sum(f8), avg(f8) FROM gx_agg_empty;
SELECT count(*), sum(i4) FROM gx_agg WHERE i4 > 1000000 HAVING count(*) > 0;
RESET gpuext.enabled;

-- one row, and one group
SELECT gx_agg_diff($$SELECT count(*) AS c, sum(i4) AS s, avg(i8) AS a, min(f8) AS m, sum(n) AS n FROM gx_agg_one$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(i4) AS s, avg(n2) AS a, max(d) AS m FROM gx_agg_one GROUP BY g$$);
SELECT gx_agg_diff($$SELECT id / 100000 AS z, count(*) AS c, sum(i4) AS s, avg(i2) AS a, max(ts) AS m FROM gx_agg GROUP BY id / 100000$$);

-- FILTER (WHERE ...): per aggregate, on the device
SELECT * FROM gx_agg_explain($$SELECT g, count(*) FILTER (WHERE i4 > 0) FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(*) FILTER (WHERE i4 > 0) AS a, count(*) FILTER (WHERE b) AS b, count(i2) FILTER (WHERE i8 < 0) AS c FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(i4) FILTER (WHERE i2 > 0) AS a, sum(i4) FILTER (WHERE i2 <= 0) AS b, sum(i4) AS c FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, avg(n) FILTER (WHERE t LIKE 'key1%') AS a, min(d) FILTER (WHERE f8 > 50) AS b, max(f4) FILTER (WHERE NOT b) AS c FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT k, sum(f8) FILTER (WHERE i2 IS NULL) AS a, count(*) FILTER (WHERE b IS NULL) AS b, sum(n2) FILTER (WHERE n2 > 0) AS c FROM gx_agg GROUP BY k$$);
-- a FILTER that no row passes: count 0, the others NULL
SELECT gx_agg_diff($$SELECT g, count(*) FILTER (WHERE i4 > 1000000) AS a, sum(i4) FILTER (WHERE false) AS b, min(i4) FILTER (WHERE i4 IS NULL AND i4 > 0) AS c FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT count(*) FILTER (WHERE i4 > 1000000) AS a, avg(i8) FILTER (WHERE i8 IS NULL) AS b FROM gx_agg$$);
-- FILTER with a scan qual
SELECT gx_agg_diff($$SELECT g, count(*) FILTER (WHERE i2 > 0) AS a, sum(i8) FILTER (WHERE i2 < 0) AS b FROM gx_agg WHERE i4 > 0 GROUP BY g$$);

-- HAVING, on the host, over aggregates in and out of the output and over keys
SELECT gx_agg_diff($$SELECT k, count(*) AS c FROM gx_agg GROUP BY k HAVING count(*) > 535$$);
SELECT gx_agg_diff($$SELECT k, sum(i4) AS s FROM gx_agg GROUP BY k HAVING min(i2) < -990 AND max(i8) > 0$$);
SELECT gx_agg_diff($$SELECT k FROM gx_agg GROUP BY k HAVING avg(n) > 0 OR k IS NULL$$);
SELECT gx_agg_diff($$SELECT k, count(*) AS c FROM gx_agg GROUP BY k HAVING k % 2 = 0$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c FROM gx_agg GROUP BY g HAVING count(*) FILTER (WHERE b) > 600$$);
SELECT gx_agg_diff($$SELECT count(*) AS c FROM gx_agg HAVING sum(i4) > 0$$);
SELECT gx_agg_diff($$SELECT count(*) AS c FROM gx_agg HAVING sum(i4) < 0$$);
SELECT * FROM gx_agg_explain($$SELECT k, count(*) FROM gx_agg GROUP BY k HAVING min(i2) < -990$$);

-- output expressions over aggregates (on the host)
SELECT gx_agg_diff($$SELECT g, sum(i4) / count(*) AS a, sum(i8)::numeric / count(i8) AS b, max(i4) - min(i4) AS c FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(n) / count(n) AS a, round(avg(n2), 2) AS b, sum(f8) / count(f8) AS c, max(d) - min(d) AS days FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g * 10 + 1 AS g10, count(*) * 2 AS c2, coalesce(sum(i2), 0) AS s, (count(*) > 1000)::text AS big FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT k, sum(i4) / nullif(count(i2), 0) AS a, max(ts) - min(ts) AS span FROM gx_agg GROUP BY k$$);
-- an output expression that fails raises the same error
SELECT gx_agg_diff($$SELECT g, sum(i4) / (count(*) - count(*)) AS a FROM gx_agg GROUP BY g$$);

-- ORDER BY, LIMIT, DISTINCT and window functions above the node
SELECT gx_agg_diff($$SELECT g, sum(i4) AS s FROM gx_agg GROUP BY g ORDER BY sum(i4) DESC LIMIT 3$$);
SELECT gx_agg_diff($$SELECT DISTINCT count(*) AS c FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(i4) AS s, rank() OVER (ORDER BY sum(i4)) AS r FROM gx_agg GROUP BY g$$);
SET gpuext.force_offload = on;
SELECT k, count(*), sum(i4) FROM gx_agg GROUP BY k ORDER BY count(*) DESC, k LIMIT 5;
SELECT g, sum(i4), rank() OVER (ORDER BY sum(i4)) FROM gx_agg GROUP BY g ORDER BY g;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT k, count(*), sum(i4) FROM gx_agg GROUP BY k ORDER BY count(*) DESC, k LIMIT 5;
SELECT g, sum(i4), rank() OVER (ORDER BY sum(i4)) FROM gx_agg GROUP BY g ORDER BY g;
RESET gpuext.enabled;

-- scan quals of every kind, aggregated on the device
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(i4) AS s FROM gx_agg WHERE i2 > 0 AND b GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c FROM gx_agg WHERE t LIKE 'key1%' OR vc = 'v7' GROUP BY g$$);
SELECT gx_agg_diff($$SELECT k, sum(n) AS s FROM gx_agg WHERE d BETWEEN '1995-01-01' AND '2005-01-01' AND n2 > 0 GROUP BY k$$);
SELECT gx_agg_diff($$SELECT count(*) AS c, avg(f8) AS a FROM gx_agg WHERE ts > '2000-01-01' AND i8 IN (1, 2, 3) IS NOT TRUE$$);
-- a scan qual that stays on the host: no GpuAgg (rows are aggregated
-- where they are filtered)
SELECT * FROM gx_agg_explain($$SELECT g, count(*) FROM gx_agg WHERE md5(t) > 'a' GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c FROM gx_agg WHERE md5(t) > 'a' GROUP BY g$$);

-- many device batches feeding one group table
SET gpuext.max_batch_pages = 4;
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(i8) AS s, avg(n) AS a, min(tz) AS m, sum(f8) AS f FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT count(*) AS c, sum(i4) AS s, max(ts) AS m FROM gx_agg$$);
SELECT gx_agg_diff($$SELECT id, count(*) AS c FROM gx_agg GROUP BY id$$);
SET gpuext.max_batch_pages = 1;
SELECT gx_agg_diff($$SELECT k, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY k$$);
RESET gpuext.max_batch_pages;

-- many aggregates in one query
SELECT gx_agg_diff($$SELECT g, count(*) AS a1, count(i2) AS a2, sum(i2) AS a3, sum(i4) AS a4, sum(i8) AS a5,
                            avg(i4) AS a6, min(i8) AS a7, max(i8) AS a8, min(d) AS a9, max(d) AS a10
                       FROM gx_agg GROUP BY g$$);
-- (the same aggregate twice is computed once)
SELECT gx_agg_diff($$SELECT g, sum(i2) AS a1, sum(i4) AS a2, sum(i8) AS a3, min(i2) AS a4, min(i4) AS a5, min(i8) AS a6,
                            max(i2) AS a7, max(i4) AS a8, max(i8) AS a9, avg(i2) AS a10, avg(i4) AS a11, avg(i8) AS a12,
                            count(i2) AS a13, count(i4) AS a14, count(i8) AS a15, count(*) AS a16, sum(n) AS a17,
                            count(*) AS a18, sum(i2) AS a19
                       FROM gx_agg GROUP BY g$$);
SET gpuext.force_offload = on;
SELECT g, sum(i2) AS a1, sum(i4) AS a2, sum(i8) AS a3, min(i2) AS a4, min(i4) AS a5, min(i8) AS a6,
       max(i2) AS a7, max(i4) AS a8, max(i8) AS a9, avg(i2) AS a10, avg(i4) AS a11, avg(i8) AS a12,
       count(i2) AS a13, count(i4) AS a14, count(i8) AS a15, count(*) AS a16, sum(n) AS a17
  FROM gx_agg WHERE g < 2 GROUP BY g ORDER BY g;
RESET gpuext.force_offload;
-- inputs too many for the device's registers: no GpuAgg, the stock plan
SELECT gx_agg_diff($$SELECT g, sum(i4 + 1) AS a1, sum(i4 + 2) AS a2, sum(i4 + 3) AS a3, sum(i4 + 4) AS a4,
                            sum(i4 + 5) AS a5, sum(i4 + 6) AS a6, sum(i4 + 7) AS a7, sum(i4 + 8) AS a8,
                            sum(i4 + 9) AS a9, sum(i4 + 10) AS a10, sum(i4 + 11) AS a11, sum(i4 + 12) AS a12
                       FROM gx_agg GROUP BY g$$);
SET gpuext.force_offload = on;
SELECT g, sum(i4 + 1) AS a1, sum(i4 + 2) AS a2, sum(i4 + 3) AS a3, sum(i4 + 4) AS a4,
       sum(i4 + 5) AS a5, sum(i4 + 6) AS a6, sum(i4 + 7) AS a7, sum(i4 + 8) AS a8,
       sum(i4 + 9) AS a9, sum(i4 + 10) AS a10, sum(i4 + 11) AS a11, sum(i4 + 12) AS a12
  FROM gx_agg WHERE g < 2 GROUP BY g ORDER BY g;
RESET gpuext.force_offload;

-- gpuext.enable_gpuagg = off, and gpuext.enabled = off: no GpuAgg
SET gpuext.force_offload = on;
SET gpuext.enable_gpuagg = off;
EXPLAIN (COSTS OFF) SELECT g, count(*) FROM gx_agg GROUP BY g;
RESET gpuext.enable_gpuagg;
SET gpuext.enabled = off;
EXPLAIN (COSTS OFF) SELECT g, count(*) FROM gx_agg GROUP BY g;
RESET gpuext.enabled;
RESET gpuext.force_offload;
