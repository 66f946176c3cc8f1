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
#   sanitize.sh TOOL...      TOOL: memcheck, racecheck, initcheck, synccheck,
#                            the tools of NVIDIA's compute-sanitizer (GPU
#                            machine only) over the GPU service's kernels.
#                            The tool follows exec'd processes only, and the
#                            service is forked from the postmaster without
#                            exec (seen on an H100, CUDA 13.0, 2026-11-22), so
#                            the kernels are checked in two steps: the GPU-only
#                            suite (test/gpu) and the pg_regress suite run with
#                            gpuext.debug_capture_dir set, and the service
#                            records every request it launches (src/capture.c);
#                            then test/gpu/gpuext-replay runs those requests
#                            again, through the service's own runtime layer and
#                            kernels, under the tool (memcheck also reports
#                            device memory leaked at exit).  Requests with an
#                            injected fault are not recorded.  The suites run
#                            once; the recording is replayed under each TOOL.
#
# Environment: SANITIZE_TESTS="a b" (pg_regress names; default all of
# test/schedule), SANITIZE_GPU_SUITE=0 (skip the GPU-only suite test/gpu),
# SANITIZE_OPTS (extra options to the checker), SANITIZE_STRIDE (replay one
# request in N of each kind, and every request on a task it replays, under
# the tools other than memcheck, which are slower: default 1), SANITIZE_KINDS
# (replay only the requests of these kinds, e.g. "task_create agg task_fetch",
# under every tool), PG_CONFIG,
# and test/cluster.sh's.
set -u
TOOL=${1:?usage: sanitize.sh valgrind | TOOL... (memcheck racecheck initcheck synccheck)}
TOOLS="$*"
for t in $TOOLS; do
  case "$t" in memcheck|racecheck|initcheck|synccheck) ;; *) [ "$t" = valgrind ] && [ $# = 1 ] ||
    { echo "unknown tool or combination: $TOOLS"; exit 2; } ;; esac
done
[ "$TOOL" = valgrind ] || TOOL=$(echo "$TOOLS" | tr ' ' '-')
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. test/cluster.sh

CS=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
case "$TOOL" in
  valgrind)
    command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 2; }
    ENGINE=cpu ;;
  *)
    [ -x "$CS" ] || { echo "compute-sanitizer not found (CUDA toolkit, GPU machine)"; exit 2; }
    ENGINE=gpu ;;
esac
export GPUEXT_TEST_ENGINE=$ENGINE GPUEXT_START_TIMEOUT=${GPUEXT_START_TIMEOUT:-600}

install_lock
build_install "${INSTALL_LOCK%.lock}.$TOOL-build.log" || exit 2

# logs (and the captured requests) go to $LOGS
LOGS=$(mktemp -d "/tmp/gpuext-$TOOL.XXXXXX")
chmod 755 "$LOGS"
conf="jit = off"
if [ "$TOOL" = valgrind ]; then
  # the wrapper pg_ctl starts in place of postgres
  cp test/valgrind.supp "$LOGS/"
  checker="valgrind --quiet --error-limit=no --num-callers=40 --read-var-info=no \
--error-markers=GX-ERROR-BEGIN,GX-ERROR-END --suppressions=$LOGS/valgrind.supp \
--gen-suppressions=all --log-file=$LOGS/$TOOL.%p.log"
  printf '#!/bin/sh\nexec %s %s "%s" "$@"\n' "$checker" "${SANITIZE_OPTS:-}" "$BINDIR/postgres" >"$LOGS/postgres"
  chmod 755 "$LOGS/postgres"
  export GPUEXT_POSTGRES=$LOGS/postgres
else
  make -s test/gpu/gpuext-replay >"$LOGS/replay-build.log" 2>&1 ||
    { cat "$LOGS/replay-build.log"; exit 2; }
  mkdir "$LOGS/capture"
  conf="$conf
gpuext.debug_capture_dir = '$LOGS/capture'"
fi
chown -R "$RUNAS" "$LOGS"

