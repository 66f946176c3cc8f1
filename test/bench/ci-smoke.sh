#!/bin/bash
# CI smoke test of the benchmark suite: scale 'tiny', the 'smoke' query set
# (a few queries of every set), one run a case, on a throwaway cluster.  It
# checks only that every configuration returns the same results (no timing
# is asserted) and exits non-zero otherwise.  CPU configurations by default
# (stock serial, stock parallel with parallel plans forced, gpuext CPU
# engine); BENCH_CONFIGS overrides.  test/run-tests.sh runs it as the suite
# 'bench' after building and installing, so by default it does not build
# (BENCH_BUILD=1 to build and install first).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
DIR=$(mktemp -d /tmp/gpuext-bench-smoke.XXXXXX)
chmod 755 "$DIR"
export BENCH_DATA_DIR=$DIR/cluster
export BENCH_OUT=${BENCH_SMOKE_OUT:-$DIR/out}
export BENCH_SCALE=tiny BENCH_QUERIES=smoke BENCH_REPS=1
export BENCH_CONFIGS=${BENCH_CONFIGS:-pg_serial,pg_parallel,gx_cpu}
export BENCH_FORCE_PARALLEL=1 BENCH_RUN_ALL=1 BENCH_LIMITS=0
export BENCH_BUILD=${BENCH_BUILD:-0}
export BENCH_PORT=${BENCH_PORT:-$((56000 + RANDOM % 1000))}
export BENCH_SHARED_BUFFERS=${BENCH_SHARED_BUFFERS:-256MB} BENCH_DMA_MB=${BENCH_DMA_MB:-64}
export BENCH_NPROC=${BENCH_NPROC:-2} BENCH_JOBS=${BENCH_JOBS:-2}
bash test/bench/run.sh
rc=$?
if [ $rc = 0 ]; then
  rm -rf "$DIR"
else
  echo "bench smoke: failed; cluster and output kept in $DIR"
fi
exit $rc
