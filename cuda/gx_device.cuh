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
#include "gx_colcache.h"

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

/*
 * The rows of a column cache page (GX_PAGE_CACHED, its slot in ref->buf_id,
 * which the service checked): each thread evaluates rows with
 * row_fn(row, off) (row of the cache, its line pointer off; returns a
 * GX_ROW_* verdict); consecutive threads take consecutive rows, so their
 * column reads coalesce.  The verdicts become line pointer bits in bitmaps
 * in shared memory, written out whole as the page's pass and recheck
 * bitmaps.  Every thread of the block calls it (GpuScan and GpuJoin: only
 * what a row does differs).
 */
template <int THREADS, typename RowFn>
__device__ __forceinline__ void
gx_cached_page_rows(const GxColCache *cc, const GxPageRef *ref, uint32_t *pass,
					uint32_t *recheck, RowFn row_fn)
{
	__shared__ uint32_t bits[2][GX_BITMAP_WORDS];
	const GxCcPage *pg = &gx_cc_pages(cc)[ref->buf_id];
	const uint16_t *offsets = gx_cc_offsets(cc);

	if (threadIdx.x < GX_BITMAP_WORDS)
	{
		bits[0][threadIdx.x] = 0;
		bits[1][threadIdx.x] = 0;
	}
	__syncthreads();
	for (uint32_t r = threadIdx.x; r < pg->nrows; r += THREADS)
	{
		uint64_t	row = pg->row_start + r;
		uint32_t	off = offsets[row];
		int			rc;

		if (off < 1 || off > GX_MAX_TUPLES_PER_PAGE)
			continue;			/* (cannot happen: the cache holds real rows) */
		rc = row_fn(row, off);
		if (rc != GX_ROW_FAIL)
			atomicOr(&bits[rc == GX_ROW_PASS ? 0 : 1][(off - 1) >> 5], 1u << ((off - 1) & 31));
	}
	__syncthreads();
	if (threadIdx.x < GX_BITMAP_WORDS)
	{
		pass[threadIdx.x] = bits[0][threadIdx.x];
		recheck[threadIdx.x] = bits[1][threadIdx.x];
	}
	__syncthreads();			/* the bitmaps are reused */
}

/*
 * Every row of a batch, for the aggregating kernels (agg.cu, join.cu).
 * CACHED (a kernel built for batches with column cache pages): each warp
 * takes one cache page (GX_PAGE_CACHED) at a time, its lanes the page's
 * rows, cached_row(row) with the row's index in the cache's columns (a
 * page holds about 70-140 rows: a block a page left most threads idle,
 * each block waiting on its own chain of loads, the page reference over
 * the link first: SSB Q1.2 at scale 10 took 44 ms, 22 ms with this, on
 * the H100, sessions 9 and 10).  A cache page without the cache flags the batch malformed.
 * Then each other page, one a block, is copied into shared memory 'page'
 * and gives heap_row(ref, off) for each line pointer.  Every thread of the
 * block calls it (the heap walk has barriers, taken alike by all).
 */
template <bool CACHED, typename CachedRow, typename HeapRow>
__device__ __forceinline__ void
gx_batch_rows(GxBatch *batch, const GxColCache *cc, uint4 *page, const unsigned char *pages,
			  CachedRow cached_row, HeapRow heap_row)
{
	const GxPageRef *refs = gx_batch_pages(batch);
	uint32_t	npages = batch->npages;

	if (CACHED)
	{
		uint32_t	warps = blockDim.x / 32;
		uint32_t	lane = threadIdx.x & 31;

		for (uint32_t p = blockIdx.x * warps + threadIdx.x / 32; p < npages; p += gridDim.x * warps)
		{
			const GxCcPage *pg;

			if (!(refs[p].flags & GX_PAGE_CACHED))
				continue;
			if (cc == NULL)
			{
				if (lane == 0)
					batch->kernel_error = GX_KERR_NO_TASK;
				continue;
			}
			pg = &gx_cc_pages(cc)[refs[p].buf_id];
			for (uint32_t i = lane; i < pg->nrows; i += 32)
				cached_row(pg->row_start + i);
		}
	}
	for (uint32_t p = blockIdx.x; p < npages; p += gridDim.x)
	{
		GxPageRef	ref;

		if (CACHED && (refs[p].flags & GX_PAGE_CACHED))
			continue;
		ref = refs[p];
		gx_load_page(page, pages + (size_t) ref.buf_id * GX_BLCKSZ);
		for (uint32_t i = threadIdx.x; i < ref.nline; i += blockDim.x)
			heap_row(&ref, i + 1);
		__syncthreads();		/* the page buffer is reused */
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
