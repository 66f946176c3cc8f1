/*-------------------------------------------------------------------------
 * rtree.cu
 *		GPU node scans of gpuext_gist (issue #9; Beier et al., "GiST scan
 *		acceleration using coprocessors"): a batched, level-synchronous
 *		R-tree walk over a tree mirror held in a task's device memory.
 *
 * GX_REQ_RTREE_LOAD / GX_REQ_RTREE_FILL copy parts of the mirror (layout
 * in cuda/gx_rtree.h: header, per-node counts, node b's entries at
 * nodes + b * node_stride) from the DMA arena into the task's memory.
 *
 * GX_REQ_RTREE_SEARCH walks every level in one request: the launcher
 * enqueues, per level, the level kernel and (inner levels) the grouping of
 * the next level's visits by node, all on one stream; visit counts stay in
 * device memory and each kernel reads them there, so the host never waits
 * between levels.  The level kernel takes tiles of GX_RT_TILE consecutive
 * visits (grid-stride over the tiles of the current count); for every run
 * of visits on one node it loads the node's entries and the run's queries
 * into shared memory (and, with filter keys, whether each entry passes
 * them), then its threads evaluate the (query, entry) test matrix, one
 * cell per thread per step, with the tests of cuda/gx_rtree.h (the CPU
 * engine's, to the bit: -fmad=false).  Hits are appended with one atomic
 * per block and step (warp counts added in shared memory) to the next level's
 * visits or, at the leaves, to the result pairs in the batch's output area
 * (mapped host memory).  The grouping is a counting sort by node: a count
 * per node, an exclusive scan in one block, a scatter.  Overflow: visits
 * beyond visit_cap stop the walk (flag), pairs beyond the output's room are
 * counted and not written; the backend splits the batch or asks again.
 *
 * Written for sm_90; compiled here, not yet run on a GPU (the CPU engine,
 * src/cpu_engine.c, runs the same request with the same tests and is what
 * the tests without a GPU exercise).
 *
 * IDENTIFICATION
 *		cuda/rtree.cu
 *-------------------------------------------------------------------------
 */
#include "gx_kernels.h"
#include "gx_rtree.h"

#define GX_RT_TILE		64			/* visits per block and step */
#define GX_RT_THREADS	256
#define GX_RT_GRID_MAX	1024		/* blocks of the grid-stride kernels */
#define GX_RT_SCAN_THREADS 1024

/* the walk's counters, in the request's device memory */
typedef struct RtCounters
{
	unsigned long long nnext;	/* next level's visits appended (may exceed cap) */
	unsigned long long npairs;	/* result pairs appended (may exceed the room) */
	uint32_t	ncur;			/* visits of the current level */
	uint32_t	flags;			/* GX_RT_OVERFLOW_VISITS, GX_RT_CORRUPT */
	uint32_t	levels;
} RtCounters;

/*
 * Append one hit per set lane of the block; returns this lane's slot (for
 * lanes without a hit, a value not to be used).  The warps add their counts
 * in shared memory and one thread reserves the block's slots with a single
 * atomic on the global counter that every block of the grid appends to
 * (one atomic per warp and step before).  Measured on the H100 in session
 * 8: a search of 100 K windows on 10 M boxes took 11.9 ms of device time
 * against 12.2-12.9 before, so that counter was not the bottleneck (the
 * abort-flag reads are the suspect: gx_rt_block_stopped).  All threads of the block
 * must call it (the callers' loop bounds are the same for the whole block).
 */
__device__ __forceinline__ static unsigned long long
gx_rt_block_append(bool hit, unsigned long long *count)
{
	__shared__ uint32_t s_hits;
	__shared__ unsigned long long s_base;
	unsigned	mask = __ballot_sync(0xffffffffu, hit);
	int			lane = threadIdx.x & 31;
	uint32_t	warp_first = 0;

	if (threadIdx.x == 0)
		s_hits = 0;
	__syncthreads();
	if (lane == 0 && mask != 0)
		warp_first = atomicAdd(&s_hits, (uint32_t) __popc(mask));
	warp_first = __shfl_sync(0xffffffffu, warp_first, 0);
	__syncthreads();
	if (threadIdx.x == 0 && s_hits != 0)
		s_base = atomicAdd(count, (unsigned long long) s_hits);
	__syncthreads();
	return s_base + warp_first + (unsigned long long) __popc(mask & ((1u << lane) - 1));
}

/* set in the walk's counters (never in the output) once the service asked to stop */
#define RT_ABORTED		0x80000000u

