/*-------------------------------------------------------------------------
 * join.cu
 *		GpuJoin kernels: build the inner hash tables in device memory, and
 *		probe them with the rows of a batch of heap pages read in place.
 *
 * Build (GX_REQ_JOIN_BUILD): the backend sends one block with every
 * depth's table laid out (gx_join.h): rows with their hashes and key words,
 * slots zeroed.  It is copied into the task's device memory, then one
 * thread per inner row inserts it with gx_join_insert: a compare-and-swap
 * claims an empty slot, or pushes the row on the duplicate chain of the
 * row that holds the same key (Kaldewey et al.'s open addressing).
 *
 * Probe (GX_REQ_JOIN): as the scan kernel, one block per page at a time,
 * the page copied to shared memory with coalesced loads over PCIe, one
 * thread per line pointer running gx_join_tuple (program, then a probe of
 * every depth); pass and recheck bitmaps by warp ballots, the first match
 * of each depth written per tuple.  Pages of the outer relation that its
 * column cache holds are not read at all: their rows come from the cache's
 * copy in device memory (the CACHED instantiations; gpuext.cache_gpu, not
 * yet run on a GPU).
 *
 * Run on an H100 under make test (test/gpu/sql/gpu_join.sql), 2026-11-22;
 * the block-private tables of the fused aggregation came after that run.
 *
 * IDENTIFICATION
 *		cuda/join.cu
 *-------------------------------------------------------------------------
 */
#include "gx_kernels.h"
#include "gx_agg_device.cuh"
#include "gx_join.h"

#define JOIN_THREADS 256

/* Insert every row of every depth; rows are numbered across depths. */
__global__ void __launch_bounds__(JOIN_THREADS)
join_build_kernel(GxBatch *batch, GxJoinTables *ts, uint64_t total_rows)
{
	uint64_t	i = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t	stride = (uint64_t) gridDim.x * blockDim.x;

	for (; i < total_rows; i += stride)
	{
		uint64_t	r = i;

		for (uint32_t d = 0; d < ts->ndepths; d++)
		{
			GxJoinTable *t = gx_join_table(ts, d);

			if (r < t->nrows)
			{
				if (gx_join_insert(t, (uint32_t) r) != 0)
					batch->kernel_error = GX_KERR_BAD_PROGRAM;
				break;
			}
			r -= t->nrows;
		}
	}
}

/*
 * Launch GX_REQ_JOIN_BUILD: the task's memory (scratch) receives the
 * table block from the batch's output area, then the build kernel runs.
 * arg = total inner rows of all depths.
 */
cudaError_t
gx_launch_join_build(const GxLaunch *l, cudaStream_t s)
{
	const GxBatch *b = l->batch_host;
	uint64_t	rows = b->arg;
	uint32_t	grid;
	cudaError_t rc;

	if (l->scratch_bytes < b->out_len || b->out_len < sizeof(GxJoinTables))
		return cudaErrorInvalidValue;
	rc = cudaMemcpyAsync(l->scratch_dev, (const char *) b + b->out_offset, b->out_len,
						 cudaMemcpyHostToDevice, s);
	if (rc != cudaSuccess || rows == 0)
		return rc;
	grid = (uint32_t) ((rows + JOIN_THREADS - 1) / JOIN_THREADS);
	if (grid > 65535)
		grid = 65535;
	join_build_kernel<<<grid, JOIN_THREADS, 0, s>>>(l->batch_dev, (GxJoinTables *) l->scratch_dev,
													rows);
	return cudaGetLastError();
}

/*
 * CACHED: the batch has column cache pages of the outer relation (a
 * separate instantiation, so that batches without them run the kernel as
 * it was): their rows are read from the cache's device copy, one thread
 * per row, with the same probe (gx_join_cached_row); the first match of
 * each depth is written under the row's line pointer, as for a heap page.
 */
