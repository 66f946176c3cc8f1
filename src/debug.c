/*-------------------------------------------------------------------------
 * debug.c
 *		Superuser-only SQL functions that exercise the GPU service for
 *		tests: injected faults, tasks, and requests as a backend could
 *		send them, malformed ones included.
 *
 * They are revoked from PUBLIC and check for a superuser themselves.  On a
 * machine without a GPU the service answers them on the host test device
 * (gpuext.debug_host_device), so that what the service does with tasks and
 * requests is tested without one.
 *
 * IDENTIFICATION
 *		src/debug.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "gx_agg.h"

PG_FUNCTION_INFO_V1(gpuext_debug_inject_faults);
PG_FUNCTION_INFO_V1(gpuext_debug_task_create);
PG_FUNCTION_INFO_V1(gpuext_debug_task_destroy);
PG_FUNCTION_INFO_V1(gpuext_debug_request);

/* ERROR unless a superuser calls 'fn' with the service's shared state. */
static void
debug_function_allowed(const char *fn)
{
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser to use %s", fn)));
	if (!gpuext_preloaded || gx_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("gpuext must be loaded via shared_preload_libraries"),
				 errhint("Add gpuext to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/*
 * gpuext_debug_inject_fault(kind, count): the next 'count' device launches
 * ('kernel') or device allocations ('alloc'), of any backend, fail as a
 * kernel error or cudaErrorMemoryAllocation does; 'none' clears both.  The
 * GPU service and the CPU engine (which stands for a device in its
 * launches and allocations) take them from the same shared counters.
 */
Datum
gpuext_debug_inject_faults(PG_FUNCTION_ARGS)
{
	char	   *kind = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		count = PG_GETARG_INT32(1);

	debug_function_allowed("gpuext_debug_inject_fault");
	if (count < 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("fault count must not be negative")));
	if (strcmp(kind, "kernel") == 0)
		pg_atomic_write_u32(&gx_shared->fault_kernel, (uint32) count);
	else if (strcmp(kind, "alloc") == 0)
		pg_atomic_write_u32(&gx_shared->fault_alloc, (uint32) count);
	else if (strcmp(kind, "none") == 0)
	{
		pg_atomic_write_u32(&gx_shared->fault_kernel, 0);
		pg_atomic_write_u32(&gx_shared->fault_alloc, 0);
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid fault kind \"%s\"", kind),
				 errhint("Valid kinds are \"kernel\", \"alloc\" and \"none\".")));
	PG_RETURN_VOID();
}

/*
 * Create a group table as gx_task_create does, its requests naming
 * owner_pid (0: this process's) as their owner's pid.
 */
static uint32
task_create_as(int owner_pid, uint64 bytes, uint64 capacity, int *status, char *err)
{
	volatile uint32 task = 0;

	gx_debug_owner_pid = owner_pid;
	PG_TRY();
	{
		task = gx_task_create(bytes, capacity, capacity * 7 / 10, status, err);
	}
	PG_FINALLY();
	{
		gx_debug_owner_pid = 0;
	}
	PG_END_TRY();
	return task;
}

/*
 * gpuext_debug_task_create(bytes, keep, owner_pid): a group table of
 * 'bytes' (entries of 16 bytes) in device memory.  keep: 'query' (freed
 * at the statement's end), 'session' (at the session's end, or a
 * transaction abort), 'none' (never by this backend: the service frees it
 * once this session has ended).  owner_pid, when not NULL, is the pid the
 * request names as its owner's (as if the backend's pid were another
 * process's, one that took it over).  Returns the task id.
 */
