#!/bin/bash
# gpuext under concurrent load and injected faults (see test/load/README):
# builds and installs gpuext, starts a throwaway cluster (test/cluster.sh),
# loads the tables of test/load/setup.sql and runs
#
#   bash test/load/run.sh load     pgbench with the query mix of
#       test/load/queries/ (4 clients a core), once on stock PostgreSQL
#       (gpuext.enabled = off, max_parallel_workers_per_gather = cores) and
#       once with gpuext; throughput side by side; no failed transaction;
#       every query's results equal to stock's before and after the load
#   bash test/load/run.sh faults   test/load/load.py faults: 64 clients run
#       the mix while a controller cancels, times out, injects device
#       faults, and SIGTERMs and SIGKILLs the GPU service; every result
#       checked against stock's, every error's SQLSTATE against the phase's
#       allowed set, latencies against statement_timeout plus one poll
#       interval, device memory and arena use back to idle
#   bash test/load/run.sh all      both, on one cluster
#   bash test/load/run.sh ci       both, small and fast (make test's suite
#       'load'): LOAD_ROWS 200000, LOAD_DURATION 15, LOAD_FAULT_CLIENTS 8,
#       LOAD_PHASE_SECS 4, LOAD_SLACK_MS 2000 (a test machine shared with
#       other jobs), gpuext.force_offload = on (so that the CPU engine runs
#       the queries on a machine without a GPU), every query must be
#       offloaded
#
# The report goes to stdout and to $LOAD_OUT/report.txt.  Exit status: 0
# passed, 1 a violation (a wrong result, an error not allowed, a hang, a
# leak, a crash), 2 setup failure.
#
# Environment (defaults for load/faults/all; ci's above):
#   LOAD_ROWS             rows of the fact table (200000; 20000000 on the GPU
#                         machine: bash test/device-run.sh load)
#   LOAD_NPROC            cores to size for (nproc)
#   LOAD_CLIENTS          pgbench clients (4 x LOAD_NPROC)
#   LOAD_DURATION         seconds of each pgbench run (30)
#   LOAD_FAULT_CLIENTS    clients of the fault test (64)
#   LOAD_PHASE_SECS       seconds of each fault phase (20)
#   LOAD_STATEMENT_TIMEOUT_MS  the fault clients' statement_timeout outside
#                         the short ones of the cancel phase (60000)
#   LOAD_SLACK_MS         what a query may take beyond its statement_timeout
#                         plus one gpuext.service_poll_interval, for the
#                         machine's scheduling (1000)
#   LOAD_GPUEXT_SETTINGS  "name=value ..." for the gpuext sessions (none:
#                         gpuext's defaults)
#   LOAD_REQUIRE_OFFLOAD=1  fail when a query's gpuext plan has no gpuext node
#   LOAD_SHARED_BUFFERS   (256MB up to 2 M rows, else 8GB)
#   LOAD_DMA_MB           gpuext.dma_buffer_size (128 up to 2 M rows, else 1024)
#   LOAD_OUT              folder of the report and logs (in the cluster folder)
#   LOAD_BUILD=0          use the installed gpuext as it is (no build/install;
#                         the install lock is then the caller's business)
#   LOAD_KEEP=1           keep the cluster folder (kept anyway on failure)
#   PG_CONFIG, GPUEXT_TEST_ENGINE, GPUEXT_TEST_PORT: as for make test
#                         (test/cluster.sh)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
. test/cluster.sh

MODE=${1:-}
case "$MODE" in
  load|faults|all|ci) ;;
  *) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
if [ "$MODE" = ci ]; then
  : "${LOAD_DURATION:=15}" "${LOAD_FAULT_CLIENTS:=8}" "${LOAD_PHASE_SECS:=4}"
  : "${LOAD_STATEMENT_TIMEOUT_MS:=30000}" "${LOAD_REQUIRE_OFFLOAD:=1}" "${LOAD_SLACK_MS:=2000}"
  : "${LOAD_GPUEXT_SETTINGS=gpuext.force_offload=on}"
