-- pgTAP: the SQL interface of gpuext: every function exists with its
-- signature, return type, language, strictness and volatility; bad input
-- raises the documented SQLSTATEs; EXECUTE and SELECT privileges for
-- plain, pg_monitor and superuser roles.  Self-contained, rolled back.
BEGIN;
SELECT plan(72);

SET LOCAL client_min_messages = warning;
CREATE ROLE regress_gpuext_tap_user;
CREATE ROLE regress_gpuext_tap_monitor IN ROLE pg_monitor;
CREATE TABLE tap_t (id int, pad text);
INSERT INTO tap_t SELECT g, repeat('y', g % 50) FROM generate_series(1, 3000) g;
DELETE FROM tap_t WHERE id % 4 = 0;
CREATE INDEX tap_t_id ON tap_t (id);
CREATE SEQUENCE tap_seq;
CREATE VIEW tap_v AS SELECT * FROM tap_t;

SELECT has_extension('gpuext');

-- signatures and return types
SELECT has_function('gpuext_version', '{}'::name[]);
SELECT has_function('gpuext_devices', '{}'::name[]);
SELECT has_function('gpuext_status', '{}'::name[]);
SELECT has_function('gpuext_page_counts', ARRAY['regclass', 'text']);
SELECT has_function('gpuext_service_roundtrip', ARRAY['integer']);
SELECT has_function('gpuext_debug_sleep', ARRAY['integer', 'integer', 'text']);

SELECT function_returns('gpuext_version', '{}'::name[], 'text');
SELECT function_returns('gpuext_devices', '{}'::name[], 'setof record');
SELECT function_returns('gpuext_status', '{}'::name[], 'record');
SELECT function_returns('gpuext_page_counts', ARRAY['regclass', 'text'], 'setof record');
SELECT function_returns('gpuext_service_roundtrip', ARRAY['integer'], 'double precision');
SELECT function_returns('gpuext_debug_sleep', ARRAY['integer', 'integer', 'text'], 'text');

-- language, strictness, volatility
SELECT function_lang_is('gpuext_version', '{}'::name[], 'c');
SELECT function_lang_is('gpuext_devices', '{}'::name[], 'c');
SELECT function_lang_is('gpuext_status', '{}'::name[], 'c');
SELECT function_lang_is('gpuext_page_counts', ARRAY['regclass', 'text'], 'c');
SELECT function_lang_is('gpuext_service_roundtrip', ARRAY['integer'], 'c');
SELECT function_lang_is('gpuext_debug_sleep', ARRAY['integer', 'integer', 'text'], 'c');

SELECT is_strict('gpuext_version', '{}'::name[]);
SELECT is_strict('gpuext_devices', '{}'::name[]);
SELECT is_strict('gpuext_status', '{}'::name[]);
SELECT is_strict('gpuext_page_counts', ARRAY['regclass', 'text']);
SELECT is_strict('gpuext_service_roundtrip', ARRAY['integer']);
SELECT is_strict('gpuext_debug_sleep', ARRAY['integer', 'integer', 'text']);

SELECT volatility_is('gpuext_version', '{}'::name[], 'stable');
SELECT volatility_is('gpuext_devices', '{}'::name[], 'volatile');
SELECT volatility_is('gpuext_status', '{}'::name[], 'volatile');
SELECT volatility_is('gpuext_page_counts', ARRAY['regclass', 'text'], 'volatile');
SELECT volatility_is('gpuext_service_roundtrip', ARRAY['integer'], 'volatile');
SELECT volatility_is('gpuext_debug_sleep', ARRAY['integer', 'integer', 'text'], 'volatile');

-- what they return
SELECT is(gpuext_version(), '0.1', 'gpuext_version() is 0.1');
SELECT ok((SELECT service_state IN ('ready', 'no gpu') FROM gpuext_status()),
          'the GPU service is up');
SELECT ok((SELECT count(*) >= 1 AND bool_and(engine IN ('gpu', 'cpu')) FROM gpuext_devices()),
          'gpuext_devices() has a row for every engine in use');
SELECT bag_eq(
    'SELECT blkno, visible FROM gpuext_page_counts(''tap_t'', ''cpu'')',
    'SELECT (ctid::text::point)[0]::bigint AS blkno, count(*)::int AS visible FROM tap_t GROUP BY 1',
    'CPU engine: visible tuples per page match ctid');
SELECT bag_eq(
    'SELECT blkno, visible FROM gpuext_page_counts(''tap_t'', ''auto'')',
    'SELECT (ctid::text::point)[0]::bigint AS blkno, count(*)::int AS visible FROM tap_t GROUP BY 1',
    'auto engine: visible tuples per page match ctid');
SELECT ok(gpuext_service_roundtrip(5) > 0, 'gpuext_service_roundtrip(5) takes time');
SELECT is(gpuext_debug_sleep(0, 0, 'cpu'), 'cpu', 'gpuext_debug_sleep on the CPU engine');

-- STRICT: NULL in, nothing out
SELECT is_empty('SELECT * FROM gpuext_page_counts(NULL)', 'gpuext_page_counts(NULL) is empty');
SELECT is_empty('SELECT * FROM gpuext_page_counts(''tap_t'', NULL)', 'gpuext_page_counts(t, NULL) is empty');
SELECT is(gpuext_service_roundtrip(NULL), NULL, 'gpuext_service_roundtrip(NULL) is NULL');
SELECT is(gpuext_debug_sleep(NULL), NULL, 'gpuext_debug_sleep(NULL) is NULL');

