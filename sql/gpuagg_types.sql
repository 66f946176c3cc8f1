--
-- GpuAgg: every aggregate over every input type it supports on the device
-- (count, sum, avg, min, max), results the same as PostgreSQL's, types and
-- numeric display scales included (gx_agg_diff compares text images).
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
SET max_parallel_workers_per_gather = 0;

-- count(x) of every column type
SELECT gx_agg_diff($$SELECT g, count(b) AS b, count(i2) AS i2, count(i4) AS i4, count(i8) AS i8, count(f4) AS f4, count(f8) AS f8 FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(n) AS n, count(n2) AS n2, count(d) AS d, count(ts) AS ts, count(tz) AS tz FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(t) AS t, count(vc) AS vc, count(c) AS c, count(*) AS star FROM gx_agg GROUP BY g$$);

-- sum: int2 and int4 give int8, int8 and numeric give numeric, float8 float8
SELECT * FROM gx_agg_explain($$SELECT sum(i2), sum(i4), sum(i8), sum(n), sum(f8) FROM gx_agg$$);
SELECT gx_agg_diff($$SELECT k, sum(i2) AS i2, sum(i4) AS i4, sum(i8) AS i8 FROM gx_agg GROUP BY k$$);
SELECT gx_agg_diff($$SELECT k, sum(n) AS n, sum(n2) AS n2, sum(f8) AS f8 FROM gx_agg GROUP BY k$$);
SELECT gx_agg_diff($$SELECT sum(i2) AS i2, sum(i4) AS i4, sum(i8) AS i8, sum(n) AS n, sum(n2) AS n2, sum(f8) AS f8 FROM gx_agg$$);
SET gpuext.force_offload = on;
SELECT pg_typeof(sum(i2)) AS i2, pg_typeof(sum(i4)) AS i4, pg_typeof(sum(i8)) AS i8,
       pg_typeof(sum(n)) AS n, pg_typeof(sum(n2)) AS n2, pg_typeof(sum(f8)) AS f8 FROM gx_agg;
SELECT g, sum(i2) AS i2, sum(i4) AS i4, sum(i8) AS i8, sum(n) AS n, sum(n2) AS n2 FROM gx_agg GROUP BY g ORDER BY g;
RESET gpuext.force_offload;
-- sums of casts and expressions of every type
SELECT gx_agg_diff($$SELECT g, sum(i2::int4) AS a, sum(i4::int8) AS b, sum(i2::numeric) AS c, sum(i4::float8) AS d, sum(f4::float8) AS e FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(i8 * 1000) AS a, sum(-i8) AS b, sum(n2 * n2) AS c, sum(n - n2) AS d FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(CASE WHEN b THEN n ELSE n2 END) AS a, sum(coalesce(n, 0.0001)) AS b, sum(abs(n2)) AS c FROM gx_agg GROUP BY g$$);

