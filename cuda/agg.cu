/*-------------------------------------------------------------------------
 * agg.cu
 *		GROUP BY kernels: aggregate batches of heap pages into a group
 *		table in device memory, fused with the scan's quals, and copy the
 *		groups out.
 *
 * Few groups (Sitaridi & Ross): each block first aggregates into a
 * private table in shared memory, so the many rows of a hot group update
 * fast shared-memory atomics; at the end of the batch the block merges its
 * partials into the global table (one global update per group and
 * block).  Rows whose group does not fit in the private table, and every
 * row when there are many groups, go straight to the global table.
 *
 * IDENTIFICATION
 *		cuda/agg.cu
 *-------------------------------------------------------------------------
 */
#include "gx_kernels.h"
#include "gx_agg_device.cuh"

#define AGG_THREADS 256

/* Initialise a table header; the entries were zeroed (all EMPTY). */
__global__ void
agg_table_init_kernel(GxAggTable *t, uint64_t capacity, uint64_t max_groups)
{
	t->capacity = capacity;
	t->ngroups = 0;
	t->max_groups = max_groups;
	t->full = 0;
	t->recheck = 0;
	t->rows = 0;
}

/* One row's verdict 'rc' into the group table; counts it in *my_rows. */
__device__ __forceinline__ void
agg_row(int rc, GxAggTable *local, GxAggTable *global, const GxAggSpec *spec, GxDatum *regs,
		unsigned char *keybuf, uint64_t *my_rows)
{
	unsigned char *entry;

	if (rc == GX_ROW_FAIL)
		return;
	if (rc == GX_ROW_RECHECK)
	{
		global->recheck = 1;
		return;
	}
	entry = gx_agg_group_entry(local, global, spec, regs, keybuf);
	if (entry == NULL)
	{
		/* a key the table cannot hold, or the global table full */
		global->recheck = 1;
		return;
	}
	if (gx_agg_accumulate(spec, entry, regs) != 0)
		global->recheck = 1;
	(*my_rows)++;
}

/*
 * CACHED: the batch has column cache pages (a separate instantiation, so
 * that batches without them run the kernel as it was).  Their rows are in
 * device memory, one page a warp; then the heap pages, one a block
 * (gx_batch_rows).
 */
template <bool CACHED>
__global__ void __launch_bounds__(AGG_THREADS)
agg_kernel(GxBatch *batch, const unsigned char *pages, const GxProgram *__restrict__ prog,
		   GxAggTable *global, uint64_t local_arg, const GxColCache *__restrict__ cc)
{
	extern __shared__ uint4 smem[];
	uint4	   *page = smem;
	const GxAggSpec *spec = (const GxAggSpec *) gx_program_spec(prog);
	GxAggTable *local;
	GxDatum		regs[GX_MAX_REGS];
	unsigned char keybuf[GX_AGG_MAX_KEYS * (8 + GX_KEY_TEXT_MAX)];
	uint64_t	my_rows = 0;

	if (!gx_program_ok(prog, batch->program_len))
	{
		if (blockIdx.x == 0 && threadIdx.x == 0)
			batch->kernel_error = GX_KERR_BAD_PROGRAM;
		return;
	}
	local = gx_agg_local_init(smem, spec, local_arg);

	gx_batch_rows<CACHED>(batch, cc, page, pages,
		[&](uint64_t row) {
			agg_row(gx_scan_cached_row(prog, cc, row, regs), local, global, spec, regs, keybuf,
					&my_rows);
		},
		[&](const GxPageRef *ref, uint32_t off) {
			agg_row(gx_scan_tuple(prog, (const unsigned char *) page, ref, off, regs), local,
					global, spec, regs, keybuf, &my_rows);
		});

	if (my_rows)
		atomicAdd((unsigned long long *) &global->rows, my_rows);
	gx_agg_local_merge(smem, local_arg, global, spec);
}

/*
 * Copy the ready entries of slots [first, first + n) to 'out' (host
 * memory, mapped), compacted.  Each block takes a tile of FETCH_TILE
 * slots, numbers its ready entries with a block-wide count, reserves a
 * contiguous run of the output with one atomic, and writes the run with
 * consecutive 16-byte stores from all its threads, so the writes over the
 * link are coalesced.
 */
#define FETCH_TILE 256

