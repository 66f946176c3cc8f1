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
 * random_page_cost that makes the estimates match the times.  From
 * set_rel_pathlist_hook, registered so that it runs before the GpuScan hook
 * adds its paths, every unparameterized index, index-only and bitmap heap
 * path of a base relation is costed again by PostgreSQL's own functions
 * with both page costs multiplied by that factor: only the page part of
 * the estimate changes; the per-tuple part stays as it was.  Only while
 * gpuext.enabled is on; the default, 1, changes nothing.
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
#include "gpuext.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

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
 * Divide the given share of the page cost of each partial sequential scan
 * of a base relation among its processes (see the file comment), keeping
 * the list in the order of total cost that add_partial_path keeps.
 */
static void
recost_partial_seqscans(RelOptInfo *rel, double share)
{
	ListCell   *lc;
	double		spc_seq_page_cost;
	bool		changed = false;

	double		pages_cost;

	get_tablespace_page_costs(rel->reltablespace, NULL, &spc_seq_page_cost);
	pages_cost = spc_seq_page_cost * rel->pages;
	foreach(lc, rel->partial_pathlist)
	{
		Path	   *path = (Path *) lfirst(lc);

		if (path->pathtype != T_SeqScan || path->param_info != NULL ||
			path->parallel_workers <= 0)
			continue;
		path->total_cost -= pages_cost * share *
			(1.0 - 1.0 / gx_parallel_divisor(path->parallel_workers));
		changed = true;
	}
	if (changed)
		list_sort(rel->partial_pathlist, gx_compare_total_cost);
}

/* set_rel_pathlist_hook: re-cost the stock index paths of a base relation. */
static void
index_recost_paths(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	double		saved_seq = seq_page_cost;
	double		saved_random = random_page_cost;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);

	if (!gpuext_enabled || rel->reloptkind != RELOPT_BASEREL)
		return;
	gx_cost_refresh();
	if (gx_parallel_page_share > 0)
		recost_partial_seqscans(rel, gx_parallel_page_share);
	gx_deform_recost_paths(rel, rte);
	if (gx_index_cost_scale == 1.0)
		return;

	/* the page costs, scaled, only while PostgreSQL costs these paths */
	PG_TRY();
	{
		seq_page_cost = saved_seq * gx_index_cost_scale;
		random_page_cost = saved_random * gx_index_cost_scale;
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

/* Install the hook; call before the GpuScan hook is installed. */
void
gx_index_cost_init(void)
{
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = index_recost_paths;
}
