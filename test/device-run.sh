#!/bin/bash
# One command on the GPU machine (the device tool's run, with the git-excluded
# .gpu folder carried: see ../shared/gpu/README.md), within its 10 minutes:
#
#   bash test/device-run.sh tests
#       GPUEXT_REQUIRE_GPU=1 make test, the differential fuzzer (2 x 5,000
#       queries, seeds 7 and 11) and SQLsmith (2 passes of 10,000 queries)
#       side by side, each against its own private PostgreSQL copy; about 6
#       minutes on 16 cores.  FUZZ_N, SMITH_N change the sizes.
#   bash test/device-run.sh sanitize [TOOL ...]
#       make compute-sanitizer TOOL="TOOL ..." (default memcheck): the suites
#       once with the service's requests recorded, then replayed under each
#       tool; the logs packed as $OUT/sanitize-logs.tar.xz.  SANITIZE_STRIDE
#       samples the replay of the tools other than memcheck.
#   bash test/device-run.sh index
#       the index benchmarks test/bench/ptree.sh (PTREE_ROWS, default 10M;
#       PTREE_KEYTYPE int4 or int8, default int4; PTREE_WORKERS, default 8;
#       PTREE_SHARED_BUFFERS, default 32GB; with it first
#       test/bench/ptree_kernel.cu, the lookup kernel alone on the bench's
#       keys and probes: lookups/s at the kernel level) and
#       test/bench/gist.sh (GIST_ROWS 2M, GIST_QUERIES 20K, GIST_REPS 1;
#       GIST_ARGS: more psql options for gist.sql, e.g. "-v outer=1000000").
#       INDEX_BENCH=gist or ptree runs one of them (the other's time limit
#       then goes to it); GIST_SWEEP=1 runs gist-sweep.sql (node sizes)
#       instead of gist.sql.  The gist results are printed as they come.
#       The issues' sizes, each one run of about 6 to 9 minutes:
#         PTREE_ROWS=100000000 INDEX_BENCH=ptree bash test/device-run.sh index
#         INDEX_BENCH=gist GIST_ROWS=10000000 GIST_QUERIES=100000 \
#           GIST_ARGS="-v outer=1000000 -v gpureps=2 -v wmin=5 -v wspan=10 \
#           -v slow_ms=30000 -v explain=1" bash test/device-run.sh index
#         INDEX_BENCH=gist GIST_SWEEP=1 GIST_ROWS=10000000 \
#           GIST_QUERIES=100000 GIST_REPS=2 bash test/device-run.sh index
#   bash test/device-run.sh costmodel
#       make bench QUERIES=costmodel SCALE=small (a settling calibration, the
#       one kept, then the 40 queries in five configurations; about 7
#       minutes) and its decision report; REPEAT_CAL=N then calls
#       gpuext_calibrate() N more times on the same cluster (about 40 s
#       each) and prints the figures plans turn on, to see their spread;
#       SWEEP="ARGS" then runs test/bench/sweep.py ARGS on the same cluster
#       (a setting's values timed interleaved, e.g. the worker counts of
#       a query's Gather) with the time left.
#   bash test/device-run.sh load [MODE]
#       test/load/run.sh MODE (default load; faults, all) at the GPU
#       machine's size: LOAD_ROWS 20M rows, pgbench with 4 clients a core,
#       LOAD_DURATION 180 s a configuration (100 with all), gpuext beside
#       stock; the fault test with LOAD_FAULT_CLIENTS 64 clients, phases of
#       LOAD_PHASE_SECS 20 s (cancel storm, injected kernel and allocation
#       faults, SIGTERM and SIGKILL of the GPU service).  Its report is
#       printed and kept as $OUT/load-report.txt (for docs/benchmarks.md),
#       its logs and the server log as $OUT/load.tar.xz.  Other LOAD_*
#       variables: test/load/run.sh.
#   bash test/device-run.sh bench TAG [VAR=VALUE ...]
#       one make bench with those variables (e.g. SCALE=10 QUERIES=ssb); its
#       output folder packed as $OUT/TAG.tar.xz.
#
# Every command installs the PostgreSQL bundle first (.gpu/install-pg-bundle.sh)
# and the ICU headers that PostgreSQL's pg_locale.h includes (.gpu/icu, copied
# there from /usr/include/unicode: the bundle lacks them), and SQLsmith from
# .gpu/smith when that holds it (the sqlsmith binary and the libraries ldd
# lists for it, but the C library's: libc, libm, libresolv, ...).  Logs go to $OUT,
# which the device tool brings back (at most 8 files).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }

