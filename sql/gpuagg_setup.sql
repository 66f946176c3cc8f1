--
-- GpuAgg correctness suite: helpers and test tables.
--
-- GpuAgg is GROUP BY aggregation fused with the scan: the device (the GPU,
-- or the CPU engine on a machine without one) returns finished groups,
-- and when it cannot finish exactly the node runs PostgreSQL's own plan,
-- kept as its child, instead.  The other gpuagg_* tests depend on the
-- objects made here, so this test runs first.  Everything is
-- deterministic (generate_series, no random()), and no output depends on
-- the engine (GPU or CPU engine), on the locale or on the encoding.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;

-- gx_fnorm(x, digits): a float as text for comparing results of two
-- summation orders: rounded to 'digits' significant digits, in
-- scientific notation (1.234567890e+03); -0 is 0 (it groups and compares
-- equal to 0, and which of the two a group or min() shows depends on the
-- order rows arrive in), NaN and the infinities as themselves.
CREATE FUNCTION gx_fnorm(x float8, digits int) RETURNS text
LANGUAGE sql IMMUTABLE STRICT
AS $fn$
  SELECT CASE
    WHEN x = 0 THEN '0'
    WHEN x = 'NaN'::float8 OR x = 'Infinity'::float8 OR x = '-Infinity'::float8 THEN x::text
    ELSE btrim(to_char(x, '9.' || repeat('9', digits - 1) || 'EEEE'))
  END
$fn$;

-- gx_agg_diff(query [, show_source]): like gx_diff (gpuscan_setup), for
-- aggregation.  The query runs offloaded (gpuext.force_offload = on; the
-- plan must contain a GpuAgg, else 'not offloaded'), then with
-- gpuext.enabled = off (stock PostgreSQL), and the two results are
-- compared as multisets of rows (EXCEPT ALL both ways), each row as its
-- text image, except that every float4/float8 column goes through
-- gx_fnorm: the device sums floats in another order than PostgreSQL, so
-- float sums and averages are compared to 10 significant digits (and,
-- should a value sit right on a rounding boundary, again to 9: a real
-- difference shows at both).  Data for float sums is chosen so that sums
-- do not cancel out (relative error stays near 1e-15).
--
-- The query's output columns must have distinct names (alias them), as
-- in a view: the float columns are found by creating a temporary view.
--
-- Returns
--   'ok N rows, from device'            same rows, and an EXPLAIN ANALYZE of
--                                       the query shows the device's groups
--   'ok N rows, from PostgreSQL plan: <reason>'
--                                       same rows, GpuAgg ran its child
--   'ok N rows'                         same rows (show_source = false)
--   'MISMATCH ...'                      different rows (a bug)
--   'error SQLSTATE both (message)'     both raised the same error
--   'ERROR MISMATCH ...'                only one raised, or different errors
-- The source comes from a serial EXPLAIN ANALYZE (parallel workers off):
-- a parallel GpuAgg shows "another participant" in the leader.  Session
-- settings apply to the comparison runs; the function's SET clause
-- restores gpuext.* afterwards.
CREATE FUNCTION gx_agg_diff(q text, show_source bool DEFAULT true) RETURNS text
LANGUAGE plpgsql
SET gpuext.force_offload = on
SET gpuext.enabled = on
SET gpuext.enable_gpuagg = on
SET gpuext.regression_test_mode = on
AS $fn$
DECLARE
  line text;
  offloaded bool := false;
  cols text;
  agg text;
  digits int;
  r_on text[];
  r_off text[];
  st_on text;
  st_off text;
  msg_on text;
  msg_off text;
  only_on text[];
  only_off text[];
  first_diff text;
  src text;
  workers text;
BEGIN
  BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
      IF line LIKE '%GpuAgg%' THEN
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

  -- the result's columns, floats normalised (%1$s: the digits)
  EXECUTE 'CREATE TEMP VIEW gx_agg_v AS ' || q;
  SELECT string_agg(CASE WHEN a.atttypid IN ('float4'::regtype, 'float8'::regtype)
                         THEN format('gx_fnorm(%I, %%1$s) AS %I', a.attname, a.attname)
                         ELSE quote_ident(a.attname) END, ', ' ORDER BY a.attnum)
    INTO cols
    FROM pg_attribute a
   WHERE a.attrelid = 'pg_temp.gx_agg_v'::regclass AND a.attnum > 0;
  DROP VIEW pg_temp.gx_agg_v;

  FOREACH digits IN ARRAY ARRAY[10, 9] LOOP
    agg := 'SELECT coalesce(array_agg(gx_r::text), ''{}'') FROM (SELECT '
           || format(cols, digits) || ' FROM (' || q || ') AS gx_q) AS gx_r';
    r_on := NULL; r_off := NULL; st_on := NULL; st_off := NULL; msg_on := NULL; msg_off := NULL;

    PERFORM set_config('gpuext.enabled', 'on', true);
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
    PERFORM set_config('gpuext.enabled', 'on', true);

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
    EXIT WHEN cardinality(only_on) = 0 AND cardinality(only_off) = 0;
    IF first_diff IS NULL THEN
      first_diff := format('MISMATCH: offloaded %s rows, stock %s rows; only offloaded: %s; only stock: %s',
                           cardinality(r_on), cardinality(r_off),
                           array_to_string(only_on[1:5], ' '), array_to_string(only_off[1:5], ' '));
    END IF;
    IF digits = 9 THEN
      RETURN first_diff;
    END IF;
  END LOOP;

  IF NOT show_source THEN
    RETURN format('ok %s rows', cardinality(r_on));
  END IF;
  -- where the offloaded result came from: a serial EXPLAIN ANALYZE
  workers := current_setting('max_parallel_workers_per_gather');
  PERFORM set_config('max_parallel_workers_per_gather', '0', true);
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ 'Result From: ' THEN
      src := coalesce(src || '; ', '') || substring(line FROM 'Result From: (.*)$');
    ELSIF line ~ 'Fallback Reason: ' THEN
      src := src || ': ' || substring(line FROM 'Fallback Reason: (.*)$');
    END IF;
  END LOOP;
  PERFORM set_config('max_parallel_workers_per_gather', workers, true);
  RETURN format('ok %s rows, from %s', cardinality(r_on), coalesce(src, 'nowhere (GpuAgg not run)'));
