/*-------------------------------------------------------------------------
 * gpuscan.c
 *		GpuScan: a sequential scan of a heap table whose quals run on the
 *		device, reading pages in place in shared_buffers.
 *
 * Planner: from set_rel_pathlist_hook, a CustomPath for base relations
 * with at least one device-executable qual, costed by costmodel/, plus a
 * parallel-aware partial path.  Quals the device cannot run stay host
 * quals on the same node (partial pushdown).
 *
 * Executor: batches of pinned pages go through the pipeline; the device
 * returns, per page, a bitmap of rows that pass and a bitmap of rows to
 * recheck on the host.  Rows are returned straight from the pinned pages
 * (no copy); host quals and the projection run as in any scan.  A row to
 * recheck is evaluated with PostgreSQL's own executor, which also raises
 * any error (overflow, division by zero) with PostgreSQL's SQLSTATE.
 *
 * IDENTIFICATION
 *		src/gpuscan.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "access/heapam.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "codegen.h"
#include "colcache.h"
#include "costparams.h"
#include "gpuscan.h"
#include "paths.h"
#include "pipeline.h"

typedef struct GpuScanState
{
	CustomScanState css;
	List	   *all_quals;		/* every qual, in PostgreSQL's order */
	List	   *plan_device_quals;	/* those the plan gives to the device */
	List	   *device_quals;	/* of those, the ones in the program */
	ExprState  *recheck_state;	/* all quals: rows the device could not decide */
	ExprState  *pass_state;		/* quals not in the program: rows it passed */
	MemoryContext program_cxt;	/* the program and the states above */
	bool		program_built;
	GxProgram  *program;
	GxPipeline	pipe;
	bool		pipe_started;

	/* the batch being consumed */
	GxPipeBatch *cur;
	uint32		cur_page;
	uint32		cur_word;
	uint32		cur_bits;		/* rows left in the current bitmap word */
	HeapTupleData tuple;

	/* statistics */
	uint64		rows_from_device;
	uint64		rows_rechecked;
} GpuScanState;

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

