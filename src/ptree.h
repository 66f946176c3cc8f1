/*-------------------------------------------------------------------------
 * ptree.h
 *		The gpuext_ptree index access method: page layout, keys, and the
 *		functions shared by its files.
 *
 * The page layout is described at the top of src/ptree.c.
 *
 * IDENTIFICATION
 *		src/ptree.h
 *-------------------------------------------------------------------------
 */
#ifndef PTREE_H
#define PTREE_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/htup_details.h"
#include "access/itup.h"
#include "nodes/pathnodes.h"
#include "port/pg_bswap.h"
#include "storage/bufmgr.h"
#include "storage/dsm.h"
#include "storage/lockdefs.h"
#include "utils/rel.h"

#include "gpuext.h"
#include "indexopen.h"

#define PTREE_MAGIC			0x50545245	/* "PTRE" */
#define PTREE_VERSION		2
#define PTREE_METAPAGE_BLKNO	0

/* page types (PtreePageOpaque.type) */
#define PTREE_META			1
#define PTREE_LEAF			2	/* main structure: sorted posting lists */
#define PTREE_INNER			3	/* main structure: directory */
#define PTREE_DELTA			4	/* unsorted (key, TID) entries of recent inserts */

/* tuple flags */
#define PTREE_TUPLE_NULL	0x0001	/* the key is SQL NULL (keylen 0) */

/* longest key (text, in bytes): at least 7 directory tuples fit a page */
#define PTREE_MAX_KEY		1024

/* strategies (btree's numbering) */
#define PTREE_LT			1
#define PTREE_LE			2
#define PTREE_EQ			3
#define PTREE_GE			4
#define PTREE_GT			5
#define PTREE_NSTRATEGIES	5

/* special space of every page */
typedef struct PtreePageOpaqueData
{
	uint32		gen;			/* generation of its part: main, a delta */
	uint16		type;			/* PTREE_META, _LEAF, _INNER, _DELTA */
	uint16		level;			/* 0 for leaves and delta pages */
	BlockNumber next;			/* next page of the same level or delta chain */
} PtreePageOpaqueData;

typedef PtreePageOpaqueData *PtreePageOpaque;

#define PtreePageGetOpaque(page) ((PtreePageOpaque) PageGetSpecialPointer(page))

/*
 * Contents of the metapage, below pd_lower.  Main, the sealed delta and the
 * delta each have a generation, which their pages carry; merge_gen is the
 * generation a merge is writing (a new main), 0 when none was started
 * since the last switch.  The sealed delta (sealed_head valid) is the
 * delta a merge took over and is folding into main: readers read it too,
 * until the switch; one left behind by a merge that failed is finished by
 * the next merge.
 */
typedef struct PtreeMetaData
{
	uint32		magic;
	uint32		version;
	Oid			keytype;		/* the operator class's input type */
	uint32		gen;			/* generation of the live main structure */
	uint32		max_gen;		/* highest generation ever handed out */
	BlockNumber root;			/* directory root (a leaf if levels = 1) */
	BlockNumber first_leaf;		/* InvalidBlockNumber when main is empty */
	uint32		levels;			/* 0 when main is empty */
	uint32		main_pages;
	uint64		main_tids;		/* TIDs in main */
	uint64		main_keys;		/* distinct keys (NULL counts as one) */
	BlockNumber delta_head;		/* the delta inserts append to */
	BlockNumber delta_tail;
	uint32		delta_pages;
	uint64		delta_tids;
	uint64		merges;			/* merges since the build */
	uint32		delta_gen;		/* generation of the delta's pages */
	uint32		merge_gen;		/* generation a merge writes, or 0 */
	uint32		sealed_gen;		/* generation of the sealed delta's pages */
	BlockNumber sealed_head;	/* InvalidBlockNumber: no sealed delta */
	BlockNumber sealed_tail;
	uint32		sealed_pages;
	uint64		sealed_tids;
} PtreeMetaData;

#define PtreePageGetMeta(page) ((PtreeMetaData *) PageGetContents(page))

/*
 * A leaf, delta or directory tuple: a key and a list of item pointers.  In
 * directory tuples the single item pointer's block is the child page.
 */
typedef struct PtreeTupleData
{
	uint16		flags;
	uint16		keylen;
	uint16		ntids;
	char		data[FLEXIBLE_ARRAY_MEMBER];	/* key, padded to 2 bytes, TIDs */
} PtreeTupleData;

