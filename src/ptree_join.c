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
 * inner joins, never parameterized.
 *
 * Parallel: over a partial outer path, the workers of a Gather share the
 * outer rows, each probing its own batches.  The leader shares its mirror
 * of the index (built at the start if it has none) through the DSM
 * segment that holds it (ptree_mirror_share): the workers map it instead
 * of building one each, and look their batches up on the CPU engine (a
 * device copy of the mirror belongs to the leader; each worker loading
 * its own would cost the GPU's memory and the upload many times).  The
 * leader's batches go to the GPU as in a serial join.
 *
 * IDENTIFICATION
 *		src/ptree_join.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
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
#include "optimizer/clauses.h"
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
int			ptree_join_batch = 65536;

static set_join_pathlist_hook_type prev_set_join_pathlist_hook = NULL;

/* custom_private of the path and the plan */
enum
{
	PJ_INDEX,					/* Oid of the index */
	PJ_ARGTYPE,					/* type of the outer key expression */
	PJ_SOURCES,					/* per custom_scan_tlist entry: 0 outer, 1 inner */
	PJ_ATTNOS					/* outer: resno in the outer plan; inner: heap attno */
};

/* what a parallel PtreeBatchJoin's processes share (its DSM chunk) */
typedef struct PtreeJoinShared
{
	bool		has_mirror;		/* the leader's mirror can be mapped */
	dsm_handle	handle;			/* its segment */
	PtreeMirrorKey key;			/* and which mirror it holds */
	pg_atomic_uint64 batches;	/* for EXPLAIN ANALYZE: all processes' */
	pg_atomic_uint64 probes;
} PtreeJoinShared;

typedef struct PtreeJoinState
{
	CustomScanState css;
	Relation	heap;
	Relation	index;
	Oid			keytype;
	Oid			argtype;
	ExprState  *keyexpr;
	AttrNumber	key_outer_att;	/* the key is this outer column (no expression), or 0 */
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
	PtreeJoinShared *shared;	/* parallel: the DSM chunk, else NULL */
} PtreeJoinState;

static Plan *ptree_join_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							 List *tlist, List *clauses, List *custom_plans);
static Node *ptree_join_create_state(CustomScan *cscan);
static void ptree_join_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *ptree_join_exec(CustomScanState *node);
static void ptree_join_end(CustomScanState *node);
static void ptree_join_rescan(CustomScanState *node);
static void ptree_join_explain(CustomScanState *node, List *ancestors, ExplainState *es);
static Size ptree_join_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void ptree_join_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void ptree_join_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void ptree_join_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate);
static void ptree_join_shutdown(CustomScanState *node);

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
	.EstimateDSMCustomScan = ptree_join_estimate_dsm,
	.InitializeDSMCustomScan = ptree_join_init_dsm,
	.ReInitializeDSMCustomScan = ptree_join_reinit_dsm,
	.InitializeWorkerCustomScan = ptree_join_init_worker,
	.ShutdownCustomScan = ptree_join_shutdown,
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

