/*-------------------------------------------------------------------------
 * gx_device.cuh
 *		Device-only helpers shared by the kernels.
 *
 * IDENTIFICATION
 *		cuda/gx_device.cuh
 *-------------------------------------------------------------------------
 */
#ifndef GX_DEVICE_CUH
#define GX_DEVICE_CUH

#include "gx_common.h"

/*
 * Copy one 8 kB heap page from registered host memory (zero-copy over
 * PCIe) into shared memory with 16-byte loads, coalesced across the
 * block.  All threads of the block must call it; it ends with a barrier.
 */
__device__ __forceinline__ void
gx_load_page(uint4 *dst, const unsigned char *page)
{
	const uint4 *src = (const uint4 *) page;

	for (int i = threadIdx.x; i < GX_BLCKSZ / 16; i += blockDim.x)
		dst[i] = __ldcs(src + i);
	__syncthreads();
}

/* nanoseconds of the device's global timer */
__device__ __forceinline__ uint64_t
gx_globaltimer(void)
{
	uint64_t	t;

	asm volatile ("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

#endif							/* GX_DEVICE_CUH */
