# A parallel GpuJoin, whose leader builds the inner tables (in a DSM
# segment, on a GPU also a device task) before its workers start and frees
# them after they are done: cancelled while the leader builds, while the
# workers probe, and failing in a worker, it stops with the right SQLSTATE,
# leaves no device memory, DMA arena space or DSM segment behind (no
# "leak" warning in the server log), and the next query gives stock
# PostgreSQL's answer.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $node = gpuext_node('join_parallel_cancel');

$node->safe_psql(
	'postgres', q{
CREATE TABLE pf (id int, a int, b int);
INSERT INTO pf SELECT g, g % 50000, g % 7 FROM generate_series(1, 1000000) g;
CREATE TABLE pd (k int, v int);
INSERT INTO pd SELECT g, g % 13 FROM generate_series(1, 50000) g;
VACUUM ANALYZE pf;
VACUUM ANALYZE pd;
ALTER TABLE pd SET (parallel_workers = 0);
});
my $logpos = log_position($node);

# a parallel GpuJoin under a partial aggregation (no fused GpuAgg)
my $setup = q{SET gpuext.force_offload = on; SET gpuext.enable_gpuagg = off;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SET gpuext.max_batch_pages = 8;};
my $join = "SELECT pf.b, count(*), sum(pd.v) FROM pf JOIN pd ON pf.a = pd.k GROUP BY pf.b";
like(
	$node->safe_psql('postgres', "$setup EXPLAIN (COSTS OFF) $join"),
	qr/Gather.*Parallel Custom Scan \(GpuJoin\)/s,
	'the join is a parallel GpuJoin');
like(
	$node->safe_psql('postgres',
		"$setup EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $join"),
	qr/Inner Build: leader, shared with \d+ workers?/,
	'its leader builds the inner tables for every participant');

# --- cancelled while the leader builds (a slow inner plan) --------------------
my $slow = "SELECT pf.b, count(*), sum(pd.v) FROM pf JOIN pd ON pf.a = pd.k
  WHERE pg_sleep(0.0002 + pd.v * 0) IS NOT NULL GROUP BY pf.b";
like(
	$node->safe_psql('postgres', "$setup EXPLAIN (COSTS OFF) $slow"),
	qr/Parallel Custom Scan \(GpuJoin\)/,
	'the slow join is a parallel GpuJoin too');
for my $ms (300, 600, 900)
{
	my ($rc, $out, $err) = $node->psql('postgres',
		"$setup SET statement_timeout = '${ms}ms'; $slow",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($err, qr/57014/, "cancelled during the leader's build ($ms ms)");
}
ok(released_soon($node), 'nothing is held after those cancels');

# --- cancelled while the workers probe -----------------------------------------
my $cancelled = 0;
for my $i (1 .. 10)
{
	my $ms = 20 + 15 * $i;
	my ($rc, $out, $err) = $node->psql('postgres',
		"$setup SET statement_timeout = '${ms}ms'; $join",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	$cancelled++ if $err =~ /57014/;
	$cancelled++ if $rc == 0;	# (finished before the timeout: fine too)
}
is($cancelled, 10, '10 statement timeouts: each cancelled (57014) or done');
ok(released_soon($node), 'nothing is held after them');

# --- an error in a worker (a host filter over the joined rows) -----------------
my ($rc, $out, $err) = $node->psql('postgres',
	"$setup SELECT count(*) FROM pf JOIN pd ON pf.a = pd.k WHERE 1 / (pf.id - 777777) > -5",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/22012/, 'an error in a participant: division by zero');
ok(released_soon($node), 'nothing is held after it');

# --- and then the right answer, without leaks ----------------------------------
my $ours = $node->safe_psql('postgres', "$setup $join ORDER BY 1");
my $stock = $node->safe_psql('postgres', "SET gpuext.enabled = off; $join ORDER BY 1");
is($ours, $stock, 'the join gives the stock answer afterwards');
my $log = log_since($node, $logpos);
unlike($log, qr/leak|TRAP|terminated by signal/, 'no leak warning, assertion or crash in the log');

$node->stop;
done_testing();
