/*-------------------------------------------------------------------------
 * gxgist_check.c
 *		gpuext_gist_check(index, heapallindexed): verify a gpuext_gist
 *		index, as amcheck does for B-trees.
 *
 * Structure: the metapage; every node reached once from the root, at the
 * level its parent says, leaves at level 0; entry counts within the node
 * size; every entry's box covered by its parent entry's box; every block
 * either in the tree or an all-zero page left by a crash.  With
 * heapallindexed, every heap tuple that CREATE INDEX would index is in a
 * leaf with the same key, and no TID is in two leaves.  Any failure is an
 * ERROR with SQLSTATE XX002 (index corrupted).
 *
 * On a hot standby, run it (without heapallindexed, which needs a SHARE
 * lock) while replay is quiet: changes replayed during the walk (a split,
 * a parent box enlarged after the walk passed it) can be reported as
 * faults.  Scans are not affected: a scan retries when a split was
 * replayed during its walk, and a key whose parent box it read before the
 * enlargement belongs to a transaction its snapshot cannot see.
 *
 * IDENTIFICATION
 *		src/gxgist_check.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gxgist.h"
#include "indexopen.h"

PG_FUNCTION_INFO_V1(gpuext_gist_check);

/* a leaf entry as the checker keeps it: sorted by TID */
typedef struct GxgCheckState
{
	Relation	heap;
	GxRtEntry  *leaf;			/* every leaf entry */
	int64		nleaf;
	int64		capacity;
	int64		heap_tuples;
} GxgCheckState;

/* a node still to visit */
typedef struct GxgCheckItem
{
	BlockNumber blk;
	int			level;
	GxRtEntry	bound;			/* the parent entry's box */
	bool		has_bound;
} GxgCheckItem;

/* qsort order of leaf entries by heap TID */
static int
gxg_cmp_entry_tid(const void *a, const void *b)
{
	const GxRtEntry *ea = a;
	const GxRtEntry *eb = b;

	if (ea->blk != eb->blk)
		return ea->blk < eb->blk ? -1 : 1;
	return (ea->off > eb->off) - (ea->off < eb->off);
}

/*
 * Walk the tree from the root and check its structure; collect the leaf
 * entries into st.  Returns the tree's height.
 */
