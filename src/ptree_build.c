/*-------------------------------------------------------------------------
 * ptree_build.c
 *		gpuext_ptree: build, empty build, insert into the delta, and the
 *		merge of main and delta into a new main structure.
 *
 * IDENTIFICATION
 *		src/ptree_build.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/indexfsm.h"
#include "storage/smgr.h"
#include "utils/memutils.h"

#include "gx_ptree.h"
#include "ptree.h"

/* gpuext.ptree_merge_plan: when merges of fixed-width keys are planned */
int			ptree_merge_plan_mode = PTREE_MERGE_PLAN_AUTO;

/* gpuext.debug_ptree_merge_delay: a wait before each merge's switch (ms) */
int			ptree_debug_merge_delay = 0;

/* this backend's merges (gpuext_ptree_merge_stats) */
static struct
{
	int64		gpu;			/* planned on the GPU */
	int64		cpu;			/* planned on the CPU engine */
	int64		walk;			/* merged by comparing keys (text, no mirror, plan off) */
	int64		entries;		/* delta entries planned */
	int64		duplicates;		/* exact duplicates the plans dropped */
	double		plan_ms;		/* planning, mirror included */
	double		merge_ms;		/* whole merges, rewrite included */
} merge_stats;

/*
 * A planned merge as the rewrite consumes it: the plan of the non-NULL
 * entries, the NULL entries' TIDs (sorted, distinct), the key length and
 * main's number of distinct non-NULL keys (the ranks' range)
 */
typedef struct PtreeSplice
{
	PtreeMergePlan plan;
	ItemPointerData *nulls;
	Size		nnulls;
	uint32		keylen;
	uint64		nmain;
} PtreeSplice;

/* one (key, TID) of the build or of the delta, with its key copied */
typedef struct PtreeEntry
{
	ItemPointerData tid;
	bool		isnull;
	uint16		len;
	char	   *data;
} PtreeEntry;

/*
 * writes the leaves of a new main structure, then its directory, with
 * generation meta->merge_gen
 */
typedef struct PtreeWriter
{
	Relation	index;
	const PtreeMetaData *meta;	/* the generations in use */
	uint32		new_gen;
	uint16		level;
	Size		reserve;		/* free space left on each leaf (fillfactor) */
	char	   *image;			/* the page being filled */
	Buffer		buf;			/* its buffer, claimed and pinned (not locked),
								 * or InvalidBuffer */
	int			nitems;
	/* (first key, block) of every page written at this level */
	PtreeTuple *dir;
	Size	   *dirsize;
	int			ndir;
	int			maxdir;
	uint32		npages;
} PtreeWriter;

/* what a rewrite wrote: the new main structure */
typedef struct PtreeNewMain
{
	BlockNumber root;
	BlockNumber first_leaf;
	uint32		levels;
	uint32		pages;
	uint64		tids;
	uint64		keys;
	double		removed;		/* dead TIDs dropped (VACUUM) */
} PtreeNewMain;

/* the running state of a merge */
typedef struct PtreeMergeState
{
	PtreeWriter w;
	char		keybuf[PTREE_MAX_KEY];
	PtreeKey	key;			/* key of the posting list being gathered */
	bool		haskey;
	ItemPointerData *tids;
	int			ntids;
	int			maxtids;
	uint64		out_tids;
	uint64		out_keys;
	IndexBulkDeleteCallback callback;
	void	   *callback_state;
	double		removed;
} PtreeMergeState;

/* build state */
typedef struct PtreeBuildState
{
	Oid			keytype;
	MemoryContext ctx;			/* holds the entries */
	MemoryContext tmpCtx;		/* reset after each tuple */
	PtreeEntry *entries;
	Size		nentries;
	Size		maxentries;
	double		heap_tuples;
} PtreeBuildState;

/*
 * qsort order of entries: key, then TID
 */
static int
ptree_entry_cmp(const void *a, const void *b)
{
	const PtreeEntry *ea = (const PtreeEntry *) a;
	const PtreeEntry *eb = (const PtreeEntry *) b;
	PtreeKey	ka = {ea->isnull, ea->len, ea->data};
	PtreeKey	kb = {eb->isnull, eb->len, eb->data};
	int			c = ptree_key_compare(&ka, &kb);

	if (c != 0)
		return c;
	return ItemPointerCompare(&((PtreeEntry *) a)->tid, &((PtreeEntry *) b)->tid);
}

/*
 * qsort order of item pointers
 */
static int
ptree_tid_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/*
 * Write a page image to its (pinned) buffer as a full-page generic WAL
 * record, under the buffer's lock for just that, and release the buffer
 */
static void
ptree_write_image(Relation index, Buffer buf, const char *image)
{
	GenericXLogState *state;
	Page		page;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
	memcpy(page, image, BLCKSZ);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
}

/*
 * A page for the writer, claimed: written (WAL-logged) as an empty page of
 * the new generation, so that no one else takes it, then unlocked and left
 * pinned.  The writer fills its image without holding any buffer lock
 * (it can be cancelled meanwhile), and writes it at the end.
 */
static Buffer
ptree_writer_claim(PtreeWriter *w)
{
	Buffer		buf = ptree_new_buffer(w->index, w->meta);
	GenericXLogState *state = GenericXLogStart(w->index);
	Page		page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);

	ptree_init_page(page, w->level == 0 ? PTREE_LEAF : PTREE_INNER, w->level, w->new_gen);
	GenericXLogFinish(state);
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	return buf;
}

/*
 * Start a new page at the writer's level, chained after the current one
 */
static void
ptree_writer_next_page(PtreeWriter *w)
{
	Buffer		nbuf = ptree_writer_claim(w);

	CHECK_FOR_INTERRUPTS();
	if (BufferIsValid(w->buf))
	{
		PtreePageGetOpaque((Page) w->image)->next = BufferGetBlockNumber(nbuf);
		ptree_write_image(w->index, w->buf, w->image);
	}
	w->buf = nbuf;
	ptree_init_page((Page) w->image, w->level == 0 ? PTREE_LEAF : PTREE_INNER, w->level, w->new_gen);
	w->nitems = 0;
	w->npages++;
}

