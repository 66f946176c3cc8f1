/*-------------------------------------------------------------------------
 * cpu_engine.c
 *		The CPU engine: runs batches in the backend with the same per-row
 *		code as the GPU kernels (the headers under cuda/).
 *
 * Used when gpuext.device = cpu, when the service has no GPU, and to rerun
 * a batch the GPU failed on.  It reads heap pages in place in
 * shared_buffers, exactly as the kernels do through the registered
 * segment.
 *
 * IDENTIFICATION
 *		src/cpu_engine.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/latch.h"
#include "utils/timestamp.h"

#include "gx_agg.h"
#include "gx_colcache.h"
#include "gx_join.h"
#include "gx_rtree.h"
#include "gx_ptree.h"


/* The page of a page reference, in shared buffers. */
static inline const unsigned char *
page_of(const GxPageRef *ref)
{
	return (const unsigned char *) BufferBlocks + (Size) ref->buf_id * BLCKSZ;
}

/* GX_REQ_PAGE_COUNT: per-page counts of normal and visible tuples. */
static void
cpu_page_count(GxBatch *batch)
{
	const GxPageRef *refs = gx_batch_pages(batch);
	GxPageCount *out = (GxPageCount *) gx_batch_out(batch);

	for (uint32 p = 0; p < batch->npages; p++)
	{
		const unsigned char *page = page_of(&refs[p]);
		uint32		nnormal = 0;
		uint32		nvisible = 0;

		for (uint32 off = 1; off <= refs[p].nline; off++)
			gx_count_tuple(page, &refs[p], off, &nnormal, &nvisible);
		out[p].nnormal = nnormal;
		out[p].nvisible = nvisible;
	}
}

