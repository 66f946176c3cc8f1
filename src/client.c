/*-------------------------------------------------------------------------
 * client.c
 *		The backend side of GPU service requests: take a slot and arena
 *		space, submit, wait on the latch, cancel and clean up.
 *
 * A backend (or parallel worker) waits for its request on its own latch,
 * so statement_timeout and pg_cancel_backend interrupt the wait at once.
 * Requests belong to the resource owner that was current when they were
 * created: when it is released (at the end of the query, or because of
 * an error), requests still in flight are cancelled and their arena space
 * is freed only once the service let go of it.  Cleanup waits a short,
 * bounded time for that (GX_CLEANUP_WAIT_MS for all the requests of one
 * release together); a request the service has not let go of by then is
 * abandoned to the service, which frees it when its kernel ends.  Tasks
 * freed during cleanup are freed by detached requests, which the service
 * runs and frees without anyone waiting for them.
 *
 * IDENTIFICATION
 *		src/client.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include <signal.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "utils/memutils.h"

#include "quota.h"

/* every request this backend holds, in TopMemoryContext */
static dlist_head my_requests = DLIST_STATIC_INIT(my_requests);

static void destroy_task_request(uint32 task_id, bool cleanup);

/*
 * Tasks (device-resident state) this backend created and must free: with
 * the resource owner they were created under, or (owner NULL) kept for the
 * session until gx_task_destroy, the end of a transaction that aborts, or
 * the backend's exit.  A session task lives in the service that made it
 * (generation): a restarted service has none of them.
 */
typedef struct GxOwnedTask
{
	uint32		task_id;
	ResourceOwner owner;
	uint32		generation;		/* the service's, for session tasks */
	uint64		reserved;		/* its share of the device copy quota */
	dlist_node	node;
} GxOwnedTask;

static dlist_head my_tasks = DLIST_STATIC_INIT(my_tasks);

/*
 * How long cleanup (an error, a cancel, the end of a query, the process's
 * exit) waits for the service to let go of the requests it cancels, all
 * of them together: short, since it cannot be interrupted.
 */
#define GX_CLEANUP_WAIT_MS	100

/*
 * This process's session number (gx_proc_session), from its first request
 * on; 0 before.
 */
static uint64 my_session = 0;

/* the pid requests name as their owner's, when not 0 (debug.c) */
int			gx_debug_owner_pid = 0;

/*
 * Tasks to free whose destroy request could not be sent (no free request
 * slot or arena space during cleanup): sent at the next chance.  A task
 * left here when the process exits is freed by the service's sweep of
 * ended sessions.
 */
#define MAX_PENDING_DESTROYS 64
static uint32 pending_destroys[MAX_PENDING_DESTROYS];
static int	npending_destroys = 0;

/*
 * Is the service up with a GPU?  If not, *why says why (for EXPLAIN,
 * NOTICEs and gpuext_devices()).
 */
bool
gx_service_has_gpu(const char **why)
{
	int			state;

	if (!gpuext_preloaded || gx_shared == NULL)
	{
		*why = "gpuext is not in shared_preload_libraries";
		return false;
	}
	SpinLockAcquire(&gx_shared->mutex);
	state = gx_shared->service_state;
	SpinLockRelease(&gx_shared->mutex);
	switch (state)
	{
		case GX_SERVICE_READY:
			*why = NULL;
			return true;
		case GX_SERVICE_NO_GPU:
			*why = "the GPU service found no usable GPU";
			return false;
		case GX_SERVICE_STARTING:
		case GX_SERVICE_NOT_STARTED:
			*why = "the GPU service is starting";
			return false;
		default:
			*why = "the GPU service is not running";
			return false;
	}
}

/* Is the service that took this request still the one running? */
static bool
service_alive(uint32 generation)
{
	int			pid;
	uint32		gen;

	SpinLockAcquire(&gx_shared->mutex);
	pid = gx_shared->service_pid;
	gen = gx_shared->generation;
	SpinLockRelease(&gx_shared->mutex);
	if (pid == 0 || gen != generation)
		return false;
	/* a service killed without running its exit callback */
	return kill(pid, 0) == 0;
}

/* The monotonic clock, in microseconds. */
static uint64
now_us(void)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	return INSTR_TIME_GET_MICROSEC(now);
}

/* A free request slot of this backend (the first is 'first'), or -1 */
static int
free_slot(int first)
{
	for (int i = first; i < first + GX_SLOTS_PER_BACKEND; i++)
		if (pg_atomic_read_u32(&gx_slot(i)->state) == GX_SLOT_FREE)
			return i;
	return -1;
}