/*
 * Add a tuple to the current page; returns false if it does not fit (an
 * empty page always takes it)
 */
static bool
ptree_writer_add(PtreeWriter *w, PtreeTuple tup, Size size)
{
	Page		page = (Page) w->image;

	if (!BufferIsValid(w->buf))
		ptree_writer_next_page(w);
	if (w->nitems > 0 &&
		PageGetFreeSpace(page) < MAXALIGN(size) + (w->level == 0 ? w->reserve : 0))
		return false;
	if (PageAddItem(page, (Item) tup, size, InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
	{
		if (w->nitems == 0)
			elog(ERROR, "gpuext_ptree: tuple of %zu bytes does not fit an empty page", size);
		return false;
	}
	if (w->nitems == 0)
	{
		/* remember (first key, block) for the level above */
		PtreeKey	key;
		ItemPointerData child;

		ptree_tuple_key(tup, &key);
		ItemPointerSet(&child, BufferGetBlockNumber(w->buf), 1);
		if (w->ndir == w->maxdir)
		{
			w->maxdir *= 2;
			w->dir = repalloc_huge(w->dir, sizeof(PtreeTuple) * w->maxdir);
			w->dirsize = repalloc_huge(w->dirsize, sizeof(Size) * w->maxdir);
		}
		w->dir[w->ndir] = ptree_form_tuple(&key, &child, 1, &w->dirsize[w->ndir]);
		w->ndir++;
	}
	w->nitems++;
	return true;
}

/*
 * Add a posting list, split over as many tuples (and pages) as needed
 */
static void
ptree_writer_add_posting(PtreeWriter *w, const PtreeKey *key, ItemPointer tids, int ntids)
{
	Size		keyspace = PtreeTupleSize(key->isnull ? 0 : key->len, 0);

	while (ntids > 0)
	{
		Page		page;
		Size		avail;
		int			k;
		PtreeTuple	tup;
		Size		size;

		if (!BufferIsValid(w->buf))
			ptree_writer_next_page(w);
		page = (Page) w->image;
		avail = PageGetFreeSpace(page);
		if (w->nitems > 0)
			avail = avail > w->reserve ? avail - w->reserve : 0;
		/* TIDs that fit after the key (MAXALIGN may cost up to 7 bytes) */
		k = avail > keyspace + MAXIMUM_ALIGNOF ?
			(int) ((avail - keyspace - MAXIMUM_ALIGNOF) / sizeof(ItemPointerData)) : 0;
		k = Min(k, ntids);
		k = Min(k, PG_UINT16_MAX);
		/* start a new page rather than leave a sliver of a posting list */
		if (k < 1 || (w->nitems > 0 && k < ntids && k < 16))
		{
			ptree_writer_next_page(w);
			continue;
		}
		tup = ptree_form_tuple(key, tids, k, &size);
		if (!ptree_writer_add(w, tup, size))
		{
			pfree(tup);
			ptree_writer_next_page(w);
			continue;
		}
		pfree(tup);
		tids += k;
		ntids -= k;
	}
}

/*
 * Write the last page of the level (w->dir then lists the level's pages,
 * by first key and block, for the level above)
 */
static void
ptree_writer_end_level(PtreeWriter *w)
{
	if (BufferIsValid(w->buf))
		ptree_write_image(w->index, w->buf, w->image);
	w->buf = InvalidBuffer;
	w->nitems = 0;
}

/*
 * Write the directory above the leaves; sets the root and the number of
 * levels (0 when there are no leaves)
 */
static void
ptree_writer_finish(PtreeWriter *w, BlockNumber *root, BlockNumber *first_leaf, uint32 *levels)
{
	ptree_writer_end_level(w);
	*levels = 0;
	*root = InvalidBlockNumber;
	*first_leaf = InvalidBlockNumber;
	if (w->ndir == 0)
		return;
	*first_leaf = ItemPointerGetBlockNumber(PtreeTupleTids(w->dir[0]));
	*levels = 1;
	while (w->ndir > 1)
	{
		PtreeTuple *below = w->dir;
		Size	   *belowsize = w->dirsize;
		int			nbelow = w->ndir;
		int			i;

		w->level++;
		w->maxdir = 16;
		w->ndir = 0;
		w->dir = palloc(sizeof(PtreeTuple) * w->maxdir);
		w->dirsize = palloc(sizeof(Size) * w->maxdir);
		for (i = 0; i < nbelow; i++)
		{
			CHECK_FOR_INTERRUPTS();
			if (!ptree_writer_add(w, below[i], belowsize[i]))
			{
				ptree_writer_next_page(w);
				if (!ptree_writer_add(w, below[i], belowsize[i]))
					elog(ERROR, "gpuext_ptree: directory tuple does not fit an empty page");
			}
			pfree(below[i]);
		}
		ptree_writer_end_level(w);
		pfree(below);
		pfree(belowsize);
		(*levels)++;
	}
	*root = ItemPointerGetBlockNumber(PtreeTupleTids(w->dir[0]));
}

/*
 * Emit the posting list gathered for the current key: sorted, duplicate
 * TIDs dropped, dead TIDs (VACUUM) dropped
 */
static void
ptree_merge_flush(PtreeMergeState *ms)
{
	int			i,
				n = 0;

	if (!ms->haskey)
		return;
	if (ms->ntids > 1)
		qsort(ms->tids, ms->ntids, sizeof(ItemPointerData), ptree_tid_cmp);
	for (i = 0; i < ms->ntids; i++)
	{
		if (n > 0 && ItemPointerEquals(&ms->tids[n - 1], &ms->tids[i]))
			continue;
		if (ms->callback && ms->callback(&ms->tids[i], ms->callback_state))
		{
			ms->removed += 1;
			continue;
		}
		ms->tids[n++] = ms->tids[i];
	}
	if (n > 0)
	{
		ptree_writer_add_posting(&ms->w, &ms->key, ms->tids, n);
		ms->out_tids += n;
		ms->out_keys++;
	}
	ms->haskey = false;
	ms->ntids = 0;
}

/*
 * Start gathering the posting list of a new key (the previous one is
 * emitted)
 */
static void
ptree_merge_start(PtreeMergeState *ms, const PtreeKey *key)
{
	ptree_merge_flush(ms);
	ms->key.isnull = key->isnull;
	ms->key.len = key->isnull ? 0 : key->len;
	memcpy(ms->keybuf, key->data, ms->key.len);
	ms->key.data = ms->keybuf;
	ms->haskey = true;
}

/*
 * Add TIDs to the posting list being gathered
 */
static void
ptree_merge_tids(PtreeMergeState *ms, const ItemPointerData *tids, int ntids)
{
	if (ms->ntids + ntids > ms->maxtids)
	{
		while (ms->ntids + ntids > ms->maxtids)
			ms->maxtids *= 2;
		ms->tids = repalloc_huge(ms->tids, sizeof(ItemPointerData) * ms->maxtids);
	}
	memcpy(ms->tids + ms->ntids, tids, sizeof(ItemPointerData) * ntids);
	ms->ntids += ntids;
}

/*
 * Add TIDs of a key to the merge; keys arrive in non-decreasing order
 */
static void
ptree_merge_add(PtreeMergeState *ms, const PtreeKey *key, ItemPointer tids, int ntids)
{
	if (!ms->haskey || ptree_key_compare(&ms->key, key) != 0)
		ptree_merge_start(ms, key);
	ptree_merge_tids(ms, tids, ntids);
}

/* A TID as the mirror and the merge plan keep it, and back */
static inline uint64
ptree_tid64(const ItemPointerData *tid)
{
	return ((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 16) |
		ItemPointerGetOffsetNumberNoCheck(tid);
}

static inline void
ptree_tid_from64(uint64 v, ItemPointerData *tid)
{
	ItemPointerSet(tid, (BlockNumber) (v >> 16), (OffsetNumber) (v & 0xFFFF));
}

/*
 * Emit the planned entries [*e, ...) whose rank is below 'upto' (2k + 1:
 * those before main's key k, of rank 2k), one posting list per key: keys
 * that main does not have
 */
static void
ptree_splice_new_keys(PtreeMergeState *ms, const PtreeSplice *sp, Size *e, uint64 upto)
{
	const PtreeMergePlan *p = &sp->plan;
	char		bytes[8];
	PtreeKey	key = {false, sp->keylen, bytes};

	while (*e < p->n && p->ranks[*e] < upto)
	{
		uint64		k = p->keys[*e];
		ItemPointerData tid;

		if (p->ranks[*e] & 1)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("gpuext_ptree: merge plan ranks an entry equal to a main key it passed")));
		for (uint32 b = 0; b < sp->keylen; b++)
			bytes[b] = (char) (k >> (8 * (sp->keylen - 1 - b)));
		ptree_merge_start(ms, &key);
		for (; *e < p->n && p->keys[*e] == k; (*e)++)
		{
			ptree_tid_from64(p->tids[*e], &tid);
			ptree_merge_tids(ms, &tid, 1);
		}
	}
}

/*
 * Add the planned entries [*e, ...) of rank 'rank' (equal to the main key
 * being started) to its posting list
 */
static void
ptree_splice_equal(PtreeMergeState *ms, const PtreeSplice *sp, Size *e, uint64 rank)
{
	const PtreeMergePlan *p = &sp->plan;

	for (; *e < p->n && p->ranks[*e] == rank; (*e)++)
	{
		ItemPointerData tid;

		Assert(gx_ptree_key64((const unsigned char *) ms->key.data, ms->key.len) == p->keys[*e]);
		ptree_tid_from64(p->tids[*e], &tid);
		ptree_merge_tids(ms, &tid, 1);
	}
}

/*
 * gpuext.debug_ptree_merge_delay: hold the merge for that long as a device
 * request does (GX_REQ_SLEEP on the GPU service, or on the CPU engine),
 * so that tests can watch readers and inserts while a merge is under way
 */
static void
ptree_debug_delay(void)
{
	GxEngine	engine;
	GxPendingBatch pb;
	GxBatch    *batch;

	if (ptree_debug_merge_delay <= 0)
		return;
	gx_engine_start(&engine);
	batch = gx_engine_batch_alloc(&engine, &pb, gx_batch_size(0, 0, 0));
	gx_batch_layout(batch, GX_REQ_SLEEP, 0, 0, 0);
	batch->arg = (uint64) ptree_debug_merge_delay * 1000 * 1000;
	gx_engine_submit(&engine, &pb);
	gx_engine_wait(&engine, &pb);
	gx_engine_batch_free(&pb);
}

/*
 * Add the block numbers of a main structure's pages (every level) to a
 * list; each level is walked along its chain, checked (ptree_check_link,
 * ptree_page_ok), from the first child of the level above
 */
static List *
ptree_main_pages(Relation index, BlockNumber root, uint32 levels, uint32 gen, List *blocks)
{
	BlockNumber first = root;
	BlockNumber parent = PTREE_METAPAGE_BLKNO;

	while (levels > 0 && BlockNumberIsValid(first))
	{
		BlockNumber blkno = first;
		BlockNumber from = parent;
		BlockNumber down = InvalidBlockNumber;
		uint32		steps = 0;

		while (BlockNumberIsValid(blkno))
		{
			Buffer		buf;
			Page		page;

			CHECK_FOR_INTERRUPTS();
			ptree_check_link(index, from, blkno, &steps);
			buf = ReadBuffer(index, blkno);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			if (!ptree_page_ok(index, page, blkno, gen, levels > 1 ? PTREE_INNER : PTREE_LEAF,
							   (uint16) (levels - 1)))
			{
				UnlockReleaseBuffer(buf);
				break;
			}
			blocks = lappend_int(blocks, (int) blkno);
			if (!BlockNumberIsValid(down) && levels > 1)
			{
				PtreeTuple	t = ptree_page_tuple(index, page, blkno, FirstOffsetNumber);

				down = ItemPointerGetBlockNumberNoCheck(PtreeTupleTids(t));
				parent = blkno;
			}
			from = blkno;
			blkno = PtreePageGetOpaque(page)->next;
			UnlockReleaseBuffer(buf);
		}
		first = down;
		levels--;
	}
	return blocks;
}

/*
 * Write a new main structure, of generation meta->merge_gen, from the old
 * main (generation meta->gen) and sorted entries; *out says what was
 * written.  No buffer lock is held but one page's at a time (the caller
 * holds the merge lock, so the old main does not change).  With a
 * callback (VACUUM), dead TIDs are dropped.  The entries come either as a
 * planned merge (sp: sorted, ranked in main, spliced in as main's leaves
 * stream past, no key compared with main's), or unsorted (sorted here and
 * merged by comparing keys).  Both write the same pages.
 */
static void
ptree_rewrite(Relation index, const PtreeMetaData *meta, PtreeEntry *entries, Size nentries,
			  const PtreeSplice *sp, IndexBulkDeleteCallback callback, void *callback_state,
			  PtreeNewMain *out)
{
	PtreeMergeState *ms;
	BlockNumber blkno;
	Size		e = 0;
	char	   *leafcopy;
	uint64		k = 0;			/* planned: main's distinct non-NULL keys started */
	bool		in_main = false;	/* planned: gathering a main key */
	bool		nulls_done = false;
	BlockNumber leaf_from = PTREE_METAPAGE_BLKNO;
	uint32		leaf_steps = 0;

	if (nentries > 1)
		qsort(entries, nentries, sizeof(PtreeEntry), ptree_entry_cmp);

	ms = palloc0(sizeof(PtreeMergeState));
	ms->w.index = index;
	ms->w.meta = meta;
	ms->w.new_gen = meta->merge_gen;
	ms->w.level = 0;
	ms->w.reserve = (Size) BLCKSZ * (100 - ptree_fillfactor(index)) / 100;
	ms->w.image = palloc(BLCKSZ);
	ms->w.buf = InvalidBuffer;
	ms->w.maxdir = 64;
	ms->w.dir = palloc(sizeof(PtreeTuple) * ms->w.maxdir);
	ms->w.dirsize = palloc(sizeof(Size) * ms->w.maxdir);
	ms->maxtids = 1024;
	ms->tids = palloc(sizeof(ItemPointerData) * ms->maxtids);
	ms->callback = callback;
	ms->callback_state = callback_state;

	/* old main leaves, in key order, merged with the sorted entries */
	leafcopy = palloc(BLCKSZ);
	blkno = meta->first_leaf;
	while (BlockNumberIsValid(blkno))
	{
		Buffer		buf;
		Page		page = (Page) leafcopy;
		OffsetNumber off,
					maxoff;

		CHECK_FOR_INTERRUPTS();
		ptree_check_link(index, leaf_from, blkno, &leaf_steps);
		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		memcpy(leafcopy, BufferGetPage(buf), BLCKSZ);
		UnlockReleaseBuffer(buf);
		ptree_check_live_leaf(index, page, blkno, meta->gen);
		maxoff = PageGetMaxOffsetNumber(page);
		for (off = FirstOffsetNumber; off <= maxoff; off++)
		{
			PtreeTuple	t = ptree_page_tuple(index, page, blkno, off);
			ItemPointer tids = ptree_tuple_tids(index, t, blkno, off);
			PtreeKey	key;

			ptree_tuple_key(t, &key);
			/* the last key gathered is main's previous one: the order holds */
			if (ms->haskey)
				ptree_check_order(index, &ms->key, &key, blkno, off);
			if (sp != NULL)
			{
				/* planned: a tuple of the main key being gathered goes on */
				if (in_main && ptree_key_compare(&ms->key, &key) == 0)
				{
					ptree_merge_tids(ms, tids, t->ntids);
					continue;
				}
				if (key.isnull)
				{
					/* the NULLs: after every key, the delta's NULLs with them */
					ptree_splice_new_keys(ms, sp, &e, PG_UINT64_MAX);
					ptree_merge_start(ms, &key);
					ptree_merge_tids(ms, sp->nulls, (int) sp->nnulls);
					nulls_done = true;
				}
				else
				{
					/* main key k: the delta's smaller keys, then k with its equals */
					ptree_splice_new_keys(ms, sp, &e, 2 * k + 1);
					ptree_merge_start(ms, &key);
					ptree_splice_equal(ms, sp, &e, 2 * k + 1);
					k++;
				}
				in_main = true;
				ptree_merge_tids(ms, tids, t->ntids);
				continue;
			}
			/* entries with smaller keys go first */
			while (e < nentries)
			{
				PtreeKey	ek = {entries[e].isnull, entries[e].len, entries[e].data};

				if (ptree_key_compare(&ek, &key) > 0)
					break;
				ptree_merge_add(ms, &ek, &entries[e].tid, 1);
				e++;
			}
			ptree_merge_add(ms, &key, tids, t->ntids);
		}
		leaf_from = blkno;
		blkno = PtreePageGetOpaque(page)->next;
	}
	if (sp != NULL)
	{
		/* planned: keys after main's last, then NULLs if main had none */
		ptree_splice_new_keys(ms, sp, &e, PG_UINT64_MAX);
		if (!nulls_done && sp->nnulls > 0)
		{
			PtreeKey	nk = {true, 0, ""};

			ptree_merge_start(ms, &nk);
			ptree_merge_tids(ms, sp->nulls, (int) sp->nnulls);
		}
		if (k != sp->nmain || e != sp->plan.n)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("gpuext_ptree index \"%s\": merge plan of " UINT64_FORMAT " keys does not match main's " UINT64_FORMAT,
							RelationGetRelationName(index), sp->nmain, k)));
	}
	for (; e < nentries; e++)
	{
		PtreeKey	ek = {entries[e].isnull, entries[e].len, entries[e].data};

		if ((e & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		ptree_merge_add(ms, &ek, &entries[e].tid, 1);
	}
	ptree_merge_flush(ms);
	ptree_writer_finish(&ms->w, &out->root, &out->first_leaf, &out->levels);
	out->pages = ms->w.npages;
	out->tids = ms->out_tids;
	out->keys = ms->out_keys;
	out->removed = ms->removed;
}

/*
 * Seal the delta for a merge, under the metapage's buffer lock for one
 * record; the caller holds the merge lock.  The delta becomes the sealed
 * delta, inserts start a new delta of a fresh generation, and the new
 * main gets a fresh generation (merge_gen); *meta is the metapage after
 * it.  A sealed delta a failed merge left behind is not replaced: this
 * merge finishes it (*stale).  False, nothing done, when 'when' asks for
 * no merge.
 */
static bool
ptree_seal(Relation index, PtreeMergeWhen when, PtreeMetaData *meta, bool *stale)
{
	Buffer		metabuf = ReadBuffer(index, PTREE_METAPAGE_BLKNO);
	PtreeMetaData *m;
	GenericXLogState *state;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	m = ptree_meta_check(index, BufferGetPage(metabuf));
	*stale = BlockNumberIsValid(m->sealed_head);
	if (!*stale &&
		((when == PTREE_MERGE_FULL && m->delta_pages < (uint32) ptree_delta_limit(index, m)) ||
		 (when == PTREE_MERGE_PENDING && m->delta_pages == 0)))
	{
		UnlockReleaseBuffer(metabuf);
		return false;
	}
	state = GenericXLogStart(index);
	m = PtreePageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	if (!*stale)
	{
		m->sealed_gen = m->delta_gen;
		m->sealed_head = m->delta_head;
		m->sealed_tail = m->delta_tail;
		m->sealed_pages = m->delta_pages;
		m->sealed_tids = m->delta_tids;
		m->delta_gen = ++m->max_gen;
		m->delta_head = InvalidBlockNumber;
		m->delta_tail = InvalidBlockNumber;
		m->delta_pages = 0;
		m->delta_tids = 0;
	}
	m->merge_gen = ++m->max_gen;
	*meta = *m;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
	return true;
}

/*
 * The switch, under the metapage's buffer lock for one record: the new
 * main (generation meta->merge_gen) becomes live and the sealed delta
 * goes.  meta is the metapage as the seal left it; the caller holds the
 * merge lock, so only inserts changed it since (the delta).
 */
static void
ptree_switch(Relation index, const PtreeMetaData *meta, const PtreeNewMain *nm)
{
	Buffer		metabuf = ReadBuffer(index, PTREE_METAPAGE_BLKNO);
	PtreeMetaData *m;
	GenericXLogState *state;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	m = ptree_meta_check(index, BufferGetPage(metabuf));
	if (m->gen != meta->gen || m->merge_gen != meta->merge_gen ||
		m->sealed_head != meta->sealed_head)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("gpuext_ptree index \"%s\" changed under a merge",
						RelationGetRelationName(index))));
	state = GenericXLogStart(index);
	m = PtreePageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	m->gen = meta->merge_gen;
	m->merge_gen = 0;
	m->root = nm->root;
	m->first_leaf = nm->first_leaf;
	m->levels = nm->levels;
	m->main_pages = nm->pages;
	m->main_tids = nm->tids;
	m->main_keys = nm->keys;
	m->sealed_gen = 0;
	m->sealed_head = InvalidBlockNumber;
	m->sealed_tail = InvalidBlockNumber;
	m->sealed_pages = 0;
	m->sealed_tids = 0;
	m->merges++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
}