template <bool CACHED>
__global__ void __launch_bounds__(JOIN_THREADS)
join_probe_kernel(GxBatch *batch, const unsigned char *pages, const GxProgram *__restrict__ prog,
				  GxJoinTables *ts, const GxColCache *__restrict__ cc)
{
	__shared__ uint4 page[GX_BLCKSZ / 16];
	const GxJoinSpec *spec = (const GxJoinSpec *) gx_program_spec(prog);
	const GxPageRef *refs = gx_batch_pages(batch);
	uint32_t	npages = batch->npages;
	uint32_t	stride = gx_join_out_per_page(spec->ndepths);
	int			warp = threadIdx.x >> 5;
	GxDatum		regs[GX_MAX_REGS];
	uint32_t	match[GX_JOIN_MAX_DEPTH];

	if (!gx_program_ok(prog, batch->program_len) || spec->ndepths == 0 ||
		spec->ndepths > GX_JOIN_MAX_DEPTH || ts->ndepths != spec->ndepths)
	{
		if (blockIdx.x == 0 && threadIdx.x == 0)
			batch->kernel_error = GX_KERR_BAD_PROGRAM;
		return;
	}
	for (uint32_t p = blockIdx.x; p < npages; p += gridDim.x)
	{
		GxPageRef	ref = refs[p];
		GxJoinPageOut *out = (GxJoinPageOut *) ((char *) gx_batch_out(batch) + (size_t) p * stride);

		if (CACHED && (ref.flags & GX_PAGE_CACHED))
		{
			/* the service checked buf_id against the cache's pages */
			if (cc != NULL)
				gx_cached_page_rows<JOIN_THREADS>(cc, &ref, out->pass, out->recheck,
												  [&](uint64_t row, uint32_t off) {
													  int rc = gx_join_cached_row(prog, spec, ts, cc, row,
																				  regs, match);

													  if (rc == GX_ROW_PASS)
													  {
														  uint32_t *m = gx_join_matches(out, spec->ndepths, off);

														  for (uint32_t d = 0; d < spec->ndepths; d++)
															  m[d] = match[d];
													  }
													  return rc;
												  });
			else if (threadIdx.x == 0)
				batch->kernel_error = GX_KERR_NO_TASK;
			continue;
		}
		gx_load_page(page, pages + (size_t) ref.buf_id * GX_BLCKSZ);
		for (uint32_t base = 0; base < GX_BITMAP_WORDS * 32; base += JOIN_THREADS)
		{
			uint32_t	off = base + threadIdx.x + 1;
			int			rc = GX_ROW_FAIL;
			uint32_t	word = (base >> 5) + warp;

			if (off <= ref.nline)
			{
				rc = gx_join_tuple(prog, spec, ts, (const unsigned char *) page, &ref, off,
								   regs, match);
				if (rc == GX_ROW_PASS)
				{
					uint32_t   *m = gx_join_matches(out, spec->ndepths, off);

					for (uint32_t d = 0; d < spec->ndepths; d++)
						m[d] = match[d];
				}
			}
			gx_store_row_bits(out->pass, out->recheck, word, rc);
		}
		__syncthreads();		/* the page buffer is reused */
	}
}

/* Launch GX_REQ_JOIN: copy the program (and spec) to device memory, then probe. */
cudaError_t
gx_launch_join(const GxLaunch *l, cudaStream_t s)
{
	const GxBatch *b = l->batch_host;
	uint32_t	grid;
	cudaError_t rc;

	if (b->npages == 0)
		return cudaSuccess;
	if (l->task_dev == NULL)
		return cudaErrorInvalidValue;
	rc = gx_copy_program(l, s);
	if (rc != cudaSuccess)
		return rc;
	grid = gx_page_grid(b->npages);
	if (l->cache_dev)
		join_probe_kernel<true><<<grid, JOIN_THREADS, 0, s>>>(l->batch_dev, l->pages_dev,
															  (const GxProgram *) l->scratch_dev,
															  (GxJoinTables *) l->task_dev,
															  (const GxColCache *) l->cache_dev);
	else
		join_probe_kernel<false><<<grid, JOIN_THREADS, 0, s>>>(l->batch_dev, l->pages_dev,
															   (const GxProgram *) l->scratch_dev,
															   (GxJoinTables *) l->task_dev, NULL);
	return cudaGetLastError();
}

/* One joined row's verdict 'rc': a recheck flags the table, a pass counts. */
__device__ __forceinline__ void
count_row(int rc, GxAggTable *t, uint64_t *my_rows)
{
	if (rc == GX_ROW_RECHECK)
		t->recheck = 1;
	else if (rc == GX_ROW_PASS)
		(*my_rows)++;
}

