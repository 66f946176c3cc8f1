/*-------------------------------------------------------------------------
 * scan.cu
 *		The GpuScan kernel: evaluate a device program over every visible
 *		tuple of a batch of heap pages read in place from shared_buffers.
 *
 * One block per page at a time (grid-stride over the batch): the page is
 * copied to shared memory with coalesced 16-byte loads over PCIe, then each
 * thread runs the program on its line pointers with the same per-row code
 * as the CPU engine (gx_scan_tuple).  Pass and recheck bitmaps are built
 * with warp ballots: warp w of round k owns bitmap word 8k + w.
 *
 * IDENTIFICATION
 *		cuda/scan.cu
 *-------------------------------------------------------------------------
 */
#include "gx_kernels.h"
#include "gx_device.cuh"
#include "gx_program.h"
#include "gx_colcache.h"

#define SCAN_THREADS 256

/*
 * CACHED: the batch has column cache pages (a separate instantiation, so
 * that batches without them run the kernel as it was).
 */
template <bool CACHED>
__global__ void __launch_bounds__(SCAN_THREADS)
scan_kernel(GxBatch *batch, const unsigned char *pages, const GxProgram *__restrict__ prog,
			const GxColCache *__restrict__ cc)
{
	__shared__ uint4 page[GX_BLCKSZ / 16];
	const GxPageRef *refs = gx_batch_pages(batch);
	GxScanPageOut *outs = (GxScanPageOut *) gx_batch_out(batch);
	uint32_t	npages = batch->npages;
	int			warp = threadIdx.x >> 5;
	GxDatum		regs[GX_MAX_REGS];

	if (!gx_program_ok(prog, batch->program_len))
	{
		if (blockIdx.x == 0 && threadIdx.x == 0)
			batch->kernel_error = GX_KERR_BAD_PROGRAM;
		return;
	}
	for (uint32_t p = blockIdx.x; p < npages; p += gridDim.x)
	{
		GxPageRef	ref = refs[p];

		if (CACHED && (ref.flags & GX_PAGE_CACHED))
		{
			/* the service checked buf_id against the cache's pages */
			if (cc != NULL)
				gx_cached_page_rows<SCAN_THREADS>(cc, &ref, outs[p].pass, outs[p].recheck,
												  [&](uint64_t row, uint32_t off) {
													  return gx_scan_cached_row(prog, cc, row, regs);
												  });
			else if (threadIdx.x == 0)
				batch->kernel_error = GX_KERR_NO_TASK;
			continue;
		}
		gx_load_page(page, pages + (size_t) ref.buf_id * GX_BLCKSZ);
		for (uint32_t base = 0; base < GX_BITMAP_WORDS * 32; base += SCAN_THREADS)
		{
			uint32_t	off = base + threadIdx.x + 1;
			int			rc = GX_ROW_FAIL;
			uint32_t	word = (base >> 5) + warp;

			if (off <= ref.nline)
				rc = gx_scan_tuple(prog, (const unsigned char *) page, &ref, off, regs);
			gx_store_row_bits(outs[p].pass, outs[p].recheck, word, rc);
		}
		__syncthreads();		/* the page buffer is reused */
	}
}

/* Launch GX_REQ_SCAN: copy the program to device memory, then scan. */
cudaError_t
gx_launch_scan(const GxLaunch *l, cudaStream_t s)
{
	const GxBatch *b = l->batch_host;
	uint32_t	grid;
	cudaError_t rc;

	if (b->npages == 0)
		return cudaSuccess;
	rc = gx_copy_program(l, s);
	if (rc != cudaSuccess)
		return rc;
	grid = gx_page_grid(b->npages);
	if (l->cache_dev)
		scan_kernel<true><<<grid, SCAN_THREADS, 0, s>>>(l->batch_dev, l->pages_dev,
														(const GxProgram *) l->scratch_dev,
														(const GxColCache *) l->cache_dev);
	else
		scan_kernel<false><<<grid, SCAN_THREADS, 0, s>>>(l->batch_dev, l->pages_dev,
														 (const GxProgram *) l->scratch_dev,
														 NULL);
	return cudaGetLastError();
}
