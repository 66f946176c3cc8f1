# Column caches across a crash restart: shared memory is reset, so no
# cache survives (gpuext_caches() is empty, scans read the heap and answer
# as PostgreSQL does); the triggers stay, count nothing and writes work;
# gpuext_cache_enable builds again over the triggers already there.  Also:
# a logical-replication-style writer (session_replication_role = replica)
# is counted by the row trigger, and many sessions reading one cache.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $node = gpuext_node('colcache_crash', "gpuext.device = cpu\nsynchronous_commit = on");

$node->safe_psql(
	'postgres', q{
CREATE TABLE cc (id int, v int, w float8);
INSERT INTO cc SELECT g, g % 100, CASE WHEN g % 7 = 0 THEN NULL ELSE g / 3.0 END
  FROM generate_series(1, 30000) g;
VACUUM ANALYZE cc;
});
cache_probe($node,
	"SELECT format('%s %s %s', count(*), sum(v), count(w)) FROM cc WHERE v >= 50 AND (w IS NULL OR w > 100)");
my $stock = $node->safe_psql('postgres', 'SELECT res FROM cc_result(false)');

is($node->safe_psql('postgres', "SELECT gpuext_cache_enable('cc') > 0"), 't', 'cache built');
is($node->safe_psql('postgres', 'SELECT res, cached > 0 FROM cc_result(true)'),
	"$stock|t", 'a scan reads the cache and answers as PostgreSQL');

# many sessions at once over the same cache
my @bg;
for my $i (1 .. 4)
{
	my $s = bg_start($node);
	bg_query($s, 'SELECT 1;');
	push @bg, $s;
}
bg_send($_, "SELECT res || '|' || (cached > 0) FROM cc_result(true);") for @bg;
ok(bg_wait_stdout($_, qr/\Q$stock\E\|t/), 'a concurrent session reads the cache') for @bg;
bg_quit($_) for @bg;

# a writer with session_replication_role = replica (as logical
# replication's apply workers run) fires the ENABLE REPLICA row trigger
$node->safe_psql('postgres',
	"SET session_replication_role = replica; UPDATE cc SET v = 99 WHERE id = 1;");
is($node->safe_psql('postgres', 'SELECT state FROM gpuext_caches()'),
	'written', 'a replica-role write is counted');
$stock = $node->safe_psql('postgres', 'SELECT res FROM cc_result(false)');
is($node->safe_psql('postgres', "SELECT res, cached IS NULL FROM cc_result(true)"),
	"$stock|t", 'and the scan reads the heap');
$node->safe_psql('postgres', 'VACUUM cc');
is($node->safe_psql('postgres', "SELECT gpuext_cache_enable('cc') > 0"), 't', 'rebuilt');

# crash restart
my $s = bg_start($node);
my $pid = bg_pid($s);
my $logpos = log_position($node);
ok(kill('KILL', $pid), 'SIGKILL to a backend');
bg_quit($s);
ok(wait_for_log($node, qr/all server processes terminated; reinitializing/, $logpos),
	'the postmaster restarts the server');
ok($node->poll_query_until('postgres', 'SELECT 1', '1'), 'the server accepts connections again');
ok(wait_for_service($node), 'the GPU service is back');

is($node->safe_psql('postgres', 'SELECT count(*) FROM gpuext_caches()'), '0',
	'no cache survives the restart');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'cc'::regclass"),
	'2', 'the triggers do');
is($node->safe_psql('postgres', 'SELECT res, cached IS NULL FROM cc_result(true)'),
	"$stock|t", 'scans read the heap');
$node->safe_psql('postgres', 'DELETE FROM cc WHERE id % 10 = 3');
$stock = $node->safe_psql('postgres', 'SELECT res FROM cc_result(false)');
is($node->safe_psql('postgres', 'SELECT res, cached IS NULL FROM cc_result(true)'),
	"$stock|t", 'writes work, and so do scans after them');
$node->safe_psql('postgres', 'VACUUM cc');
is($node->safe_psql('postgres', "SELECT gpuext_cache_enable('cc') > 0"), 't',
	'the cache is built again');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'cc'::regclass"),
	'2', 'over the same two triggers');
is($node->safe_psql('postgres', 'SELECT state FROM gpuext_caches()'), 'valid', 'valid');
is($node->safe_psql('postgres', 'SELECT res, cached > 0 FROM cc_result(true)'),
	"$stock|t", 'and read by scans');
is($node->safe_psql('postgres', "SELECT gpuext_cache_drop('cc')"), 't', 'dropped');

$node->stop;
done_testing();
