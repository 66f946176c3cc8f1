# gpuext_page_counts at the edges of the buffer manager: temporary tables
# (local buffers, not shared_buffers: this session's must not crash the
# server, another session's must be refused) and batches of more pages
# than shared_buffers can pin at once.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $node = gpuext_node('edges');
my $logpos = log_position($node);

# --- this session's temporary table ---------------------------------------------
my ($rc, $out, $err) = $node->psql(
	'postgres',
	"CREATE TEMP TABLE tt AS SELECT g AS a FROM generate_series(1, 1000) g;
	 SELECT sum(visible) FROM gpuext_page_counts('tt', 'cpu');",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
my $crashed = $err =~ /server closed the connection unexpectedly|connection to server was lost/
  || log_since($node, $logpos) =~ /terminated by signal/;
ok(!$crashed, 'gpuext_page_counts on a temporary table does not crash the server');
like($err, qr/ERROR:  0A000: gpuext cannot read temporary relation "tt"/,
	'a temporary table is refused: its pages are not in shared buffers');
wait_for_log($node, qr/all server processes terminated; reinitializing/, $logpos)
  if $crashed;
ok($node->poll_query_until('postgres', 'SELECT 1', '1'), 'the server accepts connections');
ok(wait_for_service($node), 'the service is up');

# --- another session's temporary table ------------------------------------------
my $s = bg_start($node);
bg_query($s, 'CREATE TEMP TABLE theirs AS SELECT g AS a FROM generate_series(1, 1000) g');
my $oid = bg_query($s, "SELECT 'theirs'::regclass::oid");
$logpos = log_position($node);
($rc, $out, $err) = $node->psql('postgres',
	"SELECT * FROM gpuext_page_counts($oid, 'cpu')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  0A000: gpuext cannot read temporary relation "theirs"/,
	"another session's temporary table is refused");
unlike(log_since($node, $logpos), qr/terminated by signal/, 'without a crash');
bg_quit($s);

# --- batches larger than shared_buffers -------------------------------------------
# 32MB of shared_buffers hold 4096 pages; the table has about 5900.
$node->safe_psql('postgres',
	"CREATE TABLE big AS SELECT g AS a, repeat('x', 200) AS b FROM generate_series(1, 200000) g");
is( $node->safe_psql(
		'postgres',
		"SET gpuext.max_batch_pages = 1024; SELECT sum(visible) FROM gpuext_page_counts('big')"),
	'200000',
	'batches of a quarter of shared_buffers work');
($rc, $out, $err) = $node->psql('postgres',
	"SET gpuext.max_batch_pages = 65536; SELECT sum(visible) FROM gpuext_page_counts('big')");
# batches are capped to a share of shared_buffers, whatever the setting
is($out, '200000', 'gpuext.max_batch_pages above shared_buffers still works')
  or diag($err);
is($node->safe_psql('postgres', "SELECT count(*) FROM big"), '200000',
	'other queries work afterwards');
is(status_of($node, 'device_memory_in_use = 0 AND dma_arena_in_use = 0'),
	't', 'nothing is held at the end');

$node->stop;
done_testing();