case "${1:-}" in
  tests|bench|costmodel|sanitize|index|load) ;;
  *) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
if ! command -v pg_config >/dev/null; then
  bash .gpu/install-pg-bundle.sh >/tmp/install.log 2>&1 || { tail -30 /tmp/install.log; exit 1; }
fi
[ -d /usr/include/unicode ] || cp -r .gpu/icu/unicode /usr/include/ 2>/dev/null
# SQLsmith: the machine has none; .gpu/smith, when there, holds the binary
# and the libraries it needs (copied from the development machine)
if ! command -v sqlsmith >/dev/null && [ -x .gpu/smith/sqlsmith ]; then
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$ROOT/.gpu/smith" "$ROOT/.gpu/smith/sqlsmith" \
    >/usr/local/bin/sqlsmith
  chmod +x /usr/local/bin/sqlsmith
fi
command -v nvidia-smi >/dev/null && nvidia-smi -L | head -4

case "${1:-}" in
  tests)
    make -j"$(nproc)" -s >/tmp/build.log 2>&1 || { cat /tmp/build.log; exit 1; }
    P1=$(bash test/private-pg.sh /opt/pgwt/fuzz-a)
    P2=$(bash test/private-pg.sh /opt/pgwt/fuzz-b)
    P3=$(bash test/private-pg.sh /opt/pgwt/smith)
    echo "setup $(elapsed) s"
    L=${LIMIT:-540}
    (timeout "$L" env GPUEXT_REQUIRE_GPU=1 make test >"$OUT/test.log" 2>&1
     echo "make test rc=$? at $(elapsed) s" >>/tmp/rc.txt) &
    (timeout "$L" env PG_CONFIG="$P1" FUZZ_N="${FUZZ_N:-5000}" FUZZ_SEED=7 \
       FUZZ_OUT="$OUT/fuzz7-report.txt" bash test/fuzz/run.sh >/tmp/fuzz7.log 2>&1
     echo "fuzz seed 7 rc=$? at $(elapsed) s" >>/tmp/rc.txt) &
    (timeout "$L" env PG_CONFIG="$P2" FUZZ_N="${FUZZ_N:-5000}" FUZZ_SEED=11 \
       FUZZ_OUT="$OUT/fuzz11-report.txt" bash test/fuzz/run.sh >/tmp/fuzz11.log 2>&1
     echo "fuzz seed 11 rc=$? at $(elapsed) s" >>/tmp/rc.txt) &
    (timeout "$L" env PG_CONFIG="$P3" SQLSMITH_N="${SMITH_N:-10000}" SQLSMITH_SEED=3 \
       bash test/fuzz/sqlsmith.sh >"$OUT/sqlsmith.log" 2>&1
     echo "sqlsmith rc=$? at $(elapsed) s" >>/tmp/rc.txt) &
    wait
    cat /tmp/rc.txt
    tail -4 "$OUT/test.log"
    grep -E "FAILED|^== failed" "$OUT/test.log" | head -20
    grep -hE "^fuzz summary|^  outcomes" "$OUT"/fuzz*-report.txt
    grep -E "^== sqlsmith" "$OUT/sqlsmith.log"
    # the test cluster's server log, for crashes and the service's messages
    for d in /tmp/gpuext-test.*; do
      [ -f "$d/server.log" ] && tail -c 3000000 "$d/server.log" | xz -1 >"$OUT/server.log.xz"
    done
    ! grep -q "rc=[^0]" /tmp/rc.txt
    ;;
  sanitize)
    shift
    tools=${*:-memcheck}
    make compute-sanitizer TOOL="$tools" >"$OUT/sanitize.log" 2>&1
    rc=$?
    echo "compute-sanitizer $tools: rc=$rc after $(elapsed) s"
    grep -E "^== |ERROR SUMMARY|RACECHECK SUMMARY|gpuext-replay:|: clean" "$OUT/sanitize.log" | tail -20
    d=$(ls -td /tmp/gpuext-"${tools// /-}".* 2>/dev/null | head -1)
    [ -n "$d" ] && tar -C "$d" -cJf "$OUT/sanitize-logs.tar.xz" --exclude=capture . 2>/dev/null
    exit $rc
    ;;
  index)
    # the index benchmarks: INDEX_BENCH, PTREE_ROWS PTREE_KEYTYPE
    # PTREE_WORKERS PTREE_LIMIT, GIST_ROWS GIST_QUERIES GIST_REPS GIST_LIMIT
    which=${INDEX_BENCH:-both}
    make -j"$(nproc)" -s >/tmp/build.log 2>&1 || { cat /tmp/build.log; exit 1; }
    echo "built after $(elapsed) s"
    rc=0
    if [ "$which" = ptree ] || [ "$which" = both ]; then
      # parallel plans share memory through DSM segments (/dev/shm): where
      # it is small (a container's), files in the data folder instead
      conf="shared_buffers = ${PTREE_SHARED_BUFFERS:-32GB}"
      shm_kb=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')
      [ "${shm_kb:-0}" -lt $((16 * 1024 * 1024)) ] && conf="$conf
