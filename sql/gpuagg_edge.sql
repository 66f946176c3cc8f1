--
-- GpuAgg: values the device cannot aggregate exactly, where the node must
-- run PostgreSQL's plan instead (EXPLAIN ANALYZE: "Result From:
-- PostgreSQL plan") and give PostgreSQL's answer; floats with NaN and the
-- infinities; errors raised by aggregate inputs and keys.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
SET max_parallel_workers_per_gather = 0;

--
-- numerics beyond the device: NaN, the infinities, 10^38 and more,
-- display scales beyond what the accumulator keeps
--
CREATE TABLE gx_agg_nx (id int, g int, n numeric, k numeric);
INSERT INTO gx_agg_nx
SELECT x, x % 3, (x % 100) * 0.5, x % 4 FROM generate_series(1, 3000) x;
ANALYZE gx_agg_nx;
-- all finite and small: the device
SELECT gx_agg_diff($$SELECT g, sum(n) AS s, avg(n) AS a, count(n) AS c FROM gx_agg_nx GROUP BY g$$);
SELECT gx_agg_diff($$SELECT k, sum(n) AS s, count(*) AS c FROM gx_agg_nx GROUP BY k$$);
-- one NaN, in an aggregate input or in a key
UPDATE gx_agg_nx SET n = 'NaN' WHERE id = 1500;
SELECT gx_agg_diff($$SELECT g, sum(n) AS s, avg(n) AS a, count(n) AS c FROM gx_agg_nx GROUP BY g$$);
SELECT gx_agg_diff($$SELECT sum(n) AS s, avg(n) AS a FROM gx_agg_nx$$);
SELECT gx_agg_diff($$SELECT trim_scale(n) AS n, count(*) AS c FROM gx_agg_nx GROUP BY n$$);
SELECT * FROM gx_agg_explain($$SELECT g, sum(n) FROM gx_agg_nx GROUP BY g$$, true);
-- rows the scan qual drops are not aggregated, but still read
SELECT gx_agg_diff($$SELECT g, sum(n) AS s FROM gx_agg_nx WHERE id <> 1500 GROUP BY g$$);
-- Infinity and -Infinity
UPDATE gx_agg_nx SET n = 'Infinity' WHERE id = 1500;
UPDATE gx_agg_nx SET n = '-Infinity' WHERE id = 1501;
SELECT gx_agg_diff($$SELECT g, sum(n) AS s, avg(n) AS a FROM gx_agg_nx GROUP BY g$$);
SELECT gx_agg_diff($$SELECT sum(n) AS s, avg(n) AS a FROM gx_agg_nx WHERE id <> 1501$$);
SET gpuext.force_offload = on;
SELECT g, sum(n), avg(n), count(n) FROM gx_agg_nx GROUP BY g ORDER BY g;
SELECT sum(n), avg(n) FROM gx_agg_nx WHERE id <> 1501;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT g, sum(n), avg(n), count(n) FROM gx_agg_nx GROUP BY g ORDER BY g;
SELECT sum(n), avg(n) FROM gx_agg_nx WHERE id <> 1501;
RESET gpuext.enabled;
-- 10^38 and beyond, and large negative values
UPDATE gx_agg_nx SET n = 1e38 WHERE id = 1500;
UPDATE gx_agg_nx SET n = -123456789012345678901234567890123456789012 WHERE id = 1501;
SELECT gx_agg_diff($$SELECT g, sum(n) AS s, avg(n) AS a FROM gx_agg_nx GROUP BY g$$);
SELECT gx_agg_diff($$SELECT sum(n)::text AS s, avg(n)::text AS a FROM gx_agg_nx$$);
SELECT gx_agg_diff($$SELECT n, count(*) AS c FROM gx_agg_nx WHERE id >= 1500 AND id < 1510 GROUP BY n$$);
-- just under 10^38: on the device
UPDATE gx_agg_nx SET n = 99999999999999999999999999999999999999 WHERE id = 1500;
UPDATE gx_agg_nx SET n = -99999999999999999999999999999999999999 WHERE id = 1501;
SELECT gx_agg_diff($$SELECT n, count(*) AS c FROM gx_agg_nx WHERE id >= 1500 AND id < 1510 GROUP BY n$$);
SELECT gx_agg_diff($$SELECT k, count(*) AS c FROM gx_agg_nx WHERE n > 1e37 GROUP BY k$$);
-- display scales: the device sums unconstrained numerics at 16 decimals;
-- a value with more goes to PostgreSQL's plan
UPDATE gx_agg_nx SET n = 0.1234567890123456 WHERE id = 1500;
UPDATE gx_agg_nx SET n = -0.5 WHERE id = 1501;
SELECT gx_agg_diff($$SELECT g, sum(n)::text AS s, avg(n)::text AS a FROM gx_agg_nx GROUP BY g$$);
UPDATE gx_agg_nx SET n = 0.12345678901234567 WHERE id = 1500;
SELECT gx_agg_diff($$SELECT g, sum(n)::text AS s, avg(n)::text AS a FROM gx_agg_nx GROUP BY g$$);
UPDATE gx_agg_nx SET n = 1e-40 WHERE id = 1500;
SELECT gx_agg_diff($$SELECT g, sum(n)::text AS s, avg(n)::text AS a FROM gx_agg_nx GROUP BY g$$);
SELECT gx_agg_diff($$SELECT trim_scale(n) AS n, count(*) AS c FROM gx_agg_nx WHERE id >= 1500 AND id < 1510 GROUP BY n$$);
-- a typmod's scale is the accumulator's: numeric(30,20)
CREATE TABLE gx_agg_n20 (g int, n numeric(30,20));
INSERT INTO gx_agg_n20 SELECT x % 4, x / 7.0 FROM generate_series(1, 2000) x;
ANALYZE gx_agg_n20;
SELECT gx_agg_diff($$SELECT g, sum(n)::text AS s, avg(n)::text AS a FROM gx_agg_n20 GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(n * 2)::text AS s FROM gx_agg_n20 GROUP BY g$$);
DROP TABLE gx_agg_n20;
DROP TABLE gx_agg_nx;

