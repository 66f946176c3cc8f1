# gpuext_ptree under a concurrent mix (pgbench, 6 clients, 15 seconds):
# inserts (the delta merges at every page), range and = ANY scans (per
# element and batched through the mirror), deletes and VACUUM.  No error,
# no deadlock; afterwards the checker passes and the index answers as a
# sequential scan does.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuextTest;

my $node = gpuext_node('ptree_stress');

$node->safe_psql(
	'postgres', q{
CREATE TABLE st (k int, t text);
INSERT INTO st SELECT g % 2000, 'v' || (g % 2000) FROM generate_series(1, 20000) g;
CREATE INDEX st_k ON st USING gpuext_ptree (k) WITH (delta_pages = 1);
CREATE INDEX st_t ON st USING gpuext_ptree (t) WITH (delta_pages = 2);
});

$node->pgbench(
	'--no-vacuum --client=6 --jobs=2 --time=15',
	0,
	[qr{processed: [1-9]}],
	[qr{^$}],
	'concurrent inserts, scans, deletes and VACUUM',
	{
		'033_insert@4' => q{
\set k random(1, 2000)
INSERT INTO st (k, t) SELECT :k + g, 'v' || (:k + g) FROM generate_series(1, 20) g;
},
		'033_scan@4' => q{
\set k random(1, 2000)
SET enable_seqscan = off;
SELECT count(*) FROM st WHERE k BETWEEN :k AND :k + 50;
SELECT count(*) FROM st WHERE k = ANY(ARRAY(SELECT generate_series(:k, :k + 300)));
SELECT count(*) FROM st WHERE k = ANY(ARRAY(SELECT generate_series(:k, :k + 20)));
SELECT count(*) FROM st WHERE t = ANY(ARRAY(SELECT 'v' || g FROM generate_series(:k, :k + 100) g));
},
		'033_delete@1' => q{
\set k random(1, 2000)
DELETE FROM st WHERE k = :k;
},
		'033_vacuum@1' => q{
VACUUM st;
SELECT pg_sleep(0.1);
},
	});

is($node->psql('postgres', "SELECT gpuext_ptree_check('st_k', true), gpuext_ptree_check('st_t', true)"),
	0, 'the checker passes');
my $q = "SELECT count(*), sum(k), count(DISTINCT t) FROM st WHERE k > 100 OR t ~<~ 'v2'";
my $seq = $node->safe_psql('postgres',
	"SET enable_indexscan = off; SET enable_bitmapscan = off; $q");
is($node->safe_psql('postgres', "SET enable_seqscan = off; $q"), $seq,
	'the index answers as a sequential scan');
$node->stop;
done_testing();
