/*-------------------------------------------------------------------------
 * ptree.cu
 *		Batched lookups in the prefix-tree mirror of a gpuext_ptree index.
 *
 * One thread per probe (grid-stride), each running the same lookup as the
 * CPU engine (gx_ptree_probe in gx_ptree.h): three dependent reads of the
 * KISS levels, then a binary search of the slot for keys longer than 32
 * bits.  The mirror is one allocation copied to the device as it is built
 * on the host.  Not wired into the GPU service yet: the launcher is here
 * so the kernel compiles for sm_90 and is ready for it.
 *
 * IDENTIFICATION
 *		cuda/ptree.cu
 *-------------------------------------------------------------------------
 */
#include "gx_kernels.h"
#include "gx_ptree.h"

#define PTREE_THREADS 256

__global__ void __launch_bounds__(PTREE_THREADS)
ptree_lookup_kernel(const GxPtreeMirror *__restrict__ mirror,
					const unsigned char *__restrict__ probes,
					const uint32_t *__restrict__ off, uint32_t nprobes,
					int64_t *__restrict__ out)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nprobes;
		 i += gridDim.x * blockDim.x)
		gx_ptree_probe(mirror, probes, off, i, out);
}

/*
 * Enqueue the lookups of nprobes probes (all pointers are device memory)
 */
cudaError_t
gx_launch_ptree_lookup(const GxPtreeMirror *mirror, const unsigned char *probes,
					   const uint32_t *off, uint32_t nprobes, int64_t *out, cudaStream_t s)
{
	uint32_t	blocks = (nprobes + PTREE_THREADS - 1) / PTREE_THREADS;

	if (nprobes == 0)
		return cudaSuccess;
	if (blocks > 65535)
		blocks = 65535;
	ptree_lookup_kernel<<<blocks, PTREE_THREADS, 0, s>>>(mirror, probes, off, nprobes, out);
	return cudaGetLastError();
}
