/*-------------------------------------------------------------------------
 * gxgist_join.c
 *		GistJoin: a spatial join (a JOIN b ON b.col OP a.expr) run as
 *		batches of probes into b's gpuext_gist index.
 *
 * A CustomScan over the join relation, offered from set_join_pathlist_hook
 * for inner joins whose inner side is a plain table with a gpuext_gist
 * index on a column compared by one of its operators with an expression of
 * the outer side.  The node reads up to gpuext.gist_join_batch outer rows,
 * evaluates their keys, runs one level-synchronous walk for the whole
 * batch (gxg_walk: each key queued on the nodes it reaches; on the GPU,
 * cuda/rtree.cu, through a copy of the tree in device memory that the
 * node keeps for its life, rescans included; under a Gather the leader
 * makes the copy before its workers start and every participant searches
 * it, gxg_device_share), fetches the
 * visible version of each inner row (HOT chains followed, the query's
 * snapshot) and returns outer + inner rows.  The index condition is exact
 * and not rechecked; the other join clauses and the inner table's own
 * restrictions are evaluated on each joined row.
 *
 * The scan tuple is custom_scan_tlist: every Var the target list, the
 * quals and the outer key need, each taken from the outer plan's tuple or
 * from the inner heap tuple (the map is in custom_private).
 *
 * Not offered: joins other than INNER, SELECT FOR UPDATE and data-
 * modifying statements (EvalPlanQual), queries with security barrier quals
 * (row-level security, security barrier views: the quals' order matters),
 * placeholders, system columns or whole-row references, pseudoconstant
 * clauses, parameterized paths.
 *
 * IDENTIFICATION
 *		src/gxgist_join.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/relation.h"
#include "access/table.h"
#include "access/parallel.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"

#include "batchjoin.h"
#include "gxgist.h"

static bool gxg_enable_join = true;
static int	gxg_join_batch = 65536;
static set_join_pathlist_hook_type prev_set_join_pathlist_hook = NULL;

/* custom_private of the plan: these Integer nodes, then the source map
 * (two integer lists: from_inner, attnos; see batchjoin_scan_tlist) */
enum
{
	GXJ_INDEX_OID,
	GXJ_HEAP_OID,
	GXJ_STRATEGY,
	GXJ_ARGTYPE,
	GXJ_OPNO,
	GXJ_ATTNO,
	GXJ_FROM_INNER,
	GXJ_ATTNOS
};

typedef struct GxgJoinState
{
	CustomScanState css;
	Relation	heap;
	Relation	index;
	ExprState  *key;
	int			strategy;
	Oid			argtype;
	BatchJoinColumns cols;		/* where each scan tuple column comes from */
	TupleTableSlot *outer_slot; /* an outer row of the batch */
	TupleTableSlot *heap_slot;	/* an inner row */
	IndexFetchTableData *fetch;
	MemoryContext batch_ctx;
	MinimalTuple *outer_rows;	/* the batch, by query number */
	GxRtQuery  *queries;
	GxRtPair   *pairs;
	int64		npairs;
	int64		next;
	bool		found;			/* the current TID has a visible row */
	bool		outer_done;
	bool		skip_fetch;		/* no inner column needed: all-visible rows
								 * are not fetched (index-only scan style) */
	GxgDevice  *dev;			/* the tree on the GPU, kept across rescans */
} GxgJoinState;

static Plan *gxg_join_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						   List *tlist, List *clauses, List *custom_plans);
static Node *gxg_join_create_state(CustomScan *cscan);
static void gxg_join_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *gxg_join_exec(CustomScanState *node);
static void gxg_join_end(CustomScanState *node);
static void gxg_join_rescan(CustomScanState *node);
static void gxg_join_explain(CustomScanState *node, List *ancestors, ExplainState *es);
static Size gxg_join_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void gxg_join_initialize_dsm(CustomScanState *node, ParallelContext *pcxt,
									void *coordinate);
static void gxg_join_initialize_worker(CustomScanState *node, shm_toc *toc,
									   void *coordinate);

static const CustomPathMethods gxg_join_path_methods = {
	.CustomName = "GistJoin",
	.PlanCustomPath = gxg_join_plan,
};

static const CustomScanMethods gxg_join_plan_methods = {
	.CustomName = "GistJoin",
	.CreateCustomScanState = gxg_join_create_state,
};

