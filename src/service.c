/*-------------------------------------------------------------------------
 * service.c
 *		The GPU service: one background worker that owns every CUDA
 *		context and runs the requests that backends submit.
 *
 * Backends put requests in shared-memory slots and a queue, set the
 * service's latch and sleep on their own.  The service registers
 * shared_buffers and the DMA arena with CUDA once, so kernels read heap
 * pages and batches in place, starts each request on a stream and polls
 * for its completion.  Cancellation is a flag in the slot: a running
 * kernel sees it through the batch's abort flag.  When the service exits
 * it fails every request it holds, so no backend waits for ever, and the
 * postmaster starts it again.
 *
 * IDENTIFICATION
 *		src/service.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"
#include "gx_ptree.h"

#include <errno.h>
#include <signal.h>
#include <sched.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "gx_join.h"
#include "gx_rtree.h"
#include "gx_colcache.h"
#include "colcache.h"

/* a request the service has started on a device */
/*
 * A task: device memory that outlives one request (a group table), used
 * by the requests of one query, possibly from several processes (or, for
 * a gpuext_ptree mirror, by one backend from query to query).  It belongs
 * to the process that created it; the service frees it when asked, or
 * when that process is gone.
 */
typedef struct ServiceTask
{
	uint32		id;				/* 0: slot unused */
	int			kind;			/* the GxRequestKind that created it */
	int			device;
	void	   *mem;			/* NULL once lost in a device reset */
	uint64		bytes;
	uint64		capacity;		/* a group table's entries */
	uint32		ndepths;		/* join tables' depths */
	int			owner_pid;		/* (for messages) */
	Oid			dbid;			/* its owner's database (InvalidOid: the
								 * service's own, a column cache copy) */
	int			owner_procno;	/* the creator: PGPROC number and session (-1:
								 * the service's own) */
	uint64		owner_session;
	int			group_procno;	/* the creator's parallel group (its leader) */
	uint64		group_session;
	int			inflight;		/* requests running on it */
	bool		destroy_pending;
	int			cache_slot;		/* a column cache's device copy: its
								 * registry slot + 1 (0: not one) */
	uint64		cache_gen;		/* and the image's generation */
	uint32		cache_npages;
} ServiceTask;

/*
 * Tasks at once, over every backend: each backend may keep up to 4
 * gpuext_ptree mirrors between queries besides its queries' own tasks
 */
#define GX_MAX_TASKS 1024
/* the service trims the device memory pools after this long idle */
#define POOL_TRIM_IDLE_MS 10000

/* a request the service has started on a device */
typedef struct Inflight
{
	int			slot_index;
	int			device;
	int			handle;
	void	   *scratch;
	uint64		scratch_bytes;
	uint64		bytes_read;
	ServiceTask *task;			/* the task it works on, if any */
	ServiceTask *task2;			/* a second one (join tables of a fused aggregation) */
	ServiceTask *cache;			/* the column cache copy it reads, if any */
	bool		abort_sent;
} Inflight;

/* the device's runtime: CUDA, or the host test device */
static const GxRuntimeOps cuda_ops = {
	.alloc = gxr_alloc,
	.free = gxr_free,
	.copy_to_device = gxr_copy_to_device,
	.device_view = gxr_device_view,
	.mem_info = gxr_mem_info,
	.trim = gxr_trim,
	.launch = gxr_launch,
	.poll = gxr_poll,
	.calibrate = gxr_calibrate,
	.reset = gxr_reset,
	.shutdown = gxr_shutdown,
};
static const GxRuntimeOps *rt = &cuda_ops;

static Inflight inflight[GX_MAX_DEVICES * GX_MAX_INFLIGHT];
static ServiceTask tasks[GX_MAX_TASKS];
static uint32 next_task_id = 1;
static int	ninflight = 0;
static int	ndevices = 0;
static bool cuda_initialised = false;
static const unsigned char *pages_dev[GX_MAX_DEVICES];
static int	device_load[GX_MAX_DEVICES];

/* Register the service with the postmaster; called from _PG_init. */
void
gx_register_service(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "gpuext");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "gpuext_service_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "gpuext GPU service");
	snprintf(worker.bgw_type, BGW_MAXLEN, "gpuext GPU service");
	RegisterBackgroundWorker(&worker);
}

static void
set_state(int state, const char *detail)
{
	SpinLockAcquire(&gx_shared->mutex);
	gx_shared->service_state = state;
	if (detail)
		strlcpy(gx_shared->detail, detail, sizeof(gx_shared->detail));
	SpinLockRelease(&gx_shared->mutex);
}

static GxBatch *
slot_batch(GxSlot *s)
{
	return (GxBatch *) (gx_arena + s->arena_off);
}

static ServiceTask *find_task(uint32 id);
static void release_task(ServiceTask *t);

/*
 * Publish the result of a request and wake its owner.  If the owner has
 * abandoned it meanwhile, or sent it detached, the service frees the slot
 * and its arena space (and a task an abandoned request made: nobody owns
 * it).  Counts it: served, cancelled (its owner cancelled or abandoned
 * it: no one waits for its outcome) or failed (its owner gets the
 * failure: an ERROR, or a fallback).
 */
