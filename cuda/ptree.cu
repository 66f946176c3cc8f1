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
 * Compiled for sm_90; written without a GPU to run on: not yet run.
 *
 * IDENTIFICATION
 *		cuda/ptree.cu
 *-------------------------------------------------------------------------
 */
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
