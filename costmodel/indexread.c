/*-------------------------------------------------------------------------
 * indexread.c
 *		Re-cost PostgreSQL's index, bitmap and parallel sequential scans
 *		with the measured price of their page reads, so that they compare
 *		fairly with gpuext's paths.
 *
 * gpuext's paths are costed in microseconds and converted with
 * gpuext.cost_unit_us, which gpuext_calibrate() measures on a stock
 * sequential scan.  PostgreSQL prices each page an index scan visits at
 * random_page_cost (4 by default: a disk seek) or seq_page_cost: when the
 * table is in memory, a selective index or bitmap scan runs many times
 * faster than its estimate says relative to a sequential scan, and a GPU
 * scan of the whole table looks cheaper than a bitmap scan that is in fact
 * much faster.
 *
 * gpuext_calibrate() therefore also times stock index and bitmap scans over
 * scattered rows of a table in shared buffers and splits each one's
 * estimate into its page part and the rest (planning it with both page
 * costs at zero): index_cost_scale is the factor on seq_page_cost and
 * random_page_cost that makes the estimates match the times.  From the
 * planner's set_rel_pathlist hook (src/paths.c), which runs before the
 * GpuScan hook adds its paths, every unparameterized index, index-only and
 * bitmap heap path of a base relation is costed again by PostgreSQL's own
 * functions with both page costs multiplied by that factor: only the page
 * part of the estimate changes; the per-tuple part stays as it was.  Only
 * while gpuext.enabled is on; the default, 1, changes nothing.
 *
 * Partial sequential scans (the workers' side of a parallel scan) are
 * re-costed too: PostgreSQL divides their per-row cost among the workers
 * but charges every page in full, as if the workers shared one disk.  With
 * the pages in shared buffers each worker reads its own pages, and a
 * parallel scan runs nearly as many times faster as it has processes, so
 * a GPU plan compared against one looked far cheaper than it was.
 * gpuext_calibrate() measures parallel_page_share, the share of the page
 * cost the workers of this machine divide (a four-worker scan against the
 * serial one), and the page part of each partial sequential scan becomes
 * pages * seq_page_cost * ((1 - share) + share / divisor), the divisor
 * being PostgreSQL's own (workers, plus the leader's part).  The default,
 * 0, changes nothing.
 *
 * Approximate: one factor for every table, measured on warm data;
 * tablespace-specific page costs are not scaled; parameterized paths
 * (inner sides of nested loops) keep their cost; paths that add_path had
 * already discarded are not brought back.
 *
 * IDENTIFICATION
 *		costmodel/indexread.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "utils/spccache.h"

#include "cost.h"

/* Cost a bitmap tree again, leaves first (the page costs in force). */
static void
recost_bitmap_tree(PlannerInfo *root, Path *bitmapqual)
{
	ListCell   *lc;

	if (IsA(bitmapqual, IndexPath))
		cost_index((IndexPath *) bitmapqual, root, 1.0, false);
	else if (IsA(bitmapqual, BitmapAndPath))
	{
		foreach(lc, ((BitmapAndPath *) bitmapqual)->bitmapquals)
			recost_bitmap_tree(root, (Path *) lfirst(lc));
		cost_bitmap_and_node((BitmapAndPath *) bitmapqual, root);
	}
	else if (IsA(bitmapqual, BitmapOrPath))
	{
		foreach(lc, ((BitmapOrPath *) bitmapqual)->bitmapquals)
			recost_bitmap_tree(root, (Path *) lfirst(lc));
		cost_bitmap_or_node((BitmapOrPath *) bitmapqual, root);
	}
}

/* Cost the unparameterized index-driven paths of one list again. */
static void
recost_index_paths(PlannerInfo *root, RelOptInfo *rel, List *paths)
{
	ListCell   *lc;

	foreach(lc, paths)
	{
		Path	   *path = (Path *) lfirst(lc);

		if (path->param_info != NULL)
			continue;
		if (IsA(path, IndexPath))
			cost_index((IndexPath *) path, root, 1.0, path->parallel_aware);
		else if (IsA(path, BitmapHeapPath))
		{
			BitmapHeapPath *bpath = (BitmapHeapPath *) path;

			recost_bitmap_tree(root, bpath->bitmapqual);
			cost_bitmap_heap_scan(path, root, rel, NULL, bpath->bitmapqual, 1.0);
		}
	}
}

/*
 * Cost the unparameterized index, index-only and bitmap heap paths of
 * base relation 'rel' (both its lists) again, with both page costs times
 * index_cost_scale (see the file comment).  Their order in the lists is
 * the caller's to keep.
 */
void
gx_recost_index_paths(const GxCostParams *p, PlannerInfo *root, RelOptInfo *rel)
{
	double		saved_seq = seq_page_cost;
	double		saved_random = random_page_cost;

	if (p->index_cost_scale == 1.0)
		return;

	/* the page costs, scaled, only while PostgreSQL costs these paths */
	PG_TRY();
	{
		seq_page_cost = saved_seq * p->index_cost_scale;
		random_page_cost = saved_random * p->index_cost_scale;
		recost_index_paths(root, rel, rel->pathlist);
		recost_index_paths(root, rel, rel->partial_pathlist);
	}
	PG_FINALLY();
	{
		seq_page_cost = saved_seq;
		random_page_cost = saved_random;
	}
	PG_END_TRY();
}

/*
 * What a partial sequential scan of base relation 'rel' costs less when
 * its processes divide parallel_page_share of its page cost among them
 * (see the file comment): false, nothing, for any other path, or with a
 * share of 0.
 */
bool
gx_partial_seqscan_discount(const GxCostParams *p, RelOptInfo *rel, Path *path,
							Cost *discount)
{
	double		spc_seq_page_cost;
	double		pages_cost;

	if (p->parallel_page_share <= 0 || path->pathtype != T_SeqScan ||
		path->param_info != NULL || path->parallel_workers <= 0)
		return false;
	get_tablespace_page_costs(rel->reltablespace, NULL, &spc_seq_page_cost);
	pages_cost = spc_seq_page_cost * rel->pages;
	*discount = pages_cost * p->parallel_page_share *
		(1.0 - 1.0 / gx_parallel_divisor(path->parallel_workers));
	return true;
}
