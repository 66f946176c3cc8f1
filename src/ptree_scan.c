/*-------------------------------------------------------------------------
 * ptree_scan.c
 *		gpuext_ptree: plain and bitmap index scans.
 *
 * A scan collects every matching TID at once: the range of main's leaves
 * that its bounds allow, found through the directory, and the whole
 * delta (the sealed delta of a merge in progress, then the delta), each
 * part of the generation it read in the metapage.  It holds no lock but
 * each page's while it reads it, so merges and inserts go on and the scan
 * never waits for them; if a page turns out to belong to another
 * generation that a merge gave it, the scan starts again (and after three
 * such restarts takes the merge lock in share mode, which keeps merges
 * out; not on a standby).  Every page, tuple and link it follows is
 * checked (ptree_validate.c).  The TIDs are then sorted, made unique and
 * handed out with no lock held.  = ANY(array) keys are sorted and made
 * unique; the first one drives one descent per element, the others filter
 * by binary search.
 *
 * IDENTIFICATION
 *		src/ptree_scan.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "gx_ptree.h"
#include "ptree.h"

/* one scan key, normalized */
typedef struct PtreeScanKey
{
	int			strategy;		/* PTREE_LT.. or 0 for an array */
	PtreeKey	key;			/* the comparison value */
	char		fix[8];
	PtreeKey   *elems;			/* = ANY: sorted, unique, no NULLs */
	int			nelems;
} PtreeScanKey;

typedef struct PtreeScanOpaqueData
{
	MemoryContext ctx;			/* keys and results; reset at rescan */
	bool		collected;
	bool		impossible;		/* a key no row can satisfy */
	bool		want_null;		/* IS NULL */
	bool		want_notnull;	/* IS NOT NULL or any comparison */
	PtreeScanKey *keys;
	int			nkeys;
	int			driver;			/* index of the = ANY key that drives, or -1 */
	int			satisfied;		/* a key the walk's bounds already satisfy, or -1 */
	bool		hold;			/* merges are kept out for the whole collection */
	bool		changed;		/* a page was no longer of the scan's generation */
	const PtreeMetaData *meta;	/* the metapage the collection read */
	ItemPointerData *tids;
	int64		ntids;
	int64		maxtids;
	int64		next;
	PtreeEngine engine;			/* where = ANY batches are looked up */
} PtreeScanOpaqueData;

typedef PtreeScanOpaqueData *PtreeScanOpaque;

/* for qsort_arg of array elements */
static int
ptree_key_qsort(const void *a, const void *b, void *arg)
{
	return ptree_key_cmp((const PtreeKey *) a, (const PtreeKey *) b);
}

/* for qsort of TIDs */
static int
ptree_tid_qsort(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/*
 * ambeginscan
 */
IndexScanDesc
ptreebeginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	PtreeScanOpaque so = palloc0(sizeof(PtreeScanOpaqueData));

	so->ctx = AllocSetContextCreate(CurrentMemoryContext, "gpuext_ptree scan",
									ALLOCSET_DEFAULT_SIZES);
	ptree_engine_init(&so->engine);
	scan->opaque = so;
	return scan;
}

/*
 * A comparison value of another type (int4 or int2 against an int8 key)
 * as a value of the key's type: the widening is exact, so the comparison
 * means the same
 */
Datum
ptree_widen(Oid keytype, Oid argtype, Datum value)
{
	if (!OidIsValid(argtype) || argtype == keytype)
		return value;
	if (keytype == INT8OID && argtype == INT4OID)
		return Int64GetDatum((int64) DatumGetInt32(value));
	if (keytype == INT8OID && argtype == INT2OID)
		return Int64GetDatum((int64) DatumGetInt16(value));
	elog(ERROR, "gpuext_ptree: cannot compare %s keys with %s",
		 format_type_be(keytype), format_type_be(argtype));
	return value;				/* keep the compiler quiet */
}

/*
 * Normalize the scan keys (in the scan's context)
 */
