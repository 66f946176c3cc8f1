// limits.cu: the machine's own transfer ceilings, measured once per benchmark
// run (test/bench/run.sh builds it with nvcc when there is a GPU).
//
//   host -> device copy from pinned (registered) memory, cudaMemcpy
//   host -> device copy from pageable memory
//   device -> host copy to pinned memory
//   zero-copy read: a kernel reading registered host memory in place over the
//     link, which is how gpuext reads shared_buffers
//   device memory read (a kernel summing a device buffer) and device-to-device
//     copy (bytes read + written)
//
// Each is the best of REPS timed repetitions after a warm-up, timed with CUDA
// events.  Prints one JSON object on stdout; on any CUDA error prints
// {"error": "..."} and exits 2.
//
//   limits [MB]   (default 1024: buffer size of each test)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

static const int REPS = 5;

#define CK(call)                                                                  \
  do {                                                                            \
    cudaError_t e_ = (call);                                                      \
    if (e_ != cudaSuccess) {                                                      \
      printf("{\"error\": \"%s: %s\"}\n", #call, cudaGetErrorString(e_));         \
      exit(2);                                                                    \
    }                                                                             \
  } while (0)

// Sum 16-byte words with a grid-stride loop, four loads in flight per thread;
// one partial sum per thread so the loads cannot be optimised away.
__global__ void read_kernel(const uint4 *__restrict__ p, size_t n, unsigned long long *out) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  unsigned long long acc = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];
    acc += (unsigned long long)a.x + a.y + a.z + a.w + b.x + b.y + b.z + b.w + c.x + c.y + c.z + c.w + d.x +
           d.y + d.z + d.w;
  }
  for (; i < n; i += stride) {
    uint4 a = p[i];
    acc += (unsigned long long)a.x + a.y + a.z + a.w;
  }
  if (acc == 0x5eed5eed5eedULL) out[0] = acc;  // practically never: keeps acc live
}


struct Timer {
  cudaEvent_t a, b;
  Timer() {
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
  }
};

// best GB/s of REPS runs of f, moving `bytes` each
template <typename F>
static double best_gbps(Timer &t, double bytes, F f) {
  f();  // warm-up
  CK(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int r = 0; r < REPS; r++) {
    CK(cudaEventRecord(t.a));
    f();
    CK(cudaEventRecord(t.b));
    CK(cudaEventSynchronize(t.b));
    float ms;
    CK(cudaEventElapsedTime(&ms, t.a, t.b));
    best = std::min(best, ms);
  }
  return bytes / (best / 1e3) / 1e9;
}

int main(int argc, char **argv) {
  size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
  size_t bytes = mb << 20;
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    printf("{\"error\": \"no CUDA device (%s)\"}\n", e != cudaSuccess ? cudaGetErrorString(e) : "count 0");
    return 2;
  }
  CK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));

  // host memory as gpuext has it: ordinary (shared) memory, registered
  void *host = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (host == MAP_FAILED) {
    printf("{\"error\": \"mmap of %zu MB failed\"}\n", mb);
    return 2;
  }
  memset(host, 1, bytes);
  CK(cudaHostRegister(host, bytes, cudaHostRegisterMapped));
  void *host_dev = NULL;
  CK(cudaHostGetDevicePointer(&host_dev, host, 0));
  size_t pageable_bytes = std::min(bytes, (size_t)256 << 20);
  void *pageable = malloc(pageable_bytes);
  if (!pageable) {
    printf("{\"error\": \"malloc failed\"}\n");
    return 2;
  }
  memset(pageable, 1, pageable_bytes);
  void *dev = NULL, *dev2 = NULL;
  CK(cudaMalloc(&dev, bytes));
  CK(cudaMalloc(&dev2, bytes));
  CK(cudaMemset(dev, 1, bytes));
  unsigned long long *sink = NULL;
  CK(cudaMalloc(&sink, sizeof(unsigned long long)));

  Timer t;
  int threads = 256;
  int blocks = prop.multiProcessorCount * 8;
  size_t n16 = bytes / 16;

  double h2d = best_gbps(t, bytes, [&] { CK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice)); });
  double d2h = best_gbps(t, bytes, [&] { CK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost)); });
  double h2d_pageable = best_gbps(t, pageable_bytes, [&] {
    CK(cudaMemcpy(dev, pageable, pageable_bytes, cudaMemcpyHostToDevice));
  });
  double zc = best_gbps(t, bytes, [&] {
    read_kernel<<<blocks, threads>>>((const uint4 *)host_dev, n16, sink);
    CK(cudaGetLastError());
  });
  double hbm_read = best_gbps(t, bytes, [&] {
    read_kernel<<<blocks * 4, threads>>>((const uint4 *)dev, n16, sink);
    CK(cudaGetLastError());
  });
  double hbm_copy = best_gbps(t, 2.0 * bytes, [&] { CK(cudaMemcpy(dev2, dev, bytes, cudaMemcpyDeviceToDevice)); });

  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  printf("{\"device\": \"%s\", \"sm_count\": %d, \"cc\": \"%d.%d\", \"memory_total\": %zu, "
         "\"driver\": %d, \"runtime\": %d, \"buffer_mb\": %zu, \"reps\": %d, "
         "\"h2d_pinned_gbps\": %.2f, \"d2h_pinned_gbps\": %.2f, \"h2d_pageable_gbps\": %.2f, "
         "\"zero_copy_read_gbps\": %.2f, \"hbm_read_gbps\": %.1f, \"hbm_copy_gbps\": %.1f}\n",
         prop.name, prop.multiProcessorCount, prop.major, prop.minor, (size_t)prop.totalGlobalMem, driver,
         runtime, mb, REPS, h2d, d2h, h2d_pageable, zc, hbm_read, hbm_copy);
  cudaHostUnregister(host);
  munmap(host, bytes);
  free(pageable);
  cudaFree(dev);
  cudaFree(dev2);
  cudaFree(sink);
  return 0;
}
