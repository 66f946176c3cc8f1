# Helpers for the TAP tests in test/t: a node with gpuext preloaded, waiting
# for the GPU service, reading gpuext_status(), the server log, and
# background psql sessions driven through IPC::Run (as PostgreSQL's own
# src/test/recovery/t/013_crash_restart.pl does, so that every PostgreSQL 15
# minor release works, with or without PostgreSQL::Test::BackgroundPsql).
package GpuextTest;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(
  has_gpu gpuext_node wait_for_service status_of released_soon cache_probe
  log_position log_since wait_for_log
  bg_start bg_query bg_send bg_wait_stderr bg_wait_stdout bg_quit bg_pid
);

# The runner sets GPUEXT_HAS_GPU=1 when the GPU service found a GPU.
sub has_gpu
{
	return ($ENV{GPUEXT_HAS_GPU} // '0') eq '1';
}

# A started node with gpuext in shared_preload_libraries, small shared
# memory, the extension created in 'postgres' and the service up.
sub gpuext_node
{
	my ($name, $extra_conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init;
	$node->append_conf(
		'postgresql.conf', qq{
shared_preload_libraries = 'gpuext'
shared_buffers = 32MB
gpuext.dma_buffer_size = 32MB
max_worker_processes = 8
lc_messages = 'C'
log_line_prefix = '%m [%p] '
restart_after_crash = on
} . ($extra_conf // '') . "\n" . ($ENV{GPUEXT_TAP_EXTRA_CONF} // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION gpuext');
	ok(wait_for_service($node), "$name: the GPU service is up");
	return $node;
}

# Wait until the service reports 'ready' or 'no gpu' (true), or give up.
sub wait_for_service
{
	my ($node) = @_;
	return $node->poll_query_until('postgres',
		"SELECT service_state IN ('ready', 'no gpu') FROM gpuext_status()");
}

# Columns of gpuext_status(), as psql prints them (-At).
sub status_of
{
	my ($node, $cols) = @_;
	return $node->safe_psql('postgres', "SELECT $cols FROM gpuext_status()");
}

# Wait until the service holds no device memory and no DMA arena space.  A
# cancelled request's are freed by the service once its batch in flight on
# the GPU has seen the abort (the backend does not wait for that): they
# must be released soon, not at once.
sub released_soon
{
	my ($node) = @_;
	return $node->poll_query_until('postgres',
		"SELECT device_memory_in_use = 0 AND dma_arena_in_use = 0 FROM gpuext_status()");
}

# Make cc_result(offload bool, OUT res text, OUT cached bigint) in database
# postgres: it runs $query (one text column) with gpuext on (forced, GpuAgg
# off: a GpuScan) or off, and with it on reads the Cached Pages of the node
# under the plan's top one (NULL when the scan read no cache).
sub cache_probe
{
	my ($node, $query) = @_;
	(my $q = $query) =~ s/'/''/g;
	my $fn = q{
CREATE FUNCTION cc_result(offload bool, OUT res text, OUT cached bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  q text := 'QUERY';
  plan json;
BEGIN
  PERFORM set_config('gpuext.enabled', offload::text, true);
  PERFORM set_config('gpuext.force_offload', 'on', true);
  PERFORM set_config('gpuext.enable_gpuagg', 'off', true);
  EXECUTE q INTO res;
  IF offload THEN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
    cached := (plan->0->'Plan'->'Plans'->0->>'Cached Pages')::bigint;
  END IF;
END;
$fn$};
	$fn =~ s/QUERY/$q/;
	$node->safe_psql('postgres', $fn);
	return;
}

# The server log: where it ends now, and what was written since.
sub log_position
{
	my ($node) = @_;
	return -s $node->logfile;
}

sub log_since
{
	my ($node, $pos) = @_;
	my $log = slurp_file($node->logfile);
	return substr($log, $pos // 0);
}

# Wait until the server log matches after position $pos; true if it did.
sub wait_for_log
{
	my ($node, $re, $pos) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;

	while (time() < $deadline)
	{
		return 1 if log_since($node, $pos) =~ $re;
		usleep(100_000);
	}
	diag("the server log never matched $re");
	return 0;
}

# A psql session in the background.  Errors do not stop it, and they are
# printed with their SQLSTATE (VERBOSITY verbose).
sub bg_start
{
	my ($node, $dbname) = @_;
	my $s = {
		stdin => '',
		stdout => '',
		stderr => '',
		n => 0,
		timer => IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default),
	};
	$s->{run} = IPC::Run::start(
		[
			'psql', '-X', '-qAt', '-v', 'VERBOSITY=verbose',
			'-f', '-', '-d', $node->connstr($dbname // 'postgres')
		],
		'<', \$s->{stdin},
		'>', \$s->{stdout},
		'2>', \$s->{stderr},
		$s->{timer});
	return $s;
}

sub _restart_timer
{
	my ($s) = @_;
	$s->{timer}->reset;
	$s->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
}

# Run SQL in the session and wait for it.  Returns (stdout, stderr) in list
# context, stdout in scalar context; both are cleared for the next query.
sub bg_query
{
	my ($s, $sql) = @_;
	my $marker = "bg_query_done_" . ++$s->{n};

	_restart_timer($s);
	$s->{stdin} .= "$sql\n;\n\\echo $marker\n";
	pump_until($s->{run}, $s->{timer}, \$s->{stdout}, qr/$marker\n/)
	  or die "background psql query failed or timed out: $sql\nstderr: $s->{stderr}";
	my $out = $s->{stdout};
	my $err = $s->{stderr};
	$out =~ s/\n?$marker\n//;
	$s->{stdout} = '';
	$s->{stderr} = '';
	return wantarray ? ($out, $err) : $out;
}

# Send SQL without waiting for it.
sub bg_send
{
	my ($s, $sql) = @_;
	$s->{stdin} .= "$sql\n";
	$s->{run}->pump_nb;
}

# Wait until stderr (stdout) matches; true if it did.  The stream is cleared.
sub bg_wait_stderr
{
	my ($s, $re) = @_;
	_restart_timer($s);
	my $ok = pump_until($s->{run}, $s->{timer}, \$s->{stderr}, $re);
	$s->{last_stderr} = $s->{stderr};
	$s->{stderr} = '';
	return $ok;
}

sub bg_wait_stdout
{
	my ($s, $re) = @_;
	_restart_timer($s);
	my $ok = pump_until($s->{run}, $s->{timer}, \$s->{stdout}, $re);
	$s->{last_stdout} = $s->{stdout};
	$s->{stdout} = '';
	return $ok;
}

# The backend pid of a session.
sub bg_pid
{
	my ($s) = @_;
	my $pid = bg_query($s, 'SELECT pg_backend_pid()');
	chomp $pid;
	return $pid;
}

# End a session, dead or alive.
sub bg_quit
{
	my ($s) = @_;
	$s->{stdin} .= "\\q\n";
	eval { $s->{run}->finish; };
	return;
}

1;
