/*-------------------------------------------------------------------------
 * gxgist_build.c
 *		Bulk load of a gpuext_gist index by sort-tile-recursive packing, and
 *		the empty index of an unlogged table's init fork.
 *
 * STR (Leutenegger et al.): with P = ceil(n / per_node) nodes to fill,
 * sort the entries by the x of their centres, cut them into ceil(sqrt(P))
 * vertical slices, sort each slice by y and pack runs of per_node entries
 * into nodes.  The nodes' boxes are the entries of the level above, packed
 * the same way until one node, the root, remains.
 *
 * IDENTIFICATION
 *		src/gxgist_build.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "gxgist.h"

typedef struct GxgBuildState
{
	GxRtEntry  *items;			/* every leaf entry, in heap order */
	int64		nitems;
	int64		capacity;
	double		indtuples;
	MemoryContext ctx;
} GxgBuildState;

/* Node size and fill factor of an index, from its reloptions */
static void
gxg_get_options(Relation index, int *node_size, int *fillfactor)
{
	GxgOptions *opts = (GxgOptions *) index->rd_options;

	*node_size = opts ? opts->node_size : GXG_MAX_NODE_SIZE;
	*fillfactor = opts ? opts->fillfactor : GXG_DEFAULT_FILLFACTOR;
}

/* Write the metapage contents into page */
static void
gxg_fill_meta(Relation index, Page page, BlockNumber root, uint32 root_level)
{
	GxgMetaPageData *meta;
	int			node_size;
	int			fillfactor;

	gxg_get_options(index, &node_size, &fillfactor);
	gxg_init_page(page, GXG_META, 0);
	meta = GxgPageGetMeta(page);
	memset(meta, 0, sizeof(GxgMetaPageData));
	meta->magic = GXG_MAGIC;
	meta->version = GXG_VERSION;
	meta->root = root;
	meta->root_level = root_level;
	meta->node_size = node_size;
	meta->key_type = (TupleDescAttr(RelationGetDescr(index), 0)->atttypid == POINTOID)
		? GXG_KEY_POINT : GXG_KEY_BOX;
	meta->split_count = 0;
	/* never 0: that marks indexes built before build ids existed */
	meta->build_id = (uint64) GetCurrentTimestamp() | 1;
	meta->insert_count = 0;
	((PageHeader) page)->pd_lower = (char *) meta + sizeof(GxgMetaPageData) - (char *) page;
}

/* table_index_build_scan callback: collect one entry per non-NULL key */
static void
gxg_build_callback(Relation index, ItemPointer tid, Datum *values,
				   bool *isnull, bool tupleIsAlive, void *state)
{
	GxgBuildState *bs = (GxgBuildState *) state;
	GxRtEntry  *e;

	if (isnull[0])
		return;
	if (bs->nitems == bs->capacity)
	{
		MemoryContext old = MemoryContextSwitchTo(bs->ctx);

		bs->capacity *= 2;
		bs->items = repalloc_huge(bs->items, bs->capacity * sizeof(GxRtEntry));
		MemoryContextSwitchTo(old);
	}
	e = &bs->items[bs->nitems++];
	gxg_box_of_datum(index, values[0], e);
	e->blk = ItemPointerGetBlockNumber(tid);
	e->off = ItemPointerGetOffsetNumber(tid);
	bs->indtuples += 1;
}

/* total order on centres, NaN last (qsort needs a consistent order) */
static int
gxg_cmp_double(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return (a > b) - (a < b);
}

/* qsort order by the x of the entries' centres (the STR slices) */
static int
gxg_cmp_x(const void *a, const void *b)
{
	const GxRtEntry *ea = a;
	const GxRtEntry *eb = b;

	return gxg_cmp_double(ea->xlo / 2 + ea->xhi / 2, eb->xlo / 2 + eb->xhi / 2);
}

/* qsort order by the y of the entries' centres (within a slice) */
static int
gxg_cmp_y(const void *a, const void *b)
{
	const GxRtEntry *ea = a;
	const GxRtEntry *eb = b;

	return gxg_cmp_double(ea->ylo / 2 + ea->yhi / 2, eb->ylo / 2 + eb->yhi / 2);
}

/* Write one node of n entries into a new page; its parent entry in *parent */
static void
gxg_write_node(Relation index, const GxRtEntry *entries, int n, uint16 level,
			   GxRtEntry *parent)
{
	Buffer		buf = gxg_new_buffer(index);
	Page		page = BufferGetPage(buf);

	gxg_init_page(page, level == 0 ? GXG_LEAF : 0, level);
	if (n > 0)
		memcpy(GxgPageGetEntries(page), entries, n * sizeof(GxRtEntry));
	gxg_set_nentries(page, n);
	MarkBufferDirty(buf);
	gxg_union(entries, n, parent);
	parent->blk = BufferGetBlockNumber(buf);
	UnlockReleaseBuffer(buf);
}