/*
 * The mirror whose keys rank a planned merge of n entries of an index
 * with 'keylen'-byte keys, or NULL when the merge compares keys.  A bare
 * header when main has no non-NULL key.  With gpuext.ptree_merge_plan =
 * on, the backend's mirror of the live generation, built now if it has
 * none; with auto, only one the backend has (building one reads all of
 * main and, measured, costs more than the comparisons the plan saves, on
 * either engine: the rewrite is the same).  NULL also when the mirror is
 * over gpuext.ptree_mirror_max_mb or its keys cannot be read as merge
 * keys.
 */
static const GxPtreeMirror *
ptree_merge_mirror(Relation index, PtreeMetaData *meta, uint32 keylen)
{
	static GxPtreeMirror empty;
	const GxPtreeMirror *m;
	bool		too_large;

	if (meta->main_keys == 0)
	{
		empty.magic = GX_PTREE_MAGIC;
		return &empty;
	}
	m = ptree_mirror_cached(index, meta);
	if (m == NULL && ptree_mirror_fits(meta) && ptree_merge_plan_mode == PTREE_MERGE_PLAN_ON)
		m = ptree_mirror_get(index, meta, true, &too_large);
	if (m == NULL || !gx_ptree_merge_mirror_ok(m, keylen))
		return NULL;
	return m;
}