-- sum(float4) gives float4: added in double on the device and rounded once
-- (f4 is dyadic, so PostgreSQL's float4 additions are exact here too);
-- inputs that could overflow a float4 partial sum run PostgreSQL's plan,
-- which raises its own error
SELECT gx_agg_diff($$SELECT k, sum(f4) AS a, sum(f4 * 2) AS b, sum(-f4) AS c FROM gx_agg GROUP BY k$$);
SELECT gx_agg_diff($$SELECT sum(f4) AS a FROM gx_agg$$);
SELECT gx_agg_diff($$SELECT g, sum(f4) FILTER (WHERE f4 > 100) AS a FROM gx_agg WHERE id < 0 GROUP BY g$$);
CREATE TABLE gx_aggf4 (g int, v float4);
INSERT INTO gx_aggf4 VALUES (1, 3e38), (1, 3e38), (2, '-0'), (2, '-0'), (3, 'Infinity'), (3, 1), (4, 'NaN'), (4, 2);
SELECT gx_agg_diff($$SELECT g, sum(v) AS s FROM gx_aggf4 WHERE g > 1 GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(v) AS s FROM gx_aggf4 GROUP BY g$$);
SET gpuext.force_offload = on;
SELECT pg_typeof(sum(v)), sum(v) FROM gx_aggf4 WHERE g = 2;
SELECT g, sum(v) FROM gx_aggf4 WHERE g > 1 GROUP BY g ORDER BY g;
RESET gpuext.force_offload;
DROP TABLE gx_aggf4;

-- avg: integers and numeric give numeric, float4 and float8 give float8
SELECT gx_agg_diff($$SELECT k, avg(i2) AS i2, avg(i4) AS i4, avg(i8) AS i8 FROM gx_agg GROUP BY k$$);
SELECT gx_agg_diff($$SELECT k, avg(n) AS n, avg(n2) AS n2, avg(f4) AS f4, avg(f8) AS f8 FROM gx_agg GROUP BY k$$);
SELECT gx_agg_diff($$SELECT avg(i2) AS i2, avg(i4) AS i4, avg(i8) AS i8, avg(n) AS n, avg(n2) AS n2, avg(f4) AS f4, avg(f8) AS f8 FROM gx_agg$$);
SELECT gx_agg_diff($$SELECT g, avg(i2::numeric) AS a, avg(i4::float8) AS b, avg(i8::float4) AS c, avg(n2 * 2) AS d FROM gx_agg GROUP BY g$$);
SET gpuext.force_offload = on;
SELECT pg_typeof(avg(i2)) AS i2, pg_typeof(avg(i4)) AS i4, pg_typeof(avg(i8)) AS i8,
       pg_typeof(avg(n)) AS n, pg_typeof(avg(f4)) AS f4, pg_typeof(avg(f8)) AS f8 FROM gx_agg;
SELECT g, avg(i2) AS i2, avg(i4) AS i4, avg(i8) AS i8, avg(n) AS n, avg(n2) AS n2 FROM gx_agg GROUP BY g ORDER BY g;
RESET gpuext.force_offload;

-- min and max: integers, dates, timestamps, floats, in the input's type
SELECT gx_agg_diff($$SELECT k, min(i2) AS a, max(i2) AS b, min(i4) AS c, max(i4) AS d, min(i8) AS e, max(i8) AS f FROM gx_agg GROUP BY k$$);
SELECT gx_agg_diff($$SELECT k, min(d) AS a, max(d) AS b, min(ts) AS c, max(ts) AS d, min(tz) AS e, max(tz) AS f FROM gx_agg GROUP BY k$$);
SELECT gx_agg_diff($$SELECT k, min(f4) AS a, max(f4) AS b, min(f8) AS c, max(f8) AS d FROM gx_agg GROUP BY k$$);
SELECT gx_agg_diff($$SELECT g, min(i2 * 2) AS a, max(i4 - i2) AS b, min(d + 1) AS c, max(d - 7) AS d, min(f4 * 2) AS e FROM gx_agg GROUP BY g$$);
SET gpuext.force_offload = on;
SELECT pg_typeof(min(i2)) AS i2, pg_typeof(max(i4)) AS i4, pg_typeof(min(i8)) AS i8, pg_typeof(max(d)) AS d,
       pg_typeof(min(ts)) AS ts, pg_typeof(max(tz)) AS tz, pg_typeof(min(f4)) AS f4, pg_typeof(max(f8)) AS f8 FROM gx_agg;
SELECT g, min(i2), max(i2), min(i8), max(i8), min(d), max(d), min(f4), max(f8) FROM gx_agg GROUP BY g ORDER BY g;
SELECT g, min(ts), max(ts), min(tz), max(tz) FROM gx_agg GROUP BY g ORDER BY g;
RESET gpuext.force_offload;
-- min and max of numerics: on the device in 64 bits at a fixed scale, the
-- result at the inputs' display scale; inputs of mixed display scales (n:
-- 0 to 3 decimals, where PostgreSQL keeps the later of two equal values)
-- and values past 64 bits go back to PostgreSQL's plan, same answers
SELECT gx_agg_diff($$SELECT k, min(n2) AS a, max(n2) AS b FROM gx_agg GROUP BY k$$);
SELECT gx_agg_diff($$SELECT min(n2) AS a, max(n2) AS b, min(-n2) AS c, max(n2 * 10) AS d FROM gx_agg$$);
SELECT gx_agg_diff($$SELECT g, min(n) AS a, max(n) AS b FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, min(n2) FILTER (WHERE b) AS a, max(n2) FILTER (WHERE i4 > 0) AS b FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, min(n2) AS a, max(n2) AS b FROM gx_agg WHERE id < 0 GROUP BY g$$);
SELECT gx_agg_diff($$SELECT min(n2) AS a, max(n2) AS b FROM gx_agg WHERE id < 0$$);
CREATE TABLE gx_aggmm (g int, n numeric(38, 4), u numeric);
INSERT INTO gx_aggmm SELECT x % 3, (x * 12345.6789) % 100000 - 50000, 1.5 FROM generate_series(1, 3000) x;
INSERT INTO gx_aggmm VALUES (0, 9999999999999999999999999999.1234, 1.50), (1, NULL, NULL), (2, -0.0001, 1.5);
ANALYZE gx_aggmm;
SELECT gx_agg_diff($$SELECT g, min(n) AS a, max(n) AS b FROM gx_aggmm WHERE g > 0 GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, min(n) AS a, max(n) AS b FROM gx_aggmm GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, min(u) AS a, max(u) AS b FROM gx_aggmm GROUP BY g$$);
SET gpuext.force_offload = on;
SELECT pg_typeof(min(n2)) AS a, pg_typeof(max(n)) AS b FROM gx_agg;
SELECT g, min(n2), max(n2), min(n), max(n) FROM gx_agg GROUP BY g ORDER BY g;
SELECT g, min(n), max(n), min(u), max(u) FROM gx_aggmm GROUP BY g ORDER BY g;
SET gpuext.enabled = off;
SELECT g, min(n), max(n), min(u), max(u) FROM gx_aggmm GROUP BY g ORDER BY g;
RESET gpuext.enabled;
DROP TABLE gx_aggmm;
RESET gpuext.force_offload;

