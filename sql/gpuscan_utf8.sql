--
-- GpuScan: multibyte UTF-8 text.  LIKE's _ and substr count characters,
-- not bytes; char(n) pads to n characters.  Only in a UTF8 database
-- (expected/gpuscan_utf8_1.out is the output elsewhere).
--
SELECT getdatabaseencoding() <> 'UTF8' AS skip_test \gset
\if :skip_test
\quit
\endif
\set VERBOSITY terse
SET gpuext.regression_test_mode = on;
-- GpuScan alone (GpuAgg, aggregation fused with the scan, has its own tests)
SET gpuext.enable_gpuagg = off;
SET gpuext.max_batch_pages = 2;

CREATE TABLE gx_mb (id int, t text, c char(4), tc text COLLATE "C");
INSERT INTO gx_mb
SELECT g, w || CASE WHEN g > 13 THEN (g % 10)::text ELSE '' END,
       w, w || CASE WHEN g > 13 THEN (g % 10)::text ELSE '' END
  FROM generate_series(1, 3000) g,
       LATERAL (SELECT (ARRAY['é', 'éé', 'aé', 'éa', '日本語', '日本', 'a日b', '😀', 'a😀b',
                              'ü', 'e' || U&'\0301', 'ab', 'Ωx'])[g % 13 + 1] AS w) AS s;
ANALYZE gx_mb;

SELECT gx_diff($$SELECT id FROM gx_mb WHERE t = 'é'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE t <> '日本語'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE t LIKE '_'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE t LIKE '__'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE t LIKE '___'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE t LIKE 'a_b%'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE t LIKE '%本%'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE t LIKE '_本_%'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE t LIKE '日%'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE t LIKE '%é_'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE t LIKE '%_😀_%'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE t NOT LIKE '%_%_%'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE substr(t, 1, 1) = 'é'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE substr(t, 2, 1) = '本'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE substr(t, 2) = 'b'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE substr(t, 3, 1) = '1'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE substr(t, -1, 3) = 'a'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE substr(t, 2, 2) LIKE '_'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE substr(t, id % 4, id % 3) = 'é'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE c = 'é'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE c LIKE '日本__'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE c LIKE '___ '$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE tc > 'z'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE tc < 'é'$$);
SELECT gx_diff($$SELECT id FROM gx_mb WHERE tc BETWEEN 'é' AND '日本'$$);
SELECT gx_diff($$SELECT id, t, c, tc FROM gx_mb WHERE t LIKE '%'$$);

-- values humans can read
SET gpuext.force_offload = on;
SELECT DISTINCT t COLLATE "C" AS t, length(t) AS chars, octet_length(t) AS bytes
  FROM gx_mb WHERE t LIKE '__' AND id <= 13 ORDER BY t;
SELECT DISTINCT t COLLATE "C" AS t, substr(t, 2, 1) AS second
  FROM gx_mb WHERE substr(t, 2, 1) <> '' AND id <= 13 ORDER BY t;
SELECT DISTINCT ('[' || c::text || ']') COLLATE "C" AS c, octet_length(c) AS bytes
  FROM gx_mb WHERE c LIKE '__  ' ORDER BY c;
RESET gpuext.force_offload;
DROP TABLE gx_mb;
