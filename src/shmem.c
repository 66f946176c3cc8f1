/*-------------------------------------------------------------------------
 * shmem.c
 *		Shared state of gpuext: the service's status, statistics, request
 *		slots, the submission queue and the DMA arena.
 *
 * IDENTIFICATION
 *		src/shmem.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include <sys/statvfs.h>

#include "access/twophase.h"
#include "miscadmin.h"
#include "storage/dsm_impl.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"

#include "colcache.h"

GxShared   *gx_shared = NULL;
char	   *gx_arena = NULL;

#define ARENA_ALIGN		(2 * 1024 * 1024)

/* Number of request slots: a few for every process that has a PGPROC. */
static int
gx_nslots(void)
{
	/* MaxBackends covers regular and parallel backends and bgworkers */
	return (MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts) * GX_SLOTS_PER_BACKEND;
}

/*
 * Entries of the submission queue's ring: the least power of two that
 * holds every slot.  The queue's counters run freely and wrap at 2^32, a
 * multiple of any power of two up to it, so an entry's place in the ring
 * (counter modulo the ring's size) never jumps where they wrap.
 */
static uint32
gx_queue_size(int nslots)
{
	uint32		size = 1;

	while (size < (uint32) nslots)
		size <<= 1;
	return size;
}

static Size
gx_arena_bytes(void)
{
	return (Size) gpuext_dma_buffer_size_mb * 1024 * 1024;
}

/* Size of GxShared with its trailing arrays. */
static Size
gx_shared_size(void)
{
	Size		sz = MAXALIGN(sizeof(GxShared));
	int			nslots = gx_nslots();

	sz = add_size(sz, mul_size(nslots, sizeof(GxSlot)));
	sz = add_size(sz, mul_size(gx_queue_size(nslots), sizeof(uint32)));
	sz = add_size(sz, mul_size(gx_arena_bytes() / GX_ARENA_UNIT, sizeof(uint32)));
	sz = MAXALIGN(sz);
	sz = add_size(sz, mul_size(nslots / GX_SLOTS_PER_BACKEND, sizeof(pg_atomic_uint64)));
	return sz;
}

/* Ask for our shared memory; called from shmem_request_hook. */
void
gx_shmem_request(void)
{
	RequestAddinShmemSpace(gx_shared_size());
	/* the arena is aligned by hand so it shares no page with neighbours */
	RequestAddinShmemSpace(add_size(gx_arena_bytes(), 2 * ARENA_ALIGN));
	RequestNamedLWLockTranche("gpuext", 1);
	gx_colcache_shmem_request();
}

GxSlot *
gx_slot(int index)
{
	char	   *base = (char *) gx_shared + MAXALIGN(sizeof(GxShared));

	Assert(index >= 0 && index < gx_shared->nslots);
	return (GxSlot *) (base + (Size) index * sizeof(GxSlot));
}

uint32 *
gx_queue(void)
{
	char	   *base = (char *) gx_shared + MAXALIGN(sizeof(GxShared));

	return (uint32 *) (base + (Size) gx_shared->nslots * sizeof(GxSlot));
}

/*
 * The session number of the process with PGPROC number procno (0: none
 * uses the service).
 */
pg_atomic_uint64 *
gx_proc_session(int procno)
{
	char	   *end = (char *) (gx_queue() + gx_shared->queue_size + gx_shared->arena_units);

	Assert(procno >= 0 && procno < gx_shared->nprocs);
	return (pg_atomic_uint64 *) MAXALIGN(end) + procno;
}

/*
 * Take one of the faults gpuext_debug_inject_fault() asked for, if any is
 * left (GX_FAULT_KERNEL: a launch fails; GX_FAULT_ALLOC: a device
 * allocation fails).  The GPU service and the CPU engine take them alike.
 */
bool
gx_fault_take(int fault)
{
	pg_atomic_uint32 *left;
	uint32		n;

	if (gx_shared == NULL)
		return false;
	left = fault == GX_FAULT_KERNEL ? &gx_shared->fault_kernel : &gx_shared->fault_alloc;
	n = pg_atomic_read_u32(left);
	while (n > 0)
	{
		if (pg_atomic_compare_exchange_u32(left, &n, n - 1))
			return true;
	}
	return false;
}

