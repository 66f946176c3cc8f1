#!/bin/bash
# gpuext_gist benchmark (test/bench/gist.sql) on a throwaway cluster:
#   bash test/bench/gist.sh [ROWS [QUERIES [REPS]]]     (default 1000000 1000 3)
# Builds and installs first (BENCH_BUILD=0 to skip).  The cases marked
# "gpuext on (GPU if any)" send their batches to the GPU when the service
# has one (gpuext.gist_walk = auto), else walk the pages as the others do.
exec bash "$(dirname "$0")/sql-on-cluster.sh" gpuext-bench-gist 57000 \
  "$(dirname "$0")/gist.sql" -v rows="${1:-1000000}" -v queries="${2:-1000}" -v reps="${3:-3}"