/*
 * Has the service asked the request to stop, or has the walk stopped?  One
 * answer for the whole block (thread 0 reads, the others follow): kernels
 * with barriers must not let some threads leave early.  The service's
 * abort flag lives in the batch, in mapped host memory, and a PCIe read of
 * it is a round trip of about a microsecond that the reads of other blocks
 * queue behind: with every block of every kernel reading it (up to 1024
 * blocks, 4 kernels a level) a search cost 5-15 ms of device time however
 * few its probes (the node-size sweep of session 8, proportional to the
 * blocks launched).  So only block 0 of each kernel reads it, and passes
 * an abort on to the others through the counters in device memory: a
 * cancel stops the walk at the next kernel at the latest.
 */
__device__ __forceinline__ static bool
gx_rt_block_stopped(const GxBatch *batch, RtCounters *ctr)
{
	__shared__ bool stop;

	if (threadIdx.x == 0)
	{
		stop = *(volatile const uint32_t *) &ctr->flags != 0;
		if (!stop && blockIdx.x == 0 &&
			*(volatile const uint32_t *) &batch->abort_flag != 0)
		{
			atomicOr(&ctr->flags, RT_ABORTED);
			stop = true;
		}
	}
	__syncthreads();
	return stop;
}

/*
 * Check the request against the task's mirror and queue every query on the
 * root.  A mismatch is a malformed request (kernel_error).
 */
__global__ void
rt_init_kernel(GxBatch *batch, const GxRtMirror *m, const GxRtSearch *s,
			   RtCounters *ctr, GxRtVisit *cur)
{
	uint32_t	i = blockIdx.x * blockDim.x + threadIdx.x;
	bool		ok = m->magic == GX_RT_MIRROR_MAGIC && m->nblocks == s->nblocks &&
		m->root == s->root && m->root_level == s->root_level &&
		m->node_stride <= GX_RT_MAX_STRIDE;

	if (i == 0)
	{
		ctr->nnext = 0;
		ctr->npairs = 0;
		ctr->ncur = s->nqueries;
		ctr->flags = ok ? 0 : GX_RT_CORRUPT;
		ctr->levels = 0;
		if (!ok)
			batch->kernel_error = GX_KERR_BAD_PROGRAM;
	}
	if (!ok)
		return;
	for (; i < s->nqueries; i += gridDim.x * blockDim.x)
	{
		cur[i].node = s->root;
		cur[i].query = i;
	}
}

/*
 * One level: the current visits (grouped by node) against their nodes'
 * entries; hits become next-level visits (inner) or pairs (leaf).
 */
__global__ void __launch_bounds__(GX_RT_THREADS)
rt_level_kernel(const GxBatch *batch, const GxRtMirror *__restrict__ m,
				const GxRtSearch *__restrict__ s, RtCounters *ctr,
				const GxRtVisit *__restrict__ cur, GxRtVisit *next,
				GxRtPair *pairs, unsigned long long room, bool leaf)
{
	__shared__ GxRtEntry s_entries[GX_RT_MAX_STRIDE];
	__shared__ GxRtQuery s_queries[GX_RT_TILE];
	__shared__ uint32_t s_qid[GX_RT_TILE];
	__shared__ bool s_pass[GX_RT_MAX_STRIDE];
	const uint16_t *counts = gx_rt_mirror_counts(m);
	const GxRtEntry *nodes = gx_rt_mirror_nodes(m);
	const GxRtQuery *queries = gx_rt_search_queries(s);
	const GxRtQuery *filter = gx_rt_search_filter(s);
	uint32_t	nvisits = ctr->ncur;
	uint32_t	ntiles = (nvisits + GX_RT_TILE - 1) / GX_RT_TILE;

	if (gx_rt_block_stopped(batch, ctr))
		return;
	for (uint32_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x)
	{
		uint32_t	first = tile * GX_RT_TILE;
		uint32_t	last = min(first + GX_RT_TILE, nvisits);
		uint32_t	run = first;

		while (run < last)
		{
			uint32_t	node = cur[run].node;
			uint32_t	run_end = run;
			uint32_t	nq;
			uint32_t	n;
			uint32_t	cells;

			while (run_end < last && cur[run_end].node == node)
				run_end++;
			nq = run_end - run;
			/* the same answer for every thread: the block stays together */
			if (!gx_rt_visit_ok(m, counts, node, leaf))
			{
				if (threadIdx.x == 0)
					atomicOr(&ctr->flags, (uint32_t) GX_RT_CORRUPT);
				run = run_end;
				continue;
			}
			n = counts[node] & GX_RT_COUNT_MASK;

			/* the node, the run's queries and the filter keys' verdicts */
			for (uint32_t i = threadIdx.x; i < n; i += blockDim.x)
				s_entries[i] = nodes[(size_t) node * m->node_stride + i];
			for (uint32_t i = threadIdx.x; i < nq; i += blockDim.x)
			{
				s_qid[i] = cur[run + i].query;
				s_queries[i] = queries[s_qid[i]];
			}
			__syncthreads();
			for (uint32_t i = threadIdx.x; i < n; i += blockDim.x)
				s_pass[i] = s->nfilterkeys == 0 ||
					gx_rt_entry_passes(&s_entries[i], leaf, filter, (int) s->nfilter,
									   (int) s->nfilterkeys);
			__syncthreads();

			/* the test matrix, nq x n; the loop bound is the same for the
			 * whole block, so every lane reaches every ballot */
			cells = nq * n;
			for (uint32_t base = 0; base < cells; base += blockDim.x)
			{
				uint32_t	c = base + threadIdx.x;
				bool		hit = false;
				uint32_t	qi = 0;
				uint32_t	ei = 0;
				unsigned long long slot;

				if (c < cells)
				{
					qi = c / n;
					ei = c % n;
					hit = s_pass[ei] && gx_rt_test(&s_entries[ei], &s_queries[qi], leaf);
				}
				slot = gx_rt_block_append(hit, leaf ? &ctr->npairs : &ctr->nnext);
				if (!hit)
					continue;
				if (leaf && slot < room)
				{
					GxRtPair	p;

					p.query = s_qid[qi];
					p.blk = s_entries[ei].blk;
					p.off = s_entries[ei].off;
					p.pad = 0;
					pairs[slot] = p;
				}
				else if (!leaf && slot < s->visit_cap)
				{
					GxRtVisit	v;

					v.node = s_entries[ei].blk;
					v.query = s_qid[qi];
					next[slot] = v;
				}
			}
			__syncthreads();
			run = run_end;
		}
	}
}

