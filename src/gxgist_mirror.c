/*-------------------------------------------------------------------------
 * gxgist_mirror.c
 *		The mirror of a gpuext_gist index in the layout the device scans
 *		(cuda/rtree.cu), and the level-by-level driver of the walk over it.
 *
 * The mirror is the index's entry arrays side by side, node b at
 * nodes + b * GXG_MAX_NODE_SIZE with its count in counts[b] (0 for the
 * metapage and unused pages), copied under the index's share lock.  The
 * driver starts every query at the root, runs one level function per
 * level (visits grouped by node, outputs into a buffer sized first, then
 * enlarged and run again when the level reports more than it could
 * write: the device's "size first, then run"), and returns the leaf
 * pairs.
 *
 * With gpuext.gist_walk = mirror, searches build a mirror and run this
 * driver with gx_rtree_level_cpu, the host form of the kernel's contract:
 * so the layout, the driver and the overflow path are tested here on the
 * CPU engine.  The GPU service does not hold mirrors yet: the device
 * driver (upload the mirror once, keep it in step with inserts and
 * vacuum, launch gx_rtree_level_launch per level) is the next step.
 *
 * IDENTIFICATION
 *		src/gxgist_mirror.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gxgist.h"

int			gxg_walk_engine = GXG_WALK_PAGES;

static const struct config_enum_entry gxg_walk_options[] = {
	{"pages", GXG_WALK_PAGES, false},
	{"mirror", GXG_WALK_MIRROR, false},
	{NULL, 0, false}
};

/* the GUC gpuext.gist_walk; called from gx_gist_init */
void
gx_gist_mirror_init(void)
{
	DefineCustomEnumVariable("gpuext.gist_walk",
							 "How gpuext_gist searches walk the tree: pages (the buffers) or mirror (a copy in the device's layout, for tests).",
							 NULL, &gxg_walk_engine, GXG_WALK_PAGES, gxg_walk_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
}

/*
 * Copy the index into a mirror (palloc'd).  The caller holds the lock that
 * keeps inserts out (or, on a standby, checks the split count around it).
 */
GxgMirror *
gxg_mirror_build(Relation index)
{
	GxgMirror  *m = palloc0(sizeof(GxgMirror));
	Buffer		metabuf = ReadBuffer(index, GXG_META_BLKNO);
	GxgMetaPageData *meta;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = gxg_check_meta(index, BufferGetPage(metabuf));
	m->root = meta->root;
	m->root_level = meta->root_level;
	UnlockReleaseBuffer(metabuf);

	m->nblocks = RelationGetNumberOfBlocks(index);
	m->nodes = palloc_extended((Size) m->nblocks * GXG_MAX_NODE_SIZE * sizeof(GxRtEntry),
							   MCXT_ALLOC_HUGE);
	m->counts = palloc0(m->nblocks * sizeof(uint16));
	for (BlockNumber blk = GXG_META_BLKNO + 1; blk < m->nblocks; blk++)
	{
		Buffer		buf;
		Page		page;

		CHECK_FOR_INTERRUPTS();
		buf = ReadBuffer(index, blk);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (!PageIsNew(page) && !GxgPageIsMeta(page) &&
			GxgPageGetNEntries(page) <= GXG_MAX_NODE_SIZE)
		{
			m->counts[blk] = GxgPageGetNEntries(page);
			memcpy(m->nodes + (Size) blk * GXG_MAX_NODE_SIZE, GxgPageGetEntries(page),
				   m->counts[blk] * sizeof(GxRtEntry));
		}
		UnlockReleaseBuffer(buf);
	}
	return m;
}

/* the visits of a level grouped by node, as the level function wants them */
static int
gxg_cmp_visit_node(const void *a, const void *b)
{
	const GxRtVisit *va = a;
	const GxRtVisit *vb = b;

	return (va->node > vb->node) - (va->node < vb->node);
}

/*
 * Walk the mirror level by level for independent queries; the leaf pairs
 * (unsorted) in *npairs.  A child pointer outside the mirror is an error.
 */
GxRtPair *
gxg_mirror_walk(Relation index, const GxgMirror *m, const GxRtQuery *queries,
				uint32 nqueries, int64 *npairs)
{
	GxRtVisit  *visits = palloc_extended(Max(nqueries, 1) * sizeof(GxRtVisit), MCXT_ALLOC_HUGE);
	uint32		nvisits = nqueries;
	int			level = (int) m->root_level;

	for (uint32 q = 0; q < nqueries; q++)
	{
		visits[q].node = m->root;
		visits[q].query = q;
	}
	for (;;)
	{
		bool		leaf = (level == 0);
		Size		elem = leaf ? sizeof(GxRtPair) : sizeof(GxRtVisit);
		uint32		cap = Max(nvisits, 64);
		uint32		count;
		void	   *out;

		CHECK_FOR_INTERRUPTS();
		for (uint32 v = 0; v < nvisits; v++)
			if (visits[v].node <= GXG_META_BLKNO || visits[v].node >= m->nblocks)
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("index \"%s\": child pointer %u out of range",
								RelationGetRelationName(index), visits[v].node)));
		qsort(visits, nvisits, sizeof(GxRtVisit), gxg_cmp_visit_node);

		/* size first, then run: a second run with the size the first found */
		for (;;)
		{
			out = palloc_extended((Size) cap * elem, MCXT_ALLOC_HUGE);
			count = gx_rtree_level_cpu(m->nodes, m->counts, GXG_MAX_NODE_SIZE, queries,
									   visits, nvisits, leaf, out, cap);
			if (count <= cap)
				break;
			pfree(out);
			cap = count;
		}
		pfree(visits);
		if (leaf)
		{
			*npairs = count;
			return (GxRtPair *) out;
		}
		visits = (GxRtVisit *) out;
		nvisits = count;
		level--;
		if (nvisits == 0)
		{
			*npairs = 0;
			return NULL;
		}
	}
}
