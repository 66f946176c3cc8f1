--
-- GpuScan: date, timestamp and timestamptz quals, with infinities, the
-- ends of the ranges, and date vs timestamp comparisons
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
-- GpuScan alone (GpuAgg, aggregation fused with the scan, has its own tests)
SET gpuext.enable_gpuagg = off;
SET gpuext.max_batch_pages = 4;

SELECT * FROM gx_plan($$SELECT id FROM gx_dates WHERE d < ts$$);

-- date
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d > '2010-06-15'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d = '2000-01-01'::date - 9815$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d <> '2000-01-01'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d <= '1990-01-01' OR d >= '2020-01-01'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d BETWEEN '1999-01-01' AND '2001-12-31'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d + 30 > '2010-01-01'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d - 365 < '1980-01-01'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d - '2000-01-01'::date > 1000$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d - d = 0$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE (d - '2000-01-01'::date) % 7 = 0$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d + id % 100 < '2000-01-01'::date - 100$$);
-- timestamp and timestamptz
SELECT gx_diff($$SELECT id FROM gx_dates WHERE ts > '2003-04-05 06:07:08'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE ts <= '1995-01-01'::timestamp$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE ts <> '2000-01-01'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE tz < '1999-12-31 16:00:00-08'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE tz >= '2005-01-01 00:00:00+09'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE tz BETWEEN '1995-01-01' AND '2001-01-01'$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE tz = tz$$);
-- date against timestamp, both ways
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d < ts$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d >= ts$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE ts > d$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE ts <= d + 1000$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d = '2005-05-05 00:00:00'::timestamp$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE '2005-05-05 12:00:00'::timestamp > d$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d::timestamp < ts$$);
-- mixing timestamptz with date or timestamp depends on the time zone:
-- those quals stay on the host
SELECT * FROM gx_where($$SELECT id FROM gx_dates WHERE d < tz AND ts < tz AND ts::date > d AND id > 0$$);
SELECT gx_diff($$SELECT id FROM gx_dates WHERE d < tz AND ts < tz AND ts::date > d AND id > 0$$);
-- projections of stored values
SELECT gx_diff($$SELECT id, d, ts, tz FROM gx_dates WHERE d > '2000-01-01'$$);

-- infinities and the ends of the ranges
SELECT gx_diff($$SELECT id FROM gx_datex WHERE d = 'infinity'$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE d > '294276-12-31'$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE d < '4714-11-25 BC'$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE ts = '-infinity'$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE ts > '294276-12-31 23:59:59'$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE tz < '4714-11-25 00:00:00+00 BC'$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE tz <> 'infinity'$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE d < ts$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE d = ts$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE d > ts$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE ts <= d$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE ts <> d$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE d >= 'infinity'::timestamp$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE d < '294276-12-31 23:59:59.999999'::timestamp$$);
-- arithmetic on infinite dates keeps them infinite
SELECT gx_diff($$SELECT id FROM gx_datex WHERE CASE WHEN d <> '5874897-12-31' THEN d + 1 = 'infinity' END$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE CASE WHEN d <> '4714-11-24 BC' AND d <> '0001-01-01 BC' THEN d - 1000000 = '-infinity' END$$);
-- guarded arithmetic at the ends of the ranges
SELECT gx_diff($$SELECT id FROM gx_datex WHERE CASE WHEN d < '5874897-12-31' THEN d + 1 > '294277-01-01' END$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE CASE WHEN d > '4714-11-24 BC' THEN d - 1 < '0001-01-01' END$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE CASE WHEN d > '-infinity' AND d < 'infinity' THEN d - '2000-01-01'::date > 0 END$$);
SELECT gx_diff($$SELECT id FROM gx_datex WHERE CASE WHEN d < '294277-01-01' THEN d::timestamp > ts END$$);
SELECT gx_diff($$SELECT id, d, ts, tz FROM gx_datex WHERE d IS NOT NULL$$);

-- values humans can read
SET gpuext.force_offload = on;
SELECT DISTINCT d FROM gx_datex WHERE d > '294276-01-01' OR d < '0001-01-01' ORDER BY 1;
SELECT DISTINCT ts FROM gx_datex WHERE ts > '294276-12-31' OR ts < '2000-01-01' ORDER BY 1;
SELECT DISTINCT tz FROM gx_datex WHERE tz >= '2000-01-01 00:00:00+00' ORDER BY 1;
SELECT DISTINCT d, ts FROM gx_datex
 WHERE d > ts AND ts > '2000-01-01' ORDER BY 1, 2;
SELECT DISTINCT d, ts FROM gx_datex
 WHERE d >= '294276-12-31' AND d <= ts ORDER BY 1, 2;
SELECT DISTINCT d, d + 1 AS next, d - 1 AS prev FROM gx_datex
 WHERE CASE WHEN d BETWEEN '1999-12-30' AND '2000-01-03'
            THEN d + 1 > '2000-01-01' AND d - 1 < '2000-01-02' END
 ORDER BY 1;
RESET gpuext.force_offload;
