/*-------------------------------------------------------------------------
 * ptree_device.c
 *		gpuext_ptree: batched lookups in an index's prefix-tree mirror, as
 *		GX_REQ_PTREE_LOOKUP batches on the GPU or the CPU engine, and the
 *		device copies of mirrors that the GPU reads.
 *
 * A lookup of n probes (an = ANY array, a PtreeBatchJoin batch) is packed
 * into batches in the layout of cuda/gx_ptree.h.  The GPU gets them when
 * the node's engine is the GPU and there are at least
 * gpuext.ptree_gpu_batch_min probes (any number with gpuext.force_offload);
 * smaller lookups stay on the CPU engine, where a round trip to the service
 * would cost more than the lookups.  Both engines run gx_ptree_probe, the
 * CPU engine on the backend's mirror, the GPU on a device copy of its
 * lookup part.
 *
 * Device copies: the first lookup that goes to the GPU sends the mirror to
 * the service (GX_REQ_PTREE_LOAD, then GX_REQ_PTREE_UPLOAD for what one
 * request of the DMA arena does not hold), which keeps it as a task of
 * this backend.  The copy belongs to the mirror, that is to one generation
 * of one index, whose main structure never changes: it serves every node,
 * rescan and query of the backend that uses that mirror.  It is freed when
 * the backend's mirror cache lets the mirror go (ptree_device_forget, done
 * at the next lookup that may wait for the service), when more than
 * PTREE_DEVICE_COPIES copies would be kept (the least recently used goes),
 * when a transaction aborts, and when the backend exits (client.c); a
 * restarted service has none.  gpuext.gpu_memory_limit caps a copy, and
 * the copies kept count against gpuext.device_copy_memory (this backend's)
 * and gpuext.device_copy_memory_total (every backend's); one that does
 * not fit the device, a limit or the arena leaves the node's lookups on the
 * CPU engine.  When a GPU batch fails, gpuext.cpu_fallback
 * decides: the batch reruns on the CPU engine (the rest of the node too)
 * or the query fails.
 *
 * Not yet run on a GPU: the CPU engine path is what the tests here cover.
 *
 * IDENTIFICATION
 *		src/ptree_device.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "gx_ptree.h"
#include "ptree.h"
#include "quota.h"

/* device copies kept per backend between lookups */
#define PTREE_DEVICE_COPIES 4

/*
 * Most bytes of one lookup batch (two of a lookup are in flight) and of a
 * part of a mirror sent in one request: shares of the DMA arena
 */
#define PTREE_LOOKUP_BATCH_BYTES \
	(gx_shared ? Min((uint64) 8 * 1024 * 1024, gx_shared->arena_size / 8) : 8 * 1024 * 1024)
#define PTREE_UPLOAD_BYTES \
	Max(Min((uint64) 32 * 1024 * 1024, gx_shared->arena_size / 4), sizeof(GxPtreeMirror))

int			ptree_gpu_batch_min = 1024;

/* a device copy of one of this backend's mirrors: a session task */
typedef struct PtreeDeviceCopy
{
	const GxPtreeMirror *mirror;	/* NULL: unused */
	uint32		task_id;
	uint64		last_use;
} PtreeDeviceCopy;

static PtreeDeviceCopy copies[PTREE_DEVICE_COPIES];
static uint64 copy_clock = 0;

/* copies whose mirror is gone, to free at the next lookup that may wait */
static uint32 doomed[PTREE_DEVICE_COPIES];
static int	ndoomed = 0;

/*
 * Start the engine state of a node (or a single lookup): nothing decided
 * until its first batch
 */
void
ptree_engine_init(PtreeEngine *pe)
{
	memset(pe, 0, sizeof(*pe));
}

/*
 * The mirror m is being freed: its device copy goes too.  No request is
 * sent here (the caller is in the middle of its mirror cache's work): the
 * copy is freed at the next lookup that may wait, or with the session's
 * tasks.
 */
