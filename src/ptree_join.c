/*-------------------------------------------------------------------------
 * ptree_join.c
 *		PtreeBatchJoin: an index nested-loop join whose inner side is a
 *		gpuext_ptree index, probed a batch of outer rows at a time.
 *
 * For an inner join of any outer path with a table that has a gpuext_ptree
 * index on a column compared by = with an expression of the outer side,
 * the node reads up to gpuext.ptree_join_batch outer rows, computes their
 * keys, looks them all up at once (the index's prefix-tree mirror for main,
 * on the GPU when the batch is large enough, and one pass over the delta:
 * ptree_lookup_batch), then fetches the inner rows of each outer row's
 * TIDs, checks the remaining join quals and projects.  Output order is the
 * outer order, as a nested loop's.
 *
 * The scan tuple is custom_scan_tlist: the outer Vars, then the inner
 * Vars, that the target list, the quals and the key expression need
 * (custom_private holds where each comes from).  Only plain SELECTs without
 * row marks get this path (no EvalPlanQual rechecks of the join), only
 * inner joins, never parallel, never parameterized.
 *
 * IDENTIFICATION
 *		src/ptree_join.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "batchjoin.h"
#include "gpuext.h"
#include "ptree.h"

bool		ptree_enable_join = true;
int			ptree_join_batch = 1024;

static set_join_pathlist_hook_type prev_set_join_pathlist_hook = NULL;

/* custom_private of the path and the plan */
enum
{
	PJ_INDEX,					/* Oid of the index */
	PJ_ARGTYPE,					/* type of the outer key expression */
	PJ_SOURCES,					/* per custom_scan_tlist entry: 0 outer, 1 inner */
	PJ_ATTNOS					/* outer: resno in the outer plan; inner: heap attno */
};

typedef struct PtreeJoinState
{
	CustomScanState css;
	Relation	heap;
	Relation	index;
	Oid			keytype;
	Oid			argtype;
	ExprState  *keyexpr;
	BatchJoinColumns cols;		/* where each scan tuple column comes from */
	TupleTableSlot *heapslot;
	TupleTableSlot *outerslot;	/* a batch's outer row, deformed */
	IndexFetchTableData *fetch;
	MemoryContext batch_ctx;
	/* the current batch */
	MinimalTuple *outer;
	int			nouter;
	int			cur;
	int64	   *tidoff;
	ItemPointerData *tids;
	int64		curtid;
	bool		outer_done;
	PtreeEngine engine;			/* where the lookups run */
	/* for EXPLAIN ANALYZE */
	int64		batches;
	int64		probes;
} PtreeJoinState;

