# Cancelling long requests: pg_cancel_backend of gpuext_debug_sleep gives
# SQLSTATE 57014 within about 2 seconds and releases device memory and DMA
# arena space; 100 statement_timeouts in a row leak nothing;
# pg_terminate_backend in the middle of a request ends only that session,
# without a crash restart; a stalled transfer (fault transfer_stall, GPU
# only) is ended by statement_timeout.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use GpuextTest;

my $node = gpuext_node('cancel');
my $start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
my $released = 'device_memory_in_use = 0 AND dma_arena_in_use = 0';

# Wait until session $pid is inside a gpuext wait (the CPU engine's sleep or
# the wait for the GPU service both report wait_event 'Extension'), and on
# a GPU until the service reserved the request's device memory.
sub wait_until_sleeping
{
	my ($pid, $reserve_mb) = @_;
	my $ok = $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE pid = $pid AND state = 'active' AND wait_event = 'Extension'
		    AND query LIKE '%gpuext_debug_sleep%'");
	if ($ok && has_gpu() && $reserve_mb > 0)
	{
		$ok = $node->poll_query_until('postgres',
			"SELECT device_memory_in_use >= $reserve_mb * 1024 * 1024 FROM gpuext_status()");
	}
	return $ok;
}

# --- pg_cancel_backend --------------------------------------------------------
my $s = bg_start($node);
my $pid = bg_pid($s);
bg_send($s, 'SELECT gpuext_debug_sleep(60000, 64);');
ok(wait_until_sleeping($pid, 64), 'the session is in gpuext_debug_sleep(60000, 64)');
my $t0 = time;
is($node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)"), 't', 'pg_cancel_backend');
ok(bg_wait_stderr($s, qr/ERROR:  57014: canceling statement due to user request/),
	'the request ends with SQLSTATE 57014');
my $elapsed = time - $t0;
cmp_ok($elapsed, '<', 2.5, "promptly ($elapsed s)");
is(bg_query($s, "SELECT $released FROM gpuext_status()"), 't',
	'device memory and DMA arena space are released');
is(bg_query($s, 'SELECT gpuext_debug_sleep(10, 16) IN (\'gpu\', \'cpu\')'), 't',
	'the session runs requests again');

# --- statement_timeout, 100 times -----------------------------------------------
my $cancelled_before = status_of($node, 'requests_cancelled');
my $sql = "SET statement_timeout = '200ms';\n"
  . ("SELECT gpuext_debug_sleep(60000, 64);\n" x 100)
  . "RESET statement_timeout;";
my ($out, $err) = bg_query($s, $sql);
my $n = () = $err =~ /ERROR:  57014: canceling statement due to statement timeout/g;
is($n, 100, '100 statement timeouts give 100 times 57014');
is(bg_query($s, "SELECT $released FROM gpuext_status()"), 't',
	'nothing is left held after 100 timeouts');
SKIP:
{
	skip 'the CPU engine sleeps in the backend, without the service', 1
	  unless has_gpu();
	cmp_ok(status_of($node, 'requests_cancelled'), '>=', $cancelled_before + 100,
		'the service counted the cancelled requests');
}
# the same with requests that make it to the service (on a GPU)
($out, $err) = bg_query(
	$s, "SET statement_timeout = '100ms';\n"
	  . ("SELECT gpuext_service_roundtrip(1000000);\n" x 10)
	  . "RESET statement_timeout;");
$n = () = $err =~ /ERROR:  57014: canceling statement due to statement timeout/g;
is($n, 10, 'round-trip loops are cancelled too');
is(bg_query($s, "SELECT $released FROM gpuext_status()"), 't',
	'nothing is left held after cancelled round trips');
unlike(slurp_file($node->logfile), qr/abandoned to the GPU service|bad DMA arena free/,
	'no request was abandoned and no arena space freed twice');

# --- pg_terminate_backend ---------------------------------------------------------
my $other = bg_start($node);
is(bg_query($other, 'SELECT 1'), '1', 'another session is open');
my $logpos = log_position($node);
bg_send($s, 'SELECT gpuext_debug_sleep(60000, 64);');
ok(wait_until_sleeping($pid, 64), 'the session is in gpuext_debug_sleep again');
is($node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)"),
	't', 'pg_terminate_backend');
ok( bg_wait_stderr(
		$s, qr/FATAL:  57P01: terminating connection due to administrator command/),
	'the session ends with FATAL 57P01');
bg_quit($s);
ok( $node->poll_query_until(
		'postgres', "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid"),
	'the terminated backend is gone');
ok($node->poll_query_until('postgres', "SELECT $released FROM gpuext_status()"),
	'its device memory and DMA arena space are released');
is(bg_query($other, 'SELECT 2'), '2', 'the other session is unaffected');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'),
	$start_time, 'the postmaster start time is unchanged');
unlike(log_since($node, $logpos), qr/terminating any other active server processes/,
	'no crash restart');
ok(wait_for_service($node), 'the service is still up');
is($node->safe_psql('postgres', 'SELECT gpuext_service_roundtrip(10) > 0'),
	't', 'and serves requests');

# --- a stalled transfer ends with statement_timeout --------------------------------
# On a GPU the transfer stalls until cancelled; the CPU engine has no
# transfer, so there the sleep just completes.
($out, $err) = bg_query(
	$other, "SET gpuext.debug_inject_fault = 'transfer_stall';
	 SET statement_timeout = '500ms';
	 SELECT gpuext_debug_sleep(100, 16);
	 RESET statement_timeout;
	 RESET gpuext.debug_inject_fault;");
if (has_gpu())
{
	like($err, qr/ERROR:  57014: canceling statement due to statement timeout/,
		'transfer_stall: the stalled request is cancelled by statement_timeout');
}
else
{
	is($out, 'cpu', 'transfer_stall: the CPU engine completes');
	is($err, '', 'without an error');
}
is(bg_query($other, "SELECT $released FROM gpuext_status()"), 't',
	'nothing is left held after the stalled transfer');
# page counts too (a GPU request; the CPU engine does not stall)
$node->safe_psql('postgres', 'CREATE TABLE t AS SELECT g AS a FROM generate_series(1, 5000) g');
($out, $err) = bg_query(
	$other, "SET gpuext.debug_inject_fault = 'transfer_stall';
	 SET statement_timeout = '500ms';
	 SELECT sum(visible) FROM gpuext_page_counts('t');
	 RESET statement_timeout;
	 RESET gpuext.debug_inject_fault;");
if (has_gpu())
{
	like($err, qr/ERROR:  57014: canceling statement due to statement timeout/,
		'transfer_stall: a stalled page count is cancelled');
}
else
{
	is($out, '5000', 'transfer_stall: the CPU engine counts pages');
}
is(bg_query($other, "SELECT $released FROM gpuext_status()"), 't',
	'nothing is left held at the end');
bg_quit($other);

$node->stop;
done_testing();
