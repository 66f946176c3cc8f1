/*-------------------------------------------------------------------------
 * gx_agg_device.cuh
 *		Device-only parts of the GROUP BY kernels shared by agg.cu (scan)
 *		and join.cu (fused join): the block-private group table in shared
 *		memory (Sitaridi & Ross), its set-up and its merge into the global
 *		table.  The per-row semantics stay in gx_agg.h, shared with the
 *		CPU engine.
 *
 * IDENTIFICATION
 *		cuda/gx_agg_device.cuh
 *-------------------------------------------------------------------------
 */
#ifndef GX_AGG_DEVICE_CUH
#define GX_AGG_DEVICE_CUH

#include "gx_kernels.h"
#include "gx_device.cuh"
#include "gx_agg.h"

/* Bytes of one copy of a block-private table of 'capacity' entries. */
GX_FUNC size_t
gx_agg_local_stride(uint32_t capacity, uint32_t entry_size)
{
	return GX_AGG_TABLE_HEADER + (size_t) capacity * entry_size;
}

/*
 * Bytes of dynamic shared memory a block needs: one page, then the copies
 * of the private table ('arg': gx_agg_local_arg).
 */
static inline size_t
gx_agg_smem_bytes(uint64_t arg, uint32_t entry_size)
{
	uint32_t	capacity = gx_agg_local_capacity(arg);

	if (capacity == 0)
		return GX_BLCKSZ;
	return GX_BLCKSZ + gx_agg_local_copies(arg) * gx_agg_local_stride(capacity, entry_size);
}

/*
 * The dynamic shared memory of an aggregation launch of 'kernel' over the
 * batch of 'l' (its arg: the private tables), in *smem; lets the kernel
 * have that much where it is over the default 48 kB.
 */
static inline cudaError_t
gx_agg_launch_smem(const GxLaunch *l, const void *kernel, size_t *smem)
{
	const GxBatch *b = l->batch_host;
	const GxProgram *prog = (const GxProgram *) ((const char *) b + b->program_offset);
	const GxAggSpec *spec = (const GxAggSpec *) gx_program_spec(prog);

	*smem = gx_agg_smem_bytes(b->arg, spec->entry_size);
	if (*smem <= 48 * 1024)
		return cudaSuccess;
	return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) *smem);
}

/* Copy c of the block's private tables, in shared memory after the page buffer. */
__device__ __forceinline__ GxAggTable *
gx_agg_local_copy(uint4 *smem, const GxAggSpec *spec, uint64_t arg, uint32_t c)
{
	unsigned char *base = (unsigned char *) (smem + GX_BLCKSZ / 16);

	return (GxAggTable *) (base + c * gx_agg_local_stride(gx_agg_local_capacity(arg),
														  spec->entry_size));
}

/*
 * Set up the block's empty private tables ('arg': gx_agg_local_arg) and
 * return the copy this thread's warp updates; NULL when there are none.
 * All threads of the block must call it; it ends with a barrier.
 */
__device__ __forceinline__ GxAggTable *
gx_agg_local_init(uint4 *smem, const GxAggSpec *spec, uint64_t arg)
{
	uint32_t	capacity = gx_agg_local_capacity(arg);
	uint32_t	copies = gx_agg_local_copies(arg);

	if (capacity == 0)
		return NULL;
	for (uint32_t c = 0; c < copies; c++)
	{
		GxAggTable *local = gx_agg_local_copy(smem, spec, arg, c);

		for (uint32_t i = threadIdx.x; i < capacity; i += blockDim.x)
			*(uint32_t *) gx_agg_entry(local, spec, i) = GX_ENTRY_EMPTY;
		if (threadIdx.x == 0)
		{
			local->capacity = capacity;
			local->ngroups = 0;
			local->max_groups = capacity / 2;
			local->full = 0;
			local->recheck = 0;
		}
	}
	__syncthreads();
	return gx_agg_local_copy(smem, spec, arg, (threadIdx.x / 32) % copies);
}

/*
 * Merge the block's partial groups, every copy, into the global table:
 * one global update per group, copy and block.  All threads of the block
 * must call it.
 */
__device__ __forceinline__ void
gx_agg_local_merge(uint4 *smem, uint64_t arg, GxAggTable *global, const GxAggSpec *spec)
{
	uint32_t	capacity = gx_agg_local_capacity(arg);
	uint32_t	copies = gx_agg_local_copies(arg);

	if (capacity == 0)
		return;
	__syncthreads();
	for (uint32_t i = threadIdx.x; i < copies * capacity; i += blockDim.x)
	{
		GxAggTable *local = gx_agg_local_copy(smem, spec, arg, i / capacity);
		unsigned char *e = gx_agg_entry(local, spec, i % capacity);
		int64_t		slot;

		if (*(uint32_t *) e != GX_ENTRY_READY)
			continue;
		slot = gx_agg_find_or_insert(global, spec, e + spec->key_offset, *(uint32_t *) (e + 4));
		if (slot >= 0)
			gx_agg_merge(spec, gx_agg_entry(global, spec, slot), e);
	}
}

#endif							/* GX_AGG_DEVICE_CUH */
