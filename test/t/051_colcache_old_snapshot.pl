# Column caches and old_snapshot_threshold: with it set, VACUUM may remove
# rows that old snapshots still see and mark their pages all-visible (a
# scan of such a page then fails with "snapshot too old"), so an
# all-visible page no longer holds what every snapshot sees, which the
# cache's exactness rests on.  The scans read the heap instead (and the
# answers are PostgreSQL's).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $node = gpuext_node('colcache_old_snapshot',
	"gpuext.device = cpu\nsynchronous_commit = on\nold_snapshot_threshold = 0");

$node->safe_psql(
	'postgres', q{
CREATE TABLE cc (id int, v int);
INSERT INTO cc SELECT g, g % 100 FROM generate_series(1, 20000) g;
VACUUM ANALYZE cc;
});
cache_probe($node, "SELECT format('%s %s', count(*), sum(v)) FROM cc WHERE v >= 50");
my $stock = $node->safe_psql('postgres', 'SELECT res FROM cc_result(false)');

is($node->safe_psql('postgres', "SELECT gpuext_cache_enable('cc') > 0"), 't', 'cache built');
is($node->safe_psql('postgres', 'SELECT res, coalesce(cached, 0) FROM cc_result(true)'),
	"$stock|0", 'with old_snapshot_threshold set, a scan reads the heap, not the cache');

$node->stop;
done_testing();
