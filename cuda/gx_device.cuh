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
 * The batch's header, read once per block into shared memory: the batch
 * is in mapped host memory, and header fields read by every thread cost
 * each warp a read over PCIe per field.  Only the fixed fields (counts,
 * offsets) may be taken from the copy; abort_flag is read from the batch.
 * All threads of the block must call it, once per kernel; it ends with a
 * barrier.
 */
__device__ __forceinline__ const GxBatch *
gx_block_batch_header(const GxBatch *batch)
{
	__shared__ GxBatch hdr;

	if (threadIdx.x < sizeof(GxBatch) / sizeof(uint32_t))
		((uint32_t *) &hdr)[threadIdx.x] = ((const uint32_t *) batch)[threadIdx.x];
	__syncthreads();
	return &hdr;
}

/* gx_batch_pages and gx_batch_out with the offsets of the header's copy */
__device__ __forceinline__ const GxPageRef *
gx_batch_pages_at(const GxBatch *batch, const GxBatch *hdr)
{
	return (const GxPageRef *) ((const char *) batch + hdr->pages_offset);
}

__device__ __forceinline__ void *
gx_batch_out_at(GxBatch *batch, const GxBatch *hdr)
{
	return (void *) ((char *) batch + hdr->out_offset);
}

/*
 * The page references of a batch (GxPageRef: buffer, line pointers, flags,
 * visibility bitmap) live in the batch, in mapped host memory.  A copy per
 * thread costs every warp a dozen reads over PCIe per page, which compete
 * with the page reads themselves; instead the block keeps two references in
 * shared memory (GxPageRefs), reads each one once, word by word, and reads
 * the next page's reference while it reads the current page.
 */
typedef struct GxPageRefs
{
	GxPageRef	ref[2];
} GxPageRefs;

#define GX_PAGE_REF_WORDS ((int) (sizeof(GxPageRef) / sizeof(uint32_t)))

/* Copy one page reference into shared memory, one word per thread */
__device__ __forceinline__ void
gx_copy_page_ref(GxPageRef *dst, const GxPageRef *src)
{
	if (threadIdx.x < GX_PAGE_REF_WORDS)
		((uint32_t *) dst)[threadIdx.x] = __ldcs((const unsigned int *) src + threadIdx.x);
}

/*
 * Before a block's page loop (pages first, first + gridDim.x, ...): its
 * first reference into slot 0.  All threads of the block must call it; it
 * ends with a barrier.
 */
__device__ __forceinline__ void
gx_page_refs_start(GxPageRefs *r, const GxPageRef *refs, uint32_t first, uint32_t npages)
{
	if (first < npages)
		gx_copy_page_ref(&r->ref[0], &refs[first]);
	__syncthreads();
}

/*
 * Step i of the page loop, page p: load the page whose reference is in
 * slot i & 1 into shared memory and the next page's reference into the
 * other slot; returns the current reference.  All threads must call it;
 * it ends with a barrier.  The loop must end each step with a barrier
 * (the page buffer and the other slot are reused).
 */
__device__ __forceinline__ const GxPageRef *
gx_page_refs_load(GxPageRefs *r, uint32_t i, uint4 *page, const unsigned char *pages,
				  const GxPageRef *refs, uint32_t p, uint32_t npages)
{
	const GxPageRef *cur = &r->ref[i & 1];

	if (p + gridDim.x < npages)
		gx_copy_page_ref(&r->ref[(i + 1) & 1], &refs[p + gridDim.x]);
	gx_load_page(page, pages + (size_t) cur->buf_id * GX_BLCKSZ);
	return cur;
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
