/*-------------------------------------------------------------------------
 * gpuagg.c
 *		GpuAgg: GROUP BY aggregation fused with the scan, on the device.
 *
 * Planner: from create_upper_paths_hook (UPPERREL_GROUP_AGG), when the
 * input is one heap table whose quals, group keys and aggregate inputs
 * all run on the device, a CustomPath that scans the table itself and
 * returns finished groups (the final result straight from the device: one
 * pass covers all the data, also with parallel workers, which feed one
 * shared device table).  HAVING and the output expressions run on the
 * host as the node's qual and projection.
 *
 * The node keeps PostgreSQL's own plan for the same rows as a child (the
 * cheapest stock path): when the device cannot finish exactly (a value it
 * cannot decode or accumulate exactly, more groups than the table was
 * sized for, or a GPU failure with gpuext.cpu_fallback on), the device's
 * partial work is discarded and the child runs instead, so the answer is
 * always PostgreSQL's.
 *
 * Plan layout: custom_scan_tlist holds the group keys, then the Aggrefs,
 * then the scan quals (as junk entries), so that setrefs adjusts their
 * Vars; the node's tuple has one column per entry.
 *
 * IDENTIFICATION
 *		src/gpuagg.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include <float.h>
#include <math.h>

#include "access/parallel.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "optimizer/prep.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "portability/instr_time.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/selfuncs.h"
#include "utils/timestamp.h"

#include "aggstate.h"
#include "codegen.h"
#include "colcache.h"
#include "costparams.h"
#include "gpuagg.h"
#include "gpujoin.h"
#include "gpuscan.h"
#include "gx_agg.h"
#include "paths.h"
#include "pipeline.h"
#include "quota.h"

/* how a device accumulator becomes the aggregate's result */
typedef enum GxAggFinal
{
	GXF_COUNT,					/* int8 n */
	GXF_SUM_TO_INT8,			/* sum(int2/int4): int8, NULL if no rows */
	GXF_SUM_TO_NUMERIC,			/* sum(int8), sum(numeric): numeric */
	GXF_SUM_TO_FLOAT8,			/* sum(float8) */
	GXF_SUM_TO_FLOAT4,			/* sum(float4): added in double, rounded once */
	GXF_AVG_TO_NUMERIC,			/* avg of integers and numeric: numeric_div(sum, n) */
	GXF_AVG_TO_FLOAT8,			/* avg(float4/float8) */
	GXF_MINMAX,					/* the value, in the input type */
	GXF_MINMAX_NUMERIC,			/* the numeric at its inputs' display scale */
	GXF_VARIANCE,				/* variance/stddev: PostgreSQL's final function */
	GXF_VARIANCE_FLOAT			/* the same over floats, from double sums */
} GxAggFinal;

typedef struct GxAggDef
{
	Oid			aggfnoid;
	uint8		kind;			/* GxAggKind */
	uint8		final;			/* GxAggFinal */
} GxAggDef;