/*
 * Does the service hold one of this backend's slots for a request nobody
 * waits for (a detached one, an abandoned one)?  It frees the slot when
 * done, soon as a rule.
 */
static bool
slot_coming_back(int first)
{
	for (int i = first; i < first + GX_SLOTS_PER_BACKEND; i++)
	{
		uint32		state = pg_atomic_read_u32(&gx_slot(i)->state);

		if (state == GX_SLOT_ABANDONED || (state != GX_SLOT_FREE && gx_slot(i)->detached))
			return true;
	}
	return false;
}

/*
 * Reserve a request slot of this backend and 'batch_bytes' of DMA arena.
 * With may_wait, when every slot is taken and the service is about to
 * give one back (cleanup's requests), wait for it a short time,
 * interruptibly.  Returns NULL when either is exhausted; the caller then
 * uses the CPU engine (or waits for one of its requests in flight).
 */
static GxRequest *
request_create(Size batch_bytes, bool may_wait)
{
	GxRequest  *req;
	int			first = MyProc->pgprocno * GX_SLOTS_PER_BACKEND;
	int			slot_index = free_slot(first);
	uint64		off,
				len;

	if (slot_index < 0 && may_wait && slot_coming_back(first))
	{
		uint64		deadline = now_us() + GX_CLEANUP_WAIT_MS * 1000;

		while (slot_index < 0 && now_us() < deadline && slot_coming_back(first))
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 1, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			slot_index = free_slot(first);
		}
	}
	if (slot_index < 0)
		return NULL;
	gx_client_attach();
	if (!gx_arena_alloc(batch_bytes, &off, &len))
		return NULL;

	req = MemoryContextAllocZero(TopMemoryContext, sizeof(GxRequest));
	req->slot_index = slot_index;
	req->arena_off = off;
	req->arena_len = len;
	req->batch = (GxBatch *) (gx_arena + off);
	req->owner = CurrentResourceOwner;
	/* the slot is ours until we free it: no one else uses our indexes */
	pg_atomic_write_u32(&gx_slot(slot_index)->cancel, 0);
	dlist_push_tail(&my_requests, &req->node);
	return req;
}

/*
 * Reserve a request slot of this backend and 'batch_bytes' of DMA arena.
 * Returns NULL when either is exhausted; the caller then uses the CPU
 * engine (or waits for one of its requests in flight).
 */
GxRequest *
gx_request_create(Size batch_bytes)
{
	return request_create(batch_bytes, true);
}

/* How many of this backend's request slots are free now? */
int
gx_request_slots_free(void)
{
	int			first = MyProc->pgprocno * GX_SLOTS_PER_BACKEND;
	int			n = 0;

	for (int i = first; i < first + GX_SLOTS_PER_BACKEND; i++)
		if (pg_atomic_read_u32(&gx_slot(i)->state) == GX_SLOT_FREE)
			n++;
	return n;
}

static void wake_service(void);

/*
 * Hand a filled batch to the service; a detached one is the service's to
 * free once done (its owner never waits for it).
 */
static void
submit_request(GxRequest *req, int kind, bool detached)
{
	GxSlot	   *s = gx_slot(req->slot_index);

	Assert(!req->in_flight);
	s->owner_pid = gx_debug_owner_pid != 0 ? gx_debug_owner_pid : MyProcPid;
	s->owner_procno = MyProc->pgprocno;
	s->kind = kind;
	/* (no_dsm is the backend's own) */
	s->fault = gpuext_debug_inject_fault == GX_FAULT_NO_DSM ? GX_FAULT_NONE :
		gpuext_debug_inject_fault;
	s->mem_limit = gx_gpu_memory_limit_bytes();
	s->dbid = MyDatabaseId;
	s->task_quota = gpuext_max_tasks_per_database;
	s->arena_off = req->arena_off;
	s->arena_len = req->arena_len;
	s->status = GX_OK;
	s->errmsg[0] = '\0';
	req->batch->kind = kind;
	pg_atomic_write_u32(&s->cancel, 0);

	s->owner_session = my_session;
	/* a parallel worker belongs to its leader's group, others to their own */
	if (MyProc->lockGroupLeader != NULL && MyProc->lockGroupLeader != MyProc)
	{
		s->group_procno = MyProc->lockGroupLeader->pgprocno;
		s->group_session = pg_atomic_read_u64(gx_proc_session(s->group_procno));
	}
	else
	{
		s->group_procno = MyProc->pgprocno;
		s->group_session = my_session;
	}
	s->detached = detached;

	SpinLockAcquire(&gx_shared->mutex);
	s->generation = gx_shared->generation;
	SpinLockRelease(&gx_shared->mutex);

	pg_write_barrier();
	pg_atomic_write_u32(&s->state, GX_SLOT_QUEUED);
	req->in_flight = true;
	if (!gx_queue_push(req->slot_index))
	{
		/* cannot happen: the queue has room for every slot */
		pg_atomic_write_u32(&s->state, GX_SLOT_FREE);
		req->in_flight = false;
		elog(ERROR, "gpuext: submission queue is full");
	}
	wake_service();
}

