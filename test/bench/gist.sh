#!/bin/bash
# gpuext_gist benchmark on a throwaway cluster:
#   bash test/bench/gist.sh [ROWS [QUERIES [REPS [psql options]]]]
#       test/bench/gist.sql (default 1000000 1000 3): an && ANY batch of
#       QUERIES windows and a spatial join, gpuext_gist against GiST;
#       more variables as psql options, e.g. -v outer=1000000 -v slow_ms=30000
#       (see the head of gist.sql)
#   GIST_SWEEP=1 bash test/bench/gist.sh [ROWS [QUERIES [REPS [psql options]]]]
#       test/bench/gist-sweep.sql: gpuext_gist's node_size against batch
#       size, GPU against the CPU walk (-v node_sizes=32,64,128,204)
# Builds and installs first (BENCH_BUILD=0 to skip); BENCH_CONF adds
# settings to the cluster's postgresql.conf.  The cases marked "gpuext on
# (GPU if any)" send their batches to the GPU when the service has one
# (gpuext.gist_walk = auto), else walk the pages as the others do.
ROWS=${1:-1000000} QUERIES=${2:-1000} REPS=${3:-3}
shift $(($# < 3 ? $# : 3))
FILE=gist.sql
[ "${GIST_SWEEP:-0}" = 1 ] && FILE=gist-sweep.sql
exec bash "$(dirname "$0")/sql-on-cluster.sh" gpuext-bench-gist 57000 \
  "$(dirname "$0")/$FILE" -v rows="$ROWS" -v queries="$QUERIES" -v reps="$REPS" "$@"