void
ptree_device_forget(const GxPtreeMirror *m)
{
	for (int i = 0; i < PTREE_DEVICE_COPIES; i++)
		if (copies[i].mirror == m)
		{
			if (ndoomed < PTREE_DEVICE_COPIES)
				doomed[ndoomed++] = copies[i].task_id;
			/* else: freed with the session's tasks (abort, exit) */
			memset(&copies[i], 0, sizeof(copies[i]));
		}
}

/*
 * Mirror 'from' moved to 'to' (the same bytes, ptree_mirror_share): its
 * device copy is to's
 */
void
ptree_device_moved(const GxPtreeMirror *from, const GxPtreeMirror *to)
{
	for (int i = 0; i < PTREE_DEVICE_COPIES; i++)
		if (copies[i].mirror == from)
			copies[i].mirror = to;
}

/* Free the copies of mirrors that are gone. */
static void
free_doomed(void)
{
	while (ndoomed > 0)
	{
		uint32		task = doomed[--ndoomed];

		if (gx_session_task_valid(task))
			gx_task_destroy(task);
	}
}

/*
 * Send mirror m to the service: a session task holding its lookup part.
 * Returns the task id, or 0 with *status and err set.
 */
static uint32
load_copy(const GxPtreeMirror *m, int *status, char *err)
{
	uint64		bytes = gx_ptree_lookup_bytes(m);
	uint64		part = Min(bytes, (uint64) PTREE_UPLOAD_BYTES);
	uint32		task;

	/* over the limit is known without asking the service */
	if (gx_gpu_memory_limit_bytes() > 0 && bytes > gx_gpu_memory_limit_bytes())
	{
		*status = GX_ERR_OUT_OF_MEMORY;
		snprintf(err, GX_ERRLEN, "the gpuext_ptree mirror (" UINT64_FORMAT " bytes) exceeds gpuext.gpu_memory_limit",
				 bytes);
		return 0;
	}
	/* a copy kept between queries: within this backend's and everyone's share */
	if (!gx_device_copy_reserve(bytes, err))
	{
		*status = GX_ERR_OUT_OF_MEMORY;
		return 0;
	}
	/* (a cancel while the copy travels must not keep the reservation) */
	PG_TRY();
	{
		task = gx_mirror_task_create(GX_REQ_PTREE_LOAD, GX_REQ_PTREE_UPLOAD, m, bytes, part,
									 status, err);
	}
	PG_CATCH();
	{
		gx_device_copy_release(bytes);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (task == 0)
	{
		gx_device_copy_release(bytes);
		return 0;
	}
	gx_task_keep_for_session(task, bytes);
	return task;
}

/*
 * The device copy of mirror m, loaded if there is none (the least recently
 * used copy making room); 0 when it cannot be had, after applying
 * gpuext.cpu_fallback to a failure (an ERROR when off, except for a copy
 * that does not fit: that is a decision, not a failure).
 */
static uint32
device_copy(PtreeEngine *pe, const GxPtreeMirror *m)
{
	PtreeDeviceCopy *slot = NULL;
	int			status = GX_OK;
	char		err[GX_ERRLEN];

	free_doomed();
	for (int i = 0; i < PTREE_DEVICE_COPIES; i++)
	{
		PtreeDeviceCopy *c = &copies[i];

		if (c->mirror != NULL && !gx_session_task_valid(c->task_id))
			memset(c, 0, sizeof(*c));	/* freed by an abort, or the service restarted */
		if (c->mirror == m)
		{
			c->last_use = ++copy_clock;
			return c->task_id;
		}
	}
	for (int i = 0; i < PTREE_DEVICE_COPIES; i++)
		if (slot == NULL || copies[i].mirror == NULL ||
			(slot->mirror != NULL && copies[i].last_use < slot->last_use))
			slot = &copies[i];
	if (slot->mirror != NULL)
	{
		uint32		task = slot->task_id;

		memset(slot, 0, sizeof(*slot));
		gx_task_destroy(task);
	}

	err[0] = '\0';
	slot->task_id = load_copy(m, &status, err);
	if (slot->task_id != 0)
	{
		slot->mirror = m;
		slot->last_use = ++copy_clock;
		return slot->task_id;
	}
	gx_device_table_unavailable(status, err, "gpuext_ptree lookups run on the CPU engine");
	return 0;
}

/*
 * Should a lookup of n probes go to the GPU?  Decides the node's engine
 * at the first lookup large enough.
 */
static bool
want_gpu(PtreeEngine *pe, int n)
{
	if (pe->no_device || !gpuext_enabled || ptree_gpu_batch_min <= 0 ||
		gpuext_device_mode == GPUEXT_DEVICE_CPU ||
		(n < ptree_gpu_batch_min && !gpuext_force_offload))
		return false;
	if (!pe->started)
	{
		gx_engine_start(&pe->engine);
		pe->started = true;
	}
	return pe->engine.use_gpu;
}

/* The engine for lookups that stay on the CPU engine */
static GxEngine *
cpu_engine(PtreeEngine *pe)
{
	if (!pe->cpu_started)
	{
		gx_engine_start_with_mode(&pe->cpu, GPUEXT_DEVICE_CPU);
		pe->cpu_started = true;
	}
	return &pe->cpu;
}

/* one lookup batch of a call: probes [first, first + n) */
typedef struct PtreeLookupBatch
{
	GxPendingBatch pb;
	int			first;
	int			n;
	bool		used;
} PtreeLookupBatch;

/*
 * Fill and submit a batch with probes [first, ...) that fit in
 * PTREE_LOOKUP_BATCH_BYTES; returns the probes it took
 */
static int
submit_batch(GxEngine *engine, PtreeLookupBatch *lb, const PtreeKey *probes, int first, int total,
			 uint32 task_id, uint32 cpu_id)
{
	Size		keybytes = 0;
	Size		area,
				prog_at,
				out_at;
	int			n = 0;
	GxBatch    *b;
	uint32	   *off;
	unsigned char *bytes;

	/* at least one probe; then as many as the batch holds */
	while (first + n < total)
	{
		Size		more = keybytes + probes[first + n].len;

		if (n > 0 && gx_ptree_probes_size(n + 1, more) + (Size) (n + 1) * sizeof(int64) >
			(Size) PTREE_LOOKUP_BATCH_BYTES)
			break;
		keybytes = more;
		n++;
	}
	area = gx_ptree_probes_size(n, keybytes);
	prog_at = TYPEALIGN(16, sizeof(GxBatch));
	out_at = TYPEALIGN(16, prog_at + area);
	b = gx_engine_batch_alloc(engine, &lb->pb, out_at + (Size) n * sizeof(int64));
	b->kind = GX_REQ_PTREE_LOOKUP;
	b->pages_offset = sizeof(GxBatch);
	b->program_offset = prog_at;
	b->program_len = area;
	b->out_offset = out_at;
	b->out_len = n * sizeof(int64);
	b->arg = n;
	b->arg2 = cpu_id;
	b->task_id = task_id;
	off = (uint32 *) ((char *) b + prog_at);
	bytes = (unsigned char *) (off + n + 1);
	keybytes = 0;
	for (int i = 0; i < n; i++)
	{
		off[i] = (uint32) keybytes;
		memcpy(bytes + keybytes, probes[first + i].data, probes[first + i].len);
		keybytes += probes[first + i].len;
	}
	off[n] = (uint32) keybytes;
	lb->first = first;
	lb->n = n;
	lb->used = true;
	gx_engine_submit(engine, &lb->pb);
	return n;
}

/* Wait for a batch, copy its results to out and free it. */
static void
finish_batch(GxEngine *engine, PtreeLookupBatch *lb, int64 *out)
{
	if (!gx_engine_wait(engine, &lb->pb))
		elog(ERROR, "gpuext_ptree: a lookup batch failed");	/* cannot happen: batches rerun */
	memcpy(out + lb->first, gx_batch_out(lb->pb.batch), (Size) lb->n * sizeof(int64));
	gx_engine_batch_free(&lb->pb);
	lb->used = false;
}

/*
 * Look n probe keys up in mirror m: out[i] is the mirror's index of probe
 * i's key, or -1.  The caller holds no buffer lock: a wait for the service
 * can be cancelled.
 */
void
ptree_lookup_probes(PtreeEngine *pe, const GxPtreeMirror *m, const PtreeKey *probes, int n,
					int64 *out)
{
	GxEngine   *engine = NULL;
	uint32		task = 0;
	uint32		cpu_id;
	PtreeLookupBatch lb[2];
	int			head = 0,
				inflight = 0,
				next = 0;
	uint64		fallbacks;
	MemoryContext cxt,
				old;

	if (n <= 0)
		return;
	if (want_gpu(pe, n))
	{
		task = device_copy(pe, m);
		if (task != 0)
			engine = &pe->engine;
		else
			pe->no_device = true;
	}
	if (engine == NULL)
		engine = cpu_engine(pe);
	fallbacks = engine->fallback_batches;

	/* the batches, and the CPU engine's view of the mirror (for a rerun too) */
	cxt = AllocSetContextCreate(CurrentMemoryContext, "gpuext_ptree lookup",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	cpu_id = gx_cpu_table_register((void *) m, cxt);
	memset(lb, 0, sizeof(lb));
	/*
	 * Up to two batches in flight: the next is filled while one runs (on
	 * the GPU, only while a request slot of this backend is to spare: the
	 * outer side of a join may hold the others)
	 */
	while (next < n)
	{
		if (inflight == 2 ||
			(inflight == 1 && engine->use_gpu && gx_request_slots_free() == 0))
		{
			finish_batch(engine, &lb[head], out);
			head ^= 1;
			inflight--;
		}
		next += submit_batch(engine, &lb[(head + inflight) % 2], probes, next, n, task, cpu_id);
		inflight++;
	}
	for (; inflight > 0; inflight--, head ^= 1)
		finish_batch(engine, &lb[head], out);
	gx_cpu_table_unregister(cpu_id, m);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);

	/* a GPU batch failed (and ran on the CPU engine): the copy may be bad */
	if (task != 0 && engine->fallback_batches != fallbacks)
	{
		ptree_device_forget(m);
		free_doomed();
		pe->no_device = true;
	}
}

/*
 * EXPLAIN ANALYZE of a node's lookups, as GpuJoin shows its engine: the
 * engine of the lookups large enough for the GPU, and the batches on each
 * engine (hidden by gpuext.regression_test_mode, and without ANALYZE: the
 * engine depends on the machine and on the sizes the node meets)
 */
void
ptree_engine_explain(PtreeEngine *pe, ExplainState *es)
{
	if (gpuext_regression_test_mode || !es->analyze)
		return;
	ExplainPropertyText("Engine",
						pe->started && pe->engine.use_gpu && !pe->no_device ? "GPU" : "CPU engine",
						es);
	ExplainPropertyInteger("GPU Batches", NULL, pe->engine.gpu_batches, es);
	ExplainPropertyInteger("CPU Batches", NULL, pe->engine.cpu_batches + pe->cpu.cpu_batches, es);
	ExplainPropertyInteger("Fallback Batches", NULL, pe->engine.fallback_batches, es);
	ExplainPropertyFloat("Device Time", "ms", pe->engine.device_ms, 3, es);
}

/*
 * Plan the merge of n delta entries (64-bit keys and TIDs, gx_ptree.h)
 * into main, whose distinct keys are mirror m's: the entries come back
 * sorted by (key, TID), exact duplicates dropped, each with its rank in
 * main (plan->keys, tids, ranks; plan->n kept).  The GPU plans it when
 * there is one and gpuext is on, the batch holds at least
 * gpuext.ptree_gpu_batch_min entries (any number with
 * gpuext.force_offload) and fits a share of the DMA arena, and the
 * mirror's device copy can be had; the CPU engine otherwise (and for an
 * empty main, whose mirror is a bare header).  The caller holds the
 * index's merge lock (a heavyweight lock) and no buffer lock: scans and
 * inserts go on while the plan waits for the service, and the wait can be
 * cancelled.  Returns true if the GPU planned it.
 */
bool
ptree_merge_plan(const GxPtreeMirror *m, const uint64 *keys, const uint64 *tids, uint64 n,
				 PtreeMergePlan *plan)
{
	PtreeEngine pe;
	GxEngine   *engine = NULL;
	GxPendingBatch pb;
	GxBatch    *b;
	uint32		task = 0;
	uint32		cpu_id;
	Size		prog_at,
				out_at;
	const uint64 *out;
	bool		gpu;
	MemoryContext cxt,
				old;

	plan->n = 0;
	if (n == 0)
		return false;
	if (n >= PG_UINT32_MAX)
		elog(ERROR, "gpuext_ptree: a delta of " UINT64_FORMAT " entries is too large to merge", n);
	prog_at = TYPEALIGN(16, sizeof(GxBatch));
	out_at = TYPEALIGN(16, prog_at + gx_ptree_merge_in_size(n));
	ptree_engine_init(&pe);
	if (m->nkeys > 0 && gx_shared != NULL &&
		out_at + gx_ptree_merge_out_size(n) <= gx_shared->arena_size / 4 &&
		want_gpu(&pe, (int) Min(n, (uint64) INT_MAX)))
	{
		task = device_copy(&pe, m);
		if (task != 0)
			engine = &pe.engine;
	}
	if (engine == NULL)
		engine = cpu_engine(&pe);

	cxt = AllocSetContextCreate(CurrentMemoryContext, "gpuext_ptree merge plan",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	cpu_id = gx_cpu_table_register((void *) m, cxt);
	b = gx_engine_batch_alloc(engine, &pb, out_at + gx_ptree_merge_out_size(n));
	b->kind = GX_REQ_PTREE_MERGE;
	b->pages_offset = sizeof(GxBatch);
	b->program_offset = prog_at;
	b->program_len = gx_ptree_merge_in_size(n);
	b->out_offset = out_at;
	b->out_len = gx_ptree_merge_out_size(n);
	b->arg = n;
	b->arg2 = cpu_id;
	b->task_id = task;
	memcpy((char *) b + prog_at, keys, n * sizeof(uint64));
	memcpy((char *) b + prog_at + n * sizeof(uint64), tids, n * sizeof(uint64));
	gx_engine_submit(engine, &pb);
	if (!gx_engine_wait(engine, &pb))
		elog(ERROR, "gpuext_ptree: a merge plan batch failed");	/* cannot happen: batches rerun */
	out = (const uint64 *) gx_batch_out(pb.batch);
	if (out[0] > n)
		elog(ERROR, "gpuext_ptree: a merge plan kept " UINT64_FORMAT " of " UINT64_FORMAT " entries",
			 out[0], n);
	MemoryContextSwitchTo(old);
	plan->n = out[0];
	memcpy(plan->keys, out + 1, plan->n * sizeof(uint64));
	memcpy(plan->tids, out + 1 + n, plan->n * sizeof(uint64));
	memcpy(plan->ranks, out + 1 + 2 * n, plan->n * sizeof(uint64));
	gpu = task != 0 && engine->gpu_batches > 0 && engine->fallback_batches == 0;
	gx_engine_batch_free(&pb);
	gx_cpu_table_unregister(cpu_id, m);
	MemoryContextDelete(cxt);

	/* a GPU batch failed (and ran on the CPU engine): the copy may be bad */
	if (task != 0 && engine->fallback_batches > 0)
	{
		ptree_device_forget(m);
		free_doomed();
	}
	return gpu;
}