/* GX_REQ_SLEEP: wait batch->arg nanoseconds, interruptibly. */
static void
cpu_sleep(GxBatch *batch)
{
	TimestampTz end = GetCurrentTimestamp() + batch->arg / 1000;

	while (GetCurrentTimestamp() < end)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

static void *cpu_table_of(uint64 id);

/* The cache page a batch's GX_PAGE_CACHED reference names, checked */
static const GxCcPage *
cpu_cached_page(const GxColCache *cc, const GxPageRef *ref)
{
	if (cc == NULL || ref->buf_id >= cc->npages)
		elog(ERROR, "gpuext: malformed cached page reference");
	return &gx_cc_pages(cc)[ref->buf_id];
}

/*
 * GX_REQ_SCAN: run the device program over every tuple of the batch; the
 * rows of cached pages come from the column cache registered under the
 * batch's cache_id.
 */
static void
cpu_scan(GxBatch *batch)
{
	const GxPageRef *refs = gx_batch_pages(batch);
	GxScanPageOut *outs = (GxScanPageOut *) gx_batch_out(batch);
	const GxProgram *prog = (const GxProgram *) ((const char *) batch + batch->program_offset);
	GxDatum		regs[GX_MAX_REGS];

	const GxColCache *cc = batch->cache_id ? cpu_table_of(batch->cache_id) : NULL;

	if (!gx_program_ok(prog, batch->program_len) || (batch->cache_id != 0 && cc == NULL))
		elog(ERROR, "gpuext: malformed device program");
	for (uint32 p = 0; p < batch->npages; p++)
	{
		const unsigned char *page;
		GxScanPageOut *out = &outs[p];

		memset(out, 0, sizeof(*out));
		if (refs[p].flags & GX_PAGE_CACHED)
		{
			/* a cached page: the same program over its rows' columns */
			const GxCcPage *pg;
			const uint16_t *offsets;

			pg = cpu_cached_page(cc, &refs[p]);
			offsets = gx_cc_offsets(cc);
			for (uint64 row = pg->row_start; row < pg->row_start + pg->nrows; row++)
			{
				int			rc;

				if (offsets[row] < 1 || offsets[row] > GX_MAX_TUPLES_PER_PAGE)
					elog(ERROR, "gpuext: malformed column cache row");
				rc = gx_scan_cached_row(prog, cc, row, regs);
				if (rc == GX_ROW_PASS)
					gx_bitmap_set(out->pass, offsets[row]);
				else if (rc == GX_ROW_RECHECK)
					gx_bitmap_set(out->recheck, offsets[row]);
			}
			if ((p & 63) == 63)
				CHECK_FOR_INTERRUPTS();
			continue;
		}
		page = page_of(&refs[p]);
		for (uint32 off = 1; off <= refs[p].nline; off++)
		{
			int			rc = gx_scan_tuple(prog, page, &refs[p], off, regs);

			if (rc == GX_ROW_PASS)
				gx_bitmap_set(out->pass, off);
			else if (rc == GX_ROW_RECHECK)
				gx_bitmap_set(out->recheck, off);
		}
		if ((p & 63) == 63)
			CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Group tables of the CPU engine live in backend memory; batches name them
 * by an id, as GPU batches name a task (join tables and gpuext_ptree
 * mirrors are registered the same way).  A slot is freed by
 * gx_cpu_table_unregister, or when the memory context that holds the table
 * goes away (an error or a cancel ends the query before the node's end
 * runs): each registration carries a serial so that a late callback never
 * frees a slot that has been given to another table since.
 */
#define CPU_MAX_TABLES 64
typedef struct CpuTableSlot
{
	GxAggTable *table;
	uint64		serial;
} CpuTableSlot;
static CpuTableSlot cpu_tables[CPU_MAX_TABLES];
static uint64 cpu_table_serial = 0;

/* what a registration's reset callback needs to free its slot */
typedef struct CpuTableOwner
{
	MemoryContextCallback cb;
	int			slot;
	uint64		serial;
} CpuTableOwner;

/* Reset callback of the table's context: free the slot if it is still ours. */
static void
cpu_table_forget(void *arg)
{
	CpuTableOwner *owner = (CpuTableOwner *) arg;

	if (cpu_tables[owner->slot].serial == owner->serial)
		cpu_tables[owner->slot].table = NULL;
}

/* Register a table held in memory context cxt; returns its id (>= 1). */
uint32
gx_cpu_table_register(void *table, MemoryContext cxt)
{
	for (int i = 0; i < CPU_MAX_TABLES; i++)
		if (cpu_tables[i].table == NULL)
		{
			CpuTableOwner *owner = MemoryContextAlloc(cxt, sizeof(CpuTableOwner));

			owner->slot = i;
			owner->serial = ++cpu_table_serial;
			owner->cb.func = cpu_table_forget;
			owner->cb.arg = owner;
			MemoryContextRegisterResetCallback(cxt, &owner->cb);
			cpu_tables[i].table = (GxAggTable *) table;
			cpu_tables[i].serial = owner->serial;
			return i + 1;
		}
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("gpuext: more than %d CPU engine group and join tables in use at once",
					CPU_MAX_TABLES)));
	return 0;
}

/* Free the slot of id, if it still holds this table. */
void
gx_cpu_table_unregister(uint32 id, const void *table)
{
	if (id >= 1 && id <= CPU_MAX_TABLES && cpu_tables[id - 1].table == table)
	{
		cpu_tables[id - 1].table = NULL;
		cpu_tables[id - 1].serial = 0;
	}
}

/* The table registered under id, or NULL (none, or id out of range) */
static void *
cpu_table_of(uint64 id)
{
	if (id >= 1 && id <= CPU_MAX_TABLES)
		return cpu_tables[id - 1].table;
	return NULL;
}

/*
 * GX_REQ_AGG: aggregate every tuple of the batch into the batch's table
 * (fused with a join: probing the join tables first); the rows of cached
 * pages come from the column cache registered under the batch's cache_id.
 */
static void
cpu_agg(GxBatch *batch)
{
	const GxPageRef *refs = gx_batch_pages(batch);
	const GxProgram *prog = (const GxProgram *) ((const char *) batch + batch->program_offset);
	const GxAggSpec *spec = (const GxAggSpec *) gx_program_spec(prog);
	GxAggTable *table = cpu_table_of(batch->task_id);
	GxJoinTables *jtables = NULL;
	const GxJoinSpec *jspec = NULL;
	uint32		match[GX_JOIN_MAX_DEPTH];
	GxDatum		regs[GX_MAX_REGS];
	unsigned char keybuf[GX_AGG_MAX_KEYS * (8 + GX_KEY_TEXT_MAX)];

	const GxColCache *cc = batch->cache_id ? cpu_table_of(batch->cache_id) : NULL;

	if (table == NULL || !gx_program_ok(prog, batch->program_len) ||
		(batch->cache_id != 0 && cc == NULL))
		elog(ERROR, "gpuext: malformed aggregation batch");
	/* fused with a join: arg2 names the join tables, their spec follows ours */
	if (batch->arg2 != 0)
	{
		jtables = cpu_table_of(batch->arg2);
		jspec = gx_join_spec_after_agg(spec);
		if (jtables == NULL || jspec->ndepths == 0 || jspec->ndepths > GX_JOIN_MAX_DEPTH ||
			jtables->ndepths != jspec->ndepths)
			elog(ERROR, "gpuext: malformed join aggregation batch");
	}
	for (uint32 p = 0; p < batch->npages; p++)
	{
		const unsigned char *page;

		if (refs[p].flags & GX_PAGE_CACHED)
		{
			/* a cached page: the same program and groups over its rows' columns */
			const GxCcPage *pg;

			pg = cpu_cached_page(cc, &refs[p]);
			for (uint64 row = pg->row_start; row < pg->row_start + pg->nrows; row++)
			{
				int			rc = jtables ?
					gx_join_agg_cached_row(prog, spec, jspec, NULL, table, jtables, cc, row,
										   regs, keybuf, match) :
					gx_agg_cached_row(prog, spec, table, cc, row, regs, keybuf);

				if (rc == GX_ROW_PASS)
					table->rows++;
				else if (rc == GX_ROW_RECHECK)
					table->recheck = 1;
			}
			if ((p & 63) == 63)
				CHECK_FOR_INTERRUPTS();
			continue;
		}
		page = page_of(&refs[p]);
		for (uint32 off = 1; off <= refs[p].nline; off++)
		{
			int			rc = jtables ?
				gx_join_agg_tuple(prog, spec, jspec, NULL, table, jtables, page, &refs[p], off,
								  regs, keybuf, match) :
				gx_agg_tuple(prog, spec, table, page, &refs[p], off, regs, keybuf);

			if (rc == GX_ROW_PASS)
				table->rows++;
			else if (rc == GX_ROW_RECHECK)
				table->recheck = 1;
		}
		if ((p & 63) == 63)
			CHECK_FOR_INTERRUPTS();
	}
}

/*
 * GX_REQ_JOIN: run the program over every tuple of the batch and probe the
 * join tables registered under the batch's task id (built by the host with
 * gx_join_insert, the kernel's own insert step); the rows of cached pages
 * come from the column cache registered under the batch's cache_id, their
 * verdicts and matches stored under their line pointers.
 */
static void
cpu_join(GxBatch *batch)
{
	const GxPageRef *refs = gx_batch_pages(batch);
	const GxProgram *prog = (const GxProgram *) ((const char *) batch + batch->program_offset);
	const GxJoinSpec *spec = (const GxJoinSpec *) gx_program_spec(prog);
	GxJoinTables *tables = cpu_table_of(batch->task_id);
	uint32		stride = gx_join_out_per_page(spec->ndepths);
	GxDatum		regs[GX_MAX_REGS];
	uint32		match[GX_JOIN_MAX_DEPTH];

	const GxColCache *cc = batch->cache_id ? cpu_table_of(batch->cache_id) : NULL;

	if (tables == NULL || !gx_program_ok(prog, batch->program_len) ||
		spec->ndepths == 0 || spec->ndepths > GX_JOIN_MAX_DEPTH ||
		tables->ndepths != spec->ndepths || (batch->cache_id != 0 && cc == NULL))
		elog(ERROR, "gpuext: malformed join batch");
	for (uint32 p = 0; p < batch->npages; p++)
	{
		GxJoinPageOut *out = (GxJoinPageOut *) ((char *) gx_batch_out(batch) + (Size) p * stride);
		const unsigned char *page;

		memset(out, 0, sizeof(*out));
		if (refs[p].flags & GX_PAGE_CACHED)
		{
			/* a cached page: the same program and probes over its rows' columns */
			const GxCcPage *pg;
			const uint16_t *offsets;

			pg = cpu_cached_page(cc, &refs[p]);
			offsets = gx_cc_offsets(cc);
			for (uint64 row = pg->row_start; row < pg->row_start + pg->nrows; row++)
			{
				uint32		off = offsets[row];
				int			rc;

				if (off < 1 || off > GX_MAX_TUPLES_PER_PAGE)
					elog(ERROR, "gpuext: malformed column cache row");
				rc = gx_join_cached_row(prog, spec, tables, cc, row, regs, match);
				if (rc == GX_ROW_PASS)
				{
					memcpy(gx_join_matches(out, spec->ndepths, off), match,
						   sizeof(uint32) * spec->ndepths);
					gx_bitmap_set(out->pass, off);
				}
				else if (rc == GX_ROW_RECHECK)
					gx_bitmap_set(out->recheck, off);
			}
			if ((p & 63) == 63)
				CHECK_FOR_INTERRUPTS();
			continue;
		}
		page = page_of(&refs[p]);
		for (uint32 off = 1; off <= refs[p].nline; off++)
		{
			uint32	   *m = gx_join_matches(out, spec->ndepths, off);
			int			rc = gx_join_tuple(prog, spec, tables, page, &refs[p], off, regs, m);

			if (rc == GX_ROW_PASS)
				gx_bitmap_set(out->pass, off);
			else if (rc == GX_ROW_RECHECK)
				gx_bitmap_set(out->recheck, off);
		}
		if ((p & 63) == 63)
			CHECK_FOR_INTERRUPTS();
	}
}

/*
 * GX_REQ_RTREE_SEARCH: walk the tree mirror registered under the batch's
 * task id level by level, as cuda/rtree.cu does (the same visit and result
 * bounds, flags and counts): every query starts at the root, each level's
 * visits are grouped by node and run through gx_rtree_level_cpu.
 */
static void
cpu_rtree_search(GxBatch *batch)
{
	const GxRtMirror *m = cpu_table_of(batch->task_id);
	const GxRtSearch *s = (const GxRtSearch *) ((const char *) batch + batch->program_offset);
	GxRtSearchOut *out = (GxRtSearchOut *) gx_batch_out(batch);
	uint64		room = gx_rt_search_out_room(batch->out_len);
	GxRtVisit  *cur;
	GxRtVisit  *next;
	uint32		ncur;
	uint32		flags = 0;
	uint32		levels = 0;
	uint64		npairs = 0;

	if (m == NULL || batch->out_len < sizeof(GxRtSearchOut) ||
		batch->program_len < sizeof(GxRtSearch) || !gx_rt_search_ok(s, batch->program_len) ||
		m->magic != GX_RT_MIRROR_MAGIC || m->nblocks != s->nblocks || m->root != s->root ||
		m->root_level != s->root_level || m->node_stride > GX_RT_MAX_STRIDE)
	{
		batch->kernel_error = GX_KERR_BAD_PROGRAM;
		return;
	}
	cur = palloc_extended((Size) s->visit_cap * sizeof(GxRtVisit), MCXT_ALLOC_HUGE);
	next = palloc_extended((Size) s->visit_cap * sizeof(GxRtVisit), MCXT_ALLOC_HUGE);
	for (uint32 q = 0; q < s->nqueries; q++)
	{
		cur[q].node = s->root;
		cur[q].query = q;
	}
	ncur = s->nqueries;
	for (int level = (int) s->root_level; level >= 0; level--)
	{
		bool		leaf = (level == 0);
		uint64		count;

		CHECK_FOR_INTERRUPTS();
		levels++;
		if (leaf)
		{
			npairs = gx_rtree_level_cpu(m, s, cur, ncur, true,
										(char *) out + sizeof(GxRtSearchOut), room, &flags);
			break;
		}
		count = gx_rtree_level_cpu(m, s, cur, ncur, false, next, s->visit_cap, &flags);
		if (count > s->visit_cap)
			flags |= GX_RT_OVERFLOW_VISITS;
		if (flags != 0)
			break;
		ncur = (uint32) count;
		qsort(next, ncur, sizeof(GxRtVisit), gx_rt_cmp_visit);
		{
			GxRtVisit  *t = cur;

			cur = next;
			next = t;
		}
	}
	out->npairs = npairs;
	out->flags = flags;
	out->levels = levels;
	pfree(cur);
	pfree(next);
}

/*
 * GX_REQ_PTREE_LOOKUP: look every probe of the batch up in a gpuext_ptree
 * mirror, the kernel's per-probe step, in groups whose memory reads are
 * prefetched together (gx_ptree_probe_group).  The CPU engine reads the
 * backend's own mirror, registered under arg2 (task_id names the device
 * copy, which only the GPU reads), so a batch the GPU failed on runs here
 * as it is.
 */
static void
cpu_ptree_lookup(GxBatch *batch)
{
	const GxPtreeMirror *m = cpu_table_of(batch->arg2);
	const uint32 *area = (const uint32 *) ((const char *) batch + batch->program_offset);
	int64_t    *out = (int64_t *) gx_batch_out(batch);
	uint64		n = batch->arg;

	if (m == NULL || n >= PG_UINT32_MAX || !gx_ptree_probes_ok((uint32) n, batch->program_len) ||
		batch->out_len < n * sizeof(int64))
		elog(ERROR, "gpuext: malformed gpuext_ptree lookup batch");
	for (uint32 i = 0; i < n; i += GX_PTREE_GROUP)
	{
		if ((i & 4095) == 0 && i > 0)
			CHECK_FOR_INTERRUPTS();
		if (!gx_ptree_probe_group(m, area, batch->program_len, (uint32) n, i,
								  (uint32) Min(n - i, GX_PTREE_GROUP), out))
			elog(ERROR, "gpuext: malformed gpuext_ptree lookup batch");
	}
}

/* qsort order of merge entries (indexes into keys/tids): gx_ptree_merge_cmp */
static const uint64 *merge_sort_keys;
static const uint64 *merge_sort_tids;

static int
cpu_merge_order(const void *a, const void *b)
{
	uint32		i = *(const uint32 *) a;
	uint32		j = *(const uint32 *) b;

	return gx_ptree_merge_cmp(merge_sort_keys[i], merge_sort_tids[i],
							  merge_sort_keys[j], merge_sort_tids[j]);
}

/*
 * GX_REQ_PTREE_MERGE: plan the merge of a gpuext_ptree delta (gx_ptree.h):
 * sort the entries by (key, TID) (qsort here, a radix sort on the GPU),
 * then the kernel's per-entry steps: keep the first of each (key, TID),
 * and rank the kept ones in the mirror registered under arg2
 */
static void
cpu_ptree_merge(GxBatch *batch)
{
	const GxPtreeMirror *m = cpu_table_of(batch->arg2);
	uint64		n = batch->arg;
	const uint64 *keys = (const uint64 *) ((const char *) batch + batch->program_offset);
	const uint64 *tids;
	uint64	   *out = (uint64 *) gx_batch_out(batch);
	uint64	   *skeys,
			   *stids;
	uint32	   *order;
	uint64		kept = 0;

	if (m == NULL || n == 0 || n >= PG_UINT32_MAX ||
		batch->program_len < gx_ptree_merge_in_size(n) ||
		batch->out_len < gx_ptree_merge_out_size(n))
		elog(ERROR, "gpuext: malformed gpuext_ptree merge batch");
	tids = keys + n;
	order = palloc_extended(sizeof(uint32) * n, MCXT_ALLOC_HUGE);
	skeys = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	stids = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	for (uint32 i = 0; i < n; i++)
		order[i] = i;
	merge_sort_keys = keys;
	merge_sort_tids = tids;
	qsort(order, n, sizeof(uint32), cpu_merge_order);
	for (uint64 i = 0; i < n; i++)
	{
		skeys[i] = keys[order[i]];
		stids[i] = tids[order[i]];
	}
	for (uint64 i = 0; i < n; i++)
	{
		if ((i & 4095) == 0 && i > 0)
			CHECK_FOR_INTERRUPTS();
		if (gx_ptree_merge_keep(skeys, stids, i))
			gx_ptree_merge_emit(m, skeys, stids, i, kept++, n, out);
	}
	out[0] = kept;
	pfree(order);
	pfree(skeys);
	pfree(stids);
}

/*
 * Run one batch of len bytes to completion in this backend, once it
 * passed the checks the service makes before a launch (gx_request_check;
 * the tables a batch names are this backend's own, checked where used).
 */
void
gx_cpu_run_batch(GxBatch *batch, Size len)
{
	char		err[GX_ERRLEN];

	if (!gx_request_check((int) batch->kind, batch, len, NULL, NULL, err, sizeof(err)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("gpuext: the CPU engine rejected a malformed request"),
				 errdetail("%s", err)));
	batch->kernel_error = GX_KERR_NONE;
	switch (batch->kind)
	{
		case GX_REQ_NOOP:
			break;
		case GX_REQ_PAGE_COUNT:
			cpu_page_count(batch);
			break;
		case GX_REQ_SLEEP:
			cpu_sleep(batch);
			break;
		case GX_REQ_SCAN:
			cpu_scan(batch);
			break;
		case GX_REQ_AGG:
			cpu_agg(batch);
			break;
		case GX_REQ_JOIN:
			cpu_join(batch);
			break;
		case GX_REQ_RTREE_SEARCH:
			cpu_rtree_search(batch);
			break;
		case GX_REQ_PTREE_LOOKUP:
			cpu_ptree_lookup(batch);
			break;
		case GX_REQ_PTREE_MERGE:
			cpu_ptree_merge(batch);
			break;
		default:
			elog(ERROR, "gpuext: unknown batch kind %u", batch->kind);
	}
}
