# gpuext_ptree merges do not block readers or inserts.  A merge is held in
# progress by gpuext.debug_ptree_merge_delay (a device request that waits
# after the new main structure is written, before the switch), started by
# an INSERT whose delta is full and by VACUUM's bulk delete.  Meanwhile:
# index scans (plain, bitmap, = ANY through the mirror) under
# statement_timeout = 100ms finish within the timeout plus one poll
# interval of the client (or fail with 57014), and answer as a sequential
# scan does; INSERTs go on and are not lost; a VACUUM that has to wait for
# the merge can be cancelled; a streaming standby that replayed the merge's
# first records answers as its sequential scan does.  The merging backend
# itself can be cancelled and killed in the middle: the old generation
# stays live, the checker passes, and the next merge finishes the job.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use GpuextTest;

my $node = gpuext_node('ptree_merge_nonblocking', "wal_level = replica\nmax_wal_senders = 4\n");

# 100 ms of statement_timeout plus one poll interval of the client
# (gpuext.service_poll_interval, 100 ms), plus the psql round trip on a
# loaded test machine
my $bound = 1.0;

$node->safe_psql(
	'postgres', q{
CREATE TABLE m (k int, v int, t text);
INSERT INTO m SELECT g % 5000, g, 'w' || (g % 3000) FROM generate_series(1, 60000) g;
CREATE INDEX m_k ON m USING gpuext_ptree (k) WITH (delta_pages = 4);
CREATE INDEX m_t ON m USING gpuext_ptree (t) WITH (delta_pages = 100);
VACUUM ANALYZE m;
});
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('ptree_merge_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;

# Wait until session $pid is inside the merge's delayed request (the CPU
# engine's sleep and the wait for the GPU service both report wait event
# Extension) of the statement that starts with $what.
sub wait_in_merge
{
	my ($pid, $what) = @_;
	return $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE pid = $pid AND state = 'active' AND wait_event = 'Extension'
		    AND query LIKE '$what%'");
}

# Is session $pid still inside the merge's delayed request?
sub still_in_merge
{
	my ($pid) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE pid = $pid AND wait_event = 'Extension'")
	  eq '1';
}

# Run $sql in session $s; (stdout, stderr, seconds)
sub timed
{
	my ($s, $sql) = @_;
	my $t0 = time;
	my ($out, $err) = bg_query($s, $sql);
	return ($out, $err, time - $t0);
}

my %plans = (
	plain => 'SET enable_seqscan = off; SET gpuext.enable_gpuscan = off; SET gpuext.enable_gpuagg = off; SET enable_bitmapscan = off;',
	bitmap => 'SET enable_seqscan = off; SET gpuext.enable_gpuscan = off; SET gpuext.enable_gpuagg = off; SET enable_indexscan = off;',
	seq => 'SET enable_indexscan = off; SET enable_bitmapscan = off;');
my @queries = (
	'SELECT count(*), sum(v) FROM m WHERE k BETWEEN 100 AND 140',
	"SELECT count(*), sum(v) FROM m WHERE t ~>=~ 'w2990' AND t ~<~ 'w2999'",
	'SELECT count(*), sum(v) FROM m WHERE k = ANY(ARRAY(SELECT generate_series(1000, 1200)))');

# While session $mpid is in a merge: each query through the index under
# statement_timeout = 100ms in session $r, promptly, then unhurried, and
# compared with a sequential scan (nothing commits in between).
sub readers_during_merge
{
	my ($r, $mpid, $what) = @_;
	foreach my $q (@queries)
	{
		foreach my $p ('plain', 'bitmap')
		{
			my ($out, $err, $secs) = timed($r,
				"$plans{$p} SET statement_timeout = '100ms'; $q; RESET statement_timeout;");
			ok($out =~ /^\d+\|\d+$/ || $err =~ /57014/,
				"$what, $p: '$q' finished or was cancelled (out '$out', err '$err')");
			cmp_ok($secs, '<', $bound,
				sprintf('%s, %s: ... within the timeout plus a poll (%.3f s)', $what, $p, $secs));
			my $idx = bg_query($r, "$plans{$p} $q; RESET ALL;");
			my $seq = bg_query($r, "$plans{seq} $q; RESET ALL;");
			is($idx, $seq, "$what, $p: '$q' answers as a sequential scan");
		}
	}
	ok(still_in_merge($mpid), "$what: the merge was in progress all along");
}

# Every query through the index agrees with a sequential scan on $n.
sub agree_on
{
	my ($n, $what) = @_;
	foreach my $q (@queries, 'SELECT count(*), sum(v), count(DISTINCT t) FROM m WHERE k >= 0')
	{
		my $seq = $n->safe_psql('postgres', "$plans{seq} $q");
		is($n->safe_psql('postgres', "$plans{plain} $q"), $seq, "$what: '$q' (plain)");
		is($n->safe_psql('postgres', "$plans{bitmap} $q"), $seq, "$what: '$q' (bitmap)");
	}
}

# The same on the primary, and the checker passes.
sub all_agree
{
	my ($what) = @_;
	agree_on($node, $what);
	is($node->psql('postgres', "SELECT gpuext_ptree_check('m_k', true), gpuext_ptree_check('m_t', true)"),
		0, "$what: the checker passes");
}

my $mer = bg_start($node);
my $mpid = bg_pid($mer);
my $r = bg_start($node);
my $w = bg_start($node);
my $wpid = bg_pid($w);

# --- a merge started by an INSERT ---------------------------------------------
# 2000 rows: m_k's delta (4 pages of about 400 entries) fills once
bg_query($mer, "SET gpuext.debug_ptree_merge_delay = '10s'; SET gpuext.ptree_merge_plan = on;");
bg_send($mer, "INSERT INTO m SELECT g % 5000, -g, 'x' || g FROM generate_series(1, 2000) g;");
ok(wait_in_merge($mpid, 'INSERT'), 'insert: the merge is under way');

readers_during_merge($r, $mpid, 'insert');
my ($out, $err, $secs) = timed($w,
	"SET statement_timeout = '1s'; INSERT INTO m SELECT g % 5000, 1000000 + g, 'y' || g FROM generate_series(1, 500) g; RESET statement_timeout;");
is($err, '', 'insert: another INSERT meanwhile succeeds');
cmp_ok($secs, '<', $bound, sprintf('insert: ... without waiting for the merge (%.3f s)', $secs));
$node->wait_for_catchup($standby, 'replay', $node->lsn('insert'));
agree_on($standby, 'insert, standby');

# a VACUUM has to wait for the merge (index cleanup merges too): it can be
# cancelled while it waits
bg_send($w, 'VACUUM m;');
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE pid = $wpid AND wait_event_type IN ('Lock', 'LWLock') AND query LIKE 'VACUUM%'"),
	'insert: a VACUUM waits for the merge');