END;
$fn$;

-- gx_agg_explain(query [, run [, with_output]]): the lines of the GpuAgg
-- nodes of the query's offloaded plan (not of their children, nor the
-- plan around them, which may differ between a GPU and the CPU engine),
-- serial, without engine names or timings.  With run, EXPLAIN ANALYZE:
-- the query runs and the lines say where its result came from; with
-- with_output, EXPLAIN VERBOSE: the node's output and qualified names.
CREATE FUNCTION gx_agg_explain(q text, run bool DEFAULT false, with_output bool DEFAULT false) RETURNS SETOF text
LANGUAGE plpgsql
SET gpuext.force_offload = on
SET gpuext.enabled = on
SET gpuext.enable_gpuagg = on
SET gpuext.regression_test_mode = on
SET max_parallel_workers_per_gather = 0
AS $fn$
DECLARE
  line text;
  depth int := -1;
  ind int;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF'
      || CASE WHEN run THEN ', ANALYZE, TIMING OFF, SUMMARY OFF' ELSE '' END
      || CASE WHEN with_output THEN ', VERBOSE' ELSE '' END || ') ' || q LOOP
    ind := length(line) - length(ltrim(line));
    IF line LIKE '%Custom Scan (GpuAgg)%' THEN
      depth := ind;
      RETURN NEXT regexp_replace(btrim(line), '^->  ', '');
    ELSIF depth >= 0 AND ind > depth AND line !~ '^\s*->' THEN
      RETURN NEXT btrim(line);
    ELSE
      depth := -1;
    END IF;
  END LOOP;
END;
$fn$;

--
-- the main table: 20000 rows over 10 pages and more, every supported type,
-- NULLs in every column at different rates, small and large group counts
--
CREATE TABLE gx_agg (
  id int, g int, k int, s int, b bool,
  i2 int2, i4 int4, i8 int8, f4 float4, f8 float8,
  n numeric, n2 numeric(12,2), d date, ts timestamp, tz timestamptz,
  t text, vc varchar(16), c char(4));
INSERT INTO gx_agg
SELECT x,
       x % 10,                                                  -- g: 10 groups
       CASE WHEN x % 97 = 0 THEN NULL ELSE x % 37 END,          -- k: 37 groups and NULL
       CASE WHEN x % 10 < 8 THEN 0 ELSE x % 1000 END,           -- s: skewed
       CASE WHEN x % 11 = 0 THEN NULL ELSE x % 3 = 0 END,
       CASE WHEN x % 13 = 0 THEN NULL ELSE (x * 37) % 2001 - 1000 END,
       CASE WHEN x % 17 = 0 THEN NULL ELSE (x * 7919) % 200001 - 100000 END,
       CASE WHEN x % 19 = 0 THEN NULL ELSE (x::int8 * 2654435761) % 20000000001 - 10000000000 END,
       -- floats: positive, so that sums do not cancel out; f4 dyadic (exact sums)
       CASE WHEN x % 23 = 0 THEN NULL ELSE ((x * 131) % 4001) / 16.0 + 1 END,
       CASE WHEN x % 29 = 0 THEN NULL ELSE ((x * 7907) % 100003) / 1000.0 + 0.5 END,
       -- numerics of display scales 0 to 3
       CASE WHEN x % 31 = 0 THEN NULL
            ELSE ((x * 7) % 1000 - 500) * (ARRAY[1, 0.5, 0.25, 0.125])[x % 4 + 1] END,
       CASE WHEN x % 37 = 0 THEN NULL ELSE ((x * 7919) % 2000001 - 1000000) / 100.0 END,
       CASE WHEN x % 41 = 0 THEN NULL ELSE date '2000-01-01' + ((x * 37) % 20001 - 10000) END,
       CASE WHEN x % 43 = 0 THEN NULL
            ELSE timestamp '2000-01-01' + ((x * 7919) % 10000019 - 5000000) * interval '1 minute' END,
       CASE WHEN x % 47 = 0 THEN NULL
            ELSE timestamptz '2000-01-01 00:00:00+00'
                 + ((x::int8 * 2654435761) % 1000000007 - 500000000) * interval '1 second' END,
       CASE WHEN x % 53 = 0 THEN NULL WHEN x % 59 = 0 THEN '' ELSE 'key' || (x * 7) % 300 END,
       CASE WHEN x % 61 = 0 THEN NULL ELSE 'v' || (x % 50) END,
       CASE WHEN x % 67 = 0 THEN NULL ELSE (ARRAY['a', 'ab ', 'abc', '  x', ''])[x % 5 + 1] END
  FROM generate_series(1, 20000) x;