Datum
gpuext_debug_task_create(PG_FUNCTION_ARGS)
{
	int64		bytes;
	char	   *keep;
	uint64		capacity = 1;
	uint32		task;
	int			status;
	char		err[GX_ERRLEN];

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	bytes = PG_GETARG_INT64(0);
	keep = text_to_cstring(PG_GETARG_TEXT_PP(1));
	debug_function_allowed("gpuext_debug_task_create");
	if (bytes < GX_AGG_TABLE_HEADER + 16 || bytes > (int64) 1024 * 1024 * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("task size must be between %d and 1073741824 bytes",
						GX_AGG_TABLE_HEADER + 16)));
	if (strcmp(keep, "query") != 0 && strcmp(keep, "session") != 0 &&
		strcmp(keep, "none") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid keep \"%s\"", keep),
				 errhint("Valid values are \"query\", \"session\" and \"none\".")));
	while (GX_AGG_TABLE_HEADER + capacity * 2 * 16 <= (uint64) bytes)
		capacity *= 2;

	task = task_create_as(PG_ARGISNULL(2) ? 0 : PG_GETARG_INT32(2), (uint64) bytes, capacity,
						  &status, err);
	if (task == 0)
		gx_report_failure(status, err);
	if (strcmp(keep, "session") == 0)
		gx_task_keep_for_session(task, 0);
	else if (strcmp(keep, "none") == 0)
		gx_task_forget(task);
	PG_RETURN_INT64(task);
}

/* gpuext_debug_task_destroy(task): free a task (gx_task_destroy). */
Datum
gpuext_debug_task_destroy(PG_FUNCTION_ARGS)
{
	int64		task = PG_GETARG_INT64(0);

	debug_function_allowed("gpuext_debug_task_destroy");
	if (task <= 0 || task > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("task id out of range")));
	gx_task_destroy((uint32) task);
	PG_RETURN_VOID();
}

/*
 * The batch of a debug request of kind 'kind' at b (len bytes): 'fetch'
 * (entries [first, first + count) of group table 'task', 16 bytes each),
 * 'page_count' (count pages, each shared buffer 'first' with one line
 * pointer) or 'noop'; its output area takes out_bytes, whatever the
 * request needs.
 */
static void
fill_debug_batch(GxBatch *b, int kind, int64 task, int64 first, int64 count,
				 Size out_bytes)
{
	Size		head = TYPEALIGN(16, sizeof(GxBatch));

	memset(b, 0, sizeof(GxBatch));
	b->kind = kind;
	b->task_id = (uint32) task;
	b->pages_offset = head;
	b->program_offset = head;
	b->out_offset = head;
	if (kind == GX_REQ_TASK_FETCH)
	{
		b->arg = (uint64) first;
		b->arg2 = (uint64) count;
		b->program_len = 16;
	}
	else if (kind == GX_REQ_PAGE_COUNT)
	{
		GxPageRef  *refs = (GxPageRef *) ((char *) b + head);

		b->npages = (uint32) count;
		for (int64 i = 0; i < count; i++)
		{
			memset(&refs[i], 0, sizeof(GxPageRef));
			refs[i].buf_id = (uint32) first;
			refs[i].nline = 1;
			refs[i].flags = GX_PAGE_ALL_VISIBLE;
		}
		b->out_offset = TYPEALIGN(16, head + count * sizeof(GxPageRef));
	}
	b->out_len = (uint32) out_bytes;
}

/*
 * gpuext_debug_request(kind, engine, task, first, count, out_bytes): send
 * one request as a backend would, well-formed or not, to 'service' (the
 * GPU service, which must have a GPU or the host test device) or 'cpu'
 * (the CPU engine; 'page_count' only), and return its result: the entries
 * a fetch copied, the line pointers a page count found.  out_bytes (NULL:
 * what the request needs) sizes the output area, and the batch ends with
 * it.  A malformed request must end in an ERROR.
 */