fi
NPROC=${LOAD_NPROC:-$(nproc)}
ROWS=${LOAD_ROWS:-200000}
CLIENTS=${LOAD_CLIENTS:-$((4 * NPROC))}
THREADS=$((CLIENTS < NPROC ? CLIENTS : NPROC))
DURATION=${LOAD_DURATION:-30}
FCLIENTS=${LOAD_FAULT_CLIENTS:-64}
PHASE_SECS=${LOAD_PHASE_SECS:-20}
if [ "$ROWS" -le 2000000 ]; then
  SB=${LOAD_SHARED_BUFFERS:-256MB} DMA=${LOAD_DMA_MB:-128}
else
  SB=${LOAD_SHARED_BUFFERS:-8GB} DMA=${LOAD_DMA_MB:-1024}
fi
PYTHON=${PYTHON:-python3}

# "a=b c=d" -> "-c a=b -c c=d" (session options: PGOPTIONS, libpq's options)
to_options() { local o="" s; for s in $1; do o="$o -c $s"; done; echo "${o# }"; }
GX_OPTS=$(to_options "${LOAD_GPUEXT_SETTINGS:-}")
PG_OPTS=$(to_options "gpuext.enabled=off max_parallel_workers_per_gather=$NPROC")

if [ "${LOAD_BUILD:-1}" != 0 ]; then
  install_lock
  build_install /tmp/gpuext-load-build.log || exit 2
