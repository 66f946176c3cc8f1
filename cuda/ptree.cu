/*-------------------------------------------------------------------------
 * ptree.cu
 *		The GPU side of the gpuext_ptree index: device copies of an
 *		index's prefix-tree mirror, and batched lookups in them.
 *
 * GX_REQ_PTREE_LOAD makes a task holding the part of a mirror that
 * lookups read (gx_ptree_lookup_bytes): its header is checked on the host
 * view of the batch, then the first part is copied from the DMA arena to
 * the task's device memory.  GX_REQ_PTREE_UPLOAD copies more of it, at an
 * offset, for mirrors larger than one batch of the arena.
 *
 * GX_REQ_PTREE_LOOKUP: the probes (offsets and key bytes, gx_ptree.h) are
 * copied to device scratch memory, one thread per probe (grid-stride) runs
 * the same lookup as the CPU engine (gx_ptree_probe: three dependent reads
 * of the KISS levels, then a binary search of the slot for keys longer
 * than 32 bits), and the results are copied back to the batch's output.
 * A kernel this short does not watch the abort flag: a cancelled lookup
 * finishes, and the service reports it cancelled.
 *
 * GX_REQ_PTREE_MERGE plans the merge of a delta into main (gx_ptree.h):
 * the entries are copied to scratch memory, sorted by (key, TID) with two
 * stable CUB radix sorts (by TID, then by key), the first of each
 * (key, TID) is flagged (gx_ptree_merge_keep), an exclusive prefix sum of
 * the flags gives each kept entry its place, and one thread per entry
 * writes it with its rank in the task's mirror (gx_ptree_merge_emit, a
 * binary search of the device copy's keys); the output goes back whole.
 *
 * Compiled for sm_90; written without a GPU to run on: not yet run.
 *
 * IDENTIFICATION
 *		cuda/ptree.cu
 *-------------------------------------------------------------------------
 */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "gx_kernels.h"
#include "gx_ptree.h"

#define PTREE_THREADS 256

__global__ void __launch_bounds__(PTREE_THREADS)
ptree_lookup_kernel(GxBatch *batch, const GxPtreeMirror *__restrict__ mirror,
					const uint32_t *__restrict__ area, uint64_t len, uint32_t nprobes,
					int64_t *__restrict__ out)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nprobes;
		 i += gridDim.x * blockDim.x)
		if (!gx_ptree_probe(mirror, area, len, nprobes, i, out))
			batch->kernel_error = GX_KERR_BAD_PROGRAM;
}

/*
 * Launch GX_REQ_PTREE_LOAD: the task's memory (scratch, the size of the
 * whole copy) receives the first out_len bytes from the batch's output
 * area, after the mirror header there has been checked against the copy's
 * size.  A bad header is reported as a malformed batch.
 */
cudaError_t
gx_launch_ptree_load(const GxLaunch *l, cudaStream_t s)
{
	const GxBatch *b = l->batch_host;
	const GxPtreeMirror *m = (const GxPtreeMirror *) ((const char *) b + b->out_offset);

	if (b->out_len < sizeof(GxPtreeMirror) || b->out_len > l->scratch_bytes ||
		!gx_ptree_mirror_ok(m, l->scratch_bytes))
	{
		l->batch_host->kernel_error = GX_KERR_BAD_PROGRAM;
		return cudaSuccess;
	}
	return cudaMemcpyAsync(l->scratch_dev, m, b->out_len, cudaMemcpyHostToDevice, s);
}

/*
 * Launch GX_REQ_PTREE_UPLOAD: out_len bytes of the batch's output area to
 * the task's memory at offset arg, which must hold them.
 */
cudaError_t
gx_launch_ptree_upload(const GxLaunch *l, cudaStream_t s)
{
	const GxBatch *b = l->batch_host;

	if (l->task_dev == NULL || b->arg > l->task_bytes || b->out_len > l->task_bytes - b->arg)
	{
		l->batch_host->kernel_error = GX_KERR_BAD_PROGRAM;
		return cudaSuccess;
	}
	return cudaMemcpyAsync((char *) l->task_dev + b->arg, (const char *) b + b->out_offset,
						   b->out_len, cudaMemcpyHostToDevice, s);
}

