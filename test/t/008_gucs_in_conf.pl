# Every gpuext setting can be set in postgresql.conf.  The library reserves
# the "gpuext" prefix (MarkGUCPrefixReserved), after which PostgreSQL drops
# any gpuext.* line it does not know with a warning; settings defined after
# the reservation were silently lost from the configuration file (found on
# the H100: gpuext.debug_capture_dir).  This test writes each setting, with
# its default value, into postgresql.conf, restarts, and checks that every
# one was taken from the file and nothing was removed.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $node = gpuext_node('gucs_in_conf');

my @settings = split /\n/, $node->safe_psql('postgres', q{
	SELECT name || ' = ' || quote_literal(reset_val)
	  FROM pg_settings
	 WHERE name LIKE 'gpuext.%' AND context <> 'internal'
	 ORDER BY name});
cmp_ok(scalar(@settings), '>=', 30, 'the library defines its settings');

$node->append_conf('postgresql.conf', join("\n", @settings) . "\n");
my $log_offset = -s $node->logfile;
$node->restart;
ok(wait_for_service($node), 'the service is up after the restart');

is( $node->safe_psql('postgres', q{
		SELECT string_agg(name, ', ' ORDER BY name)
		  FROM pg_settings
		 WHERE name LIKE 'gpuext.%' AND context <> 'internal'
		   AND source IS DISTINCT FROM 'configuration file'}),
	'', 'every gpuext setting came from postgresql.conf');

my $log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/invalid configuration parameter name "gpuext\./,
	'no gpuext setting was removed as unknown');

$node->stop;
done_testing();
