# The GPU service's checks of the requests it runs and of the tasks they
# name, on the host test device (gpuext.debug_host_device) where there is
# no GPU (on the GPU where there is one):
# - every request is validated against its batch and its task before it
#   runs: a fetch beyond its group table, an output area too small, an
#   unknown task, another session's task, and (on the CPU engine too) a
#   page count over a buffer outside shared_buffers or with too small an
#   output area end in a clean ERROR XX000, never a crash;
# - a session may not use or free another session's task;
# - the tasks of a session that ended are freed by the service, also when
#   the pid they name belongs to a live process (a reused pid);
# - the counters: a task freed twice (as the processes of a parallel
#   query do) is no failure, an injected allocation failure is one.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $node = gpuext_node('service_requests', "gpuext.debug_host_device = on\n");
# (with a GPU, the requests go to it instead)
like(status_of($node, 'detail'), has_gpu() ? qr/.*/ : qr/host test device/,
	'the host test device is up');
my $mem0 = status_of($node, 'device_memory_in_use');
is($mem0, '0', 'no device memory in use');

my $a = bg_start($node);
my $b = bg_start($node);

# Run $sql in session $s; return its stderr (errors with SQLSTATE).
sub err_of
{
	my ($s, $sql) = @_;
	my ($out, $err) = bg_query($s, $sql);
	return $err;
}

my $malformed = qr/ERROR:  XX000: gpuext: the (GPU service|CPU engine) rejected a malformed request/;

# --- validation of every request before it runs ---------------------------------
# (not a session task, which a transaction's abort would free)
my $task = bg_query($a, "SELECT gpuext_debug_task_create(1048576, 'none')");
like($task, qr/^\d+$/, "session A made task $task");
is(status_of($node, 'device_memory_in_use'), '1048576', 'it holds 1 MB of device memory');
is(bg_query($a, "SELECT gpuext_debug_request('fetch', 'service', $task, 0, 100)"),
	'0', 'a well-formed fetch of its entries works');
like(err_of($a, "SELECT gpuext_debug_request('fetch', 'service', $task, 60000, 1000)"),
	qr/$malformed.*\n.*DETAIL:  entries \[60000, 61000\) lie outside the group table/,
	'a fetch beyond the group table is rejected');
like(err_of($a, "SELECT gpuext_debug_request('fetch', 'service', $task, 0, 100, 64)"),
	qr/$malformed.*\n.*DETAIL:  the output area \(64 bytes\) is too small/,
	'a fetch into too small an output area is rejected');
like(err_of($a, "SELECT gpuext_debug_request('fetch', 'service', 999999, 0, 1)"),
	qr/$malformed.*\n.*DETAIL:  no such GPU task/, 'a fetch of an unknown task is rejected');
like(err_of($a, "SELECT gpuext_debug_request('page_count', 'service', 0, 0, 4, 16)"),
	qr/$malformed.*\n.*DETAIL:  the output area \(16 bytes\) is too small for 4 pages/,
	'the service rejects a page count with too small an output area');
like(err_of($a, "SELECT gpuext_debug_request('page_count', 'service', 0, 1000000000, 1)"),
	qr/$malformed.*\n.*DETAIL:  page 0 of the batch names buffer 1000000000/,
	'the service rejects a page outside shared_buffers');
like(err_of($a, "SELECT gpuext_debug_request('page_count', 'cpu', 0, 0, 4, 16)"),
	qr/$malformed.*\n.*DETAIL:  the output area \(16 bytes\) is too small for 4 pages/,
	'the CPU engine rejects a page count with too small an output area');
like(err_of($a, "SELECT gpuext_debug_request('page_count', 'cpu', 0, 1000000000, 1)"),
	qr/$malformed.*\n.*DETAIL:  page 0 of the batch names buffer 1000000000/,
	'the CPU engine rejects a page outside shared_buffers');
like(bg_query($a, "SELECT gpuext_debug_request('page_count', 'service', 0, 0, 4)"),
	qr/^\d+$/, 'a well-formed page count works on the service');
like(bg_query($a, "SELECT gpuext_debug_request('page_count', 'cpu', 0, 0, 4)"),
	qr/^\d+$/, 'and on the CPU engine');

# --- another session's task ---------------------------------------------------------
like(err_of($b, "SELECT gpuext_debug_request('fetch', 'service', $task, 0, 100)"),
	qr/$malformed.*\n.*DETAIL:  the GPU task belongs to another process/,
	"session B may not fetch A's task");
is(err_of($b, "SELECT gpuext_debug_task_destroy($task)"), '',
	"B's destroy of A's task returns (destroys ignore failures)");
