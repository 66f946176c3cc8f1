-- pgTAP: the SQL interface of the gpuext index access methods: the
-- checkers and the batch probe exist with their signatures, refuse bad
-- input with specific SQLSTATEs (NULLs, OID 0, a table, an index of
-- another access method) and check privileges (superuser or owner for
-- the ptree checker, superuser for the gist checker, SELECT on the table
-- for the probe).  Self-contained, rolled back.
BEGIN;
SELECT plan(26);

SET LOCAL client_min_messages = warning;
CREATE ROLE regress_gpuext_ix_user;
CREATE TABLE ix_t (k int, b box);
INSERT INTO ix_t SELECT g, box(point(g, g), point(g + 1, g + 1)) FROM generate_series(1, 2000) g;
CREATE INDEX ix_t_p ON ix_t USING gpuext_ptree (k);
CREATE INDEX ix_t_g ON ix_t USING gpuext_gist (b);
CREATE INDEX ix_t_bt ON ix_t (k);

SELECT has_function('gpuext_ptree_check', ARRAY['regclass', 'boolean']);
SELECT has_function('gpuext_gist_check', ARRAY['regclass', 'boolean']);
SELECT has_function('gpuext_gist_probe', ARRAY['regclass', 'box[]', 'text']);

-- they work on their own index
SELECT lives_ok('SELECT gpuext_ptree_check(''ix_t_p'', true)', 'gpuext_ptree_check of a ptree index');
SELECT lives_ok('SELECT * FROM gpuext_gist_check(''ix_t_g'', true)', 'gpuext_gist_check of a gist index');
SELECT is((SELECT count(*) FROM gpuext_gist_probe('ix_t_g', ARRAY[box(point(1, 1), point(5, 5))])),
          (SELECT count(*) FROM ix_t WHERE b && box(point(1, 1), point(5, 5))),
          'gpuext_gist_probe finds what && finds');

-- bad input
SELECT throws_ok('SELECT gpuext_ptree_check(NULL)', '22004', NULL, 'gpuext_ptree_check(NULL)');
SELECT throws_ok('SELECT gpuext_ptree_check(''ix_t_p'', NULL)', '22004', NULL,
                 'gpuext_ptree_check with heapallindexed NULL');
SELECT throws_ok('SELECT gpuext_ptree_check(0)', '42P01', NULL, 'gpuext_ptree_check of OID 0');
SELECT throws_ok('SELECT gpuext_ptree_check(''ix_t'')', '42809', NULL, 'gpuext_ptree_check of a table');
SELECT throws_ok('SELECT gpuext_ptree_check(''ix_t_bt'')', '42809', NULL, 'gpuext_ptree_check of a btree index');
SELECT throws_ok('SELECT gpuext_ptree_check(''ix_t_g'')', '42809', NULL, 'gpuext_ptree_check of a gist index');
SELECT throws_ok('SELECT * FROM gpuext_gist_check(NULL)', '22004', NULL, 'gpuext_gist_check(NULL)');
SELECT throws_ok('SELECT * FROM gpuext_gist_check(0)', '42P01', NULL, 'gpuext_gist_check of OID 0');
SELECT throws_ok('SELECT * FROM gpuext_gist_check(''ix_t'')', '42809', NULL, 'gpuext_gist_check of a table');
SELECT throws_ok('SELECT * FROM gpuext_gist_check(''ix_t_bt'')', '42809', NULL, 'gpuext_gist_check of a btree index');
SELECT throws_ok('SELECT * FROM gpuext_gist_check(''ix_t_p'')', '42809', NULL, 'gpuext_gist_check of a ptree index');
SELECT throws_ok('SELECT * FROM gpuext_gist_probe(''ix_t_bt'', ARRAY[box(point(1, 1), point(2, 2))])',
                 '42809', NULL, 'gpuext_gist_probe of a btree index');
SELECT throws_ok('SELECT * FROM gpuext_gist_probe(''ix_t_g'', ARRAY[box(point(1, 1), point(2, 2))], ''bogus'')',
                 '22023', NULL, 'gpuext_gist_probe with an unknown operator');
SELECT is_empty('SELECT * FROM gpuext_gist_probe(''ix_t_g'', NULL)', 'gpuext_gist_probe of no queries');
SELECT is_empty('SELECT * FROM gpuext_gist_probe(''ix_t_g'', ARRAY[NULL::box])',
                'gpuext_gist_probe of a NULL query box finds nothing');

-- privileges
SELECT function_privs_are('gpuext_gist_check', ARRAY['regclass', 'boolean'], 'regress_gpuext_ix_user',
                          '{}'::text[], 'plain roles may not execute gpuext_gist_check()');
SET LOCAL ROLE regress_gpuext_ix_user;
SELECT throws_ok('SELECT gpuext_ptree_check(''ix_t_p'')', '42501', NULL,
                 'a plain role cannot check an index it does not own');
SELECT throws_ok('SELECT * FROM gpuext_gist_check(''ix_t_g'')', '42501', NULL,
                 'a plain role cannot run gpuext_gist_check()');
SELECT throws_ok('SELECT * FROM gpuext_gist_probe(''ix_t_g'', ARRAY[box(point(1, 1), point(2, 2))])',
                 '42501', NULL, 'gpuext_gist_probe needs SELECT on the table');
RESET ROLE;
GRANT SELECT ON ix_t TO regress_gpuext_ix_user;
SET LOCAL ROLE regress_gpuext_ix_user;
SELECT lives_ok('SELECT * FROM gpuext_gist_probe(''ix_t_g'', ARRAY[box(point(1, 1), point(2, 2))])',
                'with SELECT on the table, a plain role can probe');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
