/*-------------------------------------------------------------------------
 * gxgist_mirror.c
 *		The mirror of a gpuext_gist index: the tree in the layout that both
 *		engines search (cuda/gx_rtree.h), and the settings that choose how
 *		searches walk the tree.
 *
 * The mirror is one block of memory: a header, a count per block (with a
 * leaf bit; 0 for the metapage and pages that are not nodes) and the
 * nodes' entry arrays side by side, node b at nodes + b * node_stride
 * (node_stride: the most entries any node has).  It is copied from the
 * index's pages under the caller's lock; src/gxgist_device.c sends it to
 * the GPU service (a task) or gives it to the CPU engine.
 *
 * IDENTIFICATION
 *		src/gxgist_mirror.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gxgist.h"

/* a node of any page fits the kernels' shared memory */
StaticAssertDecl(GXG_MAX_NODE_SIZE <= GX_RT_MAX_STRIDE,
				 "GX_RT_MAX_STRIDE must hold the widest gpuext_gist node");

int			gxg_walk_engine = GXG_WALK_AUTO;
int			gxg_gpu_min_batch = 64;

static const struct config_enum_entry gxg_walk_options[] = {
	{"auto", GXG_WALK_AUTO, false},
	{"pages", GXG_WALK_PAGES, false},
	{"mirror", GXG_WALK_MIRROR, false},
	{NULL, 0, false}
};

/*
 * the GUCs gpuext.gist_walk, gpuext.gist_gpu_min_batch and
 * gpuext.gist_device_cache; from gx_gist_init
 */
void
gx_gist_mirror_init(void)
{
	DefineCustomEnumVariable("gpuext.gist_walk",
							 "How gpuext_gist searches walk the tree.",
							 "auto: batches of gpuext.gist_gpu_min_batch probes or more on the GPU "
							 "(a copy of the tree in device memory), the rest over the index's pages; "
							 "pages: always over the pages; mirror: every search through the CPU engine's "
							 "copy of the tree, as the GPU would run it (for tests).",
							 &gxg_walk_engine, GXG_WALK_AUTO, gxg_walk_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.gist_gpu_min_batch",
							"Fewest probes of one gpuext_gist search that go to the GPU.",
							"Smaller batches (single queries) walk the index's pages on the CPU.",
							&gxg_gpu_min_batch, 64, 2, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuext.gist_device_cache",
							 "Keeps device copies of gpuext_gist trees for the session while the index is unchanged.",
							 "Off: every node makes its own copy and frees it at its end.",
							 &gxg_device_cache, false, PGC_USERSET, 0, NULL, NULL, NULL);
}

/*
 * Copy the index into a mirror (palloc'd in the current context); *bytes
 * gets its size.  The caller holds the lock that keeps inserts out (or, on
 * a standby, checks the split count around it), then checks the copy's
 * structure (gxg_mirror_check).  Every page but the all-zero ones (left by
 * a crash) must be a node (gxg_node_entries).
 */
