/*-------------------------------------------------------------------------
 * sqlfuncs.c
 *		SQL-callable functions of the service: version, devices, status,
 *		per-page tuple counts, round-trip timing and the debug sleep.
 *
 * IDENTIFICATION
 *		src/sqlfuncs.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"
#include "indexopen.h"

#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(gpuext_version);
PG_FUNCTION_INFO_V1(gpuext_devices);
PG_FUNCTION_INFO_V1(gpuext_status);
PG_FUNCTION_INFO_V1(gpuext_page_counts);
PG_FUNCTION_INFO_V1(gpuext_service_roundtrip);
PG_FUNCTION_INFO_V1(gpuext_debug_sleep);

/* Version of the loaded library. */
Datum
gpuext_version(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(GPUEXT_VERSION_STR));
}

/* ERROR unless the service's shared state exists. */
static void
require_preload(void)
{
	if (!gpuext_preloaded || gx_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("gpuext must be loaded via shared_preload_libraries"),
				 errhint("Add gpuext to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/*
 * Parse an engine argument ('auto', 'gpu', 'cpu') into a gpuext.device
 * value.
 */
static int
parse_engine(text *arg)
{
	char	   *s = text_to_cstring(arg);

	if (strcmp(s, "auto") == 0)
		return GPUEXT_DEVICE_AUTO;
	if (strcmp(s, "gpu") == 0)
		return GPUEXT_DEVICE_GPU;
	if (strcmp(s, "cpu") == 0)
		return GPUEXT_DEVICE_CPU;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid engine \"%s\"", s),
			 errhint("Valid engines are \"auto\", \"gpu\" and \"cpu\".")));
	return GPUEXT_DEVICE_AUTO;	/* keep compiler quiet */
}

/*
 * One row per GPU the service opened; with none, one row for the CPU
 * engine that says why.
 */
Datum
gpuext_devices(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GxDeviceProps devs[GX_MAX_DEVICES];
	uint64		used[GX_MAX_DEVICES];
	int			ndev = 0;
	const char *why = NULL;

	InitMaterializedSRF(fcinfo, 0);
	if (gpuext_preloaded && gx_shared && gx_service_has_gpu(&why))
	{
		SpinLockAcquire(&gx_shared->mutex);
		ndev = gx_shared->ndevices;
		memcpy(devs, gx_shared->devices, sizeof(devs));
		SpinLockRelease(&gx_shared->mutex);
		for (int d = 0; d < ndev; d++)
			used[d] = pg_atomic_read_u64(&gx_shared->device_mem_used[d]);
	}
	else if (!gpuext_preloaded || gx_shared == NULL)
		why = "gpuext is not in shared_preload_libraries";

	for (int d = 0; d < ndev; d++)
	{
		Datum		values[9];
		bool		nulls[9] = {0};
		char		cc[16];

		snprintf(cc, sizeof(cc), "%d.%d", devs[d].cc_major, devs[d].cc_minor);
		values[0] = Int32GetDatum(d);
		values[1] = CStringGetTextDatum("gpu");
		values[2] = CStringGetTextDatum(devs[d].name);
		values[3] = Int32GetDatum(devs[d].sm_count);
		values[4] = Int64GetDatum((int64) devs[d].mem_total);
		values[5] = Int64GetDatum((int64) devs[d].mem_free);
		values[6] = Int64GetDatum((int64) used[d]);
		values[7] = CStringGetTextDatum(cc);
		values[8] = CStringGetTextDatum("ready");
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	if (ndev == 0)
	{
		Datum		values[9];
		bool		nulls[9] = {0};

		values[0] = Int32GetDatum(-1);
		values[1] = CStringGetTextDatum("cpu");
		values[2] = CStringGetTextDatum("CPU engine");
		for (int i = 3; i <= 7; i++)
			nulls[i] = true;
		values[8] = CStringGetTextDatum(why ? why : "no GPU");
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* Service state and counters, one row. */
Datum
gpuext_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[17];
	bool		nulls[17] = {0};
	int			state;
	int			pid;
	int			ndev;
	char		detail[GX_ERRLEN];
	uint64		mem = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	if (!gpuext_preloaded || gx_shared == NULL)
	{
		values[0] = CStringGetTextDatum("not loaded");
		for (int i = 1; i < 17; i++)
			nulls[i] = true;
		nulls[2] = false;
		values[2] = CStringGetTextDatum("gpuext is not in shared_preload_libraries: GPU offload is off");
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
	}

	SpinLockAcquire(&gx_shared->mutex);
	state = gx_shared->service_state;
	pid = gx_shared->service_pid;
	ndev = gx_shared->ndevices;
	strlcpy(detail, gx_shared->detail, sizeof(detail));
	SpinLockRelease(&gx_shared->mutex);
	for (int d = 0; d < GX_MAX_DEVICES; d++)
		mem += pg_atomic_read_u64(&gx_shared->device_mem_used[d]);

	values[0] = CStringGetTextDatum(gx_service_state_name(state));
	values[1] = Int32GetDatum(pid);
	nulls[1] = (pid == 0);
	values[2] = CStringGetTextDatum(detail);
	values[3] = Int32GetDatum(ndev);
	values[4] = Int64GetDatum(pg_atomic_read_u64(&gx_shared->requests_served));
	values[5] = Int64GetDatum(pg_atomic_read_u64(&gx_shared->requests_failed));
	values[6] = Int64GetDatum(pg_atomic_read_u64(&gx_shared->requests_cancelled));
	values[7] = Int64GetDatum(pg_atomic_read_u64(&gx_shared->gpu_batches));
	values[8] = Int64GetDatum(pg_atomic_read_u64(&gx_shared->cpu_batches));
	values[9] = Int64GetDatum(pg_atomic_read_u64(&gx_shared->fallbacks));
	values[10] = Int64GetDatum(pg_atomic_read_u64(&gx_shared->bytes_read));
	values[11] = Int64GetDatum(pg_atomic_read_u64(&gx_shared->bytes_returned));
	values[12] = Float8GetDatum(pg_atomic_read_u64(&gx_shared->device_time_us) / 1000.0);
	values[13] = Int64GetDatum((int64) mem);
	values[14] = Int64GetDatum((int64) gx_arena_bytes_in_use());
	values[15] = Int64GetDatum(pg_atomic_read_u64(&gx_shared->service_restarts));
	values[16] = Int64GetDatum(pg_atomic_read_u64(&gx_shared->requests_abandoned));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * Open a heap relation for reading, checking kind and privileges: SELECT
 * on the relation and no row-level security policy applying to the user
 * (funcname counts every row), before the lock and again under it.
 */
static Relation
open_heap_for_read(Oid relid, const char *funcname)
{
	Relation	rel;

	gx_check_table_select(relid, funcname);
	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (rel->rd_rel->relkind != RELKIND_RELATION &&
		rel->rd_rel->relkind != RELKIND_MATVIEW &&
		rel->rd_rel->relkind != RELKIND_TOASTVALUE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table or materialized view",
						RelationGetRelationName(rel))));
	if (rel->rd_tableam != GetHeapamTableAmRoutine())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("\"%s\" does not use the heap access method",
						RelationGetRelationName(rel))));
	gx_check_table_select(relid, funcname);
	return rel;
}

