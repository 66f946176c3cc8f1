/*-------------------------------------------------------------------------
 * validate.c
 *		Checks of a request against its batch and the tasks it names,
 *		before anything runs it: the GPU service calls them before a
 *		launch, the CPU engine before it runs a batch.
 *
 * A request is laid out by a backend in the DMA arena (or, for the CPU
 * engine, in its own memory): offsets, counts and lengths that a kernel
 * trusts.  Each request kind has one check here that both engines use,
 * so that a malformed request (a bug, or corrupt shared memory) becomes a
 * clean ERROR in the backend instead of a kernel or the CPU engine
 * reading or writing outside the batch, the task or shared_buffers.  The
 * task-dependent checks need the task's description, which only the
 * service has (the CPU engine's tables are the backend's own memory and
 * checked where they are used).
 *
 * IDENTIFICATION
 *		src/validate.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "storage/bufmgr.h"

#include "gx_agg.h"
#include "gx_join.h"
#include "gx_ptree.h"
#include "gx_rtree.h"

#define REJECT(...) \
	do { snprintf(err, errlen, __VA_ARGS__); return false; } while (0)

/* Does [off, off + len) lie inside 'size' bytes?  (No overflow.) */
static inline bool
range_ok(uint64 off, uint64 len, uint64 size)
{
	return off <= size && len <= size - off;
}

/* a * b, or UINT64_MAX when it overflows (so a check against it fails) */
static inline uint64
mul_or_max(uint64 a, uint64 b)
{
	if (a != 0 && b > PG_UINT64_MAX / a)
		return PG_UINT64_MAX;
	return a * b;
}

/*
 * The batch's own layout: its header, pages, program and output areas
 * inside its batch_len bytes, and every page reference inside
 * shared_buffers (a cached page's slot is checked against its cache by
 * whoever reads it).
 */
static bool
layout_ok(int kind, const GxBatch *b, uint64 batch_len, char *err, int errlen)
{
	const GxPageRef *refs;

	if (batch_len < sizeof(GxBatch))
		REJECT("the batch is shorter than its header");
	if (b->kind != (uint32) kind)
		REJECT("the batch is of kind %u, the request of kind %d", b->kind, kind);
	if (!range_ok(b->pages_offset, (uint64) b->npages * sizeof(GxPageRef), batch_len))
		REJECT("the batch's %u pages lie outside its %llu bytes", b->npages,
			   (unsigned long long) batch_len);
	if (!range_ok(b->program_offset, b->program_len, batch_len))
		REJECT("the batch's program area lies outside its %llu bytes",
			   (unsigned long long) batch_len);
	if (!range_ok(b->out_offset, b->out_len, batch_len))
		REJECT("the batch's output area (%u bytes at %u) lies outside its %llu bytes",
			   b->out_len, b->out_offset, (unsigned long long) batch_len);
	refs = gx_batch_pages(b);
	for (uint32 i = 0; i < b->npages; i++)
	{
		if (refs[i].nline > GX_MAX_TUPLES_PER_PAGE)
			REJECT("page %u of the batch has %u line pointers", i, refs[i].nline);
		if (refs[i].flags & GX_PAGE_CACHED)
		{
			if (b->cache_slot == 0 && b->cache_id == 0)
				REJECT("page %u of the batch is cached, but the batch names no cache", i);
			if (kind != GX_REQ_SCAN && kind != GX_REQ_AGG && kind != GX_REQ_JOIN)
				REJECT("a request of kind %d reads no column cache", kind);
			continue;
		}
		if (refs[i].buf_id >= (uint32) NBuffers)
			REJECT("page %u of the batch names buffer %u of %d", i, refs[i].buf_id, NBuffers);
	}
	return true;
}

/* The output area holds 'per' bytes for each of the batch's pages. */
static bool
out_per_page_ok(const GxBatch *b, uint64 per, char *err, int errlen)
{
	if (mul_or_max(b->npages, per) > b->out_len)
		REJECT("the output area (%u bytes) is too small for %u pages", b->out_len, b->npages);
	return true;
}

