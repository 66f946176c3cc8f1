/*-------------------------------------------------------------------------
 * pipeline.c
 *		Keep the device busy: page batches are pinned, described and
 *		submitted ahead of the executor, up to GX_PIPELINE_DEPTH at a time,
 *		so the GPU never waits for the CPU and the CPU rarely waits for the
 *		GPU.
 *
 * The engine (GPU or CPU) is decided when the pipeline starts; batches go
 * through gx_engine_*, which applies the fallback policy.  The pages of a
 * batch stay pinned until the consumer releases the batch, so tuples can
 * be returned straight from shared_buffers.
 *
 * IDENTIFICATION
 *		src/pipeline.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "commands/explain.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "colcache.h"
#include "pipeline.h"
#include "timing.h"

/* Set up a pipeline; the engine and the page source start lazily. */
void
gx_pipeline_init(GxPipeline *p, Relation rel, Snapshot snapshot, int kind, Size out_per_page)
{
	memset(p, 0, sizeof(*p));
	p->rel = rel;
	p->snapshot = snapshot;
	p->kind = kind;
	p->out_per_page = out_per_page;
	gx_engine_start(&p->engine);
	/* the CPU engine runs batches at once: nothing to overlap */
	p->depth = p->engine.use_gpu ? GX_PIPELINE_DEPTH : 1;

	/*
	 * Pinned pages are a shared resource: keep every process's share of
	 * shared_buffers small, whatever gpuext.max_batch_pages says.
	 */
	p->max_pages = gx_batch_pages_cap(GX_PIPELINE_DEPTH);
	for (int i = 0; i < GX_PIPELINE_DEPTH; i++)
		p->batches[i].buffers = palloc(sizeof(Buffer) * p->max_pages);
}

/* The program (and what follows it, e.g. an aggregation spec) of every batch. */
void
gx_pipeline_set_program(GxPipeline *p, const GxProgram *program, Size len)
{
	p->program = program;
	p->program_len = program ? len : 0;
}

/*
 * Read, describe and submit one more batch.  Returns false when the
 * relation has no more pages.
 */
static bool
start_batch(GxPipeline *p)
{
	int			slot = (p->head + p->count) % GX_PIPELINE_DEPTH;
	GxPipeBatch *b = &p->batches[slot];
	Size		proglen = p->program_len;
	GxBatch    *batch;
	uint32		n;
	instr_time	t0;

	if (p->src == NULL)
	{
		p->src = gx_pages_begin(p->rel, p->snapshot, p->pscan);

		/*
		 * Scans, joins' outer scans and aggregations (fused with a join or
		 * not) read cached pages from the column cache: on the CPU engine
		 * in place, on the GPU from the service's device copy (behind
		 * gpuext.cache_gpu).  Opened after the snapshot was taken, as
		 * colcache.c requires.
		 */
		if ((p->kind == GX_REQ_SCAN || p->kind == GX_REQ_AGG || p->kind == GX_REQ_JOIN) &&
			(!p->engine.use_gpu || gpuext_cache_gpu))
		{
			GxCcScan   *cache = gx_colcache_open(p->rel, p->snapshot, p->program);

			if (cache)
			{
				gx_pages_use_cache(p->src, cache);
				p->cache_open = true;
				p->cache_id = cache->cpu_id;
				if (p->engine.use_gpu)
				{
					/* the service names the device copy by registry slot */
					p->cache_slot = cache->slot + 1;
					p->cache_gen = cache->generation;
				}
			}
		}
	}

	batch = gx_engine_batch_alloc(&p->engine, &b->pb,
								  gx_batch_size(p->max_pages, proglen, p->out_per_page));
	gx_batch_layout(batch, p->kind, p->max_pages, proglen, p->out_per_page);
	if (proglen > 0)
		memcpy((char *) batch + batch->program_offset, p->program, proglen);
	INSTR_TIME_SET_CURRENT(t0);
	n = gx_pages_fill(p->src, (GxPageRef *) gx_batch_pages(batch), b->buffers, p->max_pages);
	p->page_ms += gx_elapsed_us(t0) / 1000.0;
	p->cached_pages = gx_pages_cached(p->src);
	if (n == 0)
	{
		gx_engine_batch_free(&b->pb);
		p->source_done = true;
		return false;
	}
	batch->npages = n;
	batch->out_len = (uint32) (n * p->out_per_page);
	batch->task_id = p->task_id;
	batch->cache_id = p->cache_id;
	batch->cache_slot = p->cache_slot;
	batch->cache_gen = p->cache_gen;
	if (p->cache_open)
	{
		const GxPageRef *refs = gx_batch_pages(batch);

		for (uint32 i = 0; i < n; i++)
			if (refs[i].flags & GX_PAGE_CACHED)
				p->cached_in_batches++;
	}
	batch->arg = p->batch_arg;
	batch->arg2 = p->batch_arg2;
	b->npages = n;
	b->used = true;
	p->count++;
	p->nbatches++;
	p->npages += n;
	gx_engine_submit(&p->engine, &b->pb);
	return true;
}

/*
 * The next batch with its results, in page order, or NULL when the scan is
 * complete.  The previous batch must have been released.
 */
