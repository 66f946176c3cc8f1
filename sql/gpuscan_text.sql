--
-- GpuScan: text, varchar and char(n) quals.  Equality runs on the device
-- in any deterministic collation, ordering only in the C collation (the
-- database's default collation stays on the host), LIKE and substr on
-- the device.  Outputs are sorted in the C collation so that they do not
-- depend on the machine's locale.
--
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
-- GpuScan alone (GpuAgg, aggregation fused with the scan, has its own tests)
SET gpuext.enable_gpuagg = off;
SET gpuext.max_batch_pages = 4;

SELECT * FROM gx_plan($$SELECT id FROM gx_texts WHERE t = 'str7'$$);

-- equality
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t = 'str7'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t = 'str7 '$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t <> 'str7'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t = ''$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t <> ''$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t = tc$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE vc = 'ed519'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE vc <> t$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE vc = ''$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc = 'k%174'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t = 'str' || '7'$$);
-- char(n): trailing spaces do not count, in equality and in the cast to text
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c = 'ab'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c = 'ab   '$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c = ''$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c <> 'ab'::char(2)$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c = ' ab'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c::text = 'ab'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c::text = 'ab '$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c::text = t$$);
-- (a binary coercion of text to bpchar changes the semantics: host)
SELECT * FROM gx_where($$SELECT id FROM gx_texts WHERE c = vc::bpchar AND t::bpchar = c AND id > 0$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c = vc::bpchar AND id > 0$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t::bpchar = c AND id > 0$$);
SELECT gx_diff($$SELECT id, c, c::text, length(c) FROM gx_texts WHERE c = 'ab'$$);
-- bpchar ordering in the C collation
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c COLLATE "C" < 'ab'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c COLLATE "C" >= 'ab  '$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c COLLATE "C" > 'A'$$);

-- ordering: in the C collation on the device ...
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc < 'k250'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc >= 'K'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc > '_'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc <= 'k\'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t COLLATE "C" < 'str5'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t > 'str5' COLLATE "C"$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE vc COLLATE "C" BETWEEN '1' AND '5'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc < t COLLATE "C"$$);
-- ... in the database's collation on the host (unless that collation is C)
SELECT (SELECT datcollate IN ('C', 'POSIX') FROM pg_database WHERE datname = current_database())
       = EXISTS (SELECT FROM gx_plan($$SELECT id FROM gx_texts WHERE t < 'str5'$$) AS l
                  WHERE l LIKE '%GPU Filter%') AS ordering_on_device_iff_c_locale;
SELECT * FROM gx_where($$SELECT id FROM gx_texts WHERE t < 'str5' COLLATE "C" AND vc > tc COLLATE "POSIX" AND id > 0$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t < 'str5' AND id > 0$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE vc >= 'a' AND id > 0$$);

-- LIKE: % _ and the backslash escape, case-sensitive
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t LIKE 'str1%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t LIKE '%5'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t LIKE '%5 '$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t LIKE '%3%3%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t LIKE 's_r_'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t LIKE '%_'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t LIKE '_%_%_'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t LIKE '%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t LIKE '%%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t LIKE ''$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t LIKE 'STR%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t NOT LIKE '%0%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE 'k\%%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE '\_k%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE 'k\\%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE '%\\%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE 'a\%b'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE 'a\_b'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE 'a_b'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE 'a\\b'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE 'a\\\%b'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE '\k%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE 'a#%b' ESCAPE '#'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE '%$_%' ESCAPE '$'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE 'a\b' ESCAPE ''$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE vc LIKE '%a%b%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE vc NOT LIKE '_____'$$);
-- a pattern ending in the escape character: false where the match fails
-- before reaching it, an error where it gets there
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE 'zz\'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc LIKE 'a\'$$);
-- char(n) LIKE sees the padding
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c LIKE 'ab'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c LIKE 'ab%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c LIKE 'ab    '$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c NOT LIKE '%b'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c LIKE '% '$$);
-- ILIKE and regular expressions stay on the host
SELECT * FROM gx_where($$SELECT id FROM gx_texts WHERE t ILIKE 'STR1%' AND t ~ '7$' AND t LIKE 's%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t ILIKE 'STR1%' AND t ~ '7$' AND t LIKE 's%'$$);

-- substr and substring, in characters
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, 1, 3) = 'str'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, 4) = '77'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, 4, 1) = '9'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, 0, 3) = 'st'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, -5, 7) = 's'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, -5, 5) = ''$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, 2, 0) = ''$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, 6, 100) = '5'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, 100) = ''$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, 2, 2147483647) = 'tr12'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, -2147483647, 2147483647) = ''$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, 2147483647, 2147483647) = ''$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substring(t from 2 for 3) = 'tr1'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substring(t from 5) = '0 '$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(vc, id % 7 - 2, id % 5) = 'a'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(vc, id % 7 - 2, id % 5) LIKE '_b%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(c, 1, 2) = 'ab'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(c, 3) = ''$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(tc, 2, 1) COLLATE "C" > 'k'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE substr(t, 1, 4) = substr(t, 1, 4 + id % 2)$$);

-- IN / ANY / ALL, CASE, COALESCE, NULLIF on text
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t IN ('str7', 'str14', 'str21 ', '')$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t IN ('str7', NULL)$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t NOT IN ('str7', 'str14')$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE t NOT IN ('str7', NULL)$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE c IN ('ab', 'abc   ')$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE vc = ANY ('{a,ed519,0234c,""}')$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc < ANY ('{K100,_k050}')$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE tc >= ALL ('{K100,_k050}')$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE CASE WHEN id % 2 = 0 THEN t ELSE tc END = 'str14'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE CASE c WHEN 'ab' THEN 'x' WHEN 'abc' THEN 'y' END = 'x'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE coalesce(t, vc, 'none') = 'none'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE coalesce(t, vc) LIKE 'c%'$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE nullif(t, '') IS NULL$$);
SELECT gx_diff($$SELECT id FROM gx_texts WHERE nullif(c, 'ab') IS NULL$$);

-- projections of stored values
SELECT gx_diff($$SELECT id, t, vc, c, tc FROM gx_texts WHERE t LIKE '%1%'$$);

-- values humans can read
SET gpuext.force_offload = on;
SELECT id, t, vc, c, tc FROM gx_texts WHERE id > 5000 AND tc LIKE '%\\%' ORDER BY id;
SELECT id, tc FROM gx_texts WHERE id > 5000 AND tc LIKE 'a_b' ORDER BY id;
SELECT id, tc FROM gx_texts WHERE id > 5000 AND tc LIKE '\%' ORDER BY id;
SELECT DISTINCT c::text COLLATE "C" AS t, length(c) AS len, octet_length(c) AS bytes
  FROM gx_texts WHERE c = 'ab' OR c = '' ORDER BY t;
SELECT DISTINCT ('[' || c || ']') COLLATE "C" AS c FROM gx_texts WHERE c LIKE '%b %' ORDER BY c;
SELECT id, '[' || t || ']' AS t, '[' || substr(t, -1, 5) || ']' AS sub
  FROM gx_texts WHERE substr(t, -1, 5) LIKE '_%' AND id < 10 ORDER BY id;
SELECT DISTINCT tc FROM gx_texts WHERE tc < 'K005' ORDER BY tc;
RESET gpuext.force_offload;
