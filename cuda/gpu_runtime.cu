/*-------------------------------------------------------------------------
 * gpu_runtime.cu
 *		CUDA contexts, streams, registered host memory and launches of the
 *		GPU service (the implementation of gx_runtime.h).
 *
 * Only the service process links these calls in at run time.  Every CUDA
 * error is returned to the caller with its message; nothing here exits,
 * prints or throws.
 *
 * IDENTIFICATION
 *		cuda/gpu_runtime.cu
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

#include "gx_kernels.h"

#define GX_MAX_REGIONS 4

/* one launch slot: its own stream and timing events */
typedef struct LaunchSlot
{
	int			busy;
	cudaStream_t stream;
	cudaEvent_t start;
	cudaEvent_t stop;
} LaunchSlot;

typedef struct DeviceState
{
	int			ready;
	LaunchSlot	slots[GX_MAX_INFLIGHT];
	/* device memory comes from the stream-ordered pool, through this stream */
	cudaStream_t alloc_stream;
	cudaMemPool_t pool;
} DeviceState;

typedef struct HostRegion
{
	char	   *host;			/* page-aligned start */
	size_t		len;
} HostRegion;

static DeviceState devices[GX_MAX_DEVICES];
static int	ndevices = 0;
static HostRegion regions[GX_MAX_REGIONS];
static int	nregions = 0;

/* Fill err with a message and the CUDA error string; returns -1. */
static int
report(cudaError_t rc, const char *what, char *err, int errlen)
{
	if (err && errlen > 0)
		snprintf(err, errlen, "%s: %s (%s)", what,
				 cudaGetErrorString(rc), cudaGetErrorName(rc));
	return -1;
}

/* Create the streams and events of one device (context already current). */
static int
device_open(int dev, char *err, int errlen)
{
	DeviceState *d = &devices[dev];
	cudaError_t rc;

	memset(d, 0, sizeof(*d));
	/*
	 * cudaMalloc and cudaFree would wait for every kernel of the device: a
	 * free after one batch would stall the service until the batches still
	 * on the GPU finish (and forever behind a stalled one).  The pool's
	 * cudaMallocAsync / cudaFreeAsync on a stream of their own wait for
	 * nothing; freed memory stays cached until gxr_trim.
	 */
	{
		uint64_t	keep = UINT64_MAX;

		if ((rc = cudaStreamCreateWithFlags(&d->alloc_stream, cudaStreamNonBlocking)) != cudaSuccess)
			return report(rc, "cudaStreamCreate", err, errlen);
		if ((rc = cudaDeviceGetDefaultMemPool(&d->pool, dev)) != cudaSuccess)
			return report(rc, "cudaDeviceGetDefaultMemPool", err, errlen);
		if ((rc = cudaMemPoolSetAttribute(d->pool, cudaMemPoolAttrReleaseThreshold, &keep)) != cudaSuccess)
			return report(rc, "cudaMemPoolSetAttribute", err, errlen);
	}
	for (int i = 0; i < GX_MAX_INFLIGHT; i++)
	{
		LaunchSlot *s = &d->slots[i];

		if ((rc = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking)) != cudaSuccess)
			return report(rc, "cudaStreamCreate", err, errlen);
		if ((rc = cudaEventCreate(&s->start)) != cudaSuccess)
			return report(rc, "cudaEventCreate", err, errlen);
		if ((rc = cudaEventCreate(&s->stop)) != cudaSuccess)
			return report(rc, "cudaEventCreate", err, errlen);
	}
	d->ready = 1;
	return 0;
}

/*
 * Initialise the runtime and every visible device.  A machine without a
 * driver or a device reports zero devices, with the reason in err.
 */
