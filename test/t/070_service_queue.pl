# The submission queue across the wrap-around of its counters: with
# gpuext.debug_queue_start = 8 the counters start 8 requests before they
# wrap.  The GPU service is stopped (SIGSTOP) while 40 sessions each submit
# a request, so that 40 requests are queued across the wrap at once; after
# SIGCONT every one of them completes, none is lost (a lost request would
# hang its session until statement_timeout) and none runs twice (the
# service counts each request it serves once).  Then 40 sessions send
# 20,000 more requests concurrently through the wrapped queue, and the
# service's count of served requests grows by exactly the number sent.
# The server is sized so that it has 508 request slots (the default
# configuration's number, which does not divide 2^32).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $nclients = 40;
my $per_client = 500;

# (100 + 3 autovacuum workers + 1 launcher + 8 worker processes + 10 WAL
# senders + 5 auxiliary processes) x 4 slots each = 508 slots
my $node = gpuext_node(
	'service_queue', qq{
max_connections = 100
autovacuum_max_workers = 3
max_worker_processes = 8
max_wal_senders = 10
wal_level = replica
max_prepared_transactions = 0
gpuext.debug_queue_start = 8
});

my $service = status_of($node, 'service_pid');
like($service, qr/^\d+$/, 'the service has a pid');
my $served0 = status_of($node, 'requests_served');

my @s = map { bg_start($node) } 1 .. $nclients;
my @pids = map { bg_pid($_) } @s;
bg_query($_, "SET statement_timeout = '20s'") for @s;

# --- 40 requests queued across the wrap at once ---------------------------------
ok(kill('STOP', $service), 'the service is stopped');
for my $i (0 .. $#s)
{
	bg_send($s[$i], "SELECT 'ok' || gpuext_service_roundtrip(1)::int * 0;\n\\echo roundtrip_done_$i");
}
my $pidlist = join(',', @pids);
my $queued = $node->poll_query_until(
	'postgres',
	"SELECT count(*) = $nclients FROM pg_stat_activity
	  WHERE pid IN ($pidlist) AND wait_event = 'Extension'");
ok($queued, "$nclients sessions wait for their request");
ok(kill('CONT', $service), 'the service continues');

my $completed = 0;
my $errors = '';
for my $i (0 .. $#s)
{
	if (bg_wait_stdout($s[$i], qr/roundtrip_done_$i\n/)
		&& $s[$i]{last_stdout} =~ /^ok0$/m)
	{
		$completed++;
	}
	$errors .= $s[$i]{stderr};
	$s[$i]{stderr} = '';
}
is($completed, $nclients, 'every request queued across the wrap completed');
is($errors, '', 'without an error');
is(status_of($node, 'requests_served') - $served0,
	$nclients, 'the service served each of them once');

# --- many concurrent requests through the wrapped queue ---------------------------
my $served1 = status_of($node, 'requests_served');
for my $i (0 .. $#s)
{
	bg_send($s[$i],
		"SELECT 'ok' || gpuext_service_roundtrip($per_client)::int * 0;\n\\echo loop_done_$i");
}
$completed = 0;
for my $i (0 .. $#s)
{
	if (bg_wait_stdout($s[$i], qr/loop_done_$i\n/)
		&& $s[$i]{last_stdout} =~ /^ok0$/m)
	{
		$completed++;
	}
	$errors .= $s[$i]{stderr};
	$s[$i]{stderr} = '';
}
is($completed, $nclients, "$nclients sessions sent $per_client requests each");
is($errors, '', 'without an error');
is( status_of($node, 'requests_served') - $served1,
	$nclients * $per_client,
	'the service served every request exactly once');
is(status_of($node, 'dma_arena_in_use'), '0', 'no DMA arena space is left held');
unlike(slurp_file($node->logfile), qr/abandoned to the GPU service|queue is full/,
	'no request was abandoned and the queue never overflowed');

bg_quit($_) for @s;
$node->stop;
done_testing();