static void
finish_request(int slot_index, int status, const char *msg, float ms)
{
	GxSlot	   *s = gx_slot(slot_index);
	uint32		expected = GX_SLOT_RUNNING;
	bool		cancelled;

	elog(DEBUG2, "gpuext GPU service: request in slot %d (kind %d) finished with status %d%s%s",
		 slot_index, s->kind, status, msg ? ": " : "", msg ? msg : "");
	s->status = status;
	s->device_ms = ms;
	if (msg)
		strlcpy(s->errmsg, msg, sizeof(s->errmsg));
	else
		s->errmsg[0] = '\0';
	cancelled = status == GX_ERR_CANCELLED ||
		(status != GX_OK && (pg_atomic_read_u32(&s->cancel) ||
							 pg_atomic_read_u32(&s->state) == GX_SLOT_ABANDONED));

	if (status == GX_OK)
		pg_atomic_fetch_add_u64(&gx_shared->requests_served, 1);
	else if (cancelled)
		pg_atomic_fetch_add_u64(&gx_shared->requests_cancelled, 1);
	else
		pg_atomic_fetch_add_u64(&gx_shared->requests_failed, 1);

	pg_write_barrier();
	if (s->detached)
	{
		gx_arena_free(s->arena_off, s->arena_len);
		pg_atomic_write_u32(&s->state, GX_SLOT_FREE);
	}
	else if (pg_atomic_compare_exchange_u32(&s->state, &expected, GX_SLOT_DONE))
	{
		PGPROC	   *owner = &ProcGlobal->allProcs[s->owner_procno];

		SetLatch(&owner->procLatch);
	}
	else
	{
		Assert(expected == GX_SLOT_ABANDONED);
		if (status == GX_OK && gx_kind_creates_task(s->kind))
		{
			ServiceTask *t = find_task((uint32) slot_batch(s)->result);

			if (t != NULL)
				release_task(t);
		}
		gx_arena_free(s->arena_off, s->arena_len);
		pg_atomic_write_u32(&s->state, GX_SLOT_FREE);
	}
}

/* Release the device memory reserved by an in-flight request. */
static void
release_scratch(Inflight *f)
{
	if (f->scratch_bytes > 0)
	{
		rt->free(f->device, f->scratch);
		pg_atomic_fetch_sub_u64(&gx_shared->device_mem_used[f->device], f->scratch_bytes);
	}
	f->scratch = NULL;
	f->scratch_bytes = 0;
}

/* Device memory a request needs before it may start. */
static uint64
scratch_needed(GxBatch *b, int kind)
{
	switch (kind)
	{
		case GX_REQ_SLEEP:
			return b->reserve_bytes;
		case GX_REQ_SCAN:
		case GX_REQ_AGG:
		case GX_REQ_JOIN:
			return TYPEALIGN(256, b->program_len);	/* the program, in device memory */
		case GX_REQ_TASK_FETCH:
			return 256;			/* the counter of fetched entries */
		case GX_REQ_RTREE_SEARCH:
			/* visit lists, counters (checked by gx_request_check) */
			return gx_rt_search_scratch_bytes((const GxRtSearch *) ((char *) b + b->program_offset),
											  b->program_len);
		case GX_REQ_PTREE_LOOKUP:
			/* the probes, then the results (a malformed count: the launch says so) */
			if (b->arg == 0 || b->arg >= PG_UINT32_MAX ||
				!gx_ptree_probes_ok((uint32) b->arg, b->program_len))
				return 256;
			return gx_ptree_lookup_scratch(b->program_len, b->arg);
		case GX_REQ_PTREE_MERGE:
			/* entries, sort buffers, flags, output, CUB's storage */
			if (b->arg == 0 || b->arg >= PG_UINT32_MAX ||
				b->program_len < gx_ptree_merge_in_size(b->arg))
				return 256;
			return gx_ptree_merge_scratch(b->arg);
		default:
			return 0;
	}
}

static ServiceTask *
find_task(uint32 id)
{
	for (int i = 0; i < GX_MAX_TASKS; i++)
		if (tasks[i].id == id && id != 0)
			return &tasks[i];
	return NULL;
}

/* Free a task's device memory now. */
static void
free_task(ServiceTask *t)
{
	if (t->mem)
	{
		rt->free(t->device, t->mem);
		pg_atomic_fetch_sub_u64(&gx_shared->device_mem_used[t->device], t->bytes);
	}
	memset(t, 0, sizeof(*t));
}

/* Free a task, or mark it to be freed when its last request ends. */
static void
release_task(ServiceTask *t)
{
	if (t->inflight > 0)
		t->destroy_pending = true;
	else
		free_task(t);
}

/* A request on a task ended: free the task if it was waiting for that. */
static void
end_task_use(Inflight *f)
{
	ServiceTask *t = f->task;
	ServiceTask *t2 = f->task2;
	ServiceTask *tc = f->cache;

	f->task = NULL;
	f->task2 = NULL;
	f->cache = NULL;
	if (t != NULL && --t->inflight == 0 && t->destroy_pending)
		free_task(t);
	if (t2 != NULL && --t2->inflight == 0 && t2->destroy_pending)
		free_task(t2);
	if (tc != NULL && --tc->inflight == 0 && tc->destroy_pending)
		free_task(tc);
}

/*
 * Free the tasks whose creator's session has ended (the process exited or
 * crashed): its PGPROC number no longer carries the session number it
 * created them with, whatever process has the PGPROC (or the pid) since.
 */
static void
collect_orphan_tasks(void)
{
	for (int i = 0; i < GX_MAX_TASKS; i++)
	{
		ServiceTask *t = &tasks[i];

		if (t->id != 0 && !t->destroy_pending && t->owner_procno >= 0 &&
			(t->owner_procno >= gx_shared->nprocs ||
			 pg_atomic_read_u64(gx_proc_session(t->owner_procno)) != t->owner_session))
		{
			ereport(LOG,
					(errmsg("gpuext GPU service freeing task %u of ended session %llu (process %d)",
							t->id, (unsigned long long) t->owner_session, t->owner_pid)));
			release_task(t);
		}
	}
}