/* Hand a filled batch to the service. */
void
gx_request_submit(GxRequest *req, int kind)
{
	submit_request(req, kind, false);
}

/* Collect the result of a finished request. */
static void
collect_result(GxRequest *req, int status_override, const char *msg)
{
	GxSlot	   *s = gx_slot(req->slot_index);

	pg_read_barrier();
	if (status_override >= 0)
	{
		req->status = status_override;
		strlcpy(req->errmsg, msg, sizeof(req->errmsg));
		req->device_ms = 0;
	}
	else
	{
		req->status = s->status;
		req->device_ms = s->device_ms;
		strlcpy(req->errmsg, s->errmsg, sizeof(req->errmsg));
	}
	req->in_flight = false;
}

/*
 * Try to take back a request from the service when it is gone.  Returns
 * true when the slot is ours again (the service will never touch it).
 */
static bool
reclaim_from_dead_service(GxSlot *s)
{
	uint32		expected = GX_SLOT_QUEUED;

	if (pg_atomic_compare_exchange_u32(&s->state, &expected, GX_SLOT_DONE))
		return true;
	if (expected == GX_SLOT_DONE)
		return true;
	expected = GX_SLOT_RUNNING;
	/* the service exited without finishing it: no kernel runs any more */
	return pg_atomic_compare_exchange_u32(&s->state, &expected, GX_SLOT_DONE) ||
		expected == GX_SLOT_DONE;
}

/*
 * Wait for a submitted request, interruptibly: a cancel or a timeout
 * raises its ERROR here and the resource owner cleanup cancels the
 * request.  Returns the request's GxStatus.
 */