typedef PtreeTupleData *PtreeTuple;

#define PTREE_TUPLE_HDR		offsetof(PtreeTupleData, data)
#define PtreeTupleKey(t)	((t)->data)
#define PtreeTupleTids(t)	((ItemPointer) ((t)->data + SHORTALIGN((t)->keylen)))
#define PtreeTupleSize(keylen, ntids) \
	(PTREE_TUPLE_HDR + SHORTALIGN(keylen) + (ntids) * sizeof(ItemPointerData))

/* room for tuples on an empty page */
#define PTREE_PAGE_ROOM \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(PtreePageOpaqueData)))

/* a normalized key: bytes that compare with memcmp, then by length */
typedef struct PtreeKey
{
	bool		isnull;
	uint32		len;
	const char *data;
} PtreeKey;

/* reloptions */
typedef struct PtreeOptions
{
	int32		vl_len_;
	int			delta_pages;	/* merge the delta when it has this many pages */
	int			fillfactor;		/* how full the merge packs leaves */
	double		delta_percent;	/* or when it has this percent of main's pages, if more */
} PtreeOptions;

/* ptree.c */
extern void gx_ptree_init(void);
extern int	ptree_key_compare(const PtreeKey *a, const PtreeKey *b);
extern bool ptree_type_supported(Oid typid);
extern void ptree_make_key(Oid typid, Datum value, bool isnull, PtreeKey *key, char *fixbuf);
extern void ptree_check_opclass(Relation index);
extern int	ptree_delta_limit(Relation index, const PtreeMetaData *meta);
extern int	ptree_fillfactor(Relation index);
extern Buffer ptree_new_buffer(Relation index, const PtreeMetaData *meta);
extern void ptree_init_page(Page page, uint16 type, uint16 level, uint32 gen);
extern PtreeTuple ptree_form_tuple(const PtreeKey *key, ItemPointer tids, int ntids, Size *size);
extern void ptree_tuple_key(PtreeTuple tup, PtreeKey *key);
extern void ptree_fill_metapage(Page page, Oid keytype);
extern bool ptree_page_is_live(Page page, uint32 gen);
extern bool ptree_page_in_use(Page page, const PtreeMetaData *meta);
extern bool ptree_next_delta(const PtreeMetaData *meta, int *chain, BlockNumber *blkno,
							 uint32 *gen, BlockNumber *from, uint32 *steps);
extern void ptree_read_meta(Relation index, PtreeMetaData *meta);
extern void ptree_lock_merges(Relation index, LOCKMODE mode);
extern bool ptree_try_lock_merges(Relation index);
extern void ptree_unlock_merges(Relation index, LOCKMODE mode);
extern bool ptree_page_is_live_leaf(Page page, uint32 gen);
extern void ptree_check_live_leaf(Relation index, Page page, BlockNumber blkno, uint32 gen);

/* ptree_build.c */
extern IndexBuildResult *ptreebuild(Relation heap, Relation index, struct IndexInfo *indexInfo);
extern void ptreebuildempty(Relation index);
extern bool ptreeinsert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
						Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
						struct IndexInfo *indexInfo);
/* which merges ptree_merge makes */
typedef enum PtreeMergeWhen
{
	PTREE_MERGE_FULL,			/* when the delta has reached its limit */
	PTREE_MERGE_PENDING,		/* when the delta is not empty */
	PTREE_MERGE_ALWAYS			/* always (VACUUM's bulk delete) */
} PtreeMergeWhen;

extern bool ptree_merge(Relation index, PtreeMergeWhen when, IndexBulkDeleteCallback callback,
						void *callback_state, IndexBulkDeleteResult *stats);
/* gpuext.ptree_merge_plan */
typedef enum PtreeMergePlanMode
{
	PTREE_MERGE_PLAN_OFF,		/* compare keys */
	PTREE_MERGE_PLAN_AUTO,		/* plan where the backend has the mirror */
	PTREE_MERGE_PLAN_ON			/* plan always (a mirror built for it) */
} PtreeMergePlanMode;

extern int	ptree_merge_plan_mode;
extern int	ptree_debug_merge_delay;

/* ptree_scan.c */
extern Datum ptree_widen(Oid keytype, Oid argtype, Datum value);
extern bool ptree_main_lookup(Relation index, PtreeMetaData *meta, bool hold, const PtreeKey *key,
							  ItemPointerData **tids, int64 *ntids);