static Plan *gpuscan_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						  List *tlist, List *clauses, List *custom_plans);
static Node *gpuscan_create_state(CustomScan *cscan);
static void gpuscan_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *gpuscan_exec(CustomScanState *node);
static void gpuscan_end(CustomScanState *node);
static void gpuscan_rescan(CustomScanState *node);
static Size gpuscan_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void gpuscan_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void gpuscan_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void gpuscan_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate);
static void gpuscan_explain(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomPathMethods gpuscan_path_methods = {
	.CustomName = "GpuScan",
	.PlanCustomPath = gpuscan_plan,
};

static const CustomScanMethods gpuscan_plan_methods = {
	.CustomName = "GpuScan",
	.CreateCustomScanState = gpuscan_create_state,
};

static const CustomExecMethods gpuscan_exec_methods = {
	.CustomName = "GpuScan",
	.BeginCustomScan = gpuscan_begin,
	.ExecCustomScan = gpuscan_exec,
	.EndCustomScan = gpuscan_end,
	.ReScanCustomScan = gpuscan_rescan,
	.EstimateDSMCustomScan = gpuscan_estimate_dsm,
	.InitializeDSMCustomScan = gpuscan_init_dsm,
	.ReInitializeDSMCustomScan = gpuscan_reinit_dsm,
	.InitializeWorkerCustomScan = gpuscan_init_worker,
	.ExplainCustomScan = gpuscan_explain,
};

/* ---------------------------------------------------------------------
 * Planner
 * ---------------------------------------------------------------------
 */

/* Is this path one of gpuext's (GpuScan, GpuAgg)? */
bool
gx_is_gpuext_path(Path *path)
{
	return IsA(path, CustomPath) &&
		strncmp(((CustomPath *) path)->methods->CustomName, "Gpu", 3) == 0;
}

/*
 * Can gpuext scan this relation at all?  Heap tables and materialized
 * views in shared buffers (not temporary ones, whose pages live in
 * backend-local memory), without TABLESAMPLE.
 */
static bool
relation_is_scannable(RelOptInfo *rel, RangeTblEntry *rte)
{
	if (rel->reloptkind != RELOPT_BASEREL && rel->reloptkind != RELOPT_OTHER_MEMBER_REL)
		return false;
	if (rte->rtekind != RTE_RELATION || rte->tablesample != NULL || rte->inh)
		return false;
	if (rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW)
		return false;
	return true;
}

/*
 * The order in which PostgreSQL's executor evaluates a list of quals:
 * that of order_qual_clauses (createplan.c, not exported), which the plan
 * of a scan or a join's filter gets.  By security level (a leakproof qual
 * cheaper than ten operators counting as level 0), then by per-row cost,
 * quals that tie keeping their order (an insertion sort, as there).
 */
List *
gx_order_qual_clauses(PlannerInfo *root, List *clauses)
{
	typedef struct QualItem
	{
		Node	   *clause;
		Cost		cost;
		Index		security_level;
	} QualItem;
	int			nitems = list_length(clauses);
	QualItem   *items;
	List	   *result = NIL;
	ListCell   *lc;
	int			i;

	if (nitems <= 1)
		return list_copy(clauses);
	items = palloc(nitems * sizeof(QualItem));
	i = 0;
	foreach(lc, clauses)
	{
		Node	   *clause = (Node *) lfirst(lc);
		QualCost	qcost;

		cost_qual_eval_node(&qcost, clause, root);
		items[i].clause = clause;
		items[i].cost = qcost.per_tuple;
		if (IsA(clause, RestrictInfo))
		{
			RestrictInfo *rinfo = (RestrictInfo *) clause;

			if (rinfo->leakproof && items[i].cost < 10 * cpu_operator_cost)
				items[i].security_level = 0;
			else
				items[i].security_level = rinfo->security_level;
		}
		else
			items[i].security_level = 0;
		i++;
	}
	for (i = 1; i < nitems; i++)
	{
		QualItem	newitem = items[i];
		int			j;

		for (j = i; j > 0; j--)
		{
			QualItem   *olditem = &items[j - 1];

			if (newitem.security_level > olditem->security_level ||
				(newitem.security_level == olditem->security_level &&
				 newitem.cost >= olditem->cost))
				break;
			items[j] = *olditem;
		}
		items[j] = newitem;
	}
	for (i = 0; i < nitems; i++)
		result = lappend(result, items[i].clause);
	pfree(items);
	return result;
}

bool
gx_split_scan_quals(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte,
					List *clauses, List **device_quals, List **host_quals)
{
	Relation	relation;
	TupleDesc	tupdesc;
	ListCell   *lc;
	bool		ok = true;
	bool		secure = false;
	bool		in_order = true;

	*device_quals = NIL;
	*host_quals = NIL;
	relation = table_open(rte->relid, NoLock);
	if (relation->rd_tableam != GetHeapamTableAmRoutine() ||
		RelationUsesLocalBuffers(relation))
	{
		table_close(relation, NoLock);
		return false;
	}
	tupdesc = RelationGetDescr(relation);
	foreach(lc, gx_order_qual_clauses(root, clauses))
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		const char *why;

		if (ri->security_level > 0)
			secure = true;
		if (in_order && !ri->pseudoconstant &&
			gx_qual_is_device_executable(ri->clause, rel->relid, tupdesc, &why))
			*device_quals = lappend(*device_quals, ri);
		else
		{
			*host_quals = lappend(*host_quals, ri);

			/*
			 * The device runs before the host quals: a qual that PostgreSQL
			 * evaluates after a host qual that could fail (an error, a side
			 * effect) stays on the host, so that a row raises the error
			 * PostgreSQL's order gives it.  (Pseudoconstant quals run once,
			 * before the scan.)
			 */
			if (!ri->pseudoconstant && !gx_qual_is_deferrable(ri->clause))
				in_order = false;
		}
	}
	table_close(relation, NoLock);

	/*
	 * Security barrier quals must run before any other qual; the device
	 * runs first, so with them only a scan whose quals all go to the device
	 * (in their order) is safe.
	 */
	if (secure && *host_quals != NIL)
		ok = false;
	return ok;
}

