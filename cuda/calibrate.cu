/*-------------------------------------------------------------------------
 * calibrate.cu
 *		Measure the link and the device for the cost model: launch and
 *		sync latency, pinned copies both ways, zero-copy reads of host
 *		memory, coalesced device reads, random reads and random atomics.
 *
 * Runs synchronously in the GPU service (about a second) on a buffer of
 * the DMA arena; every figure is the best of a few repetitions.
 *
 * IDENTIFICATION
 *		cuda/calibrate.cu
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>
#include <cuda_runtime.h>

#include "gx_runtime.h"

#define REPS 5

__global__ void
empty_kernel(void)
{
}

/* sum 16-byte words of 'p' so the reads cannot be optimised away */
__global__ void
read_kernel(const uint4 *p, size_t nwords, unsigned long long *sink)
{
	unsigned long long acc = 0;

	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < nwords;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		uint4		v = p[i];

		acc += v.x ^ v.y ^ v.z ^ v.w;
	}
	if (acc == 0x9e3779b97f4a7c15ULL)
		*sink = acc;
}

/* random 8-byte reads from a table of n words */
__global__ void
gather_kernel(const unsigned long long *t, size_t n, size_t probes, unsigned long long *sink)
{
	unsigned long long acc = 0;
	unsigned long long x = blockIdx.x * (size_t) blockDim.x + threadIdx.x + 1;

	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < probes;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		acc += t[(x >> 17) % n];
	}
	if (acc == 0x9e3779b97f4a7c15ULL)
		*sink = acc;
}

/* random atomicAdd into a table of n words */
__global__ void
atomic_kernel(unsigned long long *t, size_t n, size_t updates)
{
	unsigned long long x = blockIdx.x * (size_t) blockDim.x + threadIdx.x + 7;

	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < updates;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		atomicAdd(&t[(x >> 17) % n], 1ULL);
	}
}

static int
fail(cudaError_t rc, const char *what, char *err, int errlen)
{
	snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(rc));
	cudaGetLastError();
	return -1;
}

/* best-of-REPS milliseconds of 'body' between two events */
#define TIMED(ms_out, ...) \
	do { \
		float best_ = 1e30f; \
		for (int r_ = 0; r_ < REPS; r_++) \
		{ \
			float ms_ = 0; \
			cudaEventRecord(e0, s); \
			__VA_ARGS__; \
			cudaEventRecord(e1, s); \
			if ((rc = cudaEventSynchronize(e1)) != cudaSuccess) \
				goto failed; \
			cudaEventElapsedTime(&ms_, e0, e1); \
			if (ms_ < best_) \
				best_ = ms_; \
		} \
		(ms_out) = best_; \
	} while (0)

extern "C" int
gxr_calibrate(int dev, void *host, size_t host_bytes, GxCalibration *out, char *err, int errlen)
{
	cudaStream_t s = 0;
	cudaEvent_t e0 = 0,
				e1 = 0;
	void	   *dbuf = NULL;
	unsigned long long *sink = NULL;
	void	   *host_dev = NULL;
	size_t		dev_bytes = (size_t) 1 << 30;	/* 1 GB for device-side figures */
	size_t		table_words = (size_t) 1 << 24; /* 128 MB of 8-byte words */
	size_t		probes = (size_t) 1 << 26;
	cudaError_t rc;
	float		ms;
	int			sms = 0;

	memset(out, 0, sizeof(*out));
	if ((rc = cudaSetDevice(dev)) != cudaSuccess)
		return fail(rc, "cudaSetDevice", err, errlen);
	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	if ((rc = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) != cudaSuccess ||
		(rc = cudaEventCreate(&e0)) != cudaSuccess ||
		(rc = cudaEventCreate(&e1)) != cudaSuccess)
		return fail(rc, "calibration setup", err, errlen);
	if ((rc = cudaMalloc(&dbuf, dev_bytes)) != cudaSuccess ||
		(rc = cudaMalloc((void **) &sink, 64)) != cudaSuccess ||
		(rc = cudaHostGetDevicePointer(&host_dev, host, 0)) != cudaSuccess)
		goto failed;
	cudaMemsetAsync(dbuf, 1, dev_bytes, s);

	/* a launch and its completion, as every request pays */
	TIMED(ms, for (int k = 0; k < 100; k++) empty_kernel<<<1, 32, 0, s>>>());
	out->launch_us = ms * 1000.0 / 100;

	/* pinned copies: latency of a small one, bandwidth of a large one */
	TIMED(ms, cudaMemcpyAsync(dbuf, host, 4096, cudaMemcpyHostToDevice, s));
	out->copy_latency_us = ms * 1000.0;
	TIMED(ms, cudaMemcpyAsync(dbuf, host, host_bytes, cudaMemcpyHostToDevice, s));
	out->h2d_gbps = host_bytes / (ms * 1e6);
	TIMED(ms, cudaMemcpyAsync(host, dbuf, host_bytes, cudaMemcpyDeviceToHost, s));
	out->d2h_gbps = host_bytes / (ms * 1e6);

	/* kernels reading registered host memory in place */
	TIMED(ms, read_kernel<<<sms * 8, 256, 0, s>>>((const uint4 *) host_dev, host_bytes / 16, sink));
	out->zero_copy_gbps = host_bytes / (ms * 1e6);

	/* device memory: coalesced reads, random reads, random atomics */
	TIMED(ms, read_kernel<<<sms * 8, 256, 0, s>>>((const uint4 *) dbuf, dev_bytes / 16, sink));
	out->hbm_gbps = dev_bytes / (ms * 1e6);
	TIMED(ms, gather_kernel<<<sms * 8, 256, 0, s>>>((const unsigned long long *) dbuf,
													table_words, probes, sink));
	out->gather_mps = probes / (ms * 1e3);
	TIMED(ms, atomic_kernel<<<sms * 8, 256, 0, s>>>((unsigned long long *) dbuf,
													table_words, probes));
	out->atomic_mps = probes / (ms * 1e3);
	if ((rc = cudaGetLastError()) != cudaSuccess)
		goto failed;

	cudaFree(dbuf);
	cudaFree(sink);
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	cudaStreamDestroy(s);
	return 0;

failed:
	if (dbuf)
		cudaFree(dbuf);
	if (sink)
		cudaFree(sink);
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	cudaStreamDestroy(s);
	return fail(rc, "calibration", err, errlen);
}