/* Create or attach the shared state; called from shmem_startup_hook. */
void
gx_shmem_startup(void)
{
	bool		found;
	bool		found_arena;
	char	   *arena_raw;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	gx_shared = ShmemInitStruct("gpuext shared state", gx_shared_size(), &found);
	arena_raw = ShmemInitStruct("gpuext DMA arena",
								gx_arena_bytes() + 2 * ARENA_ALIGN, &found_arena);
	gx_arena = (char *) TYPEALIGN(ARENA_ALIGN, arena_raw);
	if (!found)
	{
		int			nslots = gx_nslots();

		memset(gx_shared, 0, gx_shared_size());
		SpinLockInit(&gx_shared->mutex);
		SpinLockInit(&gx_shared->queue_lock);
		gx_shared->service_state = GX_SERVICE_NOT_STARTED;
		gx_shared->nslots = nslots;
		gx_shared->queue_size = gx_queue_size(nslots);
		for (int i = 0; i < nslots; i++)
		{
			GxSlot	   *s = gx_slot(i);

			pg_atomic_init_u32(&s->state, GX_SLOT_FREE);
			pg_atomic_init_u32(&s->cancel, 0);
		}
		for (int d = 0; d < GX_MAX_DEVICES; d++)
			pg_atomic_init_u64(&gx_shared->device_mem_used[d], 0);
		pg_atomic_init_u64(&gx_shared->requests_served, 0);
		pg_atomic_init_u64(&gx_shared->requests_failed, 0);
		pg_atomic_init_u64(&gx_shared->requests_cancelled, 0);
		pg_atomic_init_u64(&gx_shared->gpu_batches, 0);
		pg_atomic_init_u64(&gx_shared->cpu_batches, 0);
		pg_atomic_init_u64(&gx_shared->fallbacks, 0);
		pg_atomic_init_u64(&gx_shared->bytes_read, 0);
		pg_atomic_init_u64(&gx_shared->bytes_returned, 0);
		pg_atomic_init_u64(&gx_shared->device_time_us, 0);
		pg_atomic_init_u64(&gx_shared->service_restarts, 0);
		pg_atomic_init_u64(&gx_shared->requests_abandoned, 0);
		pg_atomic_init_u32(&gx_shared->fault_kernel, 0);
		pg_atomic_init_u32(&gx_shared->fault_alloc, 0);
		pg_atomic_init_u64(&gx_shared->next_session, 0);
		gx_shared->nprocs = nslots / GX_SLOTS_PER_BACKEND;
		pg_atomic_init_u32(&gx_shared->calibration_generation, 1);
		gx_shared->arena_size = gx_arena_bytes();
		gx_shared->arena_units = gx_arena_bytes() / GX_ARENA_UNIT;
		gx_shared->arena_lock = &(GetNamedLWLockTranche("gpuext"))->lock;
		for (int i = 0; i < gx_shared->nprocs; i++)
			pg_atomic_init_u64(gx_proc_session(i), 0);
		/* (tests of the wrap-around start just before it) */
		gx_shared->queue_head = gx_shared->queue_tail = (uint32) 0 - (uint32) gpuext_debug_queue_start;
	}
	gx_colcache_shmem_startup();
	LWLockRelease(AddinShmemInitLock);
}

/* Append a slot index to the submission queue. */
bool
gx_queue_push(uint32 slot_index)
{
	uint32	   *q = gx_queue();
	bool		ok = false;

	SpinLockAcquire(&gx_shared->queue_lock);
	/* (each slot is queued at most once, so nslots entries never overflow) */
	if (gx_shared->queue_tail - gx_shared->queue_head < (uint32) gx_shared->nslots)
	{
		q[gx_shared->queue_tail & (gx_shared->queue_size - 1)] = slot_index;
		gx_shared->queue_tail++;
		ok = true;
	}
	SpinLockRelease(&gx_shared->queue_lock);
	return ok;
}

/* Take the oldest slot index from the submission queue. */
bool
gx_queue_pop(uint32 *slot_index)
{
	uint32	   *q = gx_queue();
	bool		ok = false;

	SpinLockAcquire(&gx_shared->queue_lock);
	if (gx_shared->queue_head != gx_shared->queue_tail)
	{
		*slot_index = q[gx_shared->queue_head & (gx_shared->queue_size - 1)];
		gx_shared->queue_head++;
		ok = true;
	}
	SpinLockRelease(&gx_shared->queue_lock);
	return ok;
}

const char *
gx_service_state_name(int state)
{
	switch (state)
	{
		case GX_SERVICE_NOT_STARTED:
			return "not started";
		case GX_SERVICE_STARTING:
			return "starting";
		case GX_SERVICE_READY:
			return "ready";
		case GX_SERVICE_NO_GPU:
			return "no gpu";
		case GX_SERVICE_STOPPED:
			return "stopped";
	}
	return "unknown";
}

/*
 * Can a DSM segment of 'bytes' be made for data a parallel query's
 * processes share (a gpuext_ptree mirror, a GpuJoin's inner tables)?
 * Only in a backend under the postmaster, with POSIX segments (on Linux,
 * files in /dev/shm) or mmap ones (files in the data directory's
 * pg_dynshmem), and with room for it twice over where their files go: a
 * full /dev/shm (a container's default is small) would fail the query,
 * when each participant can as well build its own copy.  Not System V
 * segments, which have a system-wide size limit.
 */
bool
gx_dsm_has_room(Size bytes)
{
	const char *dir = NULL;
	struct statvfs st;

	if (!IsUnderPostmaster)
		return false;
	if (dynamic_shared_memory_type == DSM_IMPL_MMAP)
		dir = PG_DYNSHMEM_DIR;	/* the backend runs in the data directory */
#ifdef __linux__
	else if (dynamic_shared_memory_type == DSM_IMPL_POSIX)
		dir = "/dev/shm";
#endif
	return dir != NULL && statvfs(dir, &st) == 0 &&
		(double) st.f_bavail * st.f_frsize >= 2.0 * (double) bytes;
}
