// ptree_kernel.cu: the device's gpuext_ptree lookups per second at the
// kernel level, as the issue asks ("device lookups/s at the kernel level"),
// beside the bench's figure from EXPLAIN ANALYZE (which times each batch's
// copies with its kernel).
//
// The mirror is the one src/ptree_mirror.c builds for the bench's data
// (test/bench/ptree.sql): KEYS unique int4 keys (g * 7919) mod (4 * KEYS),
// g = 1..KEYS, normalized as src/ptree.c does (sign bit flipped,
// big-endian), so every key has four bytes and its own 32-bit prefix:
// GX_PTREE_FIXED | GX_PTREE_ONE_PER_SLOT | GX_PTREE_UNIQUE, no shared
// prefix.  Only the part lookups read is built (gx_ptree_lookup_bytes: the
// KISS levels and the keys).  The probes are the bench's, (g * 104729) mod
// (4 * KEYS), g = 1..PROBES, a quarter of them present, in the program
// area layout of a GX_REQ_PTREE_LOOKUP batch; the kernel is cuda/ptree.cu's
// (gx_ptree_probe per thread, grid-stride).
//
// Prints one line per measure: the kernel alone (CUDA events around the
// launch, best of REPS after a warm-up), and with the probes copied in and
// the results out (pinned memory), as the service runs a batch.  Checks
// every result against a binary search of the sorted keys on the host.
// Exit 2 on a CUDA error, 1 on a wrong result.
//
//   nvcc -O3 -arch=sm_90 -I cuda -o /tmp/ptree_kernel test/bench/ptree_kernel.cu
//   /tmp/ptree_kernel [KEYS [PROBES [REPS]]]      (default 100000000 10000000 5)
//
// Without nvcc (g++ -x c++ -O2 -I cuda), the same program runs the lookups
// on the host: a check of the mirror and the results, no device figures.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gx_ptree.h"

#ifdef __CUDACC__
#include <cuda_runtime.h>

#define CK(call)                                                                  \
  do {                                                                            \
    cudaError_t e_ = (call);                                                      \
    if (e_ != cudaSuccess) {                                                      \
      printf("ptree_kernel: %s: %s\n", #call, cudaGetErrorString(e_));           \
      exit(2);                                                                    \
    }                                                                             \
  } while (0)

#define PTREE_THREADS 256

// cuda/ptree.cu's lookup kernel
__global__ void __launch_bounds__(PTREE_THREADS)
lookup_kernel(const GxPtreeMirror *__restrict__ mirror, const uint32_t *__restrict__ area,
              uint64_t len, uint32_t nprobes, int64_t *__restrict__ out, int *bad) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nprobes;
       i += gridDim.x * blockDim.x)
    if (!gx_ptree_probe(mirror, area, len, nprobes, i, out))
      *bad = 1;
}
#endif

// src/ptree.c's normalized int4: sign bit flipped, big-endian
static void norm_int4(int32_t v, unsigned char *b) {
  uint32_t u = (uint32_t) v ^ 0x80000000u;
  b[0] = u >> 24; b[1] = u >> 16; b[2] = u >> 8; b[3] = u;
}