-- the same columns, no rows
CREATE TABLE gx_agg_empty (LIKE gx_agg);

-- one row, and a table of rows that all fall in one group
CREATE TABLE gx_agg_one (LIKE gx_agg);
INSERT INTO gx_agg_one SELECT * FROM gx_agg WHERE id = 1;

--
-- special values: integer extremes (sums past 2^63), floats with NaN,
-- infinities and -0, numerics of every kind the device cannot hold
--
CREATE TABLE gx_aggx (id int, g int, i2 int2, i4 int4, i8 int8);
INSERT INTO gx_aggx
SELECT x, x % 4,
       (ARRAY[32767, -32768, 32767, 1])[x % 4 + 1],
       (ARRAY[2147483647, -2147483648, 2147483647, 2147483647])[x % 4 + 1],
       (ARRAY[9223372036854775807, 9223372036854775806, -9223372036854775808, 4611686018427387904])[x % 4 + 1]
  FROM generate_series(1, 4000) x;

CREATE TABLE gx_aggf (id int, g int, f4 float4, f8 float8);
INSERT INTO gx_aggf
SELECT x, x % 7,
       (ARRAY['0', '-0', '1.5', 'NaN', 'Infinity', '-Infinity', '-2.5', '3.4028235e38', '1e-45', NULL]::float4[])[x % 10 + 1],
       (ARRAY['0', '-0', '1.5', 'NaN', 'Infinity', '-Infinity', '-2.5', '1.7976931348623157e308', '5e-324', NULL]::float8[])[x % 10 + 1]
  FROM generate_series(1, 700) x;

CREATE TABLE gx_aggn (id int, g int, n numeric, n38 numeric(38,0), n10 numeric(20,10));
INSERT INTO gx_aggn
SELECT x, x % 5,
       (ARRAY[1.5, 2.25, 3, -0.125, 1.0, 1.00, 100, 0])[x % 8 + 1],
       ((x * 7919) % 100000) * 1000000000000000000000000000000::numeric,
       ((x * 104729) % 100000007) / 10000000.0
  FROM generate_series(1, 3000) x;

-- 50000 distinct keys: more groups than any block-private table
CREATE TABLE gx_agg_many (id int, v int, t text);
INSERT INTO gx_agg_many SELECT x, x % 100, 'k' || x FROM generate_series(1, 50000) x;

-- statistics, and the visibility map of some tables but not others
VACUUM ANALYZE gx_agg, gx_aggx, gx_agg_many;
ANALYZE gx_agg_empty, gx_agg_one, gx_aggf, gx_aggn;

SELECT c.relname, c.relpages >= 10 AS many_pages
  FROM pg_class c
 WHERE c.relname IN ('gx_agg', 'gx_aggx', 'gx_agg_many')
 ORDER BY 1;
SELECT (SELECT count(*) FROM gx_agg) AS agg, (SELECT count(*) FROM gx_agg_empty) AS empty,
       (SELECT count(*) FROM gx_agg_one) AS one, (SELECT count(*) FROM gx_aggx) AS aggx,
       (SELECT count(*) FROM gx_aggf) AS aggf, (SELECT count(*) FROM gx_aggn) AS aggn,
       (SELECT count(*) FROM gx_agg_many) AS many;

-- the helpers at work
SELECT gx_fnorm(1234.56789012345, 10) AS a, gx_fnorm(-0.0, 10) AS b, gx_fnorm('NaN', 10) AS c,
       gx_fnorm('-Infinity', 10) AS d, gx_fnorm(1e-300 / 3, 10) AS e, gx_fnorm(-1e300 / 3, 9) AS f,
       gx_fnorm(1.7976931348623157e308, 10) AS g, gx_fnorm(5e-324, 10) AS h;
SELECT gx_agg_diff($$SELECT g, count(*) AS n FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT id FROM gx_agg WHERE id < 10$$);
SELECT * FROM gx_agg_explain($$SELECT g, count(*), sum(i4) FROM gx_agg WHERE i2 > 0 GROUP BY g ORDER BY g$$);
SELECT * FROM gx_agg_explain($$SELECT g, count(*), sum(i4) FROM gx_agg WHERE i2 > 0 GROUP BY g ORDER BY g$$, true);