int
gx_request_wait(GxRequest *req)
{
	GxSlot	   *s = gx_slot(req->slot_index);
	uint32		generation = s->generation;

	Assert(req->in_flight);
	for (;;)
	{
		if (pg_atomic_read_u32(&s->state) == GX_SLOT_DONE)
		{
			collect_result(req, -1, NULL);
			return req->status;
		}
		if (!service_alive(generation) && reclaim_from_dead_service(s))
		{
			collect_result(req, GX_ERR_SERVICE_GONE,
						   "the GPU service stopped while the request was pending");
			return req->status;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 gpuext_service_poll_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* Wake the service (a new request, a cancel). */
static void
wake_service(void)
{
	SpinLockAcquire(&gx_shared->mutex);
	if (gx_shared->service_latch)
		SetLatch(gx_shared->service_latch);
	SpinLockRelease(&gx_shared->mutex);
}

/* Ask the service to stop a request in flight (no wait). */
static void
cancel_request(GxRequest *req)
{
	pg_atomic_write_u32(&gx_slot(req->slot_index)->cancel, 1);
	wake_service();
}

/* The deadline of a cleanup that starts now: GX_CLEANUP_WAIT_MS ahead. */
static uint64
cleanup_deadline(void)
{
	return now_us() + GX_CLEANUP_WAIT_MS * 1000;
}

/*
 * Cancel a request in flight and wait, uninterruptibly, until the service
 * lets go of it or 'deadline' (now_us) passes.  Returns true if the slot
 * and arena space are ours to free; false if they were abandoned to the
 * service, which frees them when it is done with them (its kernel may
 * still read or write them).
 */
static bool
cancel_and_drain(GxRequest *req, uint64 deadline)
{
	GxSlot	   *s = gx_slot(req->slot_index);
	uint32		generation = s->generation;

	cancel_request(req);
	/* (never longer than one cleanup's wait, whatever the deadline) */
	deadline = Min(deadline, cleanup_deadline());
	for (;;)
	{
		uint32		state = pg_atomic_read_u32(&s->state);
		uint64		now;

		if (state == GX_SLOT_DONE)
			return true;
		if (!service_alive(generation) && reclaim_from_dead_service(s))
			return true;
		now = now_us();
		if (now >= deadline)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Min(Max((long) ((deadline - now) / 1000), 1), 5), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}

	/* hand it over; if it finished meanwhile, it is ours after all */
	for (;;)
	{
		uint32		expected = pg_atomic_read_u32(&s->state);

		if (expected == GX_SLOT_DONE)
			return true;
		if (pg_atomic_compare_exchange_u32(&s->state, &expected, GX_SLOT_ABANDONED))
		{
			pg_atomic_fetch_add_u64(&gx_shared->requests_abandoned, 1);
			ereport(LOG,
					(errmsg("gpuext: request in slot %d (kind %d) abandoned to the GPU service, which frees it",
							req->slot_index, s->kind),
					 errhidestmt(true)));
			return false;
		}
	}
}

/*
 * Free a request: cancel it if still in flight (waiting until 'deadline'
 * at most for the service to let go of it), release slot and arena.
 */
static void
request_destroy(GxRequest *req, uint64 deadline)
{
	bool		ours = true;
	uint32		unowned_task = 0;

	if (req->slot_index < 0)
		return;
	if (req->in_flight)
	{
		GxSlot	   *s = gx_slot(req->slot_index);

		ours = cancel_and_drain(req, deadline);
		/*
		 * A create or build that finished before the cancel reached the
		 * service made a task nobody will own (the service frees those it
		 * cancels itself): free it.
		 */
		if (ours && pg_atomic_read_u32(&s->state) == GX_SLOT_DONE && s->status == GX_OK &&
			gx_kind_creates_task(s->kind))
			unowned_task = (uint32) req->batch->result;
	}
	if (ours)
	{
		gx_arena_free(req->arena_off, req->arena_len);
		pg_atomic_write_u32(&gx_slot(req->slot_index)->state, GX_SLOT_FREE);
	}
	req->slot_index = -1;
	dlist_delete(&req->node);
	pfree(req);
	if (unowned_task != 0)
		destroy_task_request(unowned_task, true);
}

/* Free a request: cancel it if still in flight, release slot and arena. */
void
gx_request_destroy(GxRequest *req)
{
	request_destroy(req, cleanup_deadline());
}

/* A batch with no pages and no program; its output follows the header. */
static void
init_simple_batch(GxBatch *b, Size out_len)
{
	memset(b, 0, sizeof(GxBatch));
	b->pages_offset = sizeof(GxBatch);
	b->program_offset = sizeof(GxBatch);
	b->out_offset = TYPEALIGN(16, sizeof(GxBatch));
	b->out_len = out_len;
}

/*
 * Run a request with no pages or program (an empty round trip, a job of
 * the service) to completion, with 'bytes' of arena (at least room for
 * out_len bytes of output).  Raises the request's ERROR when it fails;
 * else the caller reads the output and destroys the request.
 */
GxRequest *
gx_request_run(int kind, Size bytes, Size out_len)
{
	GxRequest  *req = gx_request_create(Max(bytes, TYPEALIGN(16, sizeof(GxBatch)) + out_len));
	int			status;

	if (req == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("no room in the gpuext DMA arena")));
	init_simple_batch(req->batch, out_len);
	gx_request_submit(req, kind);
	status = gx_request_wait(req);
	if (status != GX_OK)
	{
		char		msg[GX_ERRLEN];

		strlcpy(msg, req->errmsg, sizeof(msg));
		gx_request_destroy(req);
		gx_report_failure(status, msg);
	}
	return req;
}

/*
 * Run a small request to completion, interruptibly.  Returns the status;
 * *req_out keeps the request for its results (the caller destroys it), or
 * is NULL when no slot or arena space was free.
 */
static int
run_request(Size bytes, int kind, void (*fill) (GxBatch *, void *), void *arg,
			GxRequest **req_out)
{
	GxRequest  *req = gx_request_create(bytes);

	*req_out = req;
	if (req == NULL)
		return GX_ERR_OUT_OF_MEMORY;
	init_simple_batch(req->batch, 0);
	fill(req->batch, arg);
	gx_request_submit(req, kind);
	return gx_request_wait(req);
}

/*
 * Send a small request without waiting for it (cleanup: an error, a
 * cancel, the process's exit): the service runs it and frees it.
 * Returns false when no request slot or arena space was free.
 */
static bool
send_detached(Size bytes, int kind, void (*fill) (GxBatch *, void *), void *arg)
{
	GxRequest  *req = request_create(bytes, false);

	if (req == NULL)
		return false;
	init_simple_batch(req->batch, 0);
	fill(req->batch, arg);
	submit_request(req, kind, true);
	/* the slot and its arena space are the service's now */
	req->slot_index = -1;
	dlist_delete(&req->node);
	pfree(req);
	return true;
}

/*
 * The id of the task a create request made, recorded as this backend's
 * under the current resource owner (destroyed with it if not before)
 */
static uint32
own_new_task(GxRequest *req)
{
	GxOwnedTask *t = MemoryContextAllocZero(TopMemoryContext, sizeof(GxOwnedTask));

	t->task_id = (uint32) req->batch->result;
	t->owner = CurrentResourceOwner;
	dlist_push_tail(&my_tasks, &t->node);
	return t->task_id;
}

/*
 * Run a request that makes a task (GX_REQ_TASK_CREATE, GX_REQ_JOIN_BUILD)
 * and record the task as this backend's.  Returns the task id, or 0 with
 * *status and errmsg set (a kernel error reported in the batch counts as
 * a device failure).
 */
static uint32
run_create_request(Size bytes, int kind, void (*fill) (GxBatch *, void *), void *arg,
				   int *status, char *errmsg)
{
	GxRequest  *req;
	uint32		id = 0;

	*status = run_request(bytes, kind, fill, arg, &req);
	if (*status == GX_OK && req->batch->kernel_error != GX_KERR_NONE)
		*status = GX_ERR_DEVICE;
	if (*status == GX_OK)
		id = own_new_task(req);
	else
		strlcpy(errmsg, req ? (req->errmsg[0] ? req->errmsg : "the device reported a kernel error") :
				"no room in the gpuext DMA arena", GX_ERRLEN);
	if (req)
		gx_request_destroy(req);
	return id;
}

typedef struct TaskCreateArgs
{
	uint64		bytes;
	uint64		capacity;
	uint64		max_groups;
} TaskCreateArgs;

static void
fill_task_create(GxBatch *b, void *arg)
{
	TaskCreateArgs *a = arg;

	b->reserve_bytes = a->bytes;
	b->arg = a->capacity;
	b->arg2 = a->max_groups;
}

/*
 * Create a group table of 'bytes' in device memory, owned by this backend
 * until gx_task_destroy or the end of the current resource owner.  Returns
 * the task id, or 0 with *status and errmsg set.
 */
uint32
gx_task_create(uint64 bytes, uint64 capacity, uint64 max_groups, int *status, char *errmsg)
{
	TaskCreateArgs a = {bytes, capacity, max_groups};

	return run_create_request(sizeof(GxBatch), GX_REQ_TASK_CREATE, fill_task_create, &a,
							  status, errmsg);
}

typedef struct JoinTaskArgs
{
	const void *tables;
	uint64		bytes;
	uint64		rows;
	uint32		near_task;
} JoinTaskArgs;

static void
fill_join_build(GxBatch *b, void *arg)
{
	JoinTaskArgs *a = arg;

	b->reserve_bytes = a->bytes;
	b->arg = a->rows;
	b->task_id = a->near_task;	/* build on that task's device */
	b->out_len = a->bytes;
	memcpy(gx_batch_out(b), a->tables, a->bytes);
}

/*
 * Create a task holding GpuJoin hash tables (GX_REQ_JOIN_BUILD): the block
 * of every depth's table ('bytes', laid out by cuda/gx_join.h with 'rows'
 * inner rows in all) is copied to device memory and the rows are inserted
 * there, on the device of task 'near_task' when not 0.  Owned like
 * gx_task_create's tasks.  Returns the task id, or 0 with *status and
 * errmsg set.
 */
uint32
gx_join_task_create(const void *tables, uint64 bytes, uint64 rows, uint32 near_task,
					int *status, char *errmsg)
{
	JoinTaskArgs a = {tables, bytes, rows, near_task};

	return run_create_request(TYPEALIGN(16, sizeof(GxBatch)) + bytes, GX_REQ_JOIN_BUILD,
							  fill_join_build, &a, status, errmsg);
}

/* One part of an index mirror on its way to a device task */
typedef struct MirrorPartArgs
{
	const void *part;
	uint64		part_bytes;
	uint64		total_bytes;	/* the whole mirror (the request that creates the task) */
	uint64		offset;			/* where the part goes in the task */
	uint32		task_id;		/* (the requests that add a part) */
} MirrorPartArgs;

static void
fill_mirror_part(GxBatch *b, void *arg)
{
	MirrorPartArgs *a = arg;

	b->reserve_bytes = a->total_bytes;
	b->arg = a->offset;
	b->task_id = a->task_id;
	b->out_len = a->part_bytes;
	memcpy(gx_batch_out(b), a->part, a->part_bytes);
}

/*
 * Create a task of total_bytes for an index mirror (kind GX_REQ_RTREE_LOAD
 * or GX_REQ_PTREE_LOAD), its first part_bytes sent with the request.
 * Owned like gx_task_create's tasks.  Returns the task id, or 0 with
 * *status and errmsg set.
 */
static uint32
mirror_task_load(int kind, const void *part, uint64 part_bytes, uint64 total_bytes,
				 int *status, char *errmsg)
{
	MirrorPartArgs a = {part, part_bytes, total_bytes, 0, 0};

	return run_create_request(TYPEALIGN(16, sizeof(GxBatch)) + part_bytes, kind,
							  fill_mirror_part, &a, status, errmsg);
}

/*
 * Copy bytes of a mirror into its task at offset (kind GX_REQ_RTREE_FILL or
 * GX_REQ_PTREE_UPLOAD).  Returns the status (a kernel-reported error counts
 * as a device failure), with errmsg set when it is not GX_OK.
 */
static int
mirror_task_add(int kind, uint32 task_id, const void *part, uint64 offset, uint64 bytes,
				char *errmsg)
{
	MirrorPartArgs a = {part, bytes, 0, offset, task_id};
	GxRequest  *req;
	int			status;

	status = run_request(TYPEALIGN(16, sizeof(GxBatch)) + bytes, kind,
						 fill_mirror_part, &a, &req);
	if (status == GX_OK && req->batch->kernel_error != GX_KERR_NONE)
	{
		status = GX_ERR_DEVICE;
		strlcpy(errmsg, "the GPU service rejected a part of an index mirror", GX_ERRLEN);
	}
	else if (status != GX_OK)
		strlcpy(errmsg, req ? req->errmsg : "no room in the gpuext DMA arena", GX_ERRLEN);
	if (req)
		gx_request_destroy(req);
	return status;
}

/*
 * Create a task holding an index mirror of 'bytes' (a gpuext_gist tree,
 * cuda/gx_rtree.h: GX_REQ_RTREE_LOAD then GX_REQ_RTREE_FILL; a gpuext_ptree
 * prefix tree, cuda/gx_ptree.h: GX_REQ_PTREE_LOAD then GX_REQ_PTREE_UPLOAD):
 * the load request reserves it and copies the first part, the add requests
 * the others, 'part' bytes at a time through the DMA arena.  Owned like
 * gx_task_create's tasks.  Returns the task id, or 0 with *status and
 * errmsg set (a part that fails frees the task).
 */
uint32
gx_mirror_task_create(int load_kind, int add_kind, const void *mirror, uint64 bytes,
					  uint64 part, int *status, char *errmsg)
{
	uint64		len = Min(bytes, part);
	uint32		id;

	id = mirror_task_load(load_kind, mirror, len, bytes, status, errmsg);
	if (id == 0)
		return 0;
	for (uint64 offset = len; offset < bytes; offset += len)
	{
		len = Min(bytes - offset, part);
		*status = mirror_task_add(add_kind, id, (const char *) mirror + offset,
								  offset, len, errmsg);
		if (*status != GX_OK)
		{
			gx_task_destroy(id);
			return 0;
		}
	}
	return id;
}

/* Drop this backend's record of a task, giving back its device copy quota. */
static void
forget_owned_task(GxOwnedTask *t)
{
	if (t->reserved > 0)
		gx_device_copy_release(t->reserved);
	dlist_delete(&t->node);
	pfree(t);
}

/* This backend's record of a task, or NULL */
static GxOwnedTask *
owned_task(uint32 task_id)
{
	dlist_iter	iter;

	dlist_foreach(iter, &my_tasks)
	{
		GxOwnedTask *t = dlist_container(GxOwnedTask, node, iter.cur);

		if (t->task_id == task_id)
			return t;
	}
	return NULL;
}

/* The generation of the service running now */
static uint32
service_generation(void)
{
	uint32		gen;

	SpinLockAcquire(&gx_shared->mutex);
	gen = gx_shared->generation;
	SpinLockRelease(&gx_shared->mutex);
	return gen;
}

/*
 * Keep a task this backend created beyond its resource owner: until
 * gx_task_destroy, an aborted transaction, or the backend's exit (for a
 * gpuext_ptree mirror used by one query after another).  'reserved' bytes
 * of the device copy quota (gx_device_copy_reserve) go with it, and are
 * given back when the task is freed or forgotten.
 */
void
gx_task_keep_for_session(uint32 task_id, uint64 reserved)
{
	GxOwnedTask *t = owned_task(task_id);

	if (t == NULL)
	{
		gx_device_copy_release(reserved);
		elog(ERROR, "gpuext: task %u is not this backend's", task_id);
	}
	t->owner = NULL;
	t->generation = service_generation();
	t->reserved = reserved;
}

/*
 * Is a session task still there?  Not after an aborted transaction freed
 * it, nor once the service that held it has been replaced (its record is
 * then forgotten: the id may name another task of the new service).
 */
bool
gx_session_task_valid(uint32 task_id)
{
	GxOwnedTask *t = owned_task(task_id);

	if (t == NULL || t->owner != NULL)
		return false;
	if (t->generation != service_generation())
	{
		forget_owned_task(t);
		return false;
	}
	return true;
}

/*
 * Free every session task (detached requests: no waits, no errors), those
 * of a replaced service only forgotten
 */
static void
release_session_tasks(void)
{
	dlist_mutable_iter iter;
	uint32		gen = service_generation();

	dlist_foreach_modify(iter, &my_tasks)
	{
		GxOwnedTask *t = dlist_container(GxOwnedTask, node, iter.cur);

		if (t->owner != NULL)
			continue;
		if (t->generation == gen)
			destroy_task_request(t->task_id, true);
		forget_owned_task(t);
	}
}

static void
fill_task_id(GxBatch *b, void *arg)
{
	b->task_id = *(uint32 *) arg;
}

/* Send the destroy requests that could not be sent before, while they go. */
static void
flush_pending_destroys(void)
{
	while (npending_destroys > 0)
	{
		if (!send_detached(sizeof(GxBatch), GX_REQ_TASK_DESTROY, fill_task_id,
						   &pending_destroys[npending_destroys - 1]))
			return;
		npending_destroys--;
	}
}

/*
 * Send the destroy request; errors are ignored (the task may be gone).
 * In cleanup, detached, without waiting; a destroy that cannot be sent
 * now is sent at the next cleanup (or the service frees the task when
 * this process has ended).
 */
static void
destroy_task_request(uint32 task_id, bool cleanup)
{
	GxRequest  *req;

	if (cleanup)
	{
		if (!send_detached(sizeof(GxBatch), GX_REQ_TASK_DESTROY, fill_task_id, &task_id) &&
			npending_destroys < MAX_PENDING_DESTROYS)
			pending_destroys[npending_destroys++] = task_id;
		return;
	}
	(void) run_request(sizeof(GxBatch), GX_REQ_TASK_DESTROY, fill_task_id, &task_id, &req);
	if (req)
		gx_request_destroy(req);
}

/*
 * Forget a task this backend created without freeing it (debug.c: a task
 * left to the service's sweep of ended sessions).
 */
void
gx_task_forget(uint32 task_id)
{
	GxOwnedTask *t = owned_task(task_id);

	if (t == NULL)
		elog(ERROR, "gpuext: task %u is not this backend's", task_id);
	forget_owned_task(t);
}

/* Free a task (any process of the query may: it was created by the leader). */
void
gx_task_destroy(uint32 task_id)
{
	dlist_mutable_iter iter;
	GxOwnedTask *own;

	if (task_id == 0)
		return;
	own = owned_task(task_id);
	/* (a session task of a service since replaced is gone with it) */
	if (own == NULL || own->owner != NULL || gx_session_task_valid(task_id))
		destroy_task_request(task_id, false);
	dlist_foreach_modify(iter, &my_tasks)
	{
		GxOwnedTask *t = dlist_container(GxOwnedTask, node, iter.cur);

		if (t->task_id == task_id)
			forget_owned_task(t);
	}
}

typedef struct TaskFetchArgs
{
	uint32		task_id;
	uint64		first;
	uint64		nslots;
	uint32		entry_size;
} TaskFetchArgs;

static void
fill_task_fetch(GxBatch *b, void *arg)
{
	TaskFetchArgs *a = arg;

	b->task_id = a->task_id;
	b->arg = a->first;
	b->arg2 = a->nslots;
	b->program_len = a->entry_size;
	b->out_len = GX_AGG_TABLE_HEADER_BYTES + a->nslots * a->entry_size;
}

/*
 * Copy the ready entries among slots [first, first + nslots) of a task's
 * group table to 'dest' (room for nslots entries), and the table header
 * to 'header' (64 bytes).  Returns the status; *count gets the entries.
 */
int
gx_task_fetch(uint32 task_id, uint64 first, uint64 nslots, uint32 entry_size,
			  void *dest, uint64 *count, void *header, char *errmsg)
{
	TaskFetchArgs a = {task_id, first, nslots, entry_size};
	GxRequest  *req;
	int			status;

	status = run_request(TYPEALIGN(16, sizeof(GxBatch)) + GX_AGG_TABLE_HEADER_BYTES +
						 nslots * entry_size,
						 GX_REQ_TASK_FETCH, fill_task_fetch, &a, &req);
	if (status == GX_OK)
	{
		const char *out = (const char *) req->batch + req->batch->out_offset;

		*count = req->batch->result;
		memcpy(header, out, GX_AGG_TABLE_HEADER_BYTES);
		memcpy(dest, out + GX_AGG_TABLE_HEADER_BYTES, *count * entry_size);
	}
	else
		strlcpy(errmsg, req ? req->errmsg : "no room in the gpuext DMA arena", GX_ERRLEN);
	if (req)
		gx_request_destroy(req);
	return status;
}

/*
 * Resource owner callback: free the requests (and tasks) of the owner
 * being released.  On commit a request still held is a bug in a node's
 * cleanup: say so.  A transaction that aborts also frees the session's
 * tasks (device memory is never kept past an error).
 */
static void
release_requests(ResourceReleasePhase phase, bool isCommit, bool isTopLevel, void *arg)
{
	dlist_mutable_iter iter;
	uint64		deadline;

	if (phase != RESOURCE_RELEASE_BEFORE_LOCKS)
		return;
	flush_pending_destroys();
	/* cancel every request first, so that the service stops them together */
	dlist_foreach_modify(iter, &my_requests)
	{
		GxRequest  *req = dlist_container(GxRequest, node, iter.cur);

		if (req->owner == CurrentResourceOwner && req->in_flight)
			cancel_request(req);
	}
	deadline = cleanup_deadline();
	dlist_foreach_modify(iter, &my_requests)
	{
		GxRequest  *req = dlist_container(GxRequest, node, iter.cur);

		if (req->owner != CurrentResourceOwner)
			continue;
		if (isCommit)
			elog(WARNING, "gpuext: request %d was not released at the end of its query",
				 req->slot_index);
		request_destroy(req, deadline);
	}
	dlist_foreach_modify(iter, &my_tasks)
	{
		GxOwnedTask *t = dlist_container(GxOwnedTask, node, iter.cur);

		if (t->owner != CurrentResourceOwner)
			continue;
		destroy_task_request(t->task_id, true);
		forget_owned_task(t);
	}
	if (!isCommit && isTopLevel && CurrentResourceOwner == TopTransactionResourceOwner)
		release_session_tasks();
}

/*
 * Process exit (FATAL, pg_terminate_backend): release every request, and
 * the session's tasks (the service would free them too, once it sees the
 * process gone, but later).
 */
static void
release_all_requests(int code, Datum arg)
{
	dlist_mutable_iter iter;
	uint64		deadline;

	if (gx_shared == NULL)
		return;
	dlist_foreach_modify(iter, &my_requests)
	{
		GxRequest  *req = dlist_container(GxRequest, node, iter.cur);

		if (req->in_flight)
			cancel_request(req);
	}
	deadline = cleanup_deadline();
	dlist_foreach_modify(iter, &my_requests)
		request_destroy(dlist_container(GxRequest, node, iter.cur), deadline);
	release_session_tasks();
	flush_pending_destroys();
	/* the session has ended: the service frees whatever task of it is left */
	pg_atomic_write_u64(gx_proc_session(MyProc->pgprocno), 0);
	wake_service();
}

/* Install the callbacks; from _PG_init under shared_preload_libraries. */
void
gx_client_init(void)
{
	RegisterResourceReleaseCallback(release_requests, NULL);
}

/*
 * Called once per backend before its first request: take a session
 * number, and release the requests on process exit.
 */
void
gx_client_attach(void)
{
	static bool attached = false;

	if (attached)
		return;
	my_session = pg_atomic_add_fetch_u64(&gx_shared->next_session, 1);
	pg_atomic_write_u64(gx_proc_session(MyProc->pgprocno), my_session);
	before_shmem_exit(release_all_requests, 0);
	attached = true;
}
