# gpuext: GPU offload for PostgreSQL 15 (PGXS build)
#
#   make                  build (nvcc optional: without it, CPU engine only)
#   make install          install into the server of $(PG_CONFIG)
#   make test             build, install, run every test suite on a throwaway cluster
#   make demo             sample data and the offloaded queries, on a throwaway cluster
#   make bench            benchmarks (see test/bench/README)
#   make fuzz [N=500] [SEED=1]  differential query generator: offloaded vs stock
#                         results on a throwaway cluster (see test/fuzz/fuzz.py)
#   make valgrind [TESTS="a b"]  pg_regress with every server process under
#                         valgrind's memcheck, CPU engine (test/sanitize.sh)
#   make compute-sanitizer [TOOL="memcheck racecheck initcheck synccheck"]
#                         [TESTS=...]  the GPU and pg_regress suites with the
#                         GPU service's kernels under compute-sanitizer (GPU
#                         machine; test/sanitize.sh)
#   make fuzz-sqlsmith [N=1000] [SEED=1]  SQLsmith's random queries with
#                         gpuext forced on; fails on a crash (test/fuzz/sqlsmith.sh)
#   make load [MODE=all]  pgbench with the offloaded query mix beside stock and
#                         the fault test (MODE load, faults, all or ci; see
#                         test/load/README)

EXTENSION  = gpuext
EXTVERSION = 0.1
MODULE_big = gpuext
DATA       = gpuext--0.1.sql
PGFILEDESC = "gpuext - GPU offload of scans, joins and aggregation"

PG_CONFIG ?= pg_config

C_SRCS  = $(sort $(wildcard src/*.c) $(wildcard costmodel/*.c))
CU_SRCS = $(sort $(wildcard cuda/*.cu))
CU_HDRS = $(wildcard cuda/*.h cuda/*.cuh)

# CUDA: found on PATH or at CUDA_HOME; without it the build is CPU-only.
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(shell command -v nvcc 2>/dev/null || (test -x $(CUDA_HOME)/bin/nvcc && echo $(CUDA_HOME)/bin/nvcc))

# The static CUDA runtime is looked for beside nvcc (symlinks resolved), in the
# toolkit's target folder and in Debian's multiarch folder.  A toolkit without
# it (nvcc alone) gives the CPU-only build, with a warning, not a link error.
BUILD_NVCC := $(strip $(NVCC))
ifneq ($(BUILD_NVCC),)
CUDA_ROOT   := $(shell dirname $$(dirname $$(readlink -f $(BUILD_NVCC))))
CUDA_LIBDIR ?= $(firstword $(foreach d,$(CUDA_ROOT)/lib64 $(CUDA_ROOT)/lib \
                 $(CUDA_ROOT)/targets/x86_64-linux/lib $(CUDA_HOME)/lib64 \
                 /usr/lib/x86_64-linux-gnu,$(if $(wildcard $(d)/libcudart_static.a),$(d))))
ifeq ($(strip $(CUDA_LIBDIR)),)
$(warning gpuext: $(BUILD_NVCC) found but no libcudart_static.a beside it; building the CPU engine only)
BUILD_NVCC :=
endif
endif

ifneq ($(BUILD_NVCC),)
CU_OBJS  = $(CU_SRCS:.cu=.o)
SHLIB_LINK += -L$(CUDA_LIBDIR) -lcudart_static -lrt -ldl -lpthread -lstdc++
else
CU_OBJS  =
PG_CPPFLAGS += -DGPUEXT_NO_CUDA
endif

OBJS = $(C_SRCS:.c=.o) $(CU_OBJS)

PG_CPPFLAGS += -I$(srcdir)/src -I$(srcdir)/cuda -I$(srcdir)/costmodel
# -Wextra on our code; PostgreSQL's own headers trip these two
PG_CFLAGS   += -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare

# Hopper machine code plus PTX, so other GPUs can JIT it
NVCC_ARCH  ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
NVCC_FLAGS ?= -O3 -std=c++17 -lineinfo -fmad=false $(NVCC_ARCH) -Xcompiler -fPIC,-Wall,-Wextra,-Wno-unused-parameter \
              -Icuda --expt-relaxed-constexpr

EXTRA_CLEAN = results regression.diffs regression.out output_iso tmp_check log \
              test/results test/output_iso test/tmp_check test/gpu/gpuext-replay

# PGXS would otherwise ask for LLVM bitcode of the .cu files
override with_llvm = no

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

cuda/%.o: cuda/%.cu $(CU_HDRS)
	$(BUILD_NVCC) $(NVCC_FLAGS) -c $< -o $@

$(C_SRCS:.c=.o): $(wildcard src/*.h costmodel/*.h) $(CU_HDRS)

# the replay of captured device requests, for compute-sanitizer (GPU builds)
test/gpu/gpuext-replay: test/gpu/replay.cu $(CU_OBJS) $(CU_HDRS)
	$(if $(BUILD_NVCC),$(BUILD_NVCC) $(NVCC_FLAGS) $< $(CU_OBJS) -o $@,@echo "gpuext-replay needs nvcc" && false)

.PHONY: test demo bench fuzz fuzz-sqlsmith load valgrind compute-sanitizer
test:
	+bash test/run-tests.sh

demo:
	bash test/demo.sh

bench:
	bash test/bench/run.sh $(BENCH_ARGS)

fuzz:
	FUZZ_N='$(N)' FUZZ_SEED='$(SEED)' bash test/fuzz/run.sh $(FUZZ_ARGS)

valgrind:
	SANITIZE_TESTS='$(or $(TESTS),$(SANITIZE_TESTS))' bash test/sanitize.sh valgrind

# TOOL: memcheck (default), racecheck, initcheck or synccheck
compute-sanitizer:
	SANITIZE_TESTS='$(or $(TESTS),$(SANITIZE_TESTS))' bash test/sanitize.sh $(or $(TOOL),memcheck)

fuzz-sqlsmith:
	SQLSMITH_N='$(N)' SQLSMITH_SEED='$(SEED)' bash test/fuzz/sqlsmith.sh

load:
	bash test/load/run.sh $(or $(MODE),all)