extern IndexScanDesc ptreebeginscan(Relation index, int nkeys, int norderbys);
extern void ptreerescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys);
extern bool ptreegettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 ptreegetbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void ptreeendscan(IndexScanDesc scan);

/* ptree_mirror.c */
struct GxPtreeMirror;

/* which index and generation a mirror was built from */
typedef struct PtreeMirrorKey
{
	Oid			relid;
	RelFileNode node;
	uint32		gen;
	uint64		merges;
	uint64		main_tids;
} PtreeMirrorKey;

#define PTREE_MIRROR_MAX_MB_DEFAULT 1024

extern int	ptree_batch_min;
extern int	ptree_mirror_max_mb;
extern int	ptree_mirror_ceiling_mb;
extern int	ptree_mirror_cap_mb(void);
extern bool ptree_mirror_fits(PtreeMetaData *meta);
extern struct GxPtreeMirror *ptree_mirror_get(Relation index, PtreeMetaData *meta, bool hold,
											  bool *too_large);
extern struct GxPtreeMirror *ptree_mirror_cached(Relation index, PtreeMetaData *meta);
extern bool ptree_mirror_share(Relation index, PtreeMirrorKey *key, dsm_handle *handle);
extern bool ptree_mirror_adopt(const PtreeMirrorKey *key, dsm_handle handle);
extern void ptree_mirror_tids(const struct GxPtreeMirror *m, int64 i, const uint64 **tids,
							  int64 *ntids);

/*
 * ptree_device.c: where the batched lookups of a node (a scan, a join)
 * run: the GPU or the CPU engine, decided at its first batch worth the GPU
 */
typedef struct PtreeEngine
{
	GxEngine	engine;			/* lookups large enough for the GPU */
	GxEngine	cpu;			/* lookups that stay on the CPU engine */
	bool		started;		/* engine decided */
	bool		cpu_started;	/* cpu started */
	bool		no_device;		/* no device copy (too large, a failure): CPU from then on */
} PtreeEngine;

struct ExplainState;
extern int	ptree_gpu_batch_min;
extern void ptree_engine_init(PtreeEngine *pe);
extern void ptree_lookup_probes(PtreeEngine *pe, const struct GxPtreeMirror *m,
								const PtreeKey *probes, int n, int64 *out);
extern void ptree_device_forget(const struct GxPtreeMirror *m);
extern void ptree_device_moved(const struct GxPtreeMirror *from, const struct GxPtreeMirror *to);
extern void ptree_engine_explain(PtreeEngine *pe, struct ExplainState *es);

/*
 * A planned merge (cuda/gx_ptree.h): the delta's non-NULL entries sorted
 * by (key, TID) without exact duplicates, as 64-bit keys, TIDs (block << 16
 * | offset) and ranks in main (2 * the index of main's first key >= the
 * key, + 1 if equal); the arrays have room for every entry, n are used
 */
typedef struct PtreeMergePlan
{
	uint64		n;
	uint64	   *keys;
	uint64	   *tids;
	uint64	   *ranks;
} PtreeMergePlan;

extern bool ptree_merge_plan(const struct GxPtreeMirror *m, const uint64 *keys, const uint64 *tids,
							 uint64 n, PtreeMergePlan *plan);

extern void ptree_lookup_batch(Relation index, PtreeEngine *pe, const PtreeKey *probes,
							   const bool *valid, int n, int64 **tidoff, ItemPointerData **tids);

/* ptree_join.c */
extern bool ptree_enable_join;
extern int	ptree_join_batch;
extern void gx_ptree_join_init(void);

/* ptree_vacuum.c */
extern IndexBulkDeleteResult *ptreebulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
											  IndexBulkDeleteCallback callback, void *callback_state);
extern IndexBulkDeleteResult *ptreevacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats);

/*
 * ptree_validate.c: the operator class validator, and the checked reads of
 * pages and tuples that every reader of the index goes through (ERROR
 * ERRCODE_INDEX_CORRUPTED, naming the block, for what they find wrong)
 */
extern bool ptreevalidate(Oid opclassoid);
extern PtreeMetaData *ptree_meta_check(Relation index, Page metapage);
extern void ptree_check_link_slow(Relation index, BlockNumber from, BlockNumber to,
								  uint32 *steps);
extern bool ptree_page_ok_slow(Relation index, Page page, BlockNumber blkno, uint32 gen,
							   uint16 type, uint16 level);