static const GxAggDef gx_agg_defs[] = {
	{F_COUNT_, GX_AGG_COUNT_STAR, GXF_COUNT},
	{F_COUNT_ANY, GX_AGG_COUNT, GXF_COUNT},
	{F_SUM_INT2, GX_AGG_SUM_INT, GXF_SUM_TO_INT8},
	{F_SUM_INT4, GX_AGG_SUM_INT, GXF_SUM_TO_INT8},
	{F_SUM_INT8, GX_AGG_SUM_INT, GXF_SUM_TO_NUMERIC},
	{F_SUM_NUMERIC, GX_AGG_SUM_NUMERIC, GXF_SUM_TO_NUMERIC},
	{F_SUM_FLOAT8, GX_AGG_SUM_FLOAT, GXF_SUM_TO_FLOAT8},
	{F_SUM_FLOAT4, GX_AGG_SUM_FLOAT, GXF_SUM_TO_FLOAT4},
	{F_AVG_INT2, GX_AGG_SUM_INT, GXF_AVG_TO_NUMERIC},
	{F_AVG_INT4, GX_AGG_SUM_INT, GXF_AVG_TO_NUMERIC},
	{F_AVG_INT8, GX_AGG_SUM_INT, GXF_AVG_TO_NUMERIC},
	{F_AVG_NUMERIC, GX_AGG_SUM_NUMERIC, GXF_AVG_TO_NUMERIC},
	{F_AVG_FLOAT4, GX_AGG_SUM_FLOAT, GXF_AVG_TO_FLOAT8},
	{F_AVG_FLOAT8, GX_AGG_SUM_FLOAT, GXF_AVG_TO_FLOAT8},
	{F_MIN_INT2, GX_AGG_MIN_INT, GXF_MINMAX},
	{F_MIN_INT4, GX_AGG_MIN_INT, GXF_MINMAX},
	{F_MIN_INT8, GX_AGG_MIN_INT, GXF_MINMAX},
	{F_MIN_DATE, GX_AGG_MIN_INT, GXF_MINMAX},
	{F_MIN_TIMESTAMP, GX_AGG_MIN_INT, GXF_MINMAX},
	{F_MIN_TIMESTAMPTZ, GX_AGG_MIN_INT, GXF_MINMAX},
	{F_MAX_INT2, GX_AGG_MAX_INT, GXF_MINMAX},
	{F_MAX_INT4, GX_AGG_MAX_INT, GXF_MINMAX},
	{F_MAX_INT8, GX_AGG_MAX_INT, GXF_MINMAX},
	{F_MAX_DATE, GX_AGG_MAX_INT, GXF_MINMAX},
	{F_MAX_TIMESTAMP, GX_AGG_MAX_INT, GXF_MINMAX},
	{F_MAX_TIMESTAMPTZ, GX_AGG_MAX_INT, GXF_MINMAX},
	{F_MIN_FLOAT4, GX_AGG_MIN_FLOAT, GXF_MINMAX},
	{F_MIN_FLOAT8, GX_AGG_MIN_FLOAT, GXF_MINMAX},
	{F_MAX_FLOAT4, GX_AGG_MAX_FLOAT, GXF_MINMAX},
	{F_MAX_FLOAT8, GX_AGG_MAX_FLOAT, GXF_MINMAX},
	{F_MIN_NUMERIC, GX_AGG_MIN_NUMERIC, GXF_MINMAX_NUMERIC},
	{F_MAX_NUMERIC, GX_AGG_MAX_NUMERIC, GXF_MINMAX_NUMERIC},
#define VARIANCE_DEFS(type, kind, final) \
	{F_VARIANCE_##type, kind, final}, \
	{F_VAR_SAMP_##type, kind, final}, \
	{F_VAR_POP_##type, kind, final}, \
	{F_STDDEV_##type, kind, final}, \
	{F_STDDEV_SAMP_##type, kind, final}, \
	{F_STDDEV_POP_##type, kind, final}
	VARIANCE_DEFS(INT2, GX_AGG_VARIANCE, GXF_VARIANCE),
	VARIANCE_DEFS(INT4, GX_AGG_VARIANCE, GXF_VARIANCE),
	VARIANCE_DEFS(INT8, GX_AGG_VARIANCE, GXF_VARIANCE),
	VARIANCE_DEFS(NUMERIC, GX_AGG_VARIANCE, GXF_VARIANCE),
	VARIANCE_DEFS(FLOAT4, GX_AGG_VARIANCE_FLOAT, GXF_VARIANCE_FLOAT),
	VARIANCE_DEFS(FLOAT8, GX_AGG_VARIANCE_FLOAT, GXF_VARIANCE_FLOAT),
};

/*
 * A float variance from double sums loses digits to cancellation when the
 * inputs' spread is small against their magnitude: when the sum of squared
 * deviations is below this share of the sum of squares (more than three
 * decimal digits cancelled), PostgreSQL's plan (Youngs-Cramer updates)
 * runs instead.
 */
#define FLOAT_VARIANCE_MIN_SHARE	1e-3

/* numeric sums keep this many decimals when the input's scale is unknown */
#define DEFAULT_NUMERIC_SCALE	16

/*
 * Numeric variances square their inputs at the fixed scale, and numeric
 * min/max keep them in 64 bits, so they keep fewer decimals (an input must
 * stay below 2^63 at that scale); inputs with more decimals send the
 * aggregation back to PostgreSQL's plan.
 */
#define DEFAULT_INT64_NUMERIC_SCALE	6
#define MAX_INT64_NUMERIC_SCALE		12

/* shared state of a parallel GpuAgg, in the DSM segment */
typedef struct GpuAggShared
{
	slock_t		mutex;
	uint32		task_id;		/* the device table all participants feed */
	int			nactive;		/* participants still aggregating */
	bool		emitted;		/* the last one has taken the results */
	bool		failed;			/* some participant could not finish */
	char		failure[GX_ERRLEN];
	uint32		join_task_id;	/* a fused join's inner tables on the device,
								 * built and uploaded once by the leader */
	int			join_adopters;	/* workers that used them (EXPLAIN ANALYZE) */
	ParallelBlockTableScanDescData pscan;	/* must be last */
} GpuAggShared;

typedef enum GpuAggPhase
{
	GPUAGG_INIT,
	GPUAGG_EMIT,				/* returning the device's groups */
	GPUAGG_FALLBACK,			/* returning the stock plan's rows */
	GPUAGG_DONE
} GpuAggPhase;

typedef struct GpuAggState
{
	CustomScanState css;
	int			nkeys;
	int			naggs;
	List	   *key_exprs;
	List	   *aggrefs;
	List	   *quals;
	uint64		est_groups;

	/* the device work */
	const GxAggDef **defs;		/* per aggregate */
	GxStateFinisher **finishers;	/* per aggregate: GXF_VARIANCE's functions */
	Oid		   *key_types;
	int32	   *key_typmods;
	int		   *key_scale_acc;	/* numeric keys: index of their scale accumulator */
	GxAggSpec	spec;
	char	   *program;		/* program, then the spec */
	Size		program_len;
	uint64		capacity;
	uint32		local_capacity;
	uint32		local_copies;	/* of the private table, in each GPU block */
	GxPipeline	pipe;
	bool		pipe_started;
	MemoryContext program_cxt;	/* program, spec and their arrays */
	MemoryContext run_cxt;		/* fetched groups of the current run */
	bool		prepared;		/* program built for the current Params */
	uint32		task_id;		/* GPU task, or CPU engine table id */
	bool		task_is_cpu;
	GxAggTable *cpu_table;

	/* parallel query */
	GpuAggShared *shared;

	/* results */
	GpuAggPhase phase;
	char	   *groups;			/* fetched entries */
	uint64		ngroups;
	uint64		next_group;
	bool		empty_group;	/* no GROUP BY and no rows: one initial group */
	PlanState  *fallback;		/* NULL until started (start_fallback) */
	int			eflags;			/* the executor's flags, for start_fallback */
	const char *fallback_reason;
	GxFusedJoin *fj;			/* fused GpuJoin, or NULL */
	List	   *inner_key_idx;	/* program expressions loaded from its inner rows
								 * (positions in program_exprs) */
	uint32		join_table_id;
	int			join_shared_workers;	/* leader: workers that used its join
										 * tables, or -1 */
	uint64		rows_aggregated;
	double		agg_ms;			/* wall time feeding batches */
	double		fetch_ms;		/* wall time fetching the groups */
} GpuAggState;

static create_upper_paths_hook_type prev_create_upper_paths_hook = NULL;

static Plan *gpuagg_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						 List *tlist, List *clauses, List *custom_plans);
static Node *gpuagg_create_state(CustomScan *cscan);
static void gpuagg_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *gpuagg_exec(CustomScanState *node);
static void gpuagg_end(CustomScanState *node);
static void gpuagg_rescan(CustomScanState *node);
static Size gpuagg_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void gpuagg_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void gpuagg_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void gpuagg_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate);
static void gpuagg_shutdown(CustomScanState *node);
static void gpuagg_explain(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomPathMethods gpuagg_path_methods = {
	.CustomName = "GpuAgg",
	.PlanCustomPath = gpuagg_plan,
};

static const CustomScanMethods gpuagg_plan_methods = {
	.CustomName = "GpuAgg",
	.CreateCustomScanState = gpuagg_create_state,
};

static const CustomExecMethods gpuagg_exec_methods = {
	.CustomName = "GpuAgg",
	.BeginCustomScan = gpuagg_begin,
	.ExecCustomScan = gpuagg_exec,
	.EndCustomScan = gpuagg_end,
	.ReScanCustomScan = gpuagg_rescan,
	.EstimateDSMCustomScan = gpuagg_estimate_dsm,
	.InitializeDSMCustomScan = gpuagg_init_dsm,
	.ReInitializeDSMCustomScan = gpuagg_reinit_dsm,
	.InitializeWorkerCustomScan = gpuagg_init_worker,
	.ShutdownCustomScan = gpuagg_shutdown,
	.ExplainCustomScan = gpuagg_explain,
};

/* ---------------------------------------------------------------------
 * Planner
 * ---------------------------------------------------------------------
 */
static const GxAggDef *
lookup_agg(Oid aggfnoid)
{
	for (int i = 0; i < lengthof(gx_agg_defs); i++)
		if (gx_agg_defs[i].aggfnoid == aggfnoid)
			return &gx_agg_defs[i];
	return NULL;
}

/* Can the device compute this Aggref?  Its inputs are checked by codegen. */
static bool
aggref_supported(Aggref *agg)
{
	if (agg->aggdistinct || agg->aggorder || agg->aggvariadic ||
		agg->aggkind != AGGKIND_NORMAL || agg->agglevelsup != 0 ||
		agg->aggsplit != AGGSPLIT_SIMPLE)
		return false;
	if (lookup_agg(agg->aggfnoid) == NULL)
		return false;
	return agg->aggstar ? agg->args == NIL : list_length(agg->args) == 1;
}

/* The input expression of an Aggref (NULL for count(*)). */
static Expr *
agg_input(Aggref *agg)
{
	if (agg->aggstar || agg->args == NIL)
		return NULL;
	return linitial_node(TargetEntry, agg->args)->expr;
}

/*
 * The expressions the program must compute, in order: keys, then per
 * aggregate its input (or a constant for count(*)) and its FILTER.
 */
static List *
program_exprs(List *key_exprs, List *aggrefs)
{
	List	   *exprs = list_copy(key_exprs);
	ListCell   *lc;

	foreach(lc, aggrefs)
	{
		Aggref	   *agg = lfirst_node(Aggref, lc);
		Expr	   *in = agg_input(agg);

		exprs = lappend(exprs, in ? in : (Expr *) makeBoolConst(true, false));
		exprs = lappend(exprs, agg->aggfilter ? agg->aggfilter : (Expr *) makeBoolConst(true, false));
	}
	return exprs;
}

/* Bytes of one group table entry for these keys and aggregates. */
static uint32
entry_size_for(List *key_exprs, List *aggrefs, int *types)
{
	uint32		size = 16;
	int			nkeys = list_length(key_exprs);
	ListCell   *lc;

	for (int k = 0; k < nkeys; k++)
	{
		size += gx_agg_key_width(types[k]);
		if (types[k] == GX_TYPE_NUMERIC)
			size += gx_agg_acc_size(GX_AGG_KEY_SCALE);
	}
	foreach(lc, aggrefs)
		size += gx_agg_acc_size(lookup_agg(lfirst_node(Aggref, lc)->aggfnoid)->kind);
	return TYPEALIGN(16, size);
}

/*
 * The cheapest path PostgreSQL built for the grouped rows: the fallback.
 * A parallel GpuAgg runs it inside a participant, so it must then be
 * parallel-safe (no Gather of its own).
 */
static Path *
cheapest_stock_path(RelOptInfo *rel, bool parallel_safe)
{
	Path	   *best = NULL;
	ListCell   *lc;

	foreach(lc, rel->pathlist)
	{
		Path	   *p = lfirst(lc);

		/*
		 * Not a MinMaxAggPath either: planning it makes setrefs replace the
		 * node's own Aggrefs by the Params of its index lookups.
		 */
		if (gx_is_gpuext_path(p) || p->param_info != NULL || IsA(p, MinMaxAggPath) ||
			(parallel_safe && !p->parallel_safe))
			continue;
		if (best == NULL || p->total_cost < best->total_cost)
			best = p;
	}
	return best;
}

/*
 * A parallel-safe plan of the grouping, for a parallel GpuAgg's fallback,
 * when PostgreSQL made none: its plans aggregate the input's cheapest plan,
 * which over a join may hold a Gather (at SSB scale 10 a filtered ssb_part
 * is scanned in parallel), and then the fused join ran in one process.
 * Hashed (or plain) aggregation over the input's cheapest parallel-safe
 * plan; NULL when there is none.
 */
static Path *
parallel_safe_fallback(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
					   GroupPathExtraData *gd)
{
	Query	   *parse = root->parse;
	Path	   *input = get_cheapest_parallel_safe_total_inner(input_rel->pathlist);
	AggClauseCosts costs;
	double		groups = 1;
	Path	   *agg;

	if (input == NULL || !output_rel->consider_parallel || parse->hasTargetSRFs ||
		(parse->groupClause != NIL && !grouping_is_hashable(parse->groupClause)))
		return NULL;
	MemSet(&costs, 0, sizeof(costs));
	get_agg_clause_costs(root, AGGSPLIT_SIMPLE, &costs);
	if (parse->groupClause != NIL)
		groups = estimate_num_groups(root,
									 get_sortgrouplist_exprs(parse->groupClause, parse->targetList),
									 input->rows, NULL, NULL);
	agg = (Path *) create_agg_path(root, output_rel, input, output_rel->reltarget,
								   parse->groupClause != NIL ? AGG_HASHED : AGG_PLAIN,
								   AGGSPLIT_SIMPLE, parse->groupClause,
								   (List *) gd->havingQual, &costs, groups);
	return agg->parallel_safe ? agg : NULL;
}

/* Are all these paths parallel safe (run whole inside a participant)? */
static bool
all_parallel_safe(List *paths)
{
	ListCell   *lc;

	foreach(lc, paths)
		if (!((Path *) lfirst(lc))->parallel_safe)
			return false;
	return true;
}

/*
 * The join's inner paths for a parallel plan (parallel): each that is not
 * parallel safe (a Gather, say: at SSB scale 10 the cheapest plan of a
 * filtered ssb_part is parallel; or a serial GpuScan) replaced by its
 * relation's cheapest parallel-safe path, where there is one; for a serial
 * plan, each replaced by its relation's cheapest path, where that is
 * cheaper (the GpuJoin path found may be a partial one, whose inner paths
 * had to be parallel safe).  *extra_cost gets what that adds (or saves).
 */
static List *
replace_inner_paths(List *paths, bool parallel, Cost *extra_cost)
{
	List	   *result = NIL;
	ListCell   *lc;

	*extra_cost = 0;
	foreach(lc, paths)
	{
		Path	   *p = lfirst(lc);
		Path	   *alt;

		if (parallel)
			alt = p->parallel_safe ? p :
				get_cheapest_parallel_safe_total_inner(p->parent->pathlist);
		else
			alt = p->parent->cheapest_total_path != NULL &&
				p->parent->cheapest_total_path->param_info == NULL &&
				p->parent->cheapest_total_path->total_cost < p->total_cost ?
				p->parent->cheapest_total_path : p;

		if (alt == NULL)
			alt = p;			/* all_parallel_safe then says no */
		*extra_cost += alt->total_cost - p->total_cost;
		result = lappend(result, alt);
	}
	return result;
}

/*
 * Cost of a GpuAgg: the scan of scan_rel (host page work overlapped with
 * the device), the device's aggregation of agg_rows (the scan's rows, or
 * over a join the joined rows), fetching the groups, finishing them on
 * the host, and the fixed costs of the task.  A partial path (workers >
 * 0) gets the workers of at most 'workers' that pay for their start.
 */
static void
cost_gpuagg(PlannerInfo *root, CustomPath *cpath, RelOptInfo *scan_rel, double agg_rows,
			double ngroups, double program_len, uint32 entry_size, int workers, bool gpu,
			QualCost *having)
{
	const GxCostParams *cp = gx_cost_params();
	GxScanCostInput in;
	Cost		startup,
				total;

	memset(&in, 0, sizeof(in));
	in.pages = scan_rel->pages;
	in.allvisfrac = scan_rel->allvisfrac;
	in.tuples = scan_rel->tuples;
	in.rows_out = 0;			/* rows stay on the device */
	in.program_len = program_len;
	in.gpu = gpu;
	/*
	 * Pages a column cache holds: the program reads the scanned table's
	 * columns that the aggregation (and a fused join's keys) need, and
	 * its quals' (which all run on the device)
	 */
	gx_colcache_cost_input(root, scan_rel,
						   list_concat(list_copy(scan_rel->reltarget->exprs),
									   scan_rel->baserestrictinfo), &in);
	/* a partial path: of the most workers it could use, those that pay */
	if (workers > 0)
		cpath->path.parallel_workers = workers = gx_choose_scan_workers(cp, &in, workers);
	in.parallel_workers = workers;
	gx_cost_scan(cp, &in, &startup, &total);
	total += gx_cost_agg(cp, agg_rows, ngroups, entry_size, gpu);
	total += ngroups * (cpu_tuple_cost + having->per_tuple);
	cpath->path.startup_cost = total;	/* nothing comes out before the end */
	cpath->path.total_cost = total;
}

typedef struct OutputCheck
{
	List	   *key_exprs;
	List	   *aggrefs;		/* collected */
	bool		ok;
} OutputCheck;

/*
 * Can the node produce these output (and HAVING) expressions from its
 * group keys and aggregates?  Collects the Aggrefs; rejects GROUPING(),
 * unsupported aggregates, and columns used outside any key (those
 * functionally dependent on a primary-key group key).
 */
static bool
output_walker(Node *node, OutputCheck *oc)
{
	if (node == NULL || !oc->ok)
		return false;
	if (list_member(oc->key_exprs, node))
		return false;			/* computed from the key's value */
	if (IsA(node, Aggref))
	{
		if (!aggref_supported((Aggref *) node))
			oc->ok = false;
		else if (!list_member(oc->aggrefs, node))
			oc->aggrefs = lappend(oc->aggrefs, node);
		return false;
	}
	if (IsA(node, Var) || IsA(node, GroupingFunc) || IsA(node, WindowFunc))
	{
		oc->ok = false;
		return false;
	}
	return expression_tree_walker(node, output_walker, oc);
}

/*
 * Take a fallback child out of the rel's path list when one of our new
 * paths (serial cost 'cost', or the Gather path) is cheaper, so that
 * add_path cannot free it while our path points to it.
 */
static void
protect_child(RelOptInfo *rel, Path *child, Cost cost, Path *gather)
{
	if (cost <= child->total_cost || (gather && gather->total_cost <= child->total_cost))
		rel->pathlist = list_delete_ptr(rel->pathlist, child);
}

/*
 * Can no GpuAgg path on the GPU enter the grouped relation?  Its cost is
 * at least a GPU scan's setup plus the aggregation's (cost_gpuagg; a
 * Gather over the parallel form costs more), so add_path would reject it
 * when a stock path with no more rows costs less (gx_stock_path_beats).
 * Every stock path must cost less, too: protect_child would otherwise
 * take a fallback child out of the list.  Asked before the quals, keys
 * and a join to fuse are examined, so that grouping a few rows costs no
 * more to plan than with gpuext off.
 */
static bool
gpuagg_cannot_win(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel)
{
	const GxCostParams *cp = gx_cost_params();
	Cost		floor = gx_gpu_cost_floor(cp) + cp->gpuagg_setup_us / cp->cost_unit_us;
	List	   *key_exprs = NIL;
	double		ngroups;
	ListCell   *lc;

	foreach(lc, output_rel->pathlist)
		if (((Path *) lfirst(lc))->total_cost * 1.01 >= floor)
			return false;
	/* the rows cpath will have */
	foreach(lc, root->parse->groupClause)
		key_exprs = lappend(key_exprs,
							get_sortgroupclause_expr(lfirst_node(SortGroupClause, lc),
													 root->processed_tlist));
	ngroups = key_exprs ? estimate_num_groups(root, key_exprs, input_rel->rows, NULL, NULL) : 1;
	return gx_stock_path_beats(output_rel->pathlist, floor, ngroups, false);
}

/* create_upper_paths_hook: add GpuAgg paths for GROUP BY over one table. */
static void
gpuagg_add_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
				 RelOptInfo *output_rel, void *extra)
{
	Query	   *parse = root->parse;
	GroupPathExtraData *gd = extra;
	RangeTblEntry *rte;
	Relation	rel;
	TupleDesc	tupdesc;
	List	   *key_exprs = NIL;
	List	   *aggrefs = NIL;
	List	   *quals;
	List	   *exprs;
	List	   *having;
	List	   *tlist_exprs;
	ListCell   *lc;
	int		   *types;
	const char *why;
	bool		gpu;
	bool		ok;
	double		ngroups;
	uint32		entry_size;
	Path	   *fallback;
	Path	   *parallel_fallback;
	Path	   *gather = NULL;
	CustomPath *cpath;
	QualCost	having_cost;
	List	   *device_quals;
	List	   *host_quals;
	RelOptInfo *scan_rel = input_rel;	/* the scanned table */
	Path	   *join_path = NULL;	/* a GpuJoin to fuse */
	List	   *inner_key_idx = NIL;	/* program expressions (group keys,
										 * aggregate inputs) from its inner
										 * relations: their positions */
	List	   *join_quals = NIL;
	List	   *join_inner_paths = NIL;
	List	   *par_inner_paths = NIL;	/* for the parallel form */
	Cost		join_cost = 0;
	Cost		serial_extra_cost = 0;
	Cost		par_extra_cost = 0;

	if (prev_create_upper_paths_hook)
		prev_create_upper_paths_hook(root, stage, input_rel, output_rel, extra);

	if (stage != UPPERREL_GROUP_AGG || !gpuext_enabled || !gpuext_enable_gpuagg)
		return;
	gx_cost_refresh();
	if (parse->groupingSets || gd == NULL || gd->patype != PARTITIONWISE_AGGREGATE_NONE)
		return;
	if (!parse->hasAggs && parse->groupClause == NIL)
		return;
	/* gpuext.device = gpu plans for the GPU even while none is up */
	gpu = gpuext_device_mode == GPUEXT_DEVICE_GPU ||
		(gpuext_device_mode == GPUEXT_DEVICE_AUTO && gx_service_has_gpu(&why));
	if (!gpu && !gpuext_force_offload)
		return;
	/* on the GPU, not forced: nothing to examine where no GpuAgg can win */
	if (gpu && !gpuext_force_offload &&
		(input_rel->reloptkind != RELOPT_JOINREL || gx_gpujoin_kernels_enabled()) &&
		gpuagg_cannot_win(root, input_rel, output_rel))
		return;
	/* over a join: a GpuJoin of the table whose quals all run on the device */
	if (input_rel->reloptkind == RELOPT_JOINREL && gpuext_enable_gpujoin)
	{
		Index		fact_relid;

		/* (its kernels fused with ours, or the CPU engine's work) */
		gpu = gpu && gx_gpujoin_kernels_enabled();
		join_path = gx_gpujoin_fusable(root, input_rel, gpu, &fact_relid, &join_quals,
									   &join_inner_paths, &join_cost);
		if (join_path == NULL)
			return;
		scan_rel = find_base_rel(root, fact_relid);
	}
	else if (input_rel->reloptkind != RELOPT_BASEREL)
		return;
	rte = planner_rt_fetch(scan_rel->relid, root);
	if (rte->rtekind != RTE_RELATION || rte->inh || rte->tablesample ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW))
		return;

	/* every scan qual must run on the device: rows are aggregated there */
	if (join_path != NULL)
		device_quals = join_quals;
	else if (!gx_split_scan_quals(root, input_rel, rte,
								  input_rel->baserestrictinfo,
								  &device_quals, &host_quals) || host_quals != NIL)
		return;
	quals = extract_actual_clauses(device_quals, false);

	/* group keys */
	foreach(lc, parse->groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);

		key_exprs = lappend(key_exprs, get_sortgroupclause_expr(sgc, root->processed_tlist));
	}
	/* aggregates, in the output and in HAVING */
	/* the planner keeps HAVING in implicit-AND list form */
	if (gd->havingQual == NULL)
		having = NIL;
	else if (IsA(gd->havingQual, List))
		having = (List *) gd->havingQual;
	else
		having = make_ands_implicit((Expr *) gd->havingQual);
	tlist_exprs = list_concat(list_copy(output_rel->reltarget->exprs), having);
	{
		OutputCheck oc = {key_exprs, NIL, true};

		(void) output_walker((Node *) tlist_exprs, &oc);
		if (!oc.ok)
			return;
		aggrefs = oc.aggrefs;
	}
	if (list_length(key_exprs) > GX_AGG_MAX_KEYS || list_length(aggrefs) > GX_AGG_MAX_AGGS)
		return;

	/*
	 * Over a join, a group key may also be an output column of an inner
	 * relation: stored with the inner rows, loaded for each joined row.  The
	 * program computes everything else (from the scanned table).
	 */
	exprs = program_exprs(key_exprs, aggrefs);
	if (join_path != NULL)
	{
		int			i = 0;

		foreach(lc, exprs)
		{
			if (gx_gpujoin_inner_key_class(join_path, lfirst(lc)) > 0)
			{
				inner_key_idx = lappend_int(inner_key_idx, i);
				lfirst(lc) = makeBoolConst(true, false);
			}
			i++;
		}
		if (list_length(inner_key_idx) > GX_JOIN_MAX_PAYLOAD)
			return;
	}
	types = palloc0(sizeof(int) * (list_length(exprs) + 1));
	rel = table_open(rte->relid, NoLock);
	tupdesc = RelationGetDescr(rel);
	/* (keys and inputs of a fused join must come from the scanned table) */
	ok = gx_exprs_are_device_executable(quals, exprs, scan_rel->relid, tupdesc, types, &why);
	table_close(rel, NoLock);
	if (!ok)
		return;
	if (inner_key_idx != NIL)
	{
		List	   *orig = program_exprs(key_exprs, aggrefs);

		foreach(lc, inner_key_idx)
			types[lfirst_int(lc)] = gx_gpujoin_inner_key_class(join_path,
															   list_nth(orig, lfirst_int(lc)));
	}
	for (int k = 0; k < list_length(key_exprs); k++)
	{
		Node	   *key = list_nth(key_exprs, k);
		Oid			coll = exprCollation(key);

		if (types[k] == 0)
			return;
		/* bpchar keys are shown blank-padded to their declared length */
		if (types[k] == GX_TYPE_BPCHAR && exprTypmod(key) < 0)
			return;
		/* text keys are compared as bytes: only deterministic collations */
		if ((types[k] == GX_TYPE_TEXT || types[k] == GX_TYPE_BPCHAR) && OidIsValid(coll) &&
			coll != DEFAULT_COLLATION_OID && !get_collation_isdeterministic(coll))
			return;
	}

	fallback = cheapest_stock_path(output_rel, false);
	parallel_fallback = cheapest_stock_path(output_rel, true);
	if (fallback == NULL)
		return;
	if (parallel_fallback == NULL && join_path != NULL)
		parallel_fallback = parallel_safe_fallback(root, input_rel, output_rel, gd);

	ngroups = key_exprs ? estimate_num_groups(root, key_exprs, input_rel->rows, NULL, NULL) : 1;
	entry_size = entry_size_for(key_exprs, aggrefs, types);
	cost_qual_eval(&having_cost, having, root);

	if (gpuext_force_offload)
		output_rel->pathlist = NIL;

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = output_rel;
	cpath->path.pathtarget = output_rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;
	cpath->path.parallel_workers = 0;
	cpath->path.rows = ngroups;
	cpath->path.pathkeys = NIL;
	cpath->flags = 0;
	cpath->custom_paths = list_make1(fallback);
	/* (an Integer: a Float of integral value does not survive nodeToString) */
	cpath->custom_private = list_make5(makeInteger(scan_rel->relid), key_exprs, aggrefs, quals,
									   makeInteger((int) Min(ngroups, (double) PG_INT32_MAX)));
	cpath->custom_private = lappend(cpath->custom_private, having);
	cpath->methods = &gpuagg_path_methods;
	cost_gpuagg(root, cpath, scan_rel, input_rel->rows, ngroups, list_length(exprs) * 3.0,
				entry_size, 0, gpu, &having_cost);
	if (join_path != NULL)
	{
		/* the join's inner plans follow the fallback; the path is kept for planning */
		cpath->custom_paths = list_concat(cpath->custom_paths,
										  replace_inner_paths(join_inner_paths, false,
															  &serial_extra_cost));
		cpath->custom_private = lappend(cpath->custom_private, join_path);
		cpath->custom_private = lappend(cpath->custom_private, inner_key_idx);
		cpath->path.startup_cost += join_cost + serial_extra_cost;
		cpath->path.total_cost += join_cost + serial_extra_cost;
		if (gpuext_force_offload)
			gx_cost_forced(&cpath->path);
	}

	/*
	 * Parallel workers feed one device table; the last one returns the
	 * groups.  Over a join, the leader builds and uploads the inner tables
	 * once, before its workers start (the inner plans go to the workers
	 * with the plan, so they must still be parallel safe; the join's cost
	 * counts their build once).  (Without a GPU it is only planned when
	 * forced: the CPU engine cannot share a table, so the stock plan then
	 * runs in the last participant.)
	 */
	if (join_path != NULL)
		par_inner_paths = replace_inner_paths(join_inner_paths, true, &par_extra_cost);
	if ((gpu || gpuext_force_offload) && scan_rel->consider_parallel &&
		output_rel->consider_parallel && parallel_fallback != NULL &&
		max_parallel_workers_per_gather > 0 && all_parallel_safe(par_inner_paths))
	{
		int			workers = gx_parallel_scan_workers(gx_cost_params(), scan_rel);

		if (workers > 0)
		{
			CustomPath *ppath = makeNode(CustomPath);
			double		rows = ngroups;

			memcpy(ppath, cpath, sizeof(CustomPath));
			ppath->custom_paths = list_concat(list_make1(parallel_fallback),
											  list_copy(par_inner_paths));
			ppath->path.parallel_aware = true;
			ppath->path.parallel_safe = true;
			ppath->path.parallel_workers = workers;
			cost_gpuagg(root, ppath, scan_rel, input_rel->rows, ngroups, list_length(exprs) * 3.0,
						entry_size, workers, gpu, &having_cost);
			ppath->path.startup_cost += join_cost + par_extra_cost;
			ppath->path.total_cost += join_cost + par_extra_cost;
			gather = (Path *) create_gather_path(root, output_rel, (Path *) ppath,
												 output_rel->reltarget, NULL, &rows);
			if (join_path != NULL && gpuext_force_offload)
				gx_cost_forced(gather);
		}
	}

	/*
	 * add_path frees the paths a new path dominates, and our paths keep
	 * PostgreSQL's as their fallback children: take those out of the list
	 * first (a path cheaper than them would have displaced them anyway).
	 */
	protect_child(output_rel, fallback, cpath->path.total_cost, gather);
	if (parallel_fallback && parallel_fallback != fallback)
		protect_child(output_rel, parallel_fallback, cpath->path.total_cost, gather);
	if (gather)
		add_path(output_rel, gather);
	add_path(output_rel, (Path *) cpath);
}

/*
 * PlanCustomPath: the node scans the input table (scanrelid) and returns
 * one tuple per group, laid out as custom_scan_tlist.
 */
static Plan *
gpuagg_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Index		relid = intVal(linitial(best_path->custom_private));
	List	   *key_exprs = lsecond(best_path->custom_private);
	List	   *aggrefs = lthird(best_path->custom_private);
	List	   *quals = lfourth(best_path->custom_private);
	Node	   *est = list_nth(best_path->custom_private, 4);
	List	   *having = list_nth(best_path->custom_private, 5);
	List	   *scan_tlist = NIL;
	List	   *qual_vars;
	AttrNumber	resno = 1;
	ListCell   *lc;

	foreach(lc, key_exprs)
		scan_tlist = lappend(scan_tlist, makeTargetEntry(lfirst(lc), resno++, NULL, false));
	foreach(lc, aggrefs)
		scan_tlist = lappend(scan_tlist, makeTargetEntry(lfirst(lc), resno++, NULL, false));

	/*
	 * The columns the quals read, as junk entries: setrefs turns the quals
	 * (custom_exprs, where the planner also finds their Params) into
	 * references to them, and the executor maps them back.
	 */
	qual_vars = pull_var_clause((Node *) quals, PVC_RECURSE_PLACEHOLDERS);
	foreach(lc, qual_vars)
		if (!tlist_member(lfirst(lc), scan_tlist))
			scan_tlist = lappend(scan_tlist, makeTargetEntry(lfirst(lc), resno++, NULL, true));

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = having;
	cscan->scan.scanrelid = relid;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = quals;
	cscan->custom_private = list_make3(makeInteger(list_length(key_exprs)),
									   makeInteger(list_length(aggrefs)), est);
	/* a fused join: its executor's lists (custom_plans: fallback, then inner plans) */
	if (list_length(best_path->custom_private) > 6)
	{
		List	   *idx = list_nth(best_path->custom_private, 7);
		List	   *all = program_exprs(key_exprs, aggrefs);
		List	   *inner_keys = NIL;

		foreach(lc, idx)
			inner_keys = lappend(inner_keys, list_nth(all, lfirst_int(lc)));
		cscan->custom_private = lappend(cscan->custom_private,
										gx_gpujoin_fused_plan(list_nth(best_path->custom_private, 6),
															  list_copy_tail(custom_plans, 1),
															  inner_keys));
		cscan->custom_private = lappend(cscan->custom_private, list_copy(idx));
	}
	cscan->custom_scan_tlist = scan_tlist;
	cscan->methods = &gpuagg_plan_methods;
	return &cscan->scan.plan;
}

/* ---------------------------------------------------------------------
 * Executor
 * ---------------------------------------------------------------------
 */
/* Replace references to custom_scan_tlist entries by their expressions. */
static Node *
scan_tlist_refs_mutator(Node *node, List *scan_tlist)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == INDEX_VAR)
		return copyObject((Node *) list_nth_node(TargetEntry, scan_tlist,
												 ((Var *) node)->varattno - 1)->expr);
	return expression_tree_mutator(node, scan_tlist_refs_mutator, scan_tlist);
}