GxRtMirror *
gxg_mirror_build(Relation index, uint64 *bytes)
{
	Buffer		metabuf = ReadBuffer(index, GXG_META_BLKNO);
	GxgMetaPageData *meta;
	BlockNumber root;
	uint32		root_level;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	uint32		stride = 1;
	uint64		counts_off;
	uint64		nodes_off;
	uint64		total;
	GxRtMirror *m;
	uint16	   *counts;
	GxRtEntry  *nodes;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = gxg_check_meta(index, BufferGetPage(metabuf));
	root = meta->root;
	root_level = meta->root_level;
	if (meta->node_size >= 1 && meta->node_size <= GXG_MAX_NODE_SIZE)
		stride = meta->node_size;
	UnlockReleaseBuffer(metabuf);
	gxg_check_child(index, GXG_META_BLKNO, root);

	/* nodes hold at most node_size entries; the slot is as wide as the widest */
	for (;;)
	{
		uint32		widest = stride;

		total = gx_rt_mirror_layout(nblocks, stride, &counts_off, &nodes_off);
		m = palloc_extended(total, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		counts = (uint16 *) ((char *) m + counts_off);
		nodes = (GxRtEntry *) ((char *) m + nodes_off);
		for (BlockNumber blk = GXG_META_BLKNO + 1; blk < nblocks; blk++)
		{
			Buffer		buf;
			Page		page;

			CHECK_FOR_INTERRUPTS();
			buf = ReadBuffer(index, blk);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			if (!PageIsNew(page))
			{
				int			n;
				GxRtEntry  *entries = gxg_node_entries(index, page, blk,
													   blk == root ? (int) root_level : -1, &n);

				if (n > (int) stride)
					widest = Max(widest, (uint32) n);
				else
				{
					counts[blk] = (uint16) n | GX_RT_NODE_BIT |
						(GxgPageIsLeaf(page) ? GX_RT_LEAF_BIT : 0);
					memcpy(nodes + (Size) blk * stride, entries, n * sizeof(GxRtEntry));
				}
			}
			UnlockReleaseBuffer(buf);
		}
		if (widest == stride)
			break;
		/* a node wider than node_size (not made by this code): wider slots */
		pfree(m);
		stride = widest;
	}
	m->magic = GX_RT_MIRROR_MAGIC;
	m->nblocks = nblocks;
	m->node_stride = stride;
	m->root = root;
	m->root_level = root_level;
	m->counts_offset = counts_off;
	m->nodes_offset = nodes_off;
	m->total_bytes = total;
	*bytes = total;
	return m;
}

/*
 * Check the structure of a mirror as the walks over the pages check it as
 * they go (src/gxgist_batch.c), since the engines trust it: from the root,
 * every child pointer leads to a node of the mirror other than the
 * metapage, reached only once, a leaf exactly one level above the
 * leaves, every leaf entry a heap TID.  ERROR ERRCODE_INDEX_CORRUPTED
 * naming the block whose entry is wrong.
 */
void
gxg_mirror_check(Relation index, const GxRtMirror *m)
{
	const uint16 *counts = gx_rt_mirror_counts(m);
	const GxRtEntry *nodes = gx_rt_mirror_nodes(m);
	bool	   *seen = palloc0(m->nblocks * sizeof(bool));
	uint32	   *stack_blk = palloc(m->nblocks * sizeof(uint32));
	uint32	   *stack_level = palloc(m->nblocks * sizeof(uint32));
	uint32		nstack = 0;

	if (m->root == GXG_META_BLKNO || m->root >= m->nblocks ||
		(counts[m->root] & GX_RT_NODE_BIT) == 0 ||
		((counts[m->root] & GX_RT_LEAF_BIT) != 0) != (m->root_level == 0))
		gxg_corrupt(index, GXG_META_BLKNO, "the root is not a node at the root level");
	seen[m->root] = true;
	stack_blk[nstack] = m->root;
	stack_level[nstack] = m->root_level;
	nstack++;
	while (nstack > 0)
	{
		uint32		blk = stack_blk[--nstack];
		uint32		level = stack_level[nstack];
		uint32		n = counts[blk] & GX_RT_COUNT_MASK;
		const GxRtEntry *e = nodes + (Size) blk * m->node_stride;

		CHECK_FOR_INTERRUPTS();
		for (uint32 i = 0; i < n; i++)
		{
			uint32		child = e[i].blk;

			if (level == 0)
			{
				/* gxg_check_tid's test, here for every leaf entry of the index */
				if (unlikely(e[i].off < FirstOffsetNumber || e[i].off > MaxHeapTuplesPerPage ||
							 e[i].blk == InvalidBlockNumber))
					gxg_check_tid(index, blk, &e[i]);
				continue;
			}
			if (child == GXG_META_BLKNO || child >= m->nblocks)
				gxg_corrupt(index, blk, "child pointer out of range");
			if ((counts[child] & GX_RT_NODE_BIT) == 0)
				gxg_corrupt(index, blk, "a child pointer leads to a page that is not a node");
			if (((counts[child] & GX_RT_LEAF_BIT) != 0) != (level == 1))
				gxg_corrupt(index, child, "level differs from the parent's");
			if (seen[child])
				gxg_corrupt(index, child, "node reached twice");
			seen[child] = true;
			/* each node is pushed once: the stack never holds more than nblocks */
			stack_blk[nstack] = child;
			stack_level[nstack] = level - 1;
			nstack++;
		}
	}
	pfree(seen);
	pfree(stack_blk);
	pfree(stack_level);
}
