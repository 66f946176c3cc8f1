/*-------------------------------------------------------------------------
 * ptree_vacuum.c
 *		gpuext_ptree: VACUUM.
 *
 * Bulk delete is a merge that drops the dead TIDs: main and the delta are
 * rewritten into a new main while scans and inserts go on (inserts then
 * fill a new delta, which holds no dead TID: a dead heap slot is not
 * reused before its index entries are gone).  Cleanup merges a non-empty
 * delta when no bulk delete ran, and gives every page that no generation
 * of the metapage uses to the free space map.  Both hold the merge lock
 * (ptree_lock_merges), waiting for a merge an insert is making; the wait
 * can be cancelled.
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

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	ptree_lock_merges(index, ExclusiveLock);
	ptree_merge(index, PTREE_MERGE_ALWAYS, callback, callback_state, stats);
	ptree_unlock_merges(index, ExclusiveLock);
	return stats;
}

/*
 * amvacuumcleanup: merge a pending delta, record free pages, report sizes
 */
IndexBulkDeleteResult *
ptreevacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	PtreeMetaData meta;
	BlockNumber nblocks,
				blkno;
	BlockNumber nfree = 0;

	if (info->analyze_only)
		return stats;

	/* no merge runs while we hold the merge lock: the generations stay */
	ptree_lock_merges(index, ExclusiveLock);
	if (stats == NULL)
	{
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
		ptree_merge(index, PTREE_MERGE_PENDING, NULL, NULL, NULL);
	}

	ptree_read_meta(index, &meta);
	nblocks = RelationGetNumberOfBlocks(index);
	for (blkno = PTREE_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf;
		bool		in_use;

		vacuum_delay_point();
		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, info->strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		in_use = ptree_page_in_use(BufferGetPage(buf), &meta);
		UnlockReleaseBuffer(buf);
		if (!in_use)
		{
			RecordFreeIndexPage(index, blkno);
			nfree++;
		}
	}
	ptree_unlock_merges(index, ExclusiveLock);

	stats->num_pages = nblocks;
	stats->pages_free = nfree;
	stats->num_index_tuples = (double) (meta.main_tids + meta.delta_tids +
										(BlockNumberIsValid(meta.sealed_head) ? meta.sealed_tids : 0));
	stats->estimated_count = false;

	IndexFreeSpaceMapVacuum(index);
	return stats;
}
