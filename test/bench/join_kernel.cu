// join_kernel.cu: the GpuJoin hash table's build and probe rates at the
// kernel level, as issue 5 asks ("report build and probe rates"), beside
// the bench's EXPLAIN ANALYZE figures (which time whole batches: pages
// read over PCIe, the program, the probe, the results).
//
// For each inner size N: N unique int4 keys 2 * i (i = 0..N-1), laid out
// as the host lays out one depth's table (cuda/gx_join.h: rows with their
// hash and key word, slots zeroed, capacity the power of two >= 2N that
// gx_join_table_bytes picks), copied to device memory; then
//   build: one thread per row calls gx_join_insert, the function
//          cuda/join.cu's join_build_kernel runs (compare-and-swap on a
//          slot, or on the chain of the row holding the same key);
//   probe: PROBES int keys (j * 104729) mod (4N), a quarter of them
//          present, one thread per key calls gx_join_probe with a one-key
//          int depth, the function every probing kernel runs, and writes
//          the match (row + 1, or 0).
// Timed with CUDA events around each launch, best of REPS after a warm-up
// (the table is copied again, untimed, before each build).  Every probe's
// result is checked on the host (present iff even and below 2N, and the
// row found holds the key).  Exit 2 on a CUDA error, 1 on a wrong result.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I cuda -o /tmp/join_kernel test/bench/join_kernel.cu
//   /tmp/join_kernel [SIZES [PROBES [REPS]]]  (default 1000,50000,10000000,100000000 100000000 5)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "gx_join.h"

