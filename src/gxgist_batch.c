/*-------------------------------------------------------------------------
 * gxgist_batch.c
 *		Batches of independent probes into a gpuext_gist index, each with
 *		its own result list: the level-synchronous walk over the index's
 *		pages (which cuda/rtree.cu runs on a device copy), the choice
 *		between the two, and the SQL entry point
 *		gpuext_gist_probe(index, boxes, operator).
 *
 * A level is a list of visits (node, query).  Sorted by node, each node is
 * read once per level and scanned against the queries queued on it (the
 * test matrix of Beier et al.); matches become the next level's visits or,
 * at the leaves, (query, heap TID) pairs.  The tests are gx_rt_test
 * (cuda/gx_rtree.h), the device's to the bit.
 *
 * Batches that go to the GPU service instead (a device copy of the tree,
 * the same walk in cuda/rtree.cu): src/gxgist_device.c.
 *
 * IDENTIFICATION
 *		src/gxgist_batch.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "gxgist.h"
#include "indexopen.h"

PG_FUNCTION_INFO_V1(gpuext_gist_probe);

/* growable arrays of visits and pairs */
typedef struct GxgVisits
{
	GxRtVisit  *v;
	int64		n;
	int64		cap;
} GxgVisits;

typedef struct GxgPairs
{
	GxRtPair   *p;
	int64		n;
	int64		cap;
} GxgPairs;

/* Append a visit (node, query) to a growable list */
static void
gxg_push_visit(GxgVisits *a, uint32 node, uint32 query)
{
	if (a->n == a->cap)
	{
		a->cap = a->cap ? a->cap * 2 : 256;
		a->v = a->v ? repalloc_huge(a->v, a->cap * sizeof(GxRtVisit))
			: palloc_extended(a->cap * sizeof(GxRtVisit), MCXT_ALLOC_HUGE);
	}
	a->v[a->n].node = node;
	a->v[a->n].query = query;
	a->n++;
}

/* Append a result pair (query, heap TID) to a growable list */
static void
gxg_push_pair(GxgPairs *a, uint32 query, uint32 blk, uint16 off)
{
	if (a->n == a->cap)
	{
		a->cap = a->cap ? a->cap * 2 : 256;
		a->p = a->p ? repalloc_huge(a->p, a->cap * sizeof(GxRtPair))
			: palloc_extended(a->cap * sizeof(GxRtPair), MCXT_ALLOC_HUGE);
	}
	a->p[a->n].query = query;
	a->p[a->n].blk = blk;
	a->p[a->n].off = off;
	a->p[a->n].pad = 0;
	a->n++;
}

/* byte 'pass' of a pair's sort key: query (4 bytes), then off (2), then blk (4) */
static inline uint32
gxg_pair_byte(const GxRtPair *p, int pass)
{
	if (pass < 4)
		return (p->query >> (8 * pass)) & 0xFF;
	if (pass < 6)
		return (p->off >> (8 * (pass - 4))) & 0xFF;
	return (p->blk >> (8 * (pass - 6))) & 0xFF;
}

/*
 * Sort pairs into heap order (blk, off), then query (by_query; otherwise
 * the order of a TID's pairs is left as it is), so that the fetches of one
 * heap page come together: an LSD radix sort, one stable counting pass
 * per key byte, least significant first, skipping bytes that are the same
 * in every pair.  A comparison sort of the 10^6 pairs of a large spatial
 * join took a quarter of its time.
 */