/* Estimated device instructions per row: about three per qual. */
static double
program_length_estimate(List *device_quals)
{
	return 3.0 * list_length(device_quals);
}

/* Build a GpuScan CustomPath (partial, of at most 'workers', when workers > 0). */
static CustomPath *
make_gpuscan_path(PlannerInfo *root, RelOptInfo *rel, List *device_quals,
				  List *host_quals, int workers, bool gpu)
{
	CustomPath *cpath = makeNode(CustomPath);
	const GxCostParams *cp = gx_cost_params();
	GxScanCostInput in;
	QualCost	host_cost;
	Selectivity dev_sel;
	List	   *host_clauses = NIL;
	ListCell   *lc;

	foreach(lc, host_quals)
		host_clauses = lappend(host_clauses, lfirst_node(RestrictInfo, lc));
	cost_qual_eval(&host_cost, host_clauses, root);
	dev_sel = clauselist_selectivity(root, device_quals, rel->relid, JOIN_INNER, NULL);

	memset(&in, 0, sizeof(in));
	in.pages = rel->pages;
	in.allvisfrac = rel->allvisfrac;
	in.tuples = rel->tuples;
	in.rows_out = clamp_row_est(rel->tuples * dev_sel);
	in.program_len = program_length_estimate(device_quals);
	in.host_qual_per_row = host_cost.per_tuple;
	in.gpu = gpu;
	/* pages a column cache holds: the program reads the quals' columns */
	gx_colcache_cost_input(root, rel, device_quals, &in);
	/* of the most workers it could use, those that pay for their start */
	if (workers > 0)
		workers = gx_choose_scan_workers(cp, &in, workers);
	in.parallel_workers = workers;

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = workers > 0;
	/*
	 * A serial GpuScan on the GPU is kept out of parallel plans: under a
	 * Gather it could only be run in full by every participant (as the
	 * inner side of a join whose outer side is partial, or of a parallel
	 * GpuAgg's join), each scanning the whole table again and queueing for
	 * the one device, where PostgreSQL charges the inner side once, as it
	 * may for a stock scan whose copies run side by side.  On the H100 such
	 * a join took 22 ms against 15 ms for the stock plan it was estimated
	 * to beat (cm_idx_join, session 6).  The partial path is the parallel
	 * one.  (The CPU engine's copies do run side by side.)
	 */
	cpath->path.parallel_safe = rel->consider_parallel && (workers > 0 || !gpu);
	cpath->path.parallel_workers = workers;
	cpath->path.rows = workers > 0 ? clamp_row_est(rel->rows / gx_parallel_divisor(workers)) : rel->rows;
	cpath->path.pathkeys = NIL;
	gx_cost_scan(cp, &in, &cpath->path.startup_cost, &cpath->path.total_cost);
	cpath->path.startup_cost += host_cost.startup;
	cpath->path.total_cost += host_cost.startup;
	/* rows it sends to the client, as the stock paths were (paths.c) */
	(void) gx_output_recost(cp, root, rel, &cpath->path);
	/*
	 * The node projects its own target list (ExecScan), so the planner
	 * needs no Result node above it for expressions or a narrower row.
	 */
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cpath->custom_paths = NIL;
	cpath->custom_private = NIL;
	cpath->methods = &gpuscan_path_methods;
	return cpath;
}

/*
 * With gpuext.force_offload, gpuext's paths are the only ones left for the
 * relation (the planner still chooses between serial and parallel).
 */