static void
ptree_prepare_keys(IndexScanDesc scan)
{
	PtreeScanOpaque so = (PtreeScanOpaque) scan->opaque;
	Oid			keytype = scan->indexRelation->rd_opcintype[0];
	MemoryContext old = MemoryContextSwitchTo(so->ctx);
	int			i;

	so->keys = palloc0(sizeof(PtreeScanKey) * Max(scan->numberOfKeys, 1));
	so->nkeys = 0;
	so->driver = -1;
	so->satisfied = -1;
	so->impossible = false;
	so->want_null = false;
	so->want_notnull = false;

	for (i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];
		PtreeScanKey *pk;

		if (sk->sk_flags & SK_ISNULL)
		{
			if (sk->sk_flags & SK_SEARCHNULL)
				so->want_null = true;
			else if (sk->sk_flags & SK_SEARCHNOTNULL)
				so->want_notnull = true;
			else
				so->impossible = true;	/* strict operator with a NULL */
			continue;
		}
		if (sk->sk_strategy < 1 || sk->sk_strategy > PTREE_NSTRATEGIES)
			elog(ERROR, "gpuext_ptree: unexpected strategy %d", sk->sk_strategy);
		so->want_notnull = true;
		pk = &so->keys[so->nkeys++];
		if (sk->sk_flags & SK_SEARCHARRAY)
		{
			ArrayType  *arr = DatumGetArrayTypeP(sk->sk_argument);
			int16		elmlen;
			bool		elmbyval;
			char		elmalign;
			Datum	   *values;
			bool	   *nulls;
			int			n,
						j,
						m = 0;

			if (sk->sk_strategy != PTREE_EQ)
				elog(ERROR, "gpuext_ptree: = ANY is the only array search supported");
			get_typlenbyvalalign(ARR_ELEMTYPE(arr), &elmlen, &elmbyval, &elmalign);
			deconstruct_array(arr, ARR_ELEMTYPE(arr), elmlen, elmbyval, elmalign,
							  &values, &nulls, &n);
			pk->strategy = 0;
			pk->elems = palloc(sizeof(PtreeKey) * Max(n, 1));
			for (j = 0; j < n; j++)
			{
				char	   *fix;

				if (nulls[j])
					continue;
				fix = palloc(8);
				ptree_make_key(keytype, ptree_widen(keytype, ARR_ELEMTYPE(arr), values[j]),
							   false, &pk->elems[m], fix);
				m++;
			}
			if (m > 1)
			{
				int			u = 1;

				qsort_arg(pk->elems, m, sizeof(PtreeKey), ptree_key_qsort, NULL);
				for (j = 1; j < m; j++)
					if (ptree_key_cmp(&pk->elems[u - 1], &pk->elems[j]) != 0)
						pk->elems[u++] = pk->elems[j];
				m = u;
			}
			pk->nelems = m;
			if (m == 0)
				so->impossible = true;
			if (so->driver < 0)
				so->driver = so->nkeys - 1;
		}
		else
		{
			pk->strategy = sk->sk_strategy;
			ptree_make_key(keytype, ptree_widen(keytype, sk->sk_subtype, sk->sk_argument),
						   false, &pk->key, pk->fix);
		}
	}
	if (so->want_null && so->want_notnull)
		so->impossible = true;
	MemoryContextSwitchTo(old);
}

/*
 * amrescan
 */
void
ptreerescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys)
{
	PtreeScanOpaque so = (PtreeScanOpaque) scan->opaque;

	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
	MemoryContextReset(so->ctx);
	so->keys = NULL;
	so->tids = NULL;
	so->ntids = 0;
	so->maxtids = 0;
	so->next = 0;
	so->collected = false;
}

/*
 * Is key in the sorted array elems?
 */
static bool
ptree_in_array(const PtreeKey *key, const PtreeKey *elems, int n)
{
	int			lo = 0,
				hi = n - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		int			c = ptree_key_cmp(&elems[mid], key);

		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return false;
}

/*
 * Does a stored key satisfy every scan key?
 */
static bool
ptree_matches(PtreeScanOpaque so, const PtreeKey *key)
{
	int			i;

	if (key->isnull)
		return so->want_null;
	if (so->want_null)
		return false;
	for (i = 0; i < so->nkeys; i++)
	{
		PtreeScanKey *pk = &so->keys[i];
		int			c;

		if (i == so->satisfied)
			continue;
		if (pk->strategy == 0)
		{
			if (!ptree_in_array(key, pk->elems, pk->nelems))
				return false;
			continue;
		}
		c = ptree_key_cmp(key, &pk->key);
		switch (pk->strategy)
		{
			case PTREE_LT:
				if (!(c < 0))
					return false;
				break;
			case PTREE_LE:
				if (!(c <= 0))
					return false;
				break;
			case PTREE_EQ:
				if (c != 0)
					return false;
				break;
			case PTREE_GE:
				if (!(c >= 0))
					return false;
				break;
			case PTREE_GT:
				if (!(c > 0))
					return false;
				break;
		}
	}
	return true;
}

