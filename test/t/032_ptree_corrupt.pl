# gpuext_ptree_check finds corruption: a leaf whose generation is wrong (a
# structure error) and a key changed in place so that the structure stays
# valid but a table row is no longer found (heapallindexed).  Both are
# ERRORs with SQLSTATE XX002 (index_corrupted).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $node = gpuext_node('ptree_corrupt');

$node->safe_psql(
	'postgres', q{
CREATE TABLE c1 (k int);
INSERT INTO c1 SELECT g FROM generate_series(1, 100) g;
CREATE INDEX c1_gen ON c1 USING gpuext_ptree (k);
CREATE INDEX c1_key ON c1 USING gpuext_ptree (k);
CHECKPOINT;
});
is($node->psql('postgres', "SELECT gpuext_ptree_check('c1_gen', true), gpuext_ptree_check('c1_key', true)"),
	0, 'both indexes pass before the damage');

my $datadir = $node->data_dir;
my $gen_file = "$datadir/" . $node->safe_psql('postgres', "SELECT pg_relation_filepath('c1_gen')");
my $key_file = "$datadir/" . $node->safe_psql('postgres', "SELECT pg_relation_filepath('c1_key')");
$node->stop;

# block 1 is the only leaf (100 keys): read, change, write back
sub patch_block1
{
	my ($file, $patch) = @_;
	open(my $fh, '+<', $file) or die "open $file: $!";
	binmode $fh;
	sysseek($fh, 8192, 0) or die;
	my $page;
	sysread($fh, $page, 8192) == 8192 or die "short read of $file";
	$page = $patch->($page);
	sysseek($fh, 8192, 0) or die;
	syswrite($fh, $page, 8192) == 8192 or die "short write of $file";
	close $fh;
}

# the generation: the first 4 bytes of the 16-byte special space
patch_block1($gen_file, sub {
	my ($p) = @_;
	my $gen = unpack('V', substr($p, 8192 - 16, 4));
	substr($p, 8192 - 16, 4) = pack('V', $gen + 7);
	return $p;
});

# the key of the last tuple (the largest key) made larger still: order is
# kept, but the row with the old key is no longer in the index
patch_block1($key_file, sub {
	my ($p) = @_;
	my $pd_lower = unpack('v', substr($p, 12, 2));
	my $maxoff = ($pd_lower - 24) / 4;
	my $lp = unpack('V', substr($p, 24 + 4 * ($maxoff - 1), 4));
	my $off = $lp & 0x7fff;
	substr($p, $off + 6, 4) = pack('N', 0xfffffff0);
	return $p;
});
$node->start;

my ($ret, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT gpuext_ptree_check('c1_gen', false)");
like($err, qr/XX002.*c1_gen" is corrupted/s, 'a wrong generation is found (XX002)');
like($err, qr/not a page of the live generation/, 'and named');

($ret, $out, $err) = $node->psql('postgres', "SELECT gpuext_ptree_check('c1_key', false)");
is($ret, 0, 'the changed key keeps the structure valid');
($ret, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT gpuext_ptree_check('c1_key', true)");
like($err, qr/XX002.*Heap tuple \(0,100\) is not in the index/s,
	'heapallindexed finds the row that is missing');

# REINDEX repairs both
$node->safe_psql('postgres', 'REINDEX TABLE c1');
is($node->psql('postgres', "SELECT gpuext_ptree_check('c1_gen', true), gpuext_ptree_check('c1_key', true)"),
	0, 'REINDEX repairs them');

$node->stop;
done_testing();
