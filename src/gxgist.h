/*-------------------------------------------------------------------------
 * gxgist.h
 *		The gpuext_gist index access method: a wide-node R-tree over box
 *		and point columns.  Page layout, shared declarations.
 *
 * The page layout is described at the top of src/gxgist.c.
 *
 * IDENTIFICATION
 *		src/gxgist.h
 *-------------------------------------------------------------------------
 */
#ifndef GXGIST_H
#define GXGIST_H

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/itup.h"
#include "commands/explain.h"
#include "nodes/execnodes.h"
#include "nodes/tidbitmap.h"
#include "storage/bufmgr.h"
#include "utils/geo_decls.h"
#include "utils/relcache.h"

#include "gx_rtree.h"

#define GXG_META_BLKNO		0
#define GXG_MAGIC			0x47584754	/* "GXGT" */
#define GXG_VERSION			1

/* page flags (GxgPageOpaque.flags) */
#define GXG_META			(1 << 0)
#define GXG_LEAF			(1 << 1)

/* special space of every page */
typedef struct GxgPageOpaqueData
{
	uint16		flags;
	uint16		level;			/* 0 for leaves */
	uint16		unused;
	uint16		page_id;		/* GXG_PAGE_ID, for tools */
} GxgPageOpaqueData;

typedef GxgPageOpaqueData *GxgPageOpaque;

#define GXG_PAGE_ID			0xFF88

/* the metapage's contents */
typedef struct GxgMetaPageData
{
	uint32		magic;
	uint32		version;
	BlockNumber root;
	uint32		root_level;		/* height of the tree - 1 */
	uint32		node_size;		/* most entries per node */
	uint32		key_type;		/* GXG_KEY_BOX or GXG_KEY_POINT */
	uint64		split_count;	/* node splits so far (scans on standbys) */
	/* since the version-1 layout; 0 in indexes built before */
	uint64		build_id;		/* the build's time: one build of the index */
	uint64		insert_count;	/* entries inserted since the build */
	uint64		removal_count;	/* bulkdeletes that removed entries */
} GxgMetaPageData;

/* one state of an index's entries (gxg_meta_version); all 0: unknown */
typedef struct GxgMetaVersion
{
	uint64		build_id;
	uint64		inserts;
	uint64		removals;
} GxgMetaVersion;

#define GXG_KEY_BOX			1
#define GXG_KEY_POINT		2

#define GxgPageGetOpaque(page)	((GxgPageOpaque) PageGetSpecialPointer(page))
#define GxgPageIsLeaf(page)		((GxgPageGetOpaque(page)->flags & GXG_LEAF) != 0)
#define GxgPageIsMeta(page)		((GxgPageGetOpaque(page)->flags & GXG_META) != 0)
#define GxgPageGetMeta(page)	((GxgMetaPageData *) PageGetContents(page))
/* does a metapage hold build_id and the counts (pd_lower past them)? */
#define GxgMetaHasVersion(page) \
	(((PageHeader) (page))->pd_lower >= \
	 (Size) (PageGetContents(page) - (char *) (page)) + sizeof(GxgMetaPageData))
#define GxgPageGetEntries(page)	((GxRtEntry *) PageGetContents(page))
#define GxgPageGetNEntries(page) \
	((int) ((((PageHeader) (page))->pd_lower - MAXALIGN(SizeOfPageHeaderData)) / sizeof(GxRtEntry)))

/* the most entries a page can hold: 204 with 8 kB pages */
#define GXG_MAX_NODE_SIZE \
	((int) ((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(GxgPageOpaqueData))) / sizeof(GxRtEntry)))
#define GXG_MIN_NODE_SIZE	8
#define GXG_DEFAULT_FILLFACTOR	90

/* reloptions */
typedef struct GxgOptions
{
	int32		vl_len_;
	int			node_size;		/* most entries per node */
	int			fillfactor;		/* how full the build packs leaves, % */
} GxgOptions;

/* a node's copy of the tree for the GPU service (src/gxgist_device.c) */
typedef struct GxgDevice GxgDevice;

/* instructions of one entry test, for the cost model */
#define GXG_TEST_INSNS		8

