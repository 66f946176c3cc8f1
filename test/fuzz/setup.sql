--
-- Tables of the differential query generator (test/fuzz/fuzz.py --setup
-- runs this file; psql -f works too).  Deterministic: generate_series and
-- fixed formulas, no random().  The same data for every seed, so that a
-- reproducer needs only this file and its query.
--
--   fz_a      3000 rows + 300 exact duplicate rows, all pages all-visible
--   fz_b      1500 rows, then updates and deletes after VACUUM (dead tuples,
--             HOT chains, pages that are not all-visible)
--   fz_empty  no rows
--
-- Every column type that gpuext supports, NULLs in every column at its own
-- rate, skewed values (one value for a share of the rows), duplicates and
-- the extreme values of each type: INT_MIN/MAX of each width, 0, -0.0,
-- NaN, +-Infinity, denormals, float and numeric values beyond 10^38 and
-- numeric NaN/Infinity, infinite and boundary dates and timestamps, empty
-- strings, multibyte strings, LIKE metacharacters, strings long enough to be
-- compressed or stored out of line (TOAST).
--
SET client_min_messages = warning;
DROP TABLE IF EXISTS fz_a, fz_b, fz_empty;

CREATE TABLE fz_a (
  id  int4,
  k   int4,                 -- join key: ~1000 values, one mildly skewed
  b   bool,
  i2  int2,
  i4  int4,
  i8  int8,
  f4  float4,
  f8  float8,
  n   numeric,              -- no typmod: any scale, > 10^38, NaN, +-Infinity
  n2  numeric(12,2),
  n8  numeric(30,8),
  d   date,
  ts  timestamp,
  tz  timestamptz,
  t   text,
  vc  varchar(12),
  c   char(6),
  lt  text                  -- mostly short; some compressed, some out of line
);
CREATE TABLE fz_b (LIKE fz_a);
CREATE TABLE fz_empty (LIKE fz_a);