/*
 * Remember a TID
 */
static void
ptree_add_tids(PtreeScanOpaque so, ItemPointer tids, int n)
{
	if (so->ntids + n > so->maxtids)
	{
		MemoryContext old = MemoryContextSwitchTo(so->ctx);

		so->maxtids = Max(so->maxtids * 2, so->ntids + n + 256);
		so->tids = so->tids ? repalloc_huge(so->tids, sizeof(ItemPointerData) * so->maxtids)
			: palloc_extended(sizeof(ItemPointerData) * so->maxtids, MCXT_ALLOC_HUGE);
		MemoryContextSwitchTo(old);
	}
	memcpy(so->tids + so->ntids, tids, sizeof(ItemPointerData) * n);
	so->ntids += n;
}

/*
 * Is the page one of generation gen's, of the given type and level?
 * Merges go on while the scan reads: a page may have been freed and
 * rewritten for a later generation since the scan read the metapage
 * (pages of a generation never change once it is replaced, and are never
 * rewritten with the same generation), and then the scan starts again
 * (changed).  With merges kept out (hold), it is corruption, as is a page
 * of the scan's generation that is not sound (ptree_page_ok).
 */
static bool
ptree_scan_page_ok(Relation index, PtreeScanOpaque so, Page page, BlockNumber blkno,
				   uint32 gen, uint16 type, uint16 level)
{
	if (so->hold)
	{
		ptree_page_check(index, page, blkno, gen, type, level);
		return true;
	}
	if (ptree_page_ok(index, page, blkno, gen, type, level))
		return true;
	so->changed = true;
	return false;
}

/*
 * Read and share-lock block blkno, which block 'from' links to, for the
 * scan, checked to be a page of type and level of generation gen
 * (ptree_check_link with steps, ptree_scan_page_ok); InvalidBuffer,
 * nothing held, when it is not and a merge has replaced the generation
 * since the scan read the metapage (ptree_page_replaced: an ERROR when
 * none has)
 */
