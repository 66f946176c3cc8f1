/*-------------------------------------------------------------------------
 * paths.c
 *		The planner's work on PostgreSQL's own paths, with the numbers of
 *		the cost model (costmodel/): re-costing them before gpuext's paths
 *		compete with them, keeping the path lists in the order add_path
 *		keeps, ordering a relation's partial paths for a sort above them,
 *		and asking whether any path of gpuext's could win at all.
 *
 * Two hooks, installed before GpuScan's and GpuAgg's so that those see
 * the re-costed paths:
 *	- set_rel_pathlist: for a base relation, partial sequential scans
 *	  (parallel_page_share), sequential scans' column stepping
 *	  (stock_deform_us), index and bitmap scans (index_cost_scale), then
 *	  for the relation whose rows go to the client, the result stream
 *	  (client_row_us);
 *	- create_upper_paths: spilling aggregations and sorts, hashed groups,
 *	  by-reference steps, a hash join's probes under an aggregation and
 *	  Gathers' launches.
 * What each charge is and why is told in costmodel/ (indexread.c,
 * deform.c, output.c, spill.c); here they are applied.
 *
 * IDENTIFICATION
 *		src/paths.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "access/table.h"
#include "nodes/pathnodes.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "utils/rel.h"

#include "costparams.h"
#include "gpuscan.h"
#include "paths.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;
static create_upper_paths_hook_type prev_create_upper_paths_hook = NULL;

/* list_sort comparator: by total cost, as add_path keeps its lists */
static int
compare_total_cost(const ListCell *a, const ListCell *b)
{
	Cost		ca = ((Path *) lfirst(a))->total_cost;
	Cost		cb = ((Path *) lfirst(b))->total_cost;

	return ca < cb ? -1 : ca > cb ? 1 : 0;
}

/*
 * Would add_path (or add_partial_path) reject any new path of this list's
 * relation that costs at least 'floor' before its first row, has no
 * pathkeys and no parameterization, returns at least 'rows' rows and is
 * parallel safe only when 'parallel_safe'?  True when the list holds an
 * unparameterized path that dominates every such path: cheaper in total
 * than 'floor' by more than add_path's fuzz factor (pathnode.c's
 * STD_FUZZ_FACTOR, 1.01), so cheaper in startup and total cost, with no
 * more rows and at least as parallel safe.  (add_partial_path compares
 * total costs and pathkeys alone: for its lists pass 'rows' as -1, not
 * compared, and 'parallel_safe' as false.)  Such a new path would be freed
 * again at once: not making it plans exactly the same.
 */
bool
gx_stock_path_beats(List *paths, Cost floor, double rows, bool parallel_safe)
{
	ListCell   *lc;

	foreach(lc, paths)
	{
		Path	   *p = (Path *) lfirst(lc);

		if (p->param_info == NULL && (rows < 0 || p->rows <= rows) &&
			(p->parallel_safe || !parallel_safe) &&
			p->total_cost * 1.01 < floor)
			return true;
	}
	return false;
}

/*
 * Re-cost one unparameterized path of 'rel' for its result stream
 * (costmodel/output.c): a serial path pays for the rows it sends to the
 * client, a partial one loses what its leader's stream hides.  Returns
 * whether the cost changed.  GpuScan calls it for its own paths as it
 * makes them.
 */
bool
gx_output_recost(const GxCostParams *p, PlannerInfo *root, RelOptInfo *rel, Path *path)
{
	Cost		change;

	if (!gpuext_enabled || !gx_output_charge(p, root, rel, path, &change))
		return false;
	path->total_cost += change;
	return true;
}

/*
 * add_partial_path for a gpuext scan's partial path.  A gpuext scan may
 * plan fewer workers than PostgreSQL's partial paths of the relation
 * (gx_parallel_scan_workers), each of its processes then returning more
 * rows.  add_partial_path compares the processes' scan costs only, and
 * PostgreSQL sorts only the cheapest partial path under a Gather Merge:
 * where the relation's rows are sorted next (the only relation of a
 * query with ORDER BY, its rows going to the client) a cheaper scan that
 * leaves each process four times the rows to sort displaced the stock
 * path whose sorted plan was the cheaper one (cm_sort_virg, H100 session
 * 7).  There every partial path is kept and the list is ordered by each
 * one's cost plus the sort of its rows (gx_partial_sort_cost), so that the
 * first, the one PostgreSQL sorts, is the one with the cheapest sorted
 * plan; the costs themselves are unchanged.  Elsewhere plain
 * add_partial_path.
 */
void
gx_add_partial_path(PlannerInfo *root, RelOptInfo *rel, Path *path)
{
	List	   *sorted = NIL;
	ListCell   *lc;

	if (!gpuext_enabled || gpuext_force_offload || root->parse->sortClause == NIL ||
		root->query_pathkeys == NIL || !gx_rows_go_to_client(root, rel))
	{
		add_partial_path(rel, path);
		return;
	}
	/* insertion by cost plus sort, stable for equal keys */
	foreach(lc, lappend(list_copy(rel->partial_pathlist), path))
	{
		Path	   *p = lfirst(lc);
		Cost		key = p->total_cost + gx_partial_sort_cost(root, p);
		int			i = 0;
		ListCell   *lc2;

		foreach(lc2, sorted)
		{
			Path	   *q = lfirst(lc2);

			if (key < q->total_cost + gx_partial_sort_cost(root, q))
				break;
			i++;
		}
		sorted = list_insert_nth(sorted, i, p);
	}
	rel->partial_pathlist = sorted;
}

