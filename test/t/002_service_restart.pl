# The GPU service's life: SIGTERM makes the postmaster start a new one
# (new pid, service_restarts > 0, requests work again); fault injection
# 'service_die' gives the waiting backend a clean ERROR 58000 and the
# service comes back without a crash restart (the postmaster start time
# and an open session survive); kill -9 of the service makes the
# postmaster restart the whole server (PostgreSQL's rule for any process
# attached to shared memory), and server and service come back.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use GpuextTest;

my $node = gpuext_node('service_restart');

my $start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
my $pid1 = status_of($node, 'service_pid');
like($pid1, qr/^\d+$/, 'the service has a pid');
is(status_of($node, 'service_restarts'), '0', 'no restart yet');
ok($node->safe_psql('postgres', 'SELECT gpuext_service_roundtrip(10) > 0') eq 't',
	'a round trip through the service works');

# a session that stays open through the service restarts
my $bg = bg_start($node);
my $bg_pid = bg_pid($bg);
like($bg_pid, qr/^\d+$/, 'background session is up');

# --- SIGTERM: the postmaster starts a new service ---------------------------
my $t0 = time;
ok(kill('TERM', $pid1), 'SIGTERM to the service');
ok( $node->poll_query_until(
		'postgres',
		"SELECT service_pid IS NOT NULL AND service_pid <> $pid1
		        AND service_state IN ('ready', 'no gpu')
		   FROM gpuext_status()"),
	'a new service is up after SIGTERM');
my $elapsed = time - $t0;
cmp_ok($elapsed, '<', 15, "the service was back within seconds ($elapsed s)");
my $pid2 = status_of($node, 'service_pid');
isnt($pid2, $pid1, 'the service has a new pid');
cmp_ok(status_of($node, 'service_restarts'), '>', 0, 'service_restarts counts it');
is($node->safe_psql('postgres', 'SELECT gpuext_service_roundtrip(10) > 0'),
	't', 'round trips work with the new service');
is(bg_query($bg, 'SELECT 1'), '1', 'the open session survived');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'),
	$start_time, 'the postmaster did not restart');

# --- fault injection: the service dies while taking a request ---------------
my $restarts = status_of($node, 'service_restarts');
my $logpos = log_position($node);
my ($rc, $out, $err) = $node->psql(
	'postgres',
	"SET gpuext.debug_inject_fault = 'service_die';
	 SELECT gpuext_service_roundtrip(1);",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
isnt($rc, 0, 'the request fails when the service dies');
like(
	$err,
	qr/ERROR:  58000: the gpuext GPU service stopped while running a request/,
	'the waiter gets a clean ERROR with SQLSTATE 58000');
like($err, qr/HINT:  The service restarts by itself/, 'with a hint');
ok( $node->poll_query_until(
		'postgres',
		"SELECT service_pid IS NOT NULL AND service_pid <> $pid2
		        AND service_state IN ('ready', 'no gpu')
		   FROM gpuext_status()"),
	'the service comes back after service_die');
cmp_ok(status_of($node, 'service_restarts'), '>', $restarts,
	'service_restarts grew');
is($node->safe_psql('postgres', 'SELECT gpuext_service_roundtrip(10) > 0'),
	't', 'round trips work again');
is($node->safe_psql('postgres', 'SELECT dma_arena_in_use FROM gpuext_status()'),
	'0', 'no DMA arena space is left held');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'),
	$start_time, 'the postmaster start time is unchanged');
is(bg_query($bg, 'SELECT 2'), '2', 'the open session still works: no crash restart');
my $log = log_since($node, $logpos);
like($log, qr/gpuext GPU service stopping on injected fault/,
	'the service logged why it stopped');
unlike($log, qr/terminating any other active server processes/,
	'the postmaster did not crash-restart the server');

# with gpuext.cpu_fallback = on (the default), a query whose batch the
# dying service drops still completes, on the CPU engine (with a GPU); the
# CPU engine never needs the service (without one)
$node->safe_psql('postgres',
	'CREATE TABLE t AS SELECT g AS a FROM generate_series(1, 5000) g');
($rc, $out, $err) = $node->psql(
	'postgres',
	"SET gpuext.debug_inject_fault = 'service_die';
	 SELECT sum(visible) FROM gpuext_page_counts('t');");
is($out, '5000', 'gpuext_page_counts completes when the service dies under it');
ok(wait_for_service($node), 'the service is up');
is($node->safe_psql('postgres', "SELECT sum(visible) FROM gpuext_page_counts('t')"),
	'5000', 'gpuext_page_counts works with the service back');

# --- kill -9: the postmaster restarts the whole server -----------------------
my $pid3 = status_of($node, 'service_pid');
$logpos = log_position($node);
ok(kill('KILL', $pid3), 'SIGKILL to the service');
ok(wait_for_log($node, qr/terminating any other active server processes/, $logpos),
	'the postmaster starts a crash restart');
bg_send($bg, 'SELECT 3;');
ok( bg_wait_stderr(
		$bg,
		qr/terminating connection because of crash of another server process|server closed the connection unexpectedly|connection to server was lost/
	),
	'open sessions are terminated by the crash restart');
bg_quit($bg);
ok($node->poll_query_until('postgres', 'SELECT 1', '1'), 'the server is back');
ok(wait_for_service($node), 'the service is back');
isnt(status_of($node, 'service_pid'), $pid3, 'with a new pid');
$log = log_since($node, $logpos);
like($log, qr/terminated by signal 9/, 'the postmaster saw the service killed');
like($log, qr/all server processes terminated; reinitializing/,
	'and reinitialized the server');
is($node->safe_psql('postgres', 'SELECT gpuext_service_roundtrip(10) > 0'),
	't', 'round trips work after the crash restart');
is($node->safe_psql('postgres', "SELECT sum(visible) FROM gpuext_page_counts('t')"),
	'5000', 'gpuext_page_counts works after the crash restart');
is( status_of($node, 'device_memory_in_use = 0 AND dma_arena_in_use = 0'),
	't', 'nothing is held after the crash restart');

$node->stop;
done_testing();