dynamic_shared_memory_type = mmap"
      # the lookup kernel alone, on the bench's keys and probes
      rows=${PTREE_ROWS:-10000000}
      if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
        NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
        "$NVCC" -O3 -arch=sm_90 -I cuda -o /tmp/ptree_kernel test/bench/ptree_kernel.cu &&
          timeout 120 /tmp/ptree_kernel "$rows" $((rows / 10)) 5 2>&1 | tee "$OUT/ptree-kernel.log"
      fi
      limit=${PTREE_LIMIT:-280}
      [ "$which" = ptree ] && limit=${PTREE_LIMIT:-$((560 - $(elapsed)))}
      echo "ptree bench: ${PTREE_ROWS:-10000000} rows, limit $limit s"
      BENCH_CONF="$conf" timeout "$limit" bash test/bench/ptree.sh "${PTREE_ROWS:-10000000}" \
        -v keytype="${PTREE_KEYTYPE:-int4}" -v workers="${PTREE_WORKERS:-8}" >"$OUT/ptree-bench.log" 2>&1
      r=$?
      echo "ptree bench rc=$r after $(elapsed) s"
      [ "$r" = 0 ] || rc=$r
      grep -vE "^(DROP|CREATE|INSERT|SET|RESET|VACUUM|ALTER|SELECT [0-9]+|Time: 0\.[0-9]+ ms)" \
        "$OUT/ptree-bench.log" | grep -vE '^$|^-+(\+-+)*$|^\([0-9]+ rows?\)$' | tail -200
    fi
    if [ "$which" = gist ] || [ "$which" = both ]; then
      GL=${GIST_LIMIT:-280}
      [ "$which" = gist ] && GL=${GIST_LIMIT:-$((580 - $(elapsed)))}
      # shellcheck disable=SC2086 # GIST_ARGS: several psql options
      BENCH_CONF=${GIST_CONF:-$'shared_buffers = 8GB\nmax_wal_size = 16GB'} timeout "$GL" \
        bash test/bench/gist.sh "${GIST_ROWS:-2000000}" "${GIST_QUERIES:-20000}" \
        "${GIST_REPS:-1}" ${GIST_ARGS:-} 2>&1 | tee "$OUT/gist-bench.log" |
        grep --line-buffered -E "result:|step:|sweep:|explain:|ERROR|FATAL|PANIC" |
        sed -u 's/^psql:[^ ]* WARNING:  //'
      r=${PIPESTATUS[0]}
      echo "gist bench rc=$r after $(elapsed) s (limit $GL s)"
      [ "$r" = 0 ] || rc=$r
      # the summary tables at the end
      awk '/^ *(case_name|node_size) +\|/ { p = 1 } p' "$OUT/gist-bench.log" | grep -v WARNING | tail -80
    fi
    exit $rc
    ;;
  costmodel)
    mount -o remount,size=48G /dev/shm 2>/dev/null
    timeout $((570 - $(elapsed))) env MAKEFLAGS=-j"$(nproc)" BENCH_KEEP_RUNNING=1 BENCH_OUT=/tmp/bench-cm \
      make bench QUERIES=costmodel SCALE=small >"$OUT/cm-bench.log" 2>&1
    rc=$?
    echo "costmodel bench rc=$rc after $(elapsed) s"
    grep -E "^bench: (settling|gpuext_calibrate)" "$OUT/cm-bench.log" | cut -c1-600
    sed -n '/^cost model decisions/,$p' "$OUT/cm-bench.log" | head -70
    tar -C /tmp -cJf "$OUT/cm.tar.xz" bench-cm
    if [ -n "${SWEEP:-}" ] && [ "$(elapsed)" -lt 560 ]; then
      # shellcheck disable=SC2086 (SWEEP is a list of arguments)
      timeout $((585 - $(elapsed))) python3 test/bench/sweep.py $SWEEP 2>&1 | tee "$OUT/sweep.log"
    fi
    for i in $(seq "${REPEAT_CAL:-0}"); do
      [ "$(elapsed)" -lt 540 ] || break
      "$(pg_config --bindir)/psql" -X -h /tmp/gpuext-bench -p "${BENCH_PORT:-5497}" -U postgres bench -Atc \
        "SELECT string_agg(parameter || ' ' || round(measured::numeric, 4), ', ') FROM gpuext_calibrate()
          WHERE parameter IN ('cost_unit_us', 'host_page_us', 'host_tuple_us', 'host_row_page_us',
                              'stock_agg_row_us', 'stock_group_us', 'client_row_us',
                              'parallel_start_us', 'parallel_worker_us', 'gpu_setup_us', 'gpuagg_setup_us')"
    done
    exit $rc
    ;;
  load)
    mode=${2:-load}
    make -j"$(nproc)" -s >/tmp/build.log 2>&1 || { cat /tmp/build.log; exit 1; }
    echo "built after $(elapsed) s"
    dur=180
    [ "$mode" = all ] && dur=100
    rm -rf /tmp/load-out
    timeout $((585 - $(elapsed))) env LOAD_ROWS="${LOAD_ROWS:-20000000}" \
      LOAD_DURATION="${LOAD_DURATION:-$dur}" LOAD_FAULT_CLIENTS="${LOAD_FAULT_CLIENTS:-64}" \
      LOAD_PHASE_SECS="${LOAD_PHASE_SECS:-20}" LOAD_OUT=/tmp/load-out LOAD_KEEP=1 \
      bash test/load/run.sh "$mode" >"$OUT/load.log" 2>&1
    rc=$?
    echo "load test ($mode) rc=$rc after $(elapsed) s"
    grep -vE "^== (starting|GPU service)|^-1: |^[0-9]+: " /tmp/load-out/report.txt 2>/dev/null ||
      tail -60 "$OUT/load.log"
    cp /tmp/load-out/report.txt "$OUT/load-report.txt" 2>/dev/null
    for d in /tmp/gpuext-load.*; do
      [ -f "$d/server.log" ] && tail -c 3000000 "$d/server.log" >/tmp/load-out/server.log
    done
    tar -C /tmp -cJf "$OUT/load.tar.xz" load-out
    exit $rc
    ;;
  bench)
    TAG=${2:?usage: device-run.sh bench TAG [VAR=VALUE ...]}
    shift 2
    env "$@" MAKEFLAGS=-j"$(nproc)" BENCH_OUT="/tmp/bench-$TAG" make bench >"$OUT/$TAG-bench.log" 2>&1
    rc=$?
    echo "bench $TAG rc=$rc after $(elapsed) s"
    tail -60 "$OUT/$TAG-bench.log"
    tar -C /tmp -cJf "$OUT/$TAG.tar.xz" "bench-$TAG"
    exit $rc
    ;;
esac
