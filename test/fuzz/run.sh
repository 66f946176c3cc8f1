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
# The install lock (see test/cluster.sh) is held
# for the whole run, so no other test run replaces gpuext.so under it.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
. test/cluster.sh

N=${FUZZ_N:-500}
SEED=${FUZZ_SEED:-1}
[ -n "$N" ] || N=500
[ -n "$SEED" ] || SEED=1
PYTHON=${PYTHON:-python3}

install_lock
if [ "${FUZZ_BUILD:-1}" != 0 ]; then
  build_install /tmp/gpuext-fuzz-build.log || exit 2
fi
cluster_start gpuext-fuzz || exit 2
OUTFILE=${FUZZ_OUT:-$WORK/fuzz-report.txt}
as_user "'$BINDIR/createdb' -h '$WORK' -p $PORT gpuext_fuzz" || exit 2

BINDIR=$BINDIR PYTHONDONTWRITEBYTECODE=1 "$PYTHON" test/fuzz/fuzz.py \
  --host "$WORK" --port "$PORT" --user "$RUNAS" --dbname gpuext_fuzz \
  --setup --seed "$SEED" --queries "$N" --out "$OUTFILE" "$@" 9>&-
rc=$?

crashes=$(crash_lines "$WORK/server.log")
if [ -n "$crashes" ]; then
  echo "== server log: crashes"
  echo "$crashes" | head -20
fi
cluster_stop
trap - EXIT
if [ $rc = 0 ] && [ "${FUZZ_KEEP:-0}" != 1 ]; then
  rm -rf "$WORK"
  [ -n "${FUZZ_OUT:-}" ] && echo "== report: $OUTFILE"
else
  echo "== report: $OUTFILE; cluster folder (data, server.log) kept: $WORK"
fi
exit $rc
