--
-- GpuScan correctness suite: helpers and test tables.
--
-- The other gpuscan_* tests depend on the objects made here, so this test
-- runs first.  Everything is deterministic (generate_series, no random()),
-- and no output depends on the engine (GPU or CPU engine), on the locale
-- or on the database encoding.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;

-- gx_diff(query): run the query offloaded (gpuext.force_offload = on, and
-- EXPLAIN must show a GpuScan, else 'not offloaded'), then with
-- gpuext.enabled = off (stock PostgreSQL), and compare the two results as
-- multisets of rows (each row as its text image: floats print with the
-- shortest exact representation, so equal text means equal bits, -0 and 0
-- included).  Returns
--   'ok N rows'                        same rows
--   'MISMATCH ...'                     different rows (a bug)
--   'error SQLSTATE both (message)'    both raised the same error
--   'ERROR MISMATCH ...'               only one raised, or different errors
-- Session settings (gpuext.max_batch_pages, parallel settings, ...) apply
-- to both runs; the function's SET clause restores gpuext.* afterwards.
-- GpuAgg (aggregation fused with the scan) stays off: this suite is about
-- GpuScan, and GpuAgg has tests of its own.
CREATE FUNCTION gx_diff(q text) RETURNS text
LANGUAGE plpgsql
SET gpuext.force_offload = on
SET gpuext.enabled = on
SET gpuext.enable_gpuagg = off
AS $fn$
DECLARE
  agg text := 'SELECT coalesce(array_agg(gx_r::text), ''{}'') FROM (' || q || ') AS gx_r';
  line text;
  offloaded bool := false;
  r_on text[];
  r_off text[];
  st_on text;
  st_off text;
  msg_on text;
  msg_off text;
  only_on text[];
  only_off text[];
BEGIN
  BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || agg LOOP
      IF line LIKE '%GpuScan%' THEN
        offloaded := true;
      END IF;
    END LOOP;
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg_on = MESSAGE_TEXT;
    RETURN 'not offloaded (EXPLAIN failed: ' || msg_on || ')';
  END;
  IF NOT offloaded THEN
    RETURN 'not offloaded';
  END IF;

  BEGIN
    EXECUTE agg INTO r_on;
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st_on = RETURNED_SQLSTATE, msg_on = MESSAGE_TEXT;
  END;

  PERFORM set_config('gpuext.enabled', 'off', true);
  BEGIN
    EXECUTE agg INTO r_off;
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st_off = RETURNED_SQLSTATE, msg_off = MESSAGE_TEXT;
  END;

  IF st_on IS NOT NULL OR st_off IS NOT NULL THEN
    IF st_on IS NOT DISTINCT FROM st_off AND msg_on IS NOT DISTINCT FROM msg_off THEN
      RETURN format('error %s both (%s)', st_on, msg_on);
    END IF;
    RETURN format('ERROR MISMATCH: offloaded %s, stock %s',
                  coalesce(st_on || ' (' || msg_on || ')', 'no error'),
                  coalesce(st_off || ' (' || msg_off || ')', 'no error'));
  END IF;

  SELECT coalesce(array_agg(x ORDER BY x COLLATE "C"), '{}') INTO only_on
    FROM (SELECT unnest(r_on) EXCEPT ALL SELECT unnest(r_off)) AS d(x);
  SELECT coalesce(array_agg(x ORDER BY x COLLATE "C"), '{}') INTO only_off
    FROM (SELECT unnest(r_off) EXCEPT ALL SELECT unnest(r_on)) AS d(x);
  IF cardinality(only_on) = 0 AND cardinality(only_off) = 0 THEN
    RETURN format('ok %s rows', cardinality(r_on));
  END IF;
  RETURN format('MISMATCH: offloaded %s rows, stock %s rows; only offloaded: %s; only stock: %s',
                cardinality(r_on), cardinality(r_off),
                array_to_string(only_on[1:5], ' '), array_to_string(only_off[1:5], ' '));
END;
$fn$;

-- gx_plan(query): EXPLAIN (COSTS OFF) of the query as gx_diff plans its
-- offloaded run, in regression_test_mode (no engine names, timings).
CREATE FUNCTION gx_plan(q text) RETURNS SETOF text
LANGUAGE plpgsql
SET gpuext.force_offload = on
SET gpuext.enabled = on
SET gpuext.enable_gpuagg = off
SET gpuext.regression_test_mode = on
AS $fn$
BEGIN
  RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q;
END;
$fn$;