/*
 * Launch GX_REQ_PTREE_LOOKUP of arg probes (the batch's program area) in
 * the task's mirror: probes to scratch, the kernel, results back to the
 * batch's output area.
 */
cudaError_t
gx_launch_ptree_lookup(const GxLaunch *l, cudaStream_t s)
{
	const GxBatch *b = l->batch_host;
	uint64_t	n = b->arg;
	uint64_t	out_at = gx_ptree_lookup_out_at(b->program_len);
	uint64_t	blocks;
	int64_t    *out_dev;
	cudaError_t rc;

	if (n == 0)
		return cudaSuccess;
	if (l->task_dev == NULL || n > UINT32_MAX - 1 ||
		!gx_ptree_probes_ok((uint32_t) n, b->program_len) ||
		b->out_len < n * sizeof(int64_t) ||
		l->scratch_bytes < gx_ptree_lookup_scratch(b->program_len, n))
	{
		l->batch_host->kernel_error = GX_KERR_BAD_PROGRAM;
		return cudaSuccess;
	}
	rc = gx_copy_program(l, s);
	if (rc != cudaSuccess)
		return rc;
	out_dev = (int64_t *) ((char *) l->scratch_dev + out_at);
	blocks = (n + PTREE_THREADS - 1) / PTREE_THREADS;
	if (blocks > 65535)
		blocks = 65535;
	ptree_lookup_kernel<<<(uint32_t) blocks, PTREE_THREADS, 0, s>>>(
		l->batch_dev, (const GxPtreeMirror *) l->task_dev, (const uint32_t *) l->scratch_dev,
		b->program_len, (uint32_t) n, out_dev);
	if ((rc = cudaGetLastError()) != cudaSuccess)
		return rc;
	return cudaMemcpyAsync((char *) l->batch_host + b->out_offset, out_dev,
						   n * sizeof(int64_t), cudaMemcpyDeviceToHost, s);
}

/* keep flags of the sorted entries (flags[n] = 0 ends the scan) */
__global__ void __launch_bounds__(PTREE_THREADS)
ptree_merge_flag_kernel(const uint64_t *__restrict__ keys, const uint64_t *__restrict__ tids,
						uint32_t n, uint32_t *__restrict__ flags)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i <= n;
		 i += gridDim.x * blockDim.x)
		flags[i] = i < n ? (uint32_t) gx_ptree_merge_keep(keys, tids, i) : 0;
}

/* kept entries to their places, with their ranks; out[0] = how many */
__global__ void __launch_bounds__(PTREE_THREADS)
ptree_merge_emit_kernel(const GxPtreeMirror *__restrict__ mirror,
						const uint64_t *__restrict__ keys, const uint64_t *__restrict__ tids,
						const uint32_t *__restrict__ flags, const uint32_t *__restrict__ pos,
						uint32_t n, uint64_t *__restrict__ out)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += gridDim.x * blockDim.x)
	{
		if (i == 0)
			out[0] = pos[n];
		if (flags[i])
			gx_ptree_merge_emit(mirror, keys, tids, i, pos[i], n, out);
	}
}

/*
 * Launch GX_REQ_PTREE_MERGE of arg entries (the batch's program area)
 * against the task's mirror: the scratch parts of gx_ptree_merge_scratch,
 * the two sorts, the flags, the scan, the output, copied back to the
 * batch's output area.  Temporary storage the sorts or the scan need
 * beyond GX_PTREE_MERGE_TEMP is reported as a malformed batch (the
 * backend then plans on the CPU engine, as gpuext.cpu_fallback says).
 */