static Node *
gpuagg_create_state(CustomScan *cscan)
{
	GpuAggState *gas = (GpuAggState *) newNode(sizeof(GpuAggState), T_CustomScanState);
	int			i = 0;
	ListCell   *lc;

	gas->css.methods = &gpuagg_exec_methods;
	gas->css.flags = cscan->flags;
	gas->join_shared_workers = -1;
	gas->nkeys = intVal(linitial(cscan->custom_private));
	gas->naggs = intVal(lsecond(cscan->custom_private));
	gas->est_groups = Max(1, intVal(lthird(cscan->custom_private)));
	foreach(lc, cscan->custom_scan_tlist)
	{
		Expr	   *e = lfirst_node(TargetEntry, lc)->expr;

		if (i < gas->nkeys)
			gas->key_exprs = lappend(gas->key_exprs, e);
		else if (i < gas->nkeys + gas->naggs)
			gas->aggrefs = lappend(gas->aggrefs, e);
		i++;
	}
	gas->quals = (List *) scan_tlist_refs_mutator((Node *) cscan->custom_exprs,
												  cscan->custom_scan_tlist);
	return (Node *) gas;
}

/* The expressions the program computes: those from inner rows are placeholders. */
static List *
device_program_exprs(GpuAggState *gas)
{
	List	   *exprs = program_exprs(gas->key_exprs, gas->aggrefs);
	ListCell   *lc;

	foreach(lc, gas->inner_key_idx)
		list_nth_cell(exprs, lfirst_int(lc))->ptr_value = makeBoolConst(true, false);
	return exprs;
}

