# gpuext_gist WAL: every record replayed on a streaming standby with
# wal_consistency_checking = 'generic' (each replayed page is compared with
# the primary's full image); the standby answers as the primary does, also
# while splits are being replayed, and its copy passes gpuext_gist_check.
# The extension is not preloaded here: the access method does not need the
# GPU service.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $primary = PostgreSQL::Test::Cluster->new('gist_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf(
	'postgresql.conf', q{
wal_consistency_checking = 'generic'
lc_messages = 'C'
});
$primary->start;
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION gpuext;
CREATE TABLE boxes (id int, bx box);
INSERT INTO boxes SELECT g, box(point(g % 97, g % 89), point(g % 97 + g % 3, g % 89 + g % 5))
  FROM generate_series(1, 3000) g;
CREATE INDEX boxes_bx ON boxes USING gpuext_gist (bx) WITH (node_size = 8);
CREATE TABLE pts (id int, p point);
INSERT INTO pts SELECT g, point(g % 101, g % 103) FROM generate_series(1, 3000) g;
CREATE INDEX pts_p ON pts USING gpuext_gist (p) WITH (node_size = 16, fillfactor = 60);
});
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('gist_standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', "lc_messages = 'C'\n");
$standby->start;

my $q_boxes = "SELECT count(*), coalesce(sum(hashint4(id)), 0) FROM boxes
                WHERE bx && ANY (ARRAY[box '(10,10),(30,30)', box '(60,1),(61,80)'])";
my $q_pts = "SELECT count(*), coalesce(sum(hashint4(id)), 0) FROM pts
              WHERE p <@ box '(0,0),(40,50)' OR p ~= point '(77,77)'";

# the same answers on both, through the index on the standby
sub compare
{
	my ($label) = @_;
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	for my $q ($q_boxes, $q_pts)
	{
		my $want = $primary->safe_psql('postgres',
			"SET enable_indexscan = off; SET enable_bitmapscan = off; $q");
		my $got = $standby->safe_psql('postgres',
			"SET enable_seqscan = off; $q");
		is($got, $want, "$label: the standby's index answers as the primary's table");
	}
	# the batch paths on the standby: a GistJoin and gpuext_gist_probe
	my $qj = "SELECT count(*), coalesce(sum(hashint4(b.id) # hashint4(w.k)), 0)
	            FROM (VALUES (1, box '(10,10),(30,30)'), (2, box '(60,1),(61,80)'),
	                         (3, box '(0,0),(5,5)')) w(k, wb)
	            JOIN boxes b ON b.bx && w.wb";
	my $want_join = $primary->safe_psql('postgres',
		"SET gpuext.enable_gist_join = off; SET enable_indexscan = off; SET enable_bitmapscan = off; $qj");
	like($standby->safe_psql('postgres',
			"SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off; EXPLAIN $qj"),
		qr/GistJoin/, "$label: the standby plans a GistJoin");
	is($standby->safe_psql('postgres',
			"SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off; $qj"),
		$want_join, "$label: GistJoin on the standby answers as the primary's table");
	is($standby->safe_psql('postgres',
			"SELECT count(*) FROM gpuext_gist_probe('boxes_bx', ARRAY[box '(10,10),(30,30)', box '(60,1),(61,80)', box '(0,0),(5,5)'])"),
		$primary->safe_psql('postgres',
			"SELECT count(*) FROM gpuext_gist_probe('boxes_bx', ARRAY[box '(10,10),(30,30)', box '(60,1),(61,80)', box '(0,0),(5,5)'])"),
		"$label: gpuext_gist_probe on the standby answers as on the primary");
	for my $idx ('boxes_bx', 'pts_p')
	{
		is( $standby->safe_psql('postgres',
				"SELECT levels > 0 FROM gpuext_gist_check('$idx', false)"),
			't', "$label: $idx passes the checker on the standby");
		is( $primary->safe_psql('postgres',
				"SELECT leaf_entries = heap_tuples FROM gpuext_gist_check('$idx', true)"),
			't', "$label: $idx passes the checker on the primary");
	}
}

compare('after the build');

# inserts with many splits, root splits included
$primary->safe_psql(
	'postgres', q{
INSERT INTO boxes SELECT g, box(point(g % 97, g % 89), point(g % 97 + 1, g % 89 + 1))
  FROM generate_series(3001, 20000) g;
INSERT INTO pts SELECT g, point(g % 101, g % 107) FROM generate_series(3001, 20000) g;
});
compare('after inserts');

# deletes, updates and vacuum
$primary->safe_psql(
	'postgres', q{
DELETE FROM boxes WHERE id % 4 = 0;
UPDATE boxes SET bx = box(point(id % 13, 5), point(id % 13 + 2, 7)) WHERE id % 9 = 0;
DELETE FROM pts WHERE id % 3 = 0;
VACUUM boxes, pts;
});
compare('after deletes and vacuum');

# the standby answers right while it replays splits: rows in a fixed
# window are counted while the primary inserts elsewhere (the splits move
# entries between nodes above them)
my $probe = "SELECT count(*) FROM boxes WHERE bx && box '(10,10),(30,30)'";
my $want = $primary->safe_psql('postgres', $probe);
ok($want > 0, "rows in the probe window ($want)");
my $s = bg_start($primary);
bg_send($s,
	"INSERT INTO boxes SELECT g, box(point(700 + g % 50, 700), point(701 + g % 50, 701)) FROM generate_series(1, 60000) g; SELECT 'burst done';");
my $bad = 0;
my $n = 0;
for my $i (1 .. 200)
{
	my $got = $standby->safe_psql('postgres', "SET enable_seqscan = off; $probe");
	$n++;
	$bad++ if $got ne $want;
	last if $s->{stdout} =~ /burst done/ || !$s->{run}->pumpable;
	$s->{run}->pump_nb;
}
ok(bg_wait_stdout($s, qr/burst done/), 'the burst of inserts ended');
bg_quit($s);
is($bad, 0, "standby index scans during replay ($n of them) count the window right");
compare('after a burst of splits');

# REINDEX and a second build, replayed
$primary->safe_psql('postgres', 'REINDEX INDEX boxes_bx');
compare('after REINDEX');

$standby->stop;
unlike(slurp_file($standby->logfile), qr/inconsistent page found/,
	'wal_consistency_checking found no inconsistent page on the standby');
$primary->stop;
done_testing();
