# gpuext_gist and crashes: kill -9 of a backend in the middle of a large
# insert (many node splits), an immediate shutdown after committed inserts
# (redo of every record, checked with wal_consistency_checking), the
# unlogged index reset from its init fork; after each, gpuext_gist_check
# passes with heapallindexed and index scans equal sequential scans.  Last,
# a damaged page is reported by the checker.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $node = gpuext_node('gist_crash', "wal_consistency_checking = 'generic'\n");

# the same rows through the index and through a sequential scan
sub same_answers
{
	my ($node, $table, $label) = @_;
	my $q = "SELECT count(*), coalesce(sum(hashint4(id)), 0) FROM $table
	          WHERE bx && box '(100,100),(300,300)' OR bx && box '(900,5),(950,40)'";
	my $seq = $node->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_bitmapscan = off; $q");
	my $idx = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; $q");
	my $bmp = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_indexscan = off; $q");
	ok($seq =~ /^[1-9]/, "$label: the query finds rows ($seq)");
	is($idx, $seq, "$label: index scan = sequential scan");
	is($bmp, $seq, "$label: bitmap scan = sequential scan");
}

sub check_index
{
	my ($node, $index, $label) = @_;
	my ($rc, $out, $err) = $node->psql('postgres',
		"SELECT leaf_entries = heap_tuples FROM gpuext_gist_check('$index', true)");
	is($rc, 0, "$label: gpuext_gist_check runs") or diag($err);
	is($out, 't', "$label: every heap tuple is indexed");
}

$node->safe_psql(
	'postgres', q{
CREATE TABLE boxes (id int, bx box);
INSERT INTO boxes SELECT g, box(point(g % 997, g % 991), point(g % 997 + 2, g % 991 + 3))
  FROM generate_series(1, 5000) g;
CREATE INDEX boxes_bx ON boxes USING gpuext_gist (bx) WITH (node_size = 8);
CHECKPOINT;
});

# 1. kill -9 of a backend inserting (splits on every few rows)
my $s = bg_start($node);
my $pid = bg_pid($s);
bg_send($s, q{INSERT INTO boxes SELECT g, box(point(g % 997, g % 991), point(g % 997 + 1, g % 991 + 1))
  FROM generate_series(100001, 100000000) g;});
ok( $node->poll_query_until(
		'postgres',
		"SELECT pg_relation_size('boxes_bx') > 4 * 1024 * 1024"),
	'the insert has grown the index');
my $logpos = log_position($node);
ok(kill('KILL', $pid), 'SIGKILL to the inserting backend');
bg_wait_stderr($s, qr/server closed the connection unexpectedly|connection to server was lost/);
bg_quit($s);
ok(wait_for_log($node, qr/all server processes terminated; reinitializing/, $logpos),
	'the postmaster restarts the server');
ok($node->poll_query_until('postgres', 'SELECT 1', '1'), 'the server is back');
is($node->safe_psql('postgres', 'SELECT count(*) FROM boxes'), '5000',
	'the uncommitted insert is gone');
check_index($node, 'boxes_bx', 'after kill -9');
same_answers($node, 'boxes', 'after kill -9');

# the index takes inserts, deletes and vacuum after the crash
$node->safe_psql(
	'postgres', q{
INSERT INTO boxes SELECT g, box(point(g % 997, g % 991), point(g % 997 + 1, g % 991 + 1))
  FROM generate_series(5001, 20000) g;
DELETE FROM boxes WHERE id % 5 = 0;
VACUUM boxes;
});
check_index($node, 'boxes_bx', 'after more inserts and vacuum');
same_answers($node, 'boxes', 'after more inserts and vacuum');

# 2. immediate shutdown after committed inserts: redo of every record since
# the checkpoint (wal_consistency_checking compares each page with its image)
$node->safe_psql(
	'postgres', q{
CHECKPOINT;
INSERT INTO boxes SELECT g, box(point(g % 997, g % 991), point(g % 997 + 4, g % 991 + 4))
  FROM generate_series(20001, 40000) g;
DELETE FROM boxes WHERE id % 7 = 0;
VACUUM boxes;
CREATE INDEX boxes_bx2 ON boxes USING gpuext_gist (bx) WITH (node_size = 32, fillfactor = 70);
INSERT INTO boxes SELECT g, box(point(g % 997, g % 991), point(g % 997 + 1, g % 991 + 1))
  FROM generate_series(40001, 45000) g;
CREATE UNLOGGED TABLE uboxes (id int, bx box);
INSERT INTO uboxes SELECT g, box(point(g, g), point(g + 1, g + 1)) FROM generate_series(1, 3000) g;
CREATE INDEX uboxes_bx ON uboxes USING gpuext_gist (bx) WITH (node_size = 8);
});
my $count = $node->safe_psql('postgres', 'SELECT count(*) FROM boxes');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) FROM boxes'), $count,
	'committed rows are there after crash recovery');
check_index($node, 'boxes_bx', 'after crash recovery');
check_index($node, 'boxes_bx2', 'an index built since the checkpoint, after crash recovery');
same_answers($node, 'boxes', 'after crash recovery');
unlike(slurp_file($node->logfile), qr/inconsistent page found/,
	'wal_consistency_checking found no inconsistent page');

# the unlogged index was reset from its init fork: empty, and it works
is($node->safe_psql('postgres', 'SELECT count(*) FROM uboxes'), '0', 'unlogged table reset');
check_index($node, 'uboxes_bx', 'unlogged index after the reset');
$node->safe_psql('postgres',
	"INSERT INTO uboxes SELECT g, box(point(g, g), point(g + 1, g + 1)) FROM generate_series(1, 3000) g");
check_index($node, 'uboxes_bx', 'unlogged index after inserts');
is( $node->safe_psql(
		'postgres',
		"SET enable_seqscan = off; SELECT count(*) FROM uboxes WHERE bx && box '(10,10),(20,20)'"),
	'12', 'unlogged index answers');

$node->safe_psql('postgres', 'DROP INDEX boxes_bx2');

# 3. a damaged inner node: its first entry's box no longer covers its child
my $path = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('boxes_bx')");
$node->stop;
open(my $fh, '+<', $path) or die "open $path: $!";
binmode $fh;
my $meta;
sysseek($fh, 24, 0) or die;
sysread($fh, $meta, 16) == 16 or die;
my ($magic, $version, $root, $root_level) = unpack('LLLL', $meta);
is(sprintf('%x', $magic), '47584754', 'metapage magic');
ok($root_level > 0, 'the root is an inner node');
sysseek($fh, $root * 8192 + 24, 0) or die;
syswrite($fh, pack('d', 1e18)) == 8 or die;
close($fh);
$node->start;
my ($rc, $out, $err) = $node->psql('postgres', "SELECT gpuext_gist_check('boxes_bx', false)");
isnt($rc, 0, 'the checker fails on the damaged index');
like($err, qr/is corrupted at block \d+: an entry's box is not covered by its parent's/,
	'and says where and what');

$node->stop;
done_testing();
