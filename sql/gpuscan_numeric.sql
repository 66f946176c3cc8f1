--
-- GpuScan: numeric quals.  The device holds numerics as 128-bit integers
-- at their display scale; NaN, infinities, values of 10^38 or more and
-- scales beyond 38 are rechecked on the host.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
-- GpuScan alone (GpuAgg, aggregation fused with the scan, has its own tests)
SET gpuext.enable_gpuagg = off;
SET gpuext.max_batch_pages = 4;

SELECT * FROM gx_plan($$SELECT id FROM gx_nums WHERE n > n2$$);

-- comparisons across scales and typmods
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n > 0$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n = 250$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n = 250.000$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n < 1234.567$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n2 > 1234.5$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n2 >= -0.01$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n2 <> 0$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n2 < n0$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n < n2$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n >= n8$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n8 <= n2$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n0 > 1000000000000000000$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n8 BETWEEN -0.5 AND 0.5$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n8 < 0.00000001$$);
-- with integers
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n2 > id$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n * 1000 = id::int8 * 1234567$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n0::int8 > 0$$);

-- arithmetic (+ - * and unary), exact on the device
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n + n2 > 100$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n - n8 < 0$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n2 * 3 > 5000$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n2 * n2 > 10000000$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n8 * 100000000 > n0$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n2 + 0.005 > n2$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n0 + n0 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n0 * n0 > 10000000000000000000000000000000000000$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE -n > 100$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE @n2 < 100$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE @n8 > 1000$$);
-- the function abs(), documented as supported
SELECT gx_diff($$SELECT id FROM gx_nums WHERE abs(n8) > 1000$$);
-- casts to integers round half away from zero
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n2::int4 % 2 = 1$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE (n8 * 10)::int8 % 3 = 0$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE (n2 * 0.001)::int2 = 1$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE (n2 * 10)::int8 > 50000$$);
-- projections of stored values
SELECT gx_diff($$SELECT id, n, n2, n0, n8 FROM gx_nums WHERE n2 > 0$$);

-- rows the device cannot hold are rechecked on the host: the same rows
-- come out, and EXPLAIN ANALYZE counts the rechecks
SELECT gx_diff($$SELECT id, n FROM gx_nums WHERE n > 1000000$$);
SELECT gx_diff($$SELECT id, n FROM gx_nums WHERE n < -1000000$$);
SELECT gx_diff($$SELECT id, n FROM gx_nums WHERE n <> 7$$);
SET gpuext.force_offload = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT id FROM gx_nums WHERE n > 1000000;
-- the rechecked rows, one for each value beyond 10^38 or with a scale
-- beyond 38: all of the table's, since the qual reads n in every row
SELECT count(*) FILTER (WHERE @n >= 1e38) AS beyond_1e38,
       count(*) FILTER (WHERE scale(n) > 38) AS scale_beyond_38
  FROM gx_nums;
RESET gpuext.force_offload;

-- special values
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n >= 99999999999999999999999999999999999999$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n < -99999999999999999999999999999999999998$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n = 1.5$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n = 0$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n > 0 AND n < 0.0000000001$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n <> n$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n + 1 > n$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n * 2 = n + n$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE -n < 0$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE @n > 1e37$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE CASE WHEN @n < 32767 THEN n::int2 <> 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE CASE WHEN n BETWEEN -2147483648.4 AND 2147483647.4 THEN n::int4 IN (-2147483648, 2147483647, 2, -2, 1, -1) END$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE CASE WHEN n BETWEEN -9223372036854775808 AND 9223372036854775807 THEN n::int8 > 0 END$$);
SELECT gx_diff($$SELECT id, n FROM gx_numx WHERE n IS NOT NULL$$);

-- constants the device cannot hold keep their qual on the host
SELECT * FROM gx_where($$SELECT id FROM gx_numx WHERE n < 1e50 AND id > 0$$);
SELECT * FROM gx_where($$SELECT id FROM gx_numx WHERE n = 0.000000000000000000000000000000000000001 AND id > 0$$);
SELECT * FROM gx_where($$SELECT id FROM gx_numx WHERE n <> 'NaN' AND id > 0$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n < 1e50 AND id > 0$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n = 0.000000000000000000000000000000000000001 AND id > 0$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n <> 'NaN' AND id > 0$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n = 'NaN' AND id > 0$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n > 'Infinity' AND id > 0$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n < '-Infinity'::numeric AND id > 0$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n <= '-Infinity'::numeric AND id > 0$$);
-- division and typmod coercion are not device functions
SELECT * FROM gx_where($$SELECT id FROM gx_nums WHERE n2 / 3 > 10 AND n2::numeric(6,1) < 1000 AND n0 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n2 / 3 > 10 AND n2::numeric(6,1) < 1000 AND n0 > 0$$);

-- values humans can read
SET gpuext.force_offload = on;
SELECT id, n FROM gx_numx WHERE n >= 99999999999999999999999999999999999999 ORDER BY id;
SELECT id, n FROM gx_numx WHERE n < 0 AND n > -3 ORDER BY id;
SELECT id, n, n::int4 AS i4 FROM gx_numx
 WHERE CASE WHEN @n < 2147483647 THEN n::int4 IN (2, -2, 32768, -32769) END ORDER BY id;
SELECT id, n FROM gx_numx WHERE n = 1.5 OR n = 0 ORDER BY id;
SELECT id, n FROM gx_numx WHERE n > 0 AND n < 0.1 ORDER BY id;
RESET gpuext.force_offload;