/*
 * Pack one level: n entries into nodes of per_node, STR order.  Returns
 * the entries of the level above (palloc'd), their count in *nparents.
 */
static GxRtEntry *
gxg_pack_level(Relation index, GxRtEntry *entries, int64 n, int per_node,
			   uint16 level, int64 *nparents)
{
	int64		nodes = (n + per_node - 1) / per_node;
	int64		slices = (int64) ceil(sqrt((double) nodes));
	int64		slice_len = slices * per_node;
	GxRtEntry  *parents;
	int64		np = 0;

	parents = palloc_extended(Max(nodes, 1) * sizeof(GxRtEntry), MCXT_ALLOC_HUGE);
	qsort(entries, n, sizeof(GxRtEntry), gxg_cmp_x);
	for (int64 s = 0; s < n; s += slice_len)
	{
		int64		len = Min(slice_len, n - s);

		qsort(entries + s, len, sizeof(GxRtEntry), gxg_cmp_y);
		for (int64 i = s; i < s + len; i += per_node)
		{
			CHECK_FOR_INTERRUPTS();
			gxg_write_node(index, entries + i, (int) Min(per_node, s + len - i),
						   level, &parents[np++]);
		}
	}
	*nparents = np;
	return parents;
}

/*
 * ambuild: collect every key, pack the tree bottom up, write the metapage,
 * and WAL-log every page as a full image.
 */
IndexBuildResult *
gxg_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	GxgBuildState bs;
	MemoryContext old;
	Buffer		metabuf;
	int			node_size;
	int			fillfactor;
	int			per_node;
	double		reltuples;
	GxRtEntry  *level_entries;
	int64		n;
	uint16		level = 0;
	GxRtEntry	root;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));

	gxg_get_options(index, &node_size, &fillfactor);
	per_node = Max(2, node_size * fillfactor / 100);

	bs.ctx = AllocSetContextCreate(CurrentMemoryContext, "gpuext_gist build",
								   ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(bs.ctx);
	bs.capacity = 1024;
	bs.nitems = 0;
	bs.indtuples = 0;
	bs.items = palloc_extended(bs.capacity * sizeof(GxRtEntry), MCXT_ALLOC_HUGE);

	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   gxg_build_callback, &bs, NULL);

	/* block 0: the metapage, filled in at the end */
	metabuf = gxg_new_buffer(index);
	Assert(BufferGetBlockNumber(metabuf) == GXG_META_BLKNO);
	gxg_init_page(BufferGetPage(metabuf), GXG_META, 0);
	MarkBufferDirty(metabuf);
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	level_entries = bs.items;
	n = bs.nitems;
	if (n == 0)
		gxg_write_node(index, NULL, 0, 0, &root);
	else
	{
		for (;;)
		{
			int64		nparents;
			GxRtEntry  *parents;

			parents = gxg_pack_level(index, level_entries, n, per_node, level, &nparents);
			if (nparents == 1)
			{
				root = parents[0];
				break;
			}
			if (level_entries != bs.items)
				pfree(level_entries);
			level_entries = parents;
			n = nparents;
			level++;
			if (level > 64)
				elog(ERROR, "gpuext_gist build: tree too deep");
		}
	}

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	gxg_fill_meta(index, BufferGetPage(metabuf), root.blk, level);
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0, RelationGetNumberOfBlocks(index), true);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(bs.ctx);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/*
 * ambuildempty: the init fork of an unlogged index, a metapage and an
 * empty root leaf, written and logged directly (no shared buffers).
 */
void
gxg_buildempty(Relation index)
{
	Page		page = (Page) palloc(BLCKSZ);

	gxg_fill_meta(index, page, 1, 0);
	PageSetChecksumInplace(page, GXG_META_BLKNO);
	smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, GXG_META_BLKNO, (char *) page, true);
	log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node, INIT_FORKNUM,
				GXG_META_BLKNO, page, true);

	gxg_init_page(page, GXG_LEAF, 0);
	gxg_set_nentries(page, 0);
	PageSetChecksumInplace(page, 1);
	smgrextend(RelationGetSmgr(index), INIT_FORKNUM, 1, (char *) page, true);
	log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node, INIT_FORKNUM, 1, page, true);

	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
	pfree(page);
}
