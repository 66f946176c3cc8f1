/*-------------------------------------------------------------------------
 * ptree_check.c
 *		gpuext_ptree_check(index regclass, heapallindexed bool): verify a
 *		gpuext_ptree index, in the spirit of amcheck.
 *
 * Structure: the metapage, every directory level (page types, levels,
 * generation, child order, each directory key equal to its child's first
 * key), the leaf chain (keys in order, NULLs last, TIDs ascending and
 * unique, key lengths right for the type), the sealed delta and the delta
 * chains, the counts in the metapage, and that every page of their
 * generations is reached exactly once.  The check holds the merge lock in
 * share mode (it waits for a running merge; no merge starts meanwhile)
 * and the metapage's share lock (inserts wait).  With heapallindexed, the
 * table is read (under ShareLock, so no insert is in progress) and every
 * tuple the index should hold is looked up.  Problems are ERRORs with
 * ERRCODE_INDEX_CORRUPTED.
 *
 * IDENTIFICATION
 *		src/ptree_check.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "commands/defrem.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "indexopen.h"
#include "ptree.h"

PG_FUNCTION_INFO_V1(gpuext_ptree_check);

/* one (key, TID) of the index, for heapallindexed */
typedef struct PtreeCheckEntry
{
	PtreeKey	key;
	ItemPointerData tid;
} PtreeCheckEntry;

typedef struct PtreeCheckState
{
	Relation	index;
	BlockNumber nblocks;
	uint32		gen;			/* main's generation */
	const PtreeMetaData *meta;
	Oid			keytype;
	bool	   *seen;			/* blocks reached */
	bool		collect;
	PtreeCheckEntry *entries;
	Size		nentries;
	Size		maxentries;
	uint64		tids;
	uint64		keys;
	uint32		pages;
	bool		haslast;
	PtreeKey	last;			/* last key of the leaf chain */
	char		lastbuf[PTREE_MAX_KEY];
	ItemPointerData lasttid;
	double		heap_checked;
} PtreeCheckState;

#define CORRUPT(cs, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INDEX_CORRUPTED), \
			 errmsg("gpuext_ptree index \"%s\" is corrupted", RelationGetRelationName((cs)->index)), \
			 errdetail(__VA_ARGS__)))

/*
 * Read block blkno, which block 'from' links to, for checking: a copy,
 * checked for range (ptree_check_link), being reached only once,
 * generation (gen: main's, the sealed delta's or the delta's), and as
 * every reader checks it (ptree_page_ok: header, type, level, items)
 */