static const CustomExecMethods gxg_join_exec_methods = {
	.CustomName = "GistJoin",
	.BeginCustomScan = gxg_join_begin,
	.ExecCustomScan = gxg_join_exec,
	.EndCustomScan = gxg_join_end,
	.ReScanCustomScan = gxg_join_rescan,
	.ExplainCustomScan = gxg_join_explain,
	.EstimateDSMCustomScan = gxg_join_estimate_dsm,
	.InitializeDSMCustomScan = gxg_join_initialize_dsm,
	.InitializeWorkerCustomScan = gxg_join_initialize_worker,
};

/*
 * The index probe of a join clause: inner.col OP outer_expr (or commuted),
 * with a gpuext_gist index on col whose opfamily has OP.  Fills the out
 * arguments and returns true when found.
 */
static bool
gxg_join_match(PlannerInfo *root, RestrictInfo *rinfo, RelOptInfo *outerrel,
			   RelOptInfo *innerrel, Oid amoid, IndexOptInfo **index,
			   Expr **outer_expr, int *strategy, Oid *opno_out, AttrNumber *attno)
{
	OpExpr	   *op;

	if (rinfo->pseudoconstant || !IsA(rinfo->clause, OpExpr))
		return false;
	op = (OpExpr *) rinfo->clause;
	if (list_length(op->args) != 2)
		return false;
	for (int side = 0; side < 2; side++)
	{
		Node	   *v = list_nth(op->args, side);
		Node	   *other = list_nth(op->args, 1 - side);
		Relids		other_relids = side == 0 ? rinfo->right_relids : rinfo->left_relids;
		Oid			opno = side == 0 ? op->opno : get_commutator(op->opno);
		ListCell   *lc;

		if (!IsA(v, Var) || ((Var *) v)->varno != innerrel->relid ||
			((Var *) v)->varlevelsup != 0 || !OidIsValid(opno))
			continue;
		if (bms_is_empty(other_relids) || !bms_is_subset(other_relids, outerrel->relids) ||
			contain_volatile_functions(other))
			continue;
		foreach(lc, innerrel->indexlist)
		{
			IndexOptInfo *idx = lfirst(lc);
			int			s;

			if (idx->relam != amoid || idx->indpred != NIL ||
				idx->ncolumns != 1 || idx->indexkeys[0] != ((Var *) v)->varattno)
				continue;
			s = get_op_opfamily_strategy(opno, idx->opfamily[0]);
			if (s < 1 || s > GX_RT_NSTRATEGIES)
				continue;
			*index = idx;
			*outer_expr = (Expr *) other;
			*strategy = s;
			*opno_out = opno;
			*attno = ((Var *) v)->varattno;
			return true;
		}
	}
	return false;
}

/*
 * A GistJoin path over outer_path (a partial one for a partial path: its
 * rows are one worker's share).  Cost: the outer path, a descent and the
 * leaves reached per outer row (one entry test each), the inner rows
 * fetched as an index scan would fetch them, and the host quals on every
 * joined row.
 */
static CustomPath *
gxg_join_path(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *innerrel,
			  IndexOptInfo *index, Path *outer_path, QualCost *qcost, List *private)
{
	CustomPath *cpath;
	double		outer_rows = Max(outer_path->rows, 1.0);
	double		rows = batchjoin_path_rows(joinrel, outer_path);
	double		fanout = GXG_MAX_NODE_SIZE * 0.7;
	double		levels;
	double		per_probe;
	double		pages_fetched;

	levels = (innerrel->tuples > 1) ? ceil(log(innerrel->tuples) / log(fanout)) : 1;
	per_probe = (levels + rows / outer_rows / fanout) * fanout * gxg_entry_test_cost();
	pages_fetched = index_pages_fetched(rows, innerrel->pages, (double) index->pages, root);

	cpath = batchjoin_make_path(joinrel, outer_path, &gxg_join_path_methods);
	cpath->path.rows = rows;
	cpath->path.startup_cost = outer_path->startup_cost + qcost->startup;
	cpath->path.total_cost = outer_path->total_cost + qcost->startup
		+ outer_rows * per_probe
		+ pages_fetched * random_page_cost
		+ rows * (cpu_tuple_cost + cpu_index_tuple_cost + qcost->per_tuple)
		+ rows * joinrel->reltarget->cost.per_tuple;
	cpath->custom_private = private;
	return cpath;
}