--
-- text keys longer than 32 bytes: the device gives up, PostgreSQL's plan
--
CREATE TABLE gx_agg_long (id int, t text, c char(40), v int);
INSERT INTO gx_agg_long
SELECT x, CASE WHEN x % 500 = 0 THEN 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' || x % 7 ELSE 'k' || x % 30 END,
       'c' || x % 5, x FROM generate_series(1, 3000) x;
ANALYZE gx_agg_long;
SELECT gx_agg_diff($$SELECT t, count(*) AS c, sum(v) AS s FROM gx_agg_long GROUP BY t$$);
SELECT gx_agg_diff($$SELECT t, count(*) AS c FROM gx_agg_long WHERE id % 500 <> 0 GROUP BY t$$);
-- char(40): the trailing blanks do not count, 'c0' is 2 bytes
SELECT gx_agg_diff($$SELECT c, count(*) AS n FROM gx_agg_long GROUP BY c$$);
-- a long text that is not a key is no obstacle
SELECT gx_agg_diff($$SELECT id % 5 AS m, count(t) AS c FROM gx_agg_long GROUP BY 1$$);
-- TOASTed (compressed or out of line) values: PostgreSQL's plan
INSERT INTO gx_agg_long SELECT 3000 + x, repeat('toast', 1000 + x), 'c0', x FROM generate_series(1, 3) x;
SELECT gx_agg_diff($$SELECT id % 5 AS m, count(t) AS c, sum(v) AS s FROM gx_agg_long GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT length(t) AS l, count(*) AS c FROM gx_agg_long GROUP BY t$$);
DROP TABLE gx_agg_long;