/*
 * Divide parallel_page_share of the page cost of each partial sequential
 * scan of a base relation among its processes (costmodel/indexread.c),
 * keeping the list in the order of total cost that add_partial_path keeps.
 */
static void
recost_partial_seqscans(const GxCostParams *p, RelOptInfo *rel)
{
	ListCell   *lc;
	bool		changed = false;

	foreach(lc, rel->partial_pathlist)
	{
		Path	   *path = (Path *) lfirst(lc);
		Cost		discount;

		if (!gx_partial_seqscan_discount(p, rel, path, &discount))
			continue;
		path->total_cost -= discount;
		changed = true;
	}
	if (changed)
		list_sort(rel->partial_pathlist, compare_total_cost);
}

/* Add 'charge' (divided among a partial path's processes) to seq scans. */
static void
charge_seqscans(List **paths, Cost charge)
{
	ListCell   *lc;
	bool		changed = false;

	foreach(lc, *paths)
	{
		Path	   *path = (Path *) lfirst(lc);

		if (path->pathtype != T_SeqScan || path->param_info != NULL)
			continue;
		path->total_cost += path->parallel_workers > 0 ?
			charge / gx_parallel_divisor(path->parallel_workers) : charge;
		changed = true;
	}
	if (changed)
		list_sort(*paths, compare_total_cost);
}

/*
 * Charge the sequential scans of base relation 'rel' (a plain table) for
 * stepping over the columns its filter reads (costmodel/deform.c).
 */
static void
recost_deform(const GxCostParams *p, RelOptInfo *rel, RangeTblEntry *rte)
{
	Relation	relation;
	Cost		charge;

	if (p->stock_deform_us <= 0 || rte->rtekind != RTE_RELATION ||
		rel->baserestrictinfo == NIL)
		return;
	relation = table_open(rte->relid, NoLock);
	charge = gx_deform_charge(p, rel, RelationGetDescr(relation));
	table_close(relation, NoLock);
	if (charge <= 0)
		return;
	charge_seqscans(&rel->pathlist, charge);
	charge_seqscans(&rel->partial_pathlist, charge);
}

/*
 * Re-cost the scans PostgreSQL made for a base relation with the page
 * and column costs calibration measured: partial sequential scans,
 * sequential scans' column stepping, index and bitmap scans.
 */
static void
recost_base_rel_scans(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte)
{
	const GxCostParams *p;

	if (!gpuext_enabled || rel->reloptkind != RELOPT_BASEREL)
		return;
	gx_cost_refresh();
	p = gx_cost_params();
	recost_partial_seqscans(p, rel);
	recost_deform(p, rel, rte);
	gx_recost_index_paths(p, root, rel);
}

/*
 * Re-cost the paths PostgreSQL made for the relation whose rows go to the
 * client, for their result stream (gx_output_recost).
 */
static void
recost_result_stream(PlannerInfo *root, RelOptInfo *rel)
{
	const GxCostParams *p;
	ListCell   *lc;
	bool		changed = false;

	if (!gpuext_enabled || IS_DUMMY_REL(rel))
		return;
	gx_cost_refresh();
	p = gx_cost_params();
	/* the same charge for every serial path keeps their order */
	foreach(lc, rel->pathlist)
		(void) gx_output_recost(p, root, rel, (Path *) lfirst(lc));
	foreach(lc, rel->partial_pathlist)
		changed |= gx_output_recost(p, root, rel, (Path *) lfirst(lc));
	if (changed)
		list_sort(rel->partial_pathlist, compare_total_cost);
}

/* set_rel_pathlist_hook: re-cost the paths PostgreSQL made for a relation. */
static void
recost_rel_paths(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);
	recost_base_rel_scans(root, rel, rte);
	recost_result_stream(root, rel);
}

/*
 * create_upper_paths_hook: re-cost the paths of an upper relation before
 * they compete (and before GpuAgg compares with them), then put its lists
 * back in the order of total cost.
 */
static void
recost_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
				   RelOptInfo *output_rel, void *extra)
{
	if (prev_create_upper_paths_hook)
		prev_create_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	if (!gpuext_enabled)
		return;
	gx_cost_refresh();
	if (!gx_recost_upper_paths(gx_cost_params(), root, stage, output_rel, gx_is_gpuext_path))
		return;
	/* the cheapest first again: callers take linitial(partial_pathlist) */
	list_sort(output_rel->pathlist, compare_total_cost);
	list_sort(output_rel->partial_pathlist, compare_total_cost);
}

/*
 * Install the hooks; from _PG_init, before GpuScan's and GpuAgg's, which
 * add their paths to the re-costed ones.
 */
void
gx_paths_init(void)
{
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = recost_rel_paths;
	prev_create_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = recost_upper_paths;
}
