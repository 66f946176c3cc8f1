--
-- GpuScan: three-valued logic.  AND/OR/NOT, IS [NOT] NULL,
-- IS [NOT] TRUE/FALSE/UNKNOWN, BETWEEN, IN / = ANY / <> ALL (NULL
-- elements, empty arrays), CASE (simple and searched), COALESCE, NULLIF.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
-- GpuScan alone (GpuAgg, aggregation fused with the scan, has its own tests)
SET gpuext.enable_gpuagg = off;
SET gpuext.max_batch_pages = 4;

SELECT * FROM gx_plan($$SELECT id FROM gx_ints WHERE (i2 > 0 OR i4 > 0) AND NOT b$$);

-- AND / OR / NOT with NULLs (nested, so the device evaluates them)
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 > 0 OR i4 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 > 0 OR b$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE NOT (i2 > 0 OR i4 > 0)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE NOT (i2 > 0 AND i4 > 0)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i2 > 0 AND i4 > 0) OR (i8 > 0 AND b)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i2 > 0 OR i4 > 0) AND (i8 > 0 OR NOT b)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE NOT NOT b$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE NOT (b OR i2 IS NULL)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b OR i2 > 0 OR i4 > 0 OR i8 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (b AND i2 > 0 AND i4 > 0) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (b OR i2 > 0 OR i4 > 0) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (b AND i2 > 0) IS FALSE$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (b OR i2 > 0) IS NOT TRUE$$);
-- IS [NOT] NULL, IS [NOT] TRUE / FALSE / UNKNOWN
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i8 IS NOT NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i2 + i4) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 IS NULL OR i4 IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b IS TRUE$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b IS NOT TRUE$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b IS FALSE$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b IS NOT FALSE$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b IS UNKNOWN$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b IS NOT UNKNOWN$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i2 > i4) IS NOT FALSE$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i2 > i4) IS UNKNOWN$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE NOT (i2 > i4) IS TRUE$$);
-- BETWEEN
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 BETWEEN -10 AND 10$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 NOT BETWEEN -900 AND 900$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 BETWEEN 10 AND -10$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 BETWEEN SYMMETRIC 10 AND -10$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 BETWEEN i2 AND i8 + 20000000000$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i4 BETWEEN i2 AND 1000) IS NULL$$);

-- IN, = ANY, <> ALL, with NULL elements and empty arrays
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 IN (1, 2, 3, -7)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 IN (1, 2, NULL)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i2 IN (1, 2, NULL)) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 NOT IN (1, 2, 3)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 NOT IN (1, 2, NULL)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i2 NOT IN (1, 2, NULL)) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i2 NOT IN (1, 2, NULL)) IS FALSE$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 = ANY ('{}'::int4[])$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i4 = ANY ('{}'::int4[])) IS FALSE$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 <> ALL ('{}'::int4[])$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 > ALL ('{}'::int8[])$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 = ANY ('{NULL}'::int4[]) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i4 <> ALL ('{NULL,NULL}'::int4[]) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 = ANY ('{5,-5,NULL,7}'::int2[])$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 <> ALL ('{5,-5,7}'::int8[])$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 = ANY ('{5,1,2}'::int8[] || NULL::int8)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 < ANY ('{-990,NULL}'::int4[])$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 >= ALL ('{990,NULL}'::int4[])$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (i2 >= ALL ('{990,NULL}'::int4[])) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 > ALL ('{{1,2},{3,NULL}}'::int4[]) IS NOT TRUE$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE b = ANY ('{true,NULL}')$$);
-- long lists (hashed by PostgreSQL) and NOT IN lists
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 IN (1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 NOT IN (1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 NOT IN (1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,NULL)$$);
-- other types
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f8 = ANY ('{NaN,1.5,-0}')$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 IN (1.5, 'Infinity', NULL)$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE f4 <> ALL ('{NaN,0}'::float4[])$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE n2 IN (1.5, 2.25, 100.10, -0.5)$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n IN (1.5, 0, 2147483647.5, NULL)$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d IN ('2000-01-01', '1999-12-31', '2010-10-10')$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE ts = ANY ('{infinity,-infinity}')$$);
-- an array that is not a constant, or that the device cannot hold, stays on the host
SELECT * FROM gx_where($$SELECT id FROM gx_ints WHERE i2 = ANY (ARRAY[i4, i8]) AND i8 > 0$$);
SELECT * FROM gx_where($$SELECT id FROM gx_numx WHERE n IN (1, 'NaN') AND id > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 = ANY (ARRAY[i4, i8, 5]) AND i8 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE n IN (1, 'NaN') AND id > 0$$);