/*
 * Free the device copies of column caches that were dropped or rebuilt
 * (or lost in a device reset), once no request reads them.
 */
static void
sweep_cache_tasks(void)
{
	for (int i = 0; i < GX_MAX_TASKS; i++)
	{
		ServiceTask *t = &tasks[i];

		if (t->id != 0 && t->cache_slot != 0 && !t->destroy_pending &&
			(t->mem == NULL || !gx_colcache_slot_current(t->cache_slot - 1, t->cache_gen)))
			release_task(t);
	}
}

/*
 * The copy on device 'dev' of the column cache in registry slot 'slot'
 * (0-based) at 'generation': the one made by an earlier request, or made
 * now (one synchronous copy of the image; every later batch reads device
 * memory).
 * The copy is a task owned by the service; it goes when the cache is
 * dropped or rebuilt.  NULL with *status and err when it cannot be had.
 */
static ServiceTask *
cache_task(int slot, uint64 generation, int dev, int *status, char *err, int errlen)
{
	ServiceTask *t = NULL;
	dsm_segment *seg;
	const GxColCache *cc;
	uint64		bytes;
	void	   *mem;

	sweep_cache_tasks();
	for (int i = 0; i < GX_MAX_TASKS; i++)
		if (tasks[i].id != 0 && tasks[i].cache_slot == slot + 1 &&
			tasks[i].cache_gen == generation && tasks[i].device == dev &&
			tasks[i].mem != NULL && !tasks[i].destroy_pending)
			return &tasks[i];
	for (int i = 0; i < GX_MAX_TASKS && t == NULL; i++)
		if (tasks[i].id == 0)
			t = &tasks[i];
	*status = GX_ERR_DEVICE;
	if (t == NULL)
	{
		strlcpy(err, "too many GPU tasks", errlen);
		*status = GX_ERR_OUT_OF_MEMORY;
		return NULL;
	}
	seg = gx_colcache_attach_slot(slot, generation);
	if (seg == NULL)
	{
		strlcpy(err, "the column cache was dropped or rebuilt", errlen);
		return NULL;
	}
	cc = (const GxColCache *) dsm_segment_address(seg);
	bytes = cc->size;
	if (!gx_colcache_image_ok(cc, dsm_segment_map_length(seg)))
	{
		dsm_detach(seg);
		strlcpy(err, "malformed column cache image", errlen);
		return NULL;
	}
	if (gx_fault_take(GX_FAULT_ALLOC))
	{
		dsm_detach(seg);
		strlcpy(err, "cudaMalloc: out of memory (injected fault)", errlen);
		*status = GX_ERR_OUT_OF_MEMORY;
		return NULL;
	}
	if (rt->alloc(dev, bytes, &mem, err, errlen) != 0)
	{
		dsm_detach(seg);
		*status = GX_ERR_OUT_OF_MEMORY;
		return NULL;
	}
	if (rt->copy_to_device(dev, mem, cc, bytes, err, errlen) != 0)
	{
		rt->free(dev, mem);
		dsm_detach(seg);
		return NULL;
	}
	t->cache_npages = cc->npages;
	dsm_detach(seg);
	t->id = next_task_id++;
	if (next_task_id == 0)
		next_task_id = 1;
	t->kind = GX_REQ_SCAN;
	t->device = dev;
	t->mem = mem;
	t->bytes = bytes;
	t->owner_pid = MyProcPid;
	t->owner_procno = -1;		/* the service's own */
	t->cache_slot = slot + 1;
	t->cache_gen = generation;
	pg_atomic_fetch_add_u64(&gx_shared->device_mem_used[dev], bytes);
	elog(DEBUG1, "gpuext GPU service: column cache of registry slot %d copied to device %d ("
		 UINT64_FORMAT " bytes)", slot, dev, bytes);
	return t;
}

/*
 * May the request in slot s use task t?  Only the process that created
 * it and the processes of its parallel query (the creator's group: its
 * leader and the leader's workers); a gpuext_ptree mirror (owner_only)
 * its creator only.  Processes are told apart by their session, which a
 * process that takes over a PGPROC or a pid does not share.  The service's
 * own tasks (column cache copies) are no request's to name.
 */
static bool
task_user_ok(const GxSlot *s, const ServiceTask *t, bool owner_only)
{
	if (t->owner_procno < 0)
		return false;
	if (s->owner_procno == t->owner_procno && s->owner_session == t->owner_session)
		return true;
	return !owner_only &&
		s->group_procno == t->group_procno && s->group_session == t->group_session;
}

/* What gx_request_check needs to know of a task */
static void
task_info(const ServiceTask *t, GxTaskInfo *info)
{
	info->kind = t->kind;
	info->bytes = t->bytes;
	info->capacity = t->capacity;
	info->ndepths = t->ndepths;
}

/*
 * The tasks a request names: a free task slot for a request that makes
 * one, or the task it works on (and a fused aggregation's join tables),
 * which must exist and be the requester's to use.  Destroys are done
 * here.  Returns true if the request was finished here.
 */