/* qsort order of planned NULL entries' TIDs is ptree_tid_cmp */

/*
 * Read the sealed delta (which no one changes; the caller holds the merge
 * lock, so its pages are checked to be of its generation,
 * ptree_page_check, and its chain from the metapage, ptree_check_link):
 * as 64-bit keys and TIDs for a planned merge (keylen > 0; NULL keys' TIDs
 * apart), else as entries with their keys copied
 */
static void
ptree_read_delta(Relation index, PtreeMetaData *meta, uint32 keylen, PtreeEntry **entries,
				 Size *nentries, uint64 **keys, uint64 **tids, ItemPointerData **nulls,
				 Size *nnulls, List **old_blocks)
{
	Size		max = Max(meta->sealed_tids, 16);
	Size		maxnulls = 16;
	BlockNumber blkno = meta->sealed_head;
	BlockNumber from = PTREE_METAPAGE_BLKNO;
	uint32		steps = 0;

	*nentries = 0;
	*nnulls = 0;
	if (keylen > 0)
	{
		*keys = palloc_extended(sizeof(uint64) * max, MCXT_ALLOC_HUGE);
		*tids = palloc_extended(sizeof(uint64) * max, MCXT_ALLOC_HUGE);
		*nulls = palloc(sizeof(ItemPointerData) * maxnulls);
	}
	else
		*entries = palloc_extended(sizeof(PtreeEntry) * max, MCXT_ALLOC_HUGE);
	while (BlockNumberIsValid(blkno))
	{
		Buffer		buf;
		Page		page;
		OffsetNumber off,
					maxoff;

		CHECK_FOR_INTERRUPTS();
		ptree_check_link(index, from, blkno, &steps);
		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		ptree_page_check(index, page, blkno, meta->sealed_gen, PTREE_DELTA, 0);
		maxoff = PageGetMaxOffsetNumber(page);
		for (off = FirstOffsetNumber; off <= maxoff; off++)
		{
			PtreeTuple	t = ptree_page_tuple(index, page, blkno, off);
			ItemPointer ttids = ptree_tuple_tids(index, t, blkno, off);
			bool		isnull = (t->flags & PTREE_TUPLE_NULL) != 0;
			int			i;

			if (keylen > 0 && !isnull && t->keylen != keylen)
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("gpuext_ptree index \"%s\": delta key of %u bytes in block %u, expected %u",
								RelationGetRelationName(index), t->keylen, blkno, keylen)));
			for (i = 0; i < t->ntids; i++)
			{
				if (keylen > 0 && isnull)
				{
					if (*nnulls == maxnulls)
					{
						maxnulls *= 2;
						*nulls = repalloc_huge(*nulls, sizeof(ItemPointerData) * maxnulls);
					}
					(*nulls)[(*nnulls)++] = ttids[i];
					continue;
				}
				if (*nentries == max)
				{
					max *= 2;
					if (keylen > 0)
					{
						*keys = repalloc_huge(*keys, sizeof(uint64) * max);
						*tids = repalloc_huge(*tids, sizeof(uint64) * max);
					}
					else
						*entries = repalloc_huge(*entries, sizeof(PtreeEntry) * max);
				}
				if (keylen > 0)
				{
					(*keys)[*nentries] = gx_ptree_key64((const unsigned char *) t->data, keylen);
					(*tids)[*nentries] = ptree_tid64(&ttids[i]);
				}
				else
				{
					PtreeEntry *en = &(*entries)[*nentries];

					en->tid = ttids[i];
					en->isnull = isnull;
					en->len = t->keylen;
					en->data = palloc(Max(t->keylen, 1));
					memcpy(en->data, t->data, t->keylen);
				}
				(*nentries)++;
			}
		}
		*old_blocks = lappend_int(*old_blocks, (int) blkno);
		from = blkno;
		blkno = PtreePageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
	}
}

