--
-- GpuAgg: group keys.  Keys of every supported type, NULL keys (one group
-- for all NULLs), several keys of mixed types, expressions as keys, many
-- groups (more than a GPU block's private table: the global table path),
-- skewed keys, and keys that are equal but look different (numeric 1.0
-- and 1.00, float -0 and 0, bpchar with and without trailing blanks).
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
SET max_parallel_workers_per_gather = 0;

-- one key of each type
SELECT gx_agg_diff($$SELECT b, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY b$$);
SELECT gx_agg_diff($$SELECT i2, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY i2$$);
SELECT gx_agg_diff($$SELECT i4, count(*) AS c, sum(i2) AS s FROM gx_agg GROUP BY i4$$);
SELECT gx_agg_diff($$SELECT i8, count(*) AS c, sum(i2) AS s FROM gx_agg GROUP BY i8$$);
SELECT gx_agg_diff($$SELECT f4, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY f4$$);
SELECT gx_agg_diff($$SELECT f8, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY f8$$);
SELECT gx_agg_diff($$SELECT n2, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY n2$$);
SELECT gx_agg_diff($$SELECT d, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY d$$);
SELECT gx_agg_diff($$SELECT ts, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY ts$$);
SELECT gx_agg_diff($$SELECT tz, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY tz$$);
SELECT gx_agg_diff($$SELECT t, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY t$$);
SELECT gx_agg_diff($$SELECT vc, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY vc$$);
SELECT gx_agg_diff($$SELECT c, count(*) AS n, sum(i4) AS s FROM gx_agg GROUP BY c$$);
SELECT * FROM gx_agg_explain($$SELECT c, count(*) FROM gx_agg GROUP BY c$$, true);
SET gpuext.force_offload = on;
SELECT b, count(*), sum(i4) FROM gx_agg GROUP BY b ORDER BY b;
SELECT c, octet_length(c) AS bytes, count(*) FROM gx_agg GROUP BY c ORDER BY c;
SELECT vc, count(*) FROM gx_agg WHERE vc < 'v12' GROUP BY vc ORDER BY vc;
SELECT t, count(*) FROM gx_agg WHERE t < 'key102' OR t IS NULL GROUP BY t ORDER BY t;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT b, count(*), sum(i4) FROM gx_agg GROUP BY b ORDER BY b;
SELECT c, octet_length(c) AS bytes, count(*) FROM gx_agg GROUP BY c ORDER BY c;
SELECT vc, count(*) FROM gx_agg WHERE vc < 'v12' GROUP BY vc ORDER BY vc;
SELECT t, count(*) FROM gx_agg WHERE t < 'key102' OR t IS NULL GROUP BY t ORDER BY t;
RESET gpuext.enabled;

-- NULL keys: all NULLs of a key are one group, also with other keys
SELECT gx_agg_diff($$SELECT k, count(*) AS c, sum(i8) AS s, avg(n) AS a FROM gx_agg GROUP BY k$$);
SELECT gx_agg_diff($$SELECT k, b, count(*) AS c FROM gx_agg GROUP BY k, b$$);
SELECT gx_agg_diff($$SELECT t IS NULL AS tn, c, count(*) AS n FROM gx_agg GROUP BY t IS NULL, c$$);
SET gpuext.force_offload = on;
SELECT k, count(*), sum(i4) FROM gx_agg WHERE k IS NULL OR k < 2 GROUP BY k ORDER BY k;
SELECT k, b, count(*) FROM gx_agg WHERE k IS NULL GROUP BY k, b ORDER BY b;
-- a NULL key is not a zero or an empty string
SELECT t, count(*) FROM gx_agg WHERE t = '' OR t IS NULL GROUP BY t ORDER BY t NULLS FIRST;
SELECT coalesce(i2, 0) = 0 AS zero_or_null, i2, count(*) FROM gx_agg WHERE i2 = 0 OR i2 IS NULL GROUP BY i2 ORDER BY i2;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT k, count(*), sum(i4) FROM gx_agg WHERE k IS NULL OR k < 2 GROUP BY k ORDER BY k;
SELECT k, b, count(*) FROM gx_agg WHERE k IS NULL GROUP BY k, b ORDER BY b;
SELECT t, count(*) FROM gx_agg WHERE t = '' OR t IS NULL GROUP BY t ORDER BY t NULLS FIRST;
SELECT coalesce(i2, 0) = 0 AS zero_or_null, i2, count(*) FROM gx_agg WHERE i2 = 0 OR i2 IS NULL GROUP BY i2 ORDER BY i2;
RESET gpuext.enabled;

-- several keys of mixed types
SELECT gx_agg_diff($$SELECT g, b, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY g, b$$);
SELECT gx_agg_diff($$SELECT b, t, count(*) AS c, max(d) AS m FROM gx_agg GROUP BY b, t$$);
SELECT gx_agg_diff($$SELECT c, vc, g, count(*) AS n, avg(i2) AS a FROM gx_agg GROUP BY c, vc, g$$);
SELECT gx_agg_diff($$SELECT d, i2, count(*) AS c FROM gx_agg GROUP BY d, i2$$);
SELECT gx_agg_diff($$SELECT g, k, b, c, count(*) AS n, sum(n) AS s FROM gx_agg GROUP BY g, k, b, c$$);
SELECT gx_agg_diff($$SELECT n2 > 0 AS pos, f4 > 100 AS big, k % 3 AS k3, ts > '2000-01-01' AS late, count(*) AS c FROM gx_agg GROUP BY 1, 2, 3, 4$$);
-- the most keys the device takes (8), and one more (the stock plan)
SELECT gx_agg_diff($$SELECT g, b, k, c, vc, d, i2, t, count(*) AS n FROM gx_agg GROUP BY g, b, k, c, vc, d, i2, t$$);
SELECT gx_agg_diff($$SELECT g, b, k, c, vc, d, i2, t, i8, count(*) AS n FROM gx_agg GROUP BY g, b, k, c, vc, d, i2, t, i8$$);

-- expressions as keys
SELECT * FROM gx_agg_explain($$SELECT i4 % 7, count(*) FROM gx_agg GROUP BY i4 % 7$$);
SELECT gx_agg_diff($$SELECT i4 % 7 AS m, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY i4 % 7$$);
SELECT gx_agg_diff($$SELECT i4 / 1000 AS q, count(*) AS c FROM gx_agg GROUP BY i4 / 1000$$);
SELECT gx_agg_diff($$SELECT (i8 / 1000000000) * 2 + 1 AS q, count(*) AS c, min(i8) AS lo FROM gx_agg GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT d - date '2000-01-01' AS days, count(*) AS c FROM gx_agg GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT (d - date '1970-01-01') / 365 AS years, count(*) AS c, min(d) AS first FROM gx_agg GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT CASE WHEN i2 < 0 THEN 'neg' WHEN i2 > 0 THEN 'pos' END AS sign, count(*) AS c FROM gx_agg GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT coalesce(k, -1) AS k, count(*) AS c FROM gx_agg GROUP BY coalesce(k, -1)$$);
SELECT gx_agg_diff($$SELECT substr(t, 1, 4) AS p, count(*) AS c FROM gx_agg GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT i2::int8 * 3 AS a, (i2 % 3)::numeric * 0.5 AS b, count(*) AS c FROM gx_agg GROUP BY 1, 2$$);
SELECT gx_agg_diff($$SELECT f8 * 2 AS a, count(*) AS c FROM gx_agg GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT i4 > 0 AS pos, i4 % 2 = 0 AS even, count(*) AS c FROM gx_agg GROUP BY 1, 2$$);
SELECT gx_agg_diff($$SELECT abs(i4) % 100 AS a, mod(i8, 1000) AS b, count(*) AS c FROM gx_agg GROUP BY 1, 2$$);
SELECT gx_agg_diff($$SELECT n2::int4 % 10 AS r, count(*) AS c FROM gx_agg GROUP BY 1$$);
-- a key expression that raises an error raises the same error
SELECT gx_agg_diff($$SELECT i4 * 100000 AS big, count(*) AS c FROM gx_agg GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT 1000 / (g - 5) AS q, count(*) AS c FROM gx_agg GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT g, count(*) AS c FROM gx_agg GROUP BY g, 1000 / (g - 5)$$);
-- a key expression the device cannot run: no GpuAgg
SELECT gx_agg_diff($$SELECT lower(t) AS l, count(*) AS c FROM gx_agg GROUP BY 1$$);

-- many groups: all 20000 ids, 50000 ids and texts, with a scan qual
SELECT gx_agg_diff($$SELECT id, count(*) AS c, sum(i4) AS s FROM gx_agg GROUP BY id$$);
SELECT gx_agg_diff($$SELECT id, count(*) AS c, sum(v) AS s, min(v) AS m FROM gx_agg_many GROUP BY id$$);
SELECT gx_agg_diff($$SELECT t, count(*) AS c, max(id) AS m FROM gx_agg_many GROUP BY t$$);
SELECT gx_agg_diff($$SELECT v, t, count(*) AS c FROM gx_agg_many WHERE id % 3 = 0 GROUP BY v, t$$);
SELECT gx_agg_diff($$SELECT id % 20000 AS m, count(*) AS c FROM gx_agg_many GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT i8, b, count(*) AS c FROM gx_agg GROUP BY i8, b$$);
SELECT * FROM gx_agg_explain($$SELECT id, count(*) FROM gx_agg_many GROUP BY id$$, true);
SET gpuext.force_offload = on;
SELECT count(*), sum(c), min(c), max(c) FROM (SELECT id, count(*) AS c FROM gx_agg_many GROUP BY id) s;
SELECT count(*), sum(c) FROM (SELECT t, count(*) AS c FROM gx_agg_many GROUP BY t) s;
SELECT * FROM (SELECT id, count(*), sum(v) FROM gx_agg_many GROUP BY id) s WHERE id % 10000 = 7 ORDER BY id;
RESET gpuext.force_offload;
-- a few groups of many rows each, and a mix of both
SELECT gx_agg_diff($$SELECT v, count(*) AS c, sum(id) AS s FROM gx_agg_many GROUP BY v$$);
SELECT gx_agg_diff($$SELECT id % 2 AS p, count(*) AS c, sum(id) AS s FROM gx_agg_many GROUP BY 1$$);

-- skewed keys: 80% of the rows in one group, the rest in 200 small ones
SELECT gx_agg_diff($$SELECT s, count(*) AS c, sum(i4) AS a, min(i8) AS m, avg(f8) AS f FROM gx_agg GROUP BY s$$);
SELECT gx_agg_diff($$SELECT s, b, count(*) AS c FROM gx_agg GROUP BY s, b$$);
SET gpuext.force_offload = on;
SELECT s, count(*), sum(i4), min(i8) FROM gx_agg GROUP BY s ORDER BY count(*) DESC, s LIMIT 3;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT s, count(*), sum(i4), min(i8) FROM gx_agg GROUP BY s ORDER BY count(*) DESC, s LIMIT 3;
RESET gpuext.enabled;

--
-- equal keys that look different
--
-- numeric: 1.0 and 1.00 are one group.  Which of the two the group shows
-- is not defined: PostgreSQL shows the one it saw first, the device the
-- one of the largest scale; compare by value (trim_scale).
SELECT gx_agg_diff($$SELECT trim_scale(n) AS n, count(*) AS c, sum(n) AS s FROM gx_aggn GROUP BY n$$);
SELECT gx_agg_diff($$SELECT trim_scale(n * 2) AS n, count(*) AS c FROM gx_aggn GROUP BY n * 2$$);
SELECT gx_agg_diff($$SELECT g, trim_scale(n) AS n, count(*) AS c FROM gx_aggn GROUP BY g, n$$);
SELECT gx_agg_diff($$SELECT n2, count(*) AS c FROM gx_agg GROUP BY n2$$);
SET gpuext.force_offload = on;
SELECT trim_scale(n) AS n, count(*) FROM gx_aggn WHERE n = 1 GROUP BY n;
SELECT count(*) AS groups FROM (SELECT n FROM gx_aggn GROUP BY n) s;
SELECT n10, count(*) FROM gx_aggn WHERE n10 < 0.003 GROUP BY n10 ORDER BY n10;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT trim_scale(n) AS n, count(*) FROM gx_aggn WHERE n = 1 GROUP BY n;
SELECT count(*) AS groups FROM (SELECT n FROM gx_aggn GROUP BY n) s;
SELECT n10, count(*) FROM gx_aggn WHERE n10 < 0.003 GROUP BY n10 ORDER BY n10;
RESET gpuext.enabled;

-- floats: -0 and 0 are one group, every NaN is one group (gx_agg_diff
-- shows -0 as 0: which of the two the group shows is not defined)
SELECT gx_agg_diff($$SELECT f8, count(*) AS c, sum(g) AS s FROM gx_aggf GROUP BY f8$$);
SELECT gx_agg_diff($$SELECT f4, count(*) AS c, sum(g) AS s FROM gx_aggf GROUP BY f4$$);
SELECT gx_agg_diff($$SELECT f4, f8, count(*) AS c FROM gx_aggf GROUP BY f4, f8$$);
SELECT gx_agg_diff($$SELECT f8 * 0 AS z, count(*) AS c FROM gx_aggf GROUP BY 1$$);
SET gpuext.force_offload = on;
SELECT f8 = 0 AS zero, f8 = 'NaN' AS nan, count(*) FROM gx_aggf
 WHERE f8 = 0 OR f8 = 'NaN' GROUP BY f8 ORDER BY 1, 2;
SELECT count(*) AS groups FROM (SELECT f4 FROM gx_aggf GROUP BY f4) s;
SELECT f8, count(*) FROM gx_aggf WHERE f8 <> 0 GROUP BY f8 ORDER BY f8;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT f8 = 0 AS zero, f8 = 'NaN' AS nan, count(*) FROM gx_aggf
 WHERE f8 = 0 OR f8 = 'NaN' GROUP BY f8 ORDER BY 1, 2;
SELECT count(*) AS groups FROM (SELECT f4 FROM gx_aggf GROUP BY f4) s;
SELECT f8, count(*) FROM gx_aggf WHERE f8 <> 0 GROUP BY f8 ORDER BY f8;
RESET gpuext.enabled;

-- text: trailing blanks count in text and varchar, not in char(n); the
-- char(n) key comes back blank-padded to its length
CREATE TABLE gx_agg_txt (id int, t text, vc varchar(40), c char(40), cb bpchar, tc text COLLATE "C");
INSERT INTO gx_agg_txt
SELECT x, v, v, v, v, v
  FROM generate_series(1, 1200) x,
       LATERAL (SELECT (ARRAY['a', 'a ', 'a  ', ' a', 'A', '', 'ab', 'ab ', 'b', NULL,
                              'a_b', 'a%b', 'a\b', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
                              'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy '])[x % 16 + 1] AS v) v;
ANALYZE gx_agg_txt;
SELECT max(octet_length(t)) AS longest FROM gx_agg_txt;
SELECT gx_agg_diff($$SELECT t, count(*) AS n, sum(id) AS s FROM gx_agg_txt GROUP BY t$$);
SELECT gx_agg_diff($$SELECT vc, count(*) AS n, sum(id) AS s FROM gx_agg_txt GROUP BY vc$$);
SELECT gx_agg_diff($$SELECT c, count(*) AS n, sum(id) AS s FROM gx_agg_txt GROUP BY c$$);
SELECT gx_agg_diff($$SELECT tc, count(*) AS n FROM gx_agg_txt GROUP BY tc$$);
SELECT gx_agg_diff($$SELECT t, c, count(*) AS n FROM gx_agg_txt GROUP BY t, c$$);
SELECT gx_agg_diff($$SELECT c::text AS ct, count(*) AS n FROM gx_agg_txt GROUP BY c$$);
SELECT gx_agg_diff($$SELECT substr(t, 1, 2) AS p, count(*) AS n FROM gx_agg_txt GROUP BY 1$$);
SELECT * FROM gx_agg_explain($$SELECT t, count(*) FROM gx_agg_txt GROUP BY t$$, true);
SET gpuext.force_offload = on;
SELECT '[' || t || ']' AS t, count(*) FROM gx_agg_txt GROUP BY t ORDER BY t COLLATE "C";
SELECT '[' || c || ']' AS c, octet_length(c) AS bytes, count(*) FROM gx_agg_txt GROUP BY c ORDER BY c COLLATE "C";
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT '[' || t || ']' AS t, count(*) FROM gx_agg_txt GROUP BY t ORDER BY t COLLATE "C";
SELECT '[' || c || ']' AS c, octet_length(c) AS bytes, count(*) FROM gx_agg_txt GROUP BY c ORDER BY c COLLATE "C";
RESET gpuext.enabled;
-- bpchar without a length (typmod -1): not offloaded (the device keeps
-- keys without trailing blanks and could not show them as stored)
SELECT gx_agg_diff($$SELECT rtrim(c::bpchar) AS key, count(*) AS n FROM gx_agg GROUP BY c::bpchar$$);
SELECT gx_agg_diff($$SELECT rtrim(cb) AS key, count(*) AS n FROM gx_agg_txt GROUP BY cb$$);
DROP TABLE gx_agg_txt;

-- dates and timestamps: infinities and the ends of the ranges as keys
CREATE TABLE gx_agg_dt (id int, d date, ts timestamp, tz timestamptz);
INSERT INTO gx_agg_dt
SELECT x,
       (ARRAY['-infinity', '4714-11-24 BC', '2000-01-01', '5874897-12-31', 'infinity', NULL]::date[])[x % 6 + 1],
       (ARRAY['-infinity', '4714-11-24 00:00:00 BC', '2000-01-01 00:00:00.000001', '294276-12-31 23:59:59.999999', 'infinity', NULL]::timestamp[])[x % 6 + 1],
       (ARRAY['-infinity', '4714-11-24 00:00:00+00 BC', '2000-01-01 00:00:00-08', '294276-12-31 23:59:59.999999+00', 'infinity', NULL]::timestamptz[])[x % 6 + 1]
  FROM generate_series(1, 600) x;
ANALYZE gx_agg_dt;
SELECT gx_agg_diff($$SELECT d, count(*) AS c, min(ts) AS a, max(tz) AS b FROM gx_agg_dt GROUP BY d$$);
SELECT gx_agg_diff($$SELECT ts, tz, count(*) AS c, min(d) AS a, max(d) AS b FROM gx_agg_dt GROUP BY ts, tz$$);
SELECT gx_agg_diff($$SELECT min(d) AS a, max(d) AS b, min(ts) AS c, max(ts) AS e, min(tz) AS f, max(tz) AS h FROM gx_agg_dt$$);
SET gpuext.force_offload = on;
SELECT d, count(*), min(ts), max(tz) FROM gx_agg_dt GROUP BY d ORDER BY d;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT d, count(*), min(ts), max(tz) FROM gx_agg_dt GROUP BY d ORDER BY d;
RESET gpuext.enabled;
DROP TABLE gx_agg_dt;
