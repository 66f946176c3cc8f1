# gpuext without shared_preload_libraries: the extension installs and
# drops, gpuext_status() says 'not loaded' and why, the functions that need
# the GPU service fail with SQLSTATE 55000 and a hint naming
# shared_preload_libraries, gpuext_devices() returns the CPU row saying
# why, and the GUCs can be set.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $node = PostgreSQL::Test::Cluster->new('no_preload');
$node->init;
$node->append_conf('postgresql.conf', "shared_buffers = 32MB\nlc_messages = 'C'\n");
$node->start;

is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'', 'gpuext is not preloaded');

my ($rc, $out, $err) = $node->psql('postgres', 'CREATE EXTENSION gpuext');
my $created = $rc == 0;
ok($created, 'CREATE EXTENSION gpuext works without preloading')
  or diag($err);

SKIP:
{
	skip 'gpuext cannot be loaded without shared_preload_libraries', 28
	  unless $created;

	is($node->safe_psql('postgres', 'SELECT gpuext_version()'),
		'0.1', 'gpuext_version()');

	# the status says why nothing runs
	is( $node->safe_psql(
			'postgres',
			"SELECT service_state, service_pid IS NULL, devices IS NULL,
			        requests_served IS NULL, dma_arena_in_use IS NULL
			   FROM gpuext_status()"),
		'not loaded|t|t|t|t',
		"gpuext_status(): 'not loaded', no pid, no counters");
	like(
		$node->safe_psql('postgres', 'SELECT detail FROM gpuext_status()'),
		qr/not in shared_preload_libraries/,
		'gpuext_status() detail names shared_preload_libraries');

	# functions that need the service's shared memory: 55000 with a hint
	$node->safe_psql('postgres',
		'CREATE TABLE t AS SELECT g AS a FROM generate_series(1, 1000) g');
	foreach my $call (
		"SELECT * FROM gpuext_page_counts('t')",
		"SELECT * FROM gpuext_page_counts('t', 'cpu')",
		"SELECT gpuext_service_roundtrip(10)",
		"SELECT gpuext_debug_sleep(10, 0, 'cpu')")
	{
		($rc, $out, $err) = $node->psql('postgres', $call,
			extra_params => [ '-v', 'VERBOSITY=verbose' ]);
		isnt($rc, 0, "$call fails");
		like(
			$err,
			qr/ERROR:  55000: gpuext must be loaded via shared_preload_libraries/,
			"$call: SQLSTATE 55000");
		like(
			$err,
			qr/HINT:  Add gpuext to shared_preload_libraries/,
			"$call: the hint names shared_preload_libraries");
	}

	# bad arguments are still reported as such
	($rc, $out, $err) = $node->psql(
		'postgres',
		"SELECT * FROM gpuext_page_counts('t', 'nope')",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($err, qr/ERROR:  22023: invalid engine "nope"/, 'bad engine: 22023');

	# devices: the CPU engine, and why
	is( $node->safe_psql(
			'postgres',
			"SELECT device_index, engine, name, sm_count IS NULL,
			        memory_total IS NULL, status
			   FROM gpuext_devices()"),
		'-1|cpu|CPU engine|t|t|gpuext is not in shared_preload_libraries',
		'gpuext_devices(): one CPU row that says why');

	# the GUCs: placeholders before the library is loaded, real after
	is($node->safe_psql('postgres', "SET gpuext.enabled = off; SHOW gpuext.enabled"),
		'off', 'SET gpuext.enabled = off before the library is loaded');
	is( $node->safe_psql(
			'postgres',
			"SET gpuext.enabled = off; SELECT gpuext_version(); SHOW gpuext.enabled"),
		"0.1\noff",
		'the value set before survives loading the library');
	is( $node->safe_psql(
			'postgres', "LOAD 'gpuext'; SET gpuext.enabled = off; SHOW gpuext.enabled"),
		'off', 'SET gpuext.enabled = off after LOAD');
	is( $node->safe_psql(
			'postgres', "LOAD 'gpuext'; SET gpuext.device = cpu; SHOW gpuext.device"),
		'cpu', 'SET gpuext.device = cpu after LOAD');
	($rc, $out, $err) = $node->psql('postgres',
		"LOAD 'gpuext'; SET gpuext.device = 'tpu'");
	like($err, qr/invalid value for parameter "gpuext.device"/,
		'gpuext.device checks its values');
	($rc, $out, $err) = $node->psql('postgres',
		"LOAD 'gpuext'; SET gpuext.dma_buffer_size = '64MB'");
	isnt($rc, 0, 'gpuext.dma_buffer_size cannot be SET');
	like($err, qr/gpuext\.dma_buffer_size/,
		'the error names gpuext.dma_buffer_size');
	($rc, $out, $err) =
	  $node->psql('postgres', "LOAD 'gpuext'; SET gpuext.no_such_thing = 1");
	like(
		$err,
		qr/invalid configuration parameter name "gpuext.no_such_thing"/,
		'the gpuext prefix is reserved once the library is loaded');

	# DROP and CREATE again
	$node->safe_psql('postgres', 'DROP EXTENSION gpuext');
	is( $node->safe_psql(
			'postgres', "SELECT count(*) FROM pg_proc WHERE proname LIKE 'gpuext%'"),
		'0',
		'DROP EXTENSION gpuext removes every function');
	$node->safe_psql('postgres', 'CREATE EXTENSION gpuext');
	is($node->safe_psql('postgres', 'SELECT service_state FROM gpuext_status()'),
		'not loaded', 'CREATE EXTENSION gpuext again');
	$node->safe_psql('postgres', 'DROP EXTENSION gpuext');
	pass('DROP EXTENSION gpuext again');
}

# nothing crashed
unlike(
	slurp_file($node->logfile),
	qr/terminated by signal|terminating any other active server processes/,
	'no server process crashed');
$node->stop;
done_testing();
