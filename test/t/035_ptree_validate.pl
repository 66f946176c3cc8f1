# Every reader of a gpuext_ptree index checks the pages, tuples and links
# it reads: with a page damaged on disk in any of the ways below, scans
# (equality, range, IS NULL, = ANY through the prefix-tree mirror and the
# CPU engine), the checker, an insert that merges (its merge planned on the
# mirror) and VACUUM either give the right answer or fail with SQLSTATE
# XX002 naming the block; never a crash, a hang, a read past the item or
# wrong rows.  Each case damages its own copy of the same table's index,
# with the server stopped.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $BLCKSZ = 8192;
my $NROWS = 20000;		# in main: 50 leaves under one directory page
my $NDELTA = 500;		# inserted after the build: two delta pages
my $NNULL = 10;

my $node = gpuext_node('ptree_validate');

# the cases: what to damage, and the queries that must fail (the others
# must give the right answer or fail with XX002); the insert of 450 rows
# fills the last delta page, so that the delta is merged
my %all_leaves = map { $_ => 1 } qw(range any check insert vacuum);
my %delta = map { $_ => 1 } qw(eq range isnull any check insert vacuum);
my @cases = (
	# no damage: every query gives the right answer
	{ name => 'none', must => {} },
	# a leaf tuple's TID count inflated to 65535: 393 KB past the item
	{ name => 'ntids', must => { %all_leaves, eq => 1 } },
	{ name => 'keylen', must => { %all_leaves, eq => 1 } },
	{ name => 'lp_off', must => { %all_leaves, eq => 1 } },
	{ name => 'lp_len', must => { %all_leaves, eq => 1 } },
	# the 6 header bytes of a tuple flipped
	{ name => 'flip', must => { %all_leaves, eq => 1 } },
	{ name => 'tid_offset', must => { %all_leaves, eq => 1 } },
	{ name => 'keys_order', must => { %all_leaves } },
	# the second leaf links back to the first: a loop
	{ name => 'leaf_cycle', must => { %all_leaves } },
	{ name => 'leaf_past_end', must => { %all_leaves } },
	{ name => 'leaf_type', must => { %all_leaves, eq => 1 } },
	{ name => 'leaf_level', must => { %all_leaves, eq => 1 } },
	# the last delta page links back to the first: a loop
	{ name => 'delta_cycle', must => { %delta } },
	{ name => 'delta_ntids', must => { %delta } },
	# the directory's first child pointer leads to the directory page itself
	{ name => 'child_self', must => { eq => 1, range => 1, check => 1 } },
	{ name => 'child_past_end', must => { eq => 1, check => 1 } },
	# the directory page links to itself as the next page of its level
	{ name => 'dir_cycle', must => { check => 1, insert => 1, vacuum => 1 } },
	{ name => 'meta_root', must => { eq => 1, range => 1, isnull => 1, check => 1, insert => 1, vacuum => 1 } },
);

for my $c (@cases)
{
	my $t = "t_$c->{name}";
	$node->safe_psql(
		'postgres', qq{
CREATE TABLE $t (k int);
INSERT INTO $t SELECT g FROM generate_series(1, $NROWS) g;
INSERT INTO $t SELECT NULL FROM generate_series(1, $NNULL);
CREATE INDEX i_$c->{name} ON $t USING gpuext_ptree (k) WITH (delta_pages = 1000);
INSERT INTO $t SELECT g FROM generate_series($NROWS + 1, $NROWS + $NDELTA) g;
});
	$c->{file} = $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('i_$c->{name}')");
}
$node->safe_psql('postgres', 'CHECKPOINT');
is($node->psql('postgres', "SELECT gpuext_ptree_check('i_ntids', true), gpuext_ptree_check('i_meta_root', true)"),
	0, 'the indexes pass the checker before the damage');
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

# read, change (the sub changes $_[0]), write back
sub patch
{
	my ($file, $blk, $sub) = @_;
	my $page = read_block($file, $blk);
	$sub->($page);
	write_block($file, $blk, $page);
	return;
}

# the special space: generation, type, level, next
sub next_of { return unpack('V', substr($_[0], $BLCKSZ - 8, 4)); }
sub set_next { substr($_[0], $BLCKSZ - 8, 4) = pack('V', $_[1]); return; }

# line pointer $i (1-based): (offset, flags, length)
sub lp
{
	my ($page, $i) = @_;
	my $v = unpack('V', substr($page, 24 + 4 * ($i - 1), 4));
	return ($v & 0x7fff, ($v >> 15) & 3, $v >> 17);
}

sub set_lp
{
	my ($page, $i, $off, $flags, $len) = @_;
	substr($_[0], 24 + 4 * ($i - 1), 4) = pack('V', $off | ($flags << 15) | ($len << 17));
	return;
}

