/*-------------------------------------------------------------------------
 * engine.c
 *		Where a batch runs: on the GPU through the service, or on the CPU
 *		engine in the backend; and what happens when the GPU fails.
 *
 * A node decides its engine when it starts (gpuext.device and whether the
 * service has a GPU).  Batches are built in the DMA arena for the GPU and
 * in backend memory for the CPU engine.  When the GPU fails on a batch
 * (out of device memory, a kernel or device error, the service gone),
 * gpuext.cpu_fallback decides: rerun that batch on the CPU engine (on,
 * notice) or raise an ERROR with a specific SQLSTATE (off).  After a
 * fallback the rest of the node runs on the CPU engine.
 *
 * IDENTIFICATION
 *		src/engine.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

/* Raise the ERROR that matches a failed request's status. */
void
gx_report_failure(int status, const char *msg)
{
	switch (status)
	{
		case GX_ERR_OUT_OF_MEMORY:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of GPU memory"),
					 errdetail("%s", msg),
					 errhint("Raise gpuext.gpu_memory_limit, or set gpuext.cpu_fallback to on to run on the CPU engine.")));
			break;
		case GX_ERR_CANCELLED:
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("canceling statement due to user request")));
			break;
		case GX_ERR_SERVICE_GONE:
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("the gpuext GPU service stopped while running a request"),
					 errdetail("%s", msg),
					 errhint("The service restarts by itself; set gpuext.cpu_fallback to on to run on the CPU engine meanwhile.")));
			break;
		case GX_ERR_NO_DEVICE:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("no GPU is available to gpuext"),
					 errdetail("%s", msg),
					 errhint("Set gpuext.device to auto or cpu, or gpuext.cpu_fallback to on.")));
			break;
		case GX_ERR_BAD_REQUEST:
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("gpuext: the GPU service rejected a malformed request"),
					 errdetail("%s", msg)));
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("GPU device error"),
					 errdetail("%s", msg),
					 errhint("Set gpuext.cpu_fallback to on to rerun failed batches on the CPU engine.")));
	}
}

/*
 * A device table (a join's hash tables, an index's mirror) could not be
 * loaded, and what was to use it runs elsewhere ('instead' says what).  Too
 * large for the device, a limit or the arena (GX_ERR_OUT_OF_MEMORY) is a
 * decision; any other failure is an ERROR when gpuext.cpu_fallback is off.
 * With 'notice', a NOTICE says what runs instead and why.
 */
void
gx_device_table_unavailable(int status, const char *err, const char *instead)
{
	if (status != GX_ERR_OUT_OF_MEMORY && gpuext_cpu_fallback == GPUEXT_FALLBACK_OFF)
		gx_report_failure(status, err);
	if (gpuext_cpu_fallback == GPUEXT_FALLBACK_NOTICE)
		ereport(NOTICE, (errmsg("%s", instead), errdetail("%s", err)));
	gx_count_fallback();
}

/*
 * Count a fallback in gpuext_status(): work meant for the GPU that runs
 * elsewhere because a GPU request failed (or could not be made).
 */
void
gx_count_fallback(void)
{
	if (gx_shared)
		pg_atomic_fetch_add_u64(&gx_shared->fallbacks, 1);
}

/*
 * The GPU could not run a batch: apply gpuext.cpu_fallback.  Returns
 * normally when the batch should run on the CPU engine instead.
 */
static void
fall_back(GxEngine *engine, int status, const char *msg)
{
	if (gpuext_cpu_fallback == GPUEXT_FALLBACK_OFF || status == GX_ERR_BAD_REQUEST)
		gx_report_failure(status, msg);
	/* (operators that recover otherwise say so themselves) */
	if (gpuext_cpu_fallback == GPUEXT_FALLBACK_NOTICE && !engine->fallback_noticed &&
		engine->rerun_on_cpu)
		ereport(NOTICE,
				(errmsg("gpuext fell back to the CPU engine"),
				 errdetail("%s", msg)));
	engine->failed = true;
	strlcpy(engine->failure, msg, sizeof(engine->failure));
	engine->fallback_noticed = true;
	engine->use_gpu = false;
	engine->fallback_batches++;
	gx_count_fallback();
}

/* Decide the engine of a node that is starting. */
void
gx_engine_start(GxEngine *engine)
{
	const char *why = NULL;
	bool		has_gpu;

	memset(engine, 0, sizeof(*engine));
	engine->rerun_on_cpu = true;
	if (gpuext_device_mode == GPUEXT_DEVICE_CPU)
		return;
	has_gpu = gx_service_has_gpu(&why);
	if (has_gpu)
		engine->use_gpu = true;
	else if (gpuext_device_mode == GPUEXT_DEVICE_GPU)
	{
		fall_back(engine, GX_ERR_NO_DEVICE, why);
		/* not a failed batch: the node simply runs on the CPU engine */
		engine->failed = false;
		engine->fallback_batches = 0;
	}
}

