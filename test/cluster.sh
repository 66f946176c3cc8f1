# Sourced by test/run-tests.sh (make test), test/fuzz/run.sh (make fuzz) and
# test/fuzz/sqlsmith.sh (make fuzz-sqlsmith): build and install gpuext under
# the install lock, start and stop a throwaway cluster with gpuext preloaded,
# find server crashes in its log.  The caller has cd'ed to the repository root.
#
# Defines PG_CONFIG BINDIR ENGINE RUNAS, as_user CMD (a shell command as
# $RUNAS, without the lock's descriptor), and:
#   install_lock              take the install lock $INSTALL_LOCK (one per
#                             server installation, named after its pkglibdir)
#                             on descriptor 9, held until the caller exits:
#                             only one run at a time may install into the
#                             server's directories and use what it installed;
#                             runs against different installations (PG_CONFIG
#                             of a relocated copy) do not wait for each other
#   build_install LOG         build and install; non-zero (LOG shown) on failure
#   cluster_start PREFIX [CONF [PORT_BASE]]
#                             initdb in a new folder WORK=/tmp/PREFIX.XXXXXX
#                             (PGDATA=$WORK/data, server log $WORK/server.log,
#                             socket in $WORK; PORT: GPUEXT_TEST_PORT, or
#                             random from PORT_BASE, default 55000, up 1000),
#                             CONF appended to postgresql.conf, start (core
#                             files allowed: they land in PGDATA), wait for the
#                             GPU service (SERVICE_STATE: ready, "no gpu", ...);
#                             the cluster is stopped on exit; non-zero (logs
#                             shown) on failure
#   cluster_stop              stop it (immediate)
#   psql_q SQL                one statement in database postgres, as $RUNAS
#   crash_lines LOG [BYTES]   the crash reports in a server log, after its
#                             first BYTES bytes
#
# Environment: PG_CONFIG (default: on PATH; on a bare GPU machine
# .gpu/install-pg-bundle.sh installs one), GPUEXT_POSTGRES (a program
# started in place of postgres, e.g. under valgrind), GPUEXT_START_TIMEOUT
# (seconds, default 120), GPUEXT_TEST_ENGINE (cpu | auto:
# gpuext.device, default auto), GPUEXT_TEST_PORT, GPUEXT_TEST_USER (the
# servers' user when run as root, default postgres).

# one locale everywhere, so collation-dependent output is the same on every machine
export LANG=C.UTF-8 LC_ALL=C.UTF-8

if ! command -v "${PG_CONFIG:-pg_config}" >/dev/null 2>&1 && [ -x .gpu/install-pg-bundle.sh ]; then
  bash .gpu/install-pg-bundle.sh || exit 2
fi
PG_CONFIG=${PG_CONFIG:-pg_config}
BINDIR=$("$PG_CONFIG" --bindir) || exit 2
ENGINE=${GPUEXT_TEST_ENGINE:-auto}

# PostgreSQL refuses to run as root: run the servers as an unprivileged user
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

INSTALL_LOCK=/tmp/gpuext-install$("$PG_CONFIG" --pkglibdir | tr / _).lock
install_lock() {
  exec 9>"$INSTALL_LOCK"
  flock 9
}

build_install() {
  echo "== building and installing"
  if ! make -s PG_CONFIG="$PG_CONFIG" >"$1" 2>&1 ||
     ! make -s PG_CONFIG="$PG_CONFIG" install >>"$1" 2>&1; then
    cat "$1"
    return 1
  fi
}

cluster_stop() {
  as_user "'$BINDIR/pg_ctl' -D '$PGDATA' -m immediate stop" >/dev/null 2>&1
}

cluster_start() {
  WORK=$(mktemp -d "/tmp/$1.XXXXXX")
  chmod 755 "$WORK"
  chown "$RUNAS" "$WORK"
  PORT=${GPUEXT_TEST_PORT:-$((${3:-55000} + RANDOM % 1000))}
  PGDATA=$WORK/data
  trap cluster_stop EXIT

  echo "== starting a throwaway cluster on port $PORT as $RUNAS ($WORK)"
  as_user "'$BINDIR/initdb' -D '$PGDATA' -A trust -N --locale=C.UTF-8 --encoding=UTF8 >'$WORK/initdb.log' 2>&1" ||
    { cat "$WORK/initdb.log"; return 1; }
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
# plans in expected files depend on statistics: only the tests' own ANALYZE
autovacuum = off
${2:-}
EOC
  # GPUEXT_POSTGRES: a wrapper to start instead of postgres (test/sanitize.sh).
  # compute-sanitizer starts postgres as its grandchild, so the PID in
  # postmaster.pid is not the one pg_ctl started and pg_ctl -w never sees
  # the server up: with a wrapper, wait for connections here instead.
  local timeout=${GPUEXT_START_TIMEOUT:-120}
  if [ -n "${GPUEXT_POSTGRES:-}" ]; then
    as_user "'$BINDIR/pg_ctl' -D '$PGDATA' -l '$WORK/server.log' -p '$GPUEXT_POSTGRES' -c -W start" >/dev/null
    local waited=0
    until as_user "'$BINDIR/pg_isready' -q -h '$WORK' -p $PORT"; do
      if [ $waited -ge $((timeout * 2)) ]; then
        echo "the server did not accept connections within $timeout s"
        cat "$WORK/server.log"
        return 1
      fi
      sleep 0.5
      waited=$((waited + 1))
    done
  elif ! as_user "'$BINDIR/pg_ctl' -D '$PGDATA' -l '$WORK/server.log' -c -w -t $timeout start" >/dev/null; then
    cat "$WORK/server.log"
    return 1
  fi

  # wait for the GPU service to finish starting (CUDA init, registration)
  SERVICE_STATE=""
  for _ in $(seq 1 240); do
    psql_q "CREATE EXTENSION IF NOT EXISTS gpuext" >/dev/null 2>&1
    SERVICE_STATE=$(psql_q "SELECT service_state FROM gpuext_status()" 2>/dev/null)
    case "$SERVICE_STATE" in ready|"no gpu") break ;; esac
    sleep 0.5
  done
  echo "== GPU service: $SERVICE_STATE"
  psql_q "SELECT device_index || ': ' || name || ' (' || engine || ', ' || status || ')' FROM gpuext_devices()"
}

psql_q() { as_user "'$BINDIR/psql' -X -q -t -A -h '$WORK' -p $PORT -d postgres -c \"$1\""; }

crash_lines() {
  tail -c +"$((${2:-0} + 1))" "$1" |
    grep -E -A1 "PANIC|TRAP:|terminated by signal|was terminated by exception|all server processes terminated" |
    grep -v "^--" | cut -c1-300
}
