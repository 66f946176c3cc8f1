#!/bin/bash
# make fuzz: build and install gpuext, start a throwaway cluster with the
# same settings as test/run-tests.sh, run the differential query generator
# (test/fuzz/fuzz.py), stop the cluster.  Exits with the fuzzer's status:
# non-zero on a result mismatch or a server crash.
#
#   make fuzz [N=500] [SEED=1] [FUZZ_ARGS="--verbose ..."]
#   bash test/fuzz/run.sh [fuzz.py options]
#
# Environment:
#   FUZZ_N, FUZZ_SEED     queries and seed (make's N and SEED; default 500, 1)
#   FUZZ_BUILD=0          use the installed gpuext as it is (no build/install)
#   FUZZ_OUT=FILE         where the report goes too (default: in the cluster
#                         folder, which is kept when the run fails or FUZZ_KEEP=1)
#   PG_CONFIG             pg_config of the server (default: on PATH; on a bare
#                         GPU machine .gpu/install-pg-bundle.sh installs one)
#   GPUEXT_TEST_ENGINE    cpu | auto: gpuext.device (default auto)
#   GPUEXT_TEST_PORT      port (default: random 55000-55999)
# The install lock /tmp/gpuext-make-test.lock (see test/run-tests.sh) is held
# for the whole run, so no other test run replaces gpuext.so under it.
set -u
export LANG=C.UTF-8 LC_ALL=C.UTF-8
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

if ! command -v "${PG_CONFIG:-pg_config}" >/dev/null 2>&1 && [ -x .gpu/install-pg-bundle.sh ]; then
  bash .gpu/install-pg-bundle.sh || exit 2
fi
PG_CONFIG=${PG_CONFIG:-pg_config}
BINDIR=$("$PG_CONFIG" --bindir) || exit 2
ENGINE=${GPUEXT_TEST_ENGINE:-auto}
N=${FUZZ_N:-500}
SEED=${FUZZ_SEED:-1}
[ -n "$N" ] || N=500
[ -n "$SEED" ] || SEED=1
PYTHON=${PYTHON:-python3}

exec 9>/tmp/gpuext-make-test.lock
flock 9

if [ "${FUZZ_BUILD:-1}" != 0 ]; then
  echo "== building and installing"
  if ! make -s PG_CONFIG="$PG_CONFIG" >/tmp/gpuext-fuzz-build.log 2>&1 ||
     ! make -s PG_CONFIG="$PG_CONFIG" install >>/tmp/gpuext-fuzz-build.log 2>&1; then
    cat /tmp/gpuext-fuzz-build.log
    exit 2
  fi
fi

# PostgreSQL refuses to run as root: run the server as an unprivileged user
# (servers started here must not inherit the lock's descriptor)
RUNAS=$(id -un)
if [ "$(id -u)" = 0 ]; then
  RUNAS=${GPUEXT_TEST_USER:-postgres}
  id "$RUNAS" >/dev/null 2>&1 || useradd -m -s /bin/bash "$RUNAS"
fi
as_user() {
  if [ "$(id -un)" = "$RUNAS" ]; then
    bash -c "$1" 9>&-
  else
    runuser -u "$RUNAS" -- bash -c "$1" 9>&-
  fi
}

WORK=$(mktemp -d /tmp/gpuext-fuzz.XXXXXX)
chmod 755 "$WORK"
chown "$RUNAS" "$WORK"
PORT=${GPUEXT_TEST_PORT:-$((55000 + RANDOM % 1000))}
PGDATA=$WORK/data
OUTFILE=${FUZZ_OUT:-$WORK/fuzz-report.txt}

cleanup() {
  as_user "'$BINDIR/pg_ctl' -D '$PGDATA' -m immediate stop" >/dev/null 2>&1
}
trap cleanup EXIT

echo "== starting a throwaway cluster on port $PORT as $RUNAS ($WORK)"
as_user "'$BINDIR/initdb' -D '$PGDATA' -A trust -N --locale=C.UTF-8 --encoding=UTF8 >'$WORK/initdb.log' 2>&1" ||
  { cat "$WORK/initdb.log"; exit 2; }
# the settings of test/run-tests.sh
cat >>"$PGDATA/postgresql.conf" <<EOC
shared_preload_libraries = 'gpuext'
port = $PORT
listen_addresses = ''
unix_socket_directories = '$WORK'
shared_buffers = 256MB
max_worker_processes = 16
max_parallel_workers_per_gather = 2
fsync = off
synchronous_commit = off
full_page_writes = off
gpuext.dma_buffer_size = 128MB
gpuext.device = $ENGINE
log_min_messages = warning
lc_messages = 'C'
EOC
if ! as_user "'$BINDIR/pg_ctl' -D '$PGDATA' -l '$WORK/server.log' -w -t 120 start" >/dev/null; then
  cat "$WORK/server.log"
  exit 2
fi

psql_q() { as_user "'$BINDIR/psql' -X -q -t -A -h '$WORK' -p $PORT -d postgres -c \"$1\""; }
state=""
for _ in $(seq 1 240); do
  psql_q "CREATE EXTENSION IF NOT EXISTS gpuext" >/dev/null 2>&1
  state=$(psql_q "SELECT service_state FROM gpuext_status()" 2>/dev/null)
  case "$state" in ready|"no gpu") break ;; esac
  sleep 0.5
done
echo "== GPU service: $state"
psql_q "SELECT device_index || ': ' || name || ' (' || engine || ', ' || status || ')' FROM gpuext_devices()"
as_user "'$BINDIR/createdb' -h '$WORK' -p $PORT gpuext_fuzz" || exit 2

BINDIR=$BINDIR PYTHONDONTWRITEBYTECODE=1 "$PYTHON" test/fuzz/fuzz.py \
  --host "$WORK" --port "$PORT" --user "$RUNAS" --dbname gpuext_fuzz \
  --setup --seed "$SEED" --queries "$N" --out "$OUTFILE" "$@" 9>&-
rc=$?

if grep -qE "PANIC|TRAP:|terminated by signal" "$WORK/server.log"; then
  echo "== server log: crashes"
  grep -E -A1 "PANIC|TRAP:|terminated by signal" "$WORK/server.log" | grep -v "^--" | cut -c1-300 | head -20
fi
cleanup
trap - EXIT
if [ $rc = 0 ] && [ "${FUZZ_KEEP:-0}" != 1 ]; then
  rm -rf "$WORK"
  [ -n "${FUZZ_OUT:-}" ] && echo "== report: $OUTFILE"
else
  echo "== report: $OUTFILE; cluster folder (data, server.log) kept: $WORK"
fi
exit $rc