/* Decide the engine as if gpuext.device were 'device_mode'. */
void
gx_engine_start_with_mode(GxEngine *engine, int device_mode)
{
	int			saved = gpuext_device_mode;

	gpuext_device_mode = device_mode;
	PG_TRY();
	{
		gx_engine_start(engine);
	}
	PG_FINALLY();
	{
		gpuext_device_mode = saved;
	}
	PG_END_TRY();
}

const char *
gx_engine_name(const GxEngine *engine)
{
	return engine->use_gpu ? "GPU" : "CPU engine";
}

/*
 * Allocate the memory of one batch: DMA arena space for the GPU, backend
 * memory for the CPU engine.  The GxBatch header is zeroed.
 */
GxBatch *
gx_engine_batch_alloc(GxEngine *engine, GxPendingBatch *pb, Size size)
{
	memset(pb, 0, sizeof(*pb));
	pb->size = size;
	if (engine->use_gpu)
	{
		pb->req = gx_request_create(size);
		if (pb->req)
			pb->batch = pb->req->batch;
		else
		{
			fall_back(engine, GX_ERR_OUT_OF_MEMORY,
					  "the gpuext DMA arena has no room for the batch");
			if (engine->rerun_on_cpu)
				engine->failed = false;
		}
	}
	if (pb->batch == NULL)
		pb->batch = palloc(size);
	memset(pb->batch, 0, sizeof(GxBatch));
	return pb->batch;
}

/*
 * Start a filled batch: submitted to the GPU, or run now on the CPU engine.
 * The CPU engine stands for a device here: a fault injected with
 * gpuext_debug_inject_fault() fails its allocation or its launch as the
 * service fails a GPU's (out of device memory, a kernel error), and the
 * failure takes the same way (gx_engine_wait).
 */
void
gx_engine_submit(GxEngine *engine, GxPendingBatch *pb)
{
	/* after an unrecovered failure the caller is abandoning the work */
	if (engine->failed)
		return;
	engine->pages += pb->batch->npages;
	if (pb->req)
	{
		gx_request_submit(pb->req, pb->batch->kind);
		pb->in_flight = true;
		return;
	}
	pb->cpu_status = GX_OK;
	if (gx_fault_take(GX_FAULT_ALLOC))
	{
		pb->cpu_status = GX_ERR_OUT_OF_MEMORY;
		return;
	}
	if (gx_fault_take(GX_FAULT_KERNEL))
	{
		pb->cpu_status = GX_ERR_DEVICE;
		return;
	}
	gx_cpu_run_batch(pb->batch, pb->size);
	engine->cpu_batches++;
	if (gx_shared)
		pg_atomic_fetch_add_u64(&gx_shared->cpu_batches, 1);
}

/* The message of a failure injected into the CPU engine (as the service's) */
static const char *
injected_failure(int status)
{
	return status == GX_ERR_OUT_OF_MEMORY ?
		"cudaMalloc: out of memory (injected fault)" :
		"kernel reported an error (injected fault)";
}

/*
 * Wait until a submitted batch has its results.  If the GPU failed, the
 * fallback policy applies: rerun the batch on the CPU engine, or, for
 * operators whose device state cannot be rebuilt batch by batch
 * (rerun_on_cpu off), return false and leave the recovery to the caller.
 */
bool
gx_engine_wait(GxEngine *engine, GxPendingBatch *pb)
{
	int			status;

	if (!pb->in_flight && pb->cpu_status != GX_OK)
	{
		/* an injected failure of the CPU engine: as a GPU batch's */
		status = pb->cpu_status;
		pb->cpu_status = GX_OK;
		fall_back(engine, status, injected_failure(status));
		if (!engine->rerun_on_cpu)
			return false;
		engine->failed = false;
		gx_cpu_run_batch(pb->batch, pb->size);
		engine->cpu_batches++;
		pg_atomic_fetch_add_u64(&gx_shared->cpu_batches, 1);
		return true;
	}
	if (!pb->in_flight)
		return !engine->failed;
	status = gx_request_wait(pb->req);
	pb->in_flight = false;
	if (status == GX_OK)
	{
		engine->gpu_batches++;
		engine->device_ms += pb->req->device_ms;
		pg_atomic_fetch_add_u64(&gx_shared->gpu_batches, 1);
		return true;
	}
	fall_back(engine, status, pb->req->errmsg);
	if (!engine->rerun_on_cpu)
		return false;
	engine->failed = false;
	gx_cpu_run_batch(pb->batch, pb->size);
	engine->cpu_batches++;
	pg_atomic_fetch_add_u64(&gx_shared->cpu_batches, 1);
	return true;
}

/* Release a batch's memory (and its request, cancelling it if in flight). */
void
gx_engine_batch_free(GxPendingBatch *pb)
{
	if (pb->req)
		gx_request_destroy(pb->req);
	else if (pb->batch)
		pfree(pb->batch);
	memset(pb, 0, sizeof(*pb));
}
