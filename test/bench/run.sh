#!/bin/bash
# make bench: build and install gpuext, measure the machine's transfer limits,
# start the benchmark's own cluster (data kept between runs), generate or
# reuse the data, run the query sets in every configuration, check that the
# configurations agree, and write results.csv, results.json, summary.txt and
# ratios.png.  The summary table is printed last.  Exits non-zero when a
# result differs between configurations or a query fails.
#
#   make bench [BENCH_ARGS="..."]     or     bash test/bench/run.sh [options]
#
# Options (each also an environment variable):
#   --scale S          SCALE / BENCH_SCALE: a number, 1 = Virginian 8 M rows,
#                      lineitem and lineorder ~6 M, grp 10 M, scan_t 50 M rows;
#                      or tiny (0.002), small (0.1), default (0.3: the default
#                      sets fit in one 10-minute command on the 16-core H200
#                      machine), full (1).  Default: default
#   --queries LIST     QUERIES / BENCH_QUERIES: sets and/or query names, comma
#                      separated: virginian scan tpch ssb groupby mixed costmodel
#                      smoke, default (= virginian,scan,tpch,groupby), all;
#                      or one of the index benchmarks alone, each on its own
#                      throwaway cluster: ptree (test/bench/ptree.sh with
#                      PTREE_ROWS, default 10 M; issue 8's size: 100000000)
#                      or gist (test/bench/gist.sh with GIST_ROWS, GIST_QUERIES,
#                      GIST_REPS and GIST_ARGS; GIST_SWEEP=1: node sizes)
#   --reps N           REPS / BENCH_REPS: warm runs a case, median (default 3)
#   --out DIR          BENCH_OUT: output folder (default ./bench-out)
#   --cold             BENCH_COLD=1: also one cold run a case (see docs)
#   --configs LIST     BENCH_CONFIGS: pg_serial,pg_parallel,gx_cpu,gx_gpu,gx_auto
#   --seed N           BENCH_SEED (default 1)
#   --scan-rows N      BENCH_SCAN_ROWS: rows of scan_t (default 50 M x scale)
#   --data-dir DIR     BENCH_DATA_DIR: cluster and data, reused (default /tmp/gpuext-bench)
#   --shared-buffers X BENCH_SHARED_BUFFERS, e.g. 24GB (default: sized to the data)
#   (env only)         BENCH_HUGE_PAGES: the cluster's huge_pages (default try)
#   --cache            BENCH_CACHE=1 (make bench CACHE=1): a column cache
#                      (gpuext_cache_enable) of every cacheable column of the
#                      fact tables, built after the prewarm (BENCH_CACHE_MB:
#                      its gpuext.cache_memory_limit, default 65536); without
#                      it, caches left by an earlier run are dropped.
#                      Sets gpuext.cache_gpu = on for the database (GpuScan
#                      and GpuAgg read the caches' device copies)
#   --no-build         BENCH_BUILD=0: use the installed gpuext as it is
#   --keep-running     BENCH_KEEP_RUNNING=1: leave the cluster running at the end
#   --calibrate, --no-calibrate
#                      BENCH_CALIBRATE=1/0: run SELECT * FROM gpuext_calibrate()
#                      before the queries and log what it measured
#                      (calibration.tsv); default: on when a set with a decision
#                      report (costmodel) is selected and gx_auto runs.  First
#                      BENCH_CALIBRATE_SETTLE (1) settling runs, logged, whose
#                      values the last run replaces (the machine settles after
#                      the load)
# More: BENCH_NPROC (cores to use), BENCH_JOBS (loader sessions), BENCH_PORT,
# BENCH_MAX_CASE_S (cap on the timed runs of one case, default 30 s),
# BENCH_FORCE_PARALLEL=1 (parallel plans even for tiny tables), BENCH_RUN_ALL=1
# (also time gpuext configurations whose plan has no gpuext node),
# BENCH_CPU_AS_GPU=1/0 (without a GPU, run gx_gpu and gx_auto anyway, planned
# as for a GPU and executed by the CPU engine; default on with costmodel),
# BENCH_LIMITS=0 (skip the limits), BENCH_DMA_MB, BENCH_WORK_MEM, PG_CONFIG.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
HERE=$ROOT/test/bench

usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