/* Static scale of a numeric expression, or -1 when unknown. */
static int
numeric_scale_of(Expr *e)
{
	if (IsA(e, RelabelType))
		return numeric_scale_of(((RelabelType *) e)->arg);
	if (exprType((Node *) e) != NUMERICOID)
		return 0;				/* an integer cast to numeric */
	if (IsA(e, Var))
	{
		int32		typmod = ((Var *) e)->vartypmod;

		if (typmod < (int32) VARHDRSZ)
			return -1;
		return Max(0, (int) ((((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024));
	}
	if (IsA(e, Const))
	{
		Const	   *c = (Const *) e;

		if (c->constisnull)
			return 0;
		return DatumGetInt32(DirectFunctionCall1(numeric_scale, c->constvalue));
	}
	if (IsA(e, OpExpr) || IsA(e, FuncExpr))
	{
		Oid			fn = IsA(e, OpExpr) ? ((OpExpr *) e)->opfuncid : ((FuncExpr *) e)->funcid;
		List	   *args = IsA(e, OpExpr) ? ((OpExpr *) e)->args : ((FuncExpr *) e)->args;
		int			a = list_length(args) > 0 ? numeric_scale_of(linitial(args)) : 0;
		int			b = list_length(args) > 1 ? numeric_scale_of(lsecond(args)) : 0;

		if (a < 0 || b < 0)
			return -1;
		switch (fn)
		{
			case F_NUMERIC_ADD:
			case F_NUMERIC_SUB:
				return Max(a, b);
			case F_NUMERIC_MUL:
				return a + b;
			case F_NUMERIC_UMINUS:
			case F_NUMERIC_ABS:
				return a;
			default:
				return -1;
		}
	}
	return -1;
}

/*
 * Build the program (quals, keys, aggregate inputs and filters) and the
 * aggregation spec.  Returns false if the program cannot be built now.
 */
static bool
build_agg_program(GpuAggState *gas)
{
	ScanState  *ss = &gas->css.ss;
	List	   *exprs = device_program_exprs(gas);
	int			nagg_exprs = list_length(exprs);
	int			nexprs;
	int		   *regs;
	int		   *types;
	int			payload_regs[GX_JOIN_MAX_PAYLOAD];
	const char *why;
	GxProgram  *prog;
	GxAggSpec  *spec = &gas->spec;
	uint32		off = 16;
	int			k = 0;
	ListCell   *lc;

	/* a fused join's outer keys come last */
	if (gas->fj)
		exprs = list_concat(exprs, gx_fused_join_outer_keys(gas->fj));
	nexprs = list_length(exprs);
	regs = palloc0(sizeof(int) * (nexprs + 1));
	types = palloc0(sizeof(int) * (nexprs + 1));
	prog = gx_build_projection_program(gas->quals, exprs, ((Scan *) ss->ps.plan)->scanrelid,
									   RelationGetDescr(ss->ss_currentRelation), &ss->ps,
									   ss->ps.ps_ExprContext, regs, types, &why);
	if (prog == NULL)
	{
		gas->fallback_reason = why;
		return false;
	}
	/* inner group keys: loaded after the program, into registers it does not use */
	if (gas->inner_key_idx != NIL)
	{
		bool		used[GX_MAX_REGS];
		const GxAttr *atts = gx_prog_atts(prog);
		const GxInstr *code = gx_prog_instrs(prog);
		int			p = 0;
		int			r = 0;

		memset(used, 0, sizeof(used));
		for (int i = 0; i < prog->natts; i++)
			if (atts[i].reg >= 0 && atts[i].reg < GX_MAX_REGS)
				used[atts[i].reg] = true;
		for (int i = 0; i < prog->ninstrs; i++)
		{
			uint16		rr[4] = {code[i].dst, code[i].a, code[i].b, code[i].e};

			for (int j = 0; j < 4; j++)
				if (rr[j] < GX_MAX_REGS)
					used[rr[j]] = true;
		}
		foreach(lc, gas->inner_key_idx)
		{
			while (r < GX_MAX_REGS && used[r])
				r++;
			if (r >= GX_MAX_REGS)
			{
				gas->fallback_reason = "not enough device registers for the inner columns";
				return false;
			}
			types[lfirst_int(lc)] = gx_fused_join_payload_type(gas->fj, p);
			regs[lfirst_int(lc)] = r;
			payload_regs[p] = r;
			used[r] = true;
			p++;
		}
	}

	memset(spec, 0, sizeof(*spec));
	spec->nkeys = gas->nkeys;
	spec->key_offset = off;
	gas->key_types = palloc(sizeof(Oid) * (gas->nkeys + 1));
	gas->key_typmods = palloc(sizeof(int32) * (gas->nkeys + 1));
	gas->key_scale_acc = palloc(sizeof(int) * (gas->nkeys + 1));
	foreach(lc, gas->key_exprs)
	{
		spec->keys[k].type = types[k];
		spec->keys[k].reg = regs[k];
		spec->keys[k].offset = off;
		spec->keys[k].width = gx_agg_key_width(types[k]);
		off += spec->keys[k].width;
		gas->key_types[k] = exprType(lfirst(lc));
		gas->key_typmods[k] = exprTypmod(lfirst(lc));
		k++;
	}
	spec->key_size = off - spec->key_offset;

	gas->defs = palloc(sizeof(GxAggDef *) * (gas->naggs + 1));
	gas->finishers = palloc0(sizeof(GxStateFinisher *) * (gas->naggs + 1));
	k = 0;
	foreach(lc, gas->aggrefs)
	{
		Aggref	   *agg = lfirst_node(Aggref, lc);
		const GxAggDef *def = lookup_agg(agg->aggfnoid);
		GxAggFunc  *f = &spec->aggs[k];
		int			in = gas->nkeys + 2 * k;

		gas->defs[k] = def;
		if (def->final == GXF_VARIANCE || def->final == GXF_VARIANCE_FLOAT)
			gas->finishers[k] = gx_variance_finisher(agg->aggfnoid);
		f->kind = def->kind;
		f->type = types[in];
		f->reg = regs[in];
		f->offset = off;
		f->filter_reg = agg->aggfilter ? regs[in + 1] : GX_NO_REG;
		f->neg_zero_init = (def->final == GXF_SUM_TO_FLOAT8 || def->final == GXF_SUM_TO_FLOAT4);
		f->track_lsb = (def->final == GXF_SUM_TO_FLOAT4);
		if (def->kind == GX_AGG_SUM_NUMERIC)
		{
			int			sc = numeric_scale_of(agg_input(agg));

			f->scale = (sc < 0) ? DEFAULT_NUMERIC_SCALE : Min(sc, 30);
		}
		else if ((def->kind == GX_AGG_VARIANCE && f->type == GX_TYPE_NUMERIC) ||
				 def->final == GXF_MINMAX_NUMERIC)
		{
			int			sc = numeric_scale_of(agg_input(agg));

			f->scale = (sc < 0) ? DEFAULT_INT64_NUMERIC_SCALE : Min(sc, MAX_INT64_NUMERIC_SCALE);
		}
		off += gx_agg_acc_size(def->kind);
		k++;
	}
	/* numeric keys also track the largest display scale they were seen with */
	for (int i = 0; i < gas->nkeys; i++)
	{
		gas->key_scale_acc[i] = -1;
		if (types[i] != GX_TYPE_NUMERIC)
			continue;
		spec->aggs[k].kind = GX_AGG_KEY_SCALE;
		spec->aggs[k].type = GX_TYPE_NUMERIC;
		spec->aggs[k].reg = regs[i];
		spec->aggs[k].offset = off;
		spec->aggs[k].filter_reg = GX_NO_REG;
		gas->key_scale_acc[i] = k;
		off += gx_agg_acc_size(GX_AGG_KEY_SCALE);
		k++;
	}
	spec->naggs = k;
	spec->entry_size = TYPEALIGN(16, off);

	/* the program area of every batch: program, then the spec (then the join's) */
	gas->program_len = TYPEALIGN(16, prog->length) + sizeof(GxAggSpec);
	if (gas->fj)
		gas->program_len = TYPEALIGN(16, prog->length) + TYPEALIGN(16, sizeof(GxAggSpec)) +
			sizeof(GxJoinSpec);
	gas->program = palloc0(gas->program_len);
	memcpy(gas->program, prog, prog->length);
	memcpy(gas->program + TYPEALIGN(16, prog->length), spec, sizeof(GxAggSpec));
	if (gas->fj)
	{
		GxJoinSpec	jspec;

		gx_fused_join_spec(gas->fj, regs + nagg_exprs, payload_regs, &jspec);
		memcpy(gas->program + TYPEALIGN(16, prog->length) + TYPEALIGN(16, sizeof(GxAggSpec)),
			   &jspec, sizeof(GxJoinSpec));
	}
	return true;
}

/*
 * gpuext.agg_private_max_groups: a GPU block aggregates into a private
 * table in shared memory first when the planner expects at most this many
 * groups (hot groups then stay out of the global table's atomics; those
 * that do not fit go to the global table)
 */
static int	agg_private_max_groups = 64;

/*
 * gpuext.agg_hot_groups: with more groups than that, each block still
 * keeps this many groups in shared memory, the first it meets (with
 * skewed keys, the hot ones); the rest go straight to the global table
 */
static int	agg_hot_groups = 32;

/*
 * gpuext.agg_private_copies: copies of the private table in each block
 * (Sitaridi & Ross): warp w updates copy w % copies, so a hot group's
 * updates contend within a warp's copy only
 */
static int	agg_private_copies = 4;

/* shared memory of a GPU block for its private tables, all copies */
#define LOCAL_TABLES_BUDGET (40 * 1024)

/* Size the group table from the estimate; few groups get private tables. */
static void
size_tables(GpuAggState *gas)
{
	uint64		want = Max(gas->est_groups * 4, 65536);
	uint32		local_budget = LOCAL_TABLES_BUDGET - GX_AGG_TABLE_HEADER;
	uint32		local = 0;

	gas->capacity = 1;
	while (gas->capacity < want)
		gas->capacity <<= 1;
	if (gas->est_groups <= agg_private_max_groups)
	{
		/*
		 * Room for twice the expected groups and at least 32 groups
		 * (estimates err), up to 256 entries; the rest of the budget goes
		 * to copies.
		 */
		local = 1;
		while (local * 2 <= local_budget / gas->spec.entry_size && local < 256 &&
			   (local < 64 || local < gas->est_groups * 2))
			local <<= 1;
	}
	else if (agg_hot_groups > 0)
	{
		/* a small cache of hot groups (twice the slots: half stay empty) */
		local = 1;
		while (local < (uint32) agg_hot_groups * 2 &&
			   local * 2 <= local_budget / gas->spec.entry_size)
			local <<= 1;
	}
	if (local < 8)
		local = 0;
	gas->local_capacity = local;
	/* as many copies as the shared memory budget holds, up to the setting */
	gas->local_copies = 1;
	while (local > 0 && gas->local_copies * 2 <= (uint32) agg_private_copies &&
		   gas->local_copies * 2 * (GX_AGG_TABLE_HEADER + local * gas->spec.entry_size) <=
		   LOCAL_TABLES_BUDGET)
		gas->local_copies *= 2;
}

static uint64
table_bytes(GpuAggState *gas)
{
	return GX_AGG_TABLE_HEADER + gas->capacity * gas->spec.entry_size;
}

/*
 * Start PostgreSQL's plan, the fallback child, where it is not yet: first
 * among the node's children, as EXPLAIN shows them.
 */
static void
start_fallback(GpuAggState *gas)
{
	CustomScan *cscan = (CustomScan *) gas->css.ss.ps.plan;
	EState	   *estate = gas->css.ss.ps.state;
	MemoryContext old;

	if (gas->fallback != NULL)
		return;
	old = MemoryContextSwitchTo(estate->es_query_cxt);
	gas->fallback = ExecInitNode(linitial(cscan->custom_plans), estate, gas->eflags);
	gas->css.custom_ps = lcons(gas->fallback, gas->css.custom_ps);
	MemoryContextSwitchTo(old);
}

/*
 * Whether the fallback child can wait until a fallback needs it.  Starting
 * a hashed aggregation builds its hash table for the groups the planner
 * expects: for cm_agg_1m (a million groups) that took 25 ms of a GpuAgg's
 * 470 on the 2-core machine (session 15), for a plan that almost never
 * runs; on the H100 the GpuAgg with such a fallback ran 151 ms against 121
 * with a sorted one.  Started at once under EXPLAIN, which shows
 * it (never executed), and in a parallel query, where the leader and the
 * workers set up its parallel-aware nodes' shared state when they start.
 */
static bool
fallback_can_wait(EState *estate, int eflags)
{
	return !(eflags & EXEC_FLAG_EXPLAIN_ONLY) && estate->es_instrument == 0 &&
		!estate->es_plannedstmt->parallelModeNeeded && !IsParallelWorker();
}

/*
 * The node's scan slot is virtual (custom_scan_tlist); set up the child
 * plan and the device program.
 */
static void
gpuagg_begin(CustomScanState *node, EState *estate, int eflags)
{
	GpuAggState *gas = (GpuAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	gas->eflags = eflags;
	if (!fallback_can_wait(estate, eflags))
		start_fallback(gas);
	gas->phase = GPUAGG_INIT;
	if (list_length(cscan->custom_private) > 4)
		gas->inner_key_idx = list_nth(cscan->custom_private, 4);
	if (list_length(cscan->custom_private) > 3)
		gas->fj = gx_fused_join_begin(list_nth(cscan->custom_private, 3),
									  list_copy_tail(cscan->custom_plans, 1), estate, eflags,
									  &node->ss.ps, cscan->scan.scanrelid, &node->custom_ps);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	gas->program_cxt = AllocSetContextCreate(CurrentMemoryContext, "GpuAgg program",
											 ALLOCSET_SMALL_SIZES);
	gas->run_cxt = AllocSetContextCreate(CurrentMemoryContext, "GpuAgg groups",
										 ALLOCSET_DEFAULT_SIZES);
	gx_pipeline_init(&gas->pipe, node->ss.ss_currentRelation, estate->es_snapshot,
					 GX_REQ_AGG, 0);
	if (gas->fj && !gx_gpujoin_kernels_enabled())
	{
		/* gpuext.gpujoin_kernels off: the CPU engine runs the fused join */
		gx_engine_start_with_mode(&gas->pipe.engine, GPUEXT_DEVICE_CPU);
		gas->pipe.depth = 1;
	}
	gas->pipe.engine.rerun_on_cpu = false;
	gas->pipe_started = true;
}

/*
 * Build the program and size the tables, with the current values of
 * Params (InitPlans and outer values are known at the first execution).
 * Returns false when the device cannot run it: the stock plan will.
 */
static bool
prepare(GpuAggState *gas)
{
	MemoryContext old;
	bool		ok;

	if (gas->prepared)
		return true;
	MemoryContextReset(gas->program_cxt);
	old = MemoryContextSwitchTo(gas->program_cxt);
	ok = build_agg_program(gas);
	MemoryContextSwitchTo(old);
	if (!ok)
		return false;
	size_tables(gas);
	gx_pipeline_set_program(&gas->pipe, (GxProgram *) gas->program, gas->program_len);
	gas->pipe.batch_arg = gx_agg_local_arg(gas->local_capacity, gas->local_copies);
	gas->prepared = true;
	return true;
}

/* Create the group table: a GPU task, or a CPU engine table. */
static bool
create_table(GpuAggState *gas)
{
	if (gas->pipe.engine.use_gpu)
	{
		int			status;
		char		err[GX_ERRLEN];
		uint64		limit = gx_gpu_memory_limit_bytes();

		if (limit > 0 && table_bytes(gas) > limit)
		{
			gas->fallback_reason = "the group table would exceed gpuext.gpu_memory_limit";
			return false;
		}
		gas->task_id = gx_task_create(table_bytes(gas), gas->capacity,
									  gas->capacity * 7 / 10, &status, err);
		if (gas->task_id == 0)
		{
			if (gpuext_cpu_fallback == GPUEXT_FALLBACK_OFF)
				gx_report_failure(status, err);
			gas->fallback_reason = pstrdup(err);
			gx_count_fallback();
			return false;
		}
		gas->task_is_cpu = false;
	}
	else
	{
		gas->cpu_table = MemoryContextAllocHuge(CurrentMemoryContext, table_bytes(gas));
		memset(gas->cpu_table, 0, table_bytes(gas));
		gas->cpu_table->capacity = gas->capacity;
		gas->cpu_table->max_groups = gas->capacity * 7 / 10;
		gas->task_id = gx_cpu_table_register(gas->cpu_table, CurrentMemoryContext);
		gas->task_is_cpu = true;
	}
	gas->pipe.task_id = gas->task_id;
	return true;
}

/* Free the group table. */
static void
drop_table(GpuAggState *gas)
{
	if (gas->task_id == 0)
		return;
	if (gas->task_is_cpu)
	{
		gx_cpu_table_unregister(gas->task_id, gas->cpu_table);
		pfree(gas->cpu_table);
		gas->cpu_table = NULL;
	}
	else if (gas->shared == NULL)
		gx_task_destroy(gas->task_id);
	gas->task_id = 0;
}

/* Feed every batch of this participant to the device. */
static bool
aggregate_batches(GpuAggState *gas)
{
	GxPipeBatch *b;

	while ((b = gx_pipeline_next(&gas->pipe)) != NULL)
	{
		if (gas->pipe.engine.failed)
		{
			gas->fallback_reason = pstrdup(gas->pipe.engine.failure);
			gx_pipeline_end(&gas->pipe);
			return false;
		}
		gx_pipeline_release(&gas->pipe, b);
	}
	return !gas->pipe.engine.failed;
}

/*
 * Would PostgreSQL's float4 additions (in scan order, rounding at each
 * step) have given exactly the device's sum, rounded once?  Yes when every
 * partial sum is a multiple of 2^e, the least bit of any input, below
 * 2^(24+e): then each is a float4 and no addition rounds, in any order.
 * The bound on a partial sum is max |v| times n.  Otherwise (or when a
 * partial sum could overflow, an error there) PostgreSQL's plan runs.
 */
static bool
float4_sum_is_exact(const unsigned char *acc)
{
	double		bound = *(const double *) GX_ACC_MAXABS(acc) * (double) *GX_ACC_N(acc);
	int32		lsb = *(const int32 *) GX_ACC_LSB(acc);

	if (lsb == PG_INT32_MAX)
		return true;			/* only zeros, infinities or NaN */
	return bound < FLT_MAX && bound < ldexp(1.0, 24 + lsb);
}

/*
 * The sum of squared deviations from the mean of a float variance
 * accumulator (n > 0): sum of squares - sum^2 / n, never below 0.
 */
static double
float_deviations(const unsigned char *acc)
{
	double		n = (double) *(const uint64 *) acc;
	double		sum = *(const double *) (acc + 8);
	double		d = *(const double *) (acc + 24) - sum * sum / n;

	return d > 0 ? d : 0;
}

/*
 * Can every result of every group be trusted?  A numeric sum whose inputs'
 * magnitudes add up past GX_NUMERIC_SUM_LIMIT may have wrapped its
 * 128 bits; a float input beyond GX_FLOAT_INPUT_LIMIT may have made
 * PostgreSQL's own accumulation overflow (an error there); a float4 sum
 * PostgreSQL's float4 additions could have rounded; a float variance
 * whose deviations cancelled more than FLOAT_VARIANCE_MIN_SHARE allows; a numeric
 * min/max over inputs of different display scales does not know which
 * of two equal values PostgreSQL would return (1.5 or 1.50: it keeps the
 * later one, in scan order).
 */
static bool
results_are_exact(GpuAggState *gas)
{
	for (int a = 0; a < gas->spec.naggs; a++)
	{
		const GxAggFunc *f = &gas->spec.aggs[a];

		if (f->kind != GX_AGG_SUM_NUMERIC && f->kind != GX_AGG_SUM_FLOAT &&
			f->kind != GX_AGG_VARIANCE && f->kind != GX_AGG_VARIANCE_FLOAT &&
			f->kind != GX_AGG_MIN_NUMERIC && f->kind != GX_AGG_MAX_NUMERIC)
			continue;
		for (uint64 g = 0; g < gas->ngroups; g++)
		{
			unsigned char *acc = (unsigned char *) gas->groups + g * gas->spec.entry_size + f->offset;

			if (f->kind == GX_AGG_SUM_NUMERIC && *GX_ACC_ABSSUM(acc) >= GX_NUMERIC_SUM_LIMIT)
				return false;
			if (f->kind == GX_AGG_VARIANCE &&
				(*GX_ACC_ABSSUM(acc) >= GX_NUMERIC_SUM_LIMIT ||
				 *GX_ACC_SQ_ABSSUM(acc) >= GX_NUMERIC_SUM_LIMIT))
				return false;
			if ((f->kind == GX_AGG_SUM_FLOAT || f->kind == GX_AGG_VARIANCE_FLOAT) &&
				*(double *) GX_ACC_MAXABS(acc) >= GX_FLOAT_INPUT_LIMIT)
				return false;
			if (f->kind == GX_AGG_VARIANCE_FLOAT && *GX_ACC_N(acc) > 1 &&
				float_deviations(acc) < FLOAT_VARIANCE_MIN_SHARE * *GX_ACC_FSQ(acc))
				return false;
			if (a < gas->naggs && gas->defs[a]->final == GXF_SUM_TO_FLOAT4 &&
				!float4_sum_is_exact(acc))
				return false;
			if ((f->kind == GX_AGG_MIN_NUMERIC || f->kind == GX_AGG_MAX_NUMERIC) &&
				*GX_ACC_N(acc) > 0 && *GX_ACC_MINSCALE(acc) != *GX_ACC_SCALE(acc))
				return false;
		}
	}
	return true;
}

/*
 * Copy the groups of the table into backend memory.  Returns false when
 * the device could not aggregate exactly (recheck, full).
 */
static bool
fetch_groups(GpuAggState *gas)
{
	uint32		esize = gas->spec.entry_size;
	GxAggTable	header;

	if (gas->task_is_cpu)
	{
		GxAggTable *t = gas->cpu_table;

		header = *t;
		gas->groups = MemoryContextAllocHuge(CurrentMemoryContext, (Size) Max(t->ngroups, 1) * esize);
		gas->ngroups = 0;
		for (uint64 i = 0; i < t->capacity; i++)
		{
			unsigned char *e = gx_agg_entry(t, &gas->spec, i);

			if (*(uint32 *) e == GX_ENTRY_READY)
				memcpy(gas->groups + gas->ngroups++ * esize, e, esize);
		}
	}
	else
	{
		uint64		chunk = Max(1, (32 * 1024 * 1024) / esize);
		uint64		cap = 1024;
		char		err[GX_ERRLEN];

		gas->groups = MemoryContextAllocHuge(CurrentMemoryContext, cap * esize);
		gas->ngroups = 0;
		for (uint64 first = 0; first < gas->capacity; first += chunk)
		{
			uint64		n = Min(chunk, gas->capacity - first);
			uint64		count = 0;
			char	   *buf = MemoryContextAllocHuge(CurrentMemoryContext, n * esize);
			int			status;

			CHECK_FOR_INTERRUPTS();
			status = gx_task_fetch(gas->task_id, first, n, esize, buf, &count, &header, err);
			if (status != GX_OK)
			{
				if (gpuext_cpu_fallback == GPUEXT_FALLBACK_OFF)
					gx_report_failure(status, err);
				gas->fallback_reason = pstrdup(err);
				gx_count_fallback();
				return false;
			}
			if (header.full || header.recheck)
				break;
			while (gas->ngroups + count > cap)
			{
				cap *= 2;
				gas->groups = repalloc_huge(gas->groups, cap * esize);
			}
			memcpy(gas->groups + gas->ngroups * esize, buf, count * esize);
			gas->ngroups += count;
			pfree(buf);
		}
	}
	gas->rows_aggregated = header.rows;
	if (header.full)
	{
		gas->fallback_reason = "more groups than the device table was sized for";
		return false;
	}
	if (header.recheck)
	{
		gas->fallback_reason = "a value the device cannot aggregate exactly";
		return false;
	}
	if (!results_are_exact(gas))
	{
		gas->fallback_reason = "a result the device cannot vouch for (numeric or sum of squares near 10^38, a float input beyond 1e154, a float4 sum PostgreSQL would round, a float variance of values close together, or numeric min/max over mixed display scales)";
		return false;
	}
	gas->empty_group = (gas->nkeys == 0 && gas->ngroups == 0);
	return true;
}

/*
 * Build the fused join's inner tables: for the CPU engine registered with
 * it and chained; for the GPU left unbuilt and sent to the device beside
 * the group table, whose build kernel chains them.  The
 * batches name them in arg2.  False (with the reason) when they cannot.
 */
static bool
build_fused_join(GpuAggState *gas)
{
	bool		for_device = !gas->task_is_cpu && gas->pipe.engine.use_gpu;
	bool		ok = gx_fused_join_build(gas->fj, gas->css.ss.ss_currentRelation, for_device,
										 &gas->join_table_id, &gas->fallback_reason);

	if (ok && !gas->task_is_cpu)
	{
		gas->join_table_id = gx_fused_join_upload(gas->fj, gas->task_id, &gas->fallback_reason);
		ok = gas->join_table_id != 0;
	}
	gas->pipe.batch_arg2 = gas->join_table_id;
	return ok;
}

/*
 * A participant of a parallel aggregation over a join: the device copy of
 * the inner tables that the leader made before its workers started
 * (create_shared_task), once for all; the leader frees it at its end.
 */
static bool
parallel_join_tables(GpuAggState *gas)
{
	GpuAggShared *sh = gas->shared;

	if (sh->join_task_id == 0)
	{
		gas->fallback_reason = "no shared inner tables for the parallel aggregation";
		return false;
	}
	gas->join_table_id = sh->join_task_id;
	gas->pipe.batch_arg2 = gas->join_table_id;
	if (IsParallelWorker())
	{
		SpinLockAcquire(&sh->mutex);
		sh->join_adopters++;
		SpinLockRelease(&sh->mutex);
	}
	return true;
}

/* Attach to a parallel aggregation; false if the results were taken already. */
static void
parallel_attach(GpuAggState *gas)
{
	SpinLockAcquire(&gas->shared->mutex);
	gas->shared->nactive++;
	SpinLockRelease(&gas->shared->mutex);
}

/* Leave it; returns true if this participant is the last and must emit. */
static bool
parallel_detach(GpuAggState *gas, bool failed)
{
	bool		last;

	SpinLockAcquire(&gas->shared->mutex);
	if (failed)
	{
		gas->shared->failed = true;
		if (gas->fallback_reason)
			strlcpy(gas->shared->failure, gas->fallback_reason, sizeof(gas->shared->failure));
	}
	last = (--gas->shared->nactive == 0 && !gas->shared->emitted);
	if (last)
		gas->shared->emitted = true;
	failed = gas->shared->failed;
	SpinLockRelease(&gas->shared->mutex);
	if (last && failed)
		gas->fallback_reason = pstrdup(gas->shared->failure);
	return last;
}

/*
 * Run the whole aggregation and decide what the node returns: the
 * device's groups, the stock plan's rows, or (a parallel participant that
 * is not the last) nothing.
 */
static void
run_aggregation(GpuAggState *gas)
{
	bool		ok = gas->pipe_started && prepare(gas);
	instr_time	t0,
				t1,
				t2;

	INSTR_TIME_SET_CURRENT(t0);

	if (gas->shared)
	{
		parallel_attach(gas);
		if (!gas->pipe.engine.use_gpu || gas->shared->task_id == 0)
		{
			ok = false;
			if (!gas->fallback_reason)
				gas->fallback_reason = "no shared GPU table for the parallel aggregation";
		}
		gas->task_id = gas->shared->task_id;
		gas->pipe.task_id = gas->task_id;
		/* over a join: the inner tables the leader built and uploaded */
		if (ok && gas->fj)
			ok = parallel_join_tables(gas);
		ok = ok && aggregate_batches(gas);
		if (!parallel_detach(gas, !ok))
		{
			gas->phase = GPUAGG_DONE;
			return;
		}
		ok = ok && !gas->shared->failed;
	}
	else
	{
		ok = ok && create_table(gas);
		ok = ok && (gas->fj == NULL || build_fused_join(gas));
		ok = ok && aggregate_batches(gas);
	}
	INSTR_TIME_SET_CURRENT(t1);
	if (ok)
	{
		MemoryContext old = MemoryContextSwitchTo(gas->run_cxt);

		ok = fetch_groups(gas);
		MemoryContextSwitchTo(old);
	}
	INSTR_TIME_SET_CURRENT(t2);
	INSTR_TIME_SUBTRACT(t2, t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	gas->agg_ms = INSTR_TIME_GET_MILLISEC(t1);
	gas->fetch_ms = INSTR_TIME_GET_MILLISEC(t2);
	if (gas->shared)
	{
		/* the last participant frees the shared table */
		gx_task_destroy(gas->task_id);
		gas->task_id = 0;
	}
	else
		drop_table(gas);
	if (ok)
		gas->phase = GPUAGG_EMIT;
	else
	{
		if (gpuext_cpu_fallback == GPUEXT_FALLBACK_NOTICE)
			ereport(NOTICE,
					(errmsg("gpuext aggregation runs PostgreSQL's plan instead"),
					 errdetail("%s", gas->fallback_reason ? gas->fallback_reason : "unknown")));
		gas->phase = GPUAGG_FALLBACK;
	}
}

/* An int128 at a scale as a numeric Datum. */
static Datum
int128_to_numeric_datum(__int128 v, int scale)
{
	char		buf[64];
	char		digits[48];
	int			n = 0;
	bool		neg = v < 0;
	unsigned __int128 u = neg ? -(unsigned __int128) v : (unsigned __int128) v;
	char	   *p = buf;

	do
	{
		digits[n++] = '0' + (int) (u % 10);
		u /= 10;
	} while (u > 0);
	while (n <= scale)
		digits[n++] = '0';
	if (neg)
		*p++ = '-';
	for (int i = n - 1; i >= 0; i--)
	{
		*p++ = digits[i];
		if (i == scale && scale > 0)
			*p++ = '.';
	}
	*p = '\0';
	return DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* A key of an entry as a Datum of the key's type. */
static Datum
key_datum(GpuAggState *gas, int k, const unsigned char *entry, bool *isnull)
{
	const GxAggKey *ak = &gas->spec.keys[k];
	const unsigned char *p = entry + ak->offset;

	*isnull = p[0] != 0;
	if (*isnull)
		return (Datum) 0;
	switch (ak->type)
	{
		case GX_TYPE_BOOL:
			return BoolGetDatum(*(const int64 *) (p + 8) != 0);
		case GX_TYPE_INT2:
			return Int16GetDatum((int16) *(const int64 *) (p + 8));
		case GX_TYPE_INT4:
			return Int32GetDatum((int32) *(const int64 *) (p + 8));
		case GX_TYPE_INT8:
			return Int64GetDatum(*(const int64 *) (p + 8));
		case GX_TYPE_FLOAT4:
			return Float4GetDatum((float4) *(const double *) (p + 8));
		case GX_TYPE_FLOAT8:
			return Float8GetDatum(*(const double *) (p + 8));
		case GX_TYPE_DATE:
			return DateADTGetDatum((DateADT) *(const int64 *) (p + 8));
		case GX_TYPE_TIMESTAMP:
			return TimestampGetDatum(*(const int64 *) (p + 8));
		case GX_TYPE_NUMERIC:
			{
				__int128	v = (__int128) (((unsigned __int128) *(const uint64 *) (p + 16) << 64) |
											*(const uint64 *) (p + 8));
				int			scale = p[1];
				const unsigned char *acc = entry + gas->spec.aggs[gas->key_scale_acc[k]].offset;
				int			display = *(const int32 *) (acc + 24);
				__int128	scaled;

				/* show it with the largest scale it was seen with */
				if (display > scale && gx_numeric_upscale(v, display - scale, &scaled) == 0)
					return int128_to_numeric_datum(scaled, display);
				return int128_to_numeric_datum(v, scale);
			}
		case GX_TYPE_TEXT:
			return PointerGetDatum(cstring_to_text_with_len((const char *) p + 8,
															*(const uint32 *) (p + 4)));
		case GX_TYPE_BPCHAR:
			{
				Datum		t = PointerGetDatum(cstring_to_text_with_len((const char *) p + 8,
																		 *(const uint32 *) (p + 4)));

				/* blank-pad to the key's declared length, as stored values are */
				return DirectFunctionCall3(bpchar, t, Int32GetDatum(gas->key_typmods[k]),
										   BoolGetDatum(false));
			}
	}
	elog(ERROR, "gpuext: unexpected group key type");
	return (Datum) 0;
}

/*
 * The sum (and, if asked, the sum of squares) of a sum or variance
 * accumulator, brought back from the accumulator's fixed scale to the
 * largest scale of its inputs, which it returns (0 for integers).  The
 * divisions are exact: no input had more decimals than that.
 */
static int
acc_sums_at_input_scale(const GxAggFunc *f, const unsigned char *acc, __int128 *sum,
						__int128 *squares)
{
	int			scale = *(const int32 *) (acc + 24);

	*sum = gx_i128_of_halves(acc + 8);
	if (squares)
		*squares = gx_i128_of_halves(acc + 40);
	for (int i = scale; i < f->scale; i++)
	{
		*sum /= 10;
		if (squares)
			*squares /= 100;
	}
	return scale;
}

/* The final value of aggregate a of an entry. */
static Datum
agg_datum(GpuAggState *gas, int a, const unsigned char *entry, bool *isnull)
{
	const GxAggFunc *f = &gas->spec.aggs[a];
	const unsigned char *acc = entry + f->offset;
	uint64		n = *(const uint64 *) acc;
	Aggref	   *agg = list_nth_node(Aggref, gas->aggrefs, a);

	*isnull = false;
	if (gas->defs[a]->final == GXF_COUNT)
		return Int64GetDatum((int64) n);
	if (n == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	switch (gas->defs[a]->final)
	{
		case GXF_SUM_TO_INT8:
			{
				__int128	s = gx_i128_of_halves(acc + 8);

				if (s > PG_INT64_MAX || s < PG_INT64_MIN)
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("bigint out of range")));
				return Int64GetDatum((int64) s);
			}
		case GXF_SUM_TO_NUMERIC:
		case GXF_AVG_TO_NUMERIC:
			{
				__int128	s;
				int			scale = acc_sums_at_input_scale(f, acc, &s, NULL);
				Datum		sum = int128_to_numeric_datum(s, scale);

				if (gas->defs[a]->final == GXF_SUM_TO_NUMERIC)
					return sum;
				return DirectFunctionCall2(numeric_div, sum,
										   NumericGetDatum(int64_to_numeric((int64) n)));
			}
		case GXF_VARIANCE:
			{
				__int128	s;
				__int128	sq;
				int			scale = acc_sums_at_input_scale(f, acc, &s, &sq);

				return gx_finish_variance(gas->finishers[a], (int64) n,
										  int128_to_numeric_datum(s, scale),
										  int128_to_numeric_datum(sq, 2 * scale), scale, isnull);
			}
		case GXF_VARIANCE_FLOAT:
			return gx_finish_float_variance(gas->finishers[a], (double) n, *(const double *) (acc + 8),
											float_deviations(acc), isnull);
		case GXF_SUM_TO_FLOAT8:
			return Float8GetDatum(*(const double *) (acc + 8));
		case GXF_SUM_TO_FLOAT4:
			return Float4GetDatum((float4) *(const double *) (acc + 8));
		case GXF_AVG_TO_FLOAT8:
			return Float8GetDatum(*(const double *) (acc + 8) / (double) n);
		case GXF_MINMAX_NUMERIC:
			{
				/* every input had this display scale: the division is exact */
				int			scale = *(const int32 *) (acc + 24);
				__int128	v = *(const int64 *) (acc + 8);

				for (int i = scale; i < f->scale; i++)
					v /= 10;
				return int128_to_numeric_datum(v, scale);
			}
		case GXF_MINMAX:
			if (f->kind == GX_AGG_MIN_FLOAT || f->kind == GX_AGG_MAX_FLOAT)
			{
				double		d = *(const double *) (acc + 8);

				return agg->aggtype == FLOAT4OID ? Float4GetDatum((float4) d) : Float8GetDatum(d);
			}
			switch (agg->aggtype)
			{
				case INT2OID:
					return Int16GetDatum((int16) *(const int64 *) (acc + 8));
				case INT4OID:
				case DATEOID:
					return Int32GetDatum((int32) *(const int64 *) (acc + 8));
				default:
					return Int64GetDatum(*(const int64 *) (acc + 8));
			}
		default:
			break;
	}
	elog(ERROR, "gpuext: unexpected aggregate");
	return (Datum) 0;
}

/* ExecScan access method: the next group, as the node's scan tuple. */
static TupleTableSlot *
gpuagg_next_group(ScanState *ss)
{
	GpuAggState *gas = (GpuAggState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	unsigned char *entry;
	MemoryContext old;
	int			natts = slot->tts_tupleDescriptor->natts;

	ExecClearTuple(slot);
	if (gas->empty_group)
	{
		/* no GROUP BY and no rows: one row of initial states */
		gas->empty_group = false;
		entry = palloc0(gas->spec.entry_size);
		gx_agg_init_entry(&gas->spec, entry);
	}
	else if (gas->next_group < gas->ngroups)
		entry = (unsigned char *) gas->groups + gas->next_group++ * gas->spec.entry_size;
	else
		return slot;

	old = MemoryContextSwitchTo(ss->ps.ps_ExprContext->ecxt_per_tuple_memory);
	for (int i = 0; i < natts; i++)
	{
		if (i < gas->nkeys)
			slot->tts_values[i] = key_datum(gas, i, entry, &slot->tts_isnull[i]);
		else if (i < gas->nkeys + gas->naggs)
			slot->tts_values[i] = agg_datum(gas, i - gas->nkeys, entry, &slot->tts_isnull[i]);
		else
		{
			slot->tts_values[i] = (Datum) 0;
			slot->tts_isnull[i] = true;
		}
	}
	MemoryContextSwitchTo(old);
	return ExecStoreVirtualTuple(slot);
}

static bool
gpuagg_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
gpuagg_exec(CustomScanState *node)
{
	GpuAggState *gas = (GpuAggState *) node;

	if (gas->phase == GPUAGG_INIT)
	{
		if (!gas->pipe_started)
			gas->phase = GPUAGG_FALLBACK;	/* the program could not be built */
		else
			run_aggregation(gas);
	}
	switch (gas->phase)
	{
		case GPUAGG_EMIT:
			return ExecScan(&node->ss, gpuagg_next_group, gpuagg_recheck);
		case GPUAGG_FALLBACK:
			start_fallback(gas);
			return ExecProcNode(gas->fallback);
		default:
			return ExecClearTuple(node->ss.ps.ps_ResultTupleSlot);
	}
}

static void
gpuagg_end(CustomScanState *node)
{
	GpuAggState *gas = (GpuAggState *) node;

	if (gas->pipe_started)
		gx_pipeline_end(&gas->pipe);
	drop_table(gas);
	if (gas->fallback)
		ExecEndNode(gas->fallback);
	if (gas->fj)
		gx_fused_join_end(gas->fj);
}

/*
 * Tell the child plans (PostgreSQL's plan, a fused join's inner plans)
 * which parameters changed: ExecReScan does that for a node's left and
 * right trees only, and a child that keeps its rows across rescans (a
 * hashed aggregation, a Material, a sort) would otherwise return those of
 * the previous scan.
 */
static void
propagate_changed_params(CustomScanState *node)
{
	ListCell   *lc;

	if (node->ss.ps.chgParam == NULL)
		return;
	foreach(lc, node->custom_ps)
		UpdateChangedParamSet((PlanState *) lfirst(lc), node->ss.ps.chgParam);
}

static void
gpuagg_rescan(CustomScanState *node)
{
	GpuAggState *gas = (GpuAggState *) node;

	propagate_changed_params(node);

	if (gas->pipe_started)
		gx_pipeline_reset(&gas->pipe);
	if (gas->shared == NULL)
		drop_table(gas);
	gas->phase = GPUAGG_INIT;
	gas->prepared = false;		/* Params may have new values */
	if (gas->run_cxt)
		MemoryContextReset(gas->run_cxt);
	gas->groups = NULL;
	gas->ngroups = 0;
	gas->next_group = 0;
	gas->empty_group = false;
	gas->fallback_reason = NULL;
	if (gas->fallback)
		ExecReScan(gas->fallback);
	/* (a parallel leader's join tables: gpuagg_reinit_dsm's) */
	if (gas->fj && gas->shared == NULL)
		gx_fused_join_reset(gas->fj);
}

static Size
gpuagg_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return offsetof(GpuAggShared, pscan) + table_block_parallelscan_estimate(node->ss.ss_currentRelation);
}

/*
 * The leader creates the shared device table before the workers start;
 * over a join, it also runs the inner plans and builds and uploads their
 * tables, once for every participant (they used to, each).
 */
static void
create_shared_task(GpuAggState *gas)
{
	GpuAggShared *sh = gas->shared;

	sh->task_id = 0;
	sh->nactive = 0;
	sh->emitted = false;
	sh->failed = false;
	sh->failure[0] = '\0';
	sh->join_task_id = 0;
	sh->join_adopters = 0;
	if (gas->pipe_started && gas->pipe.engine.use_gpu && prepare(gas) && create_table(gas))
	{
		sh->task_id = gas->task_id;
		if (gas->fj && build_fused_join(gas))
			sh->join_task_id = gas->join_table_id;
		else if (gas->fj)
		{
			/* the inner tables cannot join on the device: nobody aggregates */
			gx_task_destroy(gas->task_id);
			gas->task_id = 0;
			sh->task_id = 0;
			sh->failed = true;
			strlcpy(sh->failure, gas->fallback_reason ? gas->fallback_reason :
					"the inner tables could not be uploaded", sizeof(sh->failure));
		}
	}
	else
	{
		sh->failed = true;
		strlcpy(sh->failure, gas->fallback_reason ? gas->fallback_reason :
				"the parallel aggregation has no GPU", sizeof(sh->failure));
	}
}

static void
gpuagg_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuAggState *gas = (GpuAggState *) node;
	GpuAggShared *sh = coordinate;

	SpinLockInit(&sh->mutex);
	gas->shared = sh;
	table_block_parallelscan_initialize(node->ss.ss_currentRelation,
										(ParallelTableScanDesc) &sh->pscan);
	gas->pipe.pscan = &sh->pscan;
	create_shared_task(gas);
}

static void
gpuagg_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuAggState *gas = (GpuAggState *) node;
	GpuAggShared *sh = coordinate;

	table_block_parallelscan_reinitialize(node->ss.ss_currentRelation,
										  (ParallelTableScanDesc) &sh->pscan);
	gx_task_destroy(sh->task_id);
	/* the previous scan's workers are done with its join tables */
	propagate_changed_params(node);
	if (gas->fj)
		gx_fused_join_reset(gas->fj);
	create_shared_task(gas);
}

static void
gpuagg_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GpuAggState *gas = (GpuAggState *) node;

	gas->shared = coordinate;
	gas->pipe.pscan = &gas->shared->pscan;
}

/*
 * ShutdownCustomScan: the leader notes for EXPLAIN ANALYZE how many
 * workers used its join tables, before the DSM chunk goes.
 */
static void
gpuagg_shutdown(CustomScanState *node)
{
	GpuAggState *gas = (GpuAggState *) node;

	if (gas->shared != NULL && !IsParallelWorker() && gas->fj != NULL)
	{
		SpinLockAcquire(&gas->shared->mutex);
		gas->join_shared_workers = gas->shared->join_task_id != 0 ?
			gas->shared->join_adopters : -1;
		SpinLockRelease(&gas->shared->mutex);
	}
}

/* Deparse a list of expressions for EXPLAIN. */
static char *
deparse_list(List *exprs, List *context, bool useprefix)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, exprs)
	{
		if (buf.len > 0)
			appendStringInfoString(&buf, ", ");
		appendStringInfoString(&buf, deparse_expression(lfirst(lc), context, useprefix, false));
	}
	return buf.data;
}