// The lookup part of the mirror of sorted unique int4 keys, as
// src/ptree_mirror.c lays it out (parts 8-byte aligned, in one allocation)
static std::vector<uint64_t> build_mirror(const std::vector<int32_t> &keys) {
  size_t n = keys.size();
  std::vector<uint32_t> root(GX_PTREE_ROOT_SIZE, 0);
  std::vector<uint32_t> nodes;
  std::vector<GxPtreeLeaf> leaves;
  for (size_t i = 0; i < n; i++) {
    unsigned char b[4];
    norm_int4(keys[i], b);
    uint32_t p = gx_ptree_prefix32(b, 4, 0);
    if (root[p >> 16] == 0) {
      nodes.resize(nodes.size() + GX_PTREE_NODE_SIZE, 0);
      root[p >> 16] = (uint32_t) (nodes.size() / GX_PTREE_NODE_SIZE);
    }
    uint32_t *entry = &nodes[(size_t) (root[p >> 16] - 1) * GX_PTREE_NODE_SIZE +
                             ((p >> 6) & (GX_PTREE_NODE_SIZE - 1))];
    if (*entry == 0) {
      GxPtreeLeaf l = {0, (uint32_t) i, 0};
      leaves.push_back(l);
      *entry = (uint32_t) leaves.size();
    }
    leaves[*entry - 1].bitmap |= ((uint64_t) 1) << (p & 63);
  }
  auto al = [](uint64_t x) { return (x + 7) & ~(uint64_t) 7; };
  uint64_t o_root = al(sizeof(GxPtreeMirror));
  uint64_t o_nodes = o_root + al(sizeof(uint32_t) * GX_PTREE_ROOT_SIZE);
  uint64_t o_leaves = o_nodes + al(sizeof(uint32_t) * nodes.size());
  uint64_t o_keys = o_leaves + al(sizeof(GxPtreeLeaf) * leaves.size());
  uint64_t end = o_keys + al((uint64_t) 4 * n);
  std::vector<uint64_t> buf(end / 8, 0);
  unsigned char *base = (unsigned char *) buf.data();
  GxPtreeMirror *m = (GxPtreeMirror *) base;
  m->magic = GX_PTREE_MAGIC;
  m->nkeys = (uint32_t) n;
  m->nnodes = (uint32_t) (nodes.size() / GX_PTREE_NODE_SIZE);
  m->nleaves = (uint32_t) leaves.size();
  m->nslots = (uint32_t) n;
  m->flags = GX_PTREE_FIXED | GX_PTREE_ONE_PER_SLOT | GX_PTREE_UNIQUE;
  m->keylen = 4;
  m->ntids = n;
  m->total_size = end;
  m->off_root = o_root;
  m->off_nodes = o_nodes;
  m->off_leaves = o_leaves;
  m->off_slots = o_keys;
  m->off_keyoff = o_keys;
  m->off_keys = o_keys;
  m->off_postoff = end;         // the posting lists, which lookups do not read, left out
  m->off_tids = end;
  memcpy(base + o_root, root.data(), sizeof(uint32_t) * root.size());
  memcpy(base + o_nodes, nodes.data(), sizeof(uint32_t) * nodes.size());
  memcpy(base + o_leaves, leaves.data(), sizeof(GxPtreeLeaf) * leaves.size());
  for (size_t i = 0; i < n; i++)
    norm_int4(keys[i], base + o_keys + 4 * i);
  return buf;
}