-- integer extremes: sums of int2 and int4 are exact int8, sums of int8
-- are exact numerics past 2^63, min/max at the ends of each range
SELECT gx_agg_diff($$SELECT g, sum(i2) AS a, sum(i4) AS b, sum(i8) AS c, avg(i8) AS d FROM gx_aggx GROUP BY g$$);
SELECT gx_agg_diff($$SELECT sum(i2) AS a, sum(i4) AS b, sum(i8) AS c, avg(i4) AS d, avg(i8) AS e FROM gx_aggx$$);
SELECT gx_agg_diff($$SELECT g, min(i2) AS a, max(i2) AS b, min(i4) AS c, max(i4) AS d, min(i8) AS e, max(i8) AS f FROM gx_aggx GROUP BY g$$);
SET gpuext.force_offload = on;
SELECT g, sum(i2), sum(i4), sum(i8), avg(i8), min(i8), max(i8) FROM gx_aggx GROUP BY g ORDER BY g;
SELECT sum(i4), sum(i8), sum(i8) > 9223372036854775807 AS past_2_63, avg(i8) FROM gx_aggx;
SELECT sum(i8) FROM gx_aggx WHERE g IN (0, 1);
SELECT sum(i8) FROM gx_aggx WHERE g = 2;
SELECT * FROM gx_agg_explain($$SELECT g, sum(i8) FROM gx_aggx GROUP BY g$$, true);
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT g, sum(i2), sum(i4), sum(i8), avg(i8), min(i8), max(i8) FROM gx_aggx GROUP BY g ORDER BY g;
SELECT sum(i4), sum(i8), sum(i8) > 9223372036854775807 AS past_2_63, avg(i8) FROM gx_aggx;
SELECT sum(i8) FROM gx_aggx WHERE g IN (0, 1);
SELECT sum(i8) FROM gx_aggx WHERE g = 2;
RESET gpuext.enabled;

