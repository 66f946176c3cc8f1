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

/* Bytes of dynamic shared memory a block needs: one page, the private table. */
static inline size_t
gx_agg_smem_bytes(uint32_t local_capacity, uint32_t entry_size)
{
	if (local_capacity == 0)
		return GX_BLCKSZ;
	return GX_BLCKSZ + GX_AGG_TABLE_HEADER + (size_t) local_capacity * entry_size;
}

/*
 * The dynamic shared memory of an aggregation launch of 'kernel' over the
 * batch of 'l' (its arg: the private table's entries), in *smem; lets the
 * kernel have that much where it is over the default 48 kB.
 */
static inline cudaError_t
gx_agg_launch_smem(const GxLaunch *l, const void *kernel, size_t *smem)
{
	const GxBatch *b = l->batch_host;
	const GxProgram *prog = (const GxProgram *) ((const char *) b + b->program_offset);
	const GxAggSpec *spec = (const GxAggSpec *) gx_program_spec(prog);

	*smem = gx_agg_smem_bytes((uint32_t) b->arg, spec->entry_size);
	if (*smem <= 48 * 1024)
		return cudaSuccess;
	return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) *smem);
}

/*
 * Set up an empty private table of local_capacity entries (0: none, and
 * NULL is returned) in shared memory after the page buffer.  All threads
 * of the block must call it; it ends with a barrier.
 */
__device__ __forceinline__ GxAggTable *
gx_agg_local_init(uint4 *smem, const GxAggSpec *spec, uint32_t local_capacity)
{
	GxAggTable *local = (GxAggTable *) (smem + GX_BLCKSZ / 16);

	if (local_capacity == 0)
		return NULL;
	for (uint32_t i = threadIdx.x; i < local_capacity; i += blockDim.x)
		*(uint32_t *) gx_agg_entry(local, spec, i) = GX_ENTRY_EMPTY;
	if (threadIdx.x == 0)
	{
		local->capacity = local_capacity;
		local->ngroups = 0;
		local->max_groups = local_capacity / 2;
		local->full = 0;
		local->recheck = 0;
	}
	__syncthreads();
	return local;
}

/*
 * Merge the block's partial groups into the global table: one global
 * update per group and block.  All threads of the block must call it.
 */
__device__ __forceinline__ void
gx_agg_local_merge(GxAggTable *local, GxAggTable *global, const GxAggSpec *spec)
{
	if (local == NULL)
		return;
	__syncthreads();
	for (uint32_t i = threadIdx.x; i < local->capacity; i += blockDim.x)
	{
		unsigned char *e = gx_agg_entry(local, spec, i);
		int64_t		slot;

		if (*(uint32_t *) e != GX_ENTRY_READY)
			continue;
		slot = gx_agg_find_or_insert(global, spec, e + spec->key_offset, *(uint32_t *) (e + 4));
		if (slot >= 0)
			gx_agg_merge(spec, gx_agg_entry(global, spec, slot), e);
	}
}

#endif							/* GX_AGG_DEVICE_CUH */
