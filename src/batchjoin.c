/*-------------------------------------------------------------------------
 * batchjoin.c
 *		Pieces shared by the batched index nested-loop join custom scans
 *		(GistJoin, PtreeBatchJoin): see batchjoin.h.
 *
 * IDENTIFICATION
 *		src/batchjoin.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "executor/tuptable.h"
#include "nodes/pg_list.h"
#include "optimizer/optimizer.h"
#include "optimizer/tlist.h"

#include "batchjoin.h"

/*
 * Is every Var of node a plain user column of this query level (no
 * placeholders, no system or whole-row columns)?  The scan tuple carries
 * only such columns.
 */
bool
batchjoin_vars_ok(Node *node)
{
	List	   *vars = pull_var_clause(node, PVC_INCLUDE_PLACEHOLDERS | PVC_RECURSE_AGGREGATES |
									   PVC_RECURSE_WINDOWFUNCS);
	ListCell   *lc;

	foreach(lc, vars)
	{
		Var		   *v = (Var *) lfirst(lc);

		if (!IsA(v, Var) || v->varattno <= 0 || v->varlevelsup != 0)
			return false;
	}
	return true;
}

/*
 * The joined rows of a batch join over outer_path: joinrel's rows in the
 * share of the outer relation's rows the path reads (all of them, or one
 * process's share when the path is partial).
 */
double
batchjoin_path_rows(RelOptInfo *joinrel, Path *outer_path)
{
	double		outer_rows = Max(outer_path->rows, 1.0);
	double		share = Min(1.0, outer_rows / Max(outer_path->parent->rows, 1.0));

	return clamp_row_est(joinrel->rows * share);
}

/*
 * A CustomPath for joinrel over outer_path: serial, unparameterized,
 * unordered, joinrel's rows and target.  The caller sets the costs and
 * custom_private, then adds it.
 */
CustomPath *
batchjoin_make_path(RelOptInfo *joinrel, Path *outer_path, const CustomPathMethods *methods)
{
	CustomPath *cpath = makeNode(CustomPath);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = joinrel;
	cpath->path.pathtarget = joinrel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;
	cpath->path.parallel_workers = 0;
	cpath->path.rows = joinrel->rows;
	cpath->path.pathkeys = NIL;
	cpath->flags = 0;
	cpath->custom_paths = list_make1(outer_path);
	cpath->methods = methods;
	return cpath;
}

/*
 * The scan tuple (custom_scan_tlist) of a batched join: every Var of
 * needed, once each, in order of appearance.  For each column, from_inner
 * gets 1 for a column of the inner relation (inner_relid), attnos its
 * attribute number, or 0 and the column's resno in the outer plan's
 * output.  node_name prefixes the errors.
 */
List *
batchjoin_scan_tlist(Node *needed, Index inner_relid, Plan *outer_plan,
					 const char *node_name, List **from_inner, List **attnos)
{
	List	   *vars = pull_var_clause(needed, PVC_RECURSE_PLACEHOLDERS | PVC_RECURSE_AGGREGATES |
									   PVC_RECURSE_WINDOWFUNCS);
	List	   *scan_tlist = add_to_flat_tlist(NIL, vars);
	ListCell   *lc;

	*from_inner = NIL;
	*attnos = NIL;
	foreach(lc, scan_tlist)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);
		Var		   *var = (Var *) tle->expr;

		if (!IsA(var, Var) || var->varattno <= 0)
			elog(ERROR, "%s: unexpected scan column", node_name);
		if (var->varno == inner_relid)
		{
			*from_inner = lappend_int(*from_inner, 1);
			*attnos = lappend_int(*attnos, var->varattno);
		}
		else
		{
			TargetEntry *otle = tlist_member((Expr *) var, outer_plan->targetlist);

			if (otle == NULL)
				elog(ERROR, "%s: outer column not in the outer plan's output", node_name);
			*from_inner = lappend_int(*from_inner, 0);
			*attnos = lappend_int(*attnos, otle->resno);
		}
	}
	return scan_tlist;
}

/*
 * The CustomScan of a batched join: no scan relation, the outer plan as
 * its only child, the outer key expression as custom_exprs (so that
 * setrefs fixes it against the scan tuple).  The caller sets
 * custom_private.
 */
CustomScan *
batchjoin_make_plan(RelOptInfo *rel, CustomPath *best_path, List *tlist, List *quals,
					Expr *outer_key, List *custom_plans, List *scan_tlist,
					const CustomScanMethods *methods)
{
	CustomScan *cscan = makeNode(CustomScan);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = quals;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = list_make1(outer_key);
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = rel->relids;
	cscan->methods = methods;
	return cscan;
}

/*
 * The run-time source map, from the two integer lists that
 * batchjoin_scan_tlist made (kept in custom_private)
 */
void
batchjoin_columns_init(BatchJoinColumns *cols, List *from_inner, List *attnos)
{
	ListCell   *lc,
			   *lc2;
	int			i = 0;

	cols->natts = list_length(from_inner);
	cols->from_inner = palloc(Max(cols->natts, 1) * sizeof(int));
	cols->attno = palloc(Max(cols->natts, 1) * sizeof(int));
	cols->inner_maxatt = 0;
	forboth(lc, from_inner, lc2, attnos)
	{
		cols->from_inner[i] = lfirst_int(lc);
		cols->attno[i] = lfirst_int(lc2);
		if (cols->from_inner[i])
			cols->inner_maxatt = Max(cols->inner_maxatt, cols->attno[i]);
		i++;
	}
}

/*
 * Fill the scan slot from an outer row and an inner row; without an inner
 * row (while the outer key is computed) the inner columns are NULL.
 */
TupleTableSlot *
batchjoin_fill(const BatchJoinColumns *cols, TupleTableSlot *scan,
			   TupleTableSlot *outer, TupleTableSlot *inner)
{
	ExecClearTuple(scan);
	slot_getallattrs(outer);
	if (inner)
		slot_getsomeattrs(inner, cols->inner_maxatt);
	for (int i = 0; i < cols->natts; i++)
	{
		int			a = cols->attno[i] - 1;

		if (!cols->from_inner[i])
		{
			scan->tts_values[i] = outer->tts_values[a];
			scan->tts_isnull[i] = outer->tts_isnull[a];
		}
		else if (inner)
		{
			scan->tts_values[i] = inner->tts_values[a];
			scan->tts_isnull[i] = inner->tts_isnull[a];
		}
		else
		{
			scan->tts_values[i] = (Datum) 0;
			scan->tts_isnull[i] = true;
		}
	}
	return ExecStoreVirtualTuple(scan);
}

/*
 * Fetch the version of the inner row at tid that snapshot sees (the HOT
 * chain followed) into slot; false when none is visible.
 */
bool
batchjoin_fetch_inner(IndexFetchTableData *fetch, ItemPointer tid, Snapshot snapshot,
					  TupleTableSlot *slot)
{
	bool		call_again = false;
	bool		all_dead = false;

	ExecClearTuple(slot);
	return table_index_fetch_tuple(fetch, tid, snapshot, slot, &call_again, &all_dead);
}
