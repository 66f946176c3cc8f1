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
#include "access/itup.h"
#include "nodes/pathnodes.h"
#include "storage/bufmgr.h"
#include "storage/dsm.h"
#include "utils/rel.h"

#include "gpuext.h"

#define PTREE_MAGIC			0x50545245	/* "PTRE" */
#define PTREE_VERSION		1
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
	uint32		gen;			/* generation of the main structure it belongs to */
	uint16		type;			/* PTREE_META, _LEAF, _INNER, _DELTA */
	uint16		level;			/* 0 for leaves and delta pages */
	BlockNumber next;			/* next page of the same level or delta chain */
} PtreePageOpaqueData;

typedef PtreePageOpaqueData *PtreePageOpaque;

#define PtreePageGetOpaque(page) ((PtreePageOpaque) PageGetSpecialPointer(page))

/* contents of the metapage, below pd_lower */
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
	BlockNumber delta_head;
	BlockNumber delta_tail;
	uint32		delta_pages;
	uint64		delta_tids;
	uint64		merges;			/* merges since the build */
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
extern Buffer ptree_new_buffer(Relation index, uint32 live_gen, uint32 new_gen);
extern void ptree_init_page(Page page, uint16 type, uint16 level, uint32 gen);
extern PtreeTuple ptree_form_tuple(const PtreeKey *key, ItemPointer tids, int ntids, Size *size);
extern void ptree_tuple_key(PtreeTuple tup, PtreeKey *key);
extern void ptree_fill_metapage(Page page, Oid keytype);
extern bool ptree_page_is_live(Page page, uint32 gen);
extern bool ptree_page_is_live_leaf(Page page, uint32 gen);
extern void ptree_check_live_leaf(Relation index, Page page, BlockNumber blkno, uint32 gen);

/* ptree_build.c */
extern IndexBuildResult *ptreebuild(Relation heap, Relation index, struct IndexInfo *indexInfo);
extern void ptreebuildempty(Relation index);
extern bool ptreeinsert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
						Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
						struct IndexInfo *indexInfo);
extern void ptree_merge(Relation index, Buffer metabuf, IndexBulkDeleteCallback callback,
						void *callback_state, IndexBulkDeleteResult *stats);
/* gpuext.ptree_merge_plan */
typedef enum PtreeMergePlanMode
{
	PTREE_MERGE_PLAN_OFF,		/* compare keys */
	PTREE_MERGE_PLAN_AUTO,		/* plan where the backend has the mirror */
	PTREE_MERGE_PLAN_ON			/* plan always (a mirror built for it) */
} PtreeMergePlanMode;

extern int	ptree_merge_plan_mode;

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
	uint32		max_gen;
	uint64		merges;
	uint64		main_tids;
} PtreeMirrorKey;

extern int	ptree_batch_min;
extern int	ptree_mirror_max_mb;
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
								const PtreeKey *probes, int n, int64 *out, bool hold);
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
extern void ptree_check_link(Relation index, BlockNumber from, BlockNumber to, uint32 *steps);
extern bool ptree_page_ok(Relation index, Page page, BlockNumber blkno, uint32 gen,
						  uint16 type, uint16 level);
extern void ptree_page_check(Relation index, Page page, BlockNumber blkno, uint32 gen,
							 uint16 type, uint16 level);
extern PtreeTuple ptree_page_tuple(Relation index, Page page, BlockNumber blkno, OffsetNumber off);
extern ItemPointer ptree_tuple_tids(Relation index, PtreeTuple tup, BlockNumber blkno,
									OffsetNumber off);
extern void ptree_check_order(Relation index, const PtreeKey *prev, const PtreeKey *key,
							  BlockNumber blkno, OffsetNumber off);

#endif							/* PTREE_H */