static Plan *ptree_join_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							 List *tlist, List *clauses, List *custom_plans);
static Node *ptree_join_create_state(CustomScan *cscan);
static void ptree_join_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *ptree_join_exec(CustomScanState *node);
static void ptree_join_end(CustomScanState *node);
static void ptree_join_rescan(CustomScanState *node);
static void ptree_join_explain(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomPathMethods ptree_join_path_methods = {
	.CustomName = "PtreeBatchJoin",
	.PlanCustomPath = ptree_join_plan,
};

static const CustomScanMethods ptree_join_plan_methods = {
	.CustomName = "PtreeBatchJoin",
	.CreateCustomScanState = ptree_join_create_state,
};

static const CustomExecMethods ptree_join_exec_methods = {
	.CustomName = "PtreeBatchJoin",
	.BeginCustomScan = ptree_join_begin,
	.ExecCustomScan = ptree_join_exec,
	.EndCustomScan = ptree_join_end,
	.ReScanCustomScan = ptree_join_rescan,
	.ExplainCustomScan = ptree_join_explain,
};

/*
 * Only plain SELECTs, at every query level up to the top: no EvalPlanQual
 * can recheck a join this node produced
 */
static bool
ptree_join_query_ok(PlannerInfo *root)
{
	for (; root != NULL; root = root->parent_root)
		if (root->parse->commandType != CMD_SELECT || root->parse->rowMarks != NIL ||
			root->parse->hasForUpdate)
			return false;
	return true;
}

/*
 * Is expr of the form index column = outer expression (either side)?  Sets
 * the outer expression and its type
 */
static bool
ptree_join_clause(RestrictInfo *rinfo, IndexOptInfo *index, Relids outer_relids,
				  Expr **outer_expr, Oid *argtype)
{
	OpExpr	   *op;
	Node	   *left,
			   *right,
			   *other;
	Var		   *col;
	Oid			lefttype,
				righttype;
	int			strategy;
	Oid			opno;

	if (!IsA(rinfo->clause, OpExpr) || rinfo->pseudoconstant)
		return false;
	op = (OpExpr *) rinfo->clause;
	if (list_length(op->args) != 2)
		return false;
	left = linitial(op->args);
	right = lsecond(op->args);
	while (IsA(left, RelabelType))
		left = (Node *) ((RelabelType *) left)->arg;
	while (IsA(right, RelabelType))
		right = (Node *) ((RelabelType *) right)->arg;
	opno = op->opno;
	if (IsA(left, Var) && ((Var *) left)->varno == index->rel->relid)
	{
		col = (Var *) left;
		other = lsecond(op->args);
	}
	else if (IsA(right, Var) && ((Var *) right)->varno == index->rel->relid)
	{
		col = (Var *) right;
		other = linitial(op->args);
		opno = get_commutator(opno);
		if (!OidIsValid(opno))
			return false;
	}
	else
		return false;
	if (col->varattno != index->indexkeys[0] || col->varlevelsup != 0)
		return false;
	if (!bms_is_subset(pull_varnos(NULL, other), outer_relids) ||
		bms_is_empty(pull_varnos(NULL, other)) ||
		contain_volatile_functions(other))
		return false;
	if (!op_in_opfamily(opno, index->opfamily[0]))
		return false;
	get_op_opfamily_properties(opno, index->opfamily[0], false, &strategy, &lefttype, &righttype);
	if (strategy != PTREE_EQ || lefttype != index->opcintype[0])
		return false;
	if (op->inputcollid != index->indexcollations[0] && OidIsValid(index->indexcollations[0]) &&
		index->opcintype[0] == TEXTOID)
		return false;
	*outer_expr = (Expr *) other;
	*argtype = righttype;
	return true;
}

/*
 * The clauses of a list of RestrictInfos, pseudoconstant ones included
 */
static List *
ptree_join_clauses(List *rinfos)
{
	List	   *out = NIL;
	ListCell   *lc;

	foreach(lc, rinfos)
		out = lappend(out, ((RestrictInfo *) lfirst(lc))->clause);
	return out;
}

/*
 * set_join_pathlist_hook: offer a PtreeBatchJoin for inner joins with a
 * gpuext_ptree index on the inner relation
 */
static void
ptree_join_add_paths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
					 RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	ListCell   *lc;
	Oid			ptree_am;
	Path	   *outer_path;
	RangeTblEntry *rte;

	if (prev_set_join_pathlist_hook)
		prev_set_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);

	if (!gpuext_enabled || !ptree_enable_join || jointype != JOIN_INNER ||
		innerrel->reloptkind != RELOPT_BASEREL || innerrel->rtekind != RTE_RELATION ||
		innerrel->indexlist == NIL || !bms_is_empty(innerrel->lateral_relids) ||
		!bms_is_empty(outerrel->lateral_relids) || !ptree_join_query_ok(root))
		return;
	rte = planner_rt_fetch(innerrel->relid, root);
	if (rte->inh || rte->relkind != RELKIND_RELATION || rte->tablesample)
		return;
	outer_path = outerrel->cheapest_total_path;
	if (outer_path == NULL || outer_path->param_info != NULL)
		return;
	/* every column the join passes on must be a plain user column */
	if (!batchjoin_vars_ok((Node *) joinrel->reltarget->exprs) ||
		!batchjoin_vars_ok((Node *) ptree_join_clauses(extra->restrictlist)) ||
		!batchjoin_vars_ok((Node *) ptree_join_clauses(innerrel->baserestrictinfo)))
		return;
	/* no row-level security or security barrier quals to keep in order */
	foreach(lc, innerrel->baserestrictinfo)
		if (((RestrictInfo *) lfirst(lc))->security_level > 0)
			return;
	foreach(lc, extra->restrictlist)
		if (((RestrictInfo *) lfirst(lc))->security_level > 0)
			return;

	ptree_am = get_am_oid("gpuext_ptree", true);
	foreach(lc, innerrel->indexlist)
	{
		IndexOptInfo *index = (IndexOptInfo *) lfirst(lc);
		ListCell   *lc2;

		if (index->relam != ptree_am || index->indpred != NIL || index->indexkeys[0] == 0)
			continue;
		foreach(lc2, extra->restrictlist)
		{
			RestrictInfo *rinfo = (RestrictInfo *) lfirst(lc2);
			Expr	   *outer_expr;
			Oid			argtype;
			CustomPath *cpath;
			double		outer_rows = outer_path->rows;
			double		join_rows = joinrel->rows;
			double		heap_pages;
			Cost		probe_cost;
			List	   *quals = NIL;
			ListCell   *lc3;

			if (!ptree_join_clause(rinfo, index, outerrel->relids, &outer_expr, &argtype))
				continue;
			foreach(lc3, extra->restrictlist)
				if (lfirst(lc3) != rinfo)
					quals = lappend(quals, lfirst(lc3));

			cpath = batchjoin_make_path(joinrel, outer_path, &ptree_join_path_methods);
			/*
			 * Cost: the outer path, a lookup per outer row in the mirror
			 * (a few dependent reads: the cost of an operator), the
			 * heap pages of the matches as an index scan fetches them,
			 * and the join quals and output per row
			 */
			probe_cost = 4 * cpu_operator_cost + cpu_tuple_cost;
			heap_pages = index_pages_fetched(join_rows, innerrel->pages, (double) index->pages, root);
			cpath->path.startup_cost = outer_path->startup_cost;
			cpath->path.total_cost = outer_path->total_cost + outer_rows * probe_cost +
				heap_pages * random_page_cost +
				join_rows * (cpu_tuple_cost + cpu_operator_cost * (1 + list_length(quals))) +
				index->pages * seq_page_cost;	/* the mirror's build, amortized once */
			cpath->custom_private = list_make3(makeInteger((int) index->indexoid),
											   makeInteger((int) argtype),
											   list_make2(outer_expr, quals));
			add_path(joinrel, &cpath->path);
		}
	}
}