static bool
start_task_request(uint32 slot_index, GxSlot *s, GxBatch *b, ServiceTask **task_out,
				   ServiceTask **task2_out, int *dev_out)
{
	ServiceTask *t = NULL;

	*task_out = NULL;
	*task2_out = NULL;
	if (gx_kind_creates_task(s->kind))
	{
		int			of_database = 0;

		for (int i = 0; i < GX_MAX_TASKS; i++)
		{
			if (tasks[i].id == 0 && t == NULL)
				t = &tasks[i];
			else if (tasks[i].id != 0 && tasks[i].dbid == s->dbid)
				of_database++;
		}
		if (t == NULL)
		{
			finish_request(slot_index, GX_ERR_OUT_OF_MEMORY, "too many GPU tasks", 0);
			return true;
		}
		/* one database's share (gpuext.max_tasks_per_database) */
		if (of_database >= s->task_quota)
		{
			char		msg[GX_ERRLEN];

			snprintf(msg, sizeof(msg),
					 "the database has %d GPU tasks, gpuext.max_tasks_per_database allows %d",
					 of_database, s->task_quota);
			finish_request(slot_index, GX_ERR_OUT_OF_MEMORY, msg, 0);
			return true;
		}
		/* join tables for a fused aggregation go beside its group table */
		if (s->kind == GX_REQ_JOIN_BUILD && b->task_id != 0)
		{
			ServiceTask *near = find_task(b->task_id);

			if (near != NULL && near->mem != NULL && task_user_ok(s, near, false))
				*dev_out = near->device;
		}
		*task_out = t;			/* filled in once its memory is reserved */
		return false;
	}
	if (!gx_kind_uses_task(s->kind))
		return false;
	t = find_task(b->task_id);
	if (s->kind == GX_REQ_TASK_DESTROY)
	{
		/*
		 * A task freed already (by another process of its query, by the
		 * sweep of ended sessions) or gone with the service the request was
		 * meant for: its destroy is done.
		 */
		if (t == NULL && b->task_id != 0 &&
			(b->task_id < next_task_id || s->generation != gx_shared->generation))
		{
			elog(DEBUG2, "gpuext GPU service: task %u was freed already", b->task_id);
			finish_request(slot_index, GX_OK, NULL, 0);
			return true;
		}
		if (t == NULL)
		{
			finish_request(slot_index, GX_ERR_BAD_REQUEST, "no such GPU task", 0);
			return true;
		}
		/* a gpuext_ptree mirror is freed by its own backend only */
		if (!task_user_ok(s, t, t->kind == GX_REQ_PTREE_LOAD))
		{
			finish_request(slot_index, GX_ERR_BAD_REQUEST, "the GPU task belongs to another process", 0);
			return true;
		}
		/* (a task lost in a device reset still has its slot to free) */
		if (!t->destroy_pending)
		{
			gx_capture_request(GX_REQ_TASK_DESTROY, NULL, 0, 0, t->id, 0);
			release_task(t);
		}
		finish_request(slot_index, GX_OK, NULL, 0);
		return true;
	}
	if (t == NULL || t->destroy_pending)
	{
		finish_request(slot_index, GX_ERR_BAD_REQUEST, "no such GPU task", 0);
		return true;
	}
	/* a gpuext_ptree mirror is used by its own backend only */
	if (!task_user_ok(s, t, gx_kind_owner_only(s->kind)))
	{
		finish_request(slot_index, GX_ERR_BAD_REQUEST, "the GPU task belongs to another process", 0);
		return true;
	}
	if (t->mem == NULL)
	{
		finish_request(slot_index, GX_ERR_DEVICE, "the GPU task was lost in a device reset", 0);
		return true;
	}
	*task_out = t;
	*dev_out = t->device;
	/* an aggregation fused with a join also reads the join's tables (arg2) */
	if (s->kind == GX_REQ_AGG && b->arg2 != 0)
	{
		ServiceTask *t2 = find_task((uint32) b->arg2);

		if (t2 == NULL || t2->destroy_pending || !task_user_ok(s, t2, false) ||
			t2->mem == NULL || t2->device != t->device)
		{
			finish_request(slot_index, GX_ERR_BAD_REQUEST, "no such GPU task for the join tables", 0);
			return true;
		}
		*task2_out = t2;
	}
	return false;
}

/* Pick the device with the fewest launches in flight. */
static int
pick_device(void)
{
	int			best = 0;

	for (int d = 1; d < ndevices; d++)
		if (device_load[d] < device_load[best])
			best = d;
	return best;
}

