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
// Then the merge plan of issue 8 (cuda/ptree.cu's GX_REQ_PTREE_MERGE) for
// MERGE delta entries against the same mirror: the entries' 64-bit keys
// ((g * 104729) mod (4 * KEYS), a tenth of them repeated with the same
// TID: exact duplicates) and TIDs, sorted by (key, TID) with two CUB radix
// sorts, flagged, scanned, and each kept entry ranked in the mirror
// (gx_ptree_merge_emit); timed on the device (events, best of REPS), and
// with the entries copied in and the plan out; checked against std::sort,
// unique and lower_bound on the host.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I cuda -o /tmp/ptree_kernel test/bench/ptree_kernel.cu
//   /tmp/ptree_kernel [KEYS [PROBES [REPS [MERGE]]]]   (default 100000000 10000000 5 1000000)
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
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
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

// cuda/ptree.cu's merge plan kernels
__global__ void __launch_bounds__(PTREE_THREADS)
merge_flag_kernel(const uint64_t *__restrict__ keys, const uint64_t *__restrict__ tids, uint32_t n,
                  uint32_t *__restrict__ flags) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i <= n; i += gridDim.x * blockDim.x)
    flags[i] = i < n ? (uint32_t) gx_ptree_merge_keep(keys, tids, i) : 0;
}

__global__ void __launch_bounds__(PTREE_THREADS)
merge_emit_kernel(const GxPtreeMirror *__restrict__ mirror, const uint64_t *__restrict__ keys,
                  const uint64_t *__restrict__ tids, const uint32_t *__restrict__ flags,
                  const uint32_t *__restrict__ pos, uint32_t n, uint64_t *__restrict__ out) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    if (i == 0)
      out[0] = pos[n];
    if (flags[i])
      gx_ptree_merge_emit(mirror, keys, tids, i, pos[i], n, out);
  }
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
  uint32_t nmerge = argc > 4 ? (uint32_t) strtoul(argv[4], NULL, 10) : 1000000;
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

  // the merge plan: entries, a tenth repeated (exact duplicates)
  uint32_t n = nmerge;
  std::vector<uint64_t> min_(2 * (size_t) n);    // keys[n], then tids[n] (the program area)
  for (uint32_t i = 0; i < n; i++) {
    uint32_t g = i % 10 == 9 ? i - 9 + 1 : i + 1;
    unsigned char kb[4];
    norm_int4((int32_t) (((uint64_t) g * 104729) % range), kb);
    min_[i] = gx_ptree_key64(kb, 4);
    min_[n + i] = ((uint64_t) (g / 200) << 16) | (g % 200 + 1);
  }
  // the host's answer: sort, unique, lower_bound
  std::vector<std::pair<uint64_t, uint64_t>> ref(n);
  for (uint32_t i = 0; i < n; i++)
    ref[i] = {min_[i], min_[n + i]};
  auto t2 = std::chrono::steady_clock::now();
  std::sort(ref.begin(), ref.end());
  ref.erase(std::unique(ref.begin(), ref.end()), ref.end());
  std::vector<uint64_t> mkeys(nkeys);
  for (uint64_t i = 0; i < nkeys; i++)
    mkeys[i] = gx_ptree_mirror_key64(m, i);
  std::vector<uint64_t> rank(ref.size());
  for (size_t i = 0; i < ref.size(); i++) {
    auto it = std::lower_bound(mkeys.begin(), mkeys.end(), ref[i].first);
    rank[i] = (uint64_t) (it - mkeys.begin()) * 2 + (it != mkeys.end() && *it == ref[i].first);
  }
  double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t2).count();
  printf("ptree_kernel: merge plan of %u delta entries (%zu distinct) against %llu main keys: "
         "host std::sort + unique + lower_bound %.1f ms on one core\n",
         n, ref.size(), (unsigned long long) nkeys, host_s * 1000);
  std::vector<uint64_t> plan(1 + 3 * (size_t) n);
