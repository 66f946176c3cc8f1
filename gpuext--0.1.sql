/* gpuext--0.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION gpuext" to load this file. \quit

-- Version of the loaded library
CREATE FUNCTION gpuext_version()
RETURNS text
AS 'MODULE_PATHNAME', 'gpuext_version'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- GPUs the service opened, or the CPU engine and why no GPU is used
-- (pg_monitor and superusers)
CREATE FUNCTION gpuext_devices(
    OUT device_index int,
    OUT engine text,
    OUT name text,
    OUT sm_count int,
    OUT memory_total bigint,
    OUT memory_free bigint,
    OUT memory_used_by_gpuext bigint,
    OUT compute_capability text,
    OUT status text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpuext_devices'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION gpuext_devices() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gpuext_devices() TO pg_monitor;

-- State and counters of the GPU service
CREATE FUNCTION gpuext_status(
    OUT service_state text,
    OUT service_pid int,
    OUT detail text,
    OUT devices int,
    OUT requests_served bigint,
    OUT requests_failed bigint,
    OUT requests_cancelled bigint,
    OUT gpu_batches bigint,
    OUT cpu_batches bigint,
    OUT fallbacks bigint,
    OUT bytes_read bigint,
    OUT bytes_returned bigint,
    OUT device_time_ms float8,
    OUT device_memory_in_use bigint,
    OUT dma_arena_in_use bigint,
    OUT service_restarts bigint,
    OUT requests_abandoned bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'gpuext_status'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- statistics are for monitoring roles
REVOKE ALL ON FUNCTION gpuext_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gpuext_status() TO pg_monitor;

-- Per-page counts of normal and visible tuples, read in place by a kernel
-- (or the CPU engine); needs SELECT on the relation, and refuses a user
-- whom a row-level security policy of it applies to
CREATE FUNCTION gpuext_page_counts(
    rel regclass,
    engine text DEFAULT 'auto',
    OUT blkno bigint,
    OUT tuples int,
    OUT visible int)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpuext_page_counts'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

-- Mean microseconds of an empty request through the GPU service
-- (superuser only: it can keep the service busy)
CREATE FUNCTION gpuext_service_roundtrip(requests int DEFAULT 1000)
RETURNS float8
AS 'MODULE_PATHNAME', 'gpuext_service_roundtrip'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION gpuext_service_roundtrip(int) FROM PUBLIC;

-- Debugging: a device request that holds reserve_mb of device memory for
-- ms milliseconds unless cancelled (superuser only)
CREATE FUNCTION gpuext_debug_sleep(ms int, reserve_mb int DEFAULT 0, engine text DEFAULT 'auto')
RETURNS text
AS 'MODULE_PATHNAME', 'gpuext_debug_sleep'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION gpuext_debug_sleep(int, int, text) FROM PUBLIC;

-- Debugging: make the next 'count' device launches ('kernel') or device
-- allocations ('alloc') fail, on the GPU and on the CPU engine; 'none'
-- clears both (superuser only)
CREATE FUNCTION gpuext_debug_inject_fault(kind text, count int DEFAULT 1)
RETURNS void
AS 'MODULE_PATHNAME', 'gpuext_debug_inject_faults'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION gpuext_debug_inject_fault(text, int) FROM PUBLIC;

-- Debugging: a group table in device memory, kept for the query, the
-- session or (none) until the session ends; owner_pid stands for the pid
-- of the process that owns it (superuser only)
CREATE FUNCTION gpuext_debug_task_create(bytes bigint DEFAULT 1048576,
                                         keep text DEFAULT 'session',
                                         owner_pid int DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'gpuext_debug_task_create'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION gpuext_debug_task_create(bigint, text, int) FROM PUBLIC;

-- Debugging: free a task (superuser only)
CREATE FUNCTION gpuext_debug_task_destroy(task bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'gpuext_debug_task_destroy'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION gpuext_debug_task_destroy(bigint) FROM PUBLIC;

-- Debugging: one request ('fetch', 'page_count', 'noop') as a backend
-- would send it, to the service or the CPU engine, well-formed or not;
-- returns its result (superuser only)
CREATE FUNCTION gpuext_debug_request(kind text,
                                     engine text DEFAULT 'service',
                                     task bigint DEFAULT 0,
                                     first bigint DEFAULT 0,
                                     count bigint DEFAULT 1,
                                     out_bytes bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'gpuext_debug_request'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION gpuext_debug_request(text, text, bigint, bigint, bigint, bigint) FROM PUBLIC;

-- Calibrated cost-model parameters (gpuext_calibrate() writes them; every
-- backend's planner uses them as database-level defaults of the gpuext.*
-- settings)
CREATE TABLE gpuext_calibration_values (
    parameter   text PRIMARY KEY,
    value       float8 NOT NULL,
    unit        text NOT NULL,
    measured_at timestamptz NOT NULL DEFAULT now()
);
SELECT pg_catalog.pg_extension_config_dump('gpuext_calibration_values', '');
REVOKE ALL ON gpuext_calibration_values FROM PUBLIC;
GRANT SELECT ON gpuext_calibration_values TO PUBLIC;

-- Measure this machine (storage, link, device, CPU) and store the cost
-- model's parameters; returns each with the value in force before.
-- Superuser only.
CREATE FUNCTION gpuext_calibrate(
    OUT parameter text,
    OUT measured float8,
    OUT previous float8,
    OUT unit text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpuext_calibrate'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION gpuext_calibrate() FROM PUBLIC;

-- Refine the parameters that decide between PostgreSQL's plans and
-- gpuext's against the user's own queries (simulated annealing over the
-- training set, judged on the test set; stored only when the test set is
-- no slower).  Returns each parameter and the figures of both sets, before
-- and after.  Superuser only.
CREATE FUNCTION gpuext_calibrate_workload(
    training text[],
    test text[],
    iterations int DEFAULT 300,
    seed bigint DEFAULT 1,
    apply boolean DEFAULT true,
    OUT item text,
    OUT before float8,
    OUT after float8,
    OUT unit text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpuext_calibrate_workload'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION gpuext_calibrate_workload(text[], text[], int, bigint, boolean) FROM PUBLIC;

-- The cost-model parameters in force in this session, their calibrated
-- values and their built-in defaults.  A calibrated value in force has
-- the source 'database': it overrides the default, postgresql.conf and
-- ALTER DATABASE settings, and ALTER ROLE settings, connection options
-- and SET override it.
CREATE VIEW gpuext_calibration AS
SELECT substr(s.name, 8) AS parameter,
       s.setting::float8 AS value_in_force,
       CASE WHEN c.value IS NOT NULL
             AND s.source IN ('default', 'environment variable', 'configuration file',
                              'command line', 'global', 'database')
             AND abs(s.setting::float8 - c.value) <= 1e-5 * abs(c.value)
            THEN 'database' ELSE s.source END AS source,
       c.value AS calibrated,
       c.measured_at,
       s.boot_val::float8 AS default_value,
       s.short_desc AS description
  FROM pg_catalog.pg_settings s
  LEFT JOIN gpuext_calibration_values c ON c.parameter = substr(s.name, 8)
 WHERE s.name LIKE 'gpuext.%' AND s.vartype = 'real';

GRANT SELECT ON gpuext_calibration TO PUBLIC;

-- ---------------------------------------------------------------------
-- gpuext_gist: a wide-node R-tree index access method over box and point
-- columns (src/gxgist*.c).  Reloptions node_size (8 .. 204 entries per
-- node, default 204) and fillfactor (10 .. 100, default 90).  Searches
-- are exact (no recheck); "col && ANY(array)" is one batched walk.
-- ---------------------------------------------------------------------
CREATE FUNCTION gpuext_gist_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'gpuext_gist_handler'
LANGUAGE C;

CREATE ACCESS METHOD gpuext_gist TYPE INDEX HANDLER gpuext_gist_handler;
COMMENT ON ACCESS METHOD gpuext_gist IS 'gpuext R-tree with wide nodes (GPU node scans)';

CREATE OPERATOR CLASS gpuext_gist_box_ops
DEFAULT FOR TYPE box USING gpuext_gist AS
    OPERATOR 1 && (box, box),
    OPERATOR 2 @> (box, box),
    OPERATOR 3 <@ (box, box),
    OPERATOR 4 ~= (box, box),
    OPERATOR 5 @> (box, point);

CREATE OPERATOR CLASS gpuext_gist_point_ops
DEFAULT FOR TYPE point USING gpuext_gist AS
    OPERATOR 6 <@ (point, box),
    OPERATOR 7 ~= (point, point);

-- Verify a gpuext_gist index: the tree's structure, and with
-- heapallindexed every heap tuple's key in a leaf.  ERROR (XX002) on the
-- first fault found.  Superuser only (granted EXECUTE, the index's owner
-- whom no row-level security policy of the table applies to).
CREATE FUNCTION gpuext_gist_check(
    index regclass,
    heapallindexed boolean DEFAULT false,
    OUT levels int,
    OUT pages bigint,
    OUT leaf_entries bigint,
    OUT heap_tuples bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'gpuext_gist_check'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

REVOKE ALL ON FUNCTION gpuext_gist_check(regclass, boolean) FROM PUBLIC;

-- A batch of probes into a gpuext_gist index, one result list per probe:
-- for every element of queries (1-based), the visible rows whose key
-- satisfies "key op element" (box indexes: && @> <@ ~=; point indexes:
-- <@), as (query, ctid).  One level-synchronous walk for the whole batch.
-- Needs SELECT on the table, and refuses a user whom a row-level security
-- policy of it applies to.
CREATE FUNCTION gpuext_gist_probe(
    index regclass,
    queries box[],
    op text DEFAULT '&&',
    OUT query int,
    OUT ctid tid)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpuext_gist_probe'
LANGUAGE C STABLE PARALLEL RESTRICTED;
-- gpuext_ptree: prefix-tree index access method (src/ptree*.c)
-- ---------------------------------------------------------------------

CREATE FUNCTION gpuext_ptree_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'gpuext_ptree_handler'
LANGUAGE C;

CREATE ACCESS METHOD gpuext_ptree TYPE INDEX HANDLER gpuext_ptree_handler;
COMMENT ON ACCESS METHOD gpuext_ptree IS 'prefix-tree index (sorted main structure and a delta of recent inserts)';

CREATE OPERATOR CLASS int4_ptree_ops DEFAULT FOR TYPE int4 USING gpuext_ptree AS
    OPERATOR 1 < , OPERATOR 2 <= , OPERATOR 3 = , OPERATOR 4 >= , OPERATOR 5 > ;

CREATE OPERATOR CLASS int8_ptree_ops DEFAULT FOR TYPE int8 USING gpuext_ptree AS
    OPERATOR 1 < , OPERATOR 2 <= , OPERATOR 3 = , OPERATOR 4 >= , OPERATOR 5 > ,
    -- int4 and int2 constants widen exactly to int8
    OPERATOR 1 < (int8, int4), OPERATOR 2 <= (int8, int4), OPERATOR 3 = (int8, int4),
    OPERATOR 4 >= (int8, int4), OPERATOR 5 > (int8, int4),
    OPERATOR 1 < (int8, int2), OPERATOR 2 <= (int8, int2), OPERATOR 3 = (int8, int2),
    OPERATOR 4 >= (int8, int2), OPERATOR 5 > (int8, int2);

CREATE OPERATOR CLASS date_ptree_ops DEFAULT FOR TYPE date USING gpuext_ptree AS
    OPERATOR 1 < , OPERATOR 2 <= , OPERATOR 3 = , OPERATOR 4 >= , OPERATOR 5 > ;

CREATE OPERATOR CLASS timestamp_ptree_ops DEFAULT FOR TYPE timestamp USING gpuext_ptree AS
    OPERATOR 1 < , OPERATOR 2 <= , OPERATOR 3 = , OPERATOR 4 >= , OPERATOR 5 > ;

-- text in byte order whatever the collation: = and the pattern operators
CREATE OPERATOR CLASS text_ptree_ops DEFAULT FOR TYPE text USING gpuext_ptree AS
    OPERATOR 1 ~<~ , OPERATOR 2 ~<=~ , OPERATOR 3 = , OPERATOR 4 ~>=~ , OPERATOR 5 ~>~ ;

-- text with the ordinary comparison operators: the index must use COLLATE "C"
CREATE OPERATOR CLASS text_c_ptree_ops FOR TYPE text USING gpuext_ptree AS
    OPERATOR 1 < , OPERATOR 2 <= , OPERATOR 3 = , OPERATOR 4 >= , OPERATOR 5 > ;

-- Verify a gpuext_ptree index (structure; with heapallindexed, that every
-- table row it should hold is there).  Superuser or the index's owner,
-- whom no row-level security policy of the table applies to.
CREATE FUNCTION gpuext_ptree_check(index regclass, heapallindexed boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'gpuext_ptree_check'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- This backend's merges of gpuext_ptree deltas into main since it started:
-- planned on the GPU, planned on the CPU engine, merged by comparing keys
-- (text keys, gpuext.ptree_merge_plan off, no mirror), the delta entries
-- planned, the exact duplicates the plans dropped, and milliseconds spent
-- planning (the mirror included) and merging (all of it).
CREATE FUNCTION gpuext_ptree_merge_stats(
    OUT gpu_merges bigint, OUT cpu_merges bigint, OUT compare_merges bigint,
    OUT planned_entries bigint, OUT duplicates bigint,
    OUT plan_ms double precision, OUT merge_ms double precision)
RETURNS record
AS 'MODULE_PATHNAME', 'gpuext_ptree_merge_stats'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- Column caches (src/colcache.c): a table's fixed-width columns of its
-- all-visible pages, read by scans instead of the heap pages while no
-- write has been seen since they were built.
CREATE FUNCTION gpuext_cache_invalidate()
RETURNS trigger
AS 'MODULE_PATHNAME', 'gpuext_cache_invalidate'
LANGUAGE C;

CREATE FUNCTION gpuext_cache_enable(rel regclass, columns text[] DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'gpuext_cache_enable'
LANGUAGE C VOLATILE;

CREATE FUNCTION gpuext_cache_drop(rel regclass)
RETURNS boolean
AS 'MODULE_PATHNAME', 'gpuext_cache_drop'
LANGUAGE C VOLATILE STRICT;

CREATE FUNCTION gpuext_caches(
    OUT relation regclass,
    OUT columns text[],
    OUT pages bigint,
    OUT blocks bigint,
    OUT rows bigint,
    OUT bytes bigint,
    OUT state text,
    OUT built_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpuext_caches'
LANGUAGE C VOLATILE;

-- a dropped table's cache goes with it (the entry is freed only once the
-- relation is gone, so anyone may call it)
CREATE FUNCTION gpuext_cache_forget(rel oid)
RETURNS boolean
AS 'MODULE_PATHNAME', 'gpuext_cache_forget'
LANGUAGE C VOLATILE STRICT;

-- It runs in the dropping session, whatever its search_path: every name
-- is qualified and the path pinned, so no other schema's function of the
-- same name is called.
CREATE FUNCTION gpuext_cache_sql_drop()
RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  obj record;
BEGIN
  FOR obj IN SELECT d.objid FROM pg_catalog.pg_event_trigger_dropped_objects() d
              WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objsubid = 0 LOOP
    PERFORM @extschema@.gpuext_cache_forget(obj.objid);
  END LOOP;
END;
$$;

CREATE EVENT TRIGGER gpuext_cache_sql_drop ON sql_drop
  EXECUTE FUNCTION gpuext_cache_sql_drop();
