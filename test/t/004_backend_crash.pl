# kill -9 of a backend in the middle of gpuext_debug_sleep: the postmaster
# restarts the server (crash recovery), committed rows survive, the GPU
# service comes back, and requests and gpuext_page_counts work again.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $node = gpuext_node('backend_crash');

# committed before the crash
$node->safe_psql(
	'postgres', q{
CREATE TABLE kept (id int, pad text);
INSERT INTO kept SELECT g, repeat('z', g % 30) FROM generate_series(1, 10000) g;
DELETE FROM kept WHERE id % 10 = 0;
});
my $pages_before = $node->safe_psql('postgres',
	"SELECT count(*) || '/' || sum(visible) FROM gpuext_page_counts('kept')");
like($pages_before, qr{^\d+/9000$}, 'page counts before the crash');
my $pid_service = status_of($node, 'service_pid');

# a backend in the middle of a request, and a transaction in progress
my $s = bg_start($node);
my $pid = bg_pid($s);
bg_query($s, "BEGIN; INSERT INTO kept SELECT g, 'uncommitted' FROM generate_series(10001, 10100) g;");
bg_send($s, 'SELECT gpuext_debug_sleep(60000, 64);');
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE pid = $pid AND state = 'active' AND wait_event = 'Extension'"),
	'the backend is in gpuext_debug_sleep');
if (has_gpu())
{
	ok( $node->poll_query_until(
			'postgres',
			"SELECT device_memory_in_use >= 64 * 1024 * 1024 FROM gpuext_status()"),
		'the service holds its device memory');
}

my $logpos = log_position($node);
ok(kill('KILL', $pid), 'SIGKILL to the backend');
ok(bg_wait_stderr($s, qr/server closed the connection unexpectedly|connection to server was lost/),
	'its session is gone');
bg_quit($s);
ok(wait_for_log($node, qr/all server processes terminated; reinitializing/, $logpos),
	'the postmaster restarts the server');
ok($node->poll_query_until('postgres', 'SELECT 1', '1'), 'the server accepts connections again');
like(log_since($node, $logpos), qr/server process \(PID $pid\) was terminated by signal 9/,
	'the log names the killed backend');

is($node->safe_psql('postgres', 'SELECT count(*), max(id) FROM kept'),
	'9000|9999', 'committed rows are there, the uncommitted ones are not');
ok(wait_for_service($node), 'the GPU service is back');
isnt(status_of($node, 'service_pid'), $pid_service, 'as a new process');
is(status_of($node, 'device_memory_in_use = 0 AND dma_arena_in_use = 0'),
	't', 'nothing is held after the restart');
is($node->safe_psql('postgres', 'SELECT gpuext_service_roundtrip(10) > 0'),
	't', 'round trips work');
is( $node->safe_psql(
		'postgres', "SELECT count(*) || '/' || sum(visible) FROM gpuext_page_counts('kept')"),
	$pages_before, 'gpuext_page_counts gives what it gave before the crash');
is( $node->safe_psql(
		'postgres', "SELECT count(*) || '/' || sum(visible) FROM gpuext_page_counts('kept', 'cpu')"),
	$pages_before, 'on the CPU engine too');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM (
		   (SELECT blkno, visible FROM gpuext_page_counts('kept')
		    EXCEPT ALL
		    SELECT (ctid::text::point)[0]::bigint, count(*)::int FROM kept GROUP BY 1)
		   UNION ALL
		   (SELECT (ctid::text::point)[0]::bigint, count(*)::int FROM kept GROUP BY 1
		    EXCEPT ALL
		    SELECT blkno, visible FROM gpuext_page_counts('kept'))) d"),
	'0', 'and it matches the visible rows by ctid');
is($node->safe_psql('postgres', "SELECT gpuext_debug_sleep(10, 16) IN ('gpu', 'cpu')"),
	't', 'gpuext_debug_sleep works again');
is(status_of($node, 'device_memory_in_use = 0 AND dma_arena_in_use = 0'),
	't', 'nothing is held at the end');

$node->stop;
done_testing();