/*
 * GpuAgg fused with a join (GX_REQ_AGG with arg2 naming the join tables'
 * task): each tuple runs the program, probes every depth and updates its
 * group once per joined row it makes (the inner group keys loaded per
 * joined row), with the same per-row code as the CPU engine
 * (gx_join_agg_tuple).  With few groups (arg: the block-private tables,
 * gx_agg_local_arg) the updates go to private tables in shared memory
 * merged into the global one at the end, as in agg.cu: without them every
 * row of a one-group query (SSB Q1.x) updated the same global entry.
 * CACHED: the batch has column cache pages, whose rows are read from the
 * cache's device copy (gx_join_agg_cached_row), one page a warp, then
 * the heap pages one a block (gx_batch_rows, as agg.cu).
 */
template <bool CACHED>
__global__ void __launch_bounds__(JOIN_THREADS)
join_agg_kernel(GxBatch *batch, const unsigned char *pages, const GxProgram *__restrict__ prog,
				GxAggTable *t, GxJoinTables *ts, uint64_t local_arg, const GxColCache *__restrict__ cc)
{
	extern __shared__ uint4 smem[];
	uint4	   *page = smem;
	GxAggTable *local;
	const GxAggSpec *aspec = (const GxAggSpec *) gx_program_spec(prog);
	const GxJoinSpec *jspec = gx_join_spec_after_agg(aspec);
	GxDatum		regs[GX_MAX_REGS];
	unsigned char keybuf[GX_AGG_MAX_KEYS * (8 + GX_KEY_TEXT_MAX)];
	uint32_t	match[GX_JOIN_MAX_DEPTH];
	uint64_t	my_rows = 0;

	if (!gx_program_ok(prog, batch->program_len) || jspec->ndepths == 0 ||
		jspec->ndepths > GX_JOIN_MAX_DEPTH || ts->ndepths != jspec->ndepths)
	{
		if (blockIdx.x == 0 && threadIdx.x == 0)
			batch->kernel_error = GX_KERR_BAD_PROGRAM;
		return;
	}
	local = gx_agg_local_init(smem, aspec, local_arg);
	gx_batch_rows<CACHED>(batch, cc, page, pages,
		[&](uint64_t row) {
			count_row(gx_join_agg_cached_row(prog, aspec, jspec, local, t, ts, cc, row, regs,
											 keybuf, match), t, &my_rows);
		},
		[&](const GxPageRef *ref, uint32_t off) {
			count_row(gx_join_agg_tuple(prog, aspec, jspec, local, t, ts,
										(const unsigned char *) page, ref, off, regs, keybuf,
										match), t, &my_rows);
		});
	if (my_rows)
		atomicAdd((unsigned long long *) &t->rows, (unsigned long long) my_rows);
	gx_agg_local_merge(smem, local_arg, t, aspec);
}

/* Launch a fused join aggregation: program and both specs to device memory, then run. */
cudaError_t
gx_launch_join_agg(const GxLaunch *l, cudaStream_t s)
{
	const GxBatch *b = l->batch_host;
	size_t		smem;
	uint32_t	grid;
	cudaError_t rc;

	if (b->npages == 0)
		return cudaSuccess;
	if (l->task_dev == NULL || l->task2_dev == NULL)
		return cudaErrorInvalidValue;
	if ((rc = gx_copy_program(l, s)) != cudaSuccess ||
		(rc = gx_agg_launch_smem(l, l->cache_dev ? (const void *) join_agg_kernel<true> :
								 (const void *) join_agg_kernel<false>, &smem)) != cudaSuccess)
		return rc;
	grid = l->cache_dev ? gx_cached_page_grid(b) : gx_page_grid(b->npages);
	if (l->cache_dev)
		join_agg_kernel<true><<<grid, JOIN_THREADS, smem, s>>>(l->batch_dev, l->pages_dev,
															   (const GxProgram *) l->scratch_dev,
															   (GxAggTable *) l->task_dev,
															   (GxJoinTables *) l->task2_dev, b->arg,
															   (const GxColCache *) l->cache_dev);
	else
		join_agg_kernel<false><<<grid, JOIN_THREADS, smem, s>>>(l->batch_dev, l->pages_dev,
																(const GxProgram *) l->scratch_dev,
																(GxAggTable *) l->task_dev,
																(GxJoinTables *) l->task2_dev, b->arg,
																NULL);
	return cudaGetLastError();
}
