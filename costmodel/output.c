/*-------------------------------------------------------------------------
 * output.c
 *		Price the result rows a query sends to the client where its plans
 *		differ in who sends them: the process that scans, or a Gather's
 *		leader while its workers scan.
 *
 * PostgreSQL charges nothing for sending a result row to the client
 * (output functions, the protocol message, the socket): every plan of a
 * query sends the same rows.  But not in the same way.  A serial plan
 * forms and sends each row in the process that also scans, one after the
 * other; under a Gather the workers scan while the leader sends, at the
 * same time, and PostgreSQL charges the Gather parallel_tuple_cost a row
 * (its leader's work per row) on top of the workers' whole scan, as if
 * the two ran one after the other.  With many result rows, both errors
 * favour the serial plan: on the H100 (session 6) a serial GpuScan
 * returning 150 000 rows to the client was estimated at 44 ms and took
 * 124-149 ms (about 0.7 us a row beyond its scan, where rows it passes
 * to a hash join cost under 0.05 us: the rest is sending them), while
 * the 16-worker stock plan was estimated at 146 ms and took 88 ms (its
 * leader's stream of 0.59 us a row, the workers' 50 ms scan hidden
 * under it).
 *
 * So, from set_rel_pathlist_hook (before GpuScan adds its paths, which
 * it re-costs the same way as it makes them: the re-costed stock paths
 * must be there when add_path and add_partial_path compare them with
 * GpuScan's), for the only relation of a top-level SELECT whose
 * rows go straight to the client (no aggregation, grouping, DISTINCT,
 * window functions, set operations or set-returning functions):
 *	- every serial unparameterized path is charged gpuext.client_row_us
 *	  (measured by gpuext_calibrate()) for each row it returns (under an
 *	  ORDER BY with a LIMIT, at most the LIMIT's rows; without ORDER BY a
 *	  Limit node above scales the charge itself);
 *	- without ORDER BY (a Gather, not a Sort, takes the workers' rows),
 *	  each partial path's run cost is reduced by the part of it that the
 *	  leader's stream hides: min(its run cost, parallel_tuple_cost times
 *	  the relation's rows), so that the Gather costs the slower of the two
 *	  instead of their sum.
 * The default, 0, changes nothing; nor does gpuext.force_offload (which
 * already decides) or gpuext.enabled = off.  Approximate: one price for
 * every row whatever its columns; rows that go to SPI or CREATE TABLE AS
 * cost less than a client's; queries over joins are not re-costed.
 *
 * IDENTIFICATION
 *		costmodel/output.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "utils/guc.h"

#include "cost.h"
#include "gpuext.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

/*
 * Do the relation's rows go straight to the client?  True for the only
 * base relation of a top-level SELECT with nothing between its rows and
 * the result but a sort, a limit or a projection.
 */
static bool
rows_go_to_client(PlannerInfo *root, RelOptInfo *rel)
{
	Query	   *parse = root->parse;

	if (root->parent_root != NULL || parse->commandType != CMD_SELECT ||
		parse->utilityStmt != NULL || parse->rowMarks != NIL)
		return false;
	if (parse->hasAggs || parse->groupClause != NIL || parse->groupingSets != NIL ||
		parse->havingQual != NULL || parse->hasWindowFuncs || parse->distinctClause != NIL ||
		parse->setOperations != NULL || parse->hasTargetSRFs)
		return false;
	return rel->reloptkind == RELOPT_BASEREL &&
		bms_membership(root->all_baserels) == BMS_SINGLETON &&
		bms_is_member(rel->relid, root->all_baserels);
}

/*
 * Re-cost one unparameterized path of 'rel' for its result stream (see the
 * file comment): a serial path pays for the rows it sends to the client, a
 * partial one loses what its leader's stream hides.  Returns whether the
 * cost changed.  GpuScan calls it for its own paths as it makes them.
 */
bool
gx_output_recost(PlannerInfo *root, RelOptInfo *rel, Path *path)
{
	Query	   *parse = root->parse;
	double		rows = rel->rows;

	if (!gpuext_enabled || gpuext_force_offload || gx_client_row_us <= 0 ||
		path->param_info != NULL || !rows_go_to_client(root, rel))
		return false;
	if (!path->parallel_aware)
	{
		/* a sort takes every row; with a LIMIT, only the limit's reach the client */
		if (parse->sortClause != NIL && root->limit_tuples >= 0)
			rows = Min(rows, root->limit_tuples);
		path->total_cost += rows * gx_client_row_us / gx_cost_unit_us;
		return true;
	}
	/* a Gather takes the workers' rows only where no sort comes first */
	if (parse->sortClause != NIL)
		return false;
	path->total_cost -= Min(path->total_cost - path->startup_cost,
							parallel_tuple_cost * rel->rows);
	return true;
}

/*
 * The cost of sorting a partial path's rows in each process for the
 * query's ORDER BY (nothing when it comes sorted), as PostgreSQL will cost
 * the Sort it puts under a Gather Merge.
 */
static Cost
partial_sort_cost(PlannerInfo *root, Path *path)
{
	Path		sort;

	if (pathkeys_contained_in(root->query_pathkeys, path->pathkeys))
		return 0;
	cost_sort(&sort, root, root->query_pathkeys, path->total_cost, path->rows,
			  path->pathtarget->width, 0.0, work_mem, root->limit_tuples);
	return sort.total_cost - path->total_cost;
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
 * one's cost plus the sort of its rows, so that the first, the one
 * PostgreSQL sorts, is the one with the cheapest sorted plan; the costs
 * themselves are unchanged.  Elsewhere plain add_partial_path.
 */
void
gx_add_partial_path(PlannerInfo *root, RelOptInfo *rel, Path *path)
{
	List	   *sorted = NIL;
	ListCell   *lc;

	if (!gpuext_enabled || gpuext_force_offload || root->parse->sortClause == NIL ||
		root->query_pathkeys == NIL || !rows_go_to_client(root, rel))
	{
		add_partial_path(rel, path);
		return;
	}
	/* insertion by cost plus sort, stable for equal keys */
	foreach(lc, lappend(list_copy(rel->partial_pathlist), path))
	{
		Path	   *p = lfirst(lc);
		Cost		key = p->total_cost + partial_sort_cost(root, p);
		int			i = 0;
		ListCell   *lc2;

		foreach(lc2, sorted)
		{
			Path	   *q = lfirst(lc2);

			if (key < q->total_cost + partial_sort_cost(root, q))
				break;
			i++;
		}
		sorted = list_insert_nth(sorted, i, p);
	}
	rel->partial_pathlist = sorted;
}

/* set_rel_pathlist_hook: re-cost the paths PostgreSQL made. */
static void
output_recost_paths(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	ListCell   *lc;
	bool		changed = false;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);

	if (!gpuext_enabled || IS_DUMMY_REL(rel))
		return;
	gx_cost_refresh();
	/* the same charge for every serial path keeps their order */
	foreach(lc, rel->pathlist)
		(void) gx_output_recost(root, rel, (Path *) lfirst(lc));
	foreach(lc, rel->partial_pathlist)
		changed |= gx_output_recost(root, rel, (Path *) lfirst(lc));
	if (changed)
		list_sort(rel->partial_pathlist, gx_compare_total_cost);
}

/* Install the hook; call before the GpuScan hook is installed. */
void
gx_output_cost_init(void)
{
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = output_recost_paths;
}