void
gxg_sort_pairs(GxRtPair *pairs, int64 n, bool by_query)
{
	GxRtPair   *tmp;
	GxRtPair   *src = pairs;
	GxRtPair   *dst;

	if (n < 2)
		return;
	tmp = palloc_extended(n * sizeof(GxRtPair), MCXT_ALLOC_HUGE);
	dst = tmp;
	/* without by_query, TID order only: the query's four bytes skipped */
	for (int pass = by_query ? 0 : 4; pass < 10; pass++)
	{
		uint64_t	count[256] = {0};

		for (int64 i = 0; i < n; i++)
			count[gxg_pair_byte(&src[i], pass)]++;
		if (!gx_radix_offsets(count, (uint64_t) n))
			continue;			/* one value: the order stays */
		for (int64 i = 0; i < n; i++)
			dst[count[gxg_pair_byte(&src[i], pass)]++] = src[i];
		{
			GxRtPair   *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != pairs)
		memcpy(pairs, src, n * sizeof(GxRtPair));
	pfree(tmp);
}

/* The metapage's root, split count and (unless NULL) root level */
void
gxg_batch_meta(Relation index, BlockNumber *root, uint64 *splits, uint32 *root_level)
{
	Buffer		metabuf = ReadBuffer(index, GXG_META_BLKNO);
	GxgMetaPageData *meta;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = gxg_check_meta(index, BufferGetPage(metabuf));
	*root = meta->root;
	*splits = meta->split_count;
	if (root_level)
		*root_level = meta->root_level;
	UnlockReleaseBuffer(metabuf);
}

/*
 * The metapage's build id, insert and removal counts: together they name
 * one state of the index's entries (all 0 for indexes built before they
 * existed)
 */
void
gxg_meta_version(Relation index, GxgMetaVersion *v)
{
	Buffer		metabuf = ReadBuffer(index, GXG_META_BLKNO);
	GxgMetaPageData *meta;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = gxg_check_meta(index, BufferGetPage(metabuf));
	memset(v, 0, sizeof(*v));
	if (GxgMetaHasVersion(BufferGetPage(metabuf)))
	{
		v->build_id = meta->build_id;
		v->inserts = meta->insert_count;
		v->removals = meta->removal_count;
	}
	UnlockReleaseBuffer(metabuf);
}

/*
 * The pairs come in no heap order, so one visibility map buffer would be
 * switched between map pages (each covers 32 K heap pages) at nearly every
 * pair: a release and a buffer lookup each time, on buffer headers that
 * every parallel participant hammers at once.  Instead a buffer is kept
 * per map page (up to GXG_VM_BUFFERS, a 16 GB table's worth; pages of
 * larger tables share them).  The per-page count repeats visibilitymap.c's
 * (private) layout; were it off, only the sharing would change.
 */
#define GXG_VM_BUFFERS 64
#define GXG_HEAP_BLOCKS_PER_VM_PAGE \
	((BlockNumber) ((BLCKSZ - MAXALIGN(SizeOfPageHeaderData)) * (BITS_PER_BYTE / BITS_PER_HEAPBLOCK)))

/*
 * Flag the pairs whose heap page is all-visible (GXG_PAIR_ALL_VISIBLE), so
 * that a caller needing no heap column can count the row without fetching
 * it, as an index-only scan does.  Called while the walk still holds the
 * metapage's share lock: vacuum removes index entries before it marks
 * their heap items unused and the page all-visible, and its bulkdelete
 * waits for that lock at its end (gxg_bulkdelete), so an entry this walk
 * found points to a row visible to every snapshot when its page is
 * all-visible now.  The device's results: gxg_device_mark_all_visible.
 */
void
gxg_mark_all_visible(Relation heap, GxRtPair *pairs, int64 n)
{
	Buffer		vmbufs[GXG_VM_BUFFERS];
	BlockNumber last = InvalidBlockNumber;
	bool		all_visible = false;

	for (int i = 0; i < GXG_VM_BUFFERS; i++)
		vmbufs[i] = InvalidBuffer;
	for (int64 i = 0; i < n; i++)
	{
		if (pairs[i].blk != last)
		{
			last = pairs[i].blk;
			all_visible = VM_ALL_VISIBLE(heap, last,
										 &vmbufs[(last / GXG_HEAP_BLOCKS_PER_VM_PAGE) % GXG_VM_BUFFERS]);
		}
		pairs[i].pad = all_visible ? GXG_PAIR_ALL_VISIBLE : 0;
	}
	for (int i = 0; i < GXG_VM_BUFFERS; i++)
		if (BufferIsValid(vmbufs[i]))
			ReleaseBuffer(vmbufs[i]);
}

/*
 * The walk over the index's pages: every (query, heap TID) pair where the
 * leaf entry passes drive[query] and every filter key (filter: nfilter
 * queries of nfilterkeys keys, sorted by key, OR within a key, as
 * gx_rt_entry_passes).  Each drive query is queued on the nodes it
 * reaches, so a node scan tests only the queries that reached the node;
 * the filter keys (the other scan keys of an index scan) are tested once
 * per entry.  Pairs come unsorted.  With vis_heap (the indexed table),
 * pairs whose heap page is all-visible get GXG_PAIR_ALL_VISIBLE (see
 * gxg_mark_all_visible); not on a standby.
 *
 * Locking: the metapage's heavyweight lock in share mode (inserts take it
 * exclusively); on a standby, where replay takes no such lock, the walk
 * starts over if the split count changed meanwhile (src/gxgist.c).
 *
 * Every node is checked as it is read (gxg_node_entries), at the level the
 * walk is at: one below its parent's, the root at the metapage's root
 * level, so a walk ends after root level + 1 levels.  A node that two
 * entries of the level above lead the same query to is corruption too, so
 * a level never has more visits than the index has nodes times queries.
 */
static GxRtPair *
gxg_walk_pages(Relation index, const GxRtQuery *drive, uint32 ndrive,
			   const GxRtQuery *filter, int nfilter, int nfilterkeys,
			   Relation vis_heap, int64 *npairs)
{
	bool		locked = !RecoveryInProgress();
	GxgPairs	pairs = {NULL, 0, 0};
	bool		pass[GXG_MAX_NODE_SIZE];
	uint16		hits[GXG_MAX_NODE_SIZE];

	if (locked)
		LockPage(index, GXG_META_BLKNO, ShareLock);
	for (;;)
	{
		BlockNumber root;
		uint32		root_level;
		uint64		splits_before;
		uint64		splits_after;
		GxgVisits	level = {NULL, 0, 0};
		int			depth;

		gxg_batch_meta(index, &root, &splits_before, &root_level);
		gxg_check_child(index, GXG_META_BLKNO, root);
		for (uint32 q = 0; q < ndrive; q++)
			gxg_push_visit(&level, root, q);

		for (depth = (int) root_level; level.n > 0; depth--)
		{
			GxgVisits	next = {NULL, 0, 0};
			int64		run = 0;

			{
				/* by node (then query): each node is read once a level */
				GxRtVisit  *tmp = palloc_extended(level.n * sizeof(GxRtVisit),
												  MCXT_ALLOC_HUGE);
				GxRtVisit  *sorted = gx_rt_sort_visits(level.v, level.n, tmp);

				pfree(sorted == tmp ? level.v : tmp);
				level.v = sorted;
				level.cap = level.n;
			}
			while (run < level.n)
			{
				BlockNumber blk = level.v[run].node;
				int64		run_end = run;
				Buffer		buf;
				Page		page;
				GxRtEntry  *entries;
				int			n;
				bool		leaf;

				while (run_end < level.n && level.v[run_end].node == blk)
					run_end++;
				CHECK_FOR_INTERRUPTS();
				buf = ReadBuffer(index, blk);
				LockBuffer(buf, BUFFER_LOCK_SHARE);
				page = BufferGetPage(buf);
				entries = gxg_node_entries(index, page, blk, depth, &n);
				leaf = depth == 0;

				/* the filter keys, once per entry */
				if (nfilterkeys > 0)
					gx_rt_node_scan(entries, n, leaf, filter, nfilter, nfilterkeys, pass);

				/* the test matrix: queries queued here x entries */
				for (int64 v = run; v < run_end; v++)
				{
					uint32		q = level.v[v].query;
					int			nhit;

					/* sorted by node, then query: a repeat is adjacent */
					if (v > run && level.v[v - 1].query == q)
						gxg_corrupt(index, blk, "two entries of the level above lead to the node");
					nhit = gx_rt_node_matches(entries, n, leaf, &drive[q],
											  nfilterkeys > 0 ? pass : NULL, hits);
					for (int h = 0; h < nhit; h++)
					{
						const GxRtEntry *e = &entries[hits[h]];

						if (leaf)
						{
							gxg_check_tid(index, blk, e);
							gxg_push_pair(&pairs, q, e->blk, e->off);
						}
						else
						{
							gxg_check_child(index, blk, e->blk);
							gxg_push_visit(&next, e->blk, q);
						}
					}
				}
				UnlockReleaseBuffer(buf);
				run = run_end;
			}
			pfree(level.v);
			level = next;
		}

		gxg_batch_meta(index, &root, &splits_after, NULL);
		if (splits_after == splits_before)
			break;
		/* a split was replayed meanwhile (standby) */
		if (pairs.p)
			pfree(pairs.p);
		pairs.p = NULL;
		pairs.n = pairs.cap = 0;
	}
	if (locked)
	{
		/* under the lock: vacuum's barrier (gxg_bulkdelete) waits for it */
		if (vis_heap)
			gxg_mark_all_visible(vis_heap, pairs.p, pairs.n);
		UnlockPage(index, GXG_META_BLKNO, ShareLock);
	}
	*npairs = pairs.n;
	return pairs.p;
}

/*
 * The walk for a batch of drive queries (and filter keys, as
 * gxg_walk_pages): through the GPU service when the node's GxgDevice wants
 * the batch (src/gxgist_device.c), else over the index's pages; probes
 * whose results a device request could not carry are walked over the
 * pages.  The pairs come in heap order (TID, then query), so the heap
 * fetches that follow read each page once and each row once.  vis_heap:
 * see gxg_walk_pages (NULL: every pad is 0 or left as is).
 */
GxRtPair *
gxg_walk(Relation index, GxgDevice *dev, const GxRtQuery *drive, uint32 ndrive,
		 const GxRtQuery *filter, int nfilter, int nfilterkeys, Relation vis_heap,
		 int64 *npairs)
{
	GxRtPair   *pairs = NULL;
	int64		n = 0;
	uint32	   *left = NULL;
	uint32		nleft = 0;

	if (gxg_device_wanted(dev, ndrive) &&
		gxg_device_walk(dev, index, drive, ndrive, filter, nfilter, nfilterkeys,
						&pairs, &n, &left, &nleft))
	{
		/* flags only where the copy is the index as it is now */
		for (int64 i = 0; i < n; i++)
			pairs[i].pad = 0;
		if (vis_heap)
			gxg_device_mark_all_visible(dev, index, vis_heap, pairs, n);
		if (nleft > 0)
		{
			GxRtQuery  *lq = palloc(nleft * sizeof(GxRtQuery));
			GxRtPair   *lp;
			int64		ln;

			for (uint32 i = 0; i < nleft; i++)
				lq[i] = drive[left[i]];
			lp = gxg_walk_pages(index, lq, nleft, filter, nfilter, nfilterkeys,
								vis_heap, &ln);
			if (ln > 0)
			{
				pairs = pairs ? repalloc_huge(pairs, (n + ln) * sizeof(GxRtPair))
					: palloc_extended(ln * sizeof(GxRtPair), MCXT_ALLOC_HUGE);
				for (int64 i = 0; i < ln; i++)
				{
					pairs[n + i] = lp[i];
					pairs[n + i].query = left[lp[i].query];
				}
				n += ln;
				pfree(lp);
			}
			pfree(lq);
			pfree(left);
		}
	}
	else
		pairs = gxg_walk_pages(index, drive, ndrive, filter, nfilter, nfilterkeys,
							   vis_heap, &n);

	*npairs = n;
	return pairs;
}

/* The strategy of an operator name for an index's key type */
static int
gxg_probe_strategy(Relation index, const char *op)
{
	bool		is_point = TupleDescAttr(RelationGetDescr(index), 0)->atttypid == POINTOID;

	if (is_point)
	{
		if (strcmp(op, "<@") == 0)
			return GX_RT_PT_IN_BOX;
	}
	else
	{
		if (strcmp(op, "&&") == 0)
			return GX_RT_OVERLAP;
		if (strcmp(op, "@>") == 0)
			return GX_RT_CONTAINS;
		if (strcmp(op, "<@") == 0)
			return GX_RT_CONTAINED;
		if (strcmp(op, "~=") == 0)
			return GX_RT_SAME;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("gpuext_gist_probe: operator \"%s\" is not supported for a %s index",
					op, is_point ? "point" : "box"),
			 errhint("Box indexes take &&, @>, <@ and ~=; point indexes take <@.")));
	return 0;
}

