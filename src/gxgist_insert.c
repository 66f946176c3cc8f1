/*-------------------------------------------------------------------------
 * gxgist_insert.c
 *		Insertion into a gpuext_gist index: choose subtree, split on the
 *		way down, one GenericXLog record per step (see src/gxgist.c).
 *
 * IDENTIFICATION
 *		src/gxgist_insert.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "gxgist.h"

/* area of a box; NaN (from NaN or inf - inf) counts as the largest */
static double
gxg_area(const GxRtEntry *e)
{
	double		a;

	if (!(e->xhi >= e->xlo) || !(e->yhi >= e->ylo))
		return 0.0;				/* inverted (an empty node's box) */
	a = (e->xhi - e->xlo) * (e->yhi - e->ylo);
	return isnan(a) ? DBL_MAX : a;
}

/* how much e's area grows to cover key */
static double
gxg_enlargement(const GxRtEntry *e, const GxRtEntry *key)
{
	GxRtEntry	u = *e;
	double		d;

	gxg_union_add(&u, key);
	d = gxg_area(&u) - gxg_area(e);
	return isnan(d) ? DBL_MAX : d;
}

/* The entry of an inner node to descend into for key: least enlargement,
 * then least area */
static int
gxg_choose(const GxRtEntry *entries, int n, const GxRtEntry *key)
{
	int			best = 0;
	double		best_enl = DBL_MAX;
	double		best_area = DBL_MAX;

	for (int i = 0; i < n; i++)
	{
		double		enl = gxg_enlargement(&entries[i], key);
		double		area = gxg_area(&entries[i]);

		if (i == 0 || enl < best_enl || (enl == best_enl && area < best_area))
		{
			best = i;
			best_enl = enl;
			best_area = area;
		}
	}
	return best;
}

static int	gxg_split_axis;

/* qsort order by the centre on gxg_split_axis, NaN last */
static int
gxg_cmp_centre(const void *a, const void *b)
{
	const GxRtEntry *ea = a;
	const GxRtEntry *eb = b;
	double		ca = gxg_split_axis ? ea->ylo / 2 + ea->yhi / 2 : ea->xlo / 2 + ea->xhi / 2;
	double		cb = gxg_split_axis ? eb->ylo / 2 + eb->yhi / 2 : eb->xlo / 2 + eb->xhi / 2;

	if (isnan(ca))
		return isnan(cb) ? 0 : 1;
	if (isnan(cb))
		return -1;
	return (ca > cb) - (ca < cb);
}

/* area of the intersection of two boxes (0 when disjoint) */
static double
gxg_overlap_area(const GxRtEntry *a, const GxRtEntry *b)
{
	GxRtEntry	i;

	i.xlo = Max(a->xlo, b->xlo);
	i.ylo = Max(a->ylo, b->ylo);
	i.xhi = Min(a->xhi, b->xhi);
	i.yhi = Min(a->yhi, b->yhi);
	return gxg_area(&i);
}

/*
 * Split n entries (sorted in place) into two halves: [0, n/2) and
 * [n/2, n).  The axis is the one whose halves overlap least (then have the
 * least total area), a cheap form of the R*-tree's split.
 */
static void
gxg_split_entries(GxRtEntry *entries, int n)
{
	int			half = n / 2;
	int			best_axis = 0;
	double		best_ov = DBL_MAX;
	double		best_area = DBL_MAX;

	for (int axis = 0; axis < 2; axis++)
	{
		GxRtEntry	l;
		GxRtEntry	r;
		double		ov;
		double		area;

		gxg_split_axis = axis;
		qsort(entries, n, sizeof(GxRtEntry), gxg_cmp_centre);
		gxg_union(entries, half, &l);
		gxg_union(entries + half, n - half, &r);
		ov = gxg_overlap_area(&l, &r);
		area = gxg_area(&l) + gxg_area(&r);
		if (axis == 0 || ov < best_ov || (ov == best_ov && area < best_area))
		{
			best_axis = axis;
			best_ov = ov;
			best_area = area;
		}
	}
	if (best_axis != 1)
	{
		gxg_split_axis = best_axis;
		qsort(entries, n, sizeof(GxRtEntry), gxg_cmp_centre);
	}
}