-- gx_where(query): where each qual runs, one line per plan line that
-- names a filter (GPU Filter: device quals, Filter: host quals).
CREATE FUNCTION gx_where(q text) RETURNS SETOF text
LANGUAGE sql
AS $fn$
  SELECT btrim(l) FROM gx_plan(q) AS l
   WHERE l ~ '(GPU Filter|Filter|GpuScan|Seq Scan)'
$fn$;

--
-- integers: moderate values (no overflow in simple arithmetic), NULLs,
-- duplicates; 6000 rows over several dozen pages
--
CREATE TABLE gx_ints (id int, b bool, i2 int2, i4 int4, i8 int8);
INSERT INTO gx_ints
SELECT g,
       CASE WHEN g % 7 = 0 THEN NULL ELSE g % 3 = 0 END,
       CASE WHEN g % 11 = 0 THEN NULL ELSE (g * 37) % 2001 - 1000 END,
       CASE WHEN g % 13 = 0 THEN NULL ELSE (g * 7919) % 200001 - 100000 END,
       CASE WHEN g % 17 = 0 THEN NULL ELSE (g::int8 * 2654435761) % 20000000001 - 10000000000 END
  FROM generate_series(1, 6000) g;

-- integers: the extreme values of each width, all combinations
CREATE TABLE gx_intx (id serial, i2 int2, i4 int4, i8 int8);
INSERT INTO gx_intx (i2, i4, i8)
SELECT a.v, b.v, c.v
  FROM unnest('{-32768,-32767,-1,0,1,2,32766,32767,NULL}'::int2[]) WITH ORDINALITY a(v, n),
       unnest('{-2147483648,-2147483647,-1,0,1,2,2147483646,2147483647,NULL}'::int4[]) WITH ORDINALITY b(v, n),
       unnest('{-9223372036854775808,-9223372036854775807,-1,0,1,2,9223372036854775806,9223372036854775807,NULL}'::int8[]) WITH ORDINALITY c(v, n)
 ORDER BY a.n, b.n, c.n;

--
-- floats: dyadic and non-dyadic values, NULLs, duplicates
--
CREATE TABLE gx_floats (id int, f4 float4, f8 float8);
INSERT INTO gx_floats
SELECT g,
       CASE WHEN g % 29 = 0 THEN NULL
            WHEN g % 5 = 0 THEN (g / 7.0)::float4
            ELSE ((g * 131) % 4001 - 2000) / 16.0 END,
       CASE WHEN g % 31 = 0 THEN NULL
            WHEN g % 3 = 0 THEN (g / 3.0)::float8
            ELSE ((g * 7907) % 100003 - 50000) / 1000.0 END
  FROM generate_series(1, 4000) g;

-- floats: special values, every float4 with every float8
CREATE TABLE gx_floatx (id serial, f4 float4, f8 float8);
INSERT INTO gx_floatx (f4, f8)
SELECT a.v, b.v
  FROM unnest('{0,-0,1,-1,0.1,1.5,-2.5,NaN,Infinity,-Infinity,1e-45,1e-40,1.17549435e-38,3.4028235e38,-3.4028235e38,32767.5,-32768.5,2147483520,-2147483648,1e19,NULL}'::float4[]) WITH ORDINALITY a(v, n),
       unnest('{0,-0,1,-1,0.1,1.5,-2.5,NaN,Infinity,-Infinity,5e-324,1e-310,2.2250738585072014e-308,1.7976931348623157e308,-1.7976931348623157e308,1e-40,3.5e38,32767.5,-32768.5,2147483647.5,-2147483648.5,-2147483648.4,9223372036854775807,-9223372036854775808,NULL}'::float8[]) WITH ORDINALITY b(v, n)
 ORDER BY a.n, b.n;

--
-- numerics: several scales and typmods, values beyond 10^38 and scales
-- beyond 38 (which the device cannot hold: those rows are rechecked)
--
CREATE TABLE gx_nums (id int, n numeric, n2 numeric(12,2), n0 numeric(20,0), n8 numeric(30,8));
INSERT INTO gx_nums
SELECT g,
       CASE WHEN g % 23 = 0 THEN NULL
            WHEN g % 97 = 0 THEN g * 1e40
            WHEN g % 89 = 0 THEN -(g * 1e37)
            WHEN g % 83 = 0 THEN round(g::numeric / 7, 40)
            WHEN g % 5 = 0 THEN g::numeric / 8
            WHEN g % 5 = 1 THEN g::numeric * 1234567 / 1000
            ELSE (g * 7919) % 20001 - 10000 END,
       CASE WHEN g % 19 = 0 THEN NULL ELSE ((g * 7919) % 2000001 - 1000000) / 100.0 END,
       CASE WHEN g % 17 = 0 THEN NULL ELSE (g::numeric * 1000000007 * 1000000009) % 10000000000000000000 - 5000000000000000000 END,
       CASE WHEN g % 13 = 0 THEN NULL ELSE ((g::numeric * 104729) % 100000007) / 100000000 * (g - 2000) END
  FROM generate_series(1, 4000) g;

