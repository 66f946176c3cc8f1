#!/bin/bash
# gpuext_ptree benchmark (test/bench/ptree.sql: against btree, = ANY batches
# and index nested-loop joins, and the best stock join) on a throwaway
# cluster:
#   bash test/bench/ptree.sh [ROWS]          (default 1000000)
# Builds and installs first (BENCH_BUILD=0 to skip).  BENCH_CONF adds
# settings (e.g. "shared_buffers = 8GB").  The cases marked "gpuext on" send
# their batches to the GPU when the service has one.
exec bash "$(dirname "$0")/sql-on-cluster.sh" gpuext-bench-ptree 57100 \
  "$(dirname "$0")/ptree.sql" -v rows="${1:-1000000}"
