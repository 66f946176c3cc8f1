/*-------------------------------------------------------------------------
 * host_device.c
 *		A stand-in for a GPU, in the GPU service's own memory, for tests of
 *		the service on machines without one (gpuext.debug_host_device).
 *
 * It implements the runtime interface the service uses (GxRuntimeOps)
 * with ordinary memory: allocations within a fixed capacity, launches run
 * by the service's CPU for the few request kinds the debug functions send
 * (an empty request, a sleep, per-page tuple counts, a group table's
 * creation and fetch); every other kind fails to launch, as an unknown
 * kernel would.  So the service's own work (the queue, validation, tasks
 * and their owners, device memory accounting, injected faults,
 * cancellation and cleanup) runs as it does with a GPU.  The service's
 * state stays "no gpu": queries keep using the CPU engine, and only the
 * debug functions send requests here.
 *
 * IDENTIFICATION
 *		src/host_device.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "portability/instr_time.h"

#include "gx_agg.h"

/* what the stand-in's memory holds at most */
#define HOST_DEVICE_BYTES	(64 * 1024 * 1024)

/* a launch: done at once, or (a sleep) at a time or when aborted */
typedef struct HostLaunch
{
	bool		busy;
	bool		stall;			/* runs until aborted */
	GxBatch    *batch;
	uint64		end_us;			/* a sleep ends then */
	uint64		start_us;
} HostLaunch;

static HostLaunch launches[GX_MAX_INFLIGHT];
static uint64 host_used = 0;

/* The monotonic clock, in microseconds. */
static uint64
host_now_us(void)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	return INSTR_TIME_GET_MICROSEC(now);
}

/* Allocate within the stand-in's capacity, as cudaMalloc does on a device. */
static int
host_alloc(int dev, uint64_t bytes, void **ptr, char *err, int errlen)
{
	uint64	   *mem;

	*ptr = NULL;
	if (bytes == 0)
		return 0;
	if (bytes > HOST_DEVICE_BYTES - host_used)
	{
		snprintf(err, errlen, "cudaMalloc: out of memory (the host test device has %llu of %d bytes free)",
				 (unsigned long long) (HOST_DEVICE_BYTES - host_used), HOST_DEVICE_BYTES);
		return -1;
	}
	/* a header keeps the size, for the free */
	mem = malloc(bytes + 16);
	if (mem == NULL)
	{
		snprintf(err, errlen, "cudaMalloc: out of memory");
		return -1;
	}
	mem[0] = bytes;
	host_used += bytes;
	*ptr = (char *) mem + 16;
	return 0;
}

/* Free what host_alloc gave. */
static void
host_free(int dev, void *ptr)
{
	uint64	   *mem;

	if (ptr == NULL)
		return;
	mem = (uint64 *) ((char *) ptr - 16);
	host_used -= mem[0];
	free(mem);
}

/* Copy into the stand-in's memory (ordinary memory). */
static int
host_copy_to_device(int dev, void *dst, const void *src, size_t bytes, char *err, int errlen)
{
	memcpy(dst, src, bytes);
	return 0;
}

/* Host memory is its own device view. */
static void *
host_device_view(int dev, void *host)
{
	return host;
}

/* The stand-in's free and total memory. */
static int
host_mem_info(int dev, uint64_t *free_bytes, uint64_t *total_bytes)
{
	*free_bytes = HOST_DEVICE_BYTES - host_used;
	*total_bytes = HOST_DEVICE_BYTES;
	return 0;
}

/* Nothing is cached to give back. */
static void
host_trim(int dev)
{
}

/* GX_REQ_TASK_FETCH: the ready entries among [arg, arg + arg2), as agg.cu's kernel */
static void
host_task_fetch(const GxLaunch *l)
{
	GxBatch    *b = l->batch_host;
	uint32		entry = b->program_len;
	const unsigned char *entries = (const unsigned char *) l->task_dev + GX_AGG_TABLE_HEADER;
	unsigned char *out = (unsigned char *) gx_batch_out(b);
	uint64		count = 0;

	for (uint64 i = 0; i < b->arg2; i++)
	{
		const unsigned char *e = entries + (b->arg + i) * entry;

		if (*(const uint32 *) e == GX_ENTRY_READY)
			memcpy(out + GX_AGG_TABLE_HEADER + count++ * entry, e, entry);
	}
	memcpy(out, l->task_dev, GX_AGG_TABLE_HEADER);
	b->result = count;
}