-- bad input
SELECT throws_ok('SELECT * FROM gpuext_page_counts(0)', '42P01', NULL,
                 'gpuext_page_counts of OID 0');
SELECT throws_ok('SELECT * FROM gpuext_page_counts(''tap_t_id'')', '42809', NULL,
                 'gpuext_page_counts of an index');
SELECT throws_ok('SELECT * FROM gpuext_page_counts(''tap_seq'')', '42809', NULL,
                 'gpuext_page_counts of a sequence');
SELECT throws_ok('SELECT * FROM gpuext_page_counts(''tap_v'')', '42809', NULL,
                 'gpuext_page_counts of a view');
SELECT throws_ok('SELECT * FROM gpuext_page_counts(''tap_t'', ''quantum'')', '22023',
                 'invalid engine "quantum"', 'gpuext_page_counts with a bad engine');
SELECT throws_ok('SELECT gpuext_service_roundtrip(0)', '22003', NULL,
                 'gpuext_service_roundtrip(0)');
SELECT throws_ok('SELECT gpuext_service_roundtrip(2000000)', '22003', NULL,
                 'gpuext_service_roundtrip(2000000)');
SELECT throws_ok('SELECT gpuext_debug_sleep(-1)', '22003', NULL,
                 'gpuext_debug_sleep with a negative time');
SELECT throws_ok('SELECT gpuext_debug_sleep(3600001)', '22003', NULL,
                 'gpuext_debug_sleep longer than an hour');
SELECT throws_ok('SELECT gpuext_debug_sleep(0, -1)', '22003', NULL,
                 'gpuext_debug_sleep with a negative reservation');
SELECT throws_ok('SELECT gpuext_debug_sleep(0, 0, ''x'')', '22023', NULL,
                 'gpuext_debug_sleep with a bad engine');

-- privileges, as declared
SELECT function_privs_are('gpuext_status', '{}'::name[], 'regress_gpuext_tap_user', '{}'::text[],
                          'plain roles may not execute gpuext_status()');
SELECT function_privs_are('gpuext_status', '{}'::name[], 'regress_gpuext_tap_monitor', ARRAY['EXECUTE'],
                          'pg_monitor members may execute gpuext_status()');
SELECT function_privs_are('gpuext_debug_sleep', ARRAY['integer', 'integer', 'text'],
                          'regress_gpuext_tap_user', '{}'::text[],
                          'plain roles may not execute gpuext_debug_sleep()');
SELECT function_privs_are('gpuext_page_counts', ARRAY['regclass', 'text'],
                          'regress_gpuext_tap_user', ARRAY['EXECUTE'],
                          'everyone may execute gpuext_page_counts()');
SELECT function_privs_are('gpuext_devices', '{}'::name[], 'regress_gpuext_tap_user', '{}'::text[],
                          'plain roles may not execute gpuext_devices()');
SELECT function_privs_are('gpuext_devices', '{}'::name[], 'regress_gpuext_tap_monitor', ARRAY['EXECUTE'],
                          'pg_monitor members may execute gpuext_devices()');
SELECT function_privs_are('gpuext_service_roundtrip', ARRAY['integer'], 'regress_gpuext_tap_user', '{}'::text[],
                          'plain roles may not execute gpuext_service_roundtrip()');
SELECT has_function('gpuext_calibrate_workload', ARRAY['text[]', 'text[]', 'integer', 'bigint', 'boolean']);
SELECT function_privs_are('gpuext_calibrate_workload', ARRAY['text[]', 'text[]', 'integer', 'bigint', 'boolean'],
                          'regress_gpuext_tap_user', '{}'::text[],
                          'plain roles may not execute gpuext_calibrate_workload()');

-- privileges, in use
SET LOCAL ROLE regress_gpuext_tap_user;
SELECT throws_ok('SELECT * FROM gpuext_status()', '42501', NULL,
                 'a plain role cannot read gpuext_status()');
SELECT throws_ok('SELECT gpuext_debug_sleep(1)', '42501', NULL,
                 'a plain role cannot run gpuext_debug_sleep()');
SELECT throws_ok('SELECT * FROM gpuext_page_counts(''tap_t'')', '42501',
                 'permission denied for table tap_t',
                 'gpuext_page_counts needs SELECT on the table');
SELECT throws_ok('SELECT * FROM gpuext_devices()', '42501', NULL, 'a plain role cannot list devices');
SELECT throws_ok('SELECT gpuext_service_roundtrip(1)', '42501', NULL, 'a plain role cannot time the service');
RESET ROLE;
GRANT SELECT ON tap_t TO regress_gpuext_tap_user;
GRANT EXECUTE ON FUNCTION gpuext_debug_sleep(int, int, text) TO regress_gpuext_tap_user;
SET LOCAL ROLE regress_gpuext_tap_user;
SELECT lives_ok('SELECT * FROM gpuext_page_counts(''tap_t'')',
                'with SELECT on the table, a plain role can count pages');
SELECT throws_ok('SELECT gpuext_debug_sleep(1)', '42501',
                 'must be superuser to use gpuext_debug_sleep',
                 'gpuext_debug_sleep() is for superusers even when granted');
RESET ROLE;
SET LOCAL ROLE regress_gpuext_tap_monitor;
SELECT lives_ok('SELECT * FROM gpuext_status()', 'pg_monitor members can read gpuext_status()');
SELECT lives_ok('SELECT * FROM gpuext_devices()', 'pg_monitor members can list devices');
RESET ROLE;

SELECT ok((SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 FROM gpuext_status()),
          'nothing is left held');

SELECT * FROM finish();
ROLLBACK;