-- numerics: special values
CREATE TABLE gx_numx (id serial, n numeric);
INSERT INTO gx_numx (n)
SELECT v FROM unnest('{0,-0.0,1,-1,0.5,-0.5,1.5,-1.5,2.5,-2.5,1.50,1.500000,
  32767.4,32767.5,-32768.5,2147483647.4,2147483647.5,-2147483648.5,-2147483648.4,
  9223372036854775807,9223372036854775807.5,-9223372036854775808,-9223372036854775808.5,
  99999999999999999999999999999999999999,100000000000000000000000000000000000000,
  -99999999999999999999999999999999999999,-100000000000000000000000000000000000000,
  1e100,-1e100,0.00000000000000000000000000000000000001,0.000000000000000000000000000000000000001,
  123456789012345678901234567890.12345678,1234567890123456789012345678901234567.8,
  NaN,Infinity,-Infinity,NULL}'::numeric[]) WITH ORDINALITY AS u(v, n)
 ORDER BY n;

--
-- dates and timestamps
--
CREATE TABLE gx_dates (id int, d date, ts timestamp, tz timestamptz);
INSERT INTO gx_dates
SELECT g,
       CASE WHEN g % 37 = 0 THEN NULL ELSE date '2000-01-01' + ((g * 37) % 20001 - 10000) END,
       CASE WHEN g % 41 = 0 THEN NULL ELSE timestamp '2000-01-01' + ((g * 7919) % 10000019 - 5000000) * interval '1 minute' END,
       CASE WHEN g % 43 = 0 THEN NULL ELSE timestamptz '2000-01-01 00:00:00+00' + ((g::int8 * 2654435761) % 1000000007 - 500000000) * interval '1 second' END
  FROM generate_series(1, 3000) g;

-- dates and timestamps: infinities and the ends of the ranges
CREATE TABLE gx_datex (id serial, d date, ts timestamp, tz timestamptz);
INSERT INTO gx_datex (d, ts, tz)
SELECT a.v, b.v, c.v
  FROM unnest('{-infinity,4714-11-24 BC,0001-01-01 BC,1999-12-31,2000-01-01,2000-01-02,294276-12-31,294277-01-01,5874897-12-31,infinity,NULL}'::date[]) WITH ORDINALITY a(v, n),
       unnest('{-infinity,4714-11-24 00:00:00 BC,1999-12-31 23:59:59.999999,2000-01-01 00:00:00,2000-01-01 00:00:00.000001,294276-12-31 23:59:59.999999,infinity,NULL}'::timestamp[]) WITH ORDINALITY b(v, n),
       unnest('{-infinity,4714-11-24 00:00:00+00 BC,2000-01-01 00:00:00+00,2000-01-01 00:00:00-08,294276-12-31 23:59:59.999999+00,infinity,NULL}'::timestamptz[]) WITH ORDINALITY c(v, n)
 ORDER BY a.n, b.n, c.n;

