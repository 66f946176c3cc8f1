/*-------------------------------------------------------------------------
 * gxgist_scan.c
 *		Searches of a gpuext_gist index: the scan keys become a batch of
 *		queries (an "&& ANY(array)" key is one query per element), and the
 *		tree is walked level by level with each query queued on the nodes
 *		it reaches (gxg_walk, src/gxgist_batch.c), as in Beier et al.'s
 *		level-synchronous GiST scans.
 *
 * A scan collects every matching TID at its first call, under the
 * metapage's heavyweight share lock (see src/gxgist.c), sorts them into
 * heap order without duplicates and returns them from memory.  Results are
 * exact: no recheck.  Batches (an ANY array) may go to the GPU service,
 * whose copy of the tree the scan keeps for all its rescans
 * (src/gxgist_device.c).
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
#include "utils/snapmgr.h"

#include "gxgist.h"

typedef struct GxgScanOpaqueData
{
	MemoryContext ctx;			/* the TID list; reset on rescan */
	bool		collected;
	ItemPointerData *tids;
	int64		ntids;
	int64		next;
	GxgDevice  *dev;			/* the tree on the GPU, for every rescan */
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
	so->dev = gxg_device_create();
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

	gxg_device_release(so->dev);
	MemoryContextDelete(so->ctx);
	pfree(so);
}

/*
 * The query of one key argument: a box, or a point as a degenerate box
 * (index scans and GistJoin's batches build their queries alike)
 */
void
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

/*
 * The search: every heap TID whose key passes every scan key (the queries
 * of one key OR-ed), in heap order.  The key with the most queries (an
 * "&& ANY(array)") drives the walk, each of its queries queued on the
 * nodes it reaches; the other keys filter entries (gxg_walk).
 */
ItemPointerData *
gxg_search(Relation index, GxgDevice *dev, const GxRtQuery *queries, int nqueries,
		   int nkeys, int64 *ntids)
{
	int			drive_key = 0;
	int			best = -1;
	GxRtQuery  *drive = palloc(nqueries * sizeof(GxRtQuery));
	GxRtQuery  *filter = palloc(nqueries * sizeof(GxRtQuery));
	uint32		ndrive = 0;
	int			nfilter = 0;
	GxRtPair   *pairs;
	int64		npairs;
	ItemPointerData *tids;
	int64		n = 0;

	for (int j = 0; j < nqueries;)
	{
		int			key = queries[j].key;
		int			start = j;

		while (j < nqueries && queries[j].key == key)
			j++;
		if (j - start > best)
		{
			best = j - start;
			drive_key = key;
		}
	}
	for (int j = 0; j < nqueries; j++)
	{
		if (queries[j].key == drive_key)
			drive[ndrive++] = queries[j];
		else
		{
			filter[nfilter] = queries[j];
			/* filter keys renumbered 0 .. nkeys - 2, still sorted */
			filter[nfilter].key = queries[j].key - (queries[j].key > drive_key ? 1 : 0);
			nfilter++;
		}
	}

	pairs = gxg_walk(index, dev, drive, ndrive, filter, nfilter, nkeys - 1, NULL, &npairs);

	/*
	 * one TID per row: the drive queries' lists may overlap; in heap order
	 * keep one of each TID (a bitmap too is filled faster in heap order)
	 */
	gxg_sort_pairs(pairs, npairs, false);
	tids = palloc_extended(Max(npairs, 1) * sizeof(ItemPointerData), MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < npairs; i++)
	{
		if (i > 0 && pairs[i].blk == pairs[i - 1].blk && pairs[i].off == pairs[i - 1].off)
			continue;
		ItemPointerSet(&tids[n], pairs[i].blk, pairs[i].off);
		n++;
	}
	if (pairs)
		pfree(pairs);
	pfree(drive);
	pfree(filter);
	*ntids = n;
	return tids;
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
		so->tids = gxg_search(scan->indexRelation,
							  /* the device copy is exact for MVCC snapshots only */
							  IsMVCCSnapshot(scan->xs_snapshot) ? so->dev : NULL,
							  (GxRtQuery *) queries.data, (int) queries.n,
							  scan->numberOfKeys, &so->ntids);
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
