/*-------------------------------------------------------------------------
 * gx_kernels.h
 *		Host-side launchers of the device kernels, one per request kind.
 *
 * Each launcher enqueues its kernels on the given stream and returns the
 * launch error, if any; it never synchronises.  Used by gpu_runtime.cu.
 *
 * IDENTIFICATION
 *		cuda/gx_kernels.h
 *-------------------------------------------------------------------------
 */
#ifndef GX_KERNELS_H
#define GX_KERNELS_H

#include <cuda_runtime.h>
#include "gx_runtime.h"

extern cudaError_t gx_launch_page_count(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_sleep(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_stall(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_scan(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_task_create(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_agg(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_task_fetch(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_join_build(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_join(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_join_agg(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_rtree_fill(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_rtree_search(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_ptree_load(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_ptree_upload(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_ptree_lookup(const GxLaunch *l, cudaStream_t s);
extern cudaError_t gx_launch_ptree_merge(const GxLaunch *l, cudaStream_t s);

/*
 * Copy a batch's program area (the program and the spec after it) to the
 * launch's device scratch memory, where the kernels read it.
 */
static inline cudaError_t
gx_copy_program(const GxLaunch *l, cudaStream_t s)
{
	const GxBatch *b = l->batch_host;

	if (l->scratch_bytes < b->program_len)
		return cudaErrorInvalidValue;
	return cudaMemcpyAsync(l->scratch_dev, (const char *) b + b->program_offset,
						   b->program_len, cudaMemcpyHostToDevice, s);
}

/* Blocks of a launch over a batch's pages: one a page, at most 65535. */
static inline uint32_t
gx_page_grid(uint32_t npages)
{
	return npages < 65535 ? npages : 65535;
}

/* Warps of a block that each take one column cache page at a time. */
#define GX_CACHED_PAGES_PER_BLOCK 8

/*
 * Blocks of an aggregating launch over a batch with column cache pages
 * (host view 'b'): one a heap page, and one per GX_CACHED_PAGES_PER_BLOCK
 * cached pages, whose rows each warp of a block walks on its own.
 */
static inline uint32_t
gx_cached_page_grid(const GxBatch *b)
{
	const GxPageRef *refs = gx_batch_pages(b);
	uint32_t	ncached = 0;

	for (uint32_t i = 0; i < b->npages; i++)
		if (refs[i].flags & GX_PAGE_CACHED)
			ncached++;
	return gx_page_grid(b->npages - ncached +
						(ncached + GX_CACHED_PAGES_PER_BLOCK - 1) / GX_CACHED_PAGES_PER_BLOCK);
}

#endif							/* GX_KERNELS_H */