/*
 * Move the upper half of the entries of page (registered copy) to sibpage
 * (a registered new page, initialised here at the same level).
 */
static void
gxg_split_page(Page page, Page sibpage)
{
	GxgPageOpaque opaque = GxgPageGetOpaque(page);
	GxRtEntry  *entries = GxgPageGetEntries(page);
	int			n = GxgPageGetNEntries(page);
	int			half = n / 2;

	gxg_split_entries(entries, n);
	gxg_init_page(sibpage, opaque->flags, opaque->level);
	memcpy(GxgPageGetEntries(sibpage), entries + half, (n - half) * sizeof(GxRtEntry));
	gxg_set_nentries(sibpage, n - half);
	gxg_set_nentries(page, half);
}

/*
 * The root is full: split it into itself and a sibling under a new root,
 * one record of four pages.  Returns the new root, exclusively locked; the
 * old root's buffer is released.
 */
static Buffer
gxg_split_root(Relation index, Buffer metabuf, Buffer rootbuf)
{
	Buffer		sibbuf = gxg_new_buffer(index);
	Buffer		newbuf = gxg_new_buffer(index);
	GenericXLogState *state = GenericXLogStart(index);
	Page		metapage = GenericXLogRegisterBuffer(state, metabuf, 0);
	Page		rootpage = GenericXLogRegisterBuffer(state, rootbuf, 0);
	Page		sibpage = GenericXLogRegisterBuffer(state, sibbuf, GENERIC_XLOG_FULL_IMAGE);
	Page		newpage = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
	GxgMetaPageData *meta = GxgPageGetMeta(metapage);
	GxRtEntry  *top = GxgPageGetEntries(newpage);
	uint16		level = GxgPageGetOpaque(rootpage)->level;

	gxg_split_page(rootpage, sibpage);
	gxg_init_page(newpage, 0, level + 1);
	gxg_union(GxgPageGetEntries(rootpage), GxgPageGetNEntries(rootpage), &top[0]);
	top[0].blk = BufferGetBlockNumber(rootbuf);
	gxg_union(GxgPageGetEntries(sibpage), GxgPageGetNEntries(sibpage), &top[1]);
	top[1].blk = BufferGetBlockNumber(sibbuf);
	gxg_set_nentries(newpage, 2);

	meta->root = BufferGetBlockNumber(newbuf);
	meta->root_level = level + 1;
	meta->split_count++;
	GenericXLogFinish(state);

	UnlockReleaseBuffer(rootbuf);
	UnlockReleaseBuffer(sibbuf);
	return newbuf;
}

/*
 * The child under entry i of parent is full: split it, the new sibling's
 * entry appended to parent (which has room), one record of four pages.
 * Returns the sibling, exclusively locked; *i_sib is its entry in parent.
 */
static Buffer
gxg_split_child(Relation index, Buffer metabuf, Buffer parentbuf, int i,
				Buffer childbuf, int *i_sib)
{
	Buffer		sibbuf = gxg_new_buffer(index);
	GenericXLogState *state = GenericXLogStart(index);
	Page		metapage = GenericXLogRegisterBuffer(state, metabuf, 0);
	Page		parentpage = GenericXLogRegisterBuffer(state, parentbuf, 0);
	Page		childpage = GenericXLogRegisterBuffer(state, childbuf, 0);
	Page		sibpage = GenericXLogRegisterBuffer(state, sibbuf, GENERIC_XLOG_FULL_IMAGE);
	GxRtEntry  *pentries = GxgPageGetEntries(parentpage);
	int			pn = GxgPageGetNEntries(parentpage);

	gxg_split_page(childpage, sibpage);
	gxg_union(GxgPageGetEntries(childpage), GxgPageGetNEntries(childpage), &pentries[i]);
	pentries[i].blk = BufferGetBlockNumber(childbuf);
	gxg_union(GxgPageGetEntries(sibpage), GxgPageGetNEntries(sibpage), &pentries[pn]);
	pentries[pn].blk = BufferGetBlockNumber(sibbuf);
	gxg_set_nentries(parentpage, pn + 1);
	GxgPageGetMeta(metapage)->split_count++;
	GenericXLogFinish(state);

	*i_sib = pn;
	return sibbuf;
}

/*
 * aminsert: add (key, heap TID).  NULL keys are not indexed.
 */