static void
gpuagg_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuAggState *gas = (GpuAggState *) node;
	List	   *context;
	bool		useprefix = list_length(es->rtable) > 1 || es->verbose;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	if (gas->key_exprs)
		ExplainPropertyText("GPU Group Keys", deparse_list(gas->key_exprs, context, useprefix), es);
	ExplainPropertyText("GPU Aggregates", deparse_list(gas->aggrefs, context, useprefix), es);
	if (gas->quals)
		ExplainPropertyText("GPU Filter",
							deparse_expression((Node *) make_ands_explicit(gas->quals),
											   context, useprefix, false), es);
	if (gas->fj)
		gx_fused_join_explain(gas->fj, context, es);
	if (es->analyze && gas->join_shared_workers >= 0)
		ExplainPropertyText("Inner Build",
							psprintf("leader, shared with %d worker%s", gas->join_shared_workers,
									 gas->join_shared_workers == 1 ? "" : "s"), es);
	if (!gpuext_regression_test_mode)
	{
		if (gas->pipe_started)
			ExplainPropertyText("Engine", gx_engine_name(&gas->pipe.engine), es);
		if (es->verbose && gas->pipe_started)
		{
			ExplainPropertyInteger("Group Table Slots", NULL, gas->capacity, es);
			ExplainPropertyInteger("Block-Private Slots", NULL, gas->local_capacity, es);
			ExplainPropertyInteger("Block-Private Copies", NULL, gas->local_copies, es);
		}
	}
	if (es->analyze && gas->phase != GPUAGG_INIT)
	{
		ExplainPropertyText("Result From",
							gas->phase == GPUAGG_EMIT ? "device" :
							gas->phase == GPUAGG_FALLBACK ? "PostgreSQL plan" : "another participant", es);
		if (gas->phase == GPUAGG_FALLBACK && gas->fallback_reason)
			ExplainPropertyText("Fallback Reason", gas->fallback_reason, es);
		if (gas->phase == GPUAGG_EMIT)
		{
			ExplainPropertyInteger("Groups", NULL, gas->ngroups, es);
			ExplainPropertyInteger("Rows Aggregated", NULL, gas->rows_aggregated, es);
		}
		if (gas->pipe_started)
			gx_pipeline_explain_cache(&gas->pipe, false, es);
		if (!gpuext_regression_test_mode && gas->pipe_started)
		{
			ExplainPropertyInteger("Pages", NULL, gas->pipe.npages, es);
			gx_pipeline_explain_batches(&gas->pipe, es);
			gx_pipeline_explain_times(&gas->pipe, es);
			ExplainPropertyFloat("Aggregation Time", "ms", gas->agg_ms, 3, es);
			ExplainPropertyFloat("Fetch Time", "ms", gas->fetch_ms, 3, es);
		}
	}
}

/* Register the hook and the node; from _PG_init. */
void
gx_gpuagg_init(void)
{
	DefineCustomIntVariable("gpuext.agg_private_max_groups",
							"GpuAgg gives each GPU block a private group table in shared memory when "
							"at most this many groups are expected.",
							"Rows of hot groups are then combined in shared memory; groups that do not "
							"fit go to the global table. 0: never.",
							&agg_private_max_groups, 64, 0, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.agg_hot_groups",
							"With more groups than gpuext.agg_private_max_groups, each GPU block keeps "
							"the first this many groups it meets in shared memory.",
							"With skewed keys those are the frequent groups, whose rows then stay out "
							"of the global table's atomics. 0: no such table.",
							&agg_hot_groups, 32, 0, 1024,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.agg_private_copies",
							"Copies of the block-private group table each GPU block keeps, at most.",
							"Warp w updates copy w modulo the copies, so that the updates of a hot "
							"group spread over them; fewer when shared memory is short. 1: one table.",
							&agg_private_copies, 4, 1, GX_AGG_LOCAL_MAX_COPIES,
							PGC_USERSET, 0, NULL, NULL, NULL);
	RegisterCustomScanMethods(&gpuagg_plan_methods);
	prev_create_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = gpuagg_add_paths;
}