# --- options -----------------------------------------------------------------
export BENCH_SCALE=${BENCH_SCALE:-${SCALE:-default}}
export BENCH_QUERIES=${BENCH_QUERIES:-${QUERIES:-default}}
export BENCH_REPS=${BENCH_REPS:-${REPS:-3}}
export BENCH_CACHE=${BENCH_CACHE:-${CACHE:-}}
export BENCH_OUT=${BENCH_OUT:-$ROOT/bench-out}
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) BENCH_SCALE=$2; shift ;;
    --queries) BENCH_QUERIES=$2; shift ;;
    --reps) BENCH_REPS=$2; shift ;;
    --out) BENCH_OUT=$2; shift ;;
    --cold) export BENCH_COLD=1 ;;
    --configs) export BENCH_CONFIGS=$2; shift ;;
    --seed) export BENCH_SEED=$2; shift ;;
    --scan-rows) export BENCH_SCAN_ROWS=$2; shift ;;
    --data-dir) export BENCH_DATA_DIR=$2; shift ;;
    --shared-buffers) export BENCH_SHARED_BUFFERS=$2; shift ;;
    --no-build) export BENCH_BUILD=0 ;;
    --keep-running) export BENCH_KEEP_RUNNING=1 ;;
    --calibrate) export BENCH_CALIBRATE=1 ;;
    --cache) export BENCH_CACHE=1 ;;
    --no-calibrate) export BENCH_CALIBRATE=0 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
# the index benchmarks run their own scripts (their own clusters and data)
case "$BENCH_QUERIES" in
  ptree)
    exec bash "$HERE/ptree.sh" "${PTREE_ROWS:-10000000}" ;;
  gist)
    # shellcheck disable=SC2086 # GIST_ARGS: several psql options
    exec bash "$HERE/gist.sh" "${GIST_ROWS:-1000000}" "${GIST_QUERIES:-1000}" "${GIST_REPS:-3}" ${GIST_ARGS:-} ;;
esac
case "$BENCH_SCALE" in
  tiny) BENCH_SCALE_NAME=tiny; BENCH_SCALE=0.002 ;;
  small) BENCH_SCALE_NAME=small; BENCH_SCALE=0.1 ;;
  default) BENCH_SCALE_NAME=0.3; BENCH_SCALE=0.3 ;;
  full) BENCH_SCALE_NAME=1; BENCH_SCALE=1 ;;
  *) BENCH_SCALE_NAME=$BENCH_SCALE ;;
esac
export BENCH_SCALE BENCH_SCALE_NAME BENCH_QUERIES BENCH_REPS
mkdir -p "$BENCH_OUT" || exit 2
BENCH_OUT=$(cd "$BENCH_OUT" && pwd)
export BENCH_OUT
export BENCH_DATA_DIR=${BENCH_DATA_DIR:-/tmp/gpuext-bench}
export BENCH_NPROC=${BENCH_NPROC:-$(nproc)}
export BENCH_PHASES_FILE=$BENCH_OUT/phases.tsv
export BENCH_LIMITS_FILE=$BENCH_OUT/limits.json
export BENCH_CLUSTER_CMD="bash $HERE/cluster.sh"
PYTHON=${PYTHON:-python3}
export PYTHONDONTWRITEBYTECODE=1
: >"$BENCH_PHASES_FILE"
rm -f "$BENCH_LIMITS_FILE" "$BENCH_OUT"/results.csv "$BENCH_OUT"/results.json "$BENCH_OUT"/summary.txt "$BENCH_OUT"/ratios.png \
  "$BENCH_OUT"/calibration.tsv "$BENCH_OUT"/calibration-in-force.tsv

export BENCH_T0=$(date +%s.%N)
phase_start() { PH_T=$(date +%s.%N); }
phase_end() { awk -v n="$1" -v a="$(date +%s.%N)" -v b="$PH_T" 'BEGIN { printf "%s\t%.2f\n", n, a - b }' >>"$BENCH_PHASES_FILE"; }
note() { printf 'bench: %s\n' "$*"; }

command -v "$PYTHON" >/dev/null || { echo "bench: needs python3" >&2; exit 2; }

# --- PostgreSQL (the GPU machine gets it from the project's bundle) -----------
if [ -z "${PG_CONFIG:-}" ] && ! command -v pg_config >/dev/null && [ -f .gpu/install-pg-bundle.sh ]; then
  note "installing the PostgreSQL bundle"
  bash .gpu/install-pg-bundle.sh || exit 2
fi
export PG_CONFIG=${PG_CONFIG:-pg_config}
export BINDIR=$("$PG_CONFIG" --bindir) || exit 2

