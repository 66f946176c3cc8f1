/*-------------------------------------------------------------------------
 * relscan.c
 *		Heap pages to batches: pin pages in shared_buffers and record what
 *		the device needs to read them in place.
 *
 * For every page of a batch the backend pins the buffer (for the life of
 * the batch), takes the share lock, and records the buffer id and the
 * line pointer count.  A page that is all-visible goes as it is; for any
 * other page a bitmap of the tuples visible to the query's snapshot is
 * computed under the lock, exactly as PostgreSQL's page-at-a-time heap
 * scan does.  Pages with nothing visible are skipped.  The device then
 * reads tuples with only the pin held, as heap scans do: a pin keeps
 * tuples from moving (pruning needs a cleanup lock).  Pages that are not
 * resident are read into shared_buffers through the buffer manager.
 *
 * IDENTIFICATION
 *		src/relscan.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "access/heapam.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "colcache.h"

struct GxPageSource
{
	Relation	rel;
	Snapshot	snapshot;
	BufferAccessStrategy strategy;
	BlockNumber nblocks;
	BlockNumber next;
	ParallelBlockTableScanDesc pscan;
	ParallelBlockTableScanWorkerData pwork;
	bool		parallel_started;
	bool		done;
	GxCcScan   *cache;			/* column cache of the relation, or NULL */
	uint64		cached_pages;	/* pages taken from it */
};

/* Start reading the pages of a heap relation (serially, or a share of a parallel scan). */
GxPageSource *
gx_pages_begin(Relation rel, Snapshot snapshot, ParallelBlockTableScanDesc pscan)
{
	GxPageSource *src = palloc0(sizeof(GxPageSource));

	/* the device reads shared buffers: local (temporary) ones are out of reach */
	if (RelationUsesLocalBuffers(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpuext cannot read temporary relation \"%s\"",
						RelationGetRelationName(rel))));
	src->rel = rel;
	src->snapshot = snapshot;
	src->pscan = pscan;
	src->nblocks = pscan ? pscan->phs_nblocks : RelationGetNumberOfBlocks(rel);
	/* large relations go through a ring, like sequential scans */
	if ((Size) src->nblocks > (Size) NBuffers / 4)
		src->strategy = GetAccessStrategy(BAS_BULKREAD);
	/* serializable transactions lock the relation, as a seqscan does */
	PredicateLockRelation(rel, snapshot);
	pgstat_count_heap_scan(rel);
	return src;
}

/* Restart from the first page (serial scans; parallel ones reinitialise the shared state). */
void
gx_pages_rescan(GxPageSource *src)
{
	src->next = 0;
	src->done = false;
	src->parallel_started = false;
	if (!src->pscan)
		src->nblocks = RelationGetNumberOfBlocks(src->rel);
}

/* The next block number to read, or InvalidBlockNumber. */
static BlockNumber
next_block(GxPageSource *src)
{
	if (src->pscan)
	{
		if (!src->parallel_started)
		{
			table_block_parallelscan_startblock_init(src->rel, &src->pwork, src->pscan);
			src->parallel_started = true;
		}
		return table_block_parallelscan_nextpage(src->rel, &src->pwork, src->pscan);
	}
	if (src->next >= src->nblocks)
		return InvalidBlockNumber;
	return src->next++;
}

/*
 * Record one pinned page in 'ref', under its share lock.  Returns false
 * if no tuple of the page is visible (the caller drops the page).
 */