/* grouping, step 1: visits per node (per_node zeroed before) */
__global__ void
rt_group_count_kernel(const GxBatch *batch, const GxRtSearch *s, RtCounters *ctr,
					  const GxRtVisit *next, uint32_t *per_node)
{
	unsigned long long n = ctr->nnext;

	if (gx_rt_block_stopped(batch, ctr) || n > s->visit_cap)
		return;
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
	{
		uint32_t	node = next[i].node;

		if (node < s->nblocks)
			atomicAdd(&per_node[node], 1u);
		else
			atomicOr(&ctr->flags, (uint32_t) GX_RT_CORRUPT);
	}
}

/*
 * grouping, step 2 (one block): overflow check, then per_node becomes the
 * exclusive prefix sum (each node's first slot); the next level becomes
 * the current one
 */
__global__ void __launch_bounds__(GX_RT_SCAN_THREADS)
rt_group_scan_kernel(const GxBatch *batch, const GxRtSearch *s, RtCounters *ctr,
					 uint32_t *per_node)
{
	__shared__ uint32_t sums[GX_RT_SCAN_THREADS];
	uint32_t	nblocks = s->nblocks;
	uint32_t	chunk = (nblocks + blockDim.x - 1) / blockDim.x;
	uint32_t	lo = min(threadIdx.x * chunk, nblocks);
	uint32_t	hi = min(lo + chunk, nblocks);
	uint32_t	sum = 0;

	if (gx_rt_block_stopped(batch, ctr))
		return;
	if (ctr->nnext > s->visit_cap)
	{
		if (threadIdx.x == 0)
			ctr->flags |= GX_RT_OVERFLOW_VISITS;
		return;
	}
	for (uint32_t i = lo; i < hi; i++)
		sum += per_node[i];
	sums[threadIdx.x] = sum;
	__syncthreads();
	/* inclusive scan of the chunk sums (Hillis-Steele) */
	for (uint32_t d = 1; d < blockDim.x; d <<= 1)
	{
		uint32_t	add = threadIdx.x >= d ? sums[threadIdx.x - d] : 0;

		__syncthreads();
		sums[threadIdx.x] += add;
		__syncthreads();
	}
	sum = threadIdx.x > 0 ? sums[threadIdx.x - 1] : 0;
	for (uint32_t i = lo; i < hi; i++)
	{
		uint32_t	c = per_node[i];

		per_node[i] = sum;
		sum += c;
	}
	if (threadIdx.x == 0)
	{
		ctr->ncur = (uint32_t) ctr->nnext;
		ctr->nnext = 0;
		ctr->levels++;
	}
}

/* grouping, step 3: each visit to its node's next slot */
__global__ void
rt_group_scatter_kernel(const GxBatch *batch, RtCounters *ctr, const GxRtSearch *s,
						const GxRtVisit *next, GxRtVisit *cur, uint32_t *per_node)
{
	uint32_t	n = ctr->ncur;

	if (gx_rt_block_stopped(batch, ctr))
		return;
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
	{
		GxRtVisit	v = next[i];

		if (v.node < s->nblocks)	/* (the count kernel flagged the others) */
			cur[atomicAdd(&per_node[v.node], 1u)] = v;
	}
}