static Page
ptree_check_page(PtreeCheckState *cs, BlockNumber from, BlockNumber blkno, uint16 type,
				 uint16 level, uint32 gen)
{
	Page		copy = palloc(BLCKSZ);
	Buffer		buf;
	PtreePageOpaque opaque;

	ptree_check_link(cs->index, from, blkno, NULL);
	if (blkno >= cs->nblocks)
		CORRUPT(cs, "Block %u is referenced but the index has %u blocks.", blkno, cs->nblocks);
	if (cs->seen[blkno])
		CORRUPT(cs, "Block %u is reached twice.", blkno);
	cs->seen[blkno] = true;
	CHECK_FOR_INTERRUPTS();
	buf = ReadBuffer(cs->index, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	memcpy(copy, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);
	if (!ptree_page_is_live(copy, gen))
		CORRUPT(cs, "Block %u is not a page of the live generation %u.", blkno, gen);
	opaque = PtreePageGetOpaque(copy);
	if (opaque->type != type || opaque->level != level)
		CORRUPT(cs, "Block %u has type %u level %u, expected type %u level %u.",
				blkno, opaque->type, opaque->level, type, level);
	ptree_page_check(cs->index, copy, blkno, gen, type, level);
	return copy;
}

/*
 * Check a tuple's shape as every reader does (ptree_page_tuple: line
 * pointer, sizes, key length for the type; ptree_tuple_tids: heap TIDs),
 * and that its TIDs ascend
 */
static PtreeTuple
ptree_check_tuple(PtreeCheckState *cs, Page page, BlockNumber blkno, OffsetNumber off)
{
	PtreeTuple	t = ptree_page_tuple(cs->index, page, blkno, off);
	ItemPointer tids;
	int			i;

	if (!(t->flags & PTREE_TUPLE_NULL) &&
		(((cs->keytype == INT4OID || cs->keytype == DATEOID) && t->keylen != 4) ||
		 ((cs->keytype == INT8OID || cs->keytype == TIMESTAMPOID) && t->keylen != 8)))
		CORRUPT(cs, "Item (%u,%u) has a key of %u bytes.", blkno, off, t->keylen);

	/* a directory tuple's TID is its child (ptree_check_main checks it) */
	if (PtreePageGetOpaque(page)->type == PTREE_INNER)
		return t;
	tids = ptree_tuple_tids(cs->index, t, blkno, off);
	for (i = 1; i < t->ntids; i++)
		if (ItemPointerCompare(&tids[i - 1], &tids[i]) >= 0)
			CORRUPT(cs, "Item (%u,%u) has TIDs out of order.", blkno, off);
	return t;
}

/*
 * Keep (key, TIDs) for heapallindexed
 */
static void
ptree_check_collect(PtreeCheckState *cs, PtreeTuple t)
{
	int			i;
	char	   *data;

	if (!cs->collect)
		return;
	data = palloc(Max(t->keylen, 1));
	memcpy(data, t->data, t->keylen);
	for (i = 0; i < t->ntids; i++)
	{
		PtreeCheckEntry *e;

		if (cs->nentries == cs->maxentries)
		{
			cs->maxentries *= 2;
			cs->entries = repalloc_huge(cs->entries, sizeof(PtreeCheckEntry) * cs->maxentries);
		}
		e = &cs->entries[cs->nentries++];
		e->key.isnull = (t->flags & PTREE_TUPLE_NULL) != 0;
		e->key.len = t->keylen;
		e->key.data = data;
		e->tid = PtreeTupleTids(t)[i];
	}
}

/*
 * Check one leaf: order within it and with the previous leaf
 */
static void
ptree_check_leaf(PtreeCheckState *cs, Page page, BlockNumber blkno)
{
	OffsetNumber off,
				maxoff = PageGetMaxOffsetNumber(page);

	if (maxoff < FirstOffsetNumber)
		CORRUPT(cs, "Leaf %u is empty.", blkno);
	for (off = FirstOffsetNumber; off <= maxoff; off++)
	{
		PtreeTuple	t = ptree_check_tuple(cs, page, blkno, off);
		PtreeKey	k;

		ptree_tuple_key(t, &k);
		if (cs->haslast)
		{
			int			c = ptree_key_compare(&cs->last, &k);

			if (c > 0)
				CORRUPT(cs, "Keys out of order at item (%u,%u).", blkno, off);
			if (c == 0 && ItemPointerCompare(&cs->lasttid, &PtreeTupleTids(t)[0]) >= 0)
				CORRUPT(cs, "TIDs of a key out of order or repeated at item (%u,%u).", blkno, off);
			if (c != 0)
				cs->keys++;
		}
		else
			cs->keys++;
		cs->haslast = true;
		cs->last.isnull = k.isnull;
		cs->last.len = k.len;
		memcpy(cs->lastbuf, k.data, k.len);
		cs->last.data = cs->lastbuf;
		cs->lasttid = PtreeTupleTids(t)[t->ntids - 1];
		cs->tids += t->ntids;
		ptree_check_collect(cs, t);
	}
}

/*
 * Check main, level by level from the root: the children listed by each
 * level are exactly the next level's chain, in order, and each directory
 * key is its child's first key
 */
static void
ptree_check_main(PtreeCheckState *cs, PtreeMetaData *meta)
{
	BlockNumber *expect;
	PtreeTuple *expectkey;
	int			nexpect = 1;
	int			level;
	BlockNumber first_above = PTREE_METAPAGE_BLKNO;

	if (meta->levels == 0)
	{
		if (BlockNumberIsValid(meta->root) || BlockNumberIsValid(meta->first_leaf) ||
			meta->main_tids != 0)
			CORRUPT(cs, "The metapage has no levels but a root, a first leaf or TIDs.");
		return;
	}
	expect = palloc(sizeof(BlockNumber));
	expectkey = palloc(sizeof(PtreeTuple));
	expect[0] = meta->root;
	expectkey[0] = NULL;
	for (level = meta->levels - 1; level >= 0; level--)
	{
		BlockNumber blkno = expect[0];
		BlockNumber from = first_above;
		int			i = 0;
		BlockNumber *children = NULL;
		PtreeTuple *childkeys = NULL;
		int			nchildren = 0,
					maxchildren = 16;
		PtreeTuple	prev = NULL;

		if (level == 0 && blkno != meta->first_leaf)
			CORRUPT(cs, "The first leaf is block %u, the directory leads to block %u.",
					meta->first_leaf, blkno);
		if (level > 0)
		{
			children = palloc(sizeof(BlockNumber) * maxchildren);
			childkeys = palloc(sizeof(PtreeTuple) * maxchildren);
		}
		while (BlockNumberIsValid(blkno))
		{
			Page		page = ptree_check_page(cs, from, blkno,
											level == 0 ? PTREE_LEAF : PTREE_INNER, level,
											cs->gen);
			OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

			cs->pages++;
			if (i >= nexpect || expect[i] != blkno)
				CORRUPT(cs, "Level %d: block %u is not the child the level above lists.", level, blkno);
			if (expectkey[i] != NULL)
			{
				PtreeKey	pk,
							ck;

				if (maxoff < FirstOffsetNumber)
					CORRUPT(cs, "Block %u is empty.", blkno);
				ptree_tuple_key(expectkey[i], &pk);
				ptree_tuple_key(ptree_page_tuple(cs->index, page, blkno, FirstOffsetNumber), &ck);
				if (ptree_key_compare(&pk, &ck) != 0)
					CORRUPT(cs, "The directory key of block %u is not its first key.", blkno);
			}
			i++;
			if (level == 0)
				ptree_check_leaf(cs, page, blkno);
			else
			{
				OffsetNumber off;

				if (maxoff < FirstOffsetNumber)
					CORRUPT(cs, "Directory page %u is empty.", blkno);
				for (off = FirstOffsetNumber; off <= maxoff; off++)
				{
					PtreeTuple	t = ptree_check_tuple(cs, page, blkno, off);

					if (t->ntids != 1)
						CORRUPT(cs, "Directory item (%u,%u) has %u children.", blkno, off, t->ntids);
					if (prev)
					{
						PtreeKey	a,
									b;

						ptree_tuple_key(prev, &a);
						ptree_tuple_key(t, &b);
						if (ptree_key_compare(&a, &b) > 0)
							CORRUPT(cs, "Directory keys out of order at item (%u,%u).", blkno, off);
					}
					if (nchildren == maxchildren)
					{
						maxchildren *= 2;
						children = repalloc(children, sizeof(BlockNumber) * maxchildren);
						childkeys = repalloc(childkeys, sizeof(PtreeTuple) * maxchildren);
					}
					children[nchildren] = ItemPointerGetBlockNumberNoCheck(PtreeTupleTids(t));
					ptree_check_link(cs->index, blkno, children[nchildren], NULL);
					childkeys[nchildren] = t;
					nchildren++;
					prev = t;
				}
			}
			from = blkno;
			blkno = PtreePageGetOpaque(page)->next;
			if (level == 0)
				pfree(page);	/* directory pages stay: childkeys point into them */
		}
		if (i != nexpect)
			CORRUPT(cs, "Level %d has %d pages, the level above lists %d.", level, i, nexpect);
		first_above = expect[0];
		expect = children;
		expectkey = childkeys;
		nexpect = nchildren;
	}
	if (cs->tids != meta->main_tids || cs->keys != meta->main_keys || cs->pages != meta->main_pages)
		CORRUPT(cs, "Main has %llu TIDs, %llu keys, %u pages; the metapage says %llu, %llu, %u.",
				(unsigned long long) cs->tids, (unsigned long long) cs->keys, cs->pages,
				(unsigned long long) meta->main_tids, (unsigned long long) meta->main_keys,
				meta->main_pages);
}

/*
 * Check a delta chain (the delta, or the sealed delta) and its counts
 */
static void
ptree_check_delta(PtreeCheckState *cs, const char *what, BlockNumber head, BlockNumber tail,
				  uint32 npages, uint64 ntids, uint32 gen)
{
	BlockNumber blkno = head;
	BlockNumber last = PTREE_METAPAGE_BLKNO;
	uint32		pages = 0;
	uint64		tids = 0;

	while (BlockNumberIsValid(blkno))
	{
		Page		page = ptree_check_page(cs, last, blkno, PTREE_DELTA, 0, gen);
		OffsetNumber off,
					maxoff = PageGetMaxOffsetNumber(page);

		for (off = FirstOffsetNumber; off <= maxoff; off++)
		{
			PtreeTuple	t = ptree_check_tuple(cs, page, blkno, off);

			if (t->ntids != 1)
				CORRUPT(cs, "Delta item (%u,%u) has %u TIDs.", blkno, off, t->ntids);
			tids++;
			ptree_check_collect(cs, t);
		}
		pages++;
		last = blkno;
		blkno = PtreePageGetOpaque(page)->next;
		pfree(page);
	}
	if (pages == 0)
		last = InvalidBlockNumber;
	if (last != tail || pages != npages || tids != ntids)
		CORRUPT(cs, "The %s has %u pages, %llu TIDs, last block %u; the metapage says %u, %llu, %u.",
				what, pages, (unsigned long long) tids, last, npages,
				(unsigned long long) ntids, tail);
}

/*
 * Every page of the live generations (main's, the sealed delta's, the
 * delta's) must have been reached; pages of a merge that failed are not
 * live
 */
static void
ptree_check_unreached(PtreeCheckState *cs)
{
	BlockNumber blkno;

	for (blkno = PTREE_METAPAGE_BLKNO + 1; blkno < cs->nblocks; blkno++)
	{
		Buffer		buf;
		bool		live;

		if (cs->seen[blkno])
			continue;
		CHECK_FOR_INTERRUPTS();
		buf = ReadBuffer(cs->index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		live = ptree_page_is_live(BufferGetPage(buf), cs->meta->gen) ||
			ptree_page_is_live(BufferGetPage(buf), cs->meta->delta_gen) ||
			(BlockNumberIsValid(cs->meta->sealed_head) &&
			 ptree_page_is_live(BufferGetPage(buf), cs->meta->sealed_gen));
		UnlockReleaseBuffer(buf);
		if (live)
			CORRUPT(cs, "Block %u belongs to the live generation but is not reached.", blkno);
	}
}

/* order of check entries: key, TID */
static int
ptree_check_entry_cmp(const void *a, const void *b)
{
	const PtreeCheckEntry *ea = (const PtreeCheckEntry *) a;
	const PtreeCheckEntry *eb = (const PtreeCheckEntry *) b;
	int			c = ptree_key_compare(&ea->key, &eb->key);

	if (c != 0)
		return c;
	return ItemPointerCompare((ItemPointer) &ea->tid, (ItemPointer) &eb->tid);
}

/*
 * table_index_build_scan callback: the tuple must be in the index
 */
static void
ptree_check_heap_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
						  bool tupleIsAlive, void *state)
{
	PtreeCheckState *cs = (PtreeCheckState *) state;
	PtreeCheckEntry probe;
	char		fix[8];

	ptree_make_key(cs->keytype, values[0], isnull[0], &probe.key, fix);
	probe.tid = *tid;
	if (bsearch(&probe, cs->entries, cs->nentries, sizeof(PtreeCheckEntry),
				ptree_check_entry_cmp) == NULL)
		CORRUPT(cs, "Heap tuple (%u,%u) is not in the index.",
				ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid));
	cs->heap_checked += 1;
}