/*
 * set_join_pathlist_hook: offer a GistJoin path for an inner join probing
 * the inner table's gpuext_gist index with the outer rows' keys.
 */
static void
gxg_join_pathlist(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
				  RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	Oid			amoid;
	ListCell   *lc;
	RestrictInfo *key_rinfo = NULL;
	IndexOptInfo *index = NULL;
	Expr	   *outer_expr = NULL;
	int			strategy = 0;
	Oid			opno = InvalidOid;
	AttrNumber	attno = 0;
	Path	   *outer_path;
	Path	   *partial_outer;
	CustomPath *cpath;
	List	   *host_rinfos = NIL;
	List	   *private;
	QualCost	qcost;

	if (prev_set_join_pathlist_hook)
		prev_set_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);

	if (!gxg_enable_join || jointype != JOIN_INNER ||
		innerrel->reloptkind != RELOPT_BASEREL || innerrel->rtekind != RTE_RELATION ||
		innerrel->indexlist == NIL || root->parse->commandType != CMD_SELECT ||
		root->parse->rowMarks != NIL || root->qual_security_level > 0 ||
		!bms_is_empty(joinrel->lateral_relids) ||
		!bms_is_empty(innerrel->lateral_relids))
		return;
	amoid = get_am_oid("gpuext_gist", true);
	if (!OidIsValid(amoid))
		return;

	/* the inner table's restrictions first, as its scan would apply them */
	foreach(lc, innerrel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst(lc);

		if (rinfo->pseudoconstant)
			return;
		host_rinfos = lappend(host_rinfos, rinfo);
	}
	foreach(lc, extra->restrictlist)
	{
		RestrictInfo *rinfo = lfirst(lc);

		if (rinfo->pseudoconstant)
			return;
		if (key_rinfo == NULL &&
			gxg_join_match(root, rinfo, outerrel, innerrel, amoid, &index,
						   &outer_expr, &strategy, &opno, &attno))
			key_rinfo = rinfo;
		else
			host_rinfos = lappend(host_rinfos, rinfo);
	}
	if (key_rinfo == NULL)
		return;

	outer_path = outerrel->cheapest_total_path;
	if (outer_path == NULL || outer_path->param_info != NULL)
		return;
	partial_outer = (joinrel->consider_parallel && innerrel->consider_parallel &&
					 outerrel->partial_pathlist != NIL)
		? linitial(outerrel->partial_pathlist) : NULL;
	if (partial_outer && partial_outer->param_info != NULL)
		partial_outer = NULL;

	/* plain columns only, and every outer column in the outer path's output */
	if (!batchjoin_vars_ok((Node *) joinrel->reltarget->exprs) ||
		!batchjoin_vars_ok((Node *) extract_actual_clauses(host_rinfos, false)) ||
		!batchjoin_vars_ok((Node *) outer_expr))
		return;
	{
		List	   *vars = pull_var_clause((Node *) list_make3(joinrel->reltarget->exprs,
															   extract_actual_clauses(host_rinfos, false),
															   outer_expr), 0);

		foreach(lc, vars)
		{
			Var		   *v = lfirst(lc);

			if (v->varno != innerrel->relid &&
				!list_member(outer_path->pathtarget->exprs, v))
				return;
			if (v->varno != innerrel->relid && partial_outer &&
				!list_member(partial_outer->pathtarget->exprs, v))
				partial_outer = NULL;
		}
	}

	cost_qual_eval(&qcost, host_rinfos, root);
	private = list_make4(key_rinfo, host_rinfos, outer_expr,
						 lappend_int(list_make4_int(strategy, (int) opno, attno,
													(int) index->indexoid),
									 (int) innerrel->relid));
	add_path(joinrel, &gxg_join_path(root, joinrel, innerrel, index, outer_path,
									 &qcost, private)->path);

	/*
	 * Partial: the workers of a Gather share the outer rows (a partial outer
	 * path), each probing the index with its own; as a parallel nested loop
	 * over an index scan
	 */
	if (partial_outer && partial_outer->parallel_safe &&
		is_parallel_safe(root, (Node *) outer_expr) &&
		is_parallel_safe(root, (Node *) extract_actual_clauses(host_rinfos, false)))
	{
		cpath = gxg_join_path(root, joinrel, innerrel, index, partial_outer, &qcost, private);
		cpath->path.parallel_safe = true;
		/* for the DSM callbacks: the workers search the leader's device copy */
		cpath->path.parallel_aware = true;
		cpath->path.parallel_workers = partial_outer->parallel_workers;
		add_partial_path(joinrel, &cpath->path);
	}
}