# no JIT: loading llvmjit only adds the dynamic loader's own reports
cluster_start "gpuext-$TOOL-cluster" "$conf" 56000 || exit 2
cp -r sql expected test "$WORK"/
chown -R "$RUNAS" "$WORK"/{sql,expected,test}
if [ "$ENGINE" = gpu ] && [ "$SERVICE_STATE" != ready ]; then
  echo "the GPU service is not ready under $TOOL ($SERVICE_STATE)"; exit 1
fi
[ "$ENGINE" = gpu ] && echo "== gpuext.debug_capture_dir = $(psql_q "SHOW gpuext.debug_capture_dir")"
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

# a fast stop lets every process (the GPU service too) end normally (and
# valgrind print its reports)
as_user "'$BINDIR/pg_ctl' -D '$PGDATA' -m fast -t 600 stop" >/dev/null 2>&1

if [ "$TOOL" != valgrind ]; then
  # the recorded requests, again, under each tool
  # the server's messages about the GPU service (capturing, errors) stay with the logs
  grep -E "gpuext|GPU service|TRAP|terminated by signal" "$WORK/server.log" >"$LOGS/server-gpuext.log" 2>/dev/null
  ncap=$(ls "$LOGS"/capture/*.bin 2>/dev/null | wc -l)
  if [ "$ncap" -eq 0 ]; then
    echo "the GPU service recorded no requests: did it run on a GPU?"
    ls -la "$LOGS/capture"
    grep -iE "captur" "$LOGS/server-gpuext.log" | head -5
    exit 1
  fi
  clean=1
  for tool in $TOOLS; do
    leak="" stride=${SANITIZE_STRIDE:-1}
    [ "$tool" = memcheck ] && leak="--leak-check full" stride=1
    echo "== replaying $(du -sh "$LOGS/capture" | cut -f1) of recorded requests under $tool (one in $stride)"
    GPUEXT_REPLAY_STRIDE=$stride GPUEXT_REPLAY_ONLY=${SANITIZE_KINDS:-} $CS --tool "$tool" $leak --print-limit 200 ${SANITIZE_OPTS:-} \
      --log-file "$LOGS/$tool.replay.log" test/gpu/gpuext-replay --calibrate "$LOGS"/capture/*.bin
    replay_rc=$?
    sed 's/^/   /' "$LOGS/$tool.replay.log" | tail -n 20
    # memcheck, initcheck, synccheck: "ERROR SUMMARY: N errors"; racecheck:
    # "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)"
    errors=$(grep -oE "ERROR SUMMARY: [0-9]+|\([0-9]+ errors" "$LOGS/$tool.replay.log" |
             grep -oE "[0-9]+" | awk '{ s += $1 } END { print s + 0 }')
    grep -qE "(ERROR|RACECHECK) SUMMARY" "$LOGS/$tool.replay.log" || { echo "$tool printed no summary"; errors=1; }
    echo "== $tool: $errors errors over the replayed requests (replay exit status $replay_rc)"
    if [ "$errors" = 0 ] && [ $replay_rc = 0 ]; then echo "$tool: clean"; else clean=0; fi
  done
  echo "== logs in $LOGS"
  [ $regress_ok = 1 ] && [ $clean = 1 ] && exit 0
  exit 1
fi

# valgrind writes its reports as each process exits
for _ in $(seq 1 120); do
  pgrep -f -- "--log-file=$LOGS/" >/dev/null || break
  sleep 0.5
done
sleep 1
nlogs=$(ls "$LOGS"/$TOOL.*.log 2>/dev/null | wc -l)
errors=$(cat "$LOGS"/$TOOL.*.log 2>/dev/null | grep -c "GX-ERROR-BEGIN")
echo "== $TOOL: $errors errors in $nlogs process logs ($(cat "$LOGS"/$TOOL.*.log 2>/dev/null |
      grep -c "gpuext") lines naming gpuext); logs in $LOGS"
if [ "$errors" != 0 ]; then
  for l in "$LOGS"/$TOOL.*.log; do
    grep -q "GX-ERROR-BEGIN" "$l" && { echo "---- $l"; head -n 300 "$l"; }
  done
fi
[ "$nlogs" -gt 0 ] || { echo "$TOOL wrote no logs: did it run?"; exit 1; }
[ $regress_ok = 1 ] && [ "$errors" = 0 ] && { echo "$TOOL: clean"; exit 0; }
exit 1