static void
keep_only_gpuext_paths(RelOptInfo *rel)
{
	List	   *keep = NIL;
	ListCell   *lc;

	foreach(lc, rel->pathlist)
		if (gx_is_gpuext_path(lfirst(lc)) || ((Path *) lfirst(lc))->param_info != NULL)
			keep = lappend(keep, lfirst(lc));
	rel->pathlist = keep;
	keep = NIL;
	foreach(lc, rel->partial_pathlist)
		if (gx_is_gpuext_path(lfirst(lc)))
			keep = lappend(keep, lfirst(lc));
	rel->partial_pathlist = keep;
}

/*
 * set_rel_pathlist_hook: add GpuScan paths for a base relation.  On the
 * GPU (not forced), a relation whose stock paths already beat any GPU
 * scan's fixed setup (a small table, a primary-key lookup) and that gets
 * no partial path is left before its quals are examined: planning it
 * costs no more than with gpuext off.  A partial path is not made either
 * where a stock path of the relation costs less than a GPU scan's setup
 * and a Gather's (a primary-key lookup in a big table): no plan that
 * gathers it can be cheaper than the stock plan over that path.
 */
static void
gpuscan_add_paths(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	List	   *device_quals;
	List	   *host_quals;
	const char *why;
	const GxCostParams *cp;
	bool		gpu;
	bool		serial;
	int			workers;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);

	if (!gpuext_enabled || !gpuext_enable_gpuscan || !relation_is_scannable(rel, rte))
		return;
	gx_cost_refresh();
	if (IS_DUMMY_REL(rel))
		return;
	cp = gx_cost_params();
	/* without a GPU the CPU engine is only worth it when forced */
	/* gpuext.device = gpu plans for the GPU even while none is up */
	gpu = gpuext_device_mode == GPUEXT_DEVICE_GPU ||
		(gpuext_device_mode == GPUEXT_DEVICE_AUTO && gx_service_has_gpu(&why));
	if (!gpu && !gpuext_force_offload)
		return;
	workers = rel->consider_parallel && rel->lateral_relids == NULL ?
		gx_parallel_scan_workers(cp, rel) : 0;
	/* a serial path that add_path would reject at once is not made */
	serial = gpuext_force_offload ||
		!gx_stock_path_beats(rel->pathlist, gx_gpu_cost_floor(cp), rel->rows, false);
	/* nor a partial one whose Gather would cost more than a whole stock scan */
	if (workers > 0 && !serial &&
		gx_stock_path_beats(rel->pathlist, gx_gpu_cost_floor(cp) + parallel_setup_cost, -1, false))
		workers = 0;
	if (!serial && workers == 0)
		return;
	if (!gx_split_scan_quals(root, rel, rte, rel->baserestrictinfo, &device_quals, &host_quals))
		return;
	if (device_quals == NIL)
		return;

	/* forced: drop the other paths first, so nothing can dominate ours */
	if (gpuext_force_offload)
		keep_only_gpuext_paths(rel);
	if (serial)
		add_path(rel, (Path *) make_gpuscan_path(root, rel, device_quals, host_quals, 0, gpu));

	if (workers > 0)
		gx_add_partial_path(root, rel, (Path *) make_gpuscan_path(root, rel, device_quals,
																  host_quals, workers, gpu));
}

/* PlanCustomPath: device quals go to custom_exprs, the rest are host quals. */
static Plan *
gpuscan_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			 List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	List	   *device_quals;
	List	   *host_quals;

	List	   *all_quals = NIL;
	List	   *on_device = NIL;
	ListCell   *lc;

	if (!gx_split_scan_quals(root, rel, rte, clauses, &device_quals, &host_quals))
		elog(ERROR, "gpuext: relation can no longer be scanned by GpuScan");

	/* every qual in PostgreSQL's order, each marked device or host */
	foreach(lc, clauses)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		if (ri->pseudoconstant)
			continue;
		all_quals = lappend(all_quals, ri->clause);
		on_device = lappend_int(on_device, list_member_ptr(device_quals, ri) ? 1 : 0);
	}
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = extract_actual_clauses(host_quals, false);
	cscan->scan.scanrelid = rel->relid;
	cscan->flags = best_path->flags;
	cscan->custom_exprs = all_quals;
	cscan->custom_private = list_make1(on_device);
	cscan->custom_scan_tlist = NIL;
	cscan->methods = &gpuscan_plan_methods;
	return &cscan->scan.plan;
}

