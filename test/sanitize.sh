#!/bin/bash
# make valgrind / make compute-sanitizer: the regression suites with every
# server process started under a checker, failing on any error it reports.
#
#   sanitize.sh valgrind     memcheck of valgrind, CPU engine, pg_regress suite
#                            (test/schedule).  The Debian server is built
#                            without USE_VALGRIND, so memcheck sees palloc'd
#                            chunks only as parts of larger malloc'd blocks: it
#                            reports use of uninitialised memory (in branches,
#                            in bytes written to files or sockets) and accesses
#                            outside malloc'd blocks, not overruns inside a
#                            memory context.  Suppressions: test/valgrind.supp.
#   sanitize.sh memcheck | racecheck | initcheck | synccheck
#                            the tool of NVIDIA's compute-sanitizer (GPU
#                            machine only) around the postmaster, meant to
#                            check the GPU service's kernels: the GPU-only
#                            suite (test/gpu) and the pg_regress suite;
#                            memcheck also reports device memory leaked at
#                            exit.  Seen on an H100 (CUDA 13.0, 2026-11-22):
#                            the tool follows exec'd children only, and the
#                            service is forked from the postmaster without
#                            exec, so its kernels ran unchecked; the run then
#                            fails and says so rather than report "clean".
#
# Environment: SANITIZE_TESTS="a b" (pg_regress names; default all of
# test/schedule), SANITIZE_GPU_SUITE=0 (skip test/gpu, whose injected
# kernel faults a checker may count as errors), SANITIZE_OPTS (extra options to the checker), PG_CONFIG,
# and test/cluster.sh's.
set -u
TOOL=${1:?usage: sanitize.sh valgrind|memcheck|racecheck|initcheck|synccheck}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. test/cluster.sh

CS=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
case "$TOOL" in
  valgrind)
    command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 2; }
    ENGINE=cpu ;;
  memcheck|racecheck|initcheck|synccheck)
    [ -x "$CS" ] || { echo "compute-sanitizer not found (CUDA toolkit, GPU machine)"; exit 2; }
    ENGINE=gpu ;;
  *) echo "unknown tool $TOOL"; exit 2 ;;
esac
export GPUEXT_TEST_ENGINE=$ENGINE GPUEXT_START_TIMEOUT=${GPUEXT_START_TIMEOUT:-600}

install_lock
build_install "${INSTALL_LOCK%.lock}.$TOOL-build.log" || exit 2

# the wrapper pg_ctl starts in place of postgres; logs go to $LOGS
LOGS=$(mktemp -d "/tmp/gpuext-$TOOL.XXXXXX")
chmod 755 "$LOGS"
cp test/valgrind.supp "$LOGS/"
if [ "$TOOL" = valgrind ]; then
  checker="valgrind --quiet --error-limit=no --num-callers=40 --read-var-info=no \
--error-markers=GX-ERROR-BEGIN,GX-ERROR-END --suppressions=$LOGS/valgrind.supp \
--gen-suppressions=all --log-file=$LOGS/$TOOL.%p.log"
else
  leak=""
  [ "$TOOL" = memcheck ] && leak="--leak-check full"
  checker="$CS --tool $TOOL $leak --target-processes all --print-limit 200 --log-file $LOGS/$TOOL.%p.log"
fi
printf '#!/bin/sh\nexec %s %s "%s" "$@"\n' "$checker" "${SANITIZE_OPTS:-}" "$BINDIR/postgres" >"$LOGS/postgres"
chmod 755 "$LOGS/postgres"
chown -R "$RUNAS" "$LOGS"
export GPUEXT_POSTGRES=$LOGS/postgres

# no JIT: loading llvmjit only adds the dynamic loader's own reports
cluster_start "gpuext-$TOOL-cluster" "jit = off" 56000 || exit 2
cp -r sql expected test "$WORK"/
chown -R "$RUNAS" "$WORK"/{sql,expected,test}
if [ "$ENGINE" = gpu ] && [ "$SERVICE_STATE" != ready ]; then
  echo "the GPU service is not ready under $TOOL ($SERVICE_STATE)"; exit 1