/*
 * gpuext_page_counts(rel, engine): for every page of the relation with a
 * visible tuple, the number of normal line pointers and of tuples visible
 * to the current snapshot, counted by a kernel reading the page in place
 * (or by the CPU engine).  The first real work through the service.
 */
Datum
gpuext_page_counts(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	int			engine_mode = parse_engine(PG_GETARG_TEXT_PP(1));
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	uint32		max_pages = gx_batch_pages_cap(1);
	Relation	rel;
	GxPageSource *src;
	GxEngine	engine;
	Buffer	   *buffers;

	require_preload();
	InitMaterializedSRF(fcinfo, 0);
	rel = open_heap_for_read(relid, "gpuext_page_counts");
	buffers = palloc(sizeof(Buffer) * max_pages);

	gx_engine_start_with_mode(&engine, engine_mode);

	src = gx_pages_begin(rel, GetActiveSnapshot(), NULL);
	for (;;)
	{
		GxPendingBatch pb;
		GxBatch    *batch;
		GxPageRef  *refs;
		const GxPageCount *out;
		uint32		n;

		batch = gx_engine_batch_alloc(&engine, &pb,
									  gx_batch_size(max_pages, 0, sizeof(GxPageCount)));
		gx_batch_layout(batch, GX_REQ_PAGE_COUNT, max_pages, 0, sizeof(GxPageCount));
		refs = (GxPageRef *) gx_batch_pages(batch);
		n = gx_pages_fill(src, refs, buffers, max_pages);
		if (n == 0)
		{
			gx_engine_batch_free(&pb);
			break;
		}
		batch->npages = n;
		batch->out_len = n * sizeof(GxPageCount);
		gx_engine_submit(&engine, &pb);
		gx_engine_wait(&engine, &pb);

		out = (const GxPageCount *) gx_batch_out(batch);
		for (uint32 i = 0; i < n; i++)
		{
			Datum		values[3];
			bool		nulls[3] = {0};

			values[0] = Int64GetDatum((int64) refs[i].blkno);
			values[1] = Int32GetDatum((int32) out[i].nnormal);
			values[2] = Int32GetDatum((int32) out[i].nvisible);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		gx_pages_release(buffers, n);
		gx_engine_batch_free(&pb);
	}
	gx_pages_end(src);
	table_close(rel, AccessShareLock);
	return (Datum) 0;
}

/*
 * gpuext_service_roundtrip(n): mean microseconds of an empty request
 * through the service (no device work), over n requests.  Superuser only
 * (whatever EXECUTE was granted): a million requests keep the service's
 * one thread from everyone else's.
 */
Datum
gpuext_service_roundtrip(PG_FUNCTION_ARGS)
{
	int32		n = PG_GETARG_INT32(0);
	instr_time	start,
				elapsed;
	const char *why;

	require_preload();
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser to use gpuext_service_roundtrip")));
	if (n < 1 || n > 1000000)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("number of requests must be between 1 and 1000000")));
	if (!gx_service_has_gpu(&why))
	{
		int			state;

		SpinLockAcquire(&gx_shared->mutex);
		state = gx_shared->service_state;
		SpinLockRelease(&gx_shared->mutex);
		if (state != GX_SERVICE_NO_GPU)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the gpuext GPU service is not running"),
					 errdetail("%s", why)));
	}

	INSTR_TIME_SET_CURRENT(start);
	for (int i = 0; i < n; i++)
		gx_request_destroy(gx_request_run(GX_REQ_NOOP, 0, 0));
	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, start);
	PG_RETURN_FLOAT8(INSTR_TIME_GET_MICROSEC(elapsed) / n);
}