extern "C" int
gxr_init(int *ndev_out, char *err, int errlen)
{
	cudaError_t rc;
	int			n = 0;

	*ndev_out = 0;
	/*
	 * Load every kernel when the context is made.  With CUDA's default lazy
	 * loading, the first launch of a kernel waits for the whole device to
	 * go idle: behind a long kernel of another request (a stalled transfer,
	 * a big scan) the service stopped inside that launch and could not
	 * pass on the cancel that would have ended it (seen on an H100).
	 */
	setenv("CUDA_MODULE_LOADING", "EAGER", 1);
	rc = cudaGetDeviceCount(&n);
	if (rc != cudaSuccess)
	{
		report(rc, "no usable GPU", err, errlen);
		cudaGetLastError();
		return 0;
	}
	if (n > GX_MAX_DEVICES)
		n = GX_MAX_DEVICES;
	for (int dev = 0; dev < n; dev++)
	{
		if ((rc = cudaSetDevice(dev)) != cudaSuccess)
			return report(rc, "cudaSetDevice", err, errlen);
		/* creates the primary context of the device */
		if ((rc = cudaFree(0)) != cudaSuccess)
			return report(rc, "cudaFree(0)", err, errlen);
		if (device_open(dev, err, errlen) != 0)
			return -1;
	}
	ndevices = n;
	*ndev_out = n;
	return 0;
}

/* Unregister host memory and reset every device. */
extern "C" void
gxr_shutdown(void)
{
	for (int dev = 0; dev < ndevices; dev++)
	{
		if (!devices[dev].ready)
			continue;
		cudaSetDevice(dev);
		cudaDeviceSynchronize();
	}
	for (int r = 0; r < nregions; r++)
		cudaHostUnregister(regions[r].host);
	nregions = 0;
	for (int dev = 0; dev < ndevices; dev++)
	{
		cudaSetDevice(dev);
		cudaDeviceReset();
		devices[dev].ready = 0;
	}
	ndevices = 0;
}

extern "C" int
gxr_device_props(int dev, GxDeviceProps *p, char *err, int errlen)
{
	cudaDeviceProp prop;
	cudaError_t rc;
	size_t		free_b = 0,
				total_b = 0;

	memset(p, 0, sizeof(*p));
	if ((rc = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess)
		return report(rc, "cudaGetDeviceProperties", err, errlen);
	snprintf(p->name, sizeof(p->name), "%s", prop.name);
	p->sm_count = prop.multiProcessorCount;
	p->cc_major = prop.major;
	p->cc_minor = prop.minor;
	p->pci_bus = prop.pciBusID;
	p->can_map_host = prop.canMapHostMemory;
	cudaSetDevice(dev);
	if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
	{
		p->mem_free = free_b;
		p->mem_total = total_b;
	}
	else
		p->mem_total = prop.totalGlobalMem;
	return 0;
}

extern "C" int
gxr_mem_info(int dev, uint64_t *free_bytes, uint64_t *total_bytes)
{
	size_t		f = 0,
				t = 0;

	if (cudaSetDevice(dev) != cudaSuccess || cudaMemGetInfo(&f, &t) != cudaSuccess)
		return -1;
	*free_bytes = f;
	*total_bytes = t;
	return 0;
}

/*
 * Page-lock [host, host+len) for all devices, mapped into their address
 * space, so kernels read it in place over PCIe.  The range is widened to
 * whole 4 kB pages.
 */
extern "C" int
gxr_register_host(void *host, size_t len, char *err, int errlen)
{
	uintptr_t	start = (uintptr_t) host & ~(uintptr_t) 4095;
	uintptr_t	end = ((uintptr_t) host + len + 4095) & ~(uintptr_t) 4095;
	cudaError_t rc;

	if (nregions >= GX_MAX_REGIONS)
	{
		snprintf(err, errlen, "too many registered host regions");
		return -1;
	}
	rc = cudaHostRegister((void *) start, end - start,
						  cudaHostRegisterMapped | cudaHostRegisterPortable);
	if (rc != cudaSuccess)
		return report(rc, "cudaHostRegister", err, errlen);
	regions[nregions].host = (char *) start;
	regions[nregions].len = end - start;
	nregions++;
	return 0;
}

/* The device view of a registered host address, or NULL. */
extern "C" void *
gxr_device_view(int dev, void *host)
{
	for (int r = 0; r < nregions; r++)
	{
		char	   *h = (char *) host;
		void	   *base = NULL;

		if (h < regions[r].host || h >= regions[r].host + regions[r].len)
			continue;
		if (cudaSetDevice(dev) != cudaSuccess ||
			cudaHostGetDevicePointer(&base, regions[r].host, 0) != cudaSuccess)
			return NULL;
		return (char *) base + (h - regions[r].host);
	}
	return NULL;
}

extern "C" int
gxr_alloc(int dev, uint64_t bytes, void **ptr, char *err, int errlen)
{
	DeviceState *d = &devices[dev];
	cudaError_t rc;

	*ptr = NULL;
	if (bytes == 0)
		return 0;
	if ((rc = cudaSetDevice(dev)) != cudaSuccess)
		return report(rc, "cudaSetDevice", err, errlen);
	rc = cudaMallocAsync(ptr, bytes, d->alloc_stream);
	/* the launch runs on another stream: the allocation must be done first */
	if (rc == cudaSuccess)
		rc = cudaStreamSynchronize(d->alloc_stream);
	if (rc != cudaSuccess)
	{
		cudaGetLastError();		/* out of memory is not sticky */
		*ptr = NULL;
		return report(rc, "cudaMalloc", err, errlen);
	}
	return 0;
}

/* Copy host memory (pageable or not) into device memory, synchronously. */
extern "C" int
gxr_copy_to_device(int dev, void *dst, const void *src, size_t bytes, char *err, int errlen)
{
	cudaError_t rc;

	if ((rc = cudaSetDevice(dev)) != cudaSuccess)
		return report(rc, "cudaSetDevice", err, errlen);
	if ((rc = cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice)) != cudaSuccess)
		return report(rc, "cudaMemcpy", err, errlen);
	return 0;
}

