#!/bin/bash
# make demo: on a throwaway cluster with gpuext preloaded, create sample
# data, show the devices, and run each offloaded query with EXPLAIN ANALYZE
# and its time on stock PostgreSQL, the CPU engine and the GPU.
#
#   DEMO_ROWS   rows of the sample table (default 2000000)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. test/cluster.sh
ROWS=${DEMO_ROWS:-2000000}

# the install lock only while building (test/cluster.sh)
(install_lock && build_install /tmp/gpuext-demo-build.log) || exit 1

cluster_start gpuext-demo "shared_buffers = 1GB
max_parallel_workers_per_gather = 4
jit = off
gpuext.dma_buffer_size = 256MB" || exit 1
trap 'cluster_stop; rm -rf "$WORK"' EXIT
P="$BINDIR/psql -X -h $WORK -p $PORT -U $RUNAS -d postgres"
$P -q -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm"

echo "== devices"
$P -c "SELECT device_index, engine, name, sm_count, compute_capability, status FROM gpuext_devices()"
echo "== an empty request through the GPU service"
$P -c "SELECT round(gpuext_service_roundtrip(1000)::numeric, 1) AS microseconds"

echo "== sample data: $ROWS rows"
$P -q <<EOF
CREATE TABLE sales (id int, store int, qty int, price numeric(10,2), discount float8,
                    sold date, region char(1), note text);
INSERT INTO sales
SELECT g, g % 500, 1 + g % 20, ((g * 37) % 100000) / 100.0, (g % 10) / 100.0,
       date '2023-01-01' + (g % 730), chr(65 + g % 5), 'note ' || (g % 1000)
  FROM generate_series(1, $ROWS) g;
VACUUM FREEZE ANALYZE sales;
SELECT pg_prewarm('sales');
CREATE TABLE stores (store int, city text, opened date);
INSERT INTO stores SELECT s, 'city ' || (s % 40), date '2015-01-01' + s FROM generate_series(0, 499) s;
CREATE INDEX sales_store_ptree ON sales USING gpuext_ptree (store);
CREATE TABLE areas (id int, area box);
INSERT INTO areas SELECT g, box(point(g % 1000, g / 1000), point(g % 1000 + 2, g / 1000 + 2))
  FROM generate_series(1, 100000) g;
CREATE INDEX areas_gist ON areas USING gpuext_gist (area);
ANALYZE stores, areas;
EOF

run() {
  local title=$1 q=$2
  echo
  echo "== $title"
  echo "$q"
  $P -c "SET gpuext.force_offload = on" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $q"
  for cfg in "stock PostgreSQL|SET gpuext.enabled = off" \
             "gpuext, CPU engine|SET gpuext.force_offload = on; SET gpuext.device = cpu" \
             "gpuext, auto (GPU when there is one)|SET gpuext.force_offload = on"; do
    name=${cfg%%|*}
    sets=${cfg#*|}
    ms=$($P -c "$sets" -c "\\timing on" -c "$q" -c "$q" 2>&1 | grep '^Time:' | tail -1 | awk '{print $2}')
    printf '   %-40s %10s ms\n' "$name" "$ms"
  done
}

run "GpuScan: filters on the device, rows returned from shared_buffers" \
  "SELECT count(*) FROM (SELECT id, price FROM sales WHERE qty > 15 AND price < 300.00 AND note LIKE 'note 1%') s"
run "GpuAgg: GROUP BY fused with the scan (TPC-H Q1 shape)" \
  "SELECT region, count(*), sum(qty), sum(price * (1 - 0.05)), avg(price), min(sold), max(discount) FROM sales WHERE sold <= date '2024-10-01' GROUP BY region ORDER BY region"
run "GpuAgg: many groups" \
  "SELECT store, count(*), sum(qty) FROM sales GROUP BY store ORDER BY 3 DESC LIMIT 3"
run "GpuJoin + GpuAgg: the sales probe the stores in the same pass, only groups come back" \
  "SELECT st.city, count(*), sum(s.qty) FROM sales s JOIN stores st ON st.store = s.store WHERE s.qty > 10 GROUP BY st.city ORDER BY 3 DESC LIMIT 3"
# an index query as the planner chooses it, against a sequential scan
run_index() {
  local title=$1 q=$2
  echo
  echo "== $title"
  echo "$q"
  $P -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $q"
  for cfg in "the gpuext index|SET gpuext.enable_gpuscan = off" \
             "sequential scan|SET enable_indexscan = off; SET enable_bitmapscan = off; SET gpuext.enabled = off"; do
    name=${cfg%%|*}
    sets=${cfg#*|}
    ms=$($P -c "$sets" -c "\\timing on" -c "$q" -c "$q" 2>&1 | grep '^Time:' | tail -1 | awk '{print $2}')
    printf '   %-40s %10s ms\n' "$name" "$ms"
  done
}

run_index "gpuext_ptree: a batch of keys as = ANY (one batched lookup)" \
  "SELECT count(*), sum(qty) FROM sales WHERE store = ANY ('{3,77,150,299,421}'::int[])"
run_index "gpuext_gist: a batch of windows as && ANY (one level-by-level walk)" \
  "SELECT count(*) FROM areas WHERE area && ANY (ARRAY(SELECT box(point(g * 9, g), point(g * 9 + 5, g + 5)) FROM generate_series(1, 100) g))"

echo
echo "== service counters"
$P -c "SELECT service_state, requests_served, gpu_batches, cpu_batches, fallbacks, pg_size_pretty(bytes_read) AS read, round(device_time_ms::numeric, 1) AS device_ms FROM gpuext_status()"