/*
 * A sleep request sent to the service whatever it has (a GPU, or the host
 * test device of gpuext.debug_host_device), without falling back.
 */
static void
service_sleep(int32 ms, int32 reserve_mb)
{
	GxRequest  *req = gx_request_create(gx_batch_size(0, 0, 0));
	int			status;

	if (req == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("no room in the gpuext DMA arena")));
	gx_batch_layout(req->batch, GX_REQ_SLEEP, 0, 0, 0);
	req->batch->arg = (uint64) ms * 1000 * 1000;
	req->batch->reserve_bytes = (uint64) reserve_mb * 1024 * 1024;
	gx_request_submit(req, GX_REQ_SLEEP);
	status = gx_request_wait(req);
	if (status != GX_OK)
	{
		char		msg[GX_ERRLEN];

		strlcpy(msg, req->errmsg, sizeof(msg));
		gx_request_destroy(req);
		gx_report_failure(status, msg);
	}
	gx_request_destroy(req);
}

/*
 * gpuext_debug_sleep(ms, reserve_mb, engine): a device request that holds
 * reserve_mb of device memory and runs for ms milliseconds unless
 * cancelled.  Superuser only; for cancellation and leak tests.  Returns
 * the engine that ran it.  Engine 'service' sends it to the GPU service
 * with no fallback, also when the service has only the host test device.
 */
Datum
gpuext_debug_sleep(PG_FUNCTION_ARGS)
{
	int32		ms = PG_GETARG_INT32(0);
	int32		reserve_mb = PG_GETARG_INT32(1);
	char	   *engine_name = text_to_cstring(PG_GETARG_TEXT_PP(2));
	int			engine_mode;
	GxEngine	engine;
	GxPendingBatch pb;
	GxBatch    *batch;
	const char *name;

	require_preload();
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser to use gpuext_debug_sleep")));
	if (ms < 0 || ms > 3600 * 1000)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("sleep time must be between 0 and 3600000 ms")));
	if (reserve_mb < 0 || reserve_mb > 1024 * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("device memory reservation must be between 0 and 1048576 MB")));
	if (strcmp(engine_name, "service") == 0)
	{
		service_sleep(ms, reserve_mb);
		PG_RETURN_TEXT_P(cstring_to_text("service"));
	}
	engine_mode = parse_engine(PG_GETARG_TEXT_PP(2));

	gx_engine_start_with_mode(&engine, engine_mode);

	batch = gx_engine_batch_alloc(&engine, &pb, gx_batch_size(0, 0, 0));
	gx_batch_layout(batch, GX_REQ_SLEEP, 0, 0, 0);
	batch->arg = (uint64) ms * 1000 * 1000;
	batch->reserve_bytes = (uint64) reserve_mb * 1024 * 1024;
	gx_engine_submit(&engine, &pb);
	gx_engine_wait(&engine, &pb);
	name = engine.use_gpu ? "gpu" : "cpu";
	gx_engine_batch_free(&pb);
	PG_RETURN_TEXT_P(cstring_to_text(name));
}