/* Free memory whose every use on the device has completed (never waits). */
extern "C" void
gxr_free(int dev, void *ptr)
{
	if (ptr == NULL)
		return;
	cudaSetDevice(dev);
	cudaFreeAsync(ptr, devices[dev].alloc_stream);
}

/* Give the pool's cached free memory back to the driver (service idle). */
extern "C" void
gxr_trim(int dev)
{
	if (dev < 0 || dev >= ndevices || !devices[dev].ready)
		return;
	cudaSetDevice(dev);
	cudaStreamSynchronize(devices[dev].alloc_stream);
	cudaMemPoolTrimTo(devices[dev].pool, 0);
}

/* a kernel that reports an error the way a failing kernel does */
__global__ void
fault_kernel(GxBatch *batch)
{
	batch->kernel_error = GX_KERR_INJECTED;
}

/* Enqueue the kernels of one request kind. */
static cudaError_t
launch_kind(const GxLaunch *l, cudaStream_t s)
{
	switch (l->kind)
	{
		case GX_REQ_PAGE_COUNT:
			return gx_launch_page_count(l, s);
		case GX_REQ_SLEEP:
			return gx_launch_sleep(l, s);
		case GX_REQ_SCAN:
			return gx_launch_scan(l, s);
		case GX_REQ_TASK_CREATE:
			return gx_launch_task_create(l, s);
		case GX_REQ_AGG:
			/* arg2: the join tables of an aggregation fused with a join */
			if (l->batch_host->arg2 != 0)
				return gx_launch_join_agg(l, s);
			return gx_launch_agg(l, s);
		case GX_REQ_TASK_FETCH:
			return gx_launch_task_fetch(l, s);
		case GX_REQ_JOIN_BUILD:
			return gx_launch_join_build(l, s);
		case GX_REQ_JOIN:
			return gx_launch_join(l, s);
		case GX_REQ_RTREE_LOAD:
		case GX_REQ_RTREE_FILL:
			return gx_launch_rtree_fill(l, s);
		case GX_REQ_RTREE_SEARCH:
			return gx_launch_rtree_search(l, s);
		case GX_REQ_PTREE_LOAD:
			return gx_launch_ptree_load(l, s);
		case GX_REQ_PTREE_UPLOAD:
			return gx_launch_ptree_upload(l, s);
		case GX_REQ_PTREE_LOOKUP:
			return gx_launch_ptree_lookup(l, s);
		case GX_REQ_PTREE_MERGE:
			return gx_launch_ptree_merge(l, s);
		default:
			return cudaErrorInvalidValue;
	}
}