# the int4 key of tuple $i (normalized: big-endian, sign bit flipped)
sub key_of
{
	my ($page, $i) = @_;
	my ($off) = lp($page, $i);
	return unpack('N', substr($page, $off + 6, 4)) ^ 0x80000000;
}

# the metapage's root, first leaf, delta head; a chain from a block
sub meta_of
{
	my ($page) = @_;
	return (
		root => unpack('V', substr($page, 44, 4)),
		first_leaf => unpack('V', substr($page, 48, 4)),
		levels => unpack('V', substr($page, 52, 4)),
		delta_head => unpack('V', substr($page, 80, 4)));
}

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

my %damage = (
	none => sub { return (0, 5); },
	ntids => sub {
		my ($c, $m, $leaves) = @_;
		my $blk = $leaves->[0];
		patch($c->{file}, $blk, sub {
			my ($off) = lp($_[0], 1);
			substr($_[0], $off + 4, 2) = pack('v', 65535);
		});
		return ($blk, key_of(read_block($c->{file}, $blk), 1));
	},
	keylen => sub {
		my ($c, $m, $leaves) = @_;
		my $blk = $leaves->[10];
		my $key = key_of(read_block($c->{file}, $blk), 5);
		patch($c->{file}, $blk, sub {
			my ($off) = lp($_[0], 5);
			substr($_[0], $off + 2, 2) = pack('v', 2000);
		});
		return ($blk, $key);
	},
	lp_off => sub {
		my ($c, $m, $leaves) = @_;
		my $blk = $leaves->[10];
		my $key = key_of(read_block($c->{file}, $blk), 5);
		patch($c->{file}, $blk, sub {
			my (undef, $flags, $len) = lp($_[0], 5);
			set_lp($_[0], 5, 8176, $flags, $len);
		});
		return ($blk, $key);
	},
	lp_len => sub {
		my ($c, $m, $leaves) = @_;
		my $blk = $leaves->[10];
		my $key = key_of(read_block($c->{file}, $blk), 5);
		patch($c->{file}, $blk, sub {
			my ($off, $flags) = lp($_[0], 5);
			set_lp($_[0], 5, $off, $flags, 2);
		});
		return ($blk, $key);
	},
	flip => sub {
		my ($c, $m, $leaves) = @_;
		my $blk = $leaves->[20];
		my $key = key_of(read_block($c->{file}, $blk), 10);
		patch($c->{file}, $blk, sub {
			my ($off) = lp($_[0], 10);
			substr($_[0], $off, 6) = substr($_[0], $off, 6) ^ ("\xff" x 6);
		});
		return ($blk, $key);
	},
	tid_offset => sub {
		my ($c, $m, $leaves) = @_;
		my $blk = $leaves->[10];
		my $key = key_of(read_block($c->{file}, $blk), 3);
		patch($c->{file}, $blk, sub {
			my ($off) = lp($_[0], 3);
			substr($_[0], $off + 6 + 4 + 4, 2) = pack('v', 0);
		});
		return ($blk, $key);
	},
	keys_order => sub {
		my ($c, $m, $leaves) = @_;
		my $blk = $leaves->[10];
		my $key = key_of(read_block($c->{file}, $blk), 1);
		# items 3 and 4 swapped: their keys out of order
		patch($c->{file}, $blk, sub {
			my @a = lp($_[0], 3);
			my @b = lp($_[0], 4);
			set_lp($_[0], 3, @b);
			set_lp($_[0], 4, @a);
		});
		return ($blk, $key);
	},
	leaf_cycle => sub {
		my ($c, $m, $leaves) = @_;
		patch($c->{file}, $leaves->[1], sub { set_next($_[0], $leaves->[0]); });
		# the walk finds the loop at either page
		return ([ $leaves->[0], $leaves->[1] ], key_of(read_block($c->{file}, $leaves->[1]), 1));
	},
	leaf_past_end => sub {
		my ($c, $m, $leaves) = @_;
		patch($c->{file}, $leaves->[30], sub { set_next($_[0], 99999); });
		return ($leaves->[30], key_of(read_block($c->{file}, $leaves->[30]), 1));
	},
	leaf_type => sub {
		my ($c, $m, $leaves) = @_;
		patch($c->{file}, $leaves->[10],
			sub { substr($_[0], $BLCKSZ - 12, 2) = pack('v', 4); });
		return ($leaves->[10], key_of(read_block($c->{file}, $leaves->[10]), 1));
	},
	leaf_level => sub {
		my ($c, $m, $leaves) = @_;
		patch($c->{file}, $leaves->[10],
			sub { substr($_[0], $BLCKSZ - 10, 2) = pack('v', 1); });
		return ($leaves->[10], key_of(read_block($c->{file}, $leaves->[10]), 1));
	},
	delta_cycle => sub {
		my ($c, $m, $leaves) = @_;
		my @delta = chain($c->{file}, $m->{delta_head});
		patch($c->{file}, $delta[-1], sub { set_next($_[0], $delta[0]); });
		return ([@delta], 5);
	},
	delta_ntids => sub {
		my ($c, $m, $leaves) = @_;
		my @delta = chain($c->{file}, $m->{delta_head});
		patch($c->{file}, $delta[0], sub {
			my ($off) = lp($_[0], 7);
			substr($_[0], $off + 4, 2) = pack('v', 2);
		});
		return ($delta[0], 5);
	},
	child_self => sub {
		my ($c, $m, $leaves) = @_;
		patch($c->{file}, $m->{root}, sub {
			my ($off) = lp($_[0], 1);
			substr($_[0], $off + 6 + 4, 4) = pack('vv', $m->{root} >> 16, $m->{root} & 0xffff);
		});
		return ($m->{root}, 1);
	},
	child_past_end => sub {
		my ($c, $m, $leaves) = @_;
		my $key;
		patch($c->{file}, $m->{root}, sub {
			my ($off) = lp($_[0], 3);
			$key = key_of($_[0], 3);
			substr($_[0], $off + 6 + 4, 4) = pack('vv', 0, 60000);
		});
		return ($m->{root}, $key + 1);
	},
	dir_cycle => sub {
		my ($c, $m, $leaves) = @_;
		patch($c->{file}, $m->{root}, sub { set_next($_[0], $m->{root}); });
		return ($m->{root}, 5);
	},
	meta_root => sub {
		my ($c, $m, $leaves) = @_;
		patch($c->{file}, 0, sub { substr($_[0], 44, 4) = pack('V', 99999); });
		return (0, 5);
	},
);