#define CK(call)                                                                  \
  do {                                                                            \
    cudaError_t e_ = (call);                                                      \
    if (e_ != cudaSuccess) {                                                      \
      printf("join_kernel: %s: %s\n", #call, cudaGetErrorString(e_));            \
      exit(2);                                                                    \
    }                                                                             \
  } while (0)

// one thread a row, grid-stride: join_build_kernel's loop for one depth
__global__ void build_kernel(GxJoinTables *ts, uint64_t nrows, int *failed)
{
  GxJoinTable *t = gx_join_table(ts, 0);
  for (uint64_t i = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x; i < nrows;
       i += (uint64_t) gridDim.x * blockDim.x)
    if (gx_join_insert(t, (uint32_t) i) != 0)
      *failed = 1;
}

// one thread a probe key, grid-stride: the probe of one int key
__global__ void probe_kernel(GxJoinTables *ts, const int64_t *keys, uint64_t n, uint32_t *match)
{
  GxJoinTable *t = gx_join_table(ts, 0);
  GxJoinDepth d;
  memset(&d, 0, sizeof(d));
  d.jointype = GX_JOIN_INNER;
  d.nkeys = 1;
  d.keys[0].kclass = GX_JKEY_INT;
  d.keys[0].reg = 0;
  for (uint64_t j = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x; j < n;
       j += (uint64_t) gridDim.x * blockDim.x)
  {
    GxDatum reg;
    memset(&reg, 0, sizeof(reg));
    reg.v.i = keys[j];
    match[j] = gx_join_probe(t, &d, &reg);
  }
}

// The block of one depth's table for keys 2 * i, as the host builds it.
static std::vector<char> make_tables(uint64_t n)
{
  uint64_t cap;
  uint64_t table_bytes = gx_join_table_bytes(n, n, &cap);
  uint64_t off = (sizeof(GxJoinTables) + 63) & ~(uint64_t) 63;
  std::vector<char> block(off + ((table_bytes + 63) & ~(uint64_t) 63), 0);
  GxJoinTables *ts = (GxJoinTables *) block.data();
  ts->ndepths = 1;
  ts->total_bytes = block.size();
  ts->table_off[0] = off;
  GxJoinTable *t = gx_join_table(ts, 0);
  t->nrows = n;
  t->capacity = cap;
  t->slots_off = sizeof(GxJoinTable);
  t->rows_off = t->slots_off + ((cap * 4 + 15) & ~(uint64_t) 15);
  t->keys_off = t->rows_off + n * sizeof(GxJoinRow);
  t->nwords = n;
  t->values_off = (t->keys_off + n * 8 + 15) & ~(uint64_t) 15;
  t->nvalues = 0;
  GxJoinRow *rows = gx_join_rows(t);
  uint64_t *words = gx_join_keys(t);
  for (uint64_t i = 0; i < n; i++)
  {
    words[i] = (uint64_t) (int64_t) (2 * i);
    rows[i].key_off = i;
    rows[i].key_words = 1;
    rows[i].hash = gx_join_hash_words(&words[i], 1);
    rows[i].next = 0;
  }
  return block;
}

int main(int argc, char **argv)
{
  std::string sizes = argc > 1 ? argv[1] : "1000,50000,10000000,100000000";
  uint64_t nprobes = argc > 2 ? strtoull(argv[2], NULL, 10) : 100000000;
  int reps = argc > 3 ? atoi(argv[3]) : 5;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("join_kernel: %s, %llu probes, best of %d\n", prop.name, (unsigned long long) nprobes, reps);

  int64_t *probes_dev;
  uint32_t *match_dev;
  int *failed_dev;
  CK(cudaMalloc(&probes_dev, nprobes * sizeof(int64_t)));
  CK(cudaMalloc(&match_dev, nprobes * sizeof(uint32_t)));
  CK(cudaMalloc(&failed_dev, sizeof(int)));
  std::vector<int64_t> probes(nprobes);
  std::vector<uint32_t> match(nprobes);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  int bad_total = 0;

  for (size_t at = 0; at < sizes.size();)
  {
    size_t comma = sizes.find(',', at);
    uint64_t n = strtoull(sizes.substr(at, comma - at).c_str(), NULL, 10);
    at = comma == std::string::npos ? sizes.size() : comma + 1;

    std::vector<char> block = make_tables(n);
    char *ts_dev;
    CK(cudaMalloc(&ts_dev, block.size()));
    uint32_t grid = (uint32_t) std::min<uint64_t>((n + 255) / 256, 65535);
    float best_build = 1e30f;
    for (int r = 0; r <= reps; r++)
    {
      CK(cudaMemcpy(ts_dev, block.data(), block.size(), cudaMemcpyHostToDevice));
      CK(cudaMemset(failed_dev, 0, sizeof(int)));
      CK(cudaEventRecord(e0));
      build_kernel<<<grid, 256>>>((GxJoinTables *) ts_dev, n, failed_dev);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      CK(cudaGetLastError());
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r > 0 && ms < best_build)
        best_build = ms;
    }
    int failed = 0;
    CK(cudaMemcpy(&failed, failed_dev, sizeof(int), cudaMemcpyDeviceToHost));

    for (uint64_t j = 0; j < nprobes; j++)
      probes[j] = (int64_t) ((j * 104729ULL) % (4 * n));
    CK(cudaMemcpy(probes_dev, probes.data(), nprobes * sizeof(int64_t), cudaMemcpyHostToDevice));
    uint32_t pgrid = (uint32_t) std::min<uint64_t>((nprobes + 255) / 256, 65535 * 8);
    float best_probe = 1e30f;
    for (int r = 0; r <= reps; r++)
    {
      CK(cudaEventRecord(e0));
      probe_kernel<<<pgrid, 256>>>((GxJoinTables *) ts_dev, probes_dev, nprobes, match_dev);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      CK(cudaGetLastError());
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r > 0 && ms < best_probe)
        best_probe = ms;
    }
    CK(cudaMemcpy(match.data(), match_dev, nprobes * sizeof(uint32_t), cudaMemcpyDeviceToHost));

    // check every probe: present iff even and below 2N; the row holds it
    const GxJoinTable *t = gx_join_table((GxJoinTables *) block.data(), 0);
    const uint64_t *words = (const uint64_t *) ((const char *) t + t->keys_off);
    uint64_t bad = failed ? 1 : 0, hits = 0;
    for (uint64_t j = 0; j < nprobes; j++)
    {
      int64_t p = probes[j];
      bool present = p % 2 == 0 && (uint64_t) p < 2 * n;
      if (match[j] != 0)
        hits++;
      if (present != (match[j] != 0) ||
          (match[j] != 0 && (match[j] > n || words[match[j] - 1] != (uint64_t) p)))
        bad++;
    }
    printf("inner %llu rows (table %.1f MB): build %.3f ms, %.3g rows/s; "
           "probe %llu keys %.3f ms, %.3g probes/s, %llu hits; %s\n",
           (unsigned long long) n, block.size() / 1048576.0, best_build, n / (best_build / 1e3),
           (unsigned long long) nprobes, best_probe, nprobes / (best_probe / 1e3),
           (unsigned long long) hits, bad ? "WRONG" : "every result checked");
    bad_total += bad != 0;
    CK(cudaFree(ts_dev));
  }
  return bad_total ? 1 : 0;
}