/*
 * PlanCustomPath: the CustomScan and its scan tuple
 */
static Plan *
ptree_join_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan;
	Plan	   *outer_plan = linitial(custom_plans);
	List	   *exprs = lthird(best_path->custom_private);
	Expr	   *outer_expr = linitial(exprs);
	List	   *quals = NIL;
	List	   *scan_tlist;
	List	   *sources;
	List	   *attnos;
	RelOptInfo *innerrel = NULL;
	ListCell   *lc;
	Index		inner_relid;
	IndexOptInfo *index = NULL;
	Oid			indexoid = (Oid) intVal(linitial(best_path->custom_private));
	int			i;

	/* the inner relation: the one whose index this is */
	for (i = 1; i < root->simple_rel_array_size; i++)
	{
		RelOptInfo *r = root->simple_rel_array[i];

		if (r == NULL || r->reloptkind != RELOPT_BASEREL)
			continue;
		foreach(lc, r->indexlist)
			if (((IndexOptInfo *) lfirst(lc))->indexoid == indexoid &&
				bms_is_member(r->relid, rel->relids))
			{
				innerrel = r;
				index = lfirst(lc);
			}
	}
	if (innerrel == NULL)
		elog(ERROR, "PtreeBatchJoin: inner relation of index %u not found", indexoid);
	inner_relid = innerrel->relid;
	(void) index;

	/* the other join clauses and the inner table's own, all of them */
	quals = list_concat(ptree_join_clauses(lsecond(exprs)),
						ptree_join_clauses(innerrel->baserestrictinfo));

	scan_tlist = batchjoin_scan_tlist((Node *) list_make3(tlist, quals, outer_expr),
									  inner_relid, outer_plan, "PtreeBatchJoin",
									  &sources, &attnos);

	cscan = batchjoin_make_plan(rel, best_path, tlist, quals, outer_expr,
								custom_plans, scan_tlist, &ptree_join_plan_methods);
	cscan->custom_private = list_make4(linitial(best_path->custom_private),
									   lsecond(best_path->custom_private),
									   sources, attnos);
	/* the inner relation's OID, for the executor */
	cscan->custom_private = lappend(cscan->custom_private,
									makeInteger((int) planner_rt_fetch(inner_relid, root)->relid));
	return &cscan->scan.plan;
}

/*
 * CreateCustomScanState
 */
static Node *
ptree_join_create_state(CustomScan *cscan)
{
	PtreeJoinState *pj = (PtreeJoinState *) newNode(sizeof(PtreeJoinState), T_CustomScanState);

	pj->css.methods = &ptree_join_exec_methods;
	return (Node *) pj;
}