--
-- text, varchar, char(n), and a column in the C collation
--
CREATE TABLE gx_texts (id int, t text, vc varchar(12), c char(6), tc text COLLATE "C");
INSERT INTO gx_texts
SELECT g,
       CASE WHEN g % 31 = 0 THEN NULL
            WHEN g % 37 = 0 THEN ''
            ELSE 'str' || (g * 7) % 1000 || CASE WHEN g % 3 = 0 THEN ' ' ELSE '' END END,
       CASE WHEN g % 29 = 0 THEN NULL ELSE substr(md5(g::text), 1, g % 13) END,
       CASE WHEN g % 23 = 0 THEN NULL
            ELSE (ARRAY['', 'a', 'ab', 'ab ', 'abc', ' ab', 'b', 'abcdef', 'A'])[g % 9 + 1] END,
       CASE WHEN g % 19 = 0 THEN NULL
            ELSE (ARRAY['k', 'K', '_k', 'k%', 'k\'])[g % 5 + 1] || lpad(((g * 13) % 500)::text, 3, '0') END
  FROM generate_series(1, 5000) g;
-- LIKE metacharacters, spaces and backslashes
INSERT INTO gx_texts VALUES
  (5001, 'a%b', 'a%b', 'a%b', 'a%b'),
  (5002, 'a_b', 'a_b', 'a_b', 'a_b'),
  (5003, 'a\b', 'a\b', 'a\b', 'a\b'),
  (5004, 'a\%b', 'a\%b', 'a\%b', 'a\%b'),
  (5005, '   ', '   ', '   ', '   '),
  (5006, ' x ', ' x ', ' x ', ' x '),
  (5007, 'x', 'x', 'x', 'x'),
  (5008, 'X', 'X', 'X', 'X'),
  (5009, 'xx', 'xx', 'xx', 'xx'),
  (5010, '%', '%', '%', '%'),
  (5011, '_', '_', '_', '_'),
  (5012, '\', '\', '\', '\');

--
-- every supported type in one row, with NULLs in changing places and
-- varlenas both short (1-byte header) and long (4-byte header, aligned),
-- to check how tuples are walked
--
CREATE TABLE gx_wide (id int, b bool, t text, i2 int2, n numeric, f8 float8, c char(3),
                      d date, i8 int8, vc varchar(300), f4 float4, ts timestamp,
                      i4 int4, tz timestamptz, n2 numeric(10,2), last text);
INSERT INTO gx_wide
SELECT g,
       CASE WHEN g % 2 = 0 THEN NULL ELSE g % 3 = 0 END,
       CASE WHEN g % 3 = 0 THEN NULL WHEN g % 5 = 0 THEN repeat('t', 200 + g % 7) ELSE 't' || g END,
       CASE WHEN g % 5 = 0 THEN NULL ELSE g % 1000 END,
       CASE WHEN g % 7 = 0 THEN NULL ELSE g / 4.0 END,
       CASE WHEN g % 11 = 0 THEN NULL ELSE g * 0.5 END,
       CASE WHEN g % 13 = 0 THEN NULL ELSE chr(97 + g % 26) END,
       CASE WHEN g % 4 = 0 THEN NULL ELSE date '2020-01-01' + g % 400 END,
       CASE WHEN g % 6 = 0 THEN NULL ELSE g * 1000000007::int8 END,
       CASE WHEN g % 8 = 0 THEN NULL WHEN g % 9 = 0 THEN repeat('v', 130 + g % 100) ELSE 'v' || g END,
       CASE WHEN g % 10 = 0 THEN NULL ELSE g / 8.0 END,
       CASE WHEN g % 12 = 0 THEN NULL ELSE timestamp '2020-01-01' + g * interval '1 hour' END,
       CASE WHEN g % 14 = 0 THEN NULL ELSE g * 3 END,
       CASE WHEN g % 15 = 0 THEN NULL ELSE timestamptz '2020-01-01 00:00+00' + g * interval '90 minutes' END,
       CASE WHEN g % 16 = 0 THEN NULL ELSE g / 3.0 END,
       CASE WHEN g % 17 = 0 THEN NULL ELSE 'last' || g % 50 END
  FROM generate_series(1, 3000) g;

-- statistics, and the visibility map of some tables but not others, so
-- that both all-visible pages and per-tuple visibility are exercised
VACUUM ANALYZE gx_ints, gx_floats, gx_dates, gx_wide;
ANALYZE gx_intx, gx_floatx, gx_nums, gx_numx, gx_datex, gx_texts;
-- the big tables span many pages each
SELECT c.relname, c.relpages >= 16 AS many_pages
  FROM pg_class c
 WHERE c.relname IN ('gx_ints', 'gx_floats', 'gx_nums', 'gx_dates', 'gx_texts', 'gx_wide')
 ORDER BY 1;
-- row counts (the same with and without offload)
SELECT gx_diff($$SELECT count(*) FROM gx_ints WHERE id > 0$$);
SELECT (SELECT count(*) FROM gx_ints) AS ints, (SELECT count(*) FROM gx_intx) AS intx,
       (SELECT count(*) FROM gx_floats) AS floats, (SELECT count(*) FROM gx_floatx) AS floatx,
       (SELECT count(*) FROM gx_nums) AS nums, (SELECT count(*) FROM gx_numx) AS numx,
       (SELECT count(*) FROM gx_dates) AS dates, (SELECT count(*) FROM gx_datex) AS datex,
       (SELECT count(*) FROM gx_texts) AS texts, (SELECT count(*) FROM gx_wide) AS wide;