/* Take a queued request and start it on a device. */
static void
start_request(uint32 slot_index)
{
	GxSlot	   *s = gx_slot(slot_index);
	uint32		expected = GX_SLOT_QUEUED;
	GxBatch    *b;
	GxLaunch	l;
	Inflight   *f;
	int			dev;
	uint64		need;
	ServiceTask *task = NULL;
	ServiceTask *task2 = NULL;
	ServiceTask *ctask = NULL;
	GxTaskInfo	info,
				info2;
	uint32		ncached = 0;
	char		err[GX_ERRLEN];

	if (!pg_atomic_compare_exchange_u32(&s->state, &expected, GX_SLOT_RUNNING))
	{
		/* abandoned while queued: it is ours to free */
		if (expected == GX_SLOT_ABANDONED)
		{
			pg_atomic_fetch_add_u64(&gx_shared->requests_cancelled, 1);
			gx_arena_free(s->arena_off, s->arena_len);
			pg_atomic_write_u32(&s->state, GX_SLOT_FREE);
		}
		return;
	}
	pg_read_barrier();
	s->device = -1;
	elog(DEBUG2, "gpuext GPU service: request in slot %u (kind %d, fault %d) starts",
		 slot_index, s->kind, s->fault);

	if (pg_atomic_read_u32(&s->cancel))
	{
		finish_request(slot_index, GX_ERR_CANCELLED, "cancelled before start", 0);
		return;
	}
	if (s->fault == GX_FAULT_SERVICE_DIE)
	{
		/* the exit callback fails this request along with the others */
		ereport(LOG,
				(errmsg("gpuext GPU service stopping on injected fault")));
		proc_exit(1);
	}
	if (s->kind == GX_REQ_NOOP)
	{
		finish_request(slot_index, GX_OK, NULL, 0);
		return;
	}
	if (ndevices == 0)
	{
		finish_request(slot_index, GX_ERR_NO_DEVICE, gx_shared->detail, 0);
		return;
	}
	if (ninflight >= lengthof(inflight))
	{
		/* cannot happen: the caller stops dequeuing when full */
		finish_request(slot_index, GX_ERR_DEVICE, "too many requests in flight", 0);
		return;
	}

	/* the request's batch: inside the arena, in its owner's slot */
	if (s->owner_procno != (int) (slot_index / GX_SLOTS_PER_BACKEND) ||
		s->arena_off > gx_shared->arena_size ||
		s->arena_len > gx_shared->arena_size - s->arena_off ||
		s->arena_len < sizeof(GxBatch) || slot_batch(s)->kind != (uint32) s->kind)
	{
		finish_request(slot_index, GX_ERR_BAD_REQUEST, "malformed batch", 0);
		return;
	}
	b = slot_batch(s);
	b->abort_flag = 0;
	b->kernel_error = GX_KERR_NONE;

	dev = pick_device();
	if (start_task_request(slot_index, s, b, &task, &task2, &dev))
		return;
	/* everything the request names, checked before anything runs it */
	if (!gx_kind_creates_task(s->kind) && task)
		task_info(task, &info);
	if (task2)
		task_info(task2, &info2);
	if (!gx_request_check(s->kind, b, s->arena_len,
						  !gx_kind_creates_task(s->kind) && task ? &info : NULL,
						  task2 ? &info2 : NULL, err, sizeof(err)))
	{
		finish_request(slot_index, GX_ERR_BAD_REQUEST, err, 0);
		return;
	}
	if (s->kind == GX_REQ_CALIBRATE)
	{
		/* synchronous: the service waits for it (about a second) */
		GxCalibration *cal = (GxCalibration *) gx_batch_out(b);
		char	   *buf = (char *) b + TYPEALIGN(4096, b->out_offset + sizeof(GxCalibration));
		size_t		bytes = s->arena_len - (buf - (char *) b);

		if (b->out_len < sizeof(GxCalibration) || bytes < 16 * 1024 * 1024 ||
			rt->calibrate(dev, buf, bytes & ~(size_t) 4095, cal, err, sizeof(err)) != 0)
			finish_request(slot_index, GX_ERR_DEVICE,
						   b->out_len < sizeof(GxCalibration) || bytes < 16 * 1024 * 1024 ?
						   "calibration buffer too small" : err, 0);
		else
			finish_request(slot_index, GX_OK, NULL, 0);
		return;
	}
	/*
	 * A scan, a join's probe or an aggregation (fused with a join or not)
	 * with column cache pages reads the cache's copy on the device it runs
	 * on (that of its task: the join tables, or the group table).
	 */
	if (b->cache_slot != 0)
	{
		const GxPageRef *refs = gx_batch_pages(b);
		int			status;

		ctask = cache_task((int) b->cache_slot - 1, b->cache_gen, task ? task->device : dev,
						   &status, err, sizeof(err));
		if (ctask == NULL)
		{
			finish_request(slot_index, status, err, 0);
			return;
		}
		for (uint32 i = 0; i < b->npages; i++)
			if (refs[i].flags & GX_PAGE_CACHED)
			{
				if (refs[i].buf_id >= ctask->cache_npages)
				{
					finish_request(slot_index, GX_ERR_BAD_REQUEST,
								   "column cache page out of range", 0);
					return;
				}
				ncached++;
			}
		dev = ctask->device;
	}
	else
	{
		/* (the CPU engine's cache id names nothing here) */
		const GxPageRef *refs = gx_batch_pages(b);

		for (uint32 i = 0; i < b->npages; i++)
			if (refs[i].flags & GX_PAGE_CACHED)
			{
				finish_request(slot_index, GX_ERR_BAD_REQUEST,
							   "a column cache page without the cache's device copy", 0);
				return;
			}
	}
	f = &inflight[ninflight];
	memset(f, 0, sizeof(*f));
	f->slot_index = slot_index;
	f->device = dev;

	/* reserve device memory first: out of memory is a decision, not a crash */
	need = gx_kind_creates_task(s->kind) ? b->reserve_bytes : scratch_needed(b, s->kind);
	if (need > 0)
	{
		if (s->fault == GX_FAULT_ALLOC || gx_fault_take(GX_FAULT_ALLOC))
		{
			finish_request(slot_index, GX_ERR_OUT_OF_MEMORY,
						   "cudaMalloc: out of memory (injected fault)", 0);
			return;
		}
		if (s->mem_limit > 0 && need > s->mem_limit)
		{
			snprintf(err, sizeof(err),
					 "request needs " UINT64_FORMAT " bytes, gpuext.gpu_memory_limit allows " UINT64_FORMAT,
					 need, s->mem_limit);
			finish_request(slot_index, GX_ERR_OUT_OF_MEMORY, err, 0);
			return;
		}
		if (rt->alloc(dev, need, &f->scratch, err, sizeof(err)) != 0)
		{
			finish_request(slot_index, GX_ERR_OUT_OF_MEMORY, err, 0);
			return;
		}
		f->scratch_bytes = need;
		pg_atomic_fetch_add_u64(&gx_shared->device_mem_used[dev], need);
		elog(DEBUG2, "gpuext GPU service: request in slot %u reserved " UINT64_FORMAT " bytes",
			 slot_index, need);
	}
	else if (s->fault == GX_FAULT_ALLOC)
	{
		finish_request(slot_index, GX_ERR_OUT_OF_MEMORY,
					   "cudaMalloc: out of memory (injected fault)", 0);
		return;
	}

	if (gx_kind_creates_task(s->kind))
	{
		/* the reservation becomes the task's memory */
		task->id = next_task_id++;
		if (next_task_id == 0)
			next_task_id = 1;
		task->kind = s->kind;
		task->device = dev;
		task->mem = f->scratch;
		task->bytes = f->scratch_bytes;
		task->capacity = s->kind == GX_REQ_TASK_CREATE ? b->arg : 0;
		task->ndepths = s->kind == GX_REQ_JOIN_BUILD ?
			((const GxJoinTables *) gx_batch_out(b))->ndepths : 0;
		task->owner_pid = s->owner_pid;
		task->dbid = s->dbid;
		task->owner_procno = s->owner_procno;
		task->owner_session = s->owner_session;
		task->group_procno = s->group_procno;
		task->group_session = s->group_session;
		f->scratch = NULL;
		f->scratch_bytes = 0;
		b->result = task->id;
	}
	if (task)
	{
		task->inflight++;
		f->task = task;
	}
	if (ctask)
	{
		ctask->inflight++;
		f->cache = ctask;
	}
	/* an aggregation fused with a join also reads the join's tables */
	if (task2)
	{
		task2->inflight++;
		f->task2 = task2;
	}

	memset(&l, 0, sizeof(l));
	l.kind = s->kind;
	l.fault = s->fault;
	/* a kernel error injected by gpuext_debug_inject_fault() */
	if (l.fault == GX_FAULT_NONE && gx_fault_take(GX_FAULT_KERNEL))
		l.fault = GX_FAULT_KERNEL;
	l.batch_host = b;
	l.batch_dev = (GxBatch *) rt->device_view(dev, b);
	l.pages_dev = pages_dev[dev];
	l.scratch_dev = f->scratch;
	l.scratch_bytes = f->scratch_bytes;
	l.task_dev = task ? task->mem : NULL;
	l.task_bytes = task ? task->bytes : 0;
	l.task2_dev = f->task2 ? f->task2->mem : NULL;
	l.cache_dev = ctask ? ctask->mem : NULL;
	if (gx_kind_creates_task(s->kind))
	{
		l.scratch_dev = task->mem;
		l.scratch_bytes = task->bytes;
	}
	/* (a column cache's copy is not recorded: such batches are not captured) */
	if (l.fault == GX_FAULT_NONE && b->cache_slot == 0)
		gx_capture_request(s->kind, b, s->arena_len, l.scratch_bytes,
						   task ? task->id : 0, f->task2 ? f->task2->id : 0);
	if (l.batch_dev == NULL || l.pages_dev == NULL ||
		rt->launch(dev, &l, &f->handle, err, sizeof(err)) != 0)
	{
		if (l.batch_dev == NULL || l.pages_dev == NULL)
			strlcpy(err, "host memory is not mapped for the device", sizeof(err));
		release_scratch(f);
		end_task_use(f);
		if (gx_kind_creates_task(s->kind))
			release_task(task);
		finish_request(slot_index, GX_ERR_DEVICE, err, 0);
		return;
	}
	s->device = dev;
	elog(DEBUG2, "gpuext GPU service: request in slot %u launched on device %d", slot_index, dev);
	f->bytes_read = gx_kind_reads_pages(s->kind) ? (uint64) (b->npages - ncached) * GX_BLCKSZ : 0;
	device_load[dev]++;
	ninflight++;
}

