# gpuext_ptree and WAL: a streaming replica of a primary that builds,
# inserts (merging its delta), deletes, vacuums, reindexes and truncates
# returns the same answers as the primary, with wal_consistency_checking =
# 'generic' on both (every generic WAL record's page images are compared
# after replay); then crash recovery of the primary under the same check,
# and an unlogged index comes back empty from its init fork.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $conf = q{
shared_preload_libraries = 'gpuext'
shared_buffers = 32MB
gpuext.dma_buffer_size = 32MB
max_worker_processes = 8
lc_messages = 'C'
log_line_prefix = '%m [%p] '
wal_consistency_checking = 'generic'
};

my $primary = PostgreSQL::Test::Cluster->new('ptree_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', $conf);
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION gpuext');
$primary->safe_psql(
	'postgres', q{
CREATE TABLE pr (k int, v bigint, t text, d date, ts timestamp);
INSERT INTO pr SELECT g % 700, g, 'key' || (g % 900), date '2020-01-01' + g % 400,
                      timestamp '2020-01-01' + g * interval '1 hour'
  FROM generate_series(1, 10000) g;
CREATE INDEX pr_k ON pr USING gpuext_ptree (k) WITH (delta_pages = 2);
CREATE INDEX pr_v ON pr USING gpuext_ptree (v);
CREATE INDEX pr_t ON pr USING gpuext_ptree (t) WITH (delta_pages = 1);
CREATE INDEX pr_d ON pr USING gpuext_ptree (d) WITH (delta_pages = 3, fillfactor = 60);
CREATE INDEX pr_ts ON pr USING gpuext_ptree (ts);
CREATE UNLOGGED TABLE pu (k int);
CREATE INDEX pu_k ON pu USING gpuext_ptree (k) WITH (delta_pages = 1);
INSERT INTO pu SELECT g % 50 FROM generate_series(1, 5000) g;
});

# a slot keeps the WAL the standby still needs (full-page images make a lot)
$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('ptree_standby')");
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('ptree_standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'ptree_standby'\n");
$standby->start;

my @queries = (
	'k = 42', 'k < 10 OR k IS NULL', "k = ANY('{1,2,3,650}')",
	'v BETWEEN 500 AND 900', 'v > 12000',
	"t = 'key7'", "t ~>=~ 'key8' AND t ~<~ 'key9'",
	"d = '2020-03-01'", "ts >= '2020-06-01' AND ts < '2020-06-05'");

# every query through the index on a node, as one string
sub answers
{
	my ($node, $forced) = @_;
	my $set = $forced
	  ? 'SET enable_seqscan = off; SET enable_bitmapscan = off;'
	  : 'SET enable_indexscan = off; SET enable_bitmapscan = off;';
	my @out;
	foreach my $q (@queries)
	{
		push @out, $node->safe_psql('postgres',
			"$set SELECT count(*) || ' ' || coalesce(sum(hashint8(v)), 0) FROM pr WHERE $q");
	}
	return join(', ', @out);
}

sub compare
{
	my ($what) = @_;
	$primary->wait_for_catchup($standby);
	my $p = answers($primary, 1);
	is(answers($standby, 1), $p, "$what: the standby's index answers as the primary's");
	is(answers($standby, 0), $p, "$what: and as the standby's sequential scans");
	is( $standby->psql(
			'postgres',
			"SELECT gpuext_ptree_check(c.oid, false) FROM pg_class c WHERE c.relname LIKE 'pr\\_%'"),
		0,
		"$what: the checker passes on the standby");
}

is($standby->safe_psql('postgres', 'SHOW wal_consistency_checking'), 'generic',
	'the standby checks generic WAL records');
compare('after the build');

$primary->safe_psql('postgres',
	"INSERT INTO pr SELECT g % 700, g, 'key' || (g % 900), date '2020-01-01' + g % 400, timestamp '2020-01-01' + g * interval '1 hour' FROM generate_series(10001, 16000) g"
);
compare('after inserts and merges');

$primary->safe_psql('postgres', 'DELETE FROM pr WHERE v % 5 = 0; UPDATE pr SET k = NULL WHERE k = 11;');
$primary->safe_psql('postgres', 'VACUUM pr');
compare('after deletes, updates and VACUUM');

$primary->safe_psql('postgres', 'REINDEX TABLE pr');
$primary->safe_psql('postgres', 'VACUUM FULL pr');
compare('after REINDEX and VACUUM FULL');

$primary->safe_psql('postgres',
	"BEGIN; TRUNCATE pr; INSERT INTO pr SELECT g % 700, g, 'key' || (g % 900), date '2020-01-01' + g % 400, timestamp '2020-01-01' + g * interval '1 hour' FROM generate_series(1, 3000) g; COMMIT;"
);
compare('after TRUNCATE and inserts');

is($primary->psql('postgres', "SELECT gpuext_ptree_check('pu_k', true)"), 0, 'the unlogged index passes the checker');

# the standby replayed all of it with the consistency check on
ok(!(slurp_file($standby->logfile) =~ /inconsistent page found/), 'no inconsistent page on the standby');

# crash recovery of the primary, also under wal_consistency_checking
$primary->safe_psql('postgres',
	"INSERT INTO pr SELECT g % 700, g, 'x', NULL, NULL FROM generate_series(50001, 53000) g");
$primary->stop('immediate');
$primary->start;
is( $primary->psql(
		'postgres',
		"SELECT gpuext_ptree_check(c.oid, true) FROM pg_class c WHERE c.relname LIKE 'pr\\_%'"),
	0,
	'after crash recovery the checker passes');
is(answers($primary, 1), answers($primary, 0), 'after crash recovery the index answers as sequential scans');
ok(!(slurp_file($primary->logfile) =~ /inconsistent page found/), 'no inconsistent page in crash recovery');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM pu'), '0', 'the unlogged table is empty after the crash');
is($primary->psql('postgres', "SELECT gpuext_ptree_check('pu_k', true)"), 0, 'its index is the empty init fork');
$primary->safe_psql('postgres', 'INSERT INTO pu SELECT g % 50 FROM generate_series(1, 2000) g');
is($primary->safe_psql('postgres', 'SET enable_seqscan = off; SELECT count(*) FROM pu WHERE k = 7'),
	'40', 'and it works again');
is($primary->psql('postgres', "SELECT gpuext_ptree_check('pu_k', true)"), 0, 'and passes the checker');

$standby->stop;
$primary->stop;
done_testing();