# --- build and install --------------------------------------------------------
if [ "${BENCH_BUILD:-1}" != 0 ]; then
  phase_start
  note "building and installing gpuext (log: $BENCH_OUT/build.log)"
  (
    # one build/install at a time (test/run-tests.sh takes the same lock)
    exec 9>"/tmp/gpuext-install$("$PG_CONFIG" --pkglibdir | tr / _).lock"
    flock 9
    make -s -j"$BENCH_NPROC" PG_CONFIG="$PG_CONFIG" >"$BENCH_OUT/build.log" 2>&1 &&
      make -s PG_CONFIG="$PG_CONFIG" install >>"$BENCH_OUT/build.log" 2>&1
  ) || { tail -n 40 "$BENCH_OUT/build.log"; echo "bench: build failed" >&2; exit 2; }
  phase_end build
fi

# --- one benchmark at a time per data folder ------------------------------------
mkdir -p "$BENCH_DATA_DIR"
exec 8>"$BENCH_DATA_DIR.lock"
if ! flock -n 8; then
  note "waiting for another benchmark using $BENCH_DATA_DIR"
  flock 8
fi

# --- the machine's limits -------------------------------------------------------
NVCC=${NVCC:-$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })}
if [ "${BENCH_LIMITS:-1}" != 0 ] && [ -n "$NVCC" ] && { nvidia-smi -L >/dev/null 2>&1 || [ -e /dev/nvidia0 ]; }; then
  phase_start
  LIM=$BENCH_DATA_DIR/limits-$(md5sum "$HERE/limits.cu" | cut -c1-12)
  if [ ! -x "$LIM" ]; then
    "$NVCC" -O3 -std=c++17 ${NVCC_ARCH:--gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90} \
      -o "$LIM" "$HERE/limits.cu" >"$BENCH_OUT/limits-build.log" 2>&1 ||
      { note "limits.cu did not build (see limits-build.log)"; rm -f "$LIM"; }
  fi
  if [ -x "$LIM" ]; then
    timeout 300 "$LIM" "${BENCH_LIMITS_MB:-1024}" >"$BENCH_LIMITS_FILE" 2>"$BENCH_OUT/limits.err"
    note "limits: $(cat "$BENCH_LIMITS_FILE")"
  fi
  phase_end limits
else
  note "limits: skipped (no GPU or no nvcc)"
fi

# --- cluster ---------------------------------------------------------------------
if [ -z "${BENCH_SHARED_BUFFERS:-}" ]; then
  # the data of the selected sets, plus room; at most 40 % of RAM and 48 GB
  est=$("$PYTHON" "$HERE/bench.py" estimate) || exit 2
  mem_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
  sb_mb=$(( est * 13 / 10 / 1048576 + 512 ))
  cap=$(( mem_kb * 4 / 10 / 1024 ))
  [ "$cap" -gt 49152 ] && cap=49152
  [ "$sb_mb" -gt "$cap" ] && sb_mb=$cap
  [ "$sb_mb" -lt 256 ] && sb_mb=256
  export BENCH_SHARED_BUFFERS=${sb_mb}MB
fi
if [ -z "${BENCH_DMA_MB:-}" ]; then
  if awk -v s="$BENCH_SCALE" 'BEGIN { exit !(s < 0.05) }'; then BENCH_DMA_MB=128; else BENCH_DMA_MB=1024; fi
  export BENCH_DMA_MB
fi
if [ -z "${BENCH_WORK_MEM:-}" ]; then
  mem_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
  wm=$(( mem_kb / 128 / 1024 ))
  [ "$wm" -gt 1024 ] && wm=1024
  [ "$wm" -lt 64 ] && wm=64
  export BENCH_WORK_MEM=${wm}MB
fi
# shellcheck source=cluster.sh
source "$HERE/cluster.sh"
export BENCH_RUNAS BENCH_PORT
export BENCH_GIT="$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD -- src cuda costmodel test/bench 2>/dev/null || echo '+changes')"

phase_start
bench_cluster_init || exit 2
note "starting the cluster in $BENCH_DATA_DIR (shared_buffers $BENCH_SHARED_BUFFERS, port $BENCH_PORT, $BENCH_NPROC cores)"
bench_cluster_start || { echo "bench: the cluster did not start" >&2; exit 2; }
phase_end cluster-start
stop_cluster() {
  if [ "${BENCH_KEEP_RUNNING:-0}" = 1 ]; then
    note "cluster left running: psql -h $BENCH_DATA_DIR -p $BENCH_PORT -U $BENCH_RUNAS bench"
  else
    bench_cluster_stop
  fi
}
trap stop_cluster EXIT

"$PYTHON" "$HERE/bench.py" run
rc=$?
trap - EXIT
stop_cluster
exit $rc