my $t0 = time;
$node->safe_psql('postgres', "SELECT pg_cancel_backend($wpid)");
ok(bg_wait_stderr($w, qr/57014/), 'insert: the waiting VACUUM is cancelled');
$secs = time - $t0;
cmp_ok($secs, '<', $bound, sprintf('insert: ... promptly (%.3f s)', $secs));
ok(still_in_merge($mpid), 'insert: the merge was in progress all along');

($out, $err) = bg_query($mer, 'RESET gpuext.debug_ptree_merge_delay;');
is($err, '', 'insert: the merging INSERT succeeded');
is($node->safe_psql('postgres', 'SELECT count(*) FROM m WHERE v < 0 OR v > 1000000'), '2500',
	'insert: both INSERTs are in the table');
all_agree('after the insert merge');

# --- VACUUM's bulk delete -------------------------------------------------------
$node->safe_psql('postgres', 'DELETE FROM m WHERE k % 10 = 3');
bg_query($mer, "SET gpuext.debug_ptree_merge_delay = '8s';");
bg_send($mer, 'VACUUM m;');
ok(wait_in_merge($mpid, 'VACUUM'), 'vacuum: the bulk delete is under way');

readers_during_merge($r, $mpid, 'vacuum');
($out, $err, $secs) = timed($w,
	"SET statement_timeout = '1s'; INSERT INTO m SELECT g % 5000, 2000000 + g, 'z' || g FROM generate_series(1, 500) g; RESET statement_timeout;");
