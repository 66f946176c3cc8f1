/*-------------------------------------------------------------------------
 * rtree.cu
 *		GPU node scans of gpuext_gist (issue #9; Beier et al., "GiST scan
 *		acceleration using coprocessors"): one level of a batched,
 *		level-synchronous R-tree walk.
 *
 * The device mirror holds the tree as an array of nodes indexed by block
 * number: node b's entries at nodes + b * node_stride (the page's entry
 * array, cuda/gx_rtree.h), its entry count in counts[b].  A level's work is
 * a list of visits (node, query) sorted by node.  Each block takes a tile
 * of GX_RT_TILE consecutive visits; for every run of visits on one node it
 * loads the node's entries and the run's queries into shared memory, then
 * its threads evaluate the (query, entry) test matrix, one cell per thread
 * per step, with the tests of cuda/gx_rtree.h (the CPU engine's, to the
 * bit: -fmad=false).  Hits are appended with one atomic per warp (ballot,
 * popcount, shuffle of the base) to the next level's visits (inner level)
 * or to the result pairs (leaf level).  Appends beyond out_cap are counted
 * but not written: the caller sees *out_count > out_cap and retries with a
 * larger buffer (size first, then run).
 *
 * Written for sm_90; compiled here, not yet run on a GPU (the CPU engine,
 * src/gxgist_batch.c, runs the same walk and is what the tests exercise).
 *
 * IDENTIFICATION
 *		cuda/rtree.cu
 *-------------------------------------------------------------------------
 */
#include <cuda_runtime.h>

#include "gx_rtree.h"

#define GX_RT_TILE		64			/* visits per block */
#define GX_RT_THREADS	256
#define GX_RT_MAX_NODE	204			/* GXG_MAX_NODE_SIZE with 8 kB pages */

/* append one hit per set lane of the warp; returns this lane's slot */
__device__ __forceinline__ static uint32_t
gx_rt_warp_append(bool hit, uint32_t *count)
{
	unsigned	mask = __ballot_sync(0xffffffffu, hit);
	int			lane = threadIdx.x & 31;
	uint32_t	base = 0;

	if (lane == 0 && mask != 0)
		base = atomicAdd(count, (uint32_t) __popc(mask));
	base = __shfl_sync(0xffffffffu, base, 0);
	return base + (uint32_t) __popc(mask & ((1u << lane) - 1));
}

__global__ void __launch_bounds__(GX_RT_THREADS)
gx_rtree_level_kernel(const GxRtEntry *__restrict__ nodes,
					  const uint16_t *__restrict__ counts, uint32_t node_stride,
					  const GxRtQuery *__restrict__ queries,
					  const GxRtVisit *__restrict__ visits, uint32_t nvisits,
					  bool leaf, void *out, uint32_t out_cap, uint32_t *out_count)
{
	__shared__ GxRtEntry s_entries[GX_RT_MAX_NODE];
	__shared__ GxRtQuery s_queries[GX_RT_TILE];
	__shared__ uint32_t s_qid[GX_RT_TILE];
	uint32_t	first = blockIdx.x * GX_RT_TILE;
	uint32_t	last = min(first + GX_RT_TILE, nvisits);
	uint32_t	run = first;

	while (run < last)
	{
		uint32_t	node = visits[run].node;
		uint32_t	run_end = run;
		uint32_t	nq;
		uint32_t	n;
		uint32_t	cells;

		while (run_end < last && visits[run_end].node == node)
			run_end++;
		nq = run_end - run;
		n = min((uint32_t) counts[node], (uint32_t) GX_RT_MAX_NODE);

		/* the node and the run's queries into shared memory */
		for (uint32_t i = threadIdx.x; i < n; i += blockDim.x)
			s_entries[i] = nodes[(size_t) node * node_stride + i];
		for (uint32_t i = threadIdx.x; i < nq; i += blockDim.x)
		{
			s_qid[i] = visits[run + i].query;
			s_queries[i] = queries[s_qid[i]];
		}
		__syncthreads();

		/* the test matrix, nq x n; the loop bound is the same for the whole
		 * block, so every lane reaches every ballot */
		cells = nq * n;
		for (uint32_t base = 0; base < cells; base += blockDim.x)
		{
			uint32_t	c = base + threadIdx.x;
			bool		hit = false;
			uint32_t	qi = 0;
			uint32_t	ei = 0;
			uint32_t	slot;

			if (c < cells)
			{
				qi = c / n;
				ei = c % n;
				hit = gx_rt_test(&s_entries[ei], &s_queries[qi], leaf);
			}
			slot = gx_rt_warp_append(hit, out_count);
			if (hit && slot < out_cap)
			{
				if (leaf)
				{
					GxRtPair	p;

					p.query = s_qid[qi];
					p.blk = s_entries[ei].blk;
					p.off = s_entries[ei].off;
					p.pad = 0;
					((GxRtPair *) out)[slot] = p;
				}
				else
				{
					GxRtVisit	v;

					v.node = s_entries[ei].blk;
					v.query = s_qid[qi];
					((GxRtVisit *) out)[slot] = v;
				}
			}
		}
		__syncthreads();
		run = run_end;
	}
}

/*
 * Launch one level on stream (a cudaStream_t).  *out_count must be zeroed
 * by the caller (device memory) before the launch.
 */
extern "C" int
gx_rtree_level_launch(const GxRtEntry *nodes, const uint16_t *counts,
					  uint32_t node_stride, const GxRtQuery *queries,
					  const GxRtVisit *visits, uint32_t nvisits,
					  bool leaf, void *out, uint32_t out_cap,
					  uint32_t *out_count, void *stream)
{
	uint32_t	blocks = (nvisits + GX_RT_TILE - 1) / GX_RT_TILE;

	if (blocks == 0)
		return (int) cudaSuccess;
	gx_rtree_level_kernel<<<blocks, GX_RT_THREADS, 0, (cudaStream_t) stream>>>(
		nodes, counts, node_stride, queries, visits, nvisits, leaf,
		out, out_cap, out_count);
	return (int) cudaGetLastError();
}