/* the walk's outcome into the batch's output header */
__global__ void
rt_finish_kernel(GxBatch *batch, GxRtSearchOut *out, const RtCounters *ctr)
{
	out->npairs = ctr->npairs;
	out->flags = ctr->flags & ~RT_ABORTED;
	out->levels = ctr->levels + 1;
}

/* Blocks of a grid-stride kernel over up to n items of 'per' each */
static uint32_t
rt_grid(uint64_t n, uint32_t per)
{
	uint64_t	g = (n + per - 1) / per;

	return (uint32_t) (g == 0 ? 1 : (g > GX_RT_GRID_MAX ? GX_RT_GRID_MAX : g));
}

/*
 * GX_REQ_RTREE_LOAD and GX_REQ_RTREE_FILL: copy the batch's output area
 * (a part of the mirror) to the task's memory at offset arg.  The service
 * has checked that the part fits the task.
 */
cudaError_t
gx_launch_rtree_fill(const GxLaunch *l, cudaStream_t s)
{
	const GxBatch *b = l->batch_host;
	void	   *task = l->kind == GX_REQ_RTREE_LOAD ? l->scratch_dev : l->task_dev;

	if (task == NULL)
		return cudaErrorInvalidValue;
	if (b->out_len == 0)
		return cudaSuccess;
	return cudaMemcpyAsync((char *) task + b->arg, (const char *) b + b->out_offset,
						   b->out_len, cudaMemcpyHostToDevice, s);
}

/*
 * GX_REQ_RTREE_SEARCH: the program area to device memory, then every
 * level's kernels on the stream (the levels are known from the request:
 * root_level + 1), then the outcome into the output header.
 */
cudaError_t
gx_launch_rtree_search(const GxLaunch *l, cudaStream_t st)
{
	const GxBatch *b = l->batch_host;
	const GxRtSearch *sh = (const GxRtSearch *) ((const char *) b + b->program_offset);
	const GxRtMirror *m = (const GxRtMirror *) l->task_dev;
	char	   *scratch = (char *) l->scratch_dev;
	uint64_t	prog_bytes = (b->program_len + 255) & ~(uint64_t) 255;
	uint64_t	visit_bytes;
	GxRtSearch *s;
	RtCounters *ctr;
	GxRtVisit  *cur;
	GxRtVisit  *next;
	uint32_t   *per_node;
	char	   *out_dev = (char *) l->batch_dev + b->out_offset;
	GxRtPair   *pairs = (GxRtPair *) (out_dev + sizeof(GxRtSearchOut));
	unsigned long long room = gx_rt_search_out_room(b->out_len);
	cudaError_t rc;

	if (m == NULL || b->out_len < sizeof(GxRtSearchOut) ||
		!gx_rt_search_ok(sh, b->program_len) ||
		l->scratch_bytes < gx_rt_search_scratch_bytes(sh, b->program_len))
		return cudaErrorInvalidValue;
	visit_bytes = ((uint64_t) sh->visit_cap * sizeof(GxRtVisit) + 255) & ~(uint64_t) 255;
	s = (GxRtSearch *) scratch;
	ctr = (RtCounters *) (scratch + prog_bytes);
	cur = (GxRtVisit *) (scratch + prog_bytes + GX_RT_SCRATCH_COUNTERS);
	next = (GxRtVisit *) ((char *) cur + visit_bytes);
	per_node = (uint32_t *) ((char *) next + visit_bytes);

	if ((rc = cudaMemcpyAsync(s, sh, b->program_len, cudaMemcpyHostToDevice, st)) != cudaSuccess)
		return rc;
	rt_init_kernel<<<rt_grid(sh->nqueries, 256), 256, 0, st>>>(l->batch_dev, m, s, ctr, cur);
	for (int level = (int) sh->root_level; level >= 0; level--)
	{
		bool		leaf = (level == 0);

		rt_level_kernel<<<rt_grid(sh->visit_cap, GX_RT_TILE), GX_RT_THREADS, 0, st>>>(
			l->batch_dev, m, s, ctr, cur, next, pairs, room, leaf);
		if (leaf)
			break;
		if ((rc = cudaMemsetAsync(per_node, 0, (size_t) sh->nblocks * sizeof(uint32_t), st)) != cudaSuccess)
			return rc;
		rt_group_count_kernel<<<rt_grid(sh->visit_cap, 256), 256, 0, st>>>(
			l->batch_dev, s, ctr, next, per_node);
		rt_group_scan_kernel<<<1, GX_RT_SCAN_THREADS, 0, st>>>(l->batch_dev, s, ctr, per_node);
		rt_group_scatter_kernel<<<rt_grid(sh->visit_cap, 256), 256, 0, st>>>(
			l->batch_dev, ctr, s, next, cur, per_node);
	}
	rt_finish_kernel<<<1, 1, 0, st>>>(l->batch_dev, (GxRtSearchOut *) out_dev, ctr);
	return cudaGetLastError();
}