/*
 * gpuext_gist_probe(index regclass, queries box[], op text)
 *	 -> SETOF (query int, ctid tid)
 *
 * For every element of queries (1-based), the rows of the indexed table
 * visible to the query's snapshot whose key satisfies "key op element";
 * ctid is the visible version (HOT chains followed).  One batched walk for
 * the whole array: the shape of a spatial join's inner side.
 */
Datum
gpuext_gist_probe(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			indexoid;
	ArrayType  *arr;
	char	   *op;
	Relation	heap;
	Relation	index;
	int			strategy;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	GxRtQuery  *queries;
	uint32	   *query_pos;
	uint32		nq = 0;
	GxRtPair   *pairs;
	int64		npairs;
	IndexFetchTableData *fetch;
	TupleTableSlot *slot;
	Snapshot	snapshot = GetActiveSnapshot();
	bool		found = false;
	MemoryContext ctx;
	MemoryContext old;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("gpuext_gist_probe: index and operator must not be NULL")));
	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(1))
		return (Datum) 0;
	indexoid = PG_GETARG_OID(0);
	arr = PG_GETARG_ARRAYTYPE_P(1);
	op = text_to_cstring(PG_GETARG_TEXT_PP(2));

	/*
	 * SELECT on the table, and no row-level security policy of it applying
	 * to the user (the walk returns every matching row), checked before the
	 * locks
	 */
	index = gx_open_index_of_am(indexoid, "gpuext_gist", AccessShareLock, AccessShareLock,
								GX_INDEX_ACCESS_SELECT, "gpuext_gist_probe", &heap);
	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("gpuext_gist index \"%s\" is not valid", RelationGetRelationName(index))));
	strategy = gxg_probe_strategy(index, op);

	ctx = AllocSetContextCreate(CurrentMemoryContext, "gpuext_gist probe",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(ctx);

	/* the batch: non-NULL elements, numbered by their position */
	deconstruct_array(arr, BOXOID, sizeof(BOX), false, TYPALIGN_DOUBLE,
					  &elems, &nulls, &nelems);
	queries = palloc_extended(Max(nelems, 1) * sizeof(GxRtQuery), MCXT_ALLOC_HUGE);
	query_pos = palloc_extended(Max(nelems, 1) * sizeof(uint32), MCXT_ALLOC_HUGE);
	for (int i = 0; i < nelems; i++)
	{
		BOX		   *b;

		if (nulls[i])
			continue;
		b = DatumGetBoxP(elems[i]);
		queries[nq].xlo = b->low.x;
		queries[nq].ylo = b->low.y;
		queries[nq].xhi = b->high.x;
		queries[nq].yhi = b->high.y;
		queries[nq].strategy = strategy;
		queries[nq].key = 0;
		query_pos[nq] = i + 1;
		nq++;
	}
	if (nq > 0)
	{
		/* a device copy of the tree for this call only (MVCC snapshot) */
		GxgDevice  *dev = IsMVCCSnapshot(snapshot) ? gxg_device_create() : NULL;

		pairs = gxg_walk(index, dev, queries, nq, NULL, 0, 0, NULL, &npairs);
		gxg_sort_pairs(pairs, npairs, true);
		gxg_device_release(dev);
	}
	else
	{
		pairs = NULL;
		npairs = 0;
	}

	/* the visible version of each TID, as an index scan fetches it */
	fetch = table_index_fetch_begin(heap);
	slot = table_slot_create(heap, NULL);
	for (int64 i = 0; i < npairs; i++)
	{
		ItemPointerData tid;
		bool		call_again = false;
		bool		all_dead = false;

		CHECK_FOR_INTERRUPTS();
		ItemPointerSet(&tid, pairs[i].blk, pairs[i].off);
		/* pairs are in TID order: fetch a row once for all its queries */
		if (i == 0 || pairs[i].blk != pairs[i - 1].blk || pairs[i].off != pairs[i - 1].off)
		{
			ExecClearTuple(slot);
			found = table_index_fetch_tuple(fetch, &tid, snapshot, slot, &call_again, &all_dead);
		}
		if (found)
		{
			Datum		values[2];
			bool		rnulls[2] = {false, false};
			ItemPointerData *out = palloc(sizeof(ItemPointerData));

			*out = slot->tts_tid;
			values[0] = Int32GetDatum((int32) query_pos[pairs[i].query]);
			values[1] = PointerGetDatum(out);
			MemoryContextSwitchTo(old);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, rnulls);
			MemoryContextSwitchTo(ctx);
		}
	}
	ExecDropSingleTupleTableSlot(slot);
	table_index_fetch_end(fetch);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(ctx);
	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);
	return (Datum) 0;
}