static Buffer
ptree_scan_lock_page(Relation index, PtreeScanOpaque so, BlockNumber from, BlockNumber blkno,
					 uint32 *steps, uint32 gen, uint16 type, uint16 level)
{
	Buffer		buf;

	ptree_check_link(index, from, blkno, steps);
	buf = ReadBuffer(index, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	if (!ptree_scan_page_ok(index, so, BufferGetPage(buf), blkno, gen, type, level))
	{
		uint32		pagegen = PtreePageGetOpaque(BufferGetPage(buf))->gen;

		UnlockReleaseBuffer(buf);
		/* a merge since the scan read the metapage, or corruption */
		ptree_page_replaced(index, so->meta, blkno, pagegen, gen);
		return InvalidBuffer;
	}
	return buf;
}

/*
 * The leaf where entries >= bound may begin: the child of the last
 * directory tuple whose key is < bound (or the first child) at each level,
 * each one level below its parent; InvalidBlockNumber if the structure
 * changed.  *parent: the directory page that links to the leaf.
 */
static BlockNumber
ptree_find_leaf(Relation index, PtreeScanOpaque so, PtreeMetaData *meta, const PtreeKey *bound,
				BlockNumber *parent)
{
	BlockNumber blkno = meta->root;
	uint32		level;

	*parent = PTREE_METAPAGE_BLKNO;
	for (level = meta->levels; level > 1; level--)
	{
		Buffer		buf = ptree_scan_lock_page(index, so, *parent, blkno, NULL, meta->gen,
											   PTREE_INNER, (uint16) (level - 1));
		Page		page;
		OffsetNumber lo,
					hi,
					found;

		if (!BufferIsValid(buf))
			return InvalidBlockNumber;
		page = BufferGetPage(buf);
		/* binary search: the last tuple with key < bound */
		lo = FirstOffsetNumber;
		hi = PageGetMaxOffsetNumber(page);
		found = FirstOffsetNumber;
		while (lo <= hi)
		{
			OffsetNumber mid = lo + (hi - lo) / 2;
			PtreeKey	k;

			ptree_page_key(index, page, blkno, mid, &k);
			if (ptree_key_cmp(&k, bound) < 0)
			{
				found = mid;
				lo = mid + 1;
			}
			else
				hi = mid - 1;
		}
		*parent = blkno;
		blkno = ItemPointerGetBlockNumberNoCheck(PtreeTupleTids(ptree_page_tuple(index, page, blkno,
																				 found)));
		UnlockReleaseBuffer(buf);
	}
	return blkno;
}

/*
 * The first offset of a leaf (block blkno) whose key is >= bound (maxoff
 * + 1 if none): a binary search, since a leaf's keys are non-decreasing.
 * It spares a lookup the linear walk over the keys below it.
 */
static OffsetNumber
ptree_leaf_lower(Relation index, Page page, BlockNumber blkno, const PtreeKey *bound)
{
	OffsetNumber lo = FirstOffsetNumber,
				hi = PageGetMaxOffsetNumber(page) + 1;

	while (lo < hi)
	{
		OffsetNumber mid = lo + (hi - lo) / 2;
		PtreeKey	k;

		ptree_page_key(index, page, blkno, mid, &k);
		if (ptree_key_cmp(&k, bound) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Read main's leaves from the one that may hold lower (or the first) up
 * to the first key beyond upper (NULL: no upper bound; upper_incl: keys
 * equal to upper still belong), keeping matching TIDs.  Keys below lower
 * are skipped by binary search, not read one by one; the keys read are
 * checked to be in order, since where the walk stops depends on it.
 */
static void
ptree_scan_main(Relation index, PtreeScanOpaque so, PtreeMetaData *meta,
				const PtreeKey *lower, const PtreeKey *upper, bool upper_incl)
{
	BlockNumber blkno;
	BlockNumber from = PTREE_METAPAGE_BLKNO;
	uint32		steps = 0;
	bool		seeking = lower != NULL;
	bool		hasprev = false;
	PtreeKey	prev = {false, 0, NULL};
	char		prevbuf[PTREE_MAX_KEY];

	if (meta->levels == 0 || so->changed)
		return;
	blkno = lower ? ptree_find_leaf(index, so, meta, lower, &from) : meta->first_leaf;
	while (BlockNumberIsValid(blkno))
	{
		Buffer		buf;
		Page		page;
		OffsetNumber off,
					maxoff;
		bool		done = false;

		CHECK_FOR_INTERRUPTS();
		buf = ptree_scan_lock_page(index, so, from, blkno, &steps, meta->gen, PTREE_LEAF, 0);
		if (!BufferIsValid(buf))
			return;
		page = BufferGetPage(buf);
		maxoff = PageGetMaxOffsetNumber(page);
		off = FirstOffsetNumber;
		if (seeking)
		{
			off = ptree_leaf_lower(index, page, blkno, lower);
			seeking = off > maxoff;
		}
		for (; off <= maxoff; off++)
		{
			PtreeTuple	t = ptree_page_tuple(index, page, blkno, off);
			PtreeKey	k;

			ptree_tuple_key(t, &k);
			if (hasprev)
				ptree_check_order(index, &prev, &k, blkno, off);
			prev = k;
			hasprev = true;
			if (upper)
			{
				int			c = ptree_key_cmp(&k, upper);

				if (c > 0 || (c == 0 && !upper_incl))
				{
					done = true;
					break;
				}
			}
			if (ptree_matches(so, &k))
				ptree_add_tids(so, ptree_tuple_tids(index, t, blkno, off), t->ntids);
		}
		/* the last key read stays for the next page's first */
		if (hasprev && prev.data != prevbuf)
		{
			memcpy(prevbuf, prev.data, prev.len);
			prev.data = prevbuf;
		}
		from = blkno;
		blkno = PtreePageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
		if (done)
			break;
	}
}

/*
 * The TIDs of key in main's generation meta->gen, by a directory descent
 * (for batches whose index is too large for a mirror); false if the
 * structure changed under the lookup (not when hold)
 */
bool
ptree_main_lookup(Relation index, PtreeMetaData *meta, bool hold, const PtreeKey *key,
				  ItemPointerData **tids, int64 *ntids)
{
	PtreeScanOpaqueData so;
	PtreeScanKey pk;

	memset(&so, 0, sizeof(so));
	memset(&pk, 0, sizeof(pk));
	so.ctx = CurrentMemoryContext;
	so.hold = hold;
	so.meta = meta;
	so.want_notnull = true;
	so.driver = -1;
	so.satisfied = 0;			/* the walk's bounds are the key */
	pk.strategy = PTREE_EQ;
	pk.key = *key;
	so.keys = &pk;
	so.nkeys = 1;
	ptree_scan_main(index, &so, meta, key, key, true);
	*tids = so.tids;
	*ntids = so.ntids;
	return !so.changed;
}

/*
 * Look the elements of an = ANY key up in one batch in the index's
 * prefix-tree mirror (on the GPU or the CPU engine: ptree_device.c);
 * false, nothing done, when the mirror is over gpuext.ptree_mirror_max_mb
 */
static bool
ptree_scan_batch(Relation index, PtreeScanOpaque so, PtreeMetaData *meta, PtreeScanKey *pk)
{
	bool		too_large;
	GxPtreeMirror *m = ptree_mirror_get(index, meta, so->hold, &too_large);
	int64	   *found;
	ItemPointerData *buf = NULL;
	int64		maxbuf = 0;
	int			i;

	if (too_large)
		return false;
	if (m == NULL)
	{
		so->changed = true;		/* the structure changed during the build */
		return true;
	}
	found = palloc(sizeof(int64) * pk->nelems);
	ptree_lookup_probes(&so->engine, m, pk->elems, pk->nelems, found);
	for (i = 0; i < pk->nelems; i++)
	{
		const uint64 *tids;
		int64		ntids,
					j;

		/* a key found is the element's: the other scan keys filter it */
		if (found[i] < 0)
			continue;
		ptree_mirror_tids(m, found[i], &tids, &ntids);
		if (!ptree_matches(so, &pk->elems[i]))
			continue;
		if (ntids > maxbuf)
		{
			maxbuf = Max(ntids, 256);
			buf = buf ? repalloc_huge(buf, sizeof(ItemPointerData) * maxbuf)
				: palloc_extended(sizeof(ItemPointerData) * maxbuf, MCXT_ALLOC_HUGE);
		}
		for (j = 0; j < ntids; j++)
			ItemPointerSet(&buf[j], (BlockNumber) (tids[j] >> 16), (OffsetNumber) (tids[j] & 0xffff));
		ptree_add_tids(so, buf, (int) ntids);
	}
	pfree(found);
	if (buf)
		pfree(buf);
	return true;
}

/*
 * Read the sealed delta and the delta, keeping matching TIDs: each chain
 * followed from the metapage (ptree_check_link counts its pages) and each
 * page checked to be of its chain's generation
 */
static void
ptree_scan_delta(Relation index, PtreeScanOpaque so, PtreeMetaData *meta)
{
	BlockNumber blkno = InvalidBlockNumber;
	BlockNumber from = PTREE_METAPAGE_BLKNO;
	uint32		steps = 0;
	uint32		gen = 0;
	int			chain = 0;

	while (!so->changed &&
		   (BlockNumberIsValid(blkno) ||
			ptree_next_delta(meta, &chain, &blkno, &gen, &from, &steps)))
	{
		Buffer		buf;
		Page		page;
		OffsetNumber off,
					maxoff;

		CHECK_FOR_INTERRUPTS();
		buf = ptree_scan_lock_page(index, so, from, blkno, &steps, gen, PTREE_DELTA, 0);
		if (!BufferIsValid(buf))
			return;
		page = BufferGetPage(buf);
		maxoff = PageGetMaxOffsetNumber(page);
		for (off = FirstOffsetNumber; off <= maxoff; off++)
		{
			PtreeTuple	t = ptree_page_tuple(index, page, blkno, off);
			PtreeKey	k;

			ptree_tuple_key(t, &k);
			if (ptree_matches(so, &k))
				ptree_add_tids(so, ptree_tuple_tids(index, t, blkno, off), t->ntids);
		}
		from = blkno;
		blkno = PtreePageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
	}
}

/*
 * Collect the matching TIDs of the generations meta names: main's, the
 * sealed delta's and the delta's (so->changed if a merge replaced one
 * under the scan)
 */
static void
ptree_collect_gen(Relation index, PtreeScanOpaque so, PtreeMetaData *meta)
{
	so->meta = meta;
	if (so->want_null)
	{
		PtreeKey	nullkey = {true, 0, NULL};

		ptree_scan_main(index, so, meta, &nullkey, NULL, true);
	}
	else if (so->driver >= 0)
	{
		PtreeScanKey *pk = &so->keys[so->driver];
		int			i;

		if (ptree_batch_min > 0 && pk->nelems >= ptree_batch_min && meta->levels > 0 &&
			ptree_mirror_fits(meta) && ptree_scan_batch(index, so, meta, pk))
			;					/* looked up in the mirror */
		else
		{
			/* each element's walk is bounded by it: only its own key reaches the filter */
			so->satisfied = so->driver;
			for (i = 0; i < pk->nelems && !so->changed; i++)
				ptree_scan_main(index, so, meta, &pk->elems[i], &pk->elems[i], true);
			so->satisfied = -1;
		}
	}
	else
	{
		/* the tightest bounds of the comparison keys */
		const PtreeKey *lower = NULL,
				   *upper = NULL;
		bool		upper_incl = true;
		PtreeKey	notnull_max = {true, 0, NULL};
		int			i;

		for (i = 0; i < so->nkeys; i++)
		{
			PtreeScanKey *pk = &so->keys[i];

			if (pk->strategy == PTREE_EQ || pk->strategy == PTREE_GE || pk->strategy == PTREE_GT)
			{
				if (!lower || ptree_key_cmp(&pk->key, lower) > 0)
					lower = &pk->key;
			}
			if (pk->strategy == PTREE_EQ || pk->strategy == PTREE_LE || pk->strategy == PTREE_LT)
			{
				int			c = upper ? ptree_key_cmp(&pk->key, upper) : -1;

				if (c < 0 || (c == 0 && pk->strategy == PTREE_LT))
				{
					upper = &pk->key;
					upper_incl = pk->strategy != PTREE_LT;
				}
			}
		}
		/* non-NULL keys only: stop at the NULLs */
		if (so->want_notnull && !upper)
		{
			upper = &notnull_max;
			upper_incl = false;
		}
		ptree_scan_main(index, so, meta, lower, upper, upper_incl);
	}
	ptree_scan_delta(index, so, meta);
}

/*
 * Collect all matching TIDs, sorted and unique
 */
static void
ptree_collect(IndexScanDesc scan)
{
	Relation	index = scan->indexRelation;
	PtreeScanOpaque so = (PtreeScanOpaque) scan->opaque;
	PtreeMetaData meta;
	int			attempt;

	ptree_prepare_keys(scan);
	so->collected = true;
	if (so->impossible)
		return;

	for (attempt = 0;; attempt++)
	{
		/*
		 * After three restarts, keep merges out for the whole collection
		 * (waiting for a running one).  A standby's replay does not take the
		 * merge lock: there the scan keeps starting again.
		 */
		so->hold = attempt >= 3 && !RecoveryInProgress();
		so->changed = false;
		so->ntids = 0;
		if (so->hold)
			ptree_lock_merges(index, ShareLock);
		ptree_read_meta(index, &meta);
		ptree_collect_gen(index, so, &meta);
		if (so->hold)
			ptree_unlock_merges(index, ShareLock);
		if (!so->changed)
			break;
		ereport(DEBUG1,
				(errmsg_internal("gpuext_ptree scan of \"%s\" starts again: generation %u was replaced",
								 RelationGetRelationName(index), meta.gen)));
	}

	if (so->ntids > 1)
	{
		int64		i,
					u = 1;

		qsort(so->tids, so->ntids, sizeof(ItemPointerData), ptree_tid_qsort);
		for (i = 1; i < so->ntids; i++)
			if (!ItemPointerEquals(&so->tids[u - 1], &so->tids[i]))
				so->tids[u++] = so->tids[i];
		so->ntids = u;
	}
}

/*
 * amgettuple: MVCC snapshots only, since TIDs are returned after the
 * index pages are released (a non-MVCC scan could see a TID recycled by
 * a concurrent VACUUM)
 */
bool
ptreegettuple(IndexScanDesc scan, ScanDirection dir)
{
	PtreeScanOpaque so = (PtreeScanOpaque) scan->opaque;

	if (!so->collected)
	{
		if (scan->xs_snapshot && !IsMVCCSnapshot(scan->xs_snapshot))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("gpuext_ptree index \"%s\" supports only MVCC snapshots",
							RelationGetRelationName(scan->indexRelation))));
		ptree_collect(scan);
	}
	if (so->next >= so->ntids)
		return false;
	scan->xs_heaptid = so->tids[so->next++];
	scan->xs_recheck = false;
	return true;
}

/*
 * amgetbitmap
 */
int64
ptreegetbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	PtreeScanOpaque so = (PtreeScanOpaque) scan->opaque;
	int64		i;

	ptree_collect(scan);
	for (i = 0; i < so->ntids; i += 1024)
	{
		CHECK_FOR_INTERRUPTS();
		tbm_add_tuples(tbm, so->tids + i, (int) Min(1024, so->ntids - i), false);
	}
	return so->ntids;
}

/*
 * amendscan
 */
void
ptreeendscan(IndexScanDesc scan)
{
	PtreeScanOpaque so = (PtreeScanOpaque) scan->opaque;

	MemoryContextDelete(so->ctx);
	pfree(so);
}
