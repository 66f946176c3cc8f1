--
-- GpuScan: float4 and float8 quals.  float4 arithmetic is single
-- precision on the device, as in PostgreSQL: results must be bit-identical,
-- so every comparison here is exact.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
-- GpuScan alone (GpuAgg, aggregation fused with the scan, has its own tests)
SET gpuext.enable_gpuagg = off;
SET gpuext.max_batch_pages = 4;

SELECT * FROM gx_plan($$SELECT id FROM gx_floats WHERE f4 * 2::float4 > f8$$);

-- comparisons
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 = 1.5$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 = (5 / 7.0)::float4$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 <> 0.1$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 < f8$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f8 <= f4$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f8 >= -12.345$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f8 = f8$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4::float8 = f4$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 BETWEEN -10 AND 10$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f8 NOT BETWEEN -10 AND 10$$);

-- arithmetic: float4 op float4 is single precision, anything with a
-- float8 is double precision
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 + 0.1::float4 > 1$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 + 0.5::float4 = f4 + 0.5::float8$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 + 0.1::float4 <> f4 + 0.1::float8$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 * 3::float4 / 7::float4 < f4 * 3 / 7$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 * f4 - f4 > 100$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 / 3::float4 = (f4::float8 / 3)::float4$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 - f8 < 0$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f8 * 1.1 > f8 + 0.1$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f8 / 3 * 3 <> f8$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f8 + f4 = f4 + f8$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f8 / nullif(f4, 0) > 2$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4 / nullif(f4, 0) = 1$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE -f4 > 50$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE @f8 < 1$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE @f4 > 100$$);
-- the function abs(), documented as supported
SELECT gx_diff($$SELECT id FROM gx_floats WHERE abs(f8) < 1$$);
-- casts
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f8::float4 = f8$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f8::float4 > f4$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4::int4 = 3$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f4::int2 % 2 = 0$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE f8::int8 % 2 = 1$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE (f8 * 1000)::int4 % 10 = 5$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE (f4 * 8)::int8 % 4 = 2$$);
-- projections of stored values are exact
SELECT gx_diff($$SELECT id, f4, f8 FROM gx_floats WHERE f8 > f4$$);

-- special values: NaN equals NaN and sorts above everything, -0 = 0
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 = 'NaN'$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 = 'NaN'::float8$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 > 'Infinity'$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 < 'NaN'$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 = f8$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 < f8$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 >= f8$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 <> f8$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 = 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 = '-0'$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 > 0 AND f4 < 1e-37$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 > 0 AND f8 < 1e-307$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 = '3.4028235e38'::float4$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 = 1.7976931348623157e308$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 = '-Infinity' OR f8 = 'Infinity'$$);
-- NaN and infinities through arithmetic (no error: PostgreSQL only
-- raises when a finite input gives an infinite or zero result)
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 + f4 = 'NaN'$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 - f8 = 'NaN'$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 * 0::float4 = 'NaN'$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 - f4 = 'NaN'::float4$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN @f4 <= 1e20 THEN f4 + f4 > 1e19 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN @f8 <= 1e300 THEN f8 * 1e8 > 1e40 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN @f4 > 1e-37 THEN 1::float4 / f4 < 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN f8 <> 0 AND @f8 > 1e-300 THEN 1 / f8 > 0.5 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 / 'Infinity' = 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE -f8 = f8$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE @f4 = f4$$);
-- casts of special values where they are defined
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4::float8 = f8$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN f8 = 0 OR @f8 BETWEEN 1e-30 AND 1e30 OR f8 IN ('NaN', 'Infinity', '-Infinity') THEN f8::float4 = f4 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN @f8 < 2147483647 THEN f8::int4 = 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN @f4 < 32000 THEN f4::int2 <> 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN @f4 < 9e18 THEN f4::int8 = 2 END$$);
SELECT gx_diff($$SELECT id, f4, f8 FROM gx_floatx WHERE f4 IS NOT NULL$$);

-- values humans can read
SET gpuext.force_offload = on;
SELECT DISTINCT f4::text COLLATE "C" AS f4 FROM gx_floatx WHERE f4 = f4::float8 AND f4 > 1e30 OR f4 = '-0' ORDER BY f4;
SELECT DISTINCT f8 FROM gx_floatx WHERE f8 > 'Infinity' OR f8 < 1e-300 AND f8 > 0 ORDER BY 1;
SELECT DISTINCT f4, f4::int2 AS i2 FROM gx_floatx WHERE @f4 < 32767 AND f4::int2 <> 0 ORDER BY 1;
SELECT DISTINCT f8, f8::int4 AS i4 FROM gx_floatx
 WHERE CASE WHEN f8 BETWEEN -2147483648.5 AND 2147483647.4 THEN f8::int4 IN (-2147483648, 2, -2) END
 ORDER BY 1;
SELECT id, f4, f4 + 0.1::float4 AS s4, f4 + 0.1::float8 AS s8 FROM gx_floats
 WHERE f4 + 0.1::float4 <> f4 + 0.1::float8 AND id < 30 ORDER BY id;
RESET gpuext.force_offload;