/*
 * Merge the sealed delta into main (and, for VACUUM, drop dead TIDs), then
 * switch to the new main; meta is the metapage as the seal left it.
 * Fixed-width keys (as gpuext.ptree_merge_plan says, with a mirror to rank
 * them in) are planned first on the GPU or the CPU engine
 * (ptree_merge_plan), other merges compare keys; both write the same
 * index.  No buffer lock is held across the plan or the rewrite.
 */
static void
ptree_merge_sealed(Relation index, PtreeMetaData *meta, IndexBulkDeleteCallback callback,
				   void *callback_state, IndexBulkDeleteResult *stats)
{
	MemoryContext ctx = AllocSetContextCreate(CurrentMemoryContext,
											  "gpuext_ptree merge",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(ctx);
	PtreeEntry *entries = NULL;
	Size		nentries = 0;
	List	   *old_blocks = NIL;
	ListCell   *lc;
	PtreeNewMain nm;
	uint32		keylen = 0;
	const GxPtreeMirror *m = NULL;
	PtreeSplice sp;
	uint64	   *keys = NULL,
			   *tids = NULL;
	const char *engine = "compare";
	instr_time	start,
				planned,
				done;

	INSTR_TIME_SET_CURRENT(start);
	memset(&sp, 0, sizeof(sp));
	if (ptree_merge_plan_mode != PTREE_MERGE_PLAN_OFF && meta->sealed_tids > 0)
	{
		switch (meta->keytype)
		{
			case INT4OID:
			case DATEOID:
				keylen = 4;
				break;
			case INT8OID:
			case TIMESTAMPOID:
				keylen = 8;
				break;
			default:
				keylen = 0;
		}
		if (keylen > 0 && (m = ptree_merge_mirror(index, meta, keylen)) == NULL)
			keylen = 0;
	}
	ptree_read_delta(index, meta, keylen, &entries, &nentries, &keys, &tids, &sp.nulls,
					 &sp.nnulls, &old_blocks);
	if (keylen > 0)
	{
		Size		n = 0;

		sp.keylen = keylen;
		sp.nmain = m->nkeys;
		sp.plan.keys = palloc_extended(sizeof(uint64) * Max(nentries, 1), MCXT_ALLOC_HUGE);
		sp.plan.tids = palloc_extended(sizeof(uint64) * Max(nentries, 1), MCXT_ALLOC_HUGE);
		sp.plan.ranks = palloc_extended(sizeof(uint64) * Max(nentries, 1), MCXT_ALLOC_HUGE);
		/* a delta of NULL entries only has nothing to plan */
		if (nentries == 0)
		{
			engine = "nothing to plan";
			merge_stats.walk++;
		}
		else if (ptree_merge_plan(m, keys, tids, nentries, &sp.plan))
		{
			engine = "GPU";
			merge_stats.gpu++;
		}
		else
		{
			engine = "CPU engine";
			merge_stats.cpu++;
		}
		/* the NULL entries: sorted TIDs, duplicates dropped */
		if (sp.nnulls > 1)
			qsort(sp.nulls, sp.nnulls, sizeof(ItemPointerData), ptree_tid_cmp);
		for (Size i = 0; i < sp.nnulls; i++)
			if (n == 0 || !ItemPointerEquals(&sp.nulls[n - 1], &sp.nulls[i]))
				sp.nulls[n++] = sp.nulls[i];
		merge_stats.duplicates += (int64) (nentries - sp.plan.n) + (int64) (sp.nnulls - n);
		merge_stats.entries += (int64) (nentries + sp.nnulls);
		sp.nnulls = n;
		nentries = 0;
	}
	else
		merge_stats.walk++;
	INSTR_TIME_SET_CURRENT(planned);
	ptree_rewrite(index, meta, entries, nentries, keylen > 0 ? &sp : NULL,
				  callback, callback_state, &nm);

	/* the pages of the old main and the sealed delta become free at the switch */
	old_blocks = ptree_main_pages(index, meta->root, meta->levels, meta->gen, old_blocks);
	ptree_debug_delay();
	ptree_switch(index, meta, &nm);
	foreach(lc, old_blocks)
		RecordFreeIndexPage(index, (BlockNumber) lfirst_int(lc));
	if (old_blocks != NIL)
		IndexFreeSpaceMapVacuum(index);	/* upper FSM levels, so searches see them */
	if (stats)
	{
		stats->tuples_removed += nm.removed;
		stats->num_index_tuples = (double) nm.tids;
	}
	INSTR_TIME_SET_CURRENT(done);
	INSTR_TIME_SUBTRACT(done, start);
	INSTR_TIME_SUBTRACT(planned, start);
	merge_stats.plan_ms += INSTR_TIME_GET_MILLISEC(planned);
	merge_stats.merge_ms += INSTR_TIME_GET_MILLISEC(done);
	elog(DEBUG1, "gpuext_ptree index \"%s\": merged the delta (%s) in %.3f ms, %.3f ms of it planning",
		 RelationGetRelationName(index), engine, INSTR_TIME_GET_MILLISEC(done),
		 INSTR_TIME_GET_MILLISEC(planned));
	MemoryContextSwitchTo(old);
	MemoryContextDelete(ctx);
}

/*
 * Merge the delta into main, as 'when' says (the delta full, not empty, or
 * always); with a callback (VACUUM) dead TIDs are dropped.  The caller
 * holds the merge lock (ptree_lock_merges).  A sealed delta a failed merge
 * left behind is merged first, then the delta if 'when' still asks for
 * it.  True if a merge was made.
 */
bool
ptree_merge(Relation index, PtreeMergeWhen when, IndexBulkDeleteCallback callback,
			void *callback_state, IndexBulkDeleteResult *stats)
{
	PtreeMetaData meta;
	bool		stale;
	bool		merged = false;

	while (ptree_seal(index, when, &meta, &stale))
	{
		ptree_merge_sealed(index, &meta, callback, callback_state, stats);
		merged = true;
		if (!stale)
			break;
	}
	return merged;
}

PG_FUNCTION_INFO_V1(gpuext_ptree_merge_stats);

/*
 * gpuext_ptree_merge_stats(): this backend's merges of gpuext_ptree
 * deltas since it started, by how they were merged, and their times
 */
Datum
gpuext_ptree_merge_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[7];
	bool		nulls[7] = {false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpuext_ptree_merge_stats must be called in a context that accepts a record")));
	values[0] = Int64GetDatum(merge_stats.gpu);
	values[1] = Int64GetDatum(merge_stats.cpu);
	values[2] = Int64GetDatum(merge_stats.walk);
	values[3] = Int64GetDatum(merge_stats.entries);
	values[4] = Int64GetDatum(merge_stats.duplicates);
	values[5] = Float8GetDatum(merge_stats.plan_ms);
	values[6] = Float8GetDatum(merge_stats.merge_ms);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

/*
 * table_index_build_scan callback: keep the (key, TID)
 */
static void
ptree_build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
					 bool tupleIsAlive, void *state)
{
	PtreeBuildState *bs = (PtreeBuildState *) state;
	MemoryContext old = MemoryContextSwitchTo(bs->tmpCtx);
	char		fix[8];
	PtreeKey	key;
	PtreeEntry *en;

	ptree_make_key(bs->keytype, values[0], isnull[0], &key, fix);
	if (!key.isnull && key.len > PTREE_MAX_KEY)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index key of %u bytes exceeds the gpuext_ptree maximum of %d bytes",
						key.len, PTREE_MAX_KEY)));
	MemoryContextSwitchTo(bs->ctx);
	if (bs->nentries == bs->maxentries)
	{
		bs->maxentries *= 2;
		bs->entries = repalloc_huge(bs->entries, sizeof(PtreeEntry) * bs->maxentries);
	}
	en = &bs->entries[bs->nentries++];
	en->tid = *tid;
	en->isnull = key.isnull;
	en->len = key.isnull ? 0 : key.len;
	en->data = palloc(Max(en->len, 1));
	memcpy(en->data, key.data, en->len);
	bs->heap_tuples += 1;
	MemoryContextSwitchTo(old);
	MemoryContextReset(bs->tmpCtx);
}