/* Remove inflight[i], keeping the array dense. */
static void
drop_inflight(int i)
{
	device_load[inflight[i].device]--;
	inflight[i] = inflight[--ninflight];
}

/* Fail every request in flight on a device after a sticky error. */
static void
fail_device(int dev, const char *msg)
{
	char		err[GX_ERRLEN];

	for (int i = ninflight - 1; i >= 0; i--)
	{
		if (inflight[i].device != dev)
			continue;
		finish_request(inflight[i].slot_index, GX_ERR_DEVICE, msg, 0);
		/* the reset below releases the device memory itself */
		pg_atomic_fetch_sub_u64(&gx_shared->device_mem_used[dev], inflight[i].scratch_bytes);
		drop_inflight(i);
	}
	/* the reset frees every allocation of the device: tasks are lost */
	for (int i = 0; i < GX_MAX_TASKS; i++)
		if (tasks[i].id != 0 && tasks[i].device == dev && tasks[i].mem != NULL)
		{
			pg_atomic_fetch_sub_u64(&gx_shared->device_mem_used[dev], tasks[i].bytes);
			tasks[i].mem = NULL;
			tasks[i].inflight = 0;
			if (tasks[i].destroy_pending)
				memset(&tasks[i], 0, sizeof(tasks[i]));
		}
	ereport(LOG,
			(errmsg("gpuext GPU service resetting device %d", dev),
			 errdetail("%s", msg)));
	if (rt->reset(dev, err, sizeof(err)) != 0)
		ereport(FATAL,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("gpuext GPU service could not reset device %d", dev),
				 errdetail("%s", err)));
	pages_dev[dev] = rt->device_view(dev, BufferBlocks);
}

/*
 * Check every request in flight: pass cancellations to running kernels,
 * and finish those that completed.  Returns true if any finished.
 */
