#!/bin/bash
# Run one benchmark SQL file with psql on a throwaway cluster (test/cluster.sh),
# for test/bench/ptree.sh and test/bench/gist.sh:
#   sql-on-cluster.sh NAME PORT FILE [psql options, e.g. -v rows=1000]
# Builds and installs first (BENCH_BUILD=0 to skip); BENCH_CONF adds
# settings to the cluster's postgresql.conf.
set -u
NAME=${1:?usage: sql-on-cluster.sh NAME PORT FILE [psql options]}
BASE_PORT=${2:?port}
FILE=${3:?file}
shift 3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
. test/cluster.sh
install_lock
if [ "${BENCH_BUILD:-1}" = 1 ]; then
  build_install "${INSTALL_LOCK%.lock}.build.log" || exit 1
fi
cluster_start "$NAME" "${BENCH_CONF:-}" "$BASE_PORT" || exit 1
cp "$FILE" "$WORK/bench.sql"
chmod a+r "$WORK/bench.sql"
as_user "'$BINDIR/psql' -X -h '$WORK' -p $PORT -d postgres $* -f '$WORK/bench.sql'"
rc=$?
cluster_stop
rm -rf "$WORK"
exit $rc
