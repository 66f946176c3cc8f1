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

echo
echo "== service counters"
$P -c "SELECT service_state, requests_served, gpu_batches, cpu_batches, fallbacks, pg_size_pretty(bytes_read) AS read, round(device_time_ms::numeric, 1) AS device_ms FROM gpuext_status()"