extern "C" int
gxr_launch(int dev, const GxLaunch *l, int *handle, char *err, int errlen)
{
	DeviceState *d = &devices[dev];
	LaunchSlot *slot = NULL;
	cudaError_t rc;
	int			i;

	if (dev < 0 || dev >= ndevices || !d->ready)
	{
		snprintf(err, errlen, "device %d is not open", dev);
		return -1;
	}
	for (i = 0; i < GX_MAX_INFLIGHT; i++)
		if (!d->slots[i].busy)
		{
			slot = &d->slots[i];
			break;
		}
	if (slot == NULL)
	{
		snprintf(err, errlen, "too many launches in flight on device %d", dev);
		return -1;
	}
	if ((rc = cudaSetDevice(dev)) != cudaSuccess)
		return report(rc, "cudaSetDevice", err, errlen);
	if ((rc = cudaEventRecord(slot->start, slot->stream)) != cudaSuccess)
		return report(rc, "cudaEventRecord", err, errlen);

	if (l->fault == GX_FAULT_TRANSFER_STALL)
	{
		/* a transfer that never completes until the request is cancelled */
		if ((rc = gx_launch_stall(l, slot->stream)) != cudaSuccess)
			return report(rc, "stall kernel launch", err, errlen);
	}
	if (l->kind != GX_REQ_NOOP &&
		(rc = launch_kind(l, slot->stream)) != cudaSuccess)
		return report(rc, "kernel launch", err, errlen);
	if (l->fault == GX_FAULT_KERNEL)
	{
		fault_kernel<<<1, 1, 0, slot->stream>>>(l->batch_dev);
		if ((rc = cudaGetLastError()) != cudaSuccess)
			return report(rc, "fault kernel launch", err, errlen);
	}
	if ((rc = cudaEventRecord(slot->stop, slot->stream)) != cudaSuccess)
		return report(rc, "cudaEventRecord", err, errlen);
	slot->busy = 1;
	*handle = i;
	return 0;
}

extern "C" int
gxr_poll(int dev, int handle, float *ms, int *sticky, char *err, int errlen)
{
	LaunchSlot *slot = &devices[dev].slots[handle];
	cudaError_t rc;

	*sticky = 0;
	rc = cudaEventQuery(slot->stop);
	if (rc == cudaErrorNotReady)
		return 0;
	slot->busy = 0;
	if (rc != cudaSuccess)
	{
		/* an asynchronous kernel fault poisons the whole context */
		*sticky = 1;
		return report(rc, "kernel execution", err, errlen);
	}
	*ms = 0;
	cudaEventElapsedTime(ms, slot->start, slot->stop);
	return 1;
}

/*
 * Recreate the context of a device after a sticky error: unregister host
 * memory, reset, then open the device and register the regions again.
 */
extern "C" int
gxr_reset(int dev, char *err, int errlen)
{
	HostRegion	saved[GX_MAX_REGIONS];
	int			nsaved = nregions;
	cudaError_t rc;

	memcpy(saved, regions, sizeof(saved));
	for (int r = 0; r < nregions; r++)
		cudaHostUnregister(regions[r].host);
	nregions = 0;
	cudaSetDevice(dev);
	cudaDeviceReset();
	cudaGetLastError();
	if ((rc = cudaFree(0)) != cudaSuccess)
		return report(rc, "cudaFree(0) after reset", err, errlen);
	if (device_open(dev, err, errlen) != 0)
		return -1;
	for (int r = 0; r < nsaved; r++)
		if (gxr_register_host(saved[r].host, saved[r].len, err, errlen) != 0)
			return -1;
	return 0;
}
