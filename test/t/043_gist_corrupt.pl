# Every reader of a gpuext_gist index checks the nodes and links it reads:
# with a node damaged on disk in any of the ways below, index and bitmap
# scans, gpuext_gist_probe over the pages and through the CPU engine's copy
# of the tree (the device path), the checker, inserts and VACUUM either give
# the right answer or fail with SQLSTATE XX002 naming the block; never a
# crash, a hang (a child pointer to its own node used to loop a scan and
# deadlock an insert on its own buffer) or wrong rows.  Each case damages
# its own copy of the same table's index, with the server stopped.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $BLCKSZ = 8192;
my $NROWS = 20000;		# points (1..200, 1..100); node_size 16: four levels

my $node = gpuext_node('gist_corrupt');

# the cases, and the queries that must fail (the others must give the
# right answer or fail with XX002)
my %walks = map { $_ => 1 } qw(scan bitmap probe mirror check);
my @cases = (
	{ name => 'none', must => {} },
	# the root's first entry leads to the root
	{ name => 'child_self', must => { %walks, insert_here => 1 } },
	# a level-1 node's first entry leads to the root
	{ name => 'child_up', must => { %walks } },
	{ name => 'child_past_end', must => { %walks } },
	# the 4 bytes of an inner entry's child block flipped
	{ name => 'flip', must => { %walks } },
	{ name => 'leaf_level', must => { %walks, vacuum => 1 } },
	{ name => 'page_id', must => { %walks, vacuum => 1 } },
	# a leaf's entry count (pd_lower) inflated past the node size
	{ name => 'count', must => { %walks } },
	{ name => 'tid_offset', must => { %walks } },
	{ name => 'meta_root_level', must => { %walks, insert_here => 1 } },
	{ name => 'meta_root', must => { %walks, insert_here => 1 } },
);

for my $c (@cases)
{
	my $t = "g_$c->{name}";
	$node->safe_psql(
		'postgres', qq{
CREATE TABLE $t (id int, p point);
INSERT INTO $t SELECT g, point((g - 1) % 200 + 1, (g - 1) / 200 + 1) FROM generate_series(1, $NROWS) g;
CREATE INDEX gi_$c->{name} ON $t USING gpuext_gist (p) WITH (node_size = 16);
});
	$c->{file} = $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('gi_$c->{name}')");
}
$node->safe_psql('postgres', 'CHECKPOINT');
is($node->psql('postgres', "SELECT gpuext_gist_check('gi_none', true)"), 0,
	'the index passes the checker before the damage');
$node->stop;

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

sub patch
{
	my ($file, $blk, $sub) = @_;
	my $page = read_block($file, $blk);
	$sub->($page);
	open(my $fh, '+<', $file) or die "open $file: $!";
	binmode $fh;
	sysseek($fh, $blk * $BLCKSZ, 0) or die;
	syswrite($fh, $page, $BLCKSZ) == $BLCKSZ or die "short write of $file";
	close $fh;
	return;
}

# entry $i of a node: (xlo, ylo, xhi, yhi, blk, off); where it starts
sub entry_at { return 24 + 40 * $_[0]; }
sub entry { return unpack('d4 V v', substr($_[0], entry_at($_[1]), 38)); }
sub level_of { return unpack('v', substr($_[0], $BLCKSZ - 6, 2)); }

# the root, its level, and the nodes along the first entries: $path[l] is
# the node of level l reached from the root by first entries
sub tree_of
{
	my ($file) = @_;
	my ($root, $root_level) = unpack('VV', substr(read_block($file, 0), 32, 8));
	my @path;
	my $blk = $root;
	for (my $l = $root_level; $l >= 0; $l--)
	{
		$path[$l] = $blk;
		$blk = (entry(read_block($file, $blk), 0))[4];
	}
	return ($root, $root_level, @path);
}

my %damage = (
	none => sub { return [0]; },
	child_self => sub {
		my ($c, $root, $root_level, @path) = @_;
		patch($c->{file}, $root, sub { substr($_[0], entry_at(0) + 32, 4) = pack('V', $root); });
		return [$root];
	},
	child_up => sub {
		my ($c, $root, $root_level, @path) = @_;
		patch($c->{file}, $path[1], sub { substr($_[0], entry_at(0) + 32, 4) = pack('V', $root); });
		return [ $root, $path[1] ];
	},
	child_past_end => sub {
		my ($c, $root, $root_level, @path) = @_;
		patch($c->{file}, $root, sub { substr($_[0], entry_at(1) + 32, 4) = pack('V', 999999); });
		return [ $root, 999999 ];
	},
	flip => sub {
		my ($c, $root, $root_level, @path) = @_;
		my $child = (entry(read_block($c->{file}, $path[2]), 2))[4];
		patch($c->{file}, $path[2], sub {
			my $at = entry_at(2) + 32;
			substr($_[0], $at, 4) = substr($_[0], $at, 4) ^ ("\xff" x 4);
		});
		return [ $path[2], ~$child & 0xffffffff ];
	},
	leaf_level => sub {
		my ($c, $root, $root_level, @path) = @_;
		patch($c->{file}, $path[0], sub { substr($_[0], $BLCKSZ - 6, 2) = pack('v', 1); });
		return [ $path[0] ];
	},
	page_id => sub {
		my ($c, $root, $root_level, @path) = @_;
		patch($c->{file}, $path[0], sub { substr($_[0], $BLCKSZ - 2, 2) = pack('v', 0); });
		return [ $path[0] ];
	},
	count => sub {
		my ($c, $root, $root_level, @path) = @_;
		patch($c->{file}, $path[0], sub { substr($_[0], 12, 2) = pack('v', entry_at(200)); });
		return [ $path[0] ];
	},
	tid_offset => sub {
		my ($c, $root, $root_level, @path) = @_;
		patch($c->{file}, $path[0], sub { substr($_[0], entry_at(0) + 36, 2) = pack('v', 0); });
		return [ $path[0] ];
	},
	meta_root_level => sub {
		my ($c, $root, $root_level, @path) = @_;
		patch($c->{file}, 0, sub { substr($_[0], 36, 4) = pack('V', 9); });
		return [ $root, 0 ];
	},
	meta_root => sub {
		my ($c, $root, $root_level, @path) = @_;
		patch($c->{file}, 0, sub { substr($_[0], 32, 4) = pack('V', 999999); });
		return [ 0, 999999 ];
	},
);

