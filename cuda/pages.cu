/*-------------------------------------------------------------------------
 * pages.cu
 *		Kernels that read heap pages in place: per-page tuple counts
 *		(the first work through the service) and the debug sleep kernel.
 *
 * IDENTIFICATION
 *		cuda/pages.cu
 *-------------------------------------------------------------------------
 */
#include "gx_kernels.h"
#include "gx_device.cuh"

#define PAGE_COUNT_THREADS 256

/*
 * One block per page: the page is copied to shared memory with coalesced
 * loads, then every thread counts a share of its line pointers with the
 * same per-tuple step as the CPU engine (gx_count_tuple).
 */
__global__ void
page_count_kernel(GxBatch *batch, const unsigned char *pages)
{
	__shared__ uint4 page[GX_BLCKSZ / 16];
	__shared__ uint32_t nnormal;
	__shared__ uint32_t nvisible;
	const GxPageRef *refs = gx_batch_pages(batch);
	GxPageCount *out = (GxPageCount *) gx_batch_out(batch);

	for (uint32_t p = blockIdx.x; p < batch->npages; p += gridDim.x)
	{
		GxPageRef	ref = refs[p];
		uint32_t	my_normal = 0;
		uint32_t	my_visible = 0;

		if (threadIdx.x == 0)
			nnormal = nvisible = 0;
		gx_load_page(page, pages + (size_t) ref.buf_id * GX_BLCKSZ);

		for (uint32_t off = threadIdx.x + 1; off <= ref.nline; off += blockDim.x)
			gx_count_tuple((const unsigned char *) page, &ref, off,
						   &my_normal, &my_visible);
		if (my_normal)
			atomicAdd(&nnormal, my_normal);
		if (my_visible)
			atomicAdd(&nvisible, my_visible);
		__syncthreads();
		if (threadIdx.x == 0)
		{
			out[p].nnormal = nnormal;
			out[p].nvisible = nvisible;
		}
		__syncthreads();
	}
}

/* Spin until 'ns' nanoseconds passed or the service raised the abort flag. */
__global__ void
sleep_kernel(GxBatch *batch, uint64_t ns)
{
	volatile uint32_t *abort_flag = &batch->abort_flag;
	uint64_t	start = gx_globaltimer();

	while (gx_globaltimer() - start < ns)
	{
		if (*abort_flag)
			break;
		__nanosleep(100000);
	}
}

/* Launch GX_REQ_PAGE_COUNT over a batch. */
cudaError_t
gx_launch_page_count(const GxLaunch *l, cudaStream_t s)
{
	uint32_t	npages = l->batch_host->npages;
	uint32_t	grid = gx_page_grid(npages);

	if (npages == 0)
		return cudaSuccess;
	page_count_kernel<<<grid, PAGE_COUNT_THREADS, 0, s>>>(l->batch_dev, l->pages_dev);
	return cudaGetLastError();
}

/* Launch GX_REQ_SLEEP: occupies one SM for batch->arg nanoseconds. */
cudaError_t
gx_launch_sleep(const GxLaunch *l, cudaStream_t s)
{
	sleep_kernel<<<1, 1, 0, s>>>(l->batch_dev, l->batch_host->arg);
	return cudaGetLastError();
}

/* A stalled transfer: blocks the stream until the request is cancelled. */
cudaError_t
gx_launch_stall(const GxLaunch *l, cudaStream_t s)
{
	sleep_kernel<<<1, 1, 0, s>>>(l->batch_dev, 3600ULL * 1000000000ULL);
	return cudaGetLastError();
}
