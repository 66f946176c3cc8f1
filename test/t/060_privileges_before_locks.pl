# The SQL functions that take a relation check the caller's privileges (and
# row-level security) before they lock it: a user refused a table must be
# refused at once, not queue a lock behind the owner's transaction (and
# ahead of the owner's next writers) first.
#
# 1. While the owner holds ACCESS EXCLUSIVE on the tables, an unprivileged
#    role calls each function (lock_timeout 3 s, so that a function that
#    queues fails with 55P03 instead of hanging): every call must fail with
#    42501, well before the timeout.
# 2. While the owner is inserting (ROW EXCLUSIVE held), the role calls
#    gpuext_ptree_check(idx, true) (which takes SHARE); once that call is
#    refused or waiting, another insert by the owner must not be blocked.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use GpuextTest;

my $node = gpuext_node('privileges_before_locks', "gpuext.device = cpu\nautovacuum = off");

$node->safe_psql(
	'postgres', q{
CREATE ROLE regress_gpuext_owner LOGIN;
CREATE ROLE regress_gpuext_intruder LOGIN;
CREATE TABLE t (id int, bx box);
INSERT INTO t SELECT g, box(point(g, g), point(g + 1, g + 1)) FROM generate_series(1, 1000) g;
CREATE INDEX t_id ON t USING gpuext_ptree (id);
CREATE INDEX t_bx ON t USING gpuext_gist (bx);
ALTER TABLE t OWNER TO regress_gpuext_owner;
-- a table the role may read, under a policy that hides most rows
CREATE TABLE r (id int, bx box);
INSERT INTO r SELECT g, box(point(g, g), point(g + 1, g + 1)) FROM generate_series(1, 30) g;
CREATE INDEX r_bx ON r USING gpuext_gist (bx);
ALTER TABLE r ENABLE ROW LEVEL SECURITY;
CREATE POLICY r_one ON r USING (id = 1);
ALTER TABLE r OWNER TO regress_gpuext_owner;
GRANT SELECT ON r TO regress_gpuext_intruder;
-- granted: only the function's own check stands in the way
GRANT EXECUTE ON FUNCTION gpuext_gist_check(regclass, boolean) TO regress_gpuext_intruder;
});

# Run SQL as the role with lock_timeout 3 s; (stderr, seconds).
sub as_intruder
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	my $start = time;
	$node->psql(
		'postgres',
		"SET lock_timeout = '3s';\n$sql",
		stdout => \$out,
		stderr => \$err,
		extra_params => [ '-U', 'regress_gpuext_intruder', '-v', 'VERBOSITY=verbose' ]);
	return ($err, time - $start);
}

# 1. the owner holds ACCESS EXCLUSIVE on both tables
my $owner = bg_start($node);
bg_query($owner, 'SET ROLE regress_gpuext_owner');
bg_query($owner, 'BEGIN');
bg_query($owner, 'LOCK TABLE t, r IN ACCESS EXCLUSIVE MODE');

for my $call (
	"SELECT gpuext_ptree_check('t_id', true)",
	"SELECT gpuext_ptree_check('t_id', false)",
	"SELECT * FROM gpuext_gist_check('t_bx', true)",
	"SELECT * FROM gpuext_gist_check('t_bx', false)",
	"SELECT * FROM gpuext_gist_probe('t_bx', ARRAY[box '(0,0),(5,5)'])",
	"SELECT * FROM gpuext_page_counts('t')",
	"SELECT * FROM gpuext_gist_probe('r_bx', ARRAY[box '(0,0),(50,50)'])",
	"SELECT * FROM gpuext_page_counts('r')",
	"SELECT gpuext_cache_enable('t')",
	"SELECT gpuext_cache_drop('t')")
{
	my ($err, $secs) = as_intruder($call);
	like($err, qr/ERROR:  42501:/, "refused with 42501: $call");
	unlike($err, qr/55P03|lock timeout/, "refused without waiting for the lock: $call");
	cmp_ok($secs, '<', 2.5, "refused at once: $call")
	  or diag(sprintf('%.2f s; %s', $secs, $err));
}
bg_query($owner, 'COMMIT');

# 2. the owner is inserting; the role asks for SHARE through the checker
bg_query($owner, 'BEGIN');
bg_query($owner, 'INSERT INTO t VALUES (1001, box(point(1, 1), point(2, 2)))');
my $intruder = bg_start($node);
bg_query($intruder, 'SET ROLE regress_gpuext_intruder');
bg_query($intruder, "SET lock_timeout = '5s'");
my $ipid = bg_pid($intruder);
my $start = time;
bg_send($intruder, "SELECT gpuext_ptree_check('t_id', true);\n");
# wait until the call has either ended or is waiting for a lock
$node->poll_query_until('postgres',
	"SELECT state = 'idle' OR wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $ipid")
  or die 'the checker call neither ended nor waited';
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_locks WHERE pid = $ipid AND NOT granted"),
	'0', 'the refused role queues no lock');

# another insert by the owner goes through
my ($out, $err) = ('', '');
my $ins_start = time;
$node->psql(
	'postgres',
	"SET lock_timeout = '2s';\nINSERT INTO t VALUES (1002, box(point(3, 3), point(4, 4)));",
	stdout => \$out,
	stderr => \$err,
	extra_params => [ '-U', 'regress_gpuext_owner', '-v', 'VERBOSITY=verbose' ]);
is($err, '', "the owner's next insert is not blocked by the refused call");
cmp_ok(time - $ins_start, '<', 1.5, "the owner's next insert completes at once");

ok(bg_wait_stderr($intruder, qr/ERROR/), 'the checker call ended');
like($intruder->{last_stderr}, qr/ERROR:  42501:/, 'the checker call was refused with 42501');
cmp_ok(time - $start, '<', 4, 'the checker call was refused before its lock timeout');
bg_query($owner, 'COMMIT');
bg_quit($intruder);
bg_quit($owner);

is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '1002', 'both inserts are there');
$node->stop;
done_testing();
