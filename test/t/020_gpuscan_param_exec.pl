# GpuScan quals that read a PARAM_EXEC: the value of an InitPlan
# (uncorrelated subquery), of a SubPlan's outer row (correlated subquery)
# or of a LATERAL reference.  The value only exists once the subquery has
# run or the outer row has been read, so the device program must be built
# with it, never before.  Each query must give the stock result, and the
# server must survive all of them (these live in a TAP test, on a cluster
# of their own, because a crash here would take the regression suites'
# server down with it).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

# GpuScan alone: GpuAgg (aggregation fused with the scan) has its own tests
my $node = gpuext_node('gpuscan_param_exec', "gpuext.enable_gpuagg = off\n");

$node->safe_psql(
	'postgres', q{
CREATE TABLE gx_p (id int, i4 int, s text, n numeric, f8 float8, d date);
INSERT INTO gx_p
SELECT g, (g * 7919) % 6007 - 3000, 'v' || g % 500, g / 8.0, g * 0.25, date '2000-01-01' + g
  FROM generate_series(1, 6000) g;
VACUUM ANALYZE gx_p;
});

my %queries = (
	'int InitPlan' =>
	  q{SELECT count(*), sum(id) FROM gx_p WHERE i4 > (SELECT 1500)},
	'float InitPlan' =>
	  q{SELECT count(*) FROM gx_p WHERE f8 > (SELECT avg(f8) FROM gx_p) * 1.5},
	'date InitPlan' =>
	  q{SELECT count(*) FROM gx_p WHERE d > (SELECT '2010-01-01'::date)},
	'int InitPlan making rows raise' =>
	  q{SELECT count(*) FROM gx_p WHERE i4 * (SELECT 1000000) > 0},
	'text InitPlan' =>
	  q{SELECT count(*), sum(id) FROM gx_p WHERE s = (SELECT 'v7')},
	'text InitPlan as LIKE pattern' =>
	  q{SELECT count(*), sum(id) FROM gx_p WHERE s LIKE (SELECT 'v1%')},
	'numeric InitPlan' =>
	  q{SELECT count(*), sum(id) FROM gx_p WHERE n > (SELECT 100.5)},
	'numeric InitPlan from an aggregate' =>
	  q{SELECT count(*) FROM gx_p WHERE n > (SELECT avg(n) FROM gx_p)},
	'array InitPlan' =>
	  q{SELECT count(*), sum(id) FROM gx_p WHERE i4 = ANY (ARRAY(SELECT generate_series(-3000, 3000, 7)))},
	'text SubPlan' =>
	  q{SELECT o.id, (SELECT count(*) FROM gx_p i WHERE i.s = o.s) FROM gx_p o WHERE o.id < 30 AND o.id > 0 ORDER BY 1},
	'numeric SubPlan' =>
	  q{SELECT o.id, (SELECT count(*) FROM gx_p i WHERE i.n < o.n) FROM gx_p o WHERE o.id < 30 AND o.id > 0 ORDER BY 1},
	'text LATERAL as LIKE pattern' =>
	  q{SELECT o.id, l.c FROM gx_p o, LATERAL (SELECT count(*) c FROM gx_p i WHERE i.s LIKE o.s AND i.id > 0) l WHERE o.id < 30 AND o.id > 0 ORDER BY 1},
	'text LATERAL' =>
	  q{SELECT o.id, l.c FROM gx_p o, LATERAL (SELECT count(*) c FROM gx_p i WHERE i.s = o.s) l WHERE o.id < 30 AND o.id > 0 ORDER BY 1},
);

my $crashes = 0;
foreach my $name (sort keys %queries)
{
	my $q = $queries{$name};

	# the offloaded plan has a GpuScan reading the parameter
	my $plan = $node->safe_psql('postgres',
		"SET gpuext.force_offload = on; SET gpuext.regression_test_mode = on; EXPLAIN (COSTS OFF) $q");
	like($plan, qr/GpuScan/, "$name: offloaded");

	my ($rc_stock, $stock, $err_stock) = $node->psql('postgres',
		"SET gpuext.enabled = off; $q");
	my ($rc, $out, $err) = $node->psql('postgres',
		"SET gpuext.force_offload = on; $q");
	if ($err =~ /server closed the connection|connection to server was lost/)
	{
		$crashes++;
		fail("$name: the server crashed");
		$node->poll_query_until('postgres', 'SELECT true');
		next;
	}
	is($rc, $rc_stock, "$name: same exit status as stock");
	is($err, $err_stock, "$name: same errors as stock");
	is($out, $stock, "$name: same result as stock");
}
is($crashes, 0, 'no query crashed the server');
ok(slurp_file($node->logfile) !~ qr/terminated by signal/,
	'no backend was terminated by a signal');

$node->stop;
done_testing();
