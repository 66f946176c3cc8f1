# Calibrated cost parameters reach the planner without SQL at plan time
# and without changing any setting: a backend reads gpuext_calibration_values
# itself, the first time it plans and again after a calibration commits,
# in this session and in others, without a reconnect.
#
#  - two sessions plan before a calibration; one calibrates inside a
#    transaction: it plans with its new values at its next command, the
#    other keeps the old ones until the commit and takes the new ones at
#    its next planning after it (without reconnecting);
#  - the planner's costs are those of the stored values exactly (the same
#    query planned with every stored value SET gives the same cost);
#  - SET LOCAL in a transaction wins while it lasts; the calibrated value
#    is back after the commit;
#  - precedence is a database-level setting's: a calibrated value
#    overrides postgresql.conf and ALTER DATABASE, ALTER ROLE overrides it;
#  - pg_settings.source names the setting's own source (the planner set
#    nothing), the gpuext_calibration view says 'database';
#  - a role that may not read gpuext_calibration_values plans with the
#    calibrated values all the same (no query of the table runs as it).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

# postgresql.conf sets host_tuple_us, which calibration measures
my $node = gpuext_node('calibration_reload', "gpuext.host_tuple_us = 0.9\n");

$node->safe_psql(
	'postgres', q{
CREATE TABLE cr_t AS SELECT g AS a, g % 7 AS b FROM generate_series(1, 20000) g;
VACUUM ANALYZE cr_t;
-- the total cost of a query's plan
CREATE FUNCTION cr_cost(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN (j->0->'Plan'->>'Total Cost')::float8;
END $$;
-- the same with every stored value SET (until the function returns)
CREATE FUNCTION cr_cost_stored(q text) RETURNS float8 LANGUAGE plpgsql
SET gpuext.enabled = on AS $$
DECLARE r record;
BEGIN
  FOR r IN SELECT parameter, value FROM gpuext_calibration_values LOOP
    PERFORM set_config('gpuext.' || r.parameter, r.value::text, true);
  END LOOP;
  RETURN cr_cost(q);
END $$;
CREATE ROLE cr_user LOGIN;
GRANT SELECT ON cr_t TO cr_user;
GRANT EXECUTE ON FUNCTION cr_cost(text), cr_cost_stored(text) TO cr_user;
ALTER ROLE cr_user SET gpuext.cost_unit_us = 11;
ALTER DATABASE postgres SET gpuext.host_page_us = 0.9;
});

# a GpuScan on the CPU engine: costed with the parameters calibration
# measures on every machine (host pages and rows, the CPU engine, the unit)
my $setup = q{
SET gpuext.device = cpu;
SET gpuext.force_offload = on;
SET max_parallel_workers_per_gather = 0;
};
my $q = q{'SELECT a FROM cr_t WHERE b < 3'};
my $same = "SELECT abs(cr_cost($q) - cr_cost_stored($q)) < 1e-6 * cr_cost_stored($q)";

my $a = bg_start($node);
my $b = bg_start($node);
for my $s ($a, $b)
{
	bg_query($s, $setup);
	is(bg_query($s, "SELECT cr_cost($q) > 0"), 't', 'a session plans before any calibration');
}
my $default_cost = bg_query($b, "SELECT cr_cost($q)");

# session a calibrates in a transaction, and plans with the values at once
bg_query($a, 'BEGIN');
is(bg_query($a, 'SELECT count(*) > 7 FROM gpuext_calibrate()'), 't', 'calibrated');
is(bg_query($a, $same), 't',
	'the calibrating session plans with the stored values at its next command');
is( bg_query(
		$a, q{SELECT current_setting('gpuext.cpu_engine_row_ns')::float8 = value
		      FROM gpuext_calibration_values WHERE parameter = 'cpu_engine_row_ns'}),
	't', 'and shows them');

# session b: not before the commit, at its next planning after it
is(bg_query($b, "SELECT cr_cost($q) = $default_cost"),
	't', 'another session keeps its values while the calibration is not committed');
bg_query($a, 'COMMIT');
is(bg_query($b, $same), 't',
	'another session plans with the stored values after the commit, without reconnecting');
is(bg_query($b, "SELECT cr_cost($q) <> $default_cost"), 't', 'which changed its costs');

# SET LOCAL wins while its transaction lasts
bg_query($b, 'BEGIN');
bg_query($b, 'SET LOCAL gpuext.cpu_engine_row_ns = 1000');
is(bg_query($b, "SELECT current_setting('gpuext.cpu_engine_row_ns')"), '1000', 'SET LOCAL wins');
is(bg_query($b, "SELECT cr_cost($q) > cr_cost_stored($q)"), 't',
	'and the planner costs with it');
bg_query($b, 'COMMIT');
is(bg_query($b, $same), 't', 'the calibrated value is back after the commit');

# precedence, in a new session: postgresql.conf and ALTER DATABASE lose
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE value_in_force = calibrated AND source = 'database')
  FROM gpuext_calibration
 WHERE parameter IN ('host_tuple_us', 'host_page_us', 'cost_unit_us')}),
	'3',
	'calibrated values override postgresql.conf and ALTER DATABASE settings');
# the planner set no setting: pg_settings names each setting's own source
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(source, ', ' ORDER BY name) FROM pg_settings
 WHERE name IN ('gpuext.host_tuple_us', 'gpuext.host_page_us', 'gpuext.cost_unit_us')}),
	'default, database, configuration file',
	"pg_settings keeps the settings' own sources");

# ALTER ROLE wins; a role that may not read the table plans as calibrated
$node->safe_psql('postgres',
	'REVOKE SELECT ON gpuext_calibration_values FROM PUBLIC');
my ($rc, $out, $err) = $node->psql(
	'postgres', qq{
$setup
SELECT current_setting('gpuext.cost_unit_us'), cr_cost($q) > 0;
SELECT current_setting('gpuext.host_page_us')::float8 <> 0.9;
},
	extra_params => [ '-U', 'cr_user' ]);
is($rc, 0, 'a role without SELECT on gpuext_calibration_values plans')
  or diag($err);
is($out, "11|t\nt", 'ALTER ROLE wins over the calibrated value, the other values apply');

bg_quit($a);
bg_quit($b);
$node->stop;
done_testing();