is($err, '', 'vacuum: an INSERT meanwhile succeeds');
cmp_ok($secs, '<', $bound, sprintf('vacuum: ... without waiting for the merge (%.3f s)', $secs));
ok(still_in_merge($mpid), 'vacuum: the merge was in progress all along');

($out, $err) = bg_query($mer, 'RESET gpuext.debug_ptree_merge_delay;');
is($err, '', 'vacuum: the VACUUM succeeded');
is($node->safe_psql('postgres', 'SELECT count(*) FROM m WHERE k % 10 = 3 OR v > 2000000'), '500',
	'vacuum: the deleted rows are gone, the INSERT is in');
all_agree('after the vacuum');

# --- the merging backend cancelled ----------------------------------------------
bg_query($mer, "SET gpuext.debug_ptree_merge_delay = '10s'; SET statement_timeout = '2s';");
$t0 = time;
bg_send($mer, "INSERT INTO m SELECT g % 5000, 3000000 + g, 'c' || g FROM generate_series(1, 4000) g;");
ok(wait_in_merge($mpid, 'INSERT'), 'cancel: the merge is under way');
ok(bg_wait_stderr($mer, qr/57014/), 'cancel: the merging INSERT is cancelled by its statement_timeout');
$secs = time - $t0;
cmp_ok($secs, '<', 2 + $bound, sprintf('cancel: ... in time (%.3f s)', $secs));
bg_query($mer, 'RESET gpuext.debug_ptree_merge_delay; RESET statement_timeout;');
all_agree('after a cancelled merge');
$node->safe_psql('postgres',
	"INSERT INTO m SELECT g % 5000, 4000000 + g, 'd' || g FROM generate_series(1, 4000) g");
all_agree('after the next merges');

# --- the merging backend killed -----------------------------------------------
bg_query($mer, "SET gpuext.debug_ptree_merge_delay = '60s';");
bg_send($mer, "INSERT INTO m SELECT g % 5000, 5000000 + g, 'e' || g FROM generate_series(1, 4000) g;");
ok(wait_in_merge($mpid, 'INSERT'), 'crash: the merge is under way');
bg_quit($r);
bg_quit($w);
my $logpos = log_position($node);
ok(kill('KILL', $mpid), 'crash: SIGKILL to the merging backend');
bg_wait_stderr($mer, qr/server closed the connection unexpectedly|connection to server was lost/);
bg_quit($mer);
ok(wait_for_log($node, qr/all server processes terminated; reinitializing/, $logpos),
	'crash: the postmaster restarts');
ok($node->poll_query_until('postgres', 'SELECT 1', '1'), 'crash: the server is back');
all_agree('after the crash');
$node->safe_psql('postgres',
	"INSERT INTO m SELECT g % 5000, 6000000 + g, 'f' || g FROM generate_series(1, 4000) g; DELETE FROM m WHERE k % 10 = 4; VACUUM m;");
all_agree('after inserts, deletes and VACUUM');
$node->wait_for_catchup($standby, 'replay', $node->lsn('insert'));
agree_on($standby, 'standby, at the end');
is($node->safe_psql('postgres', 'SELECT count(*) FROM m WHERE v > 5000000 AND v < 6000000'), '0',
	'crash: the killed INSERT left no rows');

$standby->stop;
$node->stop;
done_testing();
