#!/bin/bash
# gpuext_ptree benchmark (test/bench/ptree.sql: against btree, = ANY batches
# and index nested-loop joins, and the best stock join) on a throwaway
# cluster:
#   bash test/bench/ptree.sh [ROWS]          (default 1000000)
# Builds and installs first (BENCH_BUILD=0 to skip).  BENCH_CONF adds
# settings (e.g. "shared_buffers = 8GB").  The cases marked "gpuext on" send
# their batches to the GPU when the service has one.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
. test/cluster.sh
install_lock
if [ "${BENCH_BUILD:-1}" = 1 ]; then
  build_install "${INSTALL_LOCK%.lock}.build.log" || exit 1
fi
cluster_start gpuext-bench-ptree "${BENCH_CONF:-}" 57100 || exit 1
cp test/bench/ptree.sql "$WORK/"
chmod a+r "$WORK/ptree.sql"
as_user "'$BINDIR/psql' -X -h '$WORK' -p $PORT -d postgres -v rows=${1:-1000000} -f '$WORK/ptree.sql'"
rc=$?
cluster_stop
rm -rf "$WORK"
exit $rc
