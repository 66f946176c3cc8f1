# gpuext_ptree and crashes: kill -9 of a backend in the middle of inserts
# (the index merges its delta every page, so the kill often lands in a
# merge, planned or comparing keys: gpuext.ptree_merge_plan), of a CREATE INDEX and of a CREATE INDEX CONCURRENTLY.  After crash
# recovery the checker passes (structure and every heap tuple indexed), the
# index answers as a sequential scan does, and it keeps working.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $node = gpuext_node('ptree_crash');

# The index's answers (plain and bitmap scans) and a sequential scan's.
sub same_answers
{
	my ($table, $where) = @_;
	my $q = "SELECT count(*), sum(hashint8(v)) FROM $table WHERE $where";
	my $plain = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; $q");
	my $bitmap = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_indexscan = off; $q");
	my $seq = $node->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_bitmapscan = off; $q");
	return $plain eq $seq && $bitmap eq $seq;
}

# Crash a backend after it has done some of the work; returns after the
# server is back.
sub crash_backend
{
	my ($s, $pid, $what) = @_;
	my $logpos = log_position($node);
	ok(kill('KILL', $pid), "SIGKILL to the backend in $what");
	bg_wait_stderr($s, qr/server closed the connection unexpectedly|connection to server was lost/);
	bg_quit($s);
	ok(wait_for_log($node, qr/all server processes terminated; reinitializing/, $logpos),
		"the postmaster restarts after $what");
	ok($node->poll_query_until('postgres', 'SELECT 1', '1'), "the server is back after $what");
}

$node->safe_psql(
	'postgres', q{
CREATE TABLE pc (k int, v bigint, t text);
INSERT INTO pc SELECT g % 1000, g, 'r' || (g % 777) FROM generate_series(1, 20000) g;
CREATE INDEX pc_k ON pc USING gpuext_ptree (k) WITH (delta_pages = 1);
CREATE INDEX pc_t ON pc USING gpuext_ptree (t) WITH (delta_pages = 1);
CREATE PROCEDURE pc_fill() LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..100000 LOOP
    -- merges planned (sorted, ranked in the mirror) and merges that compare keys
    PERFORM set_config('gpuext.ptree_merge_plan', CASE WHEN i % 2 = 0 THEN 'on' ELSE 'off' END, false);
    INSERT INTO pc SELECT g % 1000, g, 'r' || (g % 777)
      FROM generate_series(20000 + i * 200, 20000 + i * 200 + 199) g;
    COMMIT;
  END LOOP;
END $$;
CHECKPOINT;
});

# inserts, committed every 200 rows, killed in the middle
my $s = bg_start($node);
my $pid = bg_pid($s);
bg_send($s, 'CALL pc_fill();');
ok($node->poll_query_until('postgres', 'SELECT count(*) > 60000 FROM pc'),
	'the inserts are under way');
crash_backend($s, $pid, 'inserts');

is($node->psql('postgres', "SELECT gpuext_ptree_check('pc_k', true), gpuext_ptree_check('pc_t', true)"),
	0, 'the checker passes after the crash');
ok(same_answers('pc', 'k BETWEEN 100 AND 130'), 'index and sequential scans agree (int)');
ok(same_answers('pc', "t = ANY('{r1,r2,r700}')"), 'index and sequential scans agree (text)');
$node->safe_psql('postgres',
	"INSERT INTO pc SELECT g % 1000, -g, 'after' FROM generate_series(1, 3000) g; DELETE FROM pc WHERE k = 120; VACUUM pc;");
is($node->psql('postgres', "SELECT gpuext_ptree_check('pc_k', true), gpuext_ptree_check('pc_t', true)"),
	0, 'the checker passes after more inserts, deletes and VACUUM');
ok(same_answers('pc', 'k BETWEEN 100 AND 130 OR v < 0'), 'and the answers agree');

# a build killed half-way: no index is left, the next build works
$node->safe_psql('postgres',
	"CREATE TABLE pb (v bigint); INSERT INTO pb SELECT (g::bigint * 7919) % 1000003 FROM generate_series(1, 1000000) g;");
$s = bg_start($node);
$pid = bg_pid($s);
bg_send($s, 'CREATE INDEX pb_v ON pb USING gpuext_ptree (v);');
ok( $node->poll_query_until(
		'postgres', "SELECT count(*) = 1 FROM pg_stat_progress_create_index WHERE pid = $pid"),
	'the build is under way');
crash_backend($s, $pid, 'CREATE INDEX');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname = 'pb_v'"),
	'0', 'the killed build left no index');
$node->safe_psql('postgres', 'CREATE INDEX pb_v ON pb USING gpuext_ptree (v) WITH (delta_pages = 4)');
is($node->psql('postgres', "SELECT gpuext_ptree_check('pb_v', true)"), 0, 'a new build passes the checker');
ok(same_answers('pb', 'v < 5000 OR v = ANY(\'{7919,15838,99}\')'), 'and answers as a sequential scan');

# CREATE INDEX CONCURRENTLY killed half-way leaves an invalid index, which
# the checker refuses and REINDEX repairs
$s = bg_start($node);
$pid = bg_pid($s);
bg_send($s, 'CREATE INDEX CONCURRENTLY pb_v2 ON pb USING gpuext_ptree (v);');
ok( $node->poll_query_until(
		'postgres', "SELECT count(*) = 1 FROM pg_stat_progress_create_index WHERE pid = $pid"),
	'the concurrent build is under way');
crash_backend($s, $pid, 'CREATE INDEX CONCURRENTLY');
my ($ret, $out, $err) = $node->psql('postgres', "SELECT gpuext_ptree_check('pb_v2', false)");
like($err, qr/not valid|does not exist/, 'the checker refuses the invalid index (or there is none)');
$node->safe_psql('postgres', 'DROP INDEX IF EXISTS pb_v2');
$node->safe_psql('postgres', 'CREATE INDEX CONCURRENTLY pb_v2 ON pb USING gpuext_ptree (v)');
is($node->psql('postgres', "SELECT gpuext_ptree_check('pb_v2', true)"), 0,
	'CREATE INDEX CONCURRENTLY builds a valid index');

$node->stop;
done_testing();