for my $c (@cases)
{
	my %m = meta_of(read_block($c->{file}, 0));
	die "expected a directory of one page above the leaves" unless $m{levels} == 2;
	my @leaves = chain($c->{file}, $m{first_leaf});
	die "expected 50 leaves, found " . scalar(@leaves) unless @leaves >= 40;
	my ($blocks, $key) = $damage{ $c->{name} }->($c, \%m, \@leaves);
	$c->{blocks} = ref $blocks ? $blocks : [$blocks];
	$c->{key} = $key;
}
$node->start;
my $log_start = 0;

# run one statement (after settings) with a time limit; returns
# (result, stderr, timed out)
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

for my $c (@cases)
{
	my ($n, $t, $i, $key) = ($c->{name}, "t_$c->{name}", "i_$c->{name}", $c->{key});
	my $any = join(',', $key, 7, $NROWS + 150);
	my $nany = scalar(keys %{ { map { $_ => 1 } ($key, 7, $NROWS + 150) } });
	my @queries = (
		[ eq => "SET enable_seqscan = off; SET gpuext.enable_gpuscan = off; SET gpuext.enable_gpuagg = off; SET enable_bitmapscan = off;\n"
			  . "SELECT count(*) FROM $t WHERE k = $key", 1 ],
		[ range => "SET enable_seqscan = off; SET gpuext.enable_gpuscan = off; SET gpuext.enable_gpuagg = off; SET enable_indexscan = off;\n"
			  . "SELECT count(*) FROM $t WHERE k BETWEEN 1 AND 1000000", $NROWS + $NDELTA ],
		[ isnull => "SET enable_seqscan = off; SET gpuext.enable_gpuscan = off; SET gpuext.enable_gpuagg = off;\n"
			  . "SELECT count(*) FROM $t WHERE k IS NULL", $NNULL ],
		[ any => "SET enable_seqscan = off; SET gpuext.enable_gpuscan = off; SET gpuext.enable_gpuagg = off; SET enable_bitmapscan = off; SET gpuext.ptree_batch_min = 1;\n"
			  . "SELECT count(*) FROM $t WHERE k = ANY (ARRAY[$any])", $nany ],
		[ check => "SELECT gpuext_ptree_check('$i', true)", '' ],
		[ insert => "SET gpuext.ptree_merge_plan = on;\nBEGIN;\nALTER INDEX $i SET (delta_pages = 1);\n"
			  . "INSERT INTO $t SELECT 0 FROM generate_series(1, 450);\n"
			  . "SELECT gpu_merges + cpu_merges + compare_merges FROM gpuext_ptree_merge_stats();\nROLLBACK", 1 ],
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
			# the block in the message or, from the checker, in the detail
			like($err, qr/ERROR:\s+XX002: .*?(\b[Bb]lock ($blocks)\b|\(($blocks),\d+\))/s,
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
	$node->safe_psql('postgres', "REINDEX INDEX i_$c->{name}");
	is($node->psql('postgres', "SELECT gpuext_ptree_check('i_$c->{name}', true)"),
		0, "$c->{name}: REINDEX repairs the index");
}

$node->stop;
done_testing();