--
-- floats: NaN is larger than every number (min/max), the infinities,
-- -0, the extremes; sums and averages with NaN and infinities
--
SELECT gx_agg_diff($$SELECT g, min(f4) AS a, max(f4) AS b, min(f8) AS c, max(f8) AS d FROM gx_aggf GROUP BY g$$);
SELECT gx_agg_diff($$SELECT min(f4) AS a, max(f4) AS b, min(f8) AS c, max(f8) AS d FROM gx_aggf$$);
SELECT gx_agg_diff($$SELECT min(f8) AS a, max(f8) AS b FROM gx_aggf WHERE f8 <> 'NaN'$$);
SELECT gx_agg_diff($$SELECT min(f8) AS a, max(f8) AS b, min(f4) AS c, max(f4) AS d FROM gx_aggf WHERE f8 = 'NaN' OR f8 = 0$$);
SELECT gx_agg_diff($$SELECT f8, min(f4) AS a, max(f4) AS b FROM gx_aggf GROUP BY f8$$);
SET gpuext.force_offload = on;
SELECT g, min(f8), max(f8), min(f4), max(f4) FROM gx_aggf GROUP BY g ORDER BY g;
SELECT min(f8), max(f8) FROM gx_aggf WHERE f8 > '-Infinity' AND f8 < 'Infinity';
-- 0 and -0 are equal: which one min and max return depends on the
-- order of the rows (shown here through + 0, which makes -0 0)
SELECT min(f8) + 0 AS min8, max(f8) + 0 AS max8, min(f4) + 0 AS min4, max(f4) + 0 AS max4,
       count(*) FROM gx_aggf WHERE id % 10 IN (0, 1);
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT g, min(f8), max(f8), min(f4), max(f4) FROM gx_aggf GROUP BY g ORDER BY g;
SELECT min(f8), max(f8) FROM gx_aggf WHERE f8 > '-Infinity' AND f8 < 'Infinity';
-- 0 and -0 are equal: which one min and max return depends on the
-- order of the rows (shown here through + 0, which makes -0 0)
SELECT min(f8) + 0 AS min8, max(f8) + 0 AS max8, min(f4) + 0 AS min4, max(f4) + 0 AS max4,
       count(*) FROM gx_aggf WHERE id % 10 IN (0, 1);
RESET gpuext.enabled;
-- sums and averages of NaN, infinities and small numbers (values that
-- cannot overflow: the largest floats are left out)
SELECT gx_agg_diff($$SELECT g, sum(f8) AS s, avg(f8) AS a, avg(f4) AS a4 FROM gx_aggf WHERE abs(f8) < 1e300 OR f8 IN ('NaN', 'Infinity', '-Infinity') GROUP BY g$$);
SELECT gx_agg_diff($$SELECT f8, sum(f8) AS s, avg(f8) AS a FROM gx_aggf WHERE abs(f8) < 1e300 OR f8 IN ('NaN', 'Infinity', '-Infinity') GROUP BY f8$$);
SELECT gx_agg_diff($$SELECT sum(f8) AS s, avg(f8) AS a FROM gx_aggf WHERE f8 IN ('Infinity', '-Infinity')$$);
SELECT gx_agg_diff($$SELECT sum(f8) AS s, avg(f8) AS a FROM gx_aggf WHERE f8 IN ('Infinity', 1.5)$$);
SELECT gx_agg_diff($$SELECT sum(f8) AS s, avg(f4) AS a FROM gx_aggf WHERE f8 IN ('-Infinity', 1.5)$$);
SELECT gx_agg_diff($$SELECT sum(f8) AS s, avg(f8) AS a FROM gx_aggf WHERE f8 = 'NaN' OR f8 = 1.5$$);
SELECT gx_agg_diff($$SELECT sum(f8) AS s, avg(f8) AS a FROM gx_aggf WHERE f8 = 5e-324$$);
SELECT gx_agg_diff($$SELECT avg(f4) AS a, max(f4) AS m FROM gx_aggf WHERE f4 > 1e38 AND f4 < 'Infinity'$$);
SELECT gx_agg_diff($$SELECT sum(f8) AS s, avg(f8) AS a FROM gx_aggf WHERE f8 = 0$$);
SET gpuext.force_offload = on;
SELECT g, sum(f8), avg(f8), avg(f4) FROM gx_aggf WHERE abs(f8) < 1e300 OR f8 IN ('NaN', 'Infinity', '-Infinity') GROUP BY g ORDER BY g;
SELECT f8, sum(f8), avg(f8) FROM gx_aggf WHERE f8 IN ('NaN', 'Infinity', '-Infinity', 1.5, -2.5, 5e-324) GROUP BY f8 ORDER BY f8;
-- the float4 extremes average in double precision
SELECT avg(f4), max(f4) FROM gx_aggf WHERE f4 > 1e38 AND f4 < 'Infinity';
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT g, sum(f8), avg(f8), avg(f4) FROM gx_aggf WHERE abs(f8) < 1e300 OR f8 IN ('NaN', 'Infinity', '-Infinity') GROUP BY g ORDER BY g;
SELECT f8, sum(f8), avg(f8) FROM gx_aggf WHERE f8 IN ('NaN', 'Infinity', '-Infinity', 1.5, -2.5, 5e-324) GROUP BY f8 ORDER BY f8;
SELECT avg(f4), max(f4) FROM gx_aggf WHERE f4 > 1e38 AND f4 < 'Infinity';
RESET gpuext.enabled;

