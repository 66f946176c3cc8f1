/*-------------------------------------------------------------------------
 * gxgist_scan.c
 *		Searches of a gpuext_gist index: the scan keys become a batch of
 *		queries (an "&& ANY(array)" key is one query per element), and the
 *		tree is walked level by level, each node scanned against the whole
 *		batch (gx_rt_node_scan, cuda/gx_rtree.h), as in Beier et al.'s
 *		level-synchronous GiST scans.
 *
 * A scan collects every matching TID at its first call, under the
 * metapage's heavyweight share lock (see src/gxgist.c), sorts them into
 * heap order and returns them from memory.  Results are exact: no recheck.
 *
 * IDENTIFICATION
 *		src/gxgist_scan.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gxgist.h"

typedef struct GxgScanOpaqueData
{
	MemoryContext ctx;			/* the TID list; reset on rescan */
	bool		collected;
	ItemPointerData *tids;
	int64		ntids;
	int64		next;
} GxgScanOpaqueData;

typedef GxgScanOpaqueData *GxgScanOpaque;

/* a growable array in a memory context */
typedef struct GxgArray
{
	char	   *data;
	int64		n;
	int64		cap;
	Size		elem;
} GxgArray;

/* Append one element (elem bytes) to a, growing it in the current context */
static void
gxg_array_push(GxgArray *a, const void *item)
{
	if (a->n == a->cap)
	{
		a->cap = a->cap ? a->cap * 2 : 64;
		a->data = a->data ? repalloc_huge(a->data, a->cap * a->elem)
			: palloc_extended(a->cap * a->elem, MCXT_ALLOC_HUGE);
	}
	memcpy(a->data + a->n * a->elem, item, a->elem);
	a->n++;
}

/* ambeginscan */
IndexScanDesc
gxg_beginscan(Relation r, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(r, nkeys, norderbys);
	GxgScanOpaque so = palloc0(sizeof(GxgScanOpaqueData));

	so->ctx = AllocSetContextCreate(CurrentMemoryContext, "gpuext_gist scan",
									ALLOCSET_DEFAULT_SIZES);
	scan->opaque = so;
	return scan;
}

/* amrescan: new keys, forget the results */
void
gxg_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
		   ScanKey orderbys, int norderbys)
{
	GxgScanOpaque so = (GxgScanOpaque) scan->opaque;

	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
	MemoryContextReset(so->ctx);
	so->collected = false;
	so->tids = NULL;
	so->ntids = 0;
	so->next = 0;
}

/* amendscan */
void
gxg_endscan(IndexScanDesc scan)
{
	GxgScanOpaque so = (GxgScanOpaque) scan->opaque;

	MemoryContextDelete(so->ctx);
	pfree(so);
}

/* The query of one key argument: a box, or a point as a degenerate box */
static void
gxg_query_of(Datum arg, Oid argtype, int strategy, int key, GxRtQuery *q)
{
	if (argtype == POINTOID)
	{
		Point	   *p = DatumGetPointP(arg);

		q->xlo = q->xhi = p->x;
		q->ylo = q->yhi = p->y;
	}
	else
	{
		BOX		   *b = DatumGetBoxP(arg);

		q->xlo = b->low.x;
		q->ylo = b->low.y;
		q->xhi = b->high.x;
		q->yhi = b->high.y;
	}
	q->strategy = strategy;
	q->key = key;
}

/* the argument type of a strategy's operator */
static Oid
gxg_strategy_argtype(int strategy)
{
	return (strategy == GX_RT_CONTAINS_PT || strategy == GX_RT_PT_SAME) ? POINTOID : BOXOID;
}

/*
 * Turn the scan keys into queries, sorted by key.  Returns false when no
 * row can match (a NULL argument, an array of NULLs or an empty array).
 */
static bool
gxg_keys_to_queries(IndexScanDesc scan, GxgArray *queries)
{
	for (int k = 0; k < scan->numberOfKeys; k++)
	{
		ScanKey		sk = &scan->keyData[k];
		Oid			argtype = gxg_strategy_argtype(sk->sk_strategy);
		GxRtQuery	q;

		if (sk->sk_strategy < 1 || sk->sk_strategy > GX_RT_NSTRATEGIES)
			elog(ERROR, "gpuext_gist: unknown strategy %d", sk->sk_strategy);
		if (sk->sk_flags & SK_ISNULL)
			return false;
		if (sk->sk_flags & SK_SEARCHARRAY)
		{
			ArrayType  *arr = DatumGetArrayTypeP(sk->sk_argument);
			int16		typlen;
			bool		typbyval;
			char		typalign;
			Datum	   *elems;
			bool	   *nulls;
			int			nelems;
			int64		before = queries->n;

			get_typlenbyvalalign(ARR_ELEMTYPE(arr), &typlen, &typbyval, &typalign);
			deconstruct_array(arr, ARR_ELEMTYPE(arr), typlen, typbyval, typalign,
							  &elems, &nulls, &nelems);
			for (int i = 0; i < nelems; i++)
			{
				if (nulls[i])
					continue;
				gxg_query_of(elems[i], argtype, sk->sk_strategy, k, &q);
				gxg_array_push(queries, &q);
			}
			if (queries->n == before)
				return false;
		}
		else
		{
			gxg_query_of(sk->sk_argument, argtype, sk->sk_strategy, k, &q);
			gxg_array_push(queries, &q);
		}
	}
	return true;
}