/* PlanCustomPath: the CustomScan, its scan tuple and the source map */
static Plan *
gxg_join_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			  List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan;
	Plan	   *outer_plan = linitial(custom_plans);
	List	   *host_rinfos = lsecond(best_path->custom_private);
	Expr	   *outer_expr = lthird(best_path->custom_private);
	List	   *ints = lfourth(best_path->custom_private);
	Oid			indexoid = (Oid) list_nth_int(ints, 3);
	Oid			heapoid = IndexGetRelation(indexoid, false);
	List	   *host_quals = extract_actual_clauses(host_rinfos, false);
	List	   *scan_tlist;
	List	   *from_inner;
	List	   *attnos;
	List	   *priv;
	Index		inner_relid = (Index) list_nth_int(ints, 4);

	priv = list_make1(makeInteger((int) indexoid));
	priv = lappend(priv, makeInteger((int) heapoid));
	priv = lappend(priv, makeInteger(list_nth_int(ints, 0)));
	/* the argument type follows from the strategy (a domain is its base) */
	priv = lappend(priv, makeInteger((list_nth_int(ints, 0) == GX_RT_CONTAINS_PT ||
									  list_nth_int(ints, 0) == GX_RT_PT_SAME)
									 ? (int) POINTOID : (int) BOXOID));
	priv = lappend(priv, makeInteger(list_nth_int(ints, 1)));
	priv = lappend(priv, makeInteger(list_nth_int(ints, 2)));

	/* the scan tuple: every Var needed, outer ones from the outer plan */
	scan_tlist = batchjoin_scan_tlist((Node *) list_make3(tlist, host_quals, outer_expr),
									  inner_relid, outer_plan, "GistJoin",
									  &from_inner, &attnos);
	priv = lappend(priv, from_inner);
	priv = lappend(priv, attnos);

	cscan = batchjoin_make_plan(rel, best_path, tlist, host_quals, outer_expr,
								custom_plans, scan_tlist, &gxg_join_plan_methods);
	cscan->custom_private = priv;
	(void) clauses;
	return &cscan->scan.plan;
}

/* CreateCustomScanState */
static Node *
gxg_join_create_state(CustomScan *cscan)
{
	GxgJoinState *js = palloc0(sizeof(GxgJoinState));

	NodeSetTag(js, T_CustomScanState);
	js->css.methods = &gxg_join_exec_methods;
	return (Node *) js;
}