static int
gxg_check_structure(Relation index, GxgCheckState *st)
{
	Buffer		metabuf;
	GxgMetaPageData meta;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	bool	   *seen;
	GxgCheckItem *stack;
	int64		nstack = 0;
	int64		stack_cap = 64;

	if (nblocks < 2)
		gxg_corrupt(index, 0, "fewer than two blocks");
	metabuf = ReadBuffer(index, GXG_META_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = *gxg_check_meta(index, BufferGetPage(metabuf));
	UnlockReleaseBuffer(metabuf);
	if (meta.node_size < GXG_MIN_NODE_SIZE || meta.node_size > GXG_MAX_NODE_SIZE)
		gxg_corrupt(index, 0, "node size out of range");
	if (meta.root == GXG_META_BLKNO || meta.root >= nblocks)
		gxg_corrupt(index, 0, "root block out of range");

	seen = palloc_extended(nblocks * sizeof(bool), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	seen[GXG_META_BLKNO] = true;
	stack = palloc(stack_cap * sizeof(GxgCheckItem));
	stack[nstack].blk = meta.root;
	stack[nstack].level = meta.root_level;
	stack[nstack].has_bound = false;
	nstack++;

	while (nstack > 0)
	{
		GxgCheckItem item = stack[--nstack];
		Buffer		buf;
		Page		page;
		GxRtEntry  *entries;
		int			n;

		CHECK_FOR_INTERRUPTS();
		if (item.blk == GXG_META_BLKNO || item.blk >= nblocks)
			gxg_corrupt(index, item.blk, "child pointer out of range");
		if (seen[item.blk])
			gxg_corrupt(index, item.blk, "node reached twice");
		seen[item.blk] = true;

		buf = ReadBuffer(index, item.blk);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		/* as every reader checks a node, at the level its parent says */
		entries = gxg_node_entries(index, page, item.blk, item.level, &n);
		if (n > (int) meta.node_size)
			gxg_corrupt(index, item.blk, "more entries than the node size");

		for (int i = 0; i < n; i++)
		{
			const GxRtEntry *e = &entries[i];

			if (item.has_bound && !gxg_covers(&item.bound, e))
				gxg_corrupt(index, item.blk, "an entry's box is not covered by its parent's");
			if (item.level > 0)
			{
				if (nstack == stack_cap)
				{
					stack_cap *= 2;
					stack = repalloc_huge(stack, stack_cap * sizeof(GxgCheckItem));
				}
				stack[nstack].blk = e->blk;
				stack[nstack].level = item.level - 1;
				stack[nstack].bound = *e;
				stack[nstack].has_bound = true;
				nstack++;
			}
			else
			{
				gxg_check_tid(index, item.blk, e);
				if (st->nleaf == st->capacity)
				{
					st->capacity *= 2;
					st->leaf = repalloc_huge(st->leaf, st->capacity * sizeof(GxRtEntry));
				}
				st->leaf[st->nleaf++] = *e;
			}
		}
		UnlockReleaseBuffer(buf);
	}

	/* every block is in the tree, or an orphan all-zero page */
	for (BlockNumber blk = 1; blk < nblocks; blk++)
	{
		Buffer		buf;
		bool		isnew;

		if (seen[blk])
			continue;
		buf = ReadBuffer(index, blk);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		isnew = PageIsNew(BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
		if (!isnew)
			gxg_corrupt(index, blk, "node not reachable from the root");
	}
	pfree(seen);
	pfree(stack);
	return (int) meta.root_level + 1;
}

/* table_index_build_scan callback: this tuple must be in a leaf */
static void
gxg_check_heap_callback(Relation index, ItemPointer tid, Datum *values,
						bool *isnull, bool tupleIsAlive, void *state)
{
	GxgCheckState *st = (GxgCheckState *) state;
	GxRtEntry	key;
	GxRtEntry  *found;

	if (isnull[0])
		return;
	st->heap_tuples++;
	gxg_box_of_datum(index, values[0], &key);
	key.blk = ItemPointerGetBlockNumber(tid);
	key.off = ItemPointerGetOffsetNumber(tid);
	found = bsearch(&key, st->leaf, st->nleaf, sizeof(GxRtEntry), gxg_cmp_entry_tid);
	if (found == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("heap tuple (%u,%u) of \"%s\" is not in gpuext_gist index \"%s\"",
						key.blk, key.off, RelationGetRelationName(st->heap),
						RelationGetRelationName(index))));
	if (memcmp(&found->xlo, &key.xlo, 4 * sizeof(double)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("heap tuple (%u,%u) has a different key in gpuext_gist index \"%s\"",
						key.blk, key.off, RelationGetRelationName(index))));
}

/*
 * gpuext_gist_check(index regclass, heapallindexed bool)
 *	 -> (levels int, pages bigint, leaf_entries bigint, heap_tuples bigint)
 */
Datum
gpuext_gist_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid;
	bool		heapallindexed;
	Relation	heap;
	Relation	index;
	LOCKMODE	heaplock;
	GxgCheckState st;
	int			levels;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	MemoryContext ctx;
	MemoryContext old;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("gpuext_gist_check: index and heapallindexed must not be NULL")));
	indexoid = PG_GETARG_OID(0);
	heapallindexed = PG_GETARG_BOOL(1);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	/*
	 * Superuser or the index's owner (whatever EXECUTE was granted), whom no
	 * row-level security policy of the table applies to, checked before the
	 * locks; the table first, then the index, as amcheck does
	 */
	heaplock = heapallindexed ? ShareLock : AccessShareLock;
	index = gx_open_index_of_am(indexoid, "gpuext_gist", heaplock, AccessShareLock,
								GX_INDEX_ACCESS_OWNER, "gpuext_gist_check", &heap);
	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("gpuext_gist index \"%s\" is not valid", RelationGetRelationName(index))));

	ctx = AllocSetContextCreate(CurrentMemoryContext, "gpuext_gist check",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(ctx);
	st.heap = heap;
	st.capacity = 1024;
	st.nleaf = 0;
	st.heap_tuples = 0;
	st.leaf = palloc_extended(st.capacity * sizeof(GxRtEntry), MCXT_ALLOC_HUGE);

	/* no insert may move entries while the tree is walked */
	LockPage(index, GXG_META_BLKNO, ShareLock);
	levels = gxg_check_structure(index, &st);
	UnlockPage(index, GXG_META_BLKNO, ShareLock);

	qsort(st.leaf, st.nleaf, sizeof(GxRtEntry), gxg_cmp_entry_tid);
	for (int64 i = 1; i < st.nleaf; i++)
		if (gxg_cmp_entry_tid(&st.leaf[i - 1], &st.leaf[i]) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("heap TID (%u,%u) is in gpuext_gist index \"%s\" twice",
							st.leaf[i].blk, st.leaf[i].off, RelationGetRelationName(index))));

	if (heapallindexed)
	{
		IndexInfo  *indexInfo = BuildIndexInfo(index);

		table_index_build_scan(heap, index, indexInfo, true, false,
							   gxg_check_heap_callback, &st, NULL);
	}

	values[0] = Int32GetDatum(levels);
	values[1] = Int64GetDatum((int64) RelationGetNumberOfBlocks(index));
	values[2] = Int64GetDatum(st.nleaf);
	values[3] = Int64GetDatum(st.heap_tuples);
	nulls[3] = !heapallindexed;

	MemoryContextSwitchTo(old);
	MemoryContextDelete(ctx);
	index_close(index, AccessShareLock);
	table_close(heap, heaplock);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
