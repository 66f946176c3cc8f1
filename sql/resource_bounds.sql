--
-- Bounds on gpuext's shared resources: the settings that spend them are
-- superuser-only (or bounded by a superuser's ceiling), and the column
-- caches have a per-database share.  (The per-database share of GPU tasks
-- and the device copy budgets need a GPU: test/gpu/sql.)
--
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
RESET client_min_messages;

-- their definitions
SELECT name, context, unit, boot_val, min_val, max_val
  FROM pg_settings
 WHERE name IN ('gpuext.gpu_memory_limit',
                'gpuext.device_copy_memory', 'gpuext.device_copy_memory_total',
                'gpuext.ptree_mirror_max_mb', 'gpuext.ptree_mirror_ceiling',
                'gpuext.max_caches_per_database', 'gpuext.cache_memory_per_database',
                'gpuext.max_tasks_per_database', 'gpuext.cache_memory_limit')
 ORDER BY name COLLATE "C";
-- gpuext.gpu_memory_limit: -1, a share of the GPU's memory, by default
SHOW gpuext.gpu_memory_limit;

-- an ordinary role cannot set the settings that spend shared resources
CREATE ROLE regress_gpuext_bounds_user;
CREATE FUNCTION rb_big_mirror() RETURNS int LANGUAGE sql
  SET gpuext.ptree_mirror_max_mb = '64GB' AS 'SELECT 1';
SET ROLE regress_gpuext_bounds_user;
SET gpuext.gpu_memory_limit = 0;
SET gpuext.device_copy_memory = '64GB';
SET gpuext.max_caches_per_database = 64;
SET gpuext.cache_memory_per_database = '64GB';
SET gpuext.max_tasks_per_database = 1024;
SET gpuext.ptree_mirror_ceiling = '64GB';
SET gpuext.device_copy_memory_total = '64GB';
SET gpuext.cache_memory_limit = '64GB';
-- gpuext.ptree_mirror_max_mb: up to the ceiling (1 GB) only
SET gpuext.ptree_mirror_max_mb = '512MB';
SHOW gpuext.ptree_mirror_max_mb;
SET gpuext.ptree_mirror_max_mb = '1GB';
SET gpuext.ptree_mirror_max_mb = '1025MB';
SET gpuext.ptree_mirror_max_mb = '64GB';
SHOW gpuext.ptree_mirror_max_mb;
-- not through a function's SET clause or ALTER ROLE either
SELECT rb_big_mirror();
ALTER ROLE regress_gpuext_bounds_user SET gpuext.ptree_mirror_max_mb = '64GB';
-- its default, and values under the ceiling, stay allowed
RESET gpuext.ptree_mirror_max_mb;
SHOW gpuext.ptree_mirror_max_mb;
SET gpuext.ptree_mirror_max_mb = 0;
SHOW gpuext.ptree_mirror_max_mb;
RESET ROLE;
RESET ALL;
-- a superuser may set all of them, and go past the ceiling
SET gpuext.max_tasks_per_database = 1024;
SET gpuext.ptree_mirror_max_mb = '64GB';
SHOW gpuext.ptree_mirror_max_mb;
SET gpuext.ptree_mirror_ceiling = '256MB';
SET ROLE regress_gpuext_bounds_user;
SET gpuext.ptree_mirror_max_mb = '512MB';
RESET ROLE;
RESET ALL;
SELECT rb_big_mirror();
DROP FUNCTION rb_big_mirror();
DROP ROLE regress_gpuext_bounds_user;

-- the cap mirrors use is within the ceiling, whatever gpuext.ptree_mirror_max_mb
-- says: with a ceiling of 0 no mirror is built, and a planned merge
-- (gpuext.ptree_merge_plan = on) compares keys instead
CREATE TABLE rb_pt (i int4);
INSERT INTO rb_pt SELECT g FROM generate_series(1, 5000) g;
CREATE INDEX rb_pt_i ON rb_pt USING gpuext_ptree (i) WITH (delta_pages = 1);
SET gpuext.device = cpu;
SET gpuext.ptree_merge_plan = on;
SET gpuext.ptree_mirror_ceiling = 0;
SELECT cpu_merges, compare_merges FROM gpuext_ptree_merge_stats() \gset before_
INSERT INTO rb_pt SELECT g FROM generate_series(5001, 8000) g;
SELECT s.cpu_merges - :before_cpu_merges AS planned_merges,
       s.compare_merges - :before_compare_merges > 0 AS compared
  FROM gpuext_ptree_merge_stats() s;
RESET gpuext.ptree_mirror_ceiling;
SELECT cpu_merges, compare_merges FROM gpuext_ptree_merge_stats() \gset before_
INSERT INTO rb_pt SELECT g FROM generate_series(8001, 11000) g;
SELECT s.cpu_merges - :before_cpu_merges > 0 AS planned,
       s.compare_merges - :before_compare_merges AS compared_merges
  FROM gpuext_ptree_merge_stats() s;
SELECT gpuext_ptree_check('rb_pt_i', true);
RESET gpuext.ptree_merge_plan;
RESET gpuext.device;
DROP TABLE rb_pt;

-- column caches: a database's share (gpuext.max_caches_per_database,
-- superuser-only, here 2 in two new databases): the third cache of one
-- database is refused (53400) while the other database still gets one
SELECT current_database() AS home_db \gset
CREATE DATABASE rb_db1;
CREATE DATABASE rb_db2;
ALTER DATABASE rb_db1 SET gpuext.max_caches_per_database = 2;
ALTER DATABASE rb_db2 SET gpuext.max_caches_per_database = 2;
\c rb_db1
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE EXTENSION gpuext;
RESET client_min_messages;
SHOW gpuext.max_caches_per_database;
CREATE TABLE c1 AS SELECT g AS id, g * 2 AS v FROM generate_series(1, 3000) g;
CREATE TABLE c2 AS SELECT * FROM c1;
CREATE TABLE c3 AS SELECT * FROM c1;
VACUUM (FREEZE) c1, c2, c3;
SELECT gpuext_cache_enable('c1') >= 0 AS c1_cached;
SELECT gpuext_cache_enable('c2') >= 0 AS c2_cached;
SELECT gpuext_cache_enable('c3') >= 0 AS c3_cached;
\echo :LAST_ERROR_SQLSTATE
-- a rebuild of one of its caches is not a new one
SELECT gpuext_cache_enable('c2') >= 0 AS c2_rebuilt;
\c rb_db2
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE EXTENSION gpuext;
RESET client_min_messages;
CREATE TABLE c4 AS SELECT g AS id, g * 2 AS v FROM generate_series(1, 3000) g;
VACUUM (FREEZE) c4;
SELECT gpuext_cache_enable('c4') >= 0 AS c4_cached;
-- and its memory share: gpuext.cache_memory_per_database
CREATE TABLE c5 AS SELECT g AS id, g * 2 AS v FROM generate_series(1, 3000) g;
VACUUM (FREEZE) c5;
SET gpuext.cache_memory_per_database = 0;
\set VERBOSITY sqlstate
SELECT gpuext_cache_enable('c5') >= 0 AS c5_cached;
\set VERBOSITY terse
RESET gpuext.cache_memory_per_database;
SELECT gpuext_cache_enable('c5') >= 0 AS c5_cached;
-- once the first database drops one, it may build another
\c rb_db1
\set VERBOSITY terse
SELECT gpuext_cache_drop('c1');
SELECT gpuext_cache_enable('c3') >= 0 AS c3_cached;
SELECT relation::text, state FROM gpuext_caches() ORDER BY 1;
SELECT gpuext_cache_drop('c2'), gpuext_cache_drop('c3');
\c rb_db2
SELECT gpuext_cache_drop('c4'), gpuext_cache_drop('c5');
\c :home_db
\set VERBOSITY terse
DROP DATABASE rb_db1;
DROP DATABASE rb_db2;