Datum
gpuext_debug_request(PG_FUNCTION_ARGS)
{
	char	   *kindname;
	char	   *engine;
	int64		task,
				first,
				count;
	int			kind;
	Size		need,
				out_bytes,
				head = TYPEALIGN(16, sizeof(GxBatch));
	int64		result = 0;

	for (int i = 0; i < 5; i++)
		if (PG_ARGISNULL(i))
			PG_RETURN_NULL();
	kindname = text_to_cstring(PG_GETARG_TEXT_PP(0));
	engine = text_to_cstring(PG_GETARG_TEXT_PP(1));
	task = PG_GETARG_INT64(2);
	first = PG_GETARG_INT64(3);
	count = PG_GETARG_INT64(4);
	debug_function_allowed("gpuext_debug_request");

	if (strcmp(kindname, "fetch") == 0)
		kind = GX_REQ_TASK_FETCH;
	else if (strcmp(kindname, "page_count") == 0)
		kind = GX_REQ_PAGE_COUNT;
	else if (strcmp(kindname, "noop") == 0)
		kind = GX_REQ_NOOP;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid request kind \"%s\"", kindname),
				 errhint("Valid kinds are \"fetch\", \"page_count\" and \"noop\".")));
	if (strcmp(engine, "service") != 0 && strcmp(engine, "cpu") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid engine \"%s\"", engine),
				 errhint("Valid engines are \"service\" and \"cpu\".")));
	if (task < 0 || task > PG_UINT32_MAX || first < 0 || first > PG_UINT32_MAX ||
		count < 0 || count > 65536)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("task, first or count out of range")));
	if (kind == GX_REQ_TASK_FETCH)
		need = GX_AGG_TABLE_HEADER + count * 16;
	else if (kind == GX_REQ_PAGE_COUNT)
		need = count * sizeof(GxPageCount);
	else
		need = 0;
	out_bytes = PG_ARGISNULL(5) ? need : (Size) Max(PG_GETARG_INT64(5), 0);
	if (out_bytes > 64 * 1024 * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("output area out of range")));
	/* the batch: header, pages, and exactly out_bytes of output area */
	head = TYPEALIGN(16, head + (kind == GX_REQ_PAGE_COUNT ? count * sizeof(GxPageRef) : 0));

	if (strcmp(engine, "service") == 0)
	{
		GxRequest  *req = gx_request_create(head + out_bytes);
		int			status;

		if (req == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("no room in the gpuext DMA arena")));
		fill_debug_batch(req->batch, kind, task, first, count, out_bytes);
		gx_request_submit(req, kind);
		status = gx_request_wait(req);
		if (status != GX_OK)
		{
			char		msg[GX_ERRLEN];

			strlcpy(msg, req->errmsg, sizeof(msg));
			gx_request_destroy(req);
			gx_report_failure(status, msg);
		}
		if (req->batch->kernel_error != GX_KERR_NONE)
		{
			gx_request_destroy(req);
			gx_report_failure(GX_ERR_DEVICE, "kernel reported an error");
		}
		if (kind == GX_REQ_TASK_FETCH)
			result = (int64) req->batch->result;
		else if (kind == GX_REQ_PAGE_COUNT)
			for (int64 i = 0; i < count; i++)
				result += ((GxPageCount *) gx_batch_out(req->batch))[i].nnormal;
		gx_request_destroy(req);
	}
	else
	{
		GxEngine	eng;
		GxPendingBatch pb;
		GxBatch    *b;

		if (kind == GX_REQ_TASK_FETCH)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the CPU engine runs no fetch requests")));
		gx_engine_start_with_mode(&eng, GPUEXT_DEVICE_CPU);
		b = gx_engine_batch_alloc(&eng, &pb, head + out_bytes);
		fill_debug_batch(b, kind, task, first, count, out_bytes);
		gx_engine_submit(&eng, &pb);
		gx_engine_wait(&eng, &pb);
		if (kind == GX_REQ_PAGE_COUNT)
			for (int64 i = 0; i < count; i++)
				result += ((GxPageCount *) gx_batch_out(b))[i].nnormal;
		gx_engine_batch_free(&pb);
	}
	PG_RETURN_INT64(result);
}