/* Read the root, its level and the split count from the metapage */
static void
gxg_read_meta(Relation index, BlockNumber *root, uint64 *split_count)
{
	Buffer		metabuf = ReadBuffer(index, GXG_META_BLKNO);
	GxgMetaPageData *meta;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = gxg_check_meta(index, BufferGetPage(metabuf));
	*root = meta->root;
	*split_count = meta->split_count;
	UnlockReleaseBuffer(metabuf);
}

/* qsort order of TIDs */
static int
gxg_cmp_tid(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/*
 * The search: every heap TID whose key passes every key of the batch
 * (nkeys keys; the queries of one key are OR-ed).  Walks the tree level by
 * level; returns the TIDs in heap order, palloc'd in the current context.
 */
ItemPointerData *
gxg_search(Relation index, const GxRtQuery *queries, int nqueries, int nkeys,
		   int64 *ntids)
{
	bool		locked = !RecoveryInProgress();
	GxgArray	tids = {NULL, 0, 0, sizeof(ItemPointerData)};
	bool		match[GXG_MAX_NODE_SIZE];

	if (locked)
		LockPage(index, GXG_META_BLKNO, ShareLock);
	for (;;)
	{
		BlockNumber root;
		uint64		splits_before;
		uint64		splits_after;
		GxgArray	frontier = {NULL, 0, 0, sizeof(BlockNumber)};

		gxg_read_meta(index, &root, &splits_before);
		gxg_array_push(&frontier, &root);
		while (frontier.n > 0)
		{
			GxgArray	next = {NULL, 0, 0, sizeof(BlockNumber)};

			for (int64 f = 0; f < frontier.n; f++)
			{
				BlockNumber blk = ((BlockNumber *) frontier.data)[f];
				Buffer		buf;
				Page		page;
				GxRtEntry  *entries;
				int			n;
				bool		leaf;

				CHECK_FOR_INTERRUPTS();
				buf = ReadBuffer(index, blk);
				LockBuffer(buf, BUFFER_LOCK_SHARE);
				page = BufferGetPage(buf);
				if (PageIsNew(page) || GxgPageIsMeta(page) ||
					GxgPageGetOpaque(page)->page_id != GXG_PAGE_ID ||
					GxgPageGetNEntries(page) > GXG_MAX_NODE_SIZE)
					ereport(ERROR,
							(errcode(ERRCODE_INDEX_CORRUPTED),
							 errmsg("index \"%s\" block %u is not a gpuext_gist node",
									RelationGetRelationName(index), blk)));
				entries = GxgPageGetEntries(page);
				n = GxgPageGetNEntries(page);
				leaf = GxgPageIsLeaf(page);
				gx_rt_node_scan(entries, n, leaf, queries, nqueries, nkeys, match);
				for (int i = 0; i < n; i++)
				{
					if (!match[i])
						continue;
					if (leaf)
					{
						ItemPointerData tid;

						ItemPointerSet(&tid, entries[i].blk, entries[i].off);
						gxg_array_push(&tids, &tid);
					}
					else
						gxg_array_push(&next, &entries[i].blk);
				}
				UnlockReleaseBuffer(buf);
			}
			if (frontier.data)
				pfree(frontier.data);
			frontier = next;
		}

		/* on a standby, a split replayed meanwhile may have moved entries */
		gxg_read_meta(index, &root, &splits_after);
		if (splits_after == splits_before)
			break;
		tids.n = 0;
	}
	if (locked)
		UnlockPage(index, GXG_META_BLKNO, ShareLock);

	if (tids.n > 1)
		qsort(tids.data, tids.n, sizeof(ItemPointerData), gxg_cmp_tid);
	*ntids = tids.n;
	return (ItemPointerData *) tids.data;
}

/* Run the search of this scan's keys once, into the scan's context */
static void
gxg_collect(IndexScanDesc scan)
{
	GxgScanOpaque so = (GxgScanOpaque) scan->opaque;
	MemoryContext old = MemoryContextSwitchTo(so->ctx);
	GxgArray	queries = {NULL, 0, 0, sizeof(GxRtQuery)};

	so->collected = true;
	so->ntids = 0;
	so->next = 0;
	if (gxg_keys_to_queries(scan, &queries) && queries.n > 0)
		so->tids = gxg_search(scan->indexRelation, (GxRtQuery *) queries.data,
							  (int) queries.n, scan->numberOfKeys, &so->ntids);
	MemoryContextSwitchTo(old);
}

/* amgettuple: the next TID of the collected list */
bool
gxg_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	GxgScanOpaque so = (GxgScanOpaque) scan->opaque;

	if (dir != ForwardScanDirection)
		elog(ERROR, "gpuext_gist does not support backward scans");
	if (!so->collected)
		gxg_collect(scan);
	if (so->next >= so->ntids)
		return false;
	scan->xs_heaptid = so->tids[so->next++];
	scan->xs_recheck = false;
	return true;
}

/* amgetbitmap: every TID into the bitmap */
int64
gxg_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	GxgScanOpaque so = (GxgScanOpaque) scan->opaque;

	gxg_collect(scan);
	for (int64 i = 0; i < so->ntids; i += 1024 * 1024)
		tbm_add_tuples(tbm, so->tids + i, (int) Min(so->ntids - i, 1024 * 1024), false);
	return so->ntids;
}