/*
 * gpuext_ptree_check(index regclass, heapallindexed bool) returns void
 */
Datum
gpuext_ptree_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid;
	bool		heapallindexed;
	LOCKMODE	lockmode;
	Relation	heaprel = NULL;
	Relation	index;
	Buffer		metabuf;
	PtreeMetaData meta;
	PtreeCheckState cs;
	MemoryContext ctx,
				old;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("gpuext_ptree_check: the index and heapallindexed must not be NULL")));
	indexoid = PG_GETARG_OID(0);
	heapallindexed = PG_GETARG_BOOL(1);
	lockmode = heapallindexed ? ShareLock : AccessShareLock;

	/*
	 * Superuser or the index's owner, whom no row-level security policy of
	 * the table applies to, checked before the locks; the table first, then
	 * the index, as other index users lock them
	 */
	index = gx_open_index_of_am(indexoid, "gpuext_ptree", lockmode, lockmode,
								GX_INDEX_ACCESS_OWNER, "gpuext_ptree_check", &heaprel);
	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot check index \"%s\"", RelationGetRelationName(index)),
				 errdetail("The index is not valid.")));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot check temporary indexes of other sessions")));

	ctx = AllocSetContextCreate(CurrentMemoryContext, "gpuext_ptree check",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(ctx);
	memset(&cs, 0, sizeof(cs));
	cs.index = index;
	cs.keytype = index->rd_opcintype[0];
	cs.collect = heapallindexed;
	cs.maxentries = 1024;
	cs.entries = palloc_extended(sizeof(PtreeCheckEntry) * cs.maxentries, MCXT_ALLOC_HUGE);

	/* the merge lock keeps merges out, the metapage's share lock inserts */
	ptree_lock_merges(index, ShareLock);
	metabuf = ReadBuffer(index, PTREE_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);

	/*
	 * page, magic, version, key type, generations, the heads and tails of
	 * main and both deltas: as every reader checks it
	 */
	meta = *ptree_meta_check(index, BufferGetPage(metabuf));
	cs.nblocks = RelationGetNumberOfBlocks(index);
	cs.seen = palloc0(sizeof(bool) * cs.nblocks);
	cs.gen = meta.gen;
	cs.meta = &meta;
	ptree_check_main(&cs, &meta);
	if (BlockNumberIsValid(meta.sealed_head))
		ptree_check_delta(&cs, "sealed delta", meta.sealed_head, meta.sealed_tail,
						  meta.sealed_pages, meta.sealed_tids, meta.sealed_gen);
	ptree_check_delta(&cs, "delta", meta.delta_head, meta.delta_tail, meta.delta_pages,
					  meta.delta_tids, meta.delta_gen);
	ptree_check_unreached(&cs);
	UnlockReleaseBuffer(metabuf);
	ptree_unlock_merges(index, ShareLock);

	if (heapallindexed)
	{
		IndexInfo  *indexInfo = BuildIndexInfo(index);

		qsort(cs.entries, cs.nentries, sizeof(PtreeCheckEntry), ptree_check_entry_cmp);
		table_index_build_scan(heaprel, index, indexInfo, true, false,
							   ptree_check_heap_callback, (void *) &cs, NULL);
		ereport(DEBUG1,
				(errmsg_internal("gpuext_ptree_check: %.0f heap tuples found in %zu index entries",
								 cs.heap_checked, cs.nentries)));
	}

	MemoryContextSwitchTo(old);
	MemoryContextDelete(ctx);
	index_close(index, lockmode);
	table_close(heaprel, lockmode);
	PG_RETURN_VOID();
}
