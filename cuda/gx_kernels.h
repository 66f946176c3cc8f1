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

#endif							/* GX_KERNELS_H */
