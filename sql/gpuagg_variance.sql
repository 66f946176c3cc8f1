--
-- GpuAgg: variance and standard deviation (variance, var_samp, var_pop,
-- stddev, stddev_samp, stddev_pop) of int2, int4, int8 and numeric.  The
-- device keeps the exact count, sum and sum of squares; PostgreSQL's own
-- final function turns them into the result, so every digit and display
-- scale is PostgreSQL's.  float4/float8: see below.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
SET max_parallel_workers_per_gather = 0;

-- all six over every integer type, grouped and not; NULL inputs skipped
SELECT * FROM gx_agg_explain($$SELECT stddev(i2), variance(i4), var_pop(i8), stddev_pop(n2) FROM gx_agg$$, true);
SELECT gx_agg_diff($$SELECT g, variance(i2) AS a, var_samp(i2) AS b, var_pop(i2) AS c, stddev(i2) AS d, stddev_samp(i2) AS e, stddev_pop(i2) AS f FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, variance(i4) AS a, var_samp(i4) AS b, var_pop(i4) AS c, stddev(i4) AS d, stddev_samp(i4) AS e, stddev_pop(i4) AS f FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, variance(i8) AS a, var_samp(i8) AS b, var_pop(i8) AS c, stddev(i8) AS d, stddev_samp(i8) AS e, stddev_pop(i8) AS f FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT k, variance(i2) AS a, stddev_pop(i4) AS b, var_samp(i8) AS c FROM gx_agg GROUP BY k$$);
SELECT gx_agg_diff($$SELECT variance(i2) AS a, stddev(i4) AS b, stddev_pop(i8) AS c, var_pop(i4) AS d FROM gx_agg$$);
-- numeric of a known scale, and of several display scales (n: 0 to 3)
SELECT gx_agg_diff($$SELECT g, variance(n2) AS a, var_samp(n2) AS b, var_pop(n2) AS c, stddev(n2) AS d, stddev_samp(n2) AS e, stddev_pop(n2) AS f FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, variance(n) AS a, stddev(n) AS b, var_pop(n) AS c, stddev_pop(n) AS d FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT s, stddev(n) AS a, variance(n2) AS b FROM gx_agg GROUP BY s$$);
-- expressions, casts and FILTER
SELECT gx_agg_diff($$SELECT g, stddev(i4 * 3 - i2) AS a, variance(i2::numeric) AS b, var_pop(abs(i8)) AS c FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, stddev(i4) FILTER (WHERE b) AS a, variance(n2) FILTER (WHERE i2 > 0) AS b, count(*) AS c FROM gx_agg GROUP BY g$$);
-- mixed with the other aggregates, and HAVING on the result
SELECT gx_agg_diff($$SELECT k, avg(i4) AS a, stddev(i4) AS b, sum(n2) AS c, var_samp(n2) AS d, min(i2) AS e FROM gx_agg GROUP BY k HAVING stddev(i4) > 50000$$);
SET gpuext.force_offload = on;
SELECT pg_typeof(stddev(i2)) AS i2, pg_typeof(variance(i4)) AS i4, pg_typeof(var_pop(i8)) AS i8,
       pg_typeof(stddev_samp(n)) AS n FROM gx_agg;
SELECT g, stddev(i2) AS i2, variance(i4) AS i4, stddev_pop(i8) AS i8, var_pop(n2) AS n2, stddev(n) AS n
  FROM gx_agg GROUP BY g ORDER BY g LIMIT 3;
RESET gpuext.force_offload;

-- edges: one row (sample variants NULL, population 0), no rows, all NULL,
-- all equal (0, never a negative rounding), the extremes of every type
CREATE TABLE gx_agg_var (g int, i2 int2, i4 int4, i8 int8, n numeric(20,4));
INSERT INTO gx_agg_var VALUES
  (1, 5, 5, 5, 5.5),
  (2, NULL, NULL, NULL, NULL),
  (3, 7, 7, 7, 7.25), (3, 7, 7, 7, 7.25), (3, 7, 7, 7, 7.25),
  (4, 32767, 2147483647, 3037000499, 99999999999999.9999),
  (4, -32768, -2147483648, -3037000499, -99999999999999.9999),
  (4, 0, 0, 0, 0),
  (7, 0, 0, 9223372036854775807, 0), (7, 0, 0, -9223372036854775808, 0),
  (5, 1, 1, 1, 0.0001), (5, 2, 2, 2, 0.0002), (5, 4, 4, 4, 0.0004);
