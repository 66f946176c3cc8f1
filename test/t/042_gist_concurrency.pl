# gpuext_gist under concurrent load (pgbench, 6 clients): inserts that
# split nodes, deletes, vacuums, index scans, bitmap scans, GistJoins and
# batch probes at once.  No error, no deadlock; afterwards the checker
# passes with heapallindexed and the index answers as a sequential scan.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('gist_concurrency');
$node->init;
$node->append_conf('postgresql.conf', "lc_messages = 'C'\nautovacuum = off\n");
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION gpuext;
CREATE TABLE cb (id bigint, bx box);
INSERT INTO cb SELECT g, box(point(g % 300, g % 200), point(g % 300 + 2, g % 200 + 2))
  FROM generate_series(1, 5000) g;
CREATE INDEX cb_bx ON cb USING gpuext_gist (bx) WITH (node_size = 10);
CREATE SEQUENCE cb_id START 100000;
});

$node->pgbench(
	'--no-vacuum --client=6 --jobs=3 --time=8',
	0,
	[qr{processed: [1-9]}],
	[qr{^$}],
	'concurrent inserts, deletes, vacuums and searches',
	{
		'001_insert@8' => q{
INSERT INTO cb SELECT nextval('cb_id'), box(point(x, y), point(x + 3, y + 1))
  FROM (SELECT (random() * 300)::int AS x, (random() * 200)::int AS y FROM generate_series(1, 20)) s;
},
		'002_delete@2' => q{
DELETE FROM cb WHERE id % 97 = (random() * 96)::int AND id > 3000;
},
		'003_vacuum@1' => q{
VACUUM cb;
},
		'004_index@4' => q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM cb WHERE bx && box '(100,50),(160,90)';
},
		'005_bitmap@3' => q{
SET enable_seqscan = off;
SET enable_indexscan = off;
SELECT count(*) FROM cb WHERE bx && ANY (ARRAY[box '(10,10),(20,20)', box '(250,150),(280,190)']);
},
		'006_join@2' => q{
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*) FROM (VALUES (box '(0,0),(30,30)'), (box '(200,100),(230,140)')) w(wb)
  JOIN cb ON cb.bx && w.wb;
},
		'007_probe@2' => q{
SELECT count(*) FROM gpuext_gist_probe('cb_bx', ARRAY[box '(40,40),(70,70)', box '(5,150),(35,199)']);
}
	});

$node->safe_psql('postgres', 'VACUUM cb');
is( $node->safe_psql('postgres',
		"SELECT leaf_entries = heap_tuples FROM gpuext_gist_check('cb_bx', true)"),
	't', 'the checker passes and every row is indexed');
for my $w ("box '(100,50),(160,90)'", "box '(0,0),(299,199)'", "box '(42,17),(42,17)'")
{
	my $seq = $node->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_bitmapscan = off;
		 SELECT count(*), sum(id) FROM cb WHERE bx && $w");
	my $idx = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SELECT count(*), sum(id) FROM cb WHERE bx && $w");
	is($idx, $seq, "index = sequential scan for $w");
}
unlike(slurp_file($node->logfile), qr/deadlock detected|ERROR/, 'no error or deadlock in the log');
$node->stop;
done_testing();
