#!/bin/bash
# make test: build, install, start a throwaway cluster with gpuext preloaded,
# run every suite, stop it, print "N passed, N failed" last.
#
#   pg_regress      sql/*.sql against expected/*.out (order: test/schedule)
#   isolation       test/isolation/specs/*.spec
#   pgTAP           test/pgtap/*.sql (pg_prove)
#   TAP             test/t/*.pl (PostgreSQL::Test::Cluster; their own clusters)
#   GPU-only        test/gpu/*.sql, when the service has a GPU
#   fuzz            test/fuzz/fuzz.py: random queries, offloaded vs stock
#                   results (fixed seed; one test; known bugs not counted)
#   bench           test/bench/ci-smoke.sh: the benchmark suite at scale tiny,
#                   results must agree across configurations (its own cluster)
#
# Environment:
#   PG_CONFIG             pg_config of the server to test (default: on PATH)
#   GPUEXT_REQUIRE_GPU=1  fail unless the service has a usable GPU
#   GPUEXT_TESTS="a b"    run only these pg_regress tests
#   GPUEXT_SKIP="tap ..." skip suites: regress isolation pgtap tap gpu bench fuzz
#   GPUEXT_FUZZ_QUERIES, GPUEXT_FUZZ_SEED   the fuzz suite's size and seed (500, 1)
#   GPUEXT_TEST_ENGINE    cpu | auto: engine for the suites (default auto)
set -u
# one locale everywhere, so collation-dependent output is the same on every machine
export LANG=C.UTF-8 LC_ALL=C.UTF-8
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

PG_CONFIG=${PG_CONFIG:-pg_config}
BINDIR=$("$PG_CONFIG" --bindir)
PGXSDIR=$(dirname "$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")")
PG_REGRESS=$PGXSDIR/src/test/regress/pg_regress
PG_ISOLATION=$PGXSDIR/src/test/isolation/pg_isolation_regress
SKIP=" ${GPUEXT_SKIP:-} "
ENGINE=${GPUEXT_TEST_ENGINE:-auto}

passed=0
failed=0
failures=()

note() { printf '== %s\n' "$*"; }
pass() { passed=$((passed + $1)); }
fail() { failed=$((failed + $1)); failures+=("$2"); }

# Only one test run at a time may install into the server's directories.
exec 9>/tmp/gpuext-make-test.lock
flock 9

note "building and installing"
if ! make -s PG_CONFIG="$PG_CONFIG" >/tmp/gpuext-build.log 2>&1 ||
   ! make -s PG_CONFIG="$PG_CONFIG" install >>/tmp/gpuext-build.log 2>&1; then
  cat /tmp/gpuext-build.log
  echo "0 passed, 1 failed"
  exit 1
fi
if grep -q "warning:" /tmp/gpuext-build.log; then
  grep "warning:" /tmp/gpuext-build.log
  fail 1 "build warnings"
else
  pass 1
fi

# PostgreSQL refuses to run as root: run the servers as an unprivileged user.
RUNAS=$(id -un)
if [ "$(id -u)" = 0 ]; then
  RUNAS=${GPUEXT_TEST_USER:-postgres}
  id "$RUNAS" >/dev/null 2>&1 || useradd -m -s /bin/bash "$RUNAS"
fi
# (servers started here must not inherit the lock's descriptor)
as_user() {
  if [ "$(id -un)" = "$RUNAS" ]; then
    bash -c "$1" 9>&-
  else
    runuser -u "$RUNAS" -- bash -c "$1" 9>&-
  fi
}

WORK=$(mktemp -d /tmp/gpuext-test.XXXXXX)
cp -r sql expected test "$WORK"/
chmod -R a+rX "$WORK"
chown -R "$RUNAS" "$WORK"
PORT=${GPUEXT_TEST_PORT:-$((54000 + RANDOM % 1000))}
PGDATA=$WORK/data
export PGHOST=$WORK PGPORT=$PORT PGUSER=$RUNAS

cleanup() {
  as_user "'$BINDIR/pg_ctl' -D '$PGDATA' -m immediate stop" >/dev/null 2>&1
}
trap cleanup EXIT