fi
conf="max_connections = $((FCLIENTS + CLIENTS + 20 > 100 ? FCLIENTS + CLIENTS + 20 : 100))
shared_buffers = $SB
gpuext.dma_buffer_size = ${DMA}MB
max_worker_processes = $((2 * NPROC + 8))
max_parallel_workers = $((2 * NPROC))
log_line_prefix = '%m [%p] '"
# parallel plans share memory through /dev/shm: where it is small (a
# container's), files in the data folder instead
shm_kb=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')
[ "${shm_kb:-0}" -lt 2097152 ] && conf="$conf
dynamic_shared_memory_type = mmap"
cluster_start gpuext-load "$conf" 58000 || exit 2
OUT=${LOAD_OUT:-$WORK/out}
mkdir -p "$OUT"
REPORT=$OUT/report.txt
: >"$REPORT"
export PGHOST=$WORK PGPORT=$PORT PGUSER=$RUNAS
export BINDIR PYTHONDONTWRITEBYTECODE=1
T0=$(date +%s)
say() { echo "$*" | tee -a "$REPORT"; }
loadpy() { "$PYTHON" test/load/load.py --gpuext-options "$GX_OPTS" --stock-options "$PG_OPTS" "$@" 9>&-; }
psql_load() { "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d load "$@" 9>&-; }

# --- data: LOAD_NPROC slices loaded at once ----------------------------------
"$BINDIR/createdb" load 9>&- || exit 2
slices=$NPROC
[ $((ROWS / slices)) -lt 1000 ] && slices=1
per=$(((ROWS + slices - 1) / slices))
psql_load -v rows="$ROWS" -v lo=1 -v hi=$((per < ROWS ? per : ROWS)) -f test/load/setup.sql || exit 2
pids=()
for ((lo = per + 1; lo <= ROWS; lo += per)); do
  hi=$((lo + per - 1 < ROWS ? lo + per - 1 : ROWS))
  psql_load -v rows="$ROWS" -v lo=$lo -v hi=$hi -f test/load/setup.sql &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || exit 2; done
psql_load -c "CREATE EXTENSION IF NOT EXISTS gpuext" -c "VACUUM ANALYZE" || exit 2
engine=$(psql_q "SELECT service_state || coalesce(' (' || (SELECT string_agg(name, ', ') FROM gpuext_devices()) || ')', '') FROM gpuext_status()")
say "gpuext load test ($MODE): $(date -u '+%Y-%m-%d %H:%M UTC'), $(hostname), $NPROC cores, GPU service: $engine"
say "data: load_fact $ROWS rows ($(psql_load -Atc "SELECT pg_size_pretty(pg_table_size('load_fact'))")), load_dim 10000 rows; loaded in $(($(date +%s) - T0)) s; shared_buffers $SB"

rc=0
check() {
  # $1 label, rest: load.py check options
  local label=$1
  shift
  [ "${LOAD_REQUIRE_OFFLOAD:-0}" = 1 ] && set -- --require-offload "$@"
  loadpy check --label "$label" "$@" >"$OUT/check-${label// /-}.log" 2>&1
  local r=$?
  if [ $r != 0 ] || [ "$label" = before ]; then
    tee -a "$REPORT" <"$OUT/check-${label// /-}.log"
  else
    tail -n 1 "$OUT/check-${label// /-}.log" | tee -a "$REPORT"
  fi
  [ $r = 0 ] || rc=1
  return $r
}
check before --out "$OUT/ref.json" || { cluster_stop; echo "== kept: $WORK"; exit 1; }

# --- load: pgbench, stock then gpuext ---------------------------------------
if [ "$MODE" != faults ]; then
  scripts=()
  for f in test/load/queries/*.sql; do scripts+=(-f "$f@1"); done
  for cfg in stock gpuext; do
    opts=$PG_OPTS
    if [ $cfg = gpuext ]; then
      opts=$GX_OPTS
      loadpy status --out "$OUT/status-before.json" || exit 2
    fi
    PGOPTIONS="$opts" "$BINDIR/pgbench" -n -d load -c "$CLIENTS" -j "$THREADS" -T "$DURATION" \
      "${scripts[@]}" >"$OUT/pgbench-$cfg.log" 2>&1 9>&-
    echo "pgbench exit status: $?" >>"$OUT/pgbench-$cfg.log"
  done
  loadpy pgbench-report --gpuext "$OUT/pgbench-gpuext.log" --stock "$OUT/pgbench-stock.log" \
    --clients "$CLIENTS" --threads "$THREADS" --duration "$DURATION" \
    --status-before "$OUT/status-before.json" | tee -a "$REPORT"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  check "after the load" --against "$OUT/ref.json"
fi

# --- faults -----------------------------------------------------------------
if [ "$MODE" != load ]; then
  loadpy faults --ref "$OUT/ref.json" --clients "$FCLIENTS" --phase-secs "$PHASE_SECS" \
    --statement-timeout-ms "${LOAD_STATEMENT_TIMEOUT_MS:-60000}" --slack-ms "${LOAD_SLACK_MS:-1000}" \
    --server-log "$WORK/server.log" >"$OUT/faults.log" 2>&1
  r=$?
  # (libpq prints the crash restart's WARNING to each session's stderr)
  grep -vE "^(WARNING|DETAIL|HINT):  |^  *[0-9.]* s  phase " "$OUT/faults.log" | tee -a "$REPORT"
  [ $r = 0 ] || rc=1
  check "after the faults" --against "$OUT/ref.json"
fi

# a crash other than the fault test's own SIGKILL of the service
# (load.py faults checks the log itself)
if [ "$MODE" = load ]; then
  crashes=$(crash_lines "$WORK/server.log")
  if [ -n "$crashes" ]; then
    say "VIOLATION server crash:"
    say "$crashes"
    rc=1
  fi
fi
say "load test ($MODE): $([ $rc = 0 ] && echo PASSED || echo FAILED) in $(($(date +%s) - T0)) s"
cluster_stop
trap - EXIT
if [ $rc = 0 ] && [ "${LOAD_KEEP:-0}" != 1 ]; then
  rm -rf "$WORK"
else
  echo "== report: $REPORT; cluster folder (data, server.log) kept: $WORK"
fi
exit $rc