/*
 * BeginCustomScan: the outer plan, the inner table and its index
 */
static void
ptree_join_begin(CustomScanState *node, EState *estate, int eflags)
{
	PtreeJoinState *pj = (PtreeJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *sources = lthird(cscan->custom_private);
	List	   *attnos = lfourth(cscan->custom_private);
	Oid			heapoid = (Oid) intVal(list_nth(cscan->custom_private, 4));
	Plan	   *outer_plan = linitial(cscan->custom_plans);

	outerPlanState(node) = ExecInitNode(outer_plan, estate, eflags);
	pj->index = index_open((Oid) intVal(linitial(cscan->custom_private)), AccessShareLock);
	pj->heap = table_open(heapoid, NoLock);	/* locked by the executor's range table */
	pj->keytype = pj->index->rd_opcintype[0];
	pj->argtype = (Oid) intVal(lsecond(cscan->custom_private));
	pj->keyexpr = ExecInitExpr(linitial(cscan->custom_exprs), &node->ss.ps);
	batchjoin_columns_init(&pj->cols, sources, attnos);
	pj->heapslot = table_slot_create(pj->heap, NULL);
	pj->outerslot = MakeSingleTupleTableSlot(ExecGetResultType(outerPlanState(node)),
											 &TTSOpsMinimalTuple);
	pj->fetch = table_index_fetch_begin(pj->heap);
	pj->batch_ctx = AllocSetContextCreate(estate->es_query_cxt, "PtreeBatchJoin batch",
										  ALLOCSET_DEFAULT_SIZES);
	pj->nouter = 0;
	pj->cur = 0;
	pj->outer_done = false;
	ptree_engine_init(&pj->engine);
}

/*
 * Fill the scan slot from the current outer row and (with inner) the
 * fetched heap row; without inner the inner columns are NULL
 */
static void
ptree_join_fill(PtreeJoinState *pj, bool inner)
{
	batchjoin_fill(&pj->cols, pj->css.ss.ss_ScanTupleSlot, pj->outerslot,
				   inner ? pj->heapslot : NULL);
}

/*
 * Read the next batch of outer rows and look their keys up; false when
 * the outer side is done
 */
static bool
ptree_join_next_batch(PtreeJoinState *pj)
{
	PlanState  *outer = outerPlanState(&pj->css);
	ExprContext *econtext = pj->css.ss.ps.ps_ExprContext;
	MemoryContext old;
	PtreeKey   *probes;
	bool	   *valid;
	int			n = 0;

	if (pj->outer_done)
		return false;
	ExecClearTuple(pj->outerslot);
	MemoryContextReset(pj->batch_ctx);
	old = MemoryContextSwitchTo(pj->batch_ctx);
	pj->outer = palloc(sizeof(MinimalTuple) * ptree_join_batch);
	probes = palloc(sizeof(PtreeKey) * ptree_join_batch);
	valid = palloc(sizeof(bool) * ptree_join_batch);
	MemoryContextSwitchTo(old);

	while (n < ptree_join_batch)
	{
		TupleTableSlot *slot = ExecProcNode(outer);
		Datum		key;
		bool		isnull;

		if (TupIsNull(slot))
		{
			pj->outer_done = true;
			break;
		}
		old = MemoryContextSwitchTo(pj->batch_ctx);
		pj->outer[n] = ExecCopySlotMinimalTuple(slot);
		MemoryContextSwitchTo(old);
		ExecStoreMinimalTuple(pj->outer[n], pj->outerslot, false);
		ptree_join_fill(pj, false);
		econtext->ecxt_scantuple = pj->css.ss.ss_ScanTupleSlot;
		ResetExprContext(econtext);
		key = ExecEvalExprSwitchContext(pj->keyexpr, econtext, &isnull);
		valid[n] = !isnull;
		if (!isnull)
		{
			char	   *fix;
			PtreeKey	k;

			old = MemoryContextSwitchTo(pj->batch_ctx);
			fix = palloc(8);
			ptree_make_key(pj->keytype, ptree_widen(pj->keytype, pj->argtype, key), false, &k, fix);
			probes[n] = k;
			if (k.data != fix)
			{
				/* text: keep a copy, the datum lives in the per-row context */
				char	   *copy = palloc(Max(k.len, 1));

				memcpy(copy, k.data, k.len);
				probes[n].data = copy;
			}
			MemoryContextSwitchTo(old);
		}
		n++;
	}
	pj->nouter = n;
	pj->cur = 0;
	if (n == 0)
		return false;
	old = MemoryContextSwitchTo(pj->batch_ctx);
	ptree_lookup_batch(pj->index, &pj->engine, probes, valid, n, &pj->tidoff, &pj->tids);
	MemoryContextSwitchTo(old);
	pj->curtid = pj->tidoff[0];
	ExecStoreMinimalTuple(pj->outer[0], pj->outerslot, false);
	pj->batches++;
	pj->probes += n;
	return true;
}

/*
 * ExecScan access method: the next joined row (before quals and projection)
 */
static TupleTableSlot *
ptree_join_next(ScanState *ss)
{
	PtreeJoinState *pj = (PtreeJoinState *) ss;
	Snapshot	snapshot = ss->ps.state->es_snapshot;

	for (;;)
	{
		while (pj->cur < pj->nouter)
		{
			while (pj->curtid < pj->tidoff[pj->cur + 1])
			{
				ItemPointerData tid = pj->tids[pj->curtid++];

				CHECK_FOR_INTERRUPTS();
				if (batchjoin_fetch_inner(pj->fetch, &tid, snapshot, pj->heapslot))
				{
					ptree_join_fill(pj, true);
					return ss->ss_ScanTupleSlot;
				}
			}
			pj->cur++;
			if (pj->cur < pj->nouter)
			{
				pj->curtid = pj->tidoff[pj->cur];
				ExecStoreMinimalTuple(pj->outer[pj->cur], pj->outerslot, false);
			}
		}
		if (!ptree_join_next_batch(pj))
			return ExecClearTuple(ss->ss_ScanTupleSlot);
	}
}

/*
 * ExecScan recheck method: never called (no EvalPlanQual for this node)
 */
static bool
ptree_join_recheck(ScanState *ss, TupleTableSlot *slot)
{
	elog(ERROR, "PtreeBatchJoin cannot recheck a row");
	return false;
}

/*
 * ExecCustomScan
 */
static TupleTableSlot *
ptree_join_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, ptree_join_next, ptree_join_recheck);
}