bool
gxg_insert(Relation index, Datum *values, bool *isnull,
		   ItemPointer ht_ctid, Relation heapRel,
		   IndexUniqueCheck checkUnique, bool indexUnchanged,
		   IndexInfo *indexInfo)
{
	GxRtEntry	key;
	Buffer		metabuf;
	Buffer		buf;
	GxgMetaPageData *meta;
	int			node_size;
	GenericXLogState *state;
	Page		page;
	int			n;
	int			level;

	if (isnull[0])
		return false;
	gxg_box_of_datum(index, values[0], &key);
	key.blk = ItemPointerGetBlockNumber(ht_ctid);
	key.off = ItemPointerGetOffsetNumber(ht_ctid);

	LockPage(index, GXG_META_BLKNO, ExclusiveLock);

	metabuf = ReadBuffer(index, GXG_META_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = gxg_check_meta(index, BufferGetPage(metabuf));
	node_size = meta->node_size;
	level = (int) meta->root_level;

	/*
	 * Every node is checked before it is changed (gxg_node_entries), at the
	 * level the descent expects: one below its parent's, which also keeps
	 * a child pointer to the node itself or above it from locking a buffer
	 * this backend holds.
	 */
	gxg_check_child(index, GXG_META_BLKNO, meta->root);
	buf = ReadBuffer(index, meta->root);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	gxg_node_entries(index, BufferGetPage(buf), meta->root, level, &n);
	if (n >= node_size)
	{
		buf = gxg_split_root(index, metabuf, buf);
		level++;
	}

	/* down the inner levels; every node visited has room for one more */
	while (level > 0)
	{
		Page		ppage = BufferGetPage(buf);
		int			i = gxg_choose(GxgPageGetEntries(ppage), GxgPageGetNEntries(ppage), &key);
		BlockNumber child = GxgPageGetEntries(ppage)[i].blk;
		Buffer		childbuf;

		CHECK_FOR_INTERRUPTS();
		gxg_check_child(index, BufferGetBlockNumber(buf), child);
		if (child == BufferGetBlockNumber(buf))
			gxg_corrupt(index, child, "a node is its own child");
		childbuf = ReadBuffer(index, child);
		LockBuffer(childbuf, BUFFER_LOCK_EXCLUSIVE);
		gxg_node_entries(index, BufferGetPage(childbuf), child, level - 1, &n);
		if (n >= node_size)
		{
			int			i_sib;
			Buffer		sibbuf = gxg_split_child(index, metabuf, buf, i, childbuf, &i_sib);
			GxRtEntry  *pentries = GxgPageGetEntries(BufferGetPage(buf));

			if (gxg_enlargement(&pentries[i_sib], &key) <
				gxg_enlargement(&pentries[i], &key))
			{
				UnlockReleaseBuffer(childbuf);
				childbuf = sibbuf;
				i = i_sib;
			}
			else
				UnlockReleaseBuffer(sibbuf);
		}

		/* the parent entry covers the key before the key goes below it */
		if (!gxg_covers(&GxgPageGetEntries(ppage)[i], &key))
		{
			state = GenericXLogStart(index);
			page = GenericXLogRegisterBuffer(state, buf, 0);
			gxg_union_add(&GxgPageGetEntries(page)[i], &key);
			GenericXLogFinish(state);
		}
		UnlockReleaseBuffer(buf);
		buf = childbuf;
		level--;
	}

	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buf, 0);
	n = GxgPageGetNEntries(page);
	GxgPageGetEntries(page)[n] = key;
	gxg_set_nentries(page, n + 1);
	/*
	 * one more insert in the metapage, in the same record: a device copy of
	 * the tree made at an earlier count is out of date (src/gxgist_device.c);
	 * not in indexes built before the count existed (their metapage ends
	 * before it)
	 */
	if (GxgMetaHasVersion(BufferGetPage(metabuf)) && meta->build_id != 0)
	{
		Page		metapage = GenericXLogRegisterBuffer(state, metabuf, 0);

		GxgPageGetMeta(metapage)->insert_count++;
	}
	GenericXLogFinish(state);

	UnlockReleaseBuffer(buf);
	UnlockReleaseBuffer(metabuf);
	UnlockPage(index, GXG_META_BLKNO, ExclusiveLock);
	return false;
}