#ifdef __CUDACC__
  {
    uint64_t *d_in, *d_alt, *d_out;
    uint32_t *d_flags, *d_pos;
    uint64_t *h_in, *h_out;
    void *d_temp = NULL;
    size_t temp = 0, q;
    CK(cudaMalloc(&d_in, sizeof(uint64_t) * 2 * n));
    CK(cudaMalloc(&d_alt, sizeof(uint64_t) * 2 * n));
    CK(cudaMalloc(&d_out, sizeof(uint64_t) * (1 + 3 * (size_t) n)));
    CK(cudaMalloc(&d_flags, sizeof(uint32_t) * (n + 1)));
    CK(cudaMalloc(&d_pos, sizeof(uint32_t) * (n + 1)));
    CK(cudaMallocHost(&h_in, sizeof(uint64_t) * 2 * n));
    CK(cudaMallocHost(&h_out, sizeof(uint64_t) * (1 + 3 * (size_t) n)));
    memcpy(h_in, min_.data(), sizeof(uint64_t) * 2 * n);
    {
      cub::DoubleBuffer<uint64_t> dk(d_in, d_alt), dt(d_in + n, d_alt + n);
      CK(cub::DeviceRadixSort::SortPairs(NULL, q, dt, dk, (int) n, 0, 48));
      temp = std::max(temp, q);
      CK(cub::DeviceRadixSort::SortPairs(NULL, q, dk, dt, (int) n, 0, 64));
      temp = std::max(temp, q);
      CK(cub::DeviceScan::ExclusiveSum(NULL, q, d_flags, d_pos, (int) n + 1));
      temp = std::max(temp, q);
    }
    CK(cudaMalloc(&d_temp, temp));
    uint64_t mblocks = std::min<uint64_t>((n + PTREE_THREADS) / PTREE_THREADS, 65535);
    float best_plan = 1e30f, best_plan_all = 1e30f;
    for (int copy = 0; copy < 2; copy++)
      for (int r = 0; r <= reps; r++) {
        float ms;
        if (!copy)
          CK(cudaMemcpy(d_in, h_in, sizeof(uint64_t) * 2 * n, cudaMemcpyHostToDevice));
        CK(cudaEventRecord(a));
        if (copy)
          CK(cudaMemcpyAsync(d_in, h_in, sizeof(uint64_t) * 2 * n, cudaMemcpyHostToDevice));
        cub::DoubleBuffer<uint64_t> dk(d_in, d_alt), dt(d_in + n, d_alt + n);
        q = temp;
        CK(cub::DeviceRadixSort::SortPairs(d_temp, q, dt, dk, (int) n, 0, 48));
        q = temp;
        CK(cub::DeviceRadixSort::SortPairs(d_temp, q, dk, dt, (int) n, 0, 64));
        merge_flag_kernel<<<(uint32_t) mblocks, PTREE_THREADS>>>(dk.Current(), dt.Current(), n, d_flags);
        q = temp;
        CK(cub::DeviceScan::ExclusiveSum(d_temp, q, d_flags, d_pos, (int) n + 1));
        merge_emit_kernel<<<(uint32_t) mblocks, PTREE_THREADS>>>(d_m, dk.Current(), dt.Current(),
                                                                 d_flags, d_pos, n, d_out);
        if (copy)
          CK(cudaMemcpyAsync(h_out, d_out, sizeof(uint64_t) * (1 + 3 * (size_t) n),
                             cudaMemcpyDeviceToHost));
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        CK(cudaGetLastError());
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r > 0) {
          if (copy)
            best_plan_all = std::min(best_plan_all, ms);
          else
            best_plan = std::min(best_plan, ms);
        }
      }
    memcpy(plan.data(), h_out, sizeof(uint64_t) * (1 + 3 * (size_t) n));
    printf("ptree_kernel: %s: merge plan (2 radix sorts, flags, scan, ranks) %.3f ms on the device: "
           "%.3g entries/s (best of %d)\n", prop.name, best_plan, n / (best_plan / 1000.0), reps);
    printf("ptree_kernel: %s: with the entries copied in and the plan out: %.3f ms: %.3g entries/s\n",
           prop.name, best_plan_all, n / (best_plan_all / 1000.0));
  }
#else
  {
    // the CPU engine's semantics (src/cpu_engine.c): sort, then the per-entry steps
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; i++)
      order[i] = i;
    auto t3 = std::chrono::steady_clock::now();
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      return gx_ptree_merge_cmp(min_[x], min_[n + x], min_[y], min_[n + y]) < 0;
    });
    std::vector<uint64_t> sk(n), st(n);
    for (uint32_t i = 0; i < n; i++) {
      sk[i] = min_[order[i]];
      st[i] = min_[n + order[i]];
    }
    uint64_t kept = 0;
    for (uint32_t i = 0; i < n; i++)
      if (gx_ptree_merge_keep(sk.data(), st.data(), i))
        gx_ptree_merge_emit(m, sk.data(), st.data(), i, kept++, n, plan.data());
    plan[0] = kept;
    double s3 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t3).count();
    printf("ptree_kernel: host (no CUDA): merge plan (sort, flags, ranks in the mirror) %.1f ms on one core\n",
           s3 * 1000);
  }
#endif
  if (plan[0] != ref.size()) {
    printf("ptree_kernel: the plan kept %llu entries, expected %zu\n", (unsigned long long) plan[0],
           ref.size());
    return 1;
  }
  for (size_t i = 0; i < ref.size(); i++)
    if (plan[1 + i] != ref[i].first || plan[1 + n + i] != ref[i].second || plan[1 + 2 * (size_t) n + i] != rank[i]) {
      printf("ptree_kernel: plan entry %zu differs\n", i);
      return 1;
    }
  printf("ptree_kernel: every plan entry checked\n");
  return 0;
}