extern void ptree_page_check(Relation index, Page page, BlockNumber blkno, uint32 gen,
							 uint16 type, uint16 level);
extern void ptree_page_replaced(Relation index, const PtreeMetaData *meta, BlockNumber blkno,
								uint32 pagegen, uint32 gen);
extern void ptree_tuple_corrupt(Relation index, Page page, BlockNumber blkno,
								OffsetNumber off) pg_attribute_noreturn();
extern void ptree_tids_corrupt(Relation index, PtreeTuple tup, BlockNumber blkno,
							   OffsetNumber off) pg_attribute_noreturn();
extern void ptree_order_corrupt(Relation index, BlockNumber blkno,
								OffsetNumber off) pg_attribute_noreturn();

/*
 * ERROR unless block 'to', which block 'from' (the metapage, or a page)
 * links to, is a page of the index other than the metapage.  With steps,
 * the count of pages read on the chain so far, which this one adds to: it
 * must stay below the index's number of blocks, since a chain that visits
 * more pages than the index has loops.  Inline: the count the relcache
 * entry remembers decides the common case (ptree_check_link_slow reads it
 * again and reports).
 */
static inline void
ptree_check_link(Relation index, BlockNumber from, BlockNumber to, uint32 *steps)
{
	BlockNumber known = gx_index_nblocks_known(index);

	if (likely(to != PTREE_METAPAGE_BLKNO && to < known && (steps == NULL || *steps + 1 < known)))
	{
		if (steps)
			(*steps)++;
		return;
	}
	ptree_check_link_slow(index, from, to, steps);
}

/*
 * Check a page that a reader of generation gen found at block blkno, once
 * per page read, where it expects a page of that type and level: a
 * standard page header whose item array and free space lie within the
 * page, the ptree special space, at least one item.  False when the page
 * carries another generation (a concurrent merge may have given it that
 * since the reader read the metapage); ERROR (ptree_page_ok_slow) for
 * anything else wrong.
 */
static inline bool
ptree_page_ok(Relation index, Page page, BlockNumber blkno, uint32 gen, uint16 type, uint16 level)
{
	PageHeader	ph = (PageHeader) page;
	PtreePageOpaque opaque = (PtreePageOpaque)
		((char *) page + BLCKSZ - MAXALIGN(sizeof(PtreePageOpaqueData)));

	if (likely(PageGetPageSize(page) == BLCKSZ &&
			   ph->pd_special == BLCKSZ - MAXALIGN(sizeof(PtreePageOpaqueData)) &&
			   ph->pd_lower >= SizeOfPageHeaderData + sizeof(ItemIdData) &&
			   ph->pd_lower <= ph->pd_upper && ph->pd_upper <= ph->pd_special &&
			   opaque->gen == gen && opaque->type == type && opaque->level == level))
		return true;
	return ptree_page_ok_slow(index, page, blkno, gen, type, level);
}

/*
 * Tuple off (at most the page's last) of a page that ptree_page_ok
 * accepted, checked: a normal line pointer to a MAXALIGNed item within
 * the page's tuple space, whose length is exactly that of its key and
 * TIDs; no unknown flags; a key no longer than PTREE_MAX_KEY (none if
 * NULL); at least one TID, exactly one in directory and delta tuples.
 * Inline, since walks read every tuple through it; what is wrong is
 * reported by ptree_tuple_corrupt (ERRCODE_INDEX_CORRUPTED).  (A key of
 * another length than its type's is no danger to a reader: the checker
 * reports it.)
 */
static pg_attribute_always_inline PtreeTuple
ptree_page_tuple(Relation index, Page page, BlockNumber blkno, OffsetNumber off)
{
	PageHeader	ph = (PageHeader) page;
	ItemId		iid = PageGetItemId(page, off);
	uint32		lpoff = ItemIdGetOffset(iid);
	uint32		lplen = ItemIdGetLength(iid);
	PtreeTuple	tup;

	Assert(off >= FirstOffsetNumber && off <= PageGetMaxOffsetNumber(page));
	if (unlikely(!ItemIdIsNormal(iid) || lpoff < ph->pd_upper || lpoff % MAXIMUM_ALIGNOF != 0 ||
				 lplen < PTREE_TUPLE_HDR || lpoff + lplen > ph->pd_special))
		ptree_tuple_corrupt(index, page, blkno, off);
	tup = (PtreeTuple) ((char *) page + lpoff);
	if (unlikely(tup->keylen > PTREE_MAX_KEY || tup->ntids == 0 ||
				 PtreeTupleSize(tup->keylen, tup->ntids) != lplen ||
				 (tup->flags != 0 && (tup->flags != PTREE_TUPLE_NULL || tup->keylen != 0)) ||
				 (tup->ntids != 1 && PtreePageGetOpaque(page)->type != PTREE_LEAF)))
		ptree_tuple_corrupt(index, page, blkno, off);
	return tup;
}

