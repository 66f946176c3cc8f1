#!/bin/bash
# gpuext_ptree benchmark (test/bench/ptree.sql: against btree, = ANY batches
# and index nested-loop joins, and the best stock join) on a throwaway
# cluster:
#   bash test/bench/ptree.sh [ROWS [psql options]]     (default 1000000)
# e.g. bash test/bench/ptree.sh 100000000 -v keytype=int4 -v workers=8
# (ptree.sql lists its variables).  Builds and installs first
# (BENCH_BUILD=0 to skip).  BENCH_CONF adds settings (e.g. "shared_buffers
# = 8GB").  The cases marked "gpuext on" send their batches to the GPU when
# the service has one.
rows=${1:-1000000}
shift $(($# > 0 ? 1 : 0))
exec bash "$(dirname "$0")/sql-on-cluster.sh" gpuext-bench-ptree 57100 \
  "$(dirname "$0")/ptree.sql" -v rows="$rows" "$@"