__global__ void __launch_bounds__(FETCH_TILE)
agg_fetch_kernel(const GxAggTable *t, uint32_t entry_size, uint64_t first, uint64_t n,
				 unsigned char *out, unsigned long long *count)
{
	__shared__ uint32_t ready_slot[FETCH_TILE];
	__shared__ uint32_t nready;
	__shared__ unsigned long long base;
	uint32_t	words = entry_size / 16;
	const unsigned char *entries = (const unsigned char *) t + GX_AGG_TABLE_HEADER;

	for (uint64_t tile = blockIdx.x * (uint64_t) FETCH_TILE; tile < n;
		 tile += (uint64_t) gridDim.x * FETCH_TILE)
	{
		uint64_t	i = tile + threadIdx.x;

		if (threadIdx.x == 0)
			nready = 0;
		__syncthreads();
		if (i < n && *(const uint32_t *) (entries + (first + i) * entry_size) == GX_ENTRY_READY)
			ready_slot[atomicAdd(&nready, 1u)] = (uint32_t) i;
		__syncthreads();
		if (threadIdx.x == 0)
			base = nready ? atomicAdd(count, (unsigned long long) nready) : 0;
		__syncthreads();
		for (uint32_t w = threadIdx.x; w < nready * words; w += blockDim.x)
		{
			uint32_t	e = w / words;
			const uint4 *src = (const uint4 *) (entries + (first + ready_slot[e]) * entry_size);

			((uint4 *) out)[(base + e) * words + w % words] = src[w % words];
		}
		__syncthreads();
	}
}

/*
 * GX_REQ_TASK_CREATE: zero the table (scratch_dev, the task's memory) and
 * write its header; arg = capacity, arg2 = most groups before "full".
 */
cudaError_t
gx_launch_task_create(const GxLaunch *l, cudaStream_t s)
{
	cudaError_t rc = cudaMemsetAsync(l->scratch_dev, 0, l->scratch_bytes, s);

	if (rc != cudaSuccess)
		return rc;
	agg_table_init_kernel<<<1, 1, 0, s>>>((GxAggTable *) l->scratch_dev,
										  l->batch_host->arg, l->batch_host->arg2);
	return cudaGetLastError();
}

/*
 * GX_REQ_AGG: copy program and spec to device memory (the first part of
 * scratch), then aggregate the batch into the task's table (task_dev).
 * arg = the block-private tables (gx_agg_local_arg; 0: none).
 */
cudaError_t
gx_launch_agg(const GxLaunch *l, cudaStream_t s)
{
	const GxBatch *b = l->batch_host;
	size_t		smem;
	uint32_t	grid;
	cudaError_t rc;

	if (b->npages == 0)
		return cudaSuccess;
	if (l->task_dev == NULL)
		return cudaErrorInvalidValue;
	if ((rc = gx_copy_program(l, s)) != cudaSuccess ||
		(rc = gx_agg_launch_smem(l, l->cache_dev ? (const void *) agg_kernel<true> :
								 (const void *) agg_kernel<false>, &smem)) != cudaSuccess)
		return rc;
	grid = l->cache_dev ? gx_cached_page_grid(b) : gx_page_grid(b->npages);
	if (l->cache_dev)
		agg_kernel<true><<<grid, AGG_THREADS, smem, s>>>(l->batch_dev, l->pages_dev,
														 (const GxProgram *) l->scratch_dev,
														 (GxAggTable *) l->task_dev, b->arg,
														 (const GxColCache *) l->cache_dev);
	else
		agg_kernel<false><<<grid, AGG_THREADS, smem, s>>>(l->batch_dev, l->pages_dev,
														  (const GxProgram *) l->scratch_dev,
														  (GxAggTable *) l->task_dev, b->arg,
														  NULL);
	return cudaGetLastError();
}

/*
 * GX_REQ_TASK_FETCH: arg = first slot, arg2 = slots, program_len = entry
 * size (this kind has no program).  The ready entries are written,
 * compacted, straight into the batch's output area in the mapped arena
 * (16-byte stores, so only occupied entries cross the link), after a copy
 * of the table header; their count goes to batch->result.
 */
cudaError_t
gx_launch_task_fetch(const GxLaunch *l, cudaStream_t s)
{
	const GxBatch *b = l->batch_host;
	uint32_t	entry_size = b->program_len;
	unsigned long long *count = (unsigned long long *) l->scratch_dev;
	char	   *out_host = (char *) b + b->out_offset;
	unsigned char *out_dev = (unsigned char *) l->batch_dev + b->out_offset;
	cudaError_t rc;

	if (l->task_dev == NULL || entry_size == 0 || entry_size % 16 != 0 ||
		b->out_offset % 16 != 0)
		return cudaErrorInvalidValue;
	if ((rc = cudaMemsetAsync(count, 0, sizeof(*count), s)) != cudaSuccess)
		return rc;
	if (b->arg2 > 0)
	{
		uint64_t	blocks = (b->arg2 + 255) / 256;

		agg_fetch_kernel<<<blocks < 65535 ? blocks : 65535, FETCH_TILE, 0, s>>>(
			(const GxAggTable *) l->task_dev, entry_size, b->arg, b->arg2,
			out_dev + GX_AGG_TABLE_HEADER, count);
		if ((rc = cudaGetLastError()) != cudaSuccess)
			return rc;
	}
	if ((rc = cudaMemcpyAsync(out_host, l->task_dev, GX_AGG_TABLE_HEADER,
							  cudaMemcpyDeviceToHost, s)) != cudaSuccess)
		return rc;
	return cudaMemcpyAsync((void *) &l->batch_host->result, count, sizeof(*count),
						   cudaMemcpyDeviceToHost, s);
}