for my $c (@cases)
{
	my ($root, $root_level, @path) = tree_of($c->{file});
	die "expected a tree of at least three levels" unless $root_level >= 2;
	# a point inside the root's first entry's box: an insert descends there
	my ($xlo, $ylo, $xhi, $yhi) = entry(read_block($c->{file}, $root), 0);
	$c->{here} = sprintf('point(%g, %g)', ($xlo + $xhi) / 2, ($ylo + $yhi) / 2);
	$c->{blocks} = $damage{ $c->{name} }->($c, $root, $root_level, @path);
}
$node->start;

# run SQL (after settings) with a time limit; returns (result, stderr,
# timed out)
sub run_sql
{
	my ($sql) = @_;
	my ($out, $err, $timed_out) = ('', '', 0);

	# after a crash (a failure counted where it happened), the next cases
	# still run once the server has restarted
	$node->poll_query_until('postgres', 'SELECT true');
	$node->psql(
		'postgres',
		"\\set VERBOSITY verbose\nSET statement_timeout = '60s';\n$sql",
		stdout => \$out,
		stderr => \$err,
		timeout => 120,
		timed_out => \$timed_out,
		on_error_stop => 0);
	return ($out, $err, $timed_out);
}

my $all = "box '(0,0),(1000,1000)'";
my $probes = "ARRAY[$all, box '(5,5),(10,10)']";
for my $c (@cases)
{
	my ($n, $t, $i) = ($c->{name}, "g_$c->{name}", "gi_$c->{name}");
	my @queries = (
		[ scan => "SET enable_seqscan = off; SET gpuext.enable_gpuscan = off; SET gpuext.enable_gpuagg = off; SET enable_bitmapscan = off;\n"
			  . "SELECT count(*) FROM $t WHERE p <@ $all", $NROWS ],
		[ bitmap => "SET enable_seqscan = off; SET gpuext.enable_gpuscan = off; SET gpuext.enable_gpuagg = off; SET enable_indexscan = off;\n"
			  . "SELECT count(*) FROM $t WHERE p <@ $all", $NROWS ],
		[ probe => "SET gpuext.gist_walk = pages;\n"
			  . "SELECT count(*) FROM gpuext_gist_probe('$i', $probes, '<\@')", $NROWS + 36 ],
		[ mirror => "SET gpuext.gist_walk = mirror;\n"
			  . "SELECT count(*) FROM gpuext_gist_probe('$i', $probes, '<\@')", $NROWS + 36 ],
		[ check => "SELECT levels > 2 FROM gpuext_gist_check('$i', true)", 't' ],
		[ insert_here => "BEGIN;\nINSERT INTO $t VALUES (0, $c->{here});\nSELECT 'inserted';\nROLLBACK",
			'inserted' ],
		[ insert => "BEGIN;\nINSERT INTO $t SELECT 0, point(x, y) FROM generate_series(10, 190, 20) x, generate_series(5, 95, 10) y;\n"
			  . "SELECT 'inserted';\nROLLBACK", 'inserted' ],
		[ vacuum => "VACUUM $t", '' ],
	);
	for my $q (@queries)
	{
		my ($qname, $sql, $right) = @$q;
		my ($out, $err, $timed_out) = run_sql($sql);
		my $blocks = join('|', @{ $c->{blocks} });
		ok(!$timed_out, "$n: $qname ends");
		if ($err =~ /ERROR/)
		{
			like($err, qr/ERROR:\s+XX002: .*?\bblock ($blocks)\b/s,
				"$n: $qname fails with XX002 naming block $blocks");
		}
		elsif ($c->{must}{$qname})
		{
			fail("$n: $qname must fail with XX002 naming block $blocks; it returned '$out'");
		}
		else
		{
			is($out, $right, "$n: $qname returns the right answer");
		}
	}
}

my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|PANIC|server process .* was terminated/,
	'no backend crashed');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server is up');

# REINDEX repairs them
for my $c (@cases)
{
	$node->safe_psql('postgres', "REINDEX INDEX gi_$c->{name}");
	is($node->psql('postgres', "SELECT gpuext_gist_check('gi_$c->{name}', true)"),
		0, "$c->{name}: REINDEX repairs the index");
}

$node->stop;
done_testing();