/* ---------------------------------------------------------------------
 * Executor
 * ---------------------------------------------------------------------
 */
static Node *
gpuscan_create_state(CustomScan *cscan)
{
	GpuScanState *gss = (GpuScanState *) newNode(sizeof(GpuScanState), T_CustomScanState);

	ListCell   *lc1,
			   *lc2;

	gss->css.methods = &gpuscan_exec_methods;
	gss->css.flags = cscan->flags;
	gss->all_quals = cscan->custom_exprs;
	forboth(lc1, cscan->custom_exprs, lc2, linitial(cscan->custom_private))
		if (lfirst_int(lc2))
			gss->plan_device_quals = lappend(gss->plan_device_quals, lfirst(lc1));
	return (Node *) gss;
}

/*
 * Build the device program from the plan's device quals, with the current
 * values of Params (so at the first execution and after each rescan, when
 * InitPlans and outer values are known).  Quals that cannot be built now
 * run on the host with the host quals.
 */
static void
build_program(GpuScanState *gss)
{
	ScanState  *ss = &gss->css.ss;
	Index		scanrelid = ((Scan *) ss->ps.plan)->scanrelid;
	List	   *demoted = NIL;
	List	   *on_host = NIL;
	MemoryContext old;
	ListCell   *lc;

	MemoryContextReset(gss->program_cxt);
	old = MemoryContextSwitchTo(gss->program_cxt);
	gss->program = gx_build_qual_program(gss->plan_device_quals, scanrelid,
										 RelationGetDescr(ss->ss_currentRelation),
										 &ss->ps, ss->ps.ps_ExprContext,
										 &gss->device_quals, &demoted);
	/* what the host still checks for passed rows, in PostgreSQL's order */
	foreach(lc, gss->all_quals)
		if (!list_member_ptr(gss->device_quals, lfirst(lc)))
			on_host = lappend(on_host, lfirst(lc));
	gss->pass_state = ExecInitQual(on_host, &ss->ps);
	gss->recheck_state = ExecInitQual(gss->all_quals, &ss->ps);
	MemoryContextSwitchTo(old);
	gx_pipeline_set_program(&gss->pipe, gss->program, gss->program->length);
	gss->program_built = true;
}

/*
 * The scan slot: tuples are returned in place from pinned pages, through
 * a heap-tuple slot (the default custom scan slot is virtual, which has no
 * system columns); the projection and host quals are rebuilt for it.
 */
static void
gpuscan_begin(CustomScanState *node, EState *estate, int eflags)
{
	GpuScanState *gss = (GpuScanState *) node;
	ScanState  *ss = &node->ss;
	TupleDesc	tupdesc = RelationGetDescr(ss->ss_currentRelation);
	Index		scanrelid = ((Scan *) ss->ps.plan)->scanrelid;

	ss->ss_ScanTupleSlot = ExecAllocTableSlot(&estate->es_tupleTable, tupdesc, &TTSOpsHeapTuple);
	ss->ps.scandesc = tupdesc;
	ss->ps.scanops = &TTSOpsHeapTuple;
	ss->ps.scanopsfixed = true;
	ss->ps.scanopsset = true;
	ExecAssignScanProjectionInfoWithVarno(ss, scanrelid);
	/* the node evaluates its quals itself, in PostgreSQL's order */
	ss->ps.qual = NULL;

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	gss->program_cxt = AllocSetContextCreate(CurrentMemoryContext, "GpuScan program",
											 ALLOCSET_SMALL_SIZES);
	gx_pipeline_init(&gss->pipe, ss->ss_currentRelation, estate->es_snapshot,
					 GX_REQ_SCAN, sizeof(GxScanPageOut));
	gss->pipe_started = true;
}

