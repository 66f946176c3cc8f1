--
-- GpuScan: rows on which PostgreSQL raises an error.  The device flags
-- them for a recheck on the host, where PostgreSQL's own executor raises
-- the error: the SQLSTATE and the message must be those of a stock run.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
-- GpuScan alone (GpuAgg, aggregation fused with the scan, has its own tests)
SET gpuext.enable_gpuagg = off;
SET gpuext.max_batch_pages = 2;

-- integer overflow: 22003
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i2 + i2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i2 - 1::int2 < 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i2 * 2::int2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i4 + 1 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i4 - 1 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i4 * 2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i2 + i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i8 + 1 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i8 - i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i8 * i2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i4 * i8 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE -i2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE -i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE -i8 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE @i2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE @i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE @i8 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE CASE WHEN i2 <> 0 THEN i2 / -1::int2 > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE CASE WHEN i2 <> 0 THEN i4 / i2 > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE CASE WHEN i4 <> 0 THEN i8 / i4 > 0 END$$);
-- casts to a narrower integer: 22003
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i4::int2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i8::int4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i8::int2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8::int4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8::int8 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4::int2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4::int4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN f4 <> 'NaN' THEN f4::int8 > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN @f8 < 1e10 THEN f8::int2 > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN f8 <> 'NaN' THEN f8 BETWEEN -3e9 AND 3e9 AND f8::int4 > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE CASE WHEN n > -1e30 AND n < 1e30 THEN n::int4 > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE CASE WHEN n > -1e30 AND n < 1e30 THEN n::int2 > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE CASE WHEN n > -1e30 AND n < 1e30 THEN n::int8 > 0 END$$);
-- NaN and infinity to integer: 22003 for floats, 0A000 for numerics
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN @f8 < 2e9 OR f8 = 'NaN' THEN f8::int4 > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE id >= 34 AND n::int4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE id >= 35 AND n::int8 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE id >= 36 AND n::int2 > 0$$);
-- division by zero: 22012
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i2 / (i2 - i2) > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i4 / i2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE CASE WHEN i2 > 0 THEN i8 / i4 > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i2 % 0::int2 = 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i4 % (i2 - i2) = 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i8 % 0 = 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 / i2 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 / f8 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 / (f4 - f4) > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN f4 <> 'NaN' THEN f8 / f4 > 0 END$$);
-- float overflow and underflow: 22003
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 * 1e300 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 + f8 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 - 1.7e308 < 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 / 1e-300 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 * 1e30::float4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 + f4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 * f8 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN f8 <> 0 THEN f8 * 1e-300 <> 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN f4 <> 0 THEN f4 * 1e-30::float4 <> 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN f4 <> 0 THEN f4 / 1e30::float4 <> 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN f8 <> 0 THEN f8 / 1e300 <> 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8::float4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN @f8 > 1e-30 OR f8 = 0 THEN f8::float4 > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE CASE WHEN @f8 < 1e30 THEN f8::float4 > 0 END$$);
-- numeric overflow: 22003
CREATE TABLE gx_numbig (id int, n numeric);
INSERT INTO gx_numbig VALUES (1, 1), (2, NULL), (3, 1e100000), (4, -1e100000), (5, 2);
SELECT gx_diff($$SELECT id FROM gx_numbig WHERE n * n > 0$$);
SELECT gx_diff($$SELECT id FROM gx_numbig WHERE n + n * 10 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_numbig WHERE id <> 3 AND n * n * n > 0$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n0 * n0 * n0 * n0 > 0 AND n::numeric(3,0) > 0$$);
-- substr with a negative length: 22011
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, 1, -1) = ''$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, 2, id - 100) = 'tr'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substring(vc from 1 for id % 5 - 2) = ''$$);
-- dates out of range: 22008
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d + 2145031000 > '2000-01-01'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d - 2000000000 > '2000-01-01'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d - (-2147483647 - 1) > '2000-01-01'$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE d + 1 > '2000-01-01'$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE d - 1 > '2000-01-01'$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE d - '2000-01-01'::date > 0$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE '2000-01-01'::date - d > 0$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE d::timestamp > ts$$);
-- an error in a branch that is not taken is never raised
SELECT gx_diff($$SELECT id FROM gx_intx WHERE CASE WHEN i2 IN (0, -1) THEN false ELSE i4 / i2 >= 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE coalesce(i4, i4 + 1) > 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE (i4 = 2147483647 OR i4 + 1 > 0) AND i8 = 0$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE i2 <= 1 OR i4 / (i2 - 1) < 100000$$);
SELECT gx_diff($$SELECT id FROM gx_intx WHERE NOT (i8 NOT BETWEEN -1000 AND 1000 OR i8 * 2 > 0)$$);
-- a cheaper host qual comes first in PostgreSQL's order: the rows it
-- rejects never reach the division, and the stock run raises nothing
SELECT * FROM gx_where($$SELECT id FROM gx_ints WHERE b::text ~ 'zzz' AND i4 / (i2 - i2) > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b::text ~ 'zzz' AND i4 / (i2 - i2) > 0$$);

-- the errors as a client sees them
SET gpuext.force_offload = on;
SELECT count(*) FROM gx_intx WHERE i4 + 1 > 0;
SELECT count(*) FROM gx_intx WHERE i8 * i2 > 0;
SELECT count(*) FROM gx_intx WHERE i2::int4 / (i2 - i2) > 0;
SELECT count(*) FROM gx_floatx WHERE f4 * 1e30::float4 > 0;
SELECT count(*) FROM gx_floatx WHERE f8 * 1e-300 < 1;
SELECT count(*) FROM gx_texts WHERE substr(t, 1, -1) = '';
SELECT count(*) FROM gx_datex WHERE d + 1 > '2000-01-01';
SELECT count(*) FROM gx_datex WHERE d - d > 0;
SELECT count(*) FROM gx_datex WHERE d::timestamp > ts;
SELECT count(*) FROM gx_numbig WHERE n * n > 0;
SELECT count(*) FROM gx_numx WHERE id >= 34 AND n::int4 > 0;
SELECT count(*) FROM gx_numx WHERE id >= 35 AND n::int8 > 0;
-- the same scans, without the rows that raise
SELECT count(*) FROM gx_intx WHERE CASE WHEN i4 < 2147483647 THEN i4 + 1 > 0 END;
SELECT count(*) FROM gx_datex WHERE CASE WHEN d < '5874897-12-31' THEN d + 1 > '2000-01-01' END;
RESET gpuext.force_offload;
DROP TABLE gx_numbig;