/*
 * Write the metapage of an empty index to block 0
 */
static void
ptree_create_metapage(Relation index)
{
	Buffer		metabuf = ptree_new_buffer(index, NULL);
	GenericXLogState *state;
	Page		page;

	if (BufferGetBlockNumber(metabuf) != PTREE_METAPAGE_BLKNO)
		elog(ERROR, "gpuext_ptree: index \"%s\" is not empty", RelationGetRelationName(index));
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, metabuf, GENERIC_XLOG_FULL_IMAGE);
	ptree_fill_metapage(page, index->rd_opcintype[0]);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
}

/*
 * ambuild: read the heap, sort the keys, write the main structure
 */
IndexBuildResult *
ptreebuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	PtreeBuildState bs;
	PtreeMetaData meta;
	PtreeNewMain nm;
	bool		stale;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));
	ptree_check_opclass(index);

	memset(&bs, 0, sizeof(bs));
	bs.keytype = index->rd_opcintype[0];
	bs.ctx = AllocSetContextCreate(CurrentMemoryContext, "gpuext_ptree build",
								   ALLOCSET_DEFAULT_SIZES);
	bs.tmpCtx = AllocSetContextCreate(CurrentMemoryContext, "gpuext_ptree build tuple",
									  ALLOCSET_DEFAULT_SIZES);
	bs.maxentries = 1024;
	bs.entries = MemoryContextAllocHuge(bs.ctx, sizeof(PtreeEntry) * bs.maxentries);

	table_index_build_scan(heap, index, indexInfo, true, true,
						   ptree_build_callback, (void *) &bs, NULL);

	/* a merge of the entries into the empty index (no one else sees it yet) */
	ptree_create_metapage(index);
	ptree_seal(index, PTREE_MERGE_ALWAYS, &meta, &stale);
	ptree_rewrite(index, &meta, bs.entries, bs.nentries, NULL, NULL, NULL, &nm);
	ptree_switch(index, &meta, &nm);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = bs.heap_tuples;
	result->index_tuples = (double) nm.tids;

	MemoryContextDelete(bs.ctx);
	MemoryContextDelete(bs.tmpCtx);
	return result;
}