/* Has the relation an index of access method am (InvalidOid: none has)? */
static bool
has_index_of_am(RelOptInfo *rel, Oid am)
{
	ListCell   *lc;

	if (!OidIsValid(am))
		return false;
	foreach(lc, rel->indexlist)
		if (((IndexOptInfo *) lfirst(lc))->relam == am)
			return true;
	return false;
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
 * A PtreeBatchJoin path over outer_path (partial or not: its rows are the
 * outer rows of one process).  Cost: the outer path, a lookup per outer
 * row in the mirror (a few dependent reads: the cost of an operator), the
 * heap pages of the matches as an index scan fetches them, the join quals
 * and output per row, and the mirror's build, amortized once.
 */
static CustomPath *
ptree_join_path(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *innerrel,
				IndexOptInfo *index, Path *outer_path, List *quals, List *private)
{
	CustomPath *cpath;
	double		outer_rows = Max(outer_path->rows, 1.0);
	double		rows = batchjoin_path_rows(joinrel, outer_path);
	double		heap_pages;
	Cost		probe_cost = 4 * cpu_operator_cost + cpu_tuple_cost;

	heap_pages = index_pages_fetched(rows, innerrel->pages, (double) index->pages, root);
	cpath = batchjoin_make_path(joinrel, outer_path, &ptree_join_path_methods);
	cpath->path.rows = rows;
	cpath->path.startup_cost = outer_path->startup_cost;
	cpath->path.total_cost = outer_path->total_cost + outer_rows * probe_cost +
		heap_pages * random_page_cost +
		rows * (cpu_tuple_cost + cpu_operator_cost * (1 + list_length(quals))) +
		index->pages * seq_page_cost;
	cpath->custom_private = private;
	return cpath;
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
	Path	   *partial_outer;
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
	/* most joins have no gpuext_ptree index on their inner side: done */
	ptree_am = get_am_oid("gpuext_ptree", true);
	if (!has_index_of_am(innerrel, ptree_am))
		return;
	outer_path = outerrel->cheapest_total_path;
	if (outer_path == NULL || outer_path->param_info != NULL)
		return;
	partial_outer = (joinrel->consider_parallel && innerrel->consider_parallel &&
					 outerrel->partial_pathlist != NIL)
		? linitial(outerrel->partial_pathlist) : NULL;
	if (partial_outer && (partial_outer->param_info != NULL || !partial_outer->parallel_safe))
		partial_outer = NULL;
	/* every column the join passes on must be a plain user column */
	if (!batchjoin_vars_ok((Node *) joinrel->reltarget->exprs) ||
		!batchjoin_vars_ok((Node *) ptree_join_clauses(extra->restrictlist)) ||
		!batchjoin_vars_ok((Node *) ptree_join_clauses(innerrel->baserestrictinfo)))
		return;
	/* the outer columns the join needs must be in the partial path's output */
	if (partial_outer)
	{
		List	   *vars = pull_var_clause((Node *) list_make2(joinrel->reltarget->exprs,
															   ptree_join_clauses(extra->restrictlist)), 0);

		foreach(lc, vars)
		{
			Var		   *v = lfirst(lc);

			if (v->varno != innerrel->relid && !list_member(partial_outer->pathtarget->exprs, v))
				partial_outer = NULL;
		}
	}
	/* no row-level security or security barrier quals to keep in order */
	foreach(lc, innerrel->baserestrictinfo)
		if (((RestrictInfo *) lfirst(lc))->security_level > 0)
			return;
	foreach(lc, extra->restrictlist)
		if (((RestrictInfo *) lfirst(lc))->security_level > 0)
			return;

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
			List	   *quals = NIL;
			List	   *private;
			ListCell   *lc3;

			if (!ptree_join_clause(rinfo, index, outerrel->relids, &outer_expr, &argtype))
				continue;
			foreach(lc3, extra->restrictlist)
				if (lfirst(lc3) != rinfo)
					quals = lappend(quals, lfirst(lc3));

			private = list_make3(makeInteger((int) index->indexoid),
								 makeInteger((int) argtype),
								 list_make2(outer_expr, quals));
			add_path(joinrel, &ptree_join_path(root, joinrel, innerrel, index, outer_path,
											   quals, private)->path);

			/*
			 * Partial: the workers of a Gather share the outer rows, each
			 * probing the index with its own (the leader's mirror mapped,
			 * see the top)
			 */
			if (partial_outer && is_parallel_safe(root, (Node *) outer_expr) &&
				is_parallel_safe(root, (Node *) ptree_join_clauses(quals)) &&
				is_parallel_safe(root, (Node *) ptree_join_clauses(innerrel->baserestrictinfo)))
			{
				cpath = ptree_join_path(root, joinrel, innerrel, index, partial_outer,
										quals, private);
				cpath->path.parallel_aware = true;
				cpath->path.parallel_safe = true;
				cpath->path.parallel_workers = partial_outer->parallel_workers;
				add_partial_path(joinrel, &cpath->path);
			}
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
	/* a key that is an outer column is read from the outer row itself */
	pj->key_outer_att = 0;
	{
		Expr	   *kexpr = linitial(cscan->custom_exprs);

		while (IsA(kexpr, RelabelType))
			kexpr = ((RelabelType *) kexpr)->arg;
		if (IsA(kexpr, Var) && ((Var *) kexpr)->varno == INDEX_VAR &&
			((Var *) kexpr)->varattno > 0 && ((Var *) kexpr)->varattno <= pj->cols.natts &&
			!pj->cols.from_inner[((Var *) kexpr)->varattno - 1])
			pj->key_outer_att = pj->cols.attno[((Var *) kexpr)->varattno - 1];
	}
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
	/* a worker's lookups stay on the CPU engine (see the top) */
	if (IsParallelWorker())
		pj->engine.no_device = true;
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
	char	   *fix;			/* the normalized fixed-width keys */
	int			n = 0;

	if (pj->outer_done)
		return false;
	ExecClearTuple(pj->outerslot);
	MemoryContextReset(pj->batch_ctx);
	old = MemoryContextSwitchTo(pj->batch_ctx);
	pj->outer = palloc(sizeof(MinimalTuple) * ptree_join_batch);
	probes = palloc(sizeof(PtreeKey) * ptree_join_batch);
	valid = palloc(sizeof(bool) * ptree_join_batch);
	fix = palloc((Size) 8 * ptree_join_batch);
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
		ExecStoreMinimalTuple(pj->outer[n], pj->outerslot, false);
		if (pj->key_outer_att > 0)
		{
			/* the datum is in the batch's copy of the row (detoasted here) */
			key = slot_getattr(pj->outerslot, pj->key_outer_att, &isnull);
			valid[n] = !isnull;
			if (!isnull)
				ptree_make_key(pj->keytype, ptree_widen(pj->keytype, pj->argtype, key), false,
							   &probes[n], fix + (Size) 8 * n);
			MemoryContextSwitchTo(old);
		}
		else
		{
			MemoryContextSwitchTo(old);
			ptree_join_fill(pj, false);
			econtext->ecxt_scantuple = pj->css.ss.ss_ScanTupleSlot;
			ResetExprContext(econtext);
			key = ExecEvalExprSwitchContext(pj->keyexpr, econtext, &isnull);
			valid[n] = !isnull;
			if (!isnull)
			{
				PtreeKey	k;

				ptree_make_key(pj->keytype, ptree_widen(pj->keytype, pj->argtype, key), false, &k,
							   fix + (Size) 8 * n);
				probes[n] = k;
				if (k.data != fix + (Size) 8 * n)
				{
					/* text: keep a copy, the datum lives in the per-row context */
					char	   *copy = MemoryContextAlloc(pj->batch_ctx, Max(k.len, 1));

					memcpy(copy, k.data, k.len);
					probes[n].data = copy;
				}
			}
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
	if (pj->shared)
	{
		pg_atomic_fetch_add_u64(&pj->shared->batches, 1);
		pg_atomic_fetch_add_u64(&pj->shared->probes, n);
	}
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
		/* a parallel join's: every process's (ptree_join_shutdown) */
		ExplainPropertyInteger("Batches", NULL, pj->batches, es);
		ExplainPropertyInteger("Probes", NULL, pj->probes, es);
	}
	ptree_engine_explain(&pj->engine, es);
}

/*
 * EstimateDSMCustomScan: the shared state of a parallel join
 */
static Size
ptree_join_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return sizeof(PtreeJoinShared);
}

