# A backend that gives up on its requests (a cancel, a timeout, its exit)
# never waits long for the GPU service: when the service does not let go
# of a request at once (here: it is stopped with SIGSTOP), the backend
# hands the request over within a fraction of a second and the service
# frees it (its device memory, its DMA arena space, its slot) once it is
# done; the tasks a terminated session held are freed as well.  On the
# host test device (gpuext.debug_host_device) where there is no GPU (on
# the GPU where there is one).  The
# counters say what happened: cancelled and abandoned requests are not
# failures.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use GpuextTest;

my $node = gpuext_node('service_cleanup', "gpuext.debug_host_device = on\n");
my $service = status_of($node, 'service_pid');
my $mb8 = 8 * 1024 * 1024;

# Wait until session $pid waits for its request (and the service has
# reserved its device memory, when $reserved).
sub wait_in_request
{
	my ($pid, $reserved) = @_;
	return $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE pid = $pid AND state = 'active' AND wait_event = 'Extension'")
	  && (!$reserved
		|| $node->poll_query_until('postgres',
			"SELECT device_memory_in_use >= $reserved FROM gpuext_status()"));
}

my $s = bg_start($node);
my $pid = bg_pid($s);

# --- a cancel the service sees: the request ends at once, as cancelled ----------------
my ($failed, $cancelled) = split /\|/, status_of($node, 'requests_failed, requests_cancelled');
bg_send($s, "SELECT gpuext_debug_sleep(60000, 8, 'service');");
ok(wait_in_request($pid, $mb8), 'the session sleeps in the service, holding 8 MB');
my $t0 = time;
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
ok(bg_wait_stderr($s, qr/ERROR:  57014: canceling statement due to user request/),
	'pg_cancel_backend gives 57014');
# (the ERROR reaches the client before the backend cleans up: the session is
# free again only after that)
is(bg_query($s, 'SELECT 1'), '1', 'the session works again');
my $elapsed = time - $t0;
cmp_ok($elapsed, '<', 1.5, "at once ($elapsed s)");
ok(released_soon($node), 'its device memory and arena space are released');
is(status_of($node, 'requests_cancelled'), $cancelled + 1, 'the request counts as cancelled');
is(status_of($node, 'requests_failed'), $failed, 'not as failed');

# --- a cancel while the service is stopped: handed over, not waited for ------------------
my $abandoned = status_of($node, 'requests_abandoned');
bg_send($s, "SELECT gpuext_debug_sleep(60000, 8, 'service');");
ok(wait_in_request($pid, $mb8), 'the session sleeps in the service again');
ok(kill('STOP', $service), 'the service is stopped');
$t0 = time;
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
ok(bg_wait_stderr($s, qr/ERROR:  57014: canceling statement due to user request/),
	'pg_cancel_backend gives 57014');
is(bg_query($s, 'SELECT 1'), '1', 'the session works again');
$elapsed = time - $t0;
cmp_ok($elapsed, '<', 1.5, "within a fraction of a second ($elapsed s)");
is(status_of($node, 'requests_abandoned'), $abandoned + 1, 'the request was handed to the service');

# a statement_timeout while the service is stopped: the queued request too
$t0 = time;
my ($out, $err) = bg_query($s,
	"SET statement_timeout = '200ms'; SELECT gpuext_service_roundtrip(1); RESET statement_timeout;");
$elapsed = time - $t0;
like($err, qr/ERROR:  57014: canceling statement due to statement timeout/,
	'a round trip queued behind the stopped service times out');
cmp_ok($elapsed, '<', 1.5, "within its timeout and a fraction of a second ($elapsed s)");
is(status_of($node, 'requests_abandoned'), $abandoned + 2, 'handed over too');
cmp_ok(status_of($node, 'dma_arena_in_use'), '>', 0, 'the service holds their arena space');

ok(kill('CONT', $service), 'the service continues');
ok(released_soon($node), 'and frees their device memory and arena space');
like(slurp_file($node->logfile), qr/abandoned to the GPU service, which frees it/,
	'the log says they were handed over');

# --- a session terminated while the service is stopped --------------------------------
my $e = bg_start($node);
my $epid = bg_pid($e);
bg_query($e, "SELECT gpuext_debug_task_create(4194304, 'session')");
bg_send($e, "SELECT gpuext_debug_sleep(60000, 8, 'service');");
ok(wait_in_request($epid, 4194304 + $mb8), 'session E holds a task and sleeps in the service');
ok(kill('STOP', $service), 'the service is stopped');
$t0 = time;
$node->safe_psql('postgres', "SELECT pg_terminate_backend($epid)");
ok( $node->poll_query_until(
		'postgres', "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $epid"),
	'E is gone');
$elapsed = time - $t0;
cmp_ok($elapsed, '<', 1.5, "within a fraction of a second ($elapsed s)");
bg_quit($e);
ok(kill('CONT', $service), 'the service continues');
ok(released_soon($node), "E's task, its sleep's memory and its arena space are freed");

# --- cancels of many sessions while the service is stopped ----------------------------
my @m = map { bg_start($node) } 1 .. 8;
my @mpids = map { bg_pid($_) } @m;
bg_send($_, "SELECT gpuext_debug_sleep(60000, 1, 'service');") for @m;
ok(wait_in_request($_, 0), "session $_ sleeps in the service") for @mpids;
ok(kill('STOP', $service), 'the service is stopped');
$t0 = time;
$node->safe_psql('postgres', "SELECT pg_cancel_backend(pid) FROM unnest(ARRAY[" . join(',', @mpids) . "]) pid");
my $ok = 0;
for my $m (@m)
{
	$ok++ if bg_wait_stderr($m, qr/ERROR:  57014: canceling statement due to user request/)
	  && bg_query($m, 'SELECT 1') eq '1';
}
$elapsed = time - $t0;
is($ok, scalar(@m), 'every session got 57014 and works again');
cmp_ok($elapsed, '<', 3, "all within seconds ($elapsed s)");
ok(kill('CONT', $service), 'the service continues');
ok(released_soon($node), 'everything is freed');
is(bg_query($_, "SELECT gpuext_debug_sleep(1, 1, 'service')"), 'service', 'the session runs requests again')
  for @m;
bg_quit($_) for @m;

is(status_of($node, 'requests_failed'), $failed, 'none of this counted as a failed request');
is(bg_query($s, "SELECT gpuext_service_roundtrip(10) > 0"), 't', 'the service serves requests');
bg_quit($s);
unlike(slurp_file($node->logfile), qr/server process .* was terminated by signal|PANIC/,
	'no process crashed');

$node->stop;
done_testing();
