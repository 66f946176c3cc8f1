#!/bin/bash
# gpuext_ptree against btree (test/bench/ptree.sql) on an existing server:
#   bash test/bench/ptree.sh [ROWS] [psql connection options...]
# e.g. bash test/bench/ptree.sh 1000000 -h /tmp -p 5432 -d postgres
set -e
rows=${1:-1000000}
shift || true
psql -X -q -v rows="$rows" "$@" -c 'CREATE EXTENSION IF NOT EXISTS gpuext' \
  -f "$(dirname "$0")/ptree.sql"