/*
 * The key of tuple off, for binary searches, which read no more of the
 * tuples they pass over: checked to lie within the item, and the item
 * within the page's tuple space (the tuples they stop at are read through
 * ptree_page_tuple)
 */
static pg_attribute_always_inline void
ptree_page_key(Relation index, Page page, BlockNumber blkno, OffsetNumber off, PtreeKey *key)
{
	PageHeader	ph = (PageHeader) page;
	ItemId		iid = PageGetItemId(page, off);
	uint32		lpoff = ItemIdGetOffset(iid);
	uint32		lplen = ItemIdGetLength(iid);
	PtreeTuple	tup;

	Assert(off >= FirstOffsetNumber && off <= PageGetMaxOffsetNumber(page));
	if (unlikely(!ItemIdIsNormal(iid) || lpoff < ph->pd_upper || lpoff % MAXIMUM_ALIGNOF != 0 ||
				 lplen < PTREE_TUPLE_HDR || lpoff + lplen > ph->pd_special))
		ptree_tuple_corrupt(index, page, blkno, off);
	tup = (PtreeTuple) ((char *) page + lpoff);
	if (unlikely(tup->keylen > PTREE_MAX_KEY || PTREE_TUPLE_HDR + tup->keylen > lplen))
		ptree_tuple_corrupt(index, page, blkno, off);
	key->isnull = (tup->flags & PTREE_TUPLE_NULL) != 0;
	key->len = tup->keylen;
	key->data = tup->data;
}

/*
 * The TIDs of a leaf or delta tuple (item off of block blkno), checked to
 * be heap TIDs: an offset from 1 to MaxHeapTuplesPerPage
 */
static inline ItemPointer
ptree_tuple_tids(Relation index, PtreeTuple tup, BlockNumber blkno, OffsetNumber off)
{
	ItemPointer tids = PtreeTupleTids(tup);
	int			n = tup->ntids;
	int			i;

	for (i = 0; i < n; i++)
		if (unlikely((uint32) tids[i].ip_posid - 1 >= MaxHeapTuplesPerPage))
			ptree_tids_corrupt(index, tup, blkno, off);
	return tids;
}

/*
 * Order of two normalized keys (ptree_key_compare), inline for the walks
 * that compare every key they read: keys of 4 or 8 bytes as big-endian
 * integers, others by memcmp, then length; NULL after everything
 */
static inline int
ptree_key_cmp(const PtreeKey *a, const PtreeKey *b)
{
	int			c;

	if (a->isnull || b->isnull)
		return (a->isnull ? 1 : 0) - (b->isnull ? 1 : 0);
	if (a->len == b->len && a->len == 4)
	{
		uint32		x,
					y;

		memcpy(&x, a->data, 4);
		memcpy(&y, b->data, 4);
		x = pg_ntoh32(x);
		y = pg_ntoh32(y);
		return (x > y) - (x < y);
	}
	if (a->len == b->len && a->len == 8)
	{
		uint64		x,
					y;

		memcpy(&x, a->data, 8);
		memcpy(&y, b->data, 8);
		x = pg_ntoh64(x);
		y = pg_ntoh64(y);
		return (x > y) - (x < y);
	}
	c = memcmp(a->data, b->data, Min(a->len, b->len));
	if (c != 0)
		return c;
	return (a->len > b->len) - (a->len < b->len);
}

/*
 * ERROR if key (item off of block blkno) sorts before prev, the key read
 * before it on the leaf chain: where a walk depends on the order (where it
 * stops, what a binary search skips, what the mirror's lookups find)
 */
static inline void
ptree_check_order(Relation index, const PtreeKey *prev, const PtreeKey *key, BlockNumber blkno,
				  OffsetNumber off)
{
	if (unlikely(ptree_key_cmp(prev, key) > 0))
		ptree_order_corrupt(index, blkno, off);
}

#endif							/* PTREE_H */