int main(int argc, char **argv) {
  uint64_t nkeys = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000;
  uint32_t nprobes = argc > 2 ? (uint32_t) strtoul(argv[2], NULL, 10) : 10000000;
  int reps = argc > 3 ? atoi(argv[3]) : 5;
  uint64_t range = 4 * nkeys;

  auto t0 = std::chrono::steady_clock::now();
  std::vector<int32_t> keys(nkeys);
  for (uint64_t g = 1; g <= nkeys; g++)
    keys[g - 1] = (int32_t) ((g * 7919) % range);
  std::sort(keys.begin(), keys.end());
  std::vector<uint64_t> mbuf = build_mirror(keys);
  const GxPtreeMirror *m = (const GxPtreeMirror *) mbuf.data();
  uint64_t mbytes = gx_ptree_lookup_bytes(m);
  if (!gx_ptree_mirror_ok(m, mbytes)) {
    printf("ptree_kernel: the mirror is malformed\n");
    return 1;
  }

  // the program area: uint32 off[n + 1], then the keys' bytes
  uint64_t len = gx_ptree_probes_size(nprobes, (uint64_t) 4 * nprobes);
  std::vector<uint32_t> area((len + 3) / 4);
  unsigned char *bytes = (unsigned char *) (area.data() + nprobes + 1);
  std::vector<int64_t> expect(nprobes);
  uint64_t present = 0;
  for (uint32_t i = 0; i < nprobes; i++) {
    int32_t v = (int32_t) (((uint64_t) (i + 1) * 104729) % range);
    area[i] = 4 * i;
    norm_int4(v, bytes + 4 * i);
    auto it = std::lower_bound(keys.begin(), keys.end(), v);
    expect[i] = (it != keys.end() && *it == v) ? (int64_t) (it - keys.begin()) : -1;
    present += expect[i] >= 0;
  }
  area[nprobes] = 4 * nprobes;
  double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("ptree_kernel: %llu keys (mirror lookup part %.1f MB, %u level-2 nodes, %u leaves), "
         "%u probes (%llu present), setup %.1f s\n",
         (unsigned long long) nkeys, mbytes / 1048576.0, m->nnodes, m->nleaves, nprobes,
         (unsigned long long) present, setup_s);

  std::vector<int64_t> out(nprobes);
#ifdef __CUDACC__
  int dev = 0;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  GxPtreeMirror *d_m;
  uint32_t *d_area;
  int64_t *d_out;
  int *d_bad;
  uint32_t *h_area;
  int64_t *h_out;
  CK(cudaMalloc(&d_m, mbytes));
  CK(cudaMalloc(&d_area, len));
  CK(cudaMalloc(&d_out, sizeof(int64_t) * nprobes));
  CK(cudaMalloc(&d_bad, sizeof(int)));
  CK(cudaMemset(d_bad, 0, sizeof(int)));
  CK(cudaMallocHost(&h_area, len));
  CK(cudaMallocHost(&h_out, sizeof(int64_t) * nprobes));
  memcpy(h_area, area.data(), len);
  CK(cudaMemcpy(d_m, m, mbytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_area, h_area, len, cudaMemcpyHostToDevice));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  // cuda/ptree.cu's grid: a thread per probe, at most 65535 blocks
  uint64_t blocks = std::min<uint64_t>((nprobes + PTREE_THREADS - 1) / PTREE_THREADS, 65535);
  float best_k = 1e30f, best_all = 1e30f;
  for (int r = 0; r <= reps; r++) {
    float ms;
    CK(cudaEventRecord(a));
    lookup_kernel<<<(uint32_t) blocks, PTREE_THREADS>>>(d_m, d_area, len, nprobes, d_out, d_bad);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    CK(cudaEventElapsedTime(&ms, a, b));
    if (r > 0) best_k = std::min(best_k, ms);    // r = 0: warm-up
  }
  for (int r = 0; r <= reps; r++) {
    float ms;
    CK(cudaEventRecord(a));
    CK(cudaMemcpyAsync(d_area, h_area, len, cudaMemcpyHostToDevice));
    lookup_kernel<<<(uint32_t) blocks, PTREE_THREADS>>>(d_m, d_area, len, nprobes, d_out, d_bad);
    CK(cudaMemcpyAsync(h_out, d_out, sizeof(int64_t) * nprobes, cudaMemcpyDeviceToHost));
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b));
    if (r > 0) best_all = std::min(best_all, ms);
  }
  int bad = 0;
  CK(cudaMemcpy(&bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost));
  memcpy(out.data(), h_out, sizeof(int64_t) * nprobes);
  printf("ptree_kernel: %s: kernel %.3f ms for %u lookups: %.3g lookups/s (kernel alone, best of %d)\n",
         prop.name, best_k, nprobes, nprobes / (best_k / 1000.0), reps);
  printf("ptree_kernel: %s: with the probes copied in and the results out: %.3f ms: %.3g lookups/s\n",
         prop.name, best_all, nprobes / (best_all / 1000.0));
  if (bad) {
    printf("ptree_kernel: the kernel found a malformed probe\n");
    return 1;
  }
#else
  auto t1 = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < nprobes; i++)
    if (!gx_ptree_probe(m, area.data(), len, nprobes, i, out.data()))
      return 1;
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  printf("ptree_kernel: host (no CUDA): %.3g lookups/s on one core, one probe at a time\n",
         nprobes / s);
  for (uint32_t i = 0; i < nprobes; i++)
    out[i] = -2;
  t1 = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < nprobes; i += GX_PTREE_GROUP)
    if (!gx_ptree_probe_group(m, area.data(), len, nprobes, i,
                              std::min<uint32_t>(GX_PTREE_GROUP, nprobes - i), out.data()))
      return 1;
  s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  printf("ptree_kernel: host (no CUDA): %.3g lookups/s on one core, in groups of %d (the CPU engine's)\n",
         nprobes / s, GX_PTREE_GROUP);
#endif
  for (uint32_t i = 0; i < nprobes; i++)
    if (out[i] != expect[i]) {
      printf("ptree_kernel: probe %u: %lld, expected %lld\n", i, (long long) out[i],
             (long long) expect[i]);
      return 1;
    }
  printf("ptree_kernel: every result checked\n");
  return 0;
}