static bool
poll_inflight(void)
{
	bool		progress = false;

	/* every abort first: finishing one request must not wait behind another */
	for (int i = 0; i < ninflight; i++)
	{
		Inflight   *f = &inflight[i];
		GxSlot	   *s = gx_slot(f->slot_index);

		if (!f->abort_sent && (pg_atomic_read_u32(&s->cancel) ||
							   pg_atomic_read_u32(&s->state) == GX_SLOT_ABANDONED))
		{
			slot_batch(s)->abort_flag = 1;
			f->abort_sent = true;
			elog(DEBUG2, "gpuext GPU service: request in slot %d (kind %d) is cancelled on the device",
				 f->slot_index, s->kind);
		}
	}
	for (int i = ninflight - 1; i >= 0; i--)
	{
		Inflight   *f = &inflight[i];
		GxSlot	   *s = gx_slot(f->slot_index);
		float		ms = 0;
		int			sticky = 0;
		int			rc;
		char		err[GX_ERRLEN];
		ServiceTask *created;
		GxBatch    *b = slot_batch(s);

		rc = rt->poll(f->device, f->handle, &ms, &sticky, err, sizeof(err));
		if (rc == 0)
			continue;
		progress = true;
		/*
		 * A task a create or build request made is the backend's only if
		 * the request succeeds; cancelled or failed, nobody owns it: free it
		 * here (its owner is alive, so no orphan sweep would).
		 */
		created = gx_kind_creates_task(s->kind) ? f->task : NULL;
		if (rc < 0)
		{
			int			dev = f->device;

			if (sticky)
			{
				fail_device(dev, err);
				return true;	/* the array changed under us */
			}
			release_scratch(f);
			end_task_use(f);
			if (created)
				release_task(created);
			finish_request(f->slot_index, GX_ERR_DEVICE, err, ms);
			drop_inflight(i);
			continue;
		}
		release_scratch(f);
		end_task_use(f);
		pg_atomic_fetch_add_u64(&gx_shared->device_time_us, (uint64) (ms * 1000.0f));
		pg_atomic_fetch_add_u64(&gx_shared->bytes_read, f->bytes_read);
		if (created && (f->abort_sent || b->kernel_error != GX_KERR_NONE))
			release_task(created);
		if (f->abort_sent)
			finish_request(f->slot_index, GX_ERR_CANCELLED, "cancelled", ms);
		else if (b->kernel_error != GX_KERR_NONE)
			finish_request(f->slot_index, GX_ERR_DEVICE,
						   b->kernel_error == GX_KERR_INJECTED ?
						   "kernel reported an error (injected fault)" :
						   "kernel reported a malformed device program", ms);
		else
			finish_request(f->slot_index, GX_OK, NULL, ms);
		drop_inflight(i);
	}
	return progress;
}

/* Refresh the free-memory figures that gpuext_devices() shows. */
static void
refresh_device_info(void)
{
	for (int d = 0; d < ndevices; d++)
	{
		uint64_t	f,
					t;

		if (rt->mem_info(d, &f, &t) == 0)
			gx_shared->devices[d].mem_free = f;
	}
}

/*
 * Exit callback: stop kernels, release every device, and fail every
 * request the service holds or that is still queued, so that waiting
 * backends get an ERROR (or fall back) instead of a hang.
 */
static void
service_on_exit(int code, Datum arg)
{
	uint32		idx;

	gx_capture_close();
	for (int i = 0; i < ninflight; i++)
		slot_batch(gx_slot(inflight[i].slot_index))->abort_flag = 1;
	if (cuda_initialised)
		rt->shutdown();
	cuda_initialised = false;
	for (int i = 0; i < ninflight; i++)
		finish_request(inflight[i].slot_index, GX_ERR_SERVICE_GONE,
					   "the GPU service stopped", 0);
	ninflight = 0;
	for (int d = 0; d < GX_MAX_DEVICES; d++)
		pg_atomic_write_u64(&gx_shared->device_mem_used[d], 0);
	while (gx_queue_pop(&idx))
	{
		GxSlot	   *s = gx_slot(idx);
		uint32		expected = GX_SLOT_QUEUED;

		/* (detached requests free tasks, which go with the service anyway) */
		if (pg_atomic_compare_exchange_u32(&s->state, &expected, GX_SLOT_RUNNING))
			finish_request(idx, s->detached ? GX_OK : GX_ERR_SERVICE_GONE,
						   s->detached ? NULL : "the GPU service stopped", 0);
		else if (expected == GX_SLOT_ABANDONED)
		{
			pg_atomic_fetch_add_u64(&gx_shared->requests_cancelled, 1);
			gx_arena_free(s->arena_off, s->arena_len);
			pg_atomic_write_u32(&s->state, GX_SLOT_FREE);
		}
	}
	SpinLockAcquire(&gx_shared->mutex);
	gx_shared->service_state = GX_SERVICE_STOPPED;
	gx_shared->service_pid = 0;
	gx_shared->service_latch = NULL;
	SpinLockRelease(&gx_shared->mutex);
}

/*
 * Start CUDA with every signal blocked, so that the threads the CUDA
 * runtime creates never run PostgreSQL's signal handlers.
 */
