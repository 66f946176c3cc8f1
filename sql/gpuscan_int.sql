--
-- GpuScan: bool, int2, int4, int8 quals (comparisons, arithmetic, casts)
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
-- GpuScan alone (GpuAgg, aggregation fused with the scan, has its own tests)
SET gpuext.enable_gpuagg = off;
-- many small batches
SET gpuext.max_batch_pages = 4;

-- the plan: one GpuScan, the qual on the device
SELECT * FROM gx_plan($$SELECT id FROM gx_ints WHERE i4 > 0$$);
SELECT * FROM gx_plan($$SELECT id FROM gx_ints WHERE i2 + i4 > i8 AND b$$);

-- comparisons of every width against every width
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 = i2$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 < i4$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 <= i8$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > i2$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 >= i8$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8 <> i2$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8 < i4$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8 = i8$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 = 7::int2$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 > 500$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 <= -500::int8$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 <> 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 >= 9000::int2 * 5 + 5000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8 > 5000000000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8 < -9990000000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE 100 > i2$$);
-- constants beyond the column's width
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 < 100000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > -3000000000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 = 40000$$);

-- booleans
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE NOT b$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b = (i4 > 0)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b <> (i2 > 0)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b < (i2 > 0)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b >= (i8 > 0)$$);

-- arithmetic that stays in range
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 + i2 > 100$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 - 1000::int2 < -1500$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 * 30::int2 > 10000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 / 7::int2 = 3$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 % 7::int2 = -3$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 + i2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 - i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 * 3 - i2 * 2 < 12345$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 / 100 > i2$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 / -7 > 2000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 % 10 = -3$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 % -10 = 3$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8 + i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8 - i2 < 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8 * i2 > 1000000000000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8 / nullif(i2, 0) > 100000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8 % 100 = -7$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 * i8 < 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 * i8 < -5000000000000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE -i2 > 900$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE -i4 > i4$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE -i8 > 9000000000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE @i2 < 10$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE @i4 < 1000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE @i8 > 9990000000$$);
-- the functions abs() and mod(), documented as supported
SELECT gx_diff($$SELECT id FROM gx_ints WHERE abs(i4) < 1000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE abs(i8) > 9990000000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE mod(i4, 7) = mod(i2, 7)$$);
-- the projection of stored values, computed values on the host
SELECT gx_diff($$SELECT id, i2, i4, i8, b FROM gx_ints WHERE i4 % 3 = 0$$);
SELECT gx_diff($$SELECT i2 + i4, i8 - i4, b FROM gx_ints WHERE i8 % 5 = 1$$);

-- casts among integer widths, to and from floats
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2::int4 * 1000000 > 500000000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4::int8 * i4 > 9000000000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i8 / 100)::int4 > 10000000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i4 / 10)::int2 > i2$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i8 / 1000000)::int2 > 9000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2::float4 / 3 > 100$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4::float8 / 7 < -10000.5$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8::float4 > 9.0e9$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8::float8 = i8::float4$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i4 / 3.0::float8)::int4 = i4 / 3$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i2 / 2.0::float4)::int2 % 2 = 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i8 * 1.5::float8)::int8 % 10 = 5$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4::numeric * 3 > 150000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > 0 AND (i4::numeric / 8)::int4 = i4 / 8$$);

-- the extreme values: comparisons never overflow
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i2 < i4$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i4 >= i8$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i8 <> i2$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i8 = -9223372036854775808$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i8 > 9223372036854775806$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i4 <= -2147483648$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i2 >= 32767$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i2 BETWEEN -32768 AND -1$$);
-- operations that are exactly at the limits but do not overflow
SELECT gx_diff($$SELECT id FROM gx_intx WHERE CASE WHEN i4 > -2147483648 THEN i4 - 1 = 2147483646 END$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE CASE WHEN i4 < 2147483647 THEN i4 + 1 = -2147483647 END$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i4 % -1 = 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i8 % -1 = 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i2 % -1::int2 = 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i8 / 2 < 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i2::int4 * 65536 < 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i4::int8 * 4294967296 > 0$$);
-- guarded by CASE: only the rows that cannot overflow compute
SELECT gx_diff($$SELECT id FROM gx_intx WHERE CASE WHEN i4 < 2147483647 THEN i4 + 1 > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE CASE WHEN i8 > -9223372036854775808 THEN -i8 < 0 ELSE false END$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE CASE WHEN i2 > 0 THEN i4 / i2 > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE CASE WHEN i2 > -32768 THEN @i2 > 1 END$$);

-- values humans can read
SELECT id, i2, i4, i8 FROM gx_intx
 WHERE i2 = 32767 AND i4 = 2147483647 AND i8 > 0 ORDER BY id;
SELECT id, i4, i4 % -1 AS m FROM gx_intx
 WHERE i4 % -1 = 0 AND i2 = 0 AND i8 = 0 ORDER BY id;
SELECT id, i2, i4 FROM gx_intx
 WHERE CASE WHEN i2 NOT IN (0, -1) THEN i4 / i2 = 65536 END ORDER BY id;
SELECT count(*), sum(i4), min(i2), max(i8) FROM gx_ints WHERE i4 > 0 AND i2 < 0;
SET gpuext.force_offload = on;
SELECT count(*), sum(i4), min(i2), max(i8) FROM gx_ints WHERE i4 > 0 AND i2 < 0;
SELECT id, i2, i4, i8, b FROM gx_ints WHERE i2 = 0 OR i4 = 0 OR i8 = 0 ORDER BY id;
RESET gpuext.force_offload;
