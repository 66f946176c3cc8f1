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
#include "gx_program.h"

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

/*
 * Store a warp's verdicts on 32 consecutive tuples (rc of each lane's
 * tuple) as word 'word' of a page's pass and recheck bitmaps; lane 0
 * writes.  Every lane of the warp must call it.
 */
__device__ __forceinline__ void
gx_store_row_bits(uint32_t *pass, uint32_t *recheck, uint32_t word, int rc)
{
	unsigned	pass_bits = __ballot_sync(0xffffffff, rc == GX_ROW_PASS);
	unsigned	recheck_bits = __ballot_sync(0xffffffff, rc == GX_ROW_RECHECK);

	if ((threadIdx.x & 31) == 0 && word < GX_BITMAP_WORDS)
	{
		pass[word] = pass_bits;
		recheck[word] = recheck_bits;
	}
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
