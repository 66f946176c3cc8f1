/*-------------------------------------------------------------------------
 * gxgist_vacuum.c
 *		VACUUM of a gpuext_gist index: remove the leaf entries of dead heap
 *		tuples, count what remains.
 *
 * Blocks are read in order with buffer locks only.  Entries move only to
 * new blocks at the end of the relation (splits), and the loop goes on
 * until it has seen the relation's last block, so no entry escapes.  Boxes
 * are not shrunk and pages are not freed (see src/gxgist.c).
 *
 * IDENTIFICATION
 *		src/gxgist_vacuum.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/xlog.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "gxgist.h"

/*
 * Visit every leaf; with a callback, remove the entries it names (one
 * record per leaf that changes).  Fills the counts of stats.
 */
static void
gxg_vacuum_scan(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	BlockNumber blkno = GXG_META_BLKNO + 1;
	BlockNumber nblocks;

	stats->num_index_tuples = 0;
	for (;;)
	{
		nblocks = RelationGetNumberOfBlocks(index);
		if (blkno >= nblocks)
			break;
		for (; blkno < nblocks; blkno++)
		{
			Buffer		buf;
			Page		page;
			GxRtEntry  *entries;
			int			n;
			int			keep = 0;

			vacuum_delay_point();
			buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, info->strategy);
			LockBuffer(buf, callback ? BUFFER_LOCK_EXCLUSIVE : BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			/* all-zero pages: extended by an insert that crashed */
			if (PageIsNew(page))
			{
				UnlockReleaseBuffer(buf);
				continue;
			}
			/* any other page is a node, checked before it is changed */
			entries = gxg_node_entries(index, page, blkno, -1, &n);
			if (!GxgPageIsLeaf(page))
			{
				UnlockReleaseBuffer(buf);
				continue;
			}
			if (callback)
			{
				ItemPointerData tid;

				for (int i = 0; i < n; i++)
				{
					ItemPointerSet(&tid, entries[i].blk, entries[i].off);
					if (!callback(&tid, callback_state))
						keep++;
				}
			}
			else
				keep = n;

			if (keep < n)
			{
				GenericXLogState *state = GenericXLogStart(index);
				Page		wpage = GenericXLogRegisterBuffer(state, buf, 0);
				GxRtEntry  *w = GxgPageGetEntries(wpage);
				int			j = 0;

				for (int i = 0; i < n; i++)
				{
					ItemPointerData tid;

					ItemPointerSet(&tid, w[i].blk, w[i].off);
					if (!callback(&tid, callback_state))
						w[j++] = w[i];
				}
				/* the callback's answer for a TID does not change meanwhile */
				Assert(j == keep);
				gxg_set_nentries(wpage, j);
				GenericXLogFinish(state);
				stats->tuples_removed += n - j;
				keep = j;
			}
			stats->num_index_tuples += keep;
			UnlockReleaseBuffer(buf);
		}
	}
	stats->num_pages = nblocks;
	stats->pages_free = 0;
	stats->estimated_count = false;
}

/*
 * ambulkdelete.  At the end, when entries went, the removal count of the
 * metapage is bumped, then a barrier: the metapage's heavyweight lock
 * taken and dropped in exclusive mode waits for the walks in progress
 * (share mode).  Vacuum marks the heap items of the removed entries unused
 * (and their pages all-visible) only after this returns, so a walk that
 * found an entry and checks the visibility map before it drops its lock
 * (gxg_mark_all_visible) never takes a removed row for a visible one.
 */
IndexBulkDeleteResult *
gxg_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			   IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	gxg_vacuum_scan(info, stats, callback, callback_state);
	if (stats->tuples_removed > 0 && !RecoveryInProgress())
	{
		Buffer		metabuf = ReadBuffer(info->index, GXG_META_BLKNO);

		/* a device copy made before is no longer the index (gxgist_device.c) */
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		if (GxgMetaHasVersion(BufferGetPage(metabuf)) &&
			gxg_check_meta(info->index, BufferGetPage(metabuf))->build_id != 0)
		{
			GenericXLogState *state = GenericXLogStart(info->index);
			Page		metapage = GenericXLogRegisterBuffer(state, metabuf, 0);

			GxgPageGetMeta(metapage)->removal_count++;
			GenericXLogFinish(state);
		}
		UnlockReleaseBuffer(metabuf);
		LockPage(info->index, GXG_META_BLKNO, ExclusiveLock);
		UnlockPage(info->index, GXG_META_BLKNO, ExclusiveLock);
	}
	return stats;
}

/*
 * amvacuumcleanup: counts only.  When no bulkdelete ran, one read-only
 * pass for them (ANALYZE-only calls skip it).
 */
IndexBulkDeleteResult *
gxg_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only)
		return stats;
	if (stats == NULL)
	{
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
		gxg_vacuum_scan(info, stats, NULL, NULL);
	}
	return stats;
}