/* The batch's device program, and its spec of spec_bytes after it. */
static bool
program_ok(const GxBatch *b, uint64 spec_bytes, const void **spec, char *err, int errlen)
{
	const GxProgram *prog = (const GxProgram *) ((const char *) b + b->program_offset);
	uint64		spec_at;

	if (b->program_len < sizeof(GxProgram) || !gx_program_ok(prog, b->program_len))
		REJECT("malformed device program");
	spec_at = ((uint64) prog->length + 15) & ~(uint64) 15;
	if (spec_bytes > 0 && !range_ok(spec_at, spec_bytes, b->program_len))
		REJECT("the device program's spec lies outside the program area");
	if (spec)
		*spec = gx_program_spec(prog);
	return true;
}

/* The task a request works on is of the kind that made 'want'. */
static bool
task_kind_ok(int kind, const GxTaskInfo *task, int want, char *err, int errlen)
{
	if (task != NULL && task->kind != want)
		REJECT("a request of kind %d names a task made by a request of kind %d",
			   kind, task->kind);
	return true;
}

/* An aggregation spec's entries, and their fit in the group table. */
static bool
agg_spec_ok(const GxAggSpec *spec, const GxTaskInfo *task, char *err, int errlen)
{
	if (spec->nkeys > GX_AGG_MAX_KEYS || spec->naggs > GX_AGG_MAX_AGGS ||
		spec->entry_size < 16 || spec->entry_size % 16 != 0)
		REJECT("malformed aggregation spec");
	if (task != NULL && (task->bytes < GX_AGG_TABLE_HEADER ||
						 mul_or_max(task->capacity, spec->entry_size) >
						 task->bytes - GX_AGG_TABLE_HEADER))
		REJECT("entries of %u bytes do not fit the group table's %llu bytes",
			   spec->entry_size, (unsigned long long) task->bytes);
	return true;
}

/* A join spec's depths, and the join tables it probes. */
static bool
join_spec_ok(const GxJoinSpec *spec, const GxTaskInfo *tables, char *err, int errlen)
{
	if (spec->ndepths == 0 || spec->ndepths > GX_JOIN_MAX_DEPTH ||
		spec->npayload > GX_JOIN_MAX_PAYLOAD)
		REJECT("malformed join spec");
	if (tables != NULL && tables->ndepths != spec->ndepths)
		REJECT("the join spec has %u depths, the join tables %u",
			   spec->ndepths, tables->ndepths);
	return true;
}

/*
 * Is a request of 'kind' well-formed: its batch of batch_len bytes, and
 * the tasks it names (task: batch->task_id's; task2: a fused
 * aggregation's join tables, arg2's), described by the service, or NULL
 * where the engine checks its own tables?  On false, err says why.
 */