/* gxgist.c */
extern void gx_gist_init(void);
extern double gxg_entry_test_cost(void);
extern void gxg_init_page(Page page, uint16 flags, uint16 level);
extern void gxg_box_of_datum(Relation index, Datum value, GxRtEntry *e);
extern void gxg_union(const GxRtEntry *entries, int n, GxRtEntry *out);
extern void gxg_union_add(GxRtEntry *acc, const GxRtEntry *e);
extern bool gxg_covers(const GxRtEntry *outer, const GxRtEntry *inner);
extern void gxg_set_nentries(Page page, int n);
extern Buffer gxg_new_buffer(Relation index);
/* the checked reads of every reader: ERROR ERRCODE_INDEX_CORRUPTED naming the block */
extern void gxg_corrupt(Relation index, BlockNumber blk, const char *what) pg_attribute_noreturn();
extern GxgMetaPageData *gxg_check_meta(Relation index, Page page);
extern GxRtEntry *gxg_node_entries(Relation index, Page page, BlockNumber blkno, int level, int *n);
extern void gxg_check_child(Relation index, BlockNumber parent, BlockNumber child);
extern void gxg_check_tid(Relation index, BlockNumber blkno, const GxRtEntry *e);

/* gxgist_join.c */
extern void gx_gist_join_init(void);

/* gxgist_build.c */
extern IndexBuildResult *gxg_build(Relation heap, Relation index, IndexInfo *indexInfo);
extern void gxg_buildempty(Relation index);

/* gxgist_insert.c */
extern bool gxg_insert(Relation index, Datum *values, bool *isnull,
					   ItemPointer ht_ctid, Relation heapRel,
					   IndexUniqueCheck checkUnique, bool indexUnchanged,
					   IndexInfo *indexInfo);

/* gxgist_scan.c */
extern IndexScanDesc gxg_beginscan(Relation r, int nkeys, int norderbys);
extern void gxg_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
					   ScanKey orderbys, int norderbys);
extern bool gxg_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 gxg_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void gxg_endscan(IndexScanDesc scan);
extern ItemPointerData *gxg_search(Relation index, GxgDevice *dev, const GxRtQuery *queries,
								   int nqueries, int nkeys, int64 *ntids);
extern void gxg_query_of(Datum arg, Oid argtype, int strategy, int key, GxRtQuery *q);

/* gxgist_device.c: batched searches through the GPU service */
extern GxgDevice *gxg_device_create(void);
extern bool gxg_device_wanted(GxgDevice *dev, uint32 ndrive);
extern bool gxg_device_walk(GxgDevice *dev, Relation index, const GxRtQuery *drive,
							uint32 ndrive, const GxRtQuery *filter, int nfilter,
							int nfilterkeys, GxRtPair **pairs, int64 *npairs,
							uint32 **left, uint32 *nleft);
extern void gxg_device_release(GxgDevice *dev);
extern Size gxg_device_shared_size(void);
extern void gxg_device_share(GxgDevice *dev, Relation index, uint32 batch, void *shared);
extern void gxg_device_adopt(GxgDevice *dev, const void *shared);
extern void gxg_device_mark_all_visible(GxgDevice *dev, Relation index, Relation heap,
										GxRtPair *pairs, int64 n);
extern void gxg_device_explain(GxgDevice *dev, ExplainState *es);

/* gxgist_batch.c */
extern void gxg_batch_meta(Relation index, BlockNumber *root, uint64 *splits, uint32 *root_level);
extern void gxg_meta_version(Relation index, GxgMetaVersion *v);
extern void gxg_mark_all_visible(Relation heap, GxRtPair *pairs, int64 n);
/* GxRtPair.pad of a pair whose heap page was all-visible (gxg_walk) */
#define GXG_PAIR_ALL_VISIBLE	1
extern GxRtPair *gxg_walk(Relation index, GxgDevice *dev, const GxRtQuery *drive,
						  uint32 ndrive, const GxRtQuery *filter, int nfilter,
						  int nfilterkeys, Relation vis_heap, int64 *npairs);
extern void gxg_sort_pairs(GxRtPair *pairs, int64 n, bool by_query);

/* gxgist_mirror.c: the index in the layout both engines search */
#define GXG_WALK_AUTO		0
#define GXG_WALK_PAGES		1
#define GXG_WALK_MIRROR		2
extern int	gxg_walk_engine;
extern int	gxg_gpu_min_batch;
extern bool gxg_device_cache;
extern void gx_gist_mirror_init(void);
extern GxRtMirror *gxg_mirror_build(Relation index, uint64 *bytes);
extern void gxg_mirror_check(Relation index, const GxRtMirror *m);

/* gxgist_vacuum.c */
extern IndexBulkDeleteResult *gxg_bulkdelete(IndexVacuumInfo *info,
											 IndexBulkDeleteResult *stats,
											 IndexBulkDeleteCallback callback,
											 void *callback_state);
extern IndexBulkDeleteResult *gxg_vacuumcleanup(IndexVacuumInfo *info,
												IndexBulkDeleteResult *stats);

#endif							/* GXGIST_H */
