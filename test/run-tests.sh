#!/bin/bash
# make test: build, install, start a throwaway cluster with gpuext preloaded,
# run every suite, stop it, print "N passed, N failed" last.
#
#   layering        test/layering.py: each folder's objects call only the
#                   folders below it (costmodel/ nothing of src/)
#   pg_regress      sql/*.sql against expected/*.out (order: test/schedule)
#   isolation       test/isolation/specs/*.spec
#   pgTAP           test/pgtap/*.sql (pg_prove)
#   TAP             test/t/*.pl (PostgreSQL::Test::Cluster; their own clusters)
#   GPU-only        test/gpu/*.sql, when the service has a GPU
#   fuzz            test/fuzz/fuzz.py: random queries, offloaded vs stock
#                   results (fixed seed; one test; known bugs not counted)
#   sqlsmith        test/fuzz/sqlsmith.sh: SQLsmith's random queries with
#                   gpuext forced on, no crash allowed (one test; skipped,
#                   and says so, when the sqlsmith binary is not installed)
#   bench           test/bench/ci-smoke.sh: the benchmark suite at scale tiny,
#                   results must agree across configurations (its own cluster)
#   load            test/load/run.sh ci: pgbench with the offloaded query mix
#                   beside stock, then the fault test (cancels, timeouts,
#                   injected device faults, SIGTERM and SIGKILL of the GPU
#                   service under load), results checked against stock's
#                   (one test; its own cluster)
#
# Environment:
#   PG_CONFIG             pg_config of the server to test (default: on PATH)
#   GPUEXT_REQUIRE_GPU=1  fail unless the service has a usable GPU
#   GPUEXT_TESTS="a b"    run only these pg_regress tests (in the schedule's order)
#   GPUEXT_TAP_TESTS="test/t/006_*.pl"   run only these TAP tests
#   GPUEXT_SKIP="tap ..." skip suites: layering regress isolation pgtap tap gpu
#                         bench fuzz sqlsmith load
#   GPUEXT_FUZZ_QUERIES, GPUEXT_FUZZ_SEED   the fuzz suite's size and seed (500, 1)
#   GPUEXT_SQLSMITH_QUERIES, GPUEXT_SQLSMITH_SEED   the sqlsmith suite's queries
#                         per pass and seed (1000, 1)
#   SQLSMITH              the sqlsmith binary (default: sqlsmith on PATH)
#   GPUEXT_TEST_ENGINE    cpu | auto: engine for the suites (default auto)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# PG_CONFIG BINDIR ENGINE RUNAS as_user, the install lock, the cluster
. test/cluster.sh

PGXSDIR=$(dirname "$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")")
PG_REGRESS=$PGXSDIR/src/test/regress/pg_regress
PG_ISOLATION=$PGXSDIR/src/test/isolation/pg_isolation_regress
SKIP=" ${GPUEXT_SKIP:-} "

passed=0
failed=0
failures=()

note() { printf '== %s\n' "$*"; }
pass() { passed=$((passed + $1)); }
fail() { failed=$((failed + $1)); failures+=("$2"); }

install_lock
if ! build_install "${INSTALL_LOCK%.lock}.build.log"; then
  echo "0 passed, 1 failed"
  exit 1
fi
if grep -q "warning:" "${INSTALL_LOCK%.lock}.build.log"; then
  grep "warning:" "${INSTALL_LOCK%.lock}.build.log"
  fail 1 "build warnings"
else
  pass 1
fi

if [[ "$SKIP" != *" layering "* ]]; then
  note "layering (test/layering.py)"
  layering_out=$(python3 test/layering.py 2>&1)
  layering_rc=$?
  echo "$layering_out" | sed 's/^/   /'
  if [ $layering_rc = 0 ]; then pass 1; else fail 1 "layering"; fi
fi

# the whole query of a crashed backend in the server log (sqlsmith suite)
if ! cluster_start gpuext-test "track_activity_query_size = '64kB'" 54000; then
  echo "$passed passed, $((failed + 1)) failed"
  exit 1
fi
cp -r sql expected test "$WORK"/
chmod -R a+rX "$WORK"/{sql,expected,test}
chown -R "$RUNAS" "$WORK"/{sql,expected,test}
export PGHOST=$WORK PGPORT=$PORT PGUSER=$RUNAS

HAS_GPU=0
[ "$SERVICE_STATE" = "ready" ] && HAS_GPU=1
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
    # in the schedule's order (later tests use what the setup tests make),
    # then any that are not in it
    tests=$(for t in $(grep -v '^#' test/schedule) $GPUEXT_TESTS; do
              [[ " $GPUEXT_TESTS " == *" $t "* ]] && echo "$t"; done | awk '!seen[$0]++' | tr '\n' ' ')
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

if [[ "$SKIP" != *" sqlsmith "* ]]; then
  note "SQLsmith (test/fuzz/sqlsmith.sh)"
  if ! command -v "${SQLSMITH:-sqlsmith}" >/dev/null 2>&1; then
    echo "   skipped: sqlsmith not installed (apt-get install sqlsmith; .ci/run does)"
  else
    SQLSMITH_CLUSTER=$WORK SQLSMITH_PORT=$PORT PG_CONFIG=$PG_CONFIG GPUEXT_TEST_ENGINE=$ENGINE \
      SQLSMITH_N=${GPUEXT_SQLSMITH_QUERIES:-1000} SQLSMITH_SEED=${GPUEXT_SQLSMITH_SEED:-1} \
      bash test/fuzz/sqlsmith.sh >"$WORK/sqlsmith.log" 2>&1 9>&-
    rc=$?
    grep -E "^== pass|^   ([0-9?]+ queries |(crashes|gpuext|errors):)" "$WORK/sqlsmith.log" |
      sed -e 's/^=* */   /' -e 's/ (by SQLSTATE.*//'
    if [ $rc = 0 ]; then
      pass 1; echo "   ok     sqlsmith"
    else
      fail 1 "sqlsmith"; echo "   FAILED sqlsmith"; cat "$WORK/sqlsmith.log"
    fi
  fi
fi

# The TAP tests start clusters of their own.
cluster_stop
if [[ "$SKIP" != *" tap "* ]] && ls test/t/*.pl >/dev/null 2>&1; then
  note "TAP"
  as_user "mkdir -p '$WORK/tap'"
  for f in ${GPUEXT_TAP_TESTS:-test/t/*.pl}; do
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

if [[ "$SKIP" != *" load "* ]]; then
  note "load and faults (test/load/run.sh ci)"
  if LOAD_BUILD=0 PG_CONFIG="$PG_CONFIG" GPUEXT_TEST_ENGINE=$ENGINE LOAD_OUT="$WORK/load-out" \
       bash test/load/run.sh ci >"$WORK/load.log" 2>&1; then
    grep -E "^pgbench: |^  all |^fault test: [0-9]|^  errors by SQLSTATE|^  note: " "$WORK/load.log" | sed 's/^ */   /'
    pass 1; echo "   ok     load"
  else
    fail 1 "load"; echo "   FAILED load"; cat "$WORK/load.log"
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
