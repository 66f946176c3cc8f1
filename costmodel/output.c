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
 * So, from the planner's set_rel_pathlist hook (src/paths.c: before
 * GpuScan adds its paths, which it re-costs the same way as it makes them:
 * the re-costed stock paths must be there when add_path and
 * add_partial_path compare them with GpuScan's), for the only relation of
 * a top-level SELECT whose rows go straight to the client (no
 * aggregation, grouping, DISTINCT, window functions, set operations or
 * set-returning functions):
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
#include "optimizer/paths.h"

#include "cost.h"

/*
 * Do the relation's rows go straight to the client?  True for the only
 * base relation of a top-level SELECT with nothing between its rows and
 * the result but a sort, a limit or a projection.
 */
bool
gx_rows_go_to_client(PlannerInfo *root, RelOptInfo *rel)
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
 * The change to the total cost of one unparameterized path of 'rel' for
 * its result stream (see the file comment), in *change: a serial path
 * pays for the rows it sends to the client, a partial one loses what its
 * leader's stream hides.  Returns false where the path is not re-costed.
 * The stock paths and GpuScan's own are re-costed alike.
 */
bool
gx_output_charge(const GxCostParams *p, PlannerInfo *root, RelOptInfo *rel, Path *path,
				 Cost *change)
{
	Query	   *parse = root->parse;
	double		rows = rel->rows;

	if (p->force_offload || p->client_row_us <= 0 ||
		path->param_info != NULL || !gx_rows_go_to_client(root, rel))
		return false;
	if (!path->parallel_aware)
	{
		/* a sort takes every row; with a LIMIT, only the limit's reach the client */
		if (parse->sortClause != NIL && root->limit_tuples >= 0)
			rows = Min(rows, root->limit_tuples);
		*change = rows * p->client_row_us / p->cost_unit_us;
		return true;
	}
	/* a Gather takes the workers' rows only where no sort comes first */
	if (parse->sortClause != NIL)
		return false;
	*change = -Min(path->total_cost - path->startup_cost,
				   parallel_tuple_cost * rel->rows);
	return true;
}

/*
 * The cost of sorting a partial path's rows in each process for the
 * query's ORDER BY (nothing when it comes sorted), as PostgreSQL will cost
 * the Sort it puts under a Gather Merge.  The planner orders the partial
 * paths of a relation whose rows are sorted next by their cost plus this
 * (src/paths.c): PostgreSQL sorts the first one only.
 */
Cost
gx_partial_sort_cost(PlannerInfo *root, Path *path)
{
	Path		sort;

	if (pathkeys_contained_in(root->query_pathkeys, path->pathkeys))
		return 0;
	cost_sort(&sort, root, root->query_pathkeys, path->total_cost, path->rows,
			  path->pathtarget->width, 0.0, work_mem, root->limit_tuples);
	return sort.total_cost - path->total_cost;
}