/*
 * EndCustomScan
 */
static void
ptree_join_end(CustomScanState *node)
{
	PtreeJoinState *pj = (PtreeJoinState *) node;

	ExecEndNode(outerPlanState(node));
	table_index_fetch_end(pj->fetch);
	ExecDropSingleTupleTableSlot(pj->heapslot);
	ExecDropSingleTupleTableSlot(pj->outerslot);
	index_close(pj->index, AccessShareLock);
	table_close(pj->heap, NoLock);
}

/*
 * ReScanCustomScan
 */
static void
ptree_join_rescan(CustomScanState *node)
{
	PtreeJoinState *pj = (PtreeJoinState *) node;

	ExecReScan(outerPlanState(node));
	pj->nouter = 0;
	pj->cur = 0;
	pj->outer_done = false;
	ExecClearTuple(pj->outerslot);
	MemoryContextReset(pj->batch_ctx);
}

/*
 * ExplainCustomScan
 */
static void
ptree_join_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	PtreeJoinState *pj = (PtreeJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	char	   *keystr;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	keystr = deparse_expression(linitial(cscan->custom_exprs), context, true, false);
	ExplainPropertyText("Inner Index", RelationGetRelationName(pj->index), es);
	ExplainPropertyText("Probe Key", keystr, es);
	ExplainPropertyInteger("Batch Size", NULL, ptree_join_batch, es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Batches", NULL, pj->batches, es);
		ExplainPropertyInteger("Probes", NULL, pj->probes, es);
	}
	ptree_engine_explain(&pj->engine, es);
}

/*
 * Register the node and the planner hook (with shared_preload_libraries)
 */
void
gx_ptree_join_init(void)
{
	DefineCustomBoolVariable("gpuext.enable_ptree_join",
							 "Joins probe a gpuext_ptree index a batch of outer rows at a time (PtreeBatchJoin).",
							 NULL, &ptree_enable_join, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.ptree_join_batch",
							"Outer rows per batch of a PtreeBatchJoin.",
							NULL, &ptree_join_batch, 1024, 1, 1000000,
							PGC_USERSET, 0, NULL, NULL, NULL);
	RegisterCustomScanMethods(&ptree_join_plan_methods);
	prev_set_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = ptree_join_add_paths;
}
