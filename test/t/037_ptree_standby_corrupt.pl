# A gpuext_ptree page of the wrong generation is corruption on a streaming
# standby too.  Readers do not wait for merges: a page of another
# generation than the part (main, the sealed delta of a merge in progress,
# the delta) they expect it in is a merge's doing only if the metapage has
# had a seal or a switch since they read it; on a standby, whose replay
# takes no merge lock, readers never keep merges out, so without that rule
# they would start again for ever.  The standby's copy of each index gets
# one page's generation changed on disk (a leaf, a page of the sealed delta
# that a cancelled merge left, a page of the delta); every way of reading
# it (index scan, bitmap scan, = ANY through the mirror, a batched join)
# then fails with SQLSTATE XX002 naming the block, well within
# statement_timeout.  The primary's copies stay sound and answer.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use GpuextTest;

my $BLCKSZ = 8192;
my $NROWS = 20000;    # in main: about 50 leaves under one directory page

my $node = gpuext_node('ptree_standby_corrupt', "wal_level = replica\nmax_wal_senders = 4\n");

# three tables alike: main, a delta of two pages; t_sealed also a sealed
# delta, left by a merge cancelled in progress.  No autovacuum: its merges
# would replace the damaged generations on the primary, and so on the
# standby.
$node->safe_psql(
	'postgres', qq{
CREATE TABLE o (a int) WITH (autovacuum_enabled = off);
INSERT INTO o SELECT g * 37 FROM generate_series(1, 500) g;
ANALYZE o;
});
for my $t (qw(t_leaf t_delta t_sealed))
{
	$node->safe_psql(
		'postgres', qq{
CREATE TABLE $t (k int) WITH (autovacuum_enabled = off);
INSERT INTO $t SELECT g FROM generate_series(1, $NROWS) g;
CREATE INDEX i_$t ON $t USING gpuext_ptree (k) WITH (delta_pages = 1000);
INSERT INTO $t SELECT g FROM generate_series($NROWS + 1, $NROWS + 500) g;
ANALYZE $t;
});
}
# the delta of 2 pages is full at 1: the next insert merges, held before its
# switch and cancelled there
$node->safe_psql('postgres', 'ALTER INDEX i_t_sealed SET (delta_pages = 1)');
my ($ret, $out, $err) = $node->psql('postgres',
	"SET gpuext.debug_ptree_merge_delay = '60s'; SET statement_timeout = '2s';\n"
	  . "INSERT INTO t_sealed SELECT g FROM generate_series($NROWS + 501, $NROWS + 1500) g");
like($err, qr/canceling statement due to statement timeout/, 'the merge is cancelled in progress');
$node->safe_psql('postgres', "INSERT INTO t_sealed SELECT g FROM generate_series(1, 10) g");
is($node->psql('postgres',
		"SELECT gpuext_ptree_check('i_t_leaf', true), gpuext_ptree_check('i_t_delta', true), gpuext_ptree_check('i_t_sealed', true)"),
	0, 'the indexes pass the checker on the primary');
$node->safe_psql('postgres', 'CHECKPOINT');