ANALYZE gx_agg_var;
SELECT gx_agg_diff($$SELECT g, variance(i2) AS a, var_pop(i2) AS b, stddev(i4) AS c, stddev_pop(i4) AS d, var_samp(i8) AS e, stddev_pop(i8) AS f, variance(n) AS h, stddev(n) AS i FROM gx_agg_var WHERE g < 7 GROUP BY g$$);
SELECT gx_agg_diff($$SELECT stddev(i8) AS a, variance(n) AS b FROM gx_agg_var WHERE g > 100$$);
SET gpuext.force_offload = on;
SELECT g, variance(i2), var_pop(i2), stddev(i8), stddev_pop(i8), variance(n), stddev_pop(n)
  FROM gx_agg_var WHERE g < 7 GROUP BY g ORDER BY g;
SELECT stddev(i8), variance(n) FROM gx_agg_var WHERE g > 100;
RESET gpuext.force_offload;

-- a sum of squares that may pass 2^127 (int8 at its limits, or many
-- large rows): the device cannot vouch for it and PostgreSQL's plan gives
-- the answer
SELECT gx_agg_diff($$SELECT g, stddev(i8) AS a, variance(i8) AS b FROM gx_agg_var WHERE g = 7 GROUP BY g$$);
INSERT INTO gx_agg_var SELECT 6, 0, 0, x::int8 * 3000000000000000, x FROM generate_series(1, 3000) x;
SELECT gx_agg_diff($$SELECT g, stddev(i8) AS a FROM gx_agg_var WHERE g = 6 GROUP BY g$$);
-- numeric inputs with more decimals than the device keeps (12 for a known
-- scale, 6 for an unknown one): PostgreSQL's plan again, same answer
SELECT gx_agg_diff($$SELECT g, stddev(n * 0.0000000001) AS a FROM gx_agg_var GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, stddev(n * 0.5) AS a, variance(n * 0.0001) AS b FROM gx_agg_var GROUP BY g$$);
DROP TABLE gx_agg_var;

-- float4 and float8: the device keeps the count and double sums of the
-- values and of their squares, and PostgreSQL's final function finishes
-- from {N, Sx, Sxx} (Sxx = sum of squares - Sx^2 / N), so results agree
-- to about 13 digits (compared here to 10).  Values close together (more
-- than three digits of Sxx cancelled, all equal among them), infinities
-- and NaN: PostgreSQL's plan.
SELECT gx_agg_diff($$SELECT g, variance(f8) AS a, var_samp(f8) AS b, var_pop(f8) AS c, stddev(f8) AS d, stddev_samp(f8) AS e, stddev_pop(f8) AS f FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, variance(f4) AS a, stddev_pop(f4) AS b, var_samp(f4 * 2) AS c FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT stddev(f8) AS a, var_pop(f4) AS b, stddev(f8) FILTER (WHERE b) AS c FROM gx_agg$$);
CREATE TABLE gx_agg_fvar (g int, x float8);
INSERT INTO gx_agg_fvar VALUES (1, 42), (2, NULL), (3, 1e9 + 1), (3, 1e9 + 2), (3, 1e9 + 3),
  (4, 'Infinity'), (4, 1), (5, 'NaN'), (5, 2), (6, 2.5), (6, 2.5), (6, 2.5), (7, -3), (7, 4.5);
ANALYZE gx_agg_fvar;
SELECT gx_agg_diff($$SELECT g, variance(x) AS a, var_pop(x) AS b, stddev_pop(x) AS c FROM gx_agg_fvar WHERE g IN (1, 2, 7) GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, variance(x) AS a FROM gx_agg_fvar WHERE g = 3 GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, variance(x) AS a, var_pop(x) AS b FROM gx_agg_fvar WHERE g IN (4, 5) GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, stddev(x) AS a FROM gx_agg_fvar WHERE g = 6 GROUP BY g$$);
SET gpuext.force_offload = on;
SELECT g, variance(x), var_pop(x), stddev(x), stddev_pop(x) FROM gx_agg_fvar WHERE g IN (1, 2, 7) GROUP BY g ORDER BY g;
SELECT pg_typeof(variance(x)) AS f8, pg_typeof(stddev(x::float4)) AS f4 FROM gx_agg_fvar;
RESET gpuext.force_offload;
DROP TABLE gx_agg_fvar;

-- parallel: every participant feeds one device table
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT gx_agg_diff($$SELECT g, stddev(i4) AS a, variance(n2) AS b, var_pop(i8) AS c FROM gx_agg GROUP BY g$$);
RESET ALL;