/* BeginCustomScan: the outer plan, the relations, the key expression */
static void
gxg_join_begin(CustomScanState *node, EState *estate, int eflags)
{
	GxgJoinState *js = (GxgJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	PlanState  *outer;

	outer = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(outer);
	js->heap = table_open((Oid) intVal(list_nth(priv, GXJ_HEAP_OID)), AccessShareLock);
	js->index = index_open((Oid) intVal(list_nth(priv, GXJ_INDEX_OID)), AccessShareLock);
	js->strategy = intVal(list_nth(priv, GXJ_STRATEGY));
	js->argtype = (Oid) intVal(list_nth(priv, GXJ_ARGTYPE));
	js->key = ExecInitExpr(linitial(cscan->custom_exprs), &node->ss.ps);
	batchjoin_columns_init(&js->cols, list_nth(priv, GXJ_FROM_INNER),
						   list_nth(priv, GXJ_ATTNOS));
	js->outer_slot = ExecInitExtraTupleSlot(estate, ExecGetResultType(outer),
											&TTSOpsMinimalTuple);
	js->heap_slot = table_slot_create(js->heap, &estate->es_tupleTable);
	js->fetch = table_index_fetch_begin(js->heap);
	js->batch_ctx = AllocSetContextCreate(estate->es_query_cxt, "GistJoin batch",
										  ALLOCSET_DEFAULT_SIZES);
	js->outer_done = false;
	js->npairs = js->next = 0;
	js->dev = IsMVCCSnapshot(estate->es_snapshot) ? gxg_device_create() : NULL;
	/* all-visible means visible to this snapshot only for MVCC snapshots */
	js->skip_fetch = js->cols.inner_maxatt == 0 && IsMVCCSnapshot(estate->es_snapshot);
}

/* Fill the scan tuple from the outer row (and the inner row, or NULLs) */
static TupleTableSlot *
gxg_join_fill(GxgJoinState *js, TupleTableSlot *outer, TupleTableSlot *inner)
{
	return batchjoin_fill(&js->cols, js->css.ss.ss_ScanTupleSlot, outer, inner);
}

/*
 * Put a batch's pairs in the order gxg_join_next consumes them: the pairs
 * it fetches in heap order (TID, then query; a row fetched once), after
 * the all-visible pairs of a node that fetches nothing for them, which
 * need no order.
 */
static void
gxg_join_order_pairs(GxgJoinState *js)
{
	int64		nvis = 0;

	if (js->skip_fetch)
	{
		for (int64 i = 0; i < js->npairs; i++)
		{
			if (js->pairs[i].pad & GXG_PAIR_ALL_VISIBLE)
			{
				GxRtPair	t = js->pairs[nvis];

				js->pairs[nvis++] = js->pairs[i];
				js->pairs[i] = t;
			}
		}
	}
	gxg_sort_pairs(js->pairs + nvis, js->npairs - nvis, true);
}

/* Read a batch of outer rows, probe the index with their keys */
static void
gxg_join_load_batch(GxgJoinState *js)
{
	PlanState  *outer = linitial(js->css.custom_ps);
	ExprContext *econtext = js->css.ss.ps.ps_ExprContext;
	uint32		nq = 0;
	MemoryContext old;

	uint32		cap = (uint32) Min(gxg_join_batch, 1024);

	MemoryContextReset(js->batch_ctx);
	js->pairs = NULL;
	js->npairs = js->next = 0;
	js->outer_rows = MemoryContextAlloc(js->batch_ctx, cap * sizeof(MinimalTuple));
	js->queries = MemoryContextAlloc(js->batch_ctx, cap * sizeof(GxRtQuery));
	while (nq < (uint32) gxg_join_batch)
	{
		TupleTableSlot *slot;
		Datum		key;
		bool		isnull;

		if (nq == cap)
		{
			/* a batch also ends when its outer rows fill work_mem */
			if (MemoryContextMemAllocated(js->batch_ctx, false) >= (Size) work_mem * 1024)
				break;
			cap = (uint32) Min((uint64) cap * 2, (uint64) gxg_join_batch);
			js->outer_rows = repalloc(js->outer_rows, cap * sizeof(MinimalTuple));
			js->queries = repalloc(js->queries, cap * sizeof(GxRtQuery));
		}
		slot = ExecProcNode(outer);

		if (TupIsNull(slot))
		{
			js->outer_done = true;
			break;
		}
		ResetExprContext(econtext);
		econtext->ecxt_scantuple = gxg_join_fill(js, slot, NULL);
		key = ExecEvalExprSwitchContext(js->key, econtext, &isnull);
		if (isnull)
			continue;			/* every operator is strict */
		gxg_query_of(key, js->argtype, js->strategy, 0, &js->queries[nq]);
		old = MemoryContextSwitchTo(js->batch_ctx);
		js->outer_rows[nq] = ExecCopySlotMinimalTuple(slot);
		MemoryContextSwitchTo(old);
		nq++;
	}
	if (nq > 0)
	{
		old = MemoryContextSwitchTo(js->batch_ctx);
		js->pairs = gxg_walk(js->index, js->dev, js->queries, nq, NULL, 0, 0,
							 js->skip_fetch ? js->heap : NULL, &js->npairs);
		gxg_join_order_pairs(js);
		MemoryContextSwitchTo(old);
	}
}

/* ExecScan access method: the next joined row */
static TupleTableSlot *
gxg_join_next(ScanState *ss)
{
	GxgJoinState *js = (GxgJoinState *) ss;
	Snapshot	snapshot = ss->ps.state->es_snapshot;

	for (;;)
	{
		while (js->next < js->npairs)
		{
			GxRtPair   *p = &js->pairs[js->next++];
			ItemPointerData tid;

			CHECK_FOR_INTERRUPTS();
			ItemPointerSet(&tid, p->blk, p->off);
			/*
			 * pairs are in TID order: a row is fetched once for all its
			 * probes; not at all when no inner column is needed and its
			 * page was all-visible during the walk (gxg_mark_all_visible)
			 */
			if (js->skip_fetch && (p->pad & GXG_PAIR_ALL_VISIBLE))
				js->found = true;
			else if (js->next == 1 || p->blk != p[-1].blk || p->off != p[-1].off)
				js->found = batchjoin_fetch_inner(js->fetch, &tid, snapshot, js->heap_slot);
			if (!js->found)
				continue;
			ExecStoreMinimalTuple(js->outer_rows[p->query], js->outer_slot, false);
			return gxg_join_fill(js, js->outer_slot, js->heap_slot);
		}
		if (js->outer_done)
			return ExecClearTuple(ss->ss_ScanTupleSlot);
		gxg_join_load_batch(js);
	}
}

/* EvalPlanQual never reaches this node (no row marks, SELECT only) */
static bool
gxg_join_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

/* ExecCustomScan: the joined rows through ExecScan (quals, projection) */
static TupleTableSlot *
gxg_join_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, gxg_join_next, gxg_join_recheck);
}