-- the rows of fz_a (salt 0, multiplier 7919) and fz_b (salt 1, 104729)
CREATE FUNCTION pg_temp.fz_rows(nrows int, salt int, p int8)
RETURNS SETOF fz_a LANGUAGE sql AS $fn$
SELECT
  g,
  CASE WHEN g % 19 = 0 THEN NULL
       WHEN g % 50 = 0 THEN 1
       ELSE ((g * p) % 1000)::int4 END,
  CASE WHEN g % 11 = 0 THEN NULL ELSE (g * p) % 3 = 0 END,
  CASE WHEN g % 13 = 0 THEN NULL
       WHEN g % 101 = 0 THEN ('{-32768,32767,0,-1,1,-32767,32766}'::int2[])[(g / 101) % 7 + 1]
       WHEN g % 4 = 0 THEN 7
       ELSE ((g * p) % 2001 - 1000)::int2 END,
  CASE WHEN g % 17 = 0 THEN NULL
       WHEN g % 103 = 0 THEN ('{-2147483648,2147483647,0,-1,1,-2147483647,2147483646,65536}'::int4[])[(g / 103) % 8 + 1]
       WHEN g % 6 = 0 THEN 42
       ELSE ((g * p * 31) % 200001 - 100000)::int4 END,
  CASE WHEN g % 23 = 0 THEN NULL
       WHEN g % 107 = 0 THEN ('{-9223372036854775808,9223372036854775807,0,-1,1,4294967296,-4294967296}'::int8[])[(g / 107) % 7 + 1]
       WHEN g % 5 = 0 THEN 1000000007
       ELSE (g::int8 * p * 2654435761) % 20000000001 - 10000000000 END,
  CASE WHEN g % 29 = 0 THEN NULL
       WHEN g % 109 = 0 THEN ('{0,-0,NaN,Infinity,-Infinity,1e-45,3.4028235e38,-3.4028235e38,1.17549435e-38,0.1,16777217}'::float4[])[(g / 109) % 11 + 1]
       WHEN g % 10 = 0 THEN 0.5
       WHEN g % 7 = 3 THEN (g / 10.0)::float4
       ELSE ((g * p) % 4001 - 2000) / 16.0 END,
  CASE WHEN g % 31 = 0 THEN NULL
       WHEN g % 113 = 0 THEN ('{0,-0,NaN,Infinity,-Infinity,5e-324,1.7976931348623157e308,-1.7976931348623157e308,1e300,-1e300,2.2250738585072014e-308,0.1,9007199254740993}'::float8[])[(g / 113) % 13 + 1]
       WHEN g % 9 = 0 THEN -0.0::float8
       WHEN g % 7 = 5 THEN g / 3.0
       ELSE ((g * p * 7) % 100003 - 50000) / 1024.0 END,
  CASE WHEN g % 37 = 0 THEN NULL
       WHEN g % 127 = 0 THEN ('{0,-0.0,NaN,Infinity,-Infinity,1e40,-1e40,99999999999999999999999999999999999999,-100000000000000000000000000000000000000,1e-40,123456789012345678901234567890.123456789,0.000}'::numeric[])[(g / 127) % 12 + 1]
       WHEN g % 8 = 0 THEN 1.5
       WHEN g % 8 = 1 THEN 1.50
       WHEN g % 8 = 2 THEN ((g * p) % 20001 - 10000)::numeric / 8
       ELSE ((g * p) % 200001 - 100000) / 100.0 END,
  CASE WHEN g % 41 = 0 THEN NULL
       WHEN g % 131 = 0 THEN ('{9999999999.99,-9999999999.99,0,0.01,-0.01}'::numeric[])[(g / 131) % 5 + 1]
       ELSE ((g * p) % 2000001 - 1000000) / 100.0 END,
  CASE WHEN g % 43 = 0 THEN NULL
       WHEN g % 3 = 0 THEN 0.5
       ELSE ((g::numeric * p * 104729) % 100000007) / 100000000 * (g - nrows / 2) END,
  CASE WHEN g % 47 = 0 THEN NULL
       WHEN g % 137 = 0 THEN ('{infinity,-infinity,4714-11-24 BC,5874897-12-31,1970-01-01,2000-01-01,0001-01-01 BC}'::date[])[(g / 137) % 7 + 1]
       WHEN g % 8 = 0 THEN date '2020-02-29'
       ELSE date '2000-01-01' + ((g * p) % 20001 - 10000)::int4 END,
  CASE WHEN g % 53 = 0 THEN NULL
       WHEN g % 139 = 0 THEN ('{infinity,-infinity,4714-11-24 00:00:00 BC,294276-12-31 23:59:59.999999,2000-01-01 00:00:00,1999-12-31 23:59:59.999999}'::timestamp[])[(g / 139) % 6 + 1]
       ELSE timestamp '2000-01-01' + ((g * p) % 10000019 - 5000000) * interval '1 minute'
            + (g % 1000) * interval '1 microsecond' END,
  CASE WHEN g % 59 = 0 THEN NULL
       WHEN g % 149 = 0 THEN ('{infinity,-infinity,4714-11-24 00:00:00+00 BC,294276-12-31 23:59:59.999999+00,2000-01-01 00:00:00+00,2000-01-01 00:00:00-08}'::timestamptz[])[(g / 149) % 6 + 1]
       WHEN g % 6 = 1 THEN timestamptz '2020-03-08 10:00:00+00'
       ELSE timestamptz '2000-01-01 00:00:00+00' + ((g::int8 * p * 2654435761) % 1000000007 - 500000000) * interval '1 second' END,
  CASE WHEN g % 61 = 0 THEN NULL
       WHEN g % 67 = 0 THEN ''
       WHEN g % 71 = 0 THEN ('{ñandú,日本語テキスト,😀 emoji,Ωmega,straße,ÄÖÜ,ß}'::text[])[(g / 71) % 7 + 1]
       WHEN g % 73 = 0 THEN ('{a%b,a_b,a\\b,%,_,\\,a\\%b,"  ",x}'::text[])[(g / 73) % 9 + 1]
       WHEN g % 5 = 0 THEN 'same'
       ELSE 'str' || (g * p) % 1000 || CASE WHEN g % 3 = 0 THEN ' ' ELSE '' END END,
  CASE WHEN g % 79 = 0 THEN NULL
       WHEN g % 83 = 0 THEN ('{äöü€,日本,ñ,"",é e}'::text[])[(g / 83) % 5 + 1]
       ELSE substr(md5((g + salt * 100000)::text), 1, g % 13) END,
  CASE WHEN g % 89 = 0 THEN NULL
       ELSE ('{"",a,ab,"ab ",abc," ab",b,abcdef,A,é,日本}'::text[])[g % 11 + 1] END,
  CASE WHEN g % 2 = 0 THEN NULL
       WHEN g % 97 = 0 THEN repeat('long' || g % 10, 1000 + g % 500)
       WHEN g % 91 = 0 THEN (SELECT string_agg(md5((g * 1000 + i + salt)::text), '') FROM generate_series(1, 80) i)
       WHEN g % 87 = 0 THEN repeat('é', 1500)
       ELSE 'lt' || g % 100 END
FROM generate_series(1, nrows) g
$fn$;

INSERT INTO fz_a SELECT * FROM pg_temp.fz_rows(3000, 0, 7919);
-- exact duplicates of 10% of the rows
INSERT INTO fz_a SELECT * FROM fz_a WHERE id % 10 = 3;
INSERT INTO fz_b SELECT * FROM pg_temp.fz_rows(1500, 1, 104729);

VACUUM ANALYZE fz_a, fz_b, fz_empty;
-- fz_b: dead tuples, HOT and non-HOT updates, pages not all-visible
UPDATE fz_b SET i4 = i4 WHERE id % 40 = 0;
UPDATE fz_b SET t = t || '', lt = lt WHERE id % 97 = 1;
DELETE FROM fz_b WHERE id % 53 = 7;
ANALYZE fz_b;
RESET client_min_messages;