$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('ptree_corrupt_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby, 'replay', $node->lsn('insert'));
$standby->safe_psql('postgres', 'CHECKPOINT');

sub read_block
{
	my ($file, $blk) = @_;
	open(my $fh, '<', $file) or die "open $file: $!";
	binmode $fh;
	sysseek($fh, $blk * $BLCKSZ, 0) or die;
	my $page;
	sysread($fh, $page, $BLCKSZ) == $BLCKSZ or die "short read of $file block $blk";
	close $fh;
	return $page;
}

sub write_block
{
	my ($file, $blk, $page) = @_;
	open(my $fh, '+<', $file) or die "open $file: $!";
	binmode $fh;
	sysseek($fh, $blk * $BLCKSZ, 0) or die;
	syswrite($fh, $page, $BLCKSZ) == $BLCKSZ or die "short write of $file";
	close $fh;
	return;
}

# the special space: generation, type, level, next
sub next_of { return unpack('V', substr($_[0], $BLCKSZ - 8, 4)); }

sub chain
{
	my ($file, $blk) = @_;
	my @blocks;
	while ($blk != 0xFFFFFFFF)
	{
		push @blocks, $blk;
		$blk = next_of(read_block($file, $blk));
	}
	return @blocks;
}

# the int4 key of tuple 1 of a page (normalized: big-endian, sign bit
# flipped)
sub first_key_of
{
	my ($page) = @_;
	my $off = unpack('V', substr($page, 24, 4)) & 0x7fff;
	return unpack('N', substr($page, $off + 6, 4)) ^ 0x80000000;
}

# the metapage's first leaf, delta head and sealed delta head
sub meta_of
{
	my ($page) = @_;
	return (
		first_leaf => unpack('V', substr($page, 48, 4)),
		delta_head => unpack('V', substr($page, 80, 4)),
		sealed_head => unpack('V', substr($page, 124, 4)));
}

my %damaged;
my %file;
my %key;
$standby->stop;
for my $t (qw(t_leaf t_delta t_sealed))
{
	$file{$t} = $standby->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('i_$t')");
	my %m = meta_of(read_block($file{$t}, 0));
	my $head =
	    $t eq 't_leaf' ? $m{first_leaf}
	  : $t eq 't_delta' ? $m{delta_head}
	  : $m{sealed_head};
	die "$t: no chain to damage" if $head == 0xFFFFFFFF;
	my @blocks = chain($file{$t}, $head);
	my $blk = $t eq 't_leaf' ? $blocks[10] : $blocks[0];
	my $page = read_block($file{$t}, $blk);
	$key{$t} = $t eq 't_leaf' ? first_key_of($page) : 5;
	my $gen = unpack('V', substr($page, $BLCKSZ - 16, 4));
	substr($page, $BLCKSZ - 16, 4) = pack('V', $gen + 1000);
	write_block($file{$t}, $blk, $page);
	$damaged{$t} = $blk;
}
$standby->start;

# the join is a PtreeBatchJoin (its lookups read the delta chains
# themselves)
my $join_sql = "SET enable_hashjoin = off; SET enable_mergejoin = off; SET gpuext.enable_gpujoin = off;\n";
like($node->safe_psql('postgres', $join_sql . "EXPLAIN (COSTS OFF) SELECT count(*) FROM o JOIN t_delta ON t_delta.k = o.a"),
	qr/PtreeBatchJoin/, 'the join is a PtreeBatchJoin');
for my $t (qw(t_leaf t_delta t_sealed))
{
	my $blk = $damaged{$t};
	my @queries = (
		[ eq => "SET enable_seqscan = off; SET gpuext.enable_gpuscan = off; SET gpuext.enable_gpuagg = off; SET enable_bitmapscan = off;\n"
			  . "SELECT count(*) FROM $t WHERE k = $key{$t}" ],
		[ range => "SET enable_seqscan = off; SET gpuext.enable_gpuscan = off; SET gpuext.enable_gpuagg = off; SET enable_indexscan = off;\n"
			  . "SELECT count(*) FROM $t WHERE k BETWEEN 1 AND 1000000" ],
		[ any => "SET enable_seqscan = off; SET gpuext.enable_gpuscan = off; SET gpuext.enable_gpuagg = off; SET enable_bitmapscan = off; SET gpuext.ptree_batch_min = 1;\n"
			  . "SELECT count(*) FROM $t WHERE k = ANY (ARRAY(SELECT generate_series(1, $NROWS + 600, 7)))" ],
		[ join => $join_sql . "SELECT count(*) FROM o JOIN $t ON $t.k = o.a" ],
	);
	for my $q (@queries)
	{
		my ($qname, $sql) = @$q;
		my ($qout, $qerr, $timed_out) = ('', '', 0);
		my $t0 = time;
		$standby->psql(
			'postgres',
			"\\set VERBOSITY verbose\nSET statement_timeout = '20s';\n$sql",
			stdout => \$qout,
			stderr => \$qerr,
			timeout => 60,
			timed_out => \$timed_out,
			on_error_stop => 0);
		my $secs = time - $t0;
		ok(!$timed_out && $qerr !~ /57014/,
			sprintf('%s: %s ends before the timeout (%.1f s)', $t, $qname, $secs));
		like($qerr, qr/ERROR:\s+XX002: .*?\b[Bb]lock $blk\b/s,
			"$t: $qname fails with XX002 naming block $blk");
	}
}

# the primary's copies are sound
for my $t (qw(t_leaf t_delta t_sealed))
{
	is($node->safe_psql('postgres',
			"SET enable_seqscan = off; SET gpuext.enable_gpuscan = off; SET gpuext.enable_gpuagg = off; SET enable_bitmapscan = off; SELECT count(*) FROM $t WHERE k BETWEEN 1 AND 1000000"),
		$t eq 't_sealed' ? $NROWS + 500 + 10 : $NROWS + 500,
		"$t: the primary answers");
}

my $log = slurp_file($standby->logfile);
unlike($log, qr/terminated by signal|PANIC/, 'no standby backend crashed');

$standby->stop;
$node->stop;
done_testing();