fi
psql_q "DROP EXTENSION gpuext" >/dev/null

PGXSDIR=$(dirname "$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")")
regress_ok=1
run_suite() {
  # $1 label, $2 inputdir, rest: tests
  local label=$1 dir=$2
  shift 2
  echo "== $label under $TOOL: $*"
  as_user "'$PGXSDIR/src/test/regress/pg_regress' --bindir='$BINDIR' --host='$WORK' --port=$PORT \
     --user='$RUNAS' --inputdir='$dir' --outputdir='$WORK/out-$label' --dbname=gpuext_$label $*" \
     >"$WORK/$label.log" 2>&1 || {
       regress_ok=0
       [ -f "$WORK/out-$label/regression.diffs" ] && head -n 200 "$WORK/out-$label/regression.diffs"; }
  grep -E "^(test| +[a-z_0-9]+ +\.\.\.)|tests" "$WORK/$label.log" | sed 's/^/   /'
}
if [ "$ENGINE" = gpu ] && [ "${SANITIZE_GPU_SUITE:-1}" = 1 ]; then
  run_suite gpu "$WORK/test/gpu" $(cd test/gpu/sql && ls *.sql | sed 's/\.sql$//' | tr '\n' ' ')
fi
run_suite regress "$WORK" ${SANITIZE_TESTS:-$(grep -v '^#' test/schedule | tr '\n' ' ')}

# a fast stop lets every process (the GPU service too) end normally and
# print its error summary
as_user "'$BINDIR/pg_ctl' -D '$PGDATA' -m fast -t 600 stop" >/dev/null 2>&1
# the checker writes its summaries as it exits (compute-sanitizer outlives
# the postmaster it started)
for _ in $(seq 1 120); do
  pgrep -f -- "--log-file $LOGS/" >/dev/null || break
  sleep 0.5
done
sleep 1

nlogs=$(ls "$LOGS"/$TOOL.*.log 2>/dev/null | wc -l)
# valgrind marks each error (--quiet drops its summary); compute-sanitizer
# prints a summary per process
errors=$(cat "$LOGS"/$TOOL.*.log 2>/dev/null |
         awk '/GX-ERROR-BEGIN/ { s++ } match($0, /ERROR SUMMARY: [0-9]+ error/) {
                s += substr($0, RSTART + 15, RLENGTH - 21) } END { print s + 0 }')
echo "== $TOOL: $errors errors in $nlogs process logs ($(cat "$LOGS"/$TOOL.*.log 2>/dev/null |
      grep -c "gpuext") lines naming gpuext); logs in $LOGS"
if [ "$errors" != 0 ]; then
  for l in "$LOGS"/$TOOL.*.log; do
    grep -qE "ERROR SUMMARY: [1-9]|GX-ERROR-BEGIN" "$l" && { echo "---- $l"; head -n 300 "$l"; }
  done
fi
[ "$nlogs" -gt 0 ] || { echo "$TOOL wrote no logs: did it run?"; exit 1; }
# compute-sanitizer follows exec'd children only: a process forked from the
# postmaster (the GPU service) may run unchecked.  It prints one summary per
# process it checked; one summary is the postmaster's alone.
if [ "$TOOL" != valgrind ]; then
  nsum=$(cat "$LOGS"/$TOOL.*.log | grep -c "ERROR SUMMARY")
  if [ "$nsum" -le 1 ]; then
    echo "$TOOL checked no process but the postmaster ($nsum summary): the GPU service, forked"
    echo "without exec, ran unchecked, so this run says nothing about the kernels"
    exit 1
  fi
fi
[ $regress_ok = 1 ] && [ "$errors" = 0 ] && { echo "$TOOL: clean"; exit 0; }
exit 1