--
-- numeric display scales: the sum has the largest display scale of its
-- inputs, the average numeric_div's scale; both exactly PostgreSQL's
--
-- numeric(20,10), numeric(38,0) and unconstrained numerics of scales
-- 0 to 3 (1.5, 2.25, 3, -0.125, 1.0, 1.00, 100, 0)
SELECT gx_agg_diff($$SELECT g, sum(n) AS a, avg(n) AS b, sum(n10) AS c, avg(n10) AS d FROM gx_aggn GROUP BY g$$);
SELECT gx_agg_diff($$SELECT sum(n) AS a, avg(n) AS b, sum(n10) AS c, avg(n10) AS d, sum(n38) AS e, avg(n38) AS f FROM gx_aggn$$);
SELECT gx_agg_diff($$SELECT g, sum(n)::text AS a, avg(n)::text AS b, sum(n10)::text AS c, avg(n38)::text AS d FROM gx_aggn GROUP BY g$$);
SET gpuext.force_offload = on;
-- each value alone: the display scale of a sum follows its inputs
SELECT id % 8 AS v, sum(n)::text AS sum, avg(n)::text AS avg, scale(sum(n)) AS sum_scale
  FROM gx_aggn GROUP BY id % 8 ORDER BY 1;
-- 1.5, 2.25 and 3 together: scale 2
SELECT sum(n)::text, avg(n)::text FROM gx_aggn WHERE id % 8 IN (0, 1, 2);
SELECT sum(n)::text, avg(n)::text FROM gx_aggn WHERE id % 8 IN (2, 6);
SELECT sum(n)::text, avg(n)::text FROM gx_aggn WHERE id % 8 IN (4, 5);
SELECT sum(n)::text, avg(n)::text FROM gx_aggn WHERE id % 8 IN (2, 7);
SELECT g, sum(n10)::text, avg(n10)::text, sum(n38)::text, avg(n38)::text FROM gx_aggn GROUP BY g ORDER BY g;
SELECT k, sum(n2)::text, avg(n2)::text FROM gx_agg WHERE k < 3 GROUP BY k ORDER BY k;
SELECT * FROM gx_agg_explain($$SELECT id % 8, sum(n), avg(n) FROM gx_aggn GROUP BY id % 8$$, true);
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT id % 8 AS v, sum(n)::text AS sum, avg(n)::text AS avg, scale(sum(n)) AS sum_scale
  FROM gx_aggn GROUP BY id % 8 ORDER BY 1;
SELECT sum(n)::text, avg(n)::text FROM gx_aggn WHERE id % 8 IN (0, 1, 2);
SELECT sum(n)::text, avg(n)::text FROM gx_aggn WHERE id % 8 IN (2, 6);
SELECT sum(n)::text, avg(n)::text FROM gx_aggn WHERE id % 8 IN (4, 5);
SELECT sum(n)::text, avg(n)::text FROM gx_aggn WHERE id % 8 IN (2, 7);
SELECT g, sum(n10)::text, avg(n10)::text, sum(n38)::text, avg(n38)::text FROM gx_aggn GROUP BY g ORDER BY g;
SELECT k, sum(n2)::text, avg(n2)::text FROM gx_agg WHERE k < 3 GROUP BY k ORDER BY k;
RESET gpuext.enabled;
-- numeric expressions: scales of +, -, * and of constants
SELECT gx_agg_diff($$SELECT g, sum(n * 1.5) AS a, sum(n + 0.001) AS b, avg(n10 * n) AS c, sum(n10 - 1) AS d FROM gx_aggn GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(n2 * 0.01)::text AS a, avg(n2 + 1.000)::text AS b FROM gx_agg GROUP BY g$$);

--
-- floats: sums and averages to 10 significant digits (another summation
-- order), min and max exactly
--
SELECT gx_agg_diff($$SELECT g, sum(f8) AS a, avg(f8) AS b, avg(f4) AS c, min(f8) AS d, max(f4) AS e FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT s, sum(f8) AS a, avg(f4) AS b, count(f8) AS c FROM gx_agg GROUP BY s$$);
-- dyadic values: every summation order gives the same bits, compared
-- here exactly (as text)
SET gpuext.force_offload = on;
SELECT g, sum(f4::float8)::text AS sum, avg(f4)::text AS avg FROM gx_agg GROUP BY g ORDER BY g;
SELECT g, min(f8), max(f8), min(f4), max(f4) FROM gx_agg GROUP BY g ORDER BY g;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT g, sum(f4::float8)::text AS sum, avg(f4)::text AS avg FROM gx_agg GROUP BY g ORDER BY g;
SELECT g, min(f8), max(f8), min(f4), max(f4) FROM gx_agg GROUP BY g ORDER BY g;
RESET gpuext.enabled;