/*
 * InitializeDSMCustomScan (the leader): the mirror the workers map, built
 * now if this backend has none
 */
static void
ptree_join_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	PtreeJoinState *pj = (PtreeJoinState *) node;
	PtreeJoinShared *shared = (PtreeJoinShared *) coordinate;

	memset(shared, 0, sizeof(*shared));
	shared->has_mirror = ptree_mirror_share(pj->index, &shared->key, &shared->handle);
	pg_atomic_init_u64(&shared->batches, 0);
	pg_atomic_init_u64(&shared->probes, 0);
	pj->shared = shared;
}

/*
 * ReInitializeDSMCustomScan (the leader, before a rescan's workers start):
 * the counters keep adding up, as a serial node's do across rescans; the
 * mirror, if replaced meanwhile, is one the workers no longer map
 */
static void
ptree_join_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	PtreeJoinState *pj = (PtreeJoinState *) node;
	PtreeJoinShared *shared = (PtreeJoinShared *) coordinate;

	shared->has_mirror = ptree_mirror_share(pj->index, &shared->key, &shared->handle);
}

/*
 * InitializeWorkerCustomScan: map the leader's mirror
 */
static void
ptree_join_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	PtreeJoinState *pj = (PtreeJoinState *) node;
	PtreeJoinShared *shared = (PtreeJoinShared *) coordinate;

	pj->shared = shared;
	if (shared->has_mirror)
		(void) ptree_mirror_adopt(&shared->key, shared->handle);
}

/*
 * ShutdownCustomScan: the leader takes every process's counts for EXPLAIN
 * ANALYZE before the DSM segment goes (workers have added theirs by now)
 */
static void
ptree_join_shutdown(CustomScanState *node)
{
	PtreeJoinState *pj = (PtreeJoinState *) node;

	if (pj->shared && !IsParallelWorker())
	{
		pj->batches = (int64) pg_atomic_read_u64(&pj->shared->batches);
		pj->probes = (int64) pg_atomic_read_u64(&pj->shared->probes);
	}
	pj->shared = NULL;
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
							NULL, &ptree_join_batch, 65536, 1, 1000000,
							PGC_USERSET, 0, NULL, NULL, NULL);
	RegisterCustomScanMethods(&ptree_join_plan_methods);
	prev_set_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = ptree_join_add_paths;
}