/* Release the batch being consumed. */
static void
finish_current(GpuScanState *gss)
{
	if (gss->cur == NULL)
		return;
	/* the slot points into the batch's pages: clear it before unpinning */
	ExecClearTuple(gss->css.ss.ss_ScanTupleSlot);
	gx_pipeline_release(&gss->pipe, gss->cur);
	gss->cur = NULL;
}

/*
 * The next row of the current batch that the device passed or wants
 * rechecked, stored in the scan slot; false when the batch is exhausted.
 * *recheck says which.
 */
static bool
next_row_of_batch(GpuScanState *gss, bool *recheck)
{
	GxPipeBatch *b = gss->cur;
	GxBatch    *batch = b->pb.batch;
	const GxScanPageOut *outs = (const GxScanPageOut *) gx_batch_out(batch);

	while (gss->cur_page < b->npages)
	{
		const GxScanPageOut *out = &outs[gss->cur_page];

		while (gss->cur_bits == 0 && gss->cur_word < GX_BITMAP_WORDS)
		{
			gss->cur_bits = out->pass[gss->cur_word] | out->recheck[gss->cur_word];
			if (gss->cur_bits == 0)
				gss->cur_word++;
		}
		if (gss->cur_bits != 0)
		{
			int			bit = pg_rightmost_one_pos32(gss->cur_bits);
			OffsetNumber off = gss->cur_word * 32 + bit + 1;
			HeapTuple	tup = &gss->tuple;

			*recheck = (out->recheck[gss->cur_word] >> bit) & 1;
			gss->cur_bits &= gss->cur_bits - 1;
			if (gss->cur_bits == 0)
				gss->cur_word++;

			gx_pipeline_heap_tuple(&gss->pipe, b, gss->cur_page, off, tup);
			ExecStoreHeapTuple(tup, gss->css.ss.ss_ScanTupleSlot, false);
			return true;
		}
		gss->cur_page++;
		gss->cur_word = 0;
		gss->cur_bits = 0;
	}
	return false;
}

/* ExecScan access method: the next row that passed the device quals. */
static TupleTableSlot *
gpuscan_next(ScanState *ss)
{
	GpuScanState *gss = (GpuScanState *) ss;
	ExprContext *econtext = ss->ps.ps_ExprContext;

	for (;;)
	{
		bool		recheck;

		if (gss->cur != NULL && next_row_of_batch(gss, &recheck))
		{
			econtext->ecxt_scantuple = ss->ss_ScanTupleSlot;

			/*
			 * A row the device could not decide gets PostgreSQL's own
			 * evaluation of every qual, in its order (exact values, and its
			 * errors); a row it passed gets the remaining quals.
			 */
			if (recheck)
				gss->rows_rechecked++;
			else
				gss->rows_from_device++;
			if (!ExecQual(recheck ? gss->recheck_state : gss->pass_state, econtext))
			{
				InstrCountFiltered1(ss, 1);
				ResetExprContext(econtext);
				continue;
			}
			pgstat_count_heap_getnext(ss->ss_currentRelation);
			return ss->ss_ScanTupleSlot;
		}
		finish_current(gss);
		if (!gss->program_built)
			build_program(gss);
		gss->cur = gx_pipeline_next(&gss->pipe);
		if (gss->cur == NULL)
			return ExecClearTuple(ss->ss_ScanTupleSlot);
		gss->cur_page = 0;
		gss->cur_word = 0;
		gss->cur_bits = 0;
	}
}

/*
 * EvalPlanQual: a concurrently updated row version must still satisfy
 * every qual (the device's too), checked on the host.
 */
