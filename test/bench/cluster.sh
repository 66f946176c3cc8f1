#!/bin/bash
# The benchmark's own PostgreSQL cluster: a data directory that survives
# between runs (so data is generated once per scale and seed), a socket
# directory and port of its own, gpuext preloaded.
#
#   cluster.sh init|start|stop|restart|status|wait-service
#
# Sourced by run.sh; also run as a command by bench.py for cold runs.
# Reads (run.sh exports them):
#   BENCH_DATA_DIR         folder of the cluster (default /tmp/gpuext-bench)
#   BENCH_PORT             port (default 5497; the socket lives in BENCH_DATA_DIR)
#   BENCH_SHARED_BUFFERS   e.g. 24GB (run.sh sizes it from the data)
#   BENCH_DMA_MB           gpuext.dma_buffer_size in MB (default 1024)
#   BENCH_NPROC            cores to plan for (default nproc)
#   BENCH_WORK_MEM         work_mem (default 256MB)
#   PG_CONFIG              pg_config of the server (default on PATH)
#   BENCH_RUNAS            OS user that runs the server (default: postgres when root)

BENCH_DATA_DIR=${BENCH_DATA_DIR:-/tmp/gpuext-bench}
BENCH_PORT=${BENCH_PORT:-5497}
BENCH_SHARED_BUFFERS=${BENCH_SHARED_BUFFERS:-1GB}
BENCH_DMA_MB=${BENCH_DMA_MB:-1024}
BENCH_NPROC=${BENCH_NPROC:-$(nproc)}
BENCH_WORK_MEM=${BENCH_WORK_MEM:-256MB}
PG_CONFIG=${PG_CONFIG:-pg_config}
BINDIR=${BINDIR:-$("$PG_CONFIG" --bindir)}
PGDATA_B=$BENCH_DATA_DIR/pgdata

if [ -z "${BENCH_RUNAS:-}" ]; then
  BENCH_RUNAS=$(id -un)
  [ "$(id -u)" = 0 ] && BENCH_RUNAS=postgres
fi

# Run a command line as the server's user.  Servers must not inherit the
# install lock (fd 9, see test/run-tests.sh) nor the data folder lock (fd 8).
bench_as_user() {
  if [ "$(id -un)" = "$BENCH_RUNAS" ]; then
    bash -c "$1" 8>&- 9>&-
  else
    runuser -u "$BENCH_RUNAS" -- bash -c "$1" 8>&- 9>&-
  fi
}

bench_cluster_init() {
  if [ "$(id -u)" = 0 ] && ! id "$BENCH_RUNAS" >/dev/null 2>&1; then
    useradd -m -s /bin/bash "$BENCH_RUNAS" || return 1
  fi
  mkdir -p "$BENCH_DATA_DIR"
  [ "$(id -u)" = 0 ] && chown "$BENCH_RUNAS" "$BENCH_DATA_DIR"
  local want
  want=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
  if [ -f "$PGDATA_B/PG_VERSION" ] && [ "$(cat "$PGDATA_B/PG_VERSION")" = "$want" ] &&
     [ -f "$PGDATA_B/postgresql.conf" ]; then
    return 0
  fi
  echo "bench: initdb $PGDATA_B"
  rm -rf "$PGDATA_B"
  bench_as_user "'$BINDIR/initdb' -D '$PGDATA_B' -A trust -N -E UTF8 --locale=C >'$BENCH_DATA_DIR/initdb.log' 2>&1" ||
    { cat "$BENCH_DATA_DIR/initdb.log"; return 1; }
  echo "include_if_exists = 'bench.conf'" | bench_as_user "cat >> '$PGDATA_B/postgresql.conf'"
}

# The settings of this run, rewritten at every start.
bench_cluster_conf() {
  local workers=$((BENCH_NPROC * 2 + 8))
  local dsm=posix
  # parallel query needs room in /dev/shm; containers often give it 64 MB
  local shm_kb
  shm_kb=$(df -k --output=avail /dev/shm 2>/dev/null | tail -n 1 | tr -d ' ')
  [ -n "$shm_kb" ] && [ "$shm_kb" -lt 2097152 ] 2>/dev/null && dsm=mmap
  bench_as_user "cat > '$PGDATA_B/bench.conf'" <<EOF
# written by test/bench/cluster.sh at each start
shared_preload_libraries = 'gpuext'
port = $BENCH_PORT
listen_addresses = ''
unix_socket_directories = '$BENCH_DATA_DIR'
max_connections = 200
shared_buffers = $BENCH_SHARED_BUFFERS
huge_pages = ${BENCH_HUGE_PAGES:-try}
dynamic_shared_memory_type = $dsm
max_worker_processes = $workers
max_parallel_workers = $((BENCH_NPROC * 2))
max_parallel_maintenance_workers = $(( (BENCH_NPROC + 1) / 2 ))
max_parallel_workers_per_gather = 2
work_mem = '$BENCH_WORK_MEM'
maintenance_work_mem = '1GB'
jit = off
fsync = off
synchronous_commit = off
full_page_writes = off
wal_level = minimal
max_wal_senders = 0
max_wal_size = '32GB'
checkpoint_timeout = '1h'
autovacuum = off
track_io_timing = on
gpuext.dma_buffer_size = ${BENCH_DMA_MB}MB
log_min_messages = warning
log_line_prefix = '%m [%p] '
lc_messages = 'C'
EOF
}

bench_cluster_running() {
  bench_as_user "'$BINDIR/pg_ctl' -D '$PGDATA_B' status" >/dev/null 2>&1
}

bench_cluster_stop() {
  if bench_cluster_running; then
    # fast, not immediate: a clean stop, no crash recovery at the next start
    bench_as_user "'$BINDIR/pg_ctl' -D '$PGDATA_B' -m fast -w -t 300 stop" >/dev/null
  fi
}

bench_cluster_start() {
  bench_cluster_stop
  bench_cluster_conf
  if ! bench_as_user "'$BINDIR/pg_ctl' -D '$PGDATA_B' -l '$BENCH_DATA_DIR/server.log' -w -t 600 start" >/dev/null; then
    tail -n 40 "$BENCH_DATA_DIR/server.log"
    return 1
  fi
  bench_cluster_wait_service
}

bench_psql() {
  bench_as_user "'$BINDIR/psql' -X -q -t -A -h '$BENCH_DATA_DIR' -p $BENCH_PORT -d postgres -c \"$1\""
}

# Wait until the GPU service has started (it registers shared_buffers with
# CUDA first, which takes seconds per 10 GB).
bench_cluster_wait_service() {
  local state="" i
  bench_psql "CREATE EXTENSION IF NOT EXISTS gpuext" >/dev/null 2>&1
  for i in $(seq 1 1200); do
    state=$(bench_psql "SELECT service_state FROM gpuext_status()" 2>/dev/null)
    case "$state" in ready|"no gpu") break ;; esac
    sleep 0.5
  done
  echo "bench: GPU service: ${state:-unknown}"
  case "$state" in ready|"no gpu") return 0 ;; esac
  return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -u
  case "${1:-}" in
    init) bench_cluster_init ;;
    start) bench_cluster_start ;;
    stop) bench_cluster_stop ;;
    restart) bench_cluster_stop && bench_cluster_start ;;
    status) bench_cluster_running ;;
    wait-service) bench_cluster_wait_service ;;
    *) echo "usage: $0 init|start|stop|restart|status|wait-service" >&2; exit 2 ;;
  esac
fi