is(bg_query($a, "SELECT gpuext_debug_request('fetch', 'service', $task, 0, 100)"),
	'0', "but A's task is still there");
is(status_of($node, 'device_memory_in_use'), '1048576', 'with its memory');

# --- counters: a task freed twice is no failure; an injected one is ------------------
my ($failed, $served) = split /\|/, status_of($node, 'requests_failed, requests_served');
is(err_of($a, "SELECT gpuext_debug_task_destroy($task)"), '', "A frees its task");
is(err_of($a, "SELECT gpuext_debug_task_destroy($task)"), '', 'and frees it again');
is(status_of($node, 'requests_failed'), $failed, 'the second free is not a failure');
is(status_of($node, 'device_memory_in_use'), '0', 'the memory is free');
$failed = status_of($node, 'requests_failed');
like(
	err_of(
		$a, "SELECT gpuext_debug_inject_fault('alloc', 1);
		     SELECT gpuext_debug_task_create(65536, 'session')"),
	qr/ERROR:  53200: out of GPU memory\n.*DETAIL:  cudaMalloc: out of memory \(injected fault\)/,
	'an injected allocation failure gives 53200');
is(status_of($node, 'requests_failed'), $failed + 1, 'and counts as a failed request');
like(
	err_of(
		$a, "SELECT gpuext_debug_inject_fault('kernel', 1);
		     SELECT gpuext_debug_request('page_count', 'service', 0, 0, 4)"),
	qr/ERROR:  58000: GPU device error\n.*DETAIL:  kernel reported an error \(injected fault\)/,
	'an injected kernel error gives 58000');
is(status_of($node, 'requests_failed'), $failed + 2, 'and counts as a failed request');

# --- the tasks of ended sessions --------------------------------------------------------
# a session leaves a task it does not free itself; it exits
my $c = bg_start($node);
my $cpid = bg_pid($c);
my $orphan = bg_query($c, "SELECT gpuext_debug_task_create(2097152, 'none')");
is(status_of($node, 'device_memory_in_use'), '2097152', "session C left task $orphan");
bg_quit($c);
ok($node->poll_query_until('postgres', "SELECT device_memory_in_use = 0 FROM gpuext_status()"),
	'the service frees it once C has ended');
like(slurp_file($node->logfile), qr/freeing task $orphan of ended session/, 'and says so');

# the same when the pid the task names is a live process's (a reused pid):
# the postmaster's
my $postmaster = $node->{_pid};
my $d = bg_start($node);
my $reused = bg_query($d, "SELECT gpuext_debug_task_create(3145728, 'none', $postmaster)");
is(status_of($node, 'device_memory_in_use'), '3145728', "session D left task $reused, naming pid $postmaster");
bg_quit($d);
ok($node->poll_query_until('postgres', "SELECT device_memory_in_use = 0 FROM gpuext_status()"),
	'the service frees it once D has ended, though its pid is alive');

# a session's own tasks go with it (its exit frees them)
my $e = bg_start($node);
my $epid = bg_pid($e);
bg_query($e, "SELECT gpuext_debug_task_create(1048576, 'session')");
is(status_of($node, 'device_memory_in_use'), '1048576', 'session E holds a session task');
is($node->safe_psql('postgres', "SELECT pg_terminate_backend($epid)"), 't', 'E is terminated');
bg_quit($e);
ok($node->poll_query_until('postgres',
		"SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 FROM gpuext_status()"),
	"E's task is freed");

# --- only superusers ------------------------------------------------------------------------
$node->safe_psql('postgres', 'CREATE ROLE regress_plain LOGIN');
for my $call ("gpuext_debug_task_create(65536)", "gpuext_debug_task_destroy(1)",
	"gpuext_debug_request('noop')")
{
	my ($rc, $out, $err) = $node->psql('postgres', "SELECT $call",
		extra_params => [ '-U', 'regress_plain', '-v', 'VERBOSITY=verbose' ]);
	like($err, qr/ERROR:  42501: permission denied for function/, "$call: plain roles may not");
}

is(bg_query($a, 'SELECT 1'), '1', 'session A is fine');
is(bg_query($b, 'SELECT 1'), '1', 'session B is fine');
bg_quit($a);
bg_quit($b);
ok($node->poll_query_until('postgres',
		"SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 FROM gpuext_status()"),
	'nothing is left held');
unlike(slurp_file($node->logfile), qr/server process .* was terminated by signal|PANIC/,
	'no process crashed');

$node->stop;
done_testing();