GxPipeBatch *
gx_pipeline_next(GxPipeline *p)
{
	GxPipeBatch *b;
	instr_time	t0;

	while (p->count < p->depth && !p->source_done)
		if (!start_batch(p))
			break;
	if (p->count == 0)
		return NULL;
	b = &p->batches[p->head];
	INSTR_TIME_SET_CURRENT(t0);
	gx_engine_wait(&p->engine, &b->pb);
	p->wait_ms += gx_elapsed_us(t0) / 1000.0;
	return b;
}

/*
 * Tuple 'off' of page i of batch b (one the device passed or wants
 * rechecked), into tup, for a node that returns the row from the heap
 * page.  A page the column cache answered for has no pin yet: it is pinned
 * now, only because it has such a row, and released with the batch's
 * other pages.  The rows the cache holds are still there: they were
 * all-visible when cached, no write has been seen since (colcache.c), and
 * line pointers of rows visible to the scan's snapshot stay put.
 */
void
gx_pipeline_heap_tuple(GxPipeline *p, GxPipeBatch *b, uint32 i, OffsetNumber off,
					   HeapTuple tup)
{
	const GxPageRef *ref = &gx_batch_pages(b->pb.batch)[i];
	Page		page;
	ItemId		lp;

	if (!BufferIsValid(b->buffers[i]))
	{
		b->buffers[i] = ReadBufferExtended(p->rel, MAIN_FORKNUM, ref->blkno, RBM_NORMAL, NULL);
		p->cached_pages_read++;
	}
	page = BufferGetPage(b->buffers[i]);
	lp = PageGetItemId(page, off);
	if (off > PageGetMaxOffsetNumber(page) || !ItemIdIsNormal(lp))
		elog(ERROR, "gpuext: row (%u,%u) of \"%s\" is not in the heap page",
			 ref->blkno, off, RelationGetRelationName(p->rel));
	tup->t_data = (HeapTupleHeader) PageGetItem(page, lp);
	tup->t_len = ItemIdGetLength(lp);
	tup->t_tableOid = RelationGetRelid(p->rel);
	ItemPointerSet(&tup->t_self, ref->blkno, off);
}

/*
 * EXPLAIN ANALYZE (not in regression test mode): where the batches ran,
 * and the kB of heap pages they sent to the engine (a GPU reads them over
 * the link): the pages of the batches less those the column cache held.
 */
void
gx_pipeline_explain_batches(GxPipeline *p, ExplainState *es)
{
	ExplainPropertyInteger("GPU Batches", NULL, p->engine.gpu_batches, es);
	ExplainPropertyInteger("CPU Batches", NULL, p->engine.cpu_batches, es);
	ExplainPropertyInteger("Fallback Batches", NULL, p->engine.fallback_batches, es);
	ExplainPropertyInteger("Heap Bytes Read", "kB",
						   (p->npages - p->cached_in_batches) * BLCKSZ / 1024, es);
}

/*
 * EXPLAIN ANALYZE of a node whose pipeline read a column cache: its cached
 * pages, and those read from the heap for the rows the node returned.
 */
void
gx_pipeline_explain_cache(GxPipeline *p, bool rows_returned, ExplainState *es)
{
	if (!p->cache_open)
		return;
	ExplainPropertyInteger("Cached Pages", NULL, p->cached_pages, es);
	if (rows_returned)
		ExplainPropertyInteger("Cached Pages Read for Rows", NULL, p->cached_pages_read, es);
}

/* Unpin the pages of a consumed batch and free its memory. */
void
gx_pipeline_release(GxPipeline *p, GxPipeBatch *b)
{
	Assert(b == &p->batches[p->head]);
	gx_pages_release(b->buffers, b->npages);
	gx_engine_batch_free(&b->pb);
	b->npages = 0;
	b->used = false;
	p->head = (p->head + 1) % GX_PIPELINE_DEPTH;
	p->count--;
	/*
	 * No refill here: gx_pipeline_next refills before it waits, and a node
	 * being shut down must not read its (parallel) page source again.
	 */
}

/* Drop every batch (cancelling those in flight). */
static void
drop_batches(GxPipeline *p)
{
	while (p->count > 0)
	{
		GxPipeBatch *b = &p->batches[p->head];

		gx_engine_batch_free(&b->pb);
		gx_pages_release(b->buffers, b->npages);
		b->npages = 0;
		b->used = false;
		p->head = (p->head + 1) % GX_PIPELINE_DEPTH;
		p->count--;
	}
	p->head = 0;
}

/* Start over from the first page (rescan). */
void
gx_pipeline_reset(GxPipeline *p)
{
	drop_batches(p);
	if (p->src)
		gx_pages_rescan(p->src);
	p->source_done = false;
}

void
gx_pipeline_end(GxPipeline *p)
{
	drop_batches(p);
	if (p->src)
		gx_pages_end(p->src);
	p->src = NULL;
	p->cache_id = 0;
	p->cache_slot = 0;
}

/*
 * EXPLAIN ANALYZE: where this process's time went (the device's time, and
 * the host's: pinning and describing pages, waiting for results; the rest
 * of the node's time is its own work on the results).
 */
void
gx_pipeline_explain_times(GxPipeline *p, ExplainState *es)
{
	ExplainPropertyFloat("Device Time", "ms", p->engine.device_ms, 3, es);
	ExplainPropertyFloat("Host Page Time", "ms", p->page_ms, 3, es);
	ExplainPropertyFloat("Wait Time", "ms", p->wait_ms, 3, es);
}