--
-- errors: an aggregate input or key that fails for some row raises
-- PostgreSQL's error; a row that a qual or FILTER drops raises none
--
SELECT gx_agg_diff($$SELECT g, sum(100 / (g - 5)) AS s FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT sum(i4 * 100000) AS s FROM gx_agg$$);
SELECT gx_agg_diff($$SELECT g, sum(i2 * i2 * i2 * i2) AS s FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, max(f8 * 1e308) AS m FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, count(*) FILTER (WHERE 100 / (g - 5) > 0) AS c FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT i8 * 1000000000 AS k, count(*) AS c FROM gx_agg GROUP BY 1$$);
SELECT gx_agg_diff($$SELECT g, sum(100 / (g - 5)) AS s FROM gx_agg WHERE g <> 5 GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(CASE WHEN g <> 5 THEN 100 / (g - 5) END) AS s FROM gx_agg GROUP BY g$$);
SELECT gx_agg_diff($$SELECT g, sum(100 / (g - 5)) FILTER (WHERE g <> 5) AS s, count(*) AS c FROM gx_agg GROUP BY g$$, false);
SELECT gx_agg_diff($$SELECT g, sum(100 / (g - 5)) FILTER (WHERE g <> 5) AS s FROM gx_agg GROUP BY g HAVING g <> 5$$, false);
SELECT gx_agg_diff($$SELECT g, sum(i2) AS s FROM gx_agg WHERE g / (g - 5) >= 0 GROUP BY g$$);

--
-- columns added with a default after the rows were written (the rows do
-- not hold them), and dropped columns before the ones read
--
CREATE TABLE gx_agg_alt (id int, drop1 text, v int);
INSERT INTO gx_agg_alt SELECT x, 'd' || x, x % 10 FROM generate_series(1, 2000) x;
ALTER TABLE gx_agg_alt DROP COLUMN drop1;
ALTER TABLE gx_agg_alt ADD COLUMN m int DEFAULT 7;
ALTER TABLE gx_agg_alt ADD COLUMN mt text DEFAULT 'seven';
INSERT INTO gx_agg_alt SELECT x, x % 10, x % 3, 'new' FROM generate_series(2001, 2100) x;
ANALYZE gx_agg_alt;
SELECT gx_agg_diff($$SELECT v, count(*) AS c, sum(id) AS s FROM gx_agg_alt GROUP BY v$$);
SELECT gx_agg_diff($$SELECT m, count(*) AS c, sum(v) AS s FROM gx_agg_alt GROUP BY m$$, false);
SELECT gx_agg_diff($$SELECT mt, count(*) AS c, sum(m) AS s FROM gx_agg_alt GROUP BY mt$$, false);
SET gpuext.force_offload = on;
SELECT m, mt, count(*), sum(v) FROM gx_agg_alt GROUP BY m, mt ORDER BY m, mt;
RESET gpuext.force_offload;
SET gpuext.enabled = off;
SELECT m, mt, count(*), sum(v) FROM gx_agg_alt GROUP BY m, mt ORDER BY m, mt;
RESET gpuext.enabled;
DROP TABLE gx_agg_alt;

--
-- deleted and updated rows are not aggregated (visibility), in a table
-- never vacuumed
--
CREATE TABLE gx_agg_vis (id int, g int, v int);
INSERT INTO gx_agg_vis SELECT x, x % 5, x FROM generate_series(1, 5000) x;
DELETE FROM gx_agg_vis WHERE id % 7 = 0;
UPDATE gx_agg_vis SET v = -v WHERE id % 11 = 0;
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(v) AS s, min(v) AS m FROM gx_agg_vis GROUP BY g$$);
BEGIN;
DELETE FROM gx_agg_vis WHERE g = 1;
INSERT INTO gx_agg_vis VALUES (0, 9, 9);
SELECT gx_agg_diff($$SELECT g, count(*) AS c, sum(v) AS s FROM gx_agg_vis GROUP BY g$$);
SET LOCAL gpuext.force_offload = on;
SELECT g, count(*), sum(v) FROM gx_agg_vis GROUP BY g ORDER BY g;
ROLLBACK;
SET gpuext.force_offload = on;
SELECT g, count(*), sum(v) FROM gx_agg_vis GROUP BY g ORDER BY g;
RESET gpuext.force_offload;
DROP TABLE gx_agg_vis;