cudaError_t
gx_launch_ptree_merge(const GxLaunch *l, cudaStream_t s)
{
	const GxBatch *b = l->batch_host;
	uint64_t	n = b->arg;
	uint64_t	in_part = gx_ptree_merge_part(gx_ptree_merge_in_size(n));
	uint64_t	flag_part = gx_ptree_merge_part((n + 1) * sizeof(uint32_t));
	char	   *at = (char *) l->scratch_dev;
	uint64_t   *keys,
			   *tids,
			   *alt;
	uint32_t   *flags,
			   *pos;
	uint64_t   *out;
	void	   *temp;
	size_t		temp_bytes,
				need = 0,
				q;
	uint64_t	blocks;
	cudaError_t rc;

	if (n == 0 || n >= UINT32_MAX || l->task_dev == NULL ||
		b->program_len < gx_ptree_merge_in_size(n) ||
		b->out_len < gx_ptree_merge_out_size(n) ||
		l->scratch_bytes < gx_ptree_merge_scratch(n))
	{
		l->batch_host->kernel_error = GX_KERR_BAD_PROGRAM;
		return cudaSuccess;
	}
	keys = (uint64_t *) at;
	tids = keys + n;
	alt = (uint64_t *) (at + in_part);
	flags = (uint32_t *) (at + 2 * in_part);
	pos = (uint32_t *) (at + 2 * in_part + flag_part);
	out = (uint64_t *) (at + 2 * in_part + 2 * flag_part);
	temp = at + 2 * in_part + 2 * flag_part + gx_ptree_merge_part(gx_ptree_merge_out_size(n));
	temp_bytes = (size_t) (l->scratch_bytes - ((char *) temp - at));

	cub::DoubleBuffer<uint64_t> dkeys(keys, alt);
	cub::DoubleBuffer<uint64_t> dtids(tids, alt + n);

	/* the temporary storage of each step (a query: no work is done) */
	if ((rc = cub::DeviceRadixSort::SortPairs(NULL, q, dtids, dkeys, (int) n, 0, 48, s)) != cudaSuccess)
		return rc;
	need = q > need ? q : need;
	if ((rc = cub::DeviceRadixSort::SortPairs(NULL, q, dkeys, dtids, (int) n, 0, 64, s)) != cudaSuccess)
		return rc;
	need = q > need ? q : need;
	if ((rc = cub::DeviceScan::ExclusiveSum(NULL, q, flags, pos, (int) n + 1, s)) != cudaSuccess)
		return rc;
	need = q > need ? q : need;
	if (need > temp_bytes)
	{
		l->batch_host->kernel_error = GX_KERR_BAD_PROGRAM;
		return cudaSuccess;
	}

	if ((rc = gx_copy_program(l, s)) != cudaSuccess)
		return rc;
	/* (key, TID) order: stable sorts by the TID's 48 bits, then by key */
	q = temp_bytes;
	if ((rc = cub::DeviceRadixSort::SortPairs(temp, q, dtids, dkeys, (int) n, 0, 48, s)) != cudaSuccess)
		return rc;
	q = temp_bytes;
	if ((rc = cub::DeviceRadixSort::SortPairs(temp, q, dkeys, dtids, (int) n, 0, 64, s)) != cudaSuccess)
		return rc;
	blocks = (n + PTREE_THREADS) / PTREE_THREADS;
	if (blocks > 65535)
		blocks = 65535;
	ptree_merge_flag_kernel<<<(uint32_t) blocks, PTREE_THREADS, 0, s>>>(
		dkeys.Current(), dtids.Current(), (uint32_t) n, flags);
	if ((rc = cudaGetLastError()) != cudaSuccess)
		return rc;
	q = temp_bytes;
	if ((rc = cub::DeviceScan::ExclusiveSum(temp, q, flags, pos, (int) n + 1, s)) != cudaSuccess)
		return rc;
	ptree_merge_emit_kernel<<<(uint32_t) blocks, PTREE_THREADS, 0, s>>>(
		(const GxPtreeMirror *) l->task_dev, dkeys.Current(), dtids.Current(), flags, pos,
		(uint32_t) n, out);
	if ((rc = cudaGetLastError()) != cudaSuccess)
		return rc;
	return cudaMemcpyAsync((char *) l->batch_host + b->out_offset, out,
						   gx_ptree_merge_out_size(n), cudaMemcpyDeviceToHost, s);
}