-- CASE, simple and searched, with and without ELSE, nested
SELECT gx_diff($$SELECT id FROM gx_ints WHERE CASE WHEN i2 > 0 THEN i4 > 0 WHEN i2 < 0 THEN i8 > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE CASE WHEN i2 > 0 THEN i4 > 0 ELSE b END$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE (CASE WHEN i2 > 0 THEN i4 > 0 END) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE CASE WHEN b THEN i2 WHEN NOT b THEN i4 ELSE i8 END > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE CASE WHEN b THEN i2 END IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE CASE i2 % 3 WHEN 0 THEN 10 WHEN 1 THEN 20 ELSE 30 END = 20$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE CASE i2 % 3 WHEN 0 THEN i4 WHEN -1 THEN i2 END < 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE CASE i4 WHEN i2 THEN true ELSE i2 IS NULL END$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE CASE b WHEN true THEN 1 WHEN false THEN 2 ELSE 3 END = 3$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE CASE i2 % 2 WHEN 0 THEN CASE i4 % 3 WHEN 0 THEN 'a' ELSE 'b' END ELSE CASE WHEN b THEN 'c' END END = 'b'$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE CASE CASE i2 % 4 WHEN 0 THEN i4 % 3 ELSE i4 % 5 END WHEN 0 THEN i8 > 0 WHEN 1 THEN b END$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE CASE WHEN i2 > 0 THEN i2 ELSE i8 END < -9000000000$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE CASE WHEN f4 > 0 THEN f4 ELSE f8 END > 10$$);
SELECT gx_diff($$SELECT id FROM gx_nums WHERE CASE WHEN n2 > 0 THEN n2 ELSE n8 END > 10$$);
-- COALESCE
SELECT gx_diff($$SELECT id FROM gx_ints WHERE coalesce(i2, i4, i8) > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE coalesce(i2, 0) = 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE coalesce(b, i4 > 0)$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE coalesce(NULL::int4, i2, NULL::int8) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE coalesce(b, i2 > 0, i4 > 0) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_floats WHERE coalesce(f4, f8, 'NaN') = 'NaN'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE coalesce(d, '2000-01-01') = '2000-01-01'$$);
-- NULLIF
SELECT gx_diff($$SELECT id FROM gx_ints WHERE nullif(i2, 0) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE nullif(i4, i2) > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE nullif(i2, i4) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE nullif(b, true) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE nullif(i8, 5) > nullif(i4, 7)$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE nullif(f8, 'NaN') IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_floatx WHERE nullif(f4, 0) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_numx WHERE nullif(n, 1.5) IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE nullif(d, '2000-01-01') IS NULL$$);
-- IS DISTINCT FROM stays on the host
SELECT * FROM gx_where($$SELECT id FROM gx_ints WHERE i2 IS DISTINCT FROM i4 AND i8 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 IS DISTINCT FROM i4 AND i8 > 0$$);
SELECT gx_diff($$SELECT id FROM gx_ints WHERE i2 IS NOT DISTINCT FROM NULL AND i8 > 0$$);

-- values humans can read
SET gpuext.force_offload = on;
SELECT count(*) AS all_rows,
       count(*) FILTER (WHERE b IS NULL) AS b_unknown,
       count(*) FILTER (WHERE i2 IS NULL) AS i2_null
  FROM gx_ints WHERE (i2 = ANY ('{}'::int2[])) IS FALSE;
SELECT count(*) FROM gx_ints WHERE i4 <> ALL ('{}'::int4[]);
SELECT count(*) FROM gx_ints WHERE i2 NOT IN (1, NULL);
SELECT id, b, i2, i4, i8 FROM gx_ints
 WHERE (b OR i2 > 0) IS NULL AND i4 IS NULL AND id < 700 ORDER BY id;
SELECT id, i2, CASE i2 % 3 WHEN 0 THEN 'zero' WHEN 1 THEN 'one' WHEN -1 THEN 'minus one' END AS r
  FROM gx_ints
 WHERE CASE i2 % 3 WHEN 0 THEN 'zero' WHEN 1 THEN 'one' WHEN -1 THEN 'minus one' END IS NOT NULL
   AND id < 10 ORDER BY id;
RESET gpuext.force_offload;