static bool
gpuscan_recheck(ScanState *ss, TupleTableSlot *slot)
{
	GpuScanState *gss = (GpuScanState *) ss;
	ExprContext *econtext = ss->ps.ps_ExprContext;

	if (gss->all_quals == NIL)
		return true;
	if (gss->recheck_state == NULL)
		gss->recheck_state = ExecInitQual(gss->all_quals, &ss->ps);
	econtext->ecxt_scantuple = slot;
	return ExecQual(gss->recheck_state, econtext);
}

static TupleTableSlot *
gpuscan_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, gpuscan_next, gpuscan_recheck);
}

static void
gpuscan_end(CustomScanState *node)
{
	GpuScanState *gss = (GpuScanState *) node;

	if (!gss->pipe_started)
		return;
	finish_current(gss);
	gx_pipeline_end(&gss->pipe);
	gss->pipe_started = false;
}

static void
gpuscan_rescan(CustomScanState *node)
{
	GpuScanState *gss = (GpuScanState *) node;

	finish_current(gss);
	gx_pipeline_reset(&gss->pipe);
	/* Params may have new values: rebuild at the next row */
	gss->program_built = false;
}

static Size
gpuscan_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return table_block_parallelscan_estimate(node->ss.ss_currentRelation);
}

static void
gpuscan_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuScanState *gss = (GpuScanState *) node;
	ParallelBlockTableScanDesc pscan = coordinate;

	table_block_parallelscan_initialize(node->ss.ss_currentRelation, (ParallelTableScanDesc) pscan);
	gss->pipe.pscan = pscan;
}

static void
gpuscan_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	table_block_parallelscan_reinitialize(node->ss.ss_currentRelation,
										  (ParallelTableScanDesc) coordinate);
}

static void
gpuscan_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GpuScanState *gss = (GpuScanState *) node;

	gss->pipe.pscan = coordinate;
}

/* EXPLAIN: device quals, engine, program and, with ANALYZE, the work done. */
static void
gpuscan_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuScanState *gss = (GpuScanState *) node;
	List	   *context;
	bool		useprefix = list_length(es->rtable) > 1 || es->verbose;
	char	   *str;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	str = deparse_expression((Node *) make_ands_explicit(gss->plan_device_quals),
							 context, useprefix, false);
	ExplainPropertyText("GPU Filter", str, es);

	if (!gss->pipe_started)
	{
		if (!gpuext_regression_test_mode)
		{
			const char *why;
			bool		/* gpuext.device = gpu plans for the GPU even while none is up */
	gpu = gpuext_device_mode == GPUEXT_DEVICE_GPU ||
		(gpuext_device_mode == GPUEXT_DEVICE_AUTO && gx_service_has_gpu(&why));

			ExplainPropertyText("Engine", gpu ? "GPU" : "CPU engine", es);
		}
		return;
	}
	if (es->verbose && gss->program)
		ExplainPropertyText("Device Program", gx_program_summary(gss->program), es);
	if (gss->program_built &&
		list_length(gss->device_quals) < list_length(gss->plan_device_quals))
		ExplainPropertyInteger("Device Quals Run on Host", NULL,
							   list_length(gss->plan_device_quals) - list_length(gss->device_quals), es);
	if (!gpuext_regression_test_mode)
		ExplainPropertyText("Engine", gx_engine_name(&gss->pipe.engine), es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Pages", NULL, gss->pipe.npages, es);
		ExplainPropertyInteger("Rows Rechecked on Host", NULL, gss->rows_rechecked, es);
		gx_pipeline_explain_cache(&gss->pipe, true, es);
		if (!gpuext_regression_test_mode)
		{
			gx_pipeline_explain_batches(&gss->pipe, es);
			gx_pipeline_explain_times(&gss->pipe, es);
		}
	}
}

/* Register the hook and the node; from _PG_init. */
void
gx_gpuscan_init(void)
{
	RegisterCustomScanMethods(&gpuscan_plan_methods);
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = gpuscan_add_paths;
}