/* EndCustomScan: the outer plan, the heap fetcher, the relations */
static void
gxg_join_end(CustomScanState *node)
{
	GxgJoinState *js = (GxgJoinState *) node;

	ExecEndNode(linitial(node->custom_ps));
	gxg_device_release(js->dev);
	js->dev = NULL;
	table_index_fetch_end(js->fetch);
	index_close(js->index, AccessShareLock);
	table_close(js->heap, AccessShareLock);
	MemoryContextDelete(js->batch_ctx);
}

/* ReScanCustomScan: start over from the first outer row */
static void
gxg_join_rescan(CustomScanState *node)
{
	GxgJoinState *js = (GxgJoinState *) node;
	PlanState  *outer = linitial(node->custom_ps);

	if (outer->chgParam == NULL)
		ExecReScan(outer);
	MemoryContextReset(js->batch_ctx);
	js->pairs = NULL;
	js->npairs = js->next = 0;
	js->outer_done = false;
}

/* EXPLAIN: the index, its condition, the batch size */
static void
gxg_join_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GxgJoinState *js = (GxgJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	List	   *context;
	char	   *key;
	char	   *col;

	context = set_deparse_context_plan(es->deparse_cxt, (Plan *) cscan, ancestors);
	key = deparse_expression(linitial(cscan->custom_exprs), context, true, false);
	col = get_attname(RelationGetRelid(js->heap), intVal(list_nth(priv, GXJ_ATTNO)), false);
	ExplainPropertyText("Index", RelationGetRelationName(js->index), es);
	ExplainPropertyText("Index Cond",
						psprintf("(%s %s %s)", quote_identifier(col),
								 get_opname((Oid) intVal(list_nth(priv, GXJ_OPNO))), key),
						es);
	ExplainPropertyInteger("Batch Size", NULL, gxg_join_batch, es);
	/* with ANALYZE: where the batches ran (GPU, CPU engine, index pages) */
	gxg_device_explain(js->dev, es);
}

/* EstimateDSMCustomScan: room for the description of the leader's device copy */
static Size
gxg_join_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return gxg_device_shared_size();
}

/*
 * InitializeDSMCustomScan (the leader, before the workers start): copy the
 * tree to the device now, if batches will go there, and describe the copy
 * for the workers.  Across rescans both stay valid (the node keeps its
 * copy), so there is nothing to reinitialize.
 */
static void
gxg_join_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GxgJoinState *js = (GxgJoinState *) node;

	gxg_device_share(js->dev, js->index, (uint32) gxg_join_batch, coordinate);
}

/* InitializeWorkerCustomScan: search the leader's device copy, if it made one */
static void
gxg_join_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GxgJoinState *js = (GxgJoinState *) node;

	gxg_device_adopt(js->dev, coordinate);
}

/*
 * GUCs, the planner hook and the plan methods; called from gx_gist_init
 * (_PG_init).
 */
void
gx_gist_join_init(void)
{
	DefineCustomBoolVariable("gpuext.enable_gist_join",
							 "Plans spatial joins as batched probes of a gpuext_gist index (GistJoin).",
							 NULL, &gxg_enable_join, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.gist_join_batch",
							"Outer rows per batch of GistJoin probes.",
							"A batch also ends when its outer rows fill work_mem.",
							&gxg_join_batch, 65536, 1, 1024 * 1024,
							PGC_USERSET, 0, NULL, NULL, NULL);
	prev_set_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = gxg_join_pathlist;
	RegisterCustomScanMethods(&gxg_join_plan_methods);
}