static bool
describe_page(GxPageSource *src, Buffer buf, BlockNumber blkno, GxPageRef *ref)
{
	Page		page = BufferGetPage(buf);
	OffsetNumber lines;
	bool		all_visible;
	bool		serializable = IsolationIsSerializable();
	bool		any = false;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	lines = PageGetMaxOffsetNumber(page);
	all_visible = PageIsAllVisible(page) && !src->snapshot->takenDuringRecovery;

	ref->buf_id = buf - 1;
	ref->nline = lines;
	ref->blkno = blkno;
	ref->flags = all_visible ? GX_PAGE_ALL_VISIBLE : 0;
	memset(ref->visible, 0, sizeof(ref->visible));

	if (all_visible && !serializable)
	{
		/* every normal item is visible; VACUUM may have left none */
		for (OffsetNumber off = FirstOffsetNumber; off <= lines && !any; off++)
			any = ItemIdIsNormal(PageGetItemId(page, off));
	}
	else
	{
		for (OffsetNumber off = FirstOffsetNumber; off <= lines; off++)
		{
			ItemId		lpp = PageGetItemId(page, off);
			HeapTupleData loctup;
			bool		valid;

			if (!ItemIdIsNormal(lpp))
				continue;
			loctup.t_tableOid = RelationGetRelid(src->rel);
			loctup.t_data = (HeapTupleHeader) PageGetItem(page, lpp);
			loctup.t_len = ItemIdGetLength(lpp);
			ItemPointerSet(&loctup.t_self, blkno, off);
			valid = all_visible ||
				HeapTupleSatisfiesVisibility(&loctup, src->snapshot, buf);
			HeapCheckForSerializableConflictOut(valid, src->rel, &loctup, buf, src->snapshot);
			if (valid)
			{
				gx_bitmap_set(ref->visible, off);
				any = true;
			}
		}
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	return any;
}

/*
 * Pin up to max_pages pages with visible tuples and describe them in
 * refs[]; their buffers go to buffers[] (released by gx_pages_release).
 * Returns the number of pages, 0 at the end of the relation.
 */
uint32
gx_pages_fill(GxPageSource *src, GxPageRef *refs, Buffer *buffers, uint32 max_pages)
{
	uint32		n = 0;

	while (n < max_pages && !src->done)
	{
		BlockNumber blkno = next_block(src);
		Buffer		buf;

		if (blkno == InvalidBlockNumber)
		{
			src->done = true;
			break;
		}
		CHECK_FOR_INTERRUPTS();
		if (src->cache)
		{
			int64		slot = gx_colcache_slot(src->cache, blkno);

			if (slot >= 0)
			{
				const GxCcPage *pg = &gx_cc_pages(src->cache->cc)[slot];

				/* cached: no pin; a page without rows has nothing visible */
				src->cached_pages++;
				if (pg->nrows == 0)
					continue;
				refs[n].buf_id = (uint32) slot;
				refs[n].nline = pg->maxoff;
				refs[n].blkno = blkno;
				refs[n].flags = GX_PAGE_ALL_VISIBLE | GX_PAGE_CACHED;
				memset(refs[n].visible, 0, sizeof(refs[n].visible));
				buffers[n++] = InvalidBuffer;
				continue;
			}
		}
		buf = ReadBufferExtended(src->rel, MAIN_FORKNUM, blkno, RBM_NORMAL, src->strategy);
		heap_page_prune_opt(src->rel, buf);
		if (describe_page(src, buf, blkno, &refs[n]))
			buffers[n++] = buf;
		else
			ReleaseBuffer(buf);
	}
	return n;
}

/*
 * Pages per batch: gpuext.max_batch_pages, but never more than a small
 * share of shared_buffers, since every page of a batch stays pinned and
 * a backend (with its parallel workers) keeps several batches in flight.
 */
uint32
gx_batch_pages_cap(int batches_in_flight)
{
	int			share = NBuffers / (batches_in_flight * 4 * (max_parallel_workers + 1));

	return Min(gpuext_max_batch_pages, Max(16, share));
}

/*
 * Unpin the pages of a batch.  (On error the resource owner unpins them
 * before gpuext's callback cancels the request: a kernel still running may
 * then read a page that was reused, but it writes only to its own batch in
 * the arena, whose results are discarded.)
 */
void
gx_pages_release(Buffer *buffers, uint32 npages)
{
	for (uint32 i = 0; i < npages; i++)
		if (BufferIsValid(buffers[i]))
			ReleaseBuffer(buffers[i]);
}

/*
 * Read the pages that the column cache holds from it (the caller opened
 * the cache for this scan, after its snapshot; gx_pages_end closes it).
 */
void
gx_pages_use_cache(GxPageSource *src, GxCcScan *cache)
{
	src->cache = cache;
}

/* Pages of the scan taken from the column cache so far. */
uint64
gx_pages_cached(GxPageSource *src)
{
	return src->cached_pages;
}

void
gx_pages_end(GxPageSource *src)
{
	gx_colcache_close(src->cache);
	if (src->strategy)
		FreeAccessStrategy(src->strategy);
	pfree(src);
}

/* Bytes of a batch of npages with a program and per-page results. */
Size
gx_batch_size(uint32 npages, Size program_len, Size out_per_page)
{
	Size		sz = MAXALIGN(sizeof(GxBatch));

	sz += (Size) npages * sizeof(GxPageRef);
	sz = TYPEALIGN(16, sz) + program_len;
	sz = TYPEALIGN(64, sz) + (Size) npages * out_per_page;
	return sz;
}

/* Lay out a batch allocated with gx_batch_size for up to npages. */
void
gx_batch_layout(GxBatch *batch, int kind, uint32 npages, Size program_len, Size out_per_page)
{
	Size		off = MAXALIGN(sizeof(GxBatch));

	batch->kind = kind;
	batch->npages = 0;
	batch->pages_offset = off;
	off += (Size) npages * sizeof(GxPageRef);
	off = TYPEALIGN(16, off);
	batch->program_offset = off;
	batch->program_len = program_len;
	off = TYPEALIGN(64, off + program_len);
	batch->out_offset = off;
	batch->out_len = (Size) npages * out_per_page;
}