/*
 * ambuildempty: the init fork of an unlogged index is an empty metapage,
 * written and WAL-logged directly (generic WAL does not cover init forks),
 * and synced, since it is not in shared buffers
 */
void
ptreebuildempty(Relation index)
{
	Page		metapage = (Page) palloc(BLCKSZ);

	ptree_fill_metapage(metapage, index->rd_opcintype[0]);
	PageSetChecksumInplace(metapage, PTREE_METAPAGE_BLKNO);
	smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, PTREE_METAPAGE_BLKNO,
			  (char *) metapage, true);
	log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node, INIT_FORKNUM,
				PTREE_METAPAGE_BLKNO, metapage, true);
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
	pfree(metapage);
}

/*
 * aminsert: append (key, TID) to the delta; when its last page is full and
 * it has delta_pages pages, merge it into main first, unless another merge
 * is running (then the delta just grows: this insert does not wait)
 */
bool
ptreeinsert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
			Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
			IndexInfo *indexInfo)
{
	MemoryContext insertCtx = AllocSetContextCreate(CurrentMemoryContext,
													"gpuext_ptree insert",
													ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(insertCtx);
	char		fix[8];
	PtreeKey	key;
	PtreeTuple	tup;
	Size		size;
	Buffer		metabuf,
				tailbuf,
				newbuf;
	PtreeMetaData *meta;
	GenericXLogState *state;
	PtreeMetaData *wmeta;
	bool		tried_merge = false;

	ptree_make_key(index->rd_opcintype[0], values[0], isnull[0], &key, fix);
	tup = ptree_form_tuple(&key, ht_ctid, 1, &size);

	for (;;)
	{
		tailbuf = InvalidBuffer;
		newbuf = InvalidBuffer;
		metabuf = ReadBuffer(index, PTREE_METAPAGE_BLKNO);
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		meta = ptree_meta_check(index, BufferGetPage(metabuf));
		if (!BlockNumberIsValid(meta->delta_tail))
		{
			newbuf = ptree_new_buffer(index, meta);
			break;
		}
		/* the tail: a sound delta page of the delta's generation */
		ptree_check_link(index, PTREE_METAPAGE_BLKNO, meta->delta_tail, NULL);
		tailbuf = ReadBuffer(index, meta->delta_tail);
		LockBuffer(tailbuf, BUFFER_LOCK_EXCLUSIVE);
		ptree_page_check(index, BufferGetPage(tailbuf), meta->delta_tail, meta->delta_gen,
						 PTREE_DELTA, 0);
		if (PageGetFreeSpace(BufferGetPage(tailbuf)) >= MAXALIGN(size))
			break;
		/* the tail is full: merge a full delta first, then start a page */
		if (tried_merge || meta->delta_pages < (uint32) ptree_delta_limit(index, meta))
		{
			newbuf = ptree_new_buffer(index, meta);
			break;
		}
		/* the merge takes no buffer lock but for its seal and its switch */
		UnlockReleaseBuffer(tailbuf);
		UnlockReleaseBuffer(metabuf);
		tried_merge = true;
		if (ptree_try_lock_merges(index))
		{
			ptree_merge(index, PTREE_MERGE_FULL, NULL, NULL, NULL);
			ptree_unlock_merges(index, ExclusiveLock);
		}
	}

	state = GenericXLogStart(index);
	wmeta = PtreePageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	if (BufferIsValid(newbuf))
	{
		Page		npage = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
		BlockNumber nblk = BufferGetBlockNumber(newbuf);

		ptree_init_page(npage, PTREE_DELTA, 0, wmeta->delta_gen);
		if (PageAddItem(npage, (Item) tup, size, InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
			elog(ERROR, "gpuext_ptree: could not add a tuple to a new delta page");
		if (BufferIsValid(tailbuf))
			PtreePageGetOpaque(GenericXLogRegisterBuffer(state, tailbuf, 0))->next = nblk;
		else
			wmeta->delta_head = nblk;
		wmeta->delta_tail = nblk;
		wmeta->delta_pages++;
	}
	else
	{
		Page		tpage = GenericXLogRegisterBuffer(state, tailbuf, 0);

		if (PageAddItem(tpage, (Item) tup, size, InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
			elog(ERROR, "gpuext_ptree: could not add a tuple to the delta");
	}
	wmeta->delta_tids++;
	GenericXLogFinish(state);

	if (BufferIsValid(newbuf))
		UnlockReleaseBuffer(newbuf);
	if (BufferIsValid(tailbuf))
		UnlockReleaseBuffer(tailbuf);
	UnlockReleaseBuffer(metabuf);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(insertCtx);
	return false;
}