note "starting a throwaway cluster on port $PORT as $RUNAS"
as_user "'$BINDIR/initdb' -D '$PGDATA' -A trust -N --locale=C.UTF-8 --encoding=UTF8 >'$WORK/initdb.log' 2>&1" ||
  { cat "$WORK/initdb.log"; echo "$passed passed, $((failed + 1)) failed"; exit 1; }
cat >>"$PGDATA/postgresql.conf" <<EOF
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
EOF
if ! as_user "'$BINDIR/pg_ctl' -D '$PGDATA' -l '$WORK/server.log' -w -t 120 start" >/dev/null; then
  cat "$WORK/server.log"
  echo "$passed passed, $((failed + 1)) failed"
  exit 1
fi

psql_q() { as_user "'$BINDIR/psql' -X -q -t -A -d postgres -c \"$1\""; }

# Wait for the GPU service to finish starting (CUDA init, registration).
state=""
for _ in $(seq 1 240); do
  psql_q "CREATE EXTENSION IF NOT EXISTS gpuext" >/dev/null 2>&1
  state=$(psql_q "SELECT service_state FROM gpuext_status()" 2>/dev/null)
  case "$state" in ready|"no gpu") break ;; esac
  sleep 0.5
done
note "GPU service: $state"
psql_q "SELECT device_index || ': ' || name || ' (' || engine || ', ' || status || ')' FROM gpuext_devices()"
HAS_GPU=0
[ "$state" = "ready" ] && HAS_GPU=1
if [ "${GPUEXT_REQUIRE_GPU:-0}" = 1 ]; then
  if [ $HAS_GPU = 1 ]; then pass 1; else fail 1 "GPUEXT_REQUIRE_GPU=1 but the service has no GPU"; fi
fi
psql_q "DROP EXTENSION gpuext" >/dev/null

run_regress() {
  # $1 label, $2 pg_regress binary, $3 inputdir (under $WORK), rest: args
  local label=$1 bin=$2 dir=$3
  shift 3
  local out=$WORK/out-$label
  as_user "mkdir -p '$out'"
  as_user "'$bin' --bindir='$BINDIR' --host='$WORK' --port=$PORT --user='$RUNAS' \
           --inputdir='$dir' --outputdir='$out' --dbname=gpuext_$label $*" >"$WORK/$label.log" 2>&1
  local rc=$?
  cat "$WORK/$label.log" | grep -E "^(test|ok|not ok| +[a-z_0-9]+ +\.\.\.|     )|tests" | sed 's/^/   /'
  local n_ok n_bad
  n_ok=$(grep -cE "^(ok|test .* \.\.\. ok| +[a-z_0-9]+ +\.\.\. ok)" "$WORK/$label.log")
  n_bad=$(grep -cE "^(not ok|test .* \.\.\. FAILED| +[a-z_0-9]+ +\.\.\. FAILED)" "$WORK/$label.log")
  pass "$n_ok"
  if [ "$rc" != 0 ] || [ "$n_bad" != 0 ]; then
    [ "$n_bad" = 0 ] && n_bad=1
    fail "$n_bad" "$label"
    [ -f "$out/regression.diffs" ] && { echo "---- $label regression.diffs"; cat "$out/regression.diffs"; }
    [ "$rc" != 0 ] && [ ! -f "$out/regression.diffs" ] && cat "$WORK/$label.log"
  fi
}

if [[ "$SKIP" != *" regress "* ]]; then
  note "pg_regress"
  if [ -n "${GPUEXT_TESTS:-}" ]; then
    tests=$GPUEXT_TESTS
  else
    tests=$(grep -v '^#' test/schedule | tr '\n' ' ')
  fi
  run_regress regress "$PG_REGRESS" "$WORK" $tests
fi