bool
gx_request_check(int kind, const GxBatch *b, uint64 batch_len, const GxTaskInfo *task,
				 const GxTaskInfo *task2, char *err, int errlen)
{
	const void *spec;

	if (kind <= 0 || kind >= GX_REQ_KIND_MAX)
		REJECT("unknown request kind %d", kind);
	if (!layout_ok(kind, b, batch_len, err, errlen))
		return false;
	switch (kind)
	{
		case GX_REQ_NOOP:
		case GX_REQ_SLEEP:
		case GX_REQ_CALIBRATE:
		case GX_REQ_TASK_DESTROY:
			return true;
		case GX_REQ_PAGE_COUNT:
			return out_per_page_ok(b, sizeof(GxPageCount), err, errlen);
		case GX_REQ_SCAN:
			return program_ok(b, 0, NULL, err, errlen) &&
				out_per_page_ok(b, sizeof(GxScanPageOut), err, errlen);
		case GX_REQ_TASK_CREATE:
			/* arg: entries (a power of two), arg2: most groups; entries >= 16 bytes */
			if (b->arg == 0 || (b->arg & (b->arg - 1)) != 0 || b->arg2 > b->arg ||
				b->reserve_bytes < GX_AGG_TABLE_HEADER ||
				mul_or_max(b->arg, 16) > b->reserve_bytes - GX_AGG_TABLE_HEADER)
				REJECT("malformed group table of %llu entries in %llu bytes",
					   (unsigned long long) b->arg, (unsigned long long) b->reserve_bytes);
			return true;
		case GX_REQ_AGG:
			if (!task_kind_ok(kind, task, GX_REQ_TASK_CREATE, err, errlen) ||
				!program_ok(b, b->arg2 != 0 ?
							((sizeof(GxAggSpec) + 15) & ~(uint64) 15) + sizeof(GxJoinSpec) :
							sizeof(GxAggSpec), &spec, err, errlen) ||
				!agg_spec_ok((const GxAggSpec *) spec, task, err, errlen))
				return false;
			/* fused with a join: arg2 names the join tables */
			if (b->arg2 != 0)
				return task_kind_ok(kind, task2, GX_REQ_JOIN_BUILD, err, errlen) &&
					join_spec_ok(gx_join_spec_after_agg((const GxAggSpec *) spec), task2,
								 err, errlen);
			return true;
		case GX_REQ_TASK_FETCH:
			{
				/* arg: first entry, arg2: entries, program_len: an entry's bytes */
				uint64		entry = b->program_len;

				if (entry == 0 || entry % 16 != 0 || b->out_offset % 16 != 0)
					REJECT("malformed fetch of entries of %llu bytes", (unsigned long long) entry);
				if (mul_or_max(b->arg2, entry) > b->out_len ||
					b->out_len - mul_or_max(b->arg2, entry) < GX_AGG_TABLE_HEADER)
					REJECT("the output area (%u bytes) is too small for %llu entries of %llu bytes",
						   b->out_len, (unsigned long long) b->arg2, (unsigned long long) entry);
				if (!task_kind_ok(kind, task, GX_REQ_TASK_CREATE, err, errlen))
					return false;
				if (task != NULL &&
					(!range_ok(b->arg, b->arg2, task->capacity) ||
					 task->bytes < GX_AGG_TABLE_HEADER ||
					 mul_or_max(b->arg + b->arg2, entry) > task->bytes - GX_AGG_TABLE_HEADER))
					REJECT("entries [%llu, %llu) lie outside the group table's %llu entries",
						   (unsigned long long) b->arg,
						   (unsigned long long) (b->arg + b->arg2),
						   (unsigned long long) task->capacity);
				return true;
			}
		case GX_REQ_JOIN_BUILD:
			{
				const GxJoinTables *t = (const GxJoinTables *) ((const char *) b + b->out_offset);
				uint64		rows = 0;

				if (b->out_len < sizeof(GxJoinTables) || b->out_len > b->reserve_bytes)
					REJECT("malformed join tables (%u bytes in a task of %llu)",
						   b->out_len, (unsigned long long) b->reserve_bytes);
				if (t->ndepths == 0 || t->ndepths > GX_JOIN_MAX_DEPTH ||
					t->total_bytes > b->out_len)
					REJECT("malformed join tables");
				for (uint32 d = 0; d < t->ndepths; d++)
				{
					const GxJoinTable *jt;
					uint64		room;

					if (!range_ok(t->table_off[d], sizeof(GxJoinTable), t->total_bytes))
						REJECT("join table %u lies outside the tables", d);
					jt = (const GxJoinTable *) ((const char *) t + t->table_off[d]);
					room = t->total_bytes - t->table_off[d];
					if (jt->capacity == 0 || (jt->capacity & (jt->capacity - 1)) != 0 ||
						!range_ok(jt->slots_off, mul_or_max(jt->capacity, sizeof(uint32)), room) ||
						!range_ok(jt->rows_off, mul_or_max(jt->nrows, sizeof(GxJoinRow)), room) ||
						!range_ok(jt->keys_off, mul_or_max(jt->nwords, sizeof(uint64)), room) ||
						(jt->nvalues > 0 &&
						 !range_ok(jt->values_off,
								   mul_or_max(jt->nrows, (uint64) jt->nvalues * sizeof(GxJoinValue)),
								   room)))
						REJECT("join table %u's areas lie outside the tables", d);
					rows += jt->nrows;
				}
				if (rows != b->arg)
					REJECT("the join tables hold %llu rows, the request says %llu",
						   (unsigned long long) rows, (unsigned long long) b->arg);
				return true;
			}
		case GX_REQ_JOIN:
			if (!task_kind_ok(kind, task, GX_REQ_JOIN_BUILD, err, errlen) ||
				!program_ok(b, sizeof(GxJoinSpec), &spec, err, errlen) ||
				!join_spec_ok((const GxJoinSpec *) spec, task, err, errlen))
				return false;
			return out_per_page_ok(b, gx_join_out_per_page(((const GxJoinSpec *) spec)->ndepths),
								   err, errlen);
		case GX_REQ_RTREE_LOAD:
			if (b->arg != 0 || b->out_len < sizeof(GxRtMirror) || b->out_len > b->reserve_bytes)
				REJECT("malformed tree mirror");
			return true;
		case GX_REQ_RTREE_FILL:
			if (!task_kind_ok(kind, task, GX_REQ_RTREE_LOAD, err, errlen))
				return false;
			if (task != NULL && !range_ok(b->arg, b->out_len, task->bytes))
				REJECT("a part of a tree mirror lies outside its task");
			return true;
		case GX_REQ_RTREE_SEARCH:
			if (!task_kind_ok(kind, task, GX_REQ_RTREE_LOAD, err, errlen))
				return false;
			if (b->program_len < sizeof(GxRtSearch) ||
				!gx_rt_search_ok((const GxRtSearch *) ((const char *) b + b->program_offset),
								 b->program_len) ||
				b->out_len < sizeof(GxRtSearchOut))
				REJECT("malformed gpuext_gist search");
			return true;
		case GX_REQ_PTREE_LOAD:
			if (b->out_len < sizeof(GxPtreeMirror) || b->out_len > b->reserve_bytes ||
				!gx_ptree_mirror_ok((const GxPtreeMirror *) ((const char *) b + b->out_offset),
									b->reserve_bytes))
				REJECT("malformed gpuext_ptree mirror");
			return true;
		case GX_REQ_PTREE_UPLOAD:
			if (!task_kind_ok(kind, task, GX_REQ_PTREE_LOAD, err, errlen))
				return false;
			if (task != NULL && !range_ok(b->arg, b->out_len, task->bytes))
				REJECT("a part of a gpuext_ptree mirror lies outside its task");
			return true;
		case GX_REQ_PTREE_LOOKUP:
			if (!task_kind_ok(kind, task, GX_REQ_PTREE_LOAD, err, errlen))
				return false;
			/* (no probes: nothing to do) */
			if (b->arg >= PG_UINT32_MAX ||
				(b->arg > 0 && (!gx_ptree_probes_ok((uint32) b->arg, b->program_len) ||
								mul_or_max(b->arg, sizeof(int64)) > b->out_len)))
				REJECT("malformed gpuext_ptree lookup of %llu keys", (unsigned long long) b->arg);
			return true;
		case GX_REQ_PTREE_MERGE:
			if (!task_kind_ok(kind, task, GX_REQ_PTREE_LOAD, err, errlen))
				return false;
			if (b->arg == 0 || b->arg >= PG_UINT32_MAX ||
				b->program_len < gx_ptree_merge_in_size(b->arg) ||
				b->out_len < gx_ptree_merge_out_size(b->arg))
				REJECT("malformed gpuext_ptree merge of %llu entries", (unsigned long long) b->arg);
			return true;
	}
	REJECT("unknown request kind %d", kind);
}