static int
init_cuda(char *err, int errlen)
{
	sigset_t	all,
				old;
	int			rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = gxr_init(&ndevices, err, errlen);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/*
 * Without a GPU, with gpuext.debug_host_device: serve the debug requests
 * on the host test device (host_device.c).  The state stays "no gpu", so
 * queries keep to the CPU engine.
 */
static void
open_host_device(const char *why)
{
	GxDeviceProps props;

	rt = &gx_host_device_ops;
	ndevices = 1;
	pages_dev[0] = (const unsigned char *) BufferBlocks;
	device_load[0] = 0;
	gx_host_device_props(&props);
	ereport(LOG,
			(errmsg("gpuext GPU service found no GPU; the %s serves debug requests (gpuext.debug_host_device)",
					props.name),
			 errdetail("%s", why)));
	set_state(GX_SERVICE_NO_GPU, "no GPU: the host test device serves debug requests only");
}

/* Open every device, register shared memory, publish device info. */
static void
service_setup(void)
{
	char		err[GX_ERRLEN];
	instr_time	t0,
				t1;

	err[0] = '\0';
	if (init_cuda(err, sizeof(err)) != 0)
	{
		ereport(LOG,
				(errmsg("gpuext GPU service could not initialise CUDA"),
				 errdetail("%s", err)));
		ndevices = 0;
		set_state(GX_SERVICE_NO_GPU, err);
		if (gpuext_debug_host_device)
			open_host_device(err);
		return;
	}
	cuda_initialised = true;
	if (ndevices == 0 && gpuext_debug_host_device)
	{
		open_host_device(err[0] ? err : "no GPU found");
		return;
	}
	if (ndevices == 0)
	{
		ereport(LOG,
				(errmsg("gpuext GPU service found no GPU; offloaded work runs on the CPU engine"),
				 errdetail("%s", err)));
		set_state(GX_SERVICE_NO_GPU, err[0] ? err : "no GPU found");
		return;
	}

	INSTR_TIME_SET_CURRENT(t0);
	if (gxr_register_host(BufferBlocks, (size_t) NBuffers * BLCKSZ, err, sizeof(err)) != 0 ||
		gxr_register_host(gx_arena, gx_shared->arena_size, err, sizeof(err)) != 0)
	{
		ereport(LOG,
				(errmsg("gpuext GPU service could not register shared memory with the GPU"),
				 errdetail("%s", err)));
		gxr_shutdown();
		cuda_initialised = false;
		ndevices = 0;
		set_state(GX_SERVICE_NO_GPU, err);
		return;
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);

	for (int d = 0; d < ndevices; d++)
	{
		GxDeviceProps props;

		if (gxr_device_props(d, &props, err, sizeof(err)) != 0)
			memset(&props, 0, sizeof(props));
		pages_dev[d] = gxr_device_view(d, BufferBlocks);
		device_load[d] = 0;
		SpinLockAcquire(&gx_shared->mutex);
		gx_shared->devices[d] = props;
		SpinLockRelease(&gx_shared->mutex);
		ereport(LOG,
				(errmsg("gpuext GPU service: device %d is %s (%d SMs, compute capability %d.%d, %.1f GB)",
						d, props.name, props.sm_count, props.cc_major, props.cc_minor,
						props.mem_total / 1e9)));
	}
	SpinLockAcquire(&gx_shared->mutex);
	gx_shared->ndevices = ndevices;
	SpinLockRelease(&gx_shared->mutex);
	ereport(LOG,
			(errmsg("gpuext GPU service registered %.1f MB of shared buffers and %.1f MB of DMA arena in %.3f s",
					(double) NBuffers * BLCKSZ / 1e6, gx_shared->arena_size / 1e6,
					INSTR_TIME_GET_DOUBLE(t1))));
	set_state(GX_SERVICE_READY, "");
}

/* Entry point of the background worker. */
void
gpuext_service_main(Datum arg)
{
	TimestampTz last_refresh = 0;
	uint32		busy_rounds = 0;
	TimestampTz idle_since = 0;
	bool		busy = false;
	bool		trimmed = true;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	SpinLockAcquire(&gx_shared->mutex);
	gx_shared->service_state = GX_SERVICE_STARTING;
	gx_shared->service_pid = MyProcPid;
	gx_shared->service_latch = MyLatch;
	gx_shared->generation++;
	if (gx_shared->service_started != 0)
		pg_atomic_fetch_add_u64(&gx_shared->service_restarts, 1);
	gx_shared->service_started = GetCurrentTimestamp();
	gx_shared->ndevices = 0;
	SpinLockRelease(&gx_shared->mutex);
	on_shmem_exit(service_on_exit, 0);

	service_setup();

	for (;;)
	{
		uint32		idx;
		bool		progress = false;

		if (ShutdownRequestPending)
			proc_exit(1);		/* non-zero: the postmaster restarts us */
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		ResetLatch(MyLatch);
		/* take new requests only while a device has a free launch slot */
		while (ninflight < Max(ndevices, 1) * GX_MAX_INFLIGHT && gx_queue_pop(&idx))
		{
			start_request(idx);
			progress = true;
		}
		if (ninflight > 0)
			progress |= poll_inflight();

		/* ended sessions' tasks are freed under load too, once a second */
		if ((ninflight > 0 || progress) && (++busy_rounds & 1023) == 0 &&
			TimestampDifferenceExceeds(last_refresh, GetCurrentTimestamp(), 1000))
		{
			collect_orphan_tasks();
			sweep_cache_tasks();
			last_refresh = GetCurrentTimestamp();
		}

		if (ninflight > 0)
		{
			/* work in flight: poll again soon, yielding the core meanwhile */
			if (!progress)
				sched_yield();
			busy = true;
			continue;
		}
		if (progress)
		{
			busy = true;
			continue;
		}
		if (busy)
		{
			/* idle from now: the clock is read once, not every poll */
			idle_since = GetCurrentTimestamp();
			busy = false;
			trimmed = false;
		}

		if (TimestampDifferenceExceeds(last_refresh, GetCurrentTimestamp(), 1000))
		{
			/*
			 * Idle for a while: the memory pools give their memory back.  Not
			 * at the first idle moment: queries that come seconds apart would
			 * each allocate their device memory afresh (mapping it again).
			 */
			if (!trimmed &&
				TimestampDifferenceExceeds(idle_since, GetCurrentTimestamp(), POOL_TRIM_IDLE_MS))
			{
				for (int d = 0; d < ndevices; d++)
					rt->trim(d);
				trimmed = true;
			}
			refresh_device_info();
			collect_orphan_tasks();
			sweep_cache_tasks();
			last_refresh = GetCurrentTimestamp();
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
	}
}