/*
 * Run a launch of the kinds the stand-in knows; a sleep (and a stalled
 * transfer) is finished by host_poll.
 */
static int
host_launch(int dev, const GxLaunch *l, int *handle, char *err, int errlen)
{
	GxBatch    *b = l->batch_host;
	HostLaunch *h = NULL;
	int			i;

	for (i = 0; i < GX_MAX_INFLIGHT; i++)
		if (!launches[i].busy)
		{
			h = &launches[i];
			break;
		}
	if (h == NULL)
	{
		snprintf(err, errlen, "too many launches in flight on device %d", dev);
		return -1;
	}
	memset(h, 0, sizeof(*h));
	h->start_us = h->end_us = host_now_us();
	switch (l->kind)
	{
		case GX_REQ_NOOP:
			break;
		case GX_REQ_SLEEP:
			h->end_us += b->arg / 1000;
			break;
		case GX_REQ_PAGE_COUNT:
			{
				const GxPageRef *refs = gx_batch_pages(b);
				GxPageCount *out = (GxPageCount *) gx_batch_out(b);

				for (uint32 p = 0; p < b->npages; p++)
				{
					const unsigned char *page = l->pages_dev + (Size) refs[p].buf_id * GX_BLCKSZ;

					out[p].nnormal = out[p].nvisible = 0;
					for (uint32 off = 1; off <= refs[p].nline; off++)
						gx_count_tuple(page, &refs[p], off, &out[p].nnormal, &out[p].nvisible);
				}
				break;
			}
		case GX_REQ_TASK_CREATE:
			{
				GxAggTable *t = (GxAggTable *) l->scratch_dev;

				memset(l->scratch_dev, 0, l->scratch_bytes);
				t->capacity = b->arg;
				t->max_groups = b->arg2;
				break;
			}
		case GX_REQ_TASK_FETCH:
			host_task_fetch(l);
			break;
		default:
			snprintf(err, errlen, "kernel launch: the host test device runs no requests of kind %d",
					 l->kind);
			return -1;
	}
	if (l->fault == GX_FAULT_KERNEL)
		b->kernel_error = GX_KERR_INJECTED;
	h->stall = (l->fault == GX_FAULT_TRANSFER_STALL);
	h->batch = b;
	h->busy = true;
	*handle = i;
	return 0;
}

/* Is a launch done?  A sleep when its time is up, or when it is aborted. */
static int
host_poll(int dev, int handle, float *ms, int *sticky, char *err, int errlen)
{
	HostLaunch *h = &launches[handle];
	uint64		now = host_now_us();
	volatile uint32 *abort_flag = &h->batch->abort_flag;

	*sticky = 0;
	if (!*abort_flag && (h->stall || now < h->end_us))
		return 0;
	h->busy = false;
	*ms = (now - h->start_us) / 1000.0f;
	return 1;
}

/* The stand-in has no link or device to measure. */
static int
host_calibrate(int dev, void *host, size_t host_bytes, GxCalibration *out, char *err, int errlen)
{
	snprintf(err, errlen, "the host test device cannot be calibrated");
	return -1;
}

/* Nothing to reset: no error of the stand-in is sticky. */
static int
host_reset(int dev, char *err, int errlen)
{
	return 0;
}

/* Forget every launch (the service is stopping; memory goes with it). */
static void
host_shutdown(void)
{
	memset(launches, 0, sizeof(launches));
}

const GxRuntimeOps gx_host_device_ops = {
	.alloc = host_alloc,
	.free = host_free,
	.copy_to_device = host_copy_to_device,
	.device_view = host_device_view,
	.mem_info = host_mem_info,
	.trim = host_trim,
	.launch = host_launch,
	.poll = host_poll,
	.calibrate = host_calibrate,
	.reset = host_reset,
	.shutdown = host_shutdown,
};

/* The stand-in's description, for the log. */
void
gx_host_device_props(GxDeviceProps *props)
{
	memset(props, 0, sizeof(*props));
	strlcpy(props->name, "host test device", sizeof(props->name));
	props->mem_total = HOST_DEVICE_BYTES;
	props->mem_free = HOST_DEVICE_BYTES - host_used;
	props->can_map_host = 1;
}
