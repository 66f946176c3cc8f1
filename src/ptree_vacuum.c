/*-------------------------------------------------------------------------
 * ptree_vacuum.c
 *		gpuext_ptree: VACUUM.
 *
 * Bulk delete is a merge that drops the dead TIDs: main and delta are
 * rewritten into a new main (under the metapage's exclusive lock, so
 * scans and inserts wait for it).  Cleanup merges a non-empty delta when
 * no bulk delete ran, and gives every page that is not part of the live
 * generation to the free space map.
 *
 * IDENTIFICATION
 *		src/ptree_vacuum.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"

#include "ptree.h"

/*
 * ambulkdelete: rewrite the index without the TIDs the callback names
 */
IndexBulkDeleteResult *
ptreebulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	Buffer		metabuf;

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	metabuf = ReadBuffer(index, PTREE_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	ptree_merge(index, metabuf, callback, callback_state, stats);
	UnlockReleaseBuffer(metabuf);
	return stats;
}

/*
 * amvacuumcleanup: merge a pending delta, record free pages, report sizes
 */
IndexBulkDeleteResult *
ptreevacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	Buffer		metabuf;
	PtreeMetaData *meta;
	BlockNumber nblocks,
				blkno;
	BlockNumber nfree = 0;

	if (info->analyze_only)
		return stats;

	metabuf = ReadBuffer(index, PTREE_METAPAGE_BLKNO);
	if (stats == NULL)
	{
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		if (PtreePageGetMeta(BufferGetPage(metabuf))->delta_pages > 0)
			ptree_merge(index, metabuf, NULL, NULL, NULL);
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
	}

	/* no merge can run while the metapage is share-locked */
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = PtreePageGetMeta(BufferGetPage(metabuf));
	nblocks = RelationGetNumberOfBlocks(index);
	for (blkno = PTREE_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf;
		bool		live;

		vacuum_delay_point();
		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, info->strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		live = ptree_page_is_live(BufferGetPage(buf), meta->gen);
		UnlockReleaseBuffer(buf);
		if (!live)
		{
			RecordFreeIndexPage(index, blkno);
			nfree++;
		}
	}
	stats->num_pages = nblocks;
	stats->pages_free = nfree;
	stats->num_index_tuples = (double) (meta->main_tids + meta->delta_tids);
	stats->estimated_count = false;
	UnlockReleaseBuffer(metabuf);

	IndexFreeSpaceMapVacuum(index);
	return stats;
}
