#!/bin/bash
# gpuext_gist benchmark (test/bench/gist.sql) on a throwaway cluster:
#   bash test/bench/gist.sh [ROWS [QUERIES [REPS]]]     (default 1000000 1000 3)
# Builds and installs first (BENCH_BUILD=0 to skip).  The cases marked
# "gpuext on (GPU if any)" send their batches to the GPU when the service
# has one (gpuext.gist_walk = auto), else walk the pages as the others do.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
. test/cluster.sh
install_lock
if [ "${BENCH_BUILD:-1}" = 1 ]; then
  build_install "${INSTALL_LOCK%.lock}.build.log" || exit 1
fi
cluster_start gpuext-bench-gist "" 57000 || exit 1
cp test/bench/gist.sql "$WORK/"
chmod a+r "$WORK/gist.sql"
as_user "'$BINDIR/psql' -X -h '$WORK' -p $PORT -d postgres -v rows=${1:-1000000} \
         -v queries=${2:-1000} -v reps=${3:-3} -f '$WORK/gist.sql'"
rc=$?
cluster_stop
rm -rf "$WORK"
exit $rc