if [[ "$SKIP" != *" isolation "* ]] && ls test/isolation/specs/*.spec >/dev/null 2>&1; then
  note "isolation"
  specs=$(cd test/isolation/specs && ls *.spec | sed 's/\.spec$//' | tr '\n' ' ')
  run_regress isolation "$PG_ISOLATION" "$WORK/test/isolation" --load-extension=gpuext $specs
fi

if [[ "$SKIP" != *" gpu "* ]] && [ $HAS_GPU = 1 ] && ls test/gpu/sql/*.sql >/dev/null 2>&1; then
  note "GPU-only tests"
  gtests=$(cd test/gpu/sql && ls *.sql | sed 's/\.sql$//' | tr '\n' ' ')
  run_regress gpu "$PG_REGRESS" "$WORK/test/gpu" $gtests
fi

if [[ "$SKIP" != *" pgtap "* ]] && ls test/pgtap/*.sql >/dev/null 2>&1; then
  note "pgTAP"
  as_user "'$BINDIR/createdb' gpuext_pgtap" &&
    psql_q "SELECT 1" >/dev/null
  as_user "'$BINDIR/psql' -X -q -d gpuext_pgtap -c 'CREATE EXTENSION pgtap' -c 'CREATE EXTENSION gpuext'" >/dev/null 2>&1
  for f in test/pgtap/*.sql; do
    if as_user "cd '$WORK' && pg_prove -h '$WORK' -p $PORT -U '$RUNAS' -d gpuext_pgtap '$f'" >"$WORK/pgtap.log" 2>&1; then
      pass 1; echo "   ok     $f"
    else
      fail 1 "$f"; echo "   FAILED $f"; cat "$WORK/pgtap.log"
    fi
  done
fi

if [[ "$SKIP" != *" fuzz "* ]]; then
  note "differential fuzzer (test/fuzz/fuzz.py)"
  fuzz_ok=0
  as_user "'$BINDIR/createdb' gpuext_fuzz" &&
    PYTHONDONTWRITEBYTECODE=1 python3 test/fuzz/fuzz.py --host "$WORK" --port "$PORT" --user "$RUNAS" \
      --dbname gpuext_fuzz --setup --seed "${GPUEXT_FUZZ_SEED:-1}" --queries "${GPUEXT_FUZZ_QUERIES:-500}" \
      --skip-known-bugs --minimize-time 30 --out "$WORK/fuzz-report.txt" >"$WORK/fuzz.log" 2>&1 9>&- &&
    fuzz_ok=1
  grep -E "^(fuzz summary|  [a-z])" "$WORK/fuzz-report.txt" 2>/dev/null | grep -v "^  features:" | sed 's/^ */   /'
  if [ $fuzz_ok = 1 ]; then
    pass 1; echo "   ok     fuzz"
  else
    fail 1 "fuzz"; echo "   FAILED fuzz"; grep -v "^   [0-9]* queries, " "$WORK/fuzz.log" | head -n 200
  fi
fi

# The TAP tests start clusters of their own.
cleanup
if [[ "$SKIP" != *" tap "* ]] && ls test/t/*.pl >/dev/null 2>&1; then
  note "TAP"
  as_user "mkdir -p '$WORK/tap'"
  for f in test/t/*.pl; do
    if as_user "cd '$WORK' && PATH='$BINDIR':\$PATH PG_REGRESS='$PG_REGRESS' \
         TESTDIR='$WORK/tap' PG_TEST_NOCLEAN= GPUEXT_HAS_GPU=$HAS_GPU \
         prove -I '$PGXSDIR/src/test/perl' -I '$WORK/test/perl' '$f'" >"$WORK/tap.log" 2>&1; then
      pass 1; echo "   ok     $f"
    else
      fail 1 "$f"; echo "   FAILED $f"; cat "$WORK/tap.log"
      for l in "$WORK"/tap/tmp_check/log/*.log; do
        [ -f "$l" ] && { echo "---- $l"; tail -n 40 "$l"; }
      done
    fi
  done
fi

if [[ "$SKIP" != *" bench "* ]]; then
  note "bench smoke (test/bench/ci-smoke.sh)"
  if BENCH_BUILD=0 PG_CONFIG="$PG_CONFIG" BENCH_SMOKE_OUT="$WORK/bench-out" \
       bash test/bench/ci-smoke.sh >"$WORK/bench.log" 2>&1; then
    pass 1; echo "   ok     bench smoke"
  else
    fail 1 "bench smoke"; echo "   FAILED bench smoke"; tail -n 60 "$WORK/bench.log"
  fi
fi

if [ "$failed" != 0 ]; then
  note "failed: ${failures[*]}"
  echo "logs kept in $WORK"
else
  rm -rf "$WORK"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
