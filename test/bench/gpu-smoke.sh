#!/bin/bash
# A first look on the GPU machine: build, start a cluster with a GPU
# service, check the devices, time an empty request, compare per-page
# counts and GpuScan results between the GPU and the CPU engine, and time
# a scan against stock PostgreSQL.  Writes everything to ${OUT:-/tmp}/smoke.log.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp}
ROWS=${ROWS:-10000000}
exec > >(tee "$OUT/smoke.log") 2>&1

command -v pg_config >/dev/null || bash .gpu/install-pg-bundle.sh
nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
nproc; free -g | head -2
(flock 9; make -s -j16 2>&1 | grep -E "warning|error"; make -s install >/dev/null) 9>"/tmp/gpuext-install$(pg_config --pkglibdir | tr / _).lock" || exit 1

W=/tmp/gx-smoke
rm -rf $W; mkdir -p $W; chown postgres $W
su postgres -c "initdb -D $W/data -A trust >/dev/null"
cat >> $W/data/postgresql.conf <<EOC
shared_preload_libraries = 'gpuext'
port = 5498
unix_socket_directories = '$W'
listen_addresses = ''
shared_buffers = ${SHARED_BUFFERS:-24GB}
max_worker_processes = 40
max_parallel_workers = 32
max_parallel_workers_per_gather = 16
work_mem = 256MB
jit = off
fsync = off
synchronous_commit = off
gpuext.dma_buffer_size = ${DMA_MB:-1024}MB
EOC
su postgres -c "pg_ctl -D $W/data -l $W/log -w -t 300 start" || { cat $W/log; exit 1; }
P="psql -X -h $W -p 5498 -U postgres"
$P -c "create extension gpuext" >/dev/null
for i in $(seq 1 120); do
  s=$($P -tAc "select service_state from gpuext_status()"); [ "$s" = ready ] || [ "$s" = "no gpu" ] && break; sleep 1
done
$P -c "select * from gpuext_devices()" -c "select * from gpuext_status()"
grep gpuext $W/log
$P -c "select gpuext_service_roundtrip(1) as first_us" -c "select gpuext_service_roundtrip(20000) as mean_us"

$P <<EOSQL
\timing on
create extension if not exists pg_prewarm;
create unlogged table t (id int, a int, b float8, c numeric(12,2), d text, e date, f float4, g char(1));
insert into t select g, (g::bigint * 7919) % 1000, g / 7.0, ((g::bigint * 31) % 100000) / 100.0, 'str' || (g % 50), date '2020-01-01' + (g % 365), (g % 1000) / 3.0, chr(65 + g % 4)
  from generate_series(1, $ROWS) g;
vacuum freeze analyze t;
select pg_size_pretty(pg_relation_size('t')), pg_prewarm('t');
-- per-page counts: GPU vs CPU engine
select count(*) as pages_gpu_vs_cpu_mismatch from (
  (select * from gpuext_page_counts('t', 'gpu') except all select * from gpuext_page_counts('t', 'cpu'))
  union all
  (select * from gpuext_page_counts('t', 'cpu') except all select * from gpuext_page_counts('t', 'gpu'))) x;
select bytes_read, device_time_ms, round((bytes_read / 1e6 / nullif(device_time_ms, 0))::numeric, 1) as gb_per_s from gpuext_status();
select sum(visible) from gpuext_page_counts('t', 'gpu');
select bytes_read, device_time_ms from gpuext_status();
\timing off
EOSQL

Q1="select count(*), sum(a) from t where a < 10"
Q2="select count(*) from t where a < 10 and d like 'str1%' and c > 500.5 and e between date '2020-03-01' and date '2020-06-01'"
Q3="select count(*) from t where b * 2 > f and id % 1000 = 7"
Q4="select g, count(*), sum(c), sum(c * (1 - 0.05)), avg(c), avg(a), min(e), max(b) from t where e <= date '2020-11-01' group by g order by g"
Q5="select id % 1000000 as k, count(*), sum(a) from t group by 1 order by 2 desc, 1 limit 5"
Q6="select count(*), sum(a), avg(b) from t where a < 500"
for q in "$Q4" "$Q5" "$Q6" "$Q1" "$Q2" "$Q3"; do
  echo "=== $q"
  for cfg in "gpuext.enabled=off;max_parallel_workers_per_gather=0" "gpuext.enabled=off;max_parallel_workers_per_gather=16" "gpuext.force_offload=on;max_parallel_workers_per_gather=0" "gpuext.force_offload=on;max_parallel_workers_per_gather=8"; do
    sets=$(echo "$cfg" | tr ';' '\n' | sed 's/^/set /; s/$/;/')
    echo "--- $cfg"
    reps="-c \"$q\" -c \"$q\""
    case "$cfg" in *enabled=off*parallel_workers_per_gather=0*) reps="-c \"$q\"";; esac
    eval $P -c "\"$sets\"" -c "\"\\timing on\"" $reps | grep -E "Time|^ *[0-9A-Z]"
  done
  $P -c "set gpuext.force_offload=on" -c "explain (analyze, costs off) $q"
  $P -c "set gpuext.force_offload=on" -c "set max_parallel_workers_per_gather=8" -c "explain (analyze, costs off) $q"
done
$P -c "select * from gpuext_status()"
su postgres -c "pg_ctl -D $W/data -m fast stop" >/dev/null
grep -iE "error|fatal|panic" $W/log | head -20
