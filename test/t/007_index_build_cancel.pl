# Cancelling the build of a gpuext index: statement_timeout stops CREATE
# INDEX USING gpuext_ptree / gpuext_gist with SQLSTATE 57014 within seconds,
# no index is left behind, and a build afterwards passes its checker.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use GpuextTest;

my $node = gpuext_node('index_build_cancel');
$node->safe_psql(
	'postgres', q{
CREATE TABLE kt (k int, b box);
INSERT INTO kt SELECT (g::int8 * 7919 % 3000017)::int,
       box(point(g % 5000, g / 5000), point(g % 5000 + 3, g / 5000 + 2))
  FROM generate_series(1, 3000000) g;
VACUUM ANALYZE kt;
});

for my $am ('gpuext_ptree', 'gpuext_gist')
{
	my $col = $am eq 'gpuext_ptree' ? 'k' : 'b';
	my $t0 = time();
	my ($rc, $out, $err) = $node->psql('postgres',
		"SET statement_timeout = '200ms'; CREATE INDEX kt_idx ON kt USING $am ($col)",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	my $elapsed = time() - $t0;
	like($err, qr/57014.*canceling statement due to statement timeout/s,
		"$am: statement_timeout cancels the build with 57014");
	cmp_ok($elapsed, '<', 10, "$am: it stops soon after the timeout ($elapsed s)");
	is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname = 'kt_idx'"),
		'0', "$am: no index is left behind");

	$node->safe_psql('postgres', "CREATE INDEX kt_idx ON kt USING $am ($col)");
	my $check = $am eq 'gpuext_ptree' ? 'gpuext_ptree_check' : 'gpuext_gist_check';
	my ($crc, $cout, $cerr) = $node->psql('postgres', "SELECT * FROM $check('kt_idx', true)");
	is($crc, 0, "$am: a build afterwards passes $check") or diag($cerr);
	$node->safe_psql('postgres', 'DROP INDEX kt_idx');
}

$node->stop;
done_testing();
