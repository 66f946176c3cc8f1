# A parallel PtreeBatchJoin: the workers map the leader's mirror of the
# index (moved to a DSM segment the first time it is shared) instead of
# building their own, and the join answers as PostgreSQL's own; after a
# merge (a new generation) the leader shares the new mirror; with the
# mirror over gpuext.ptree_mirror_max_mb there is none to share and the
# workers walk the pages.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $node = gpuext_node('ptree_parallel', "log_min_messages = debug1\n");

$node->safe_psql(
	'postgres', q{
CREATE TABLE pi (k int, w int);
INSERT INTO pi SELECT g * 3, g FROM generate_series(1, 200000) g;
CREATE INDEX pi_k ON pi USING gpuext_ptree (k) WITH (delta_pages = 2);
CREATE TABLE po (a int, x int);
INSERT INTO po SELECT (g * 7) % 700000, g FROM generate_series(1, 100000) g;
ANALYZE pi, po;
});

my $par = q{SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SET enable_hashjoin = off; SET enable_mergejoin = off;};
my $q = 'SELECT count(*), sum(i.w), sum(o.x) FROM po o JOIN pi i ON i.k = o.a';
my $stock = $node->safe_psql('postgres', "SET gpuext.enabled = off; $q");

like($node->safe_psql('postgres', "$par EXPLAIN (COSTS OFF) $q"),
	qr/Parallel Custom Scan \(PtreeBatchJoin\)/, 'the parallel plan');

my $log_at = -s $node->logfile;
is($node->safe_psql('postgres', "$par $q"), $stock, 'parallel: the same answer');
my $log = slurp_file($node->logfile, $log_at);
like($log, qr/mapped the leader's mirror of index/, 'a worker mapped the leader\'s mirror');
unlike($log, qr/mirror of index \d+ is (gone|not usable here)/, 'no worker missed it');

# a merge: a new generation, a new mirror to share (the old one is not)
$node->safe_psql('postgres',
	'INSERT INTO pi SELECT g * 3 + 1, -g FROM generate_series(1, 5000) g; VACUUM pi');
$stock = $node->safe_psql('postgres', "SET gpuext.enabled = off; $q");
$log_at = -s $node->logfile;
is($node->safe_psql('postgres', "$par $q; $q"), "$stock\n$stock",
	'after a merge: the same answer, twice in one session');
$log = slurp_file($node->logfile, $log_at);
like($log, qr/mapped the leader's mirror of index/, 'the new mirror mapped');

# no mirror (over the cap): each process walks the pages
is($node->safe_psql('postgres', "$par SET gpuext.ptree_mirror_max_mb = 0; $q"), $stock,
	'without a mirror: the same answer');

$node->stop;
done_testing();
