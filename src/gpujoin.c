/*-------------------------------------------------------------------------
 * gpujoin.c
 *		GpuJoin: hash joins of a scanned heap relation (the outer side)
 *		with one or more inner relations, probed on the device.
 *
 * Planner: from set_join_pathlist_hook, a CustomPath for a join whose
 * outer side is a base heap relation (or a GpuJoin path of one: the new
 * inner relation becomes one more "depth" of the same node, so each outer
 * row probes every inner relation in one pass), whose join type is inner,
 * left, semi or anti, with at least one hashable equality key of a
 * device-supported type whose outer side uses only the scanned relation.
 * Inner joins keep their other join clauses as host filters over the
 * joined row; left joins keep clauses pushed down to them that way; any
 * other clause means no GpuJoin.
 *
 * Executor: each inner plan (any plan; its rows are shipped to the engine)
 * is run once, its rows are kept as minimal tuples and their keys encoded
 * into a hash table per depth (cuda/gx_join.h).  Batches of outer pages go
 * through the pipeline with a program that runs the scanned relation's
 * device quals and computes the outer keys; the device probes every
 * depth and returns, per row, a pass/recheck bit and the first match of
 * each depth.  The host walks the duplicate chains and forms the joined
 * rows (a virtual tuple in the layout of custom_scan_tlist), applies the
 * host filters and the projection.  A row the device cannot decide (an
 * error, a value it cannot decode) is evaluated by PostgreSQL: quals, keys
 * and the equality operators themselves, against every inner row.  Inner
 * keys the device cannot hold (numeric NaN or beyond 128 bits) are
 * compared on the host with the operator for every outer row.
 *
 * An inner side whose hash tables exceed gpuext.gpu_memory_limit runs on
 * the CPU engine (host memory) instead of failing.
 *
 * Parallel query: the workers share the outer scan; the leader alone runs
 * the inner plans and builds the tables, in InitializeDSMCustomScan (before
 * the workers start), in a DSM segment that every participant then reads
 * with the same per-row code, and on the GPU uploads them once (the
 * workers use that task).  The leader frees both at its end, after its
 * workers; on an error or a cancel its resource owner does, after the
 * parallel context has stopped the workers.  Without room for a segment
 * each participant builds its own tables, as a serial node does.
 *
 * IDENTIFICATION
 *		src/gpujoin.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include <float.h>

#include "access/relscan.h"
#include "access/table.h"
#include "access/parallel.h"
#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "executor/nodeHash.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "pgstat.h"
#include "rewrite/rewriteManip.h"
#include "storage/bufmgr.h"
#include "storage/dsm.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/timestamp.h"

#include "codegen.h"
#include "colcache.h"
#include "costparams.h"
#include "gpujoin.h"
#include "gpuscan.h"
#include "gx_join.h"
#include "paths.h"
#include "pipeline.h"
#include "quota.h"
#include "timing.h"

#define NULL_ROW	UINT32_MAX	/* no inner row: NULL-extended, semi, anti */

/* planner's view of one depth */
typedef struct GpuJoinDepthInfo
{
	JoinType	jointype;
	Path	   *inner_path;
	double		inner_rows;
	List	   *outer_keys;		/* Exprs over the scanned relation */
	List	   *inner_keys;		/* Exprs over the inner path's target */
	List	   *eqfuncs;		/* equality function of each key */
	List	   *collations;
	List	   *kclasses;		/* GX_JKEY_* */
	List	   *key_clauses;	/* the clauses, for EXPLAIN */
} GpuJoinDepthInfo;

/* a GpuJoin path: a CustomPath with what PlanCustomPath needs */
typedef struct GpuJoinPath
{
	CustomPath	cpath;
	Index		fact_relid;
	List	   *fact_quals;		/* RestrictInfos of the scanned relation */
	List	   *device_quals;	/* those the device runs */
	List	   *host_filters;	/* RestrictInfos over the joined row */
	int			ndepths;
	GpuJoinDepthInfo depths[GX_JOIN_MAX_DEPTH];
} GpuJoinPath;

/* executor's view of one depth */
typedef struct GpuJoinDepth
{
	int			jointype;		/* GX_JOIN_* */
	int			nkeys;
	PlanState  *child;
	List	   *outer_keys;
	List	   *inner_keys;
	List	   *key_clauses;
	ExprState  *outer_key_states[GX_JOIN_MAX_KEYS];
	ExprState  *inner_key_states[GX_JOIN_MAX_KEYS];
	FmgrInfo	eqfn[GX_JOIN_MAX_KEYS];
	Oid			collation[GX_JOIN_MAX_KEYS];
	int			kclass[GX_JOIN_MAX_KEYS];
	Oid			inner_type[GX_JOIN_MAX_KEYS];
	int16		inner_typlen[GX_JOIN_MAX_KEYS];
	bool		inner_typbyval[GX_JOIN_MAX_KEYS];
	TupleTableSlot *slot;		/* a stored inner row */
	uint32		stored_in_slot; /* which one, or NULL_ROW */

	/*
	 * Inner rows: the hashed ones first (row i of the table), then extras.
	 * Their minimal tuples and key values are in one arena, named by
	 * offsets, so that they can move whole to a DSM segment that the
	 * workers of a parallel GpuJoin map (inner_tuple, inner_keyval).
	 */
	char	   *arena;
	uint64		arena_len;
	uint64		arena_cap;
	uint64	   *tuples;			/* per row: the offset of its minimal tuple */
	Datum	   *keyvals;		/* nkeys per row, for PostgreSQL's operators:
								 * by-value keys, else offsets in the arena */
	uint32	   *group_head;		/* per hashed row: first row of its key in our chains */

	/* inner columns stored per hashed row (group keys of a fused aggregation) */
	int			nvalues;
	AttrNumber	value_attno[GX_JOIN_MAX_PAYLOAD];
	Oid			value_type[GX_JOIN_MAX_PAYLOAD];
	bool		values_bad;		/* a value the device cannot hold */
	uint32		nrows;			/* rows in the hash table */
	uint32		nextras;		/* rows whose keys the device cannot hold */
	uint32		ntuples;		/* nrows + nextras */
	uint32		cap;

	/* matches of the current outer row */
	uint32	   *matches;
	uint32		nmatches;
	uint32		mcap;
	uint32		pos;

	uint64		rows_out;		/* joined rows after this depth, for EXPLAIN */
} GpuJoinDepth;

typedef struct GpuJoinState
{
	CustomScanState css;
	Index		fact_relid;		/* varno of the scanned relation's Vars */
	int			ndepths;
	GpuJoinDepth depths[GX_JOIN_MAX_DEPTH];
	List	   *all_quals;		/* of the scanned relation, PostgreSQL's order */
	List	   *plan_device_quals;
	List	   *device_quals;	/* those in the program */
	ExprState  *recheck_state;
	ExprState  *pass_state;
	bool		host_fact_quals;	/* some quals run on the host */

	/* where each column of the joined row comes from */
	int			nsrc;
	int		   *src_depth;		/* 0: scanned relation, d + 1: depth d */
	AttrNumber *src_attno;

	MemoryContext program_cxt;
	MemoryContext inner_cxt;
	bool		program_built;
	bool		inner_built;
	bool		rows_unused;	/* fused aggregation: inner rows are never
								 * returned nor rechecked on the host, so
								 * only their keys and values are kept */
	bool		device_builds;	/* ...and the device alone probes the tables:
								 * the host sends them unbuilt (no chains) */
	GxProgram  *program;
	GxJoinTables *tables;
	uint32		table_id;		/* CPU engine registration of the tables */
	uint32		gpu_task;		/* the same tables in device memory, or 0 */
	uint64		table_bytes;
	bool		over_limit;		/* tables exceed gpuext.gpu_memory_limit */
	bool		outer_empty;	/* the scanned relation has no pages */

	GxPipeline	pipe;
	bool		pipe_started;
	TupleTableSlot *fact_slot;
	HeapTupleData tuple;

	/* the batch being consumed */
	GxPipeBatch *cur;
	uint32		cur_page;
	uint32		cur_word;
	uint32		cur_bits;
	bool		have_row;		/* an outer row with combinations left */

	uint64		rows_rechecked;
	uint64		outer_rows;

	/* parallel query: the leader builds the inner tables, workers map them */
	struct GpuJoinShared *shared;	/* the node's DSM chunk, or NULL */
	dsm_segment *seg;			/* the segment that holds the inner tables */
	bool		gpu_task_borrowed;	/* gpu_task is the leader's (never freed here) */
	int			shared_workers; /* workers that took the leader's tables, or -1 */
	int			shared_rounds;	/* parallel scans this leader shared tables for */
	int			leader_builds;	/* of which it built them anew */

	/* EXPLAIN ANALYZE: where the inner side's time went (all builds) */
	double		inner_rows_ms;	/* running the inner plans, keeping rows */
	double		inner_hash_ms;	/* assembling and hashing the tables */
	double		inner_upload_ms;	/* sending them to the device */
} GpuJoinState;

/*
 * One depth of the inner tables in their DSM segment (offsets from the
 * segment's start).
 */
typedef struct GpuJoinSharedDepth
{
	uint32		nrows;
	uint32		nextras;
	bool		values_bad;
	uint64		tuples_at;
	uint64		keyvals_at;
	uint64		group_head_at;
	uint64		arena_at;
	uint64		arena_len;
} GpuJoinSharedDepth;

/* The inner tables in a DSM segment: this header, then the parts. */
typedef struct GpuJoinSharedTables
{
	uint64		total_bytes;
	int			ndepths;
	uint64		tables_at;		/* the GxJoinTables block */
	uint64		table_bytes;
	GpuJoinSharedDepth depths[GX_JOIN_MAX_DEPTH];
} GpuJoinSharedTables;

/*
 * What a parallel GpuJoin's processes share (its DSM chunk, before the
 * parallel scan's state): the leader builds the inner tables in
 * InitializeDSMCustomScan, before the workers start, into a segment of
 * their own, and uploads them once; workers map that segment and use the
 * leader's device copy.  No segment (no room for one): each participant
 * builds its own, as without sharing.
 */
typedef struct GpuJoinShared
{
	bool		has_tables;		/* 'handle' holds the inner tables */
	dsm_handle	handle;
	uint32		gpu_task;		/* the leader's device copy, or 0 (CPU engine) */
	bool		over_limit;		/* the tables exceed gpuext.gpu_memory_limit */
	pg_atomic_uint32 adopted;	/* workers that took them (EXPLAIN ANALYZE) */
} GpuJoinShared;

#define GPUJOIN_SHARED_SIZE MAXALIGN(sizeof(GpuJoinShared))

static set_join_pathlist_hook_type prev_set_join_pathlist_hook = NULL;
static planner_hook_type prev_planner_hook = NULL;

/*
 * Every GpuJoin path made during the current planner call, each copied
 * before add_path or add_partial_path could free it (see remember_path).
 * A GpuJoin path that loses to a stock join in its relation's path list
 * still describes a join that GpuAgg can absorb (the fused path costs no
 * joined rows on the host, the GpuJoin path does), or that a GpuJoin of
 * one more inner relation can extend: both look here, not only in the
 * path lists.  Reset by gpujoin_planner for each (possibly nested) call.
 */
static List *kept_paths = NIL;
static MemoryContext kept_cxt = NULL;	/* made at the first path kept */
static MemoryContext kept_parent = NULL;	/* the planner call's; NULL outside one */

/* gpuext.gpujoin_kernels: build and probe on the GPU when there is one */
static bool gpujoin_kernels = true;

static Plan *gpujoin_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						  List *tlist, List *clauses, List *custom_plans);
static Node *gpujoin_create_state(CustomScan *cscan);
static void gpujoin_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *gpujoin_exec(CustomScanState *node);
static void gpujoin_end(CustomScanState *node);
static void gpujoin_rescan(CustomScanState *node);
static Size gpujoin_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void gpujoin_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void gpujoin_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void gpujoin_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate);
static void gpujoin_shutdown(CustomScanState *node);
static void gpujoin_explain(CustomScanState *node, List *ancestors, ExplainState *es);
static const char *jointype_name(int jointype);

static const CustomPathMethods gpujoin_path_methods = {
	.CustomName = "GpuJoin",
	.PlanCustomPath = gpujoin_plan,
};

static const CustomScanMethods gpujoin_plan_methods = {
	.CustomName = "GpuJoin",
	.CreateCustomScanState = gpujoin_create_state,
};

static const CustomExecMethods gpujoin_exec_methods = {
	.CustomName = "GpuJoin",
	.BeginCustomScan = gpujoin_begin,
	.ExecCustomScan = gpujoin_exec,
	.EndCustomScan = gpujoin_end,
	.ReScanCustomScan = gpujoin_rescan,
	.EstimateDSMCustomScan = gpujoin_estimate_dsm,
	.InitializeDSMCustomScan = gpujoin_init_dsm,
	.ReInitializeDSMCustomScan = gpujoin_reinit_dsm,
	.InitializeWorkerCustomScan = gpujoin_init_worker,
	.ShutdownCustomScan = gpujoin_shutdown,
	.ExplainCustomScan = gpujoin_explain,
};

/* ---------------------------------------------------------------------
 * Keys
 * ---------------------------------------------------------------------
 */

/*
 * The key class of an equality function, and the value classes (GxType)
 * its outer operand may have on the device; 0 when not supported.
 */
static int
eqfunc_kclass(Oid funcid, int *family)
{
	switch (funcid)
	{
		case F_INT2EQ:
		case F_INT4EQ:
		case F_INT8EQ:
		case F_INT24EQ:
		case F_INT42EQ:
		case F_INT28EQ:
		case F_INT82EQ:
		case F_INT48EQ:
		case F_INT84EQ:
			*family = GX_TYPE_INT8;
			return GX_JKEY_INT;
		case F_BOOLEQ:
			*family = GX_TYPE_BOOL;
			return GX_JKEY_INT;
		case F_DATE_EQ:
			*family = GX_TYPE_DATE;
			return GX_JKEY_INT;
		case F_TIMESTAMP_EQ:
		case F_TIMESTAMPTZ_EQ:
			*family = GX_TYPE_TIMESTAMP;
			return GX_JKEY_INT;
		case F_FLOAT4EQ:
		case F_FLOAT8EQ:
		case F_FLOAT48EQ:
		case F_FLOAT84EQ:
			*family = GX_TYPE_FLOAT8;
			return GX_JKEY_FLOAT;
		case F_NUMERIC_EQ:
			*family = GX_TYPE_NUMERIC;
			return GX_JKEY_NUMERIC;
		case F_TEXTEQ:
			*family = GX_TYPE_TEXT;
			return GX_JKEY_TEXT;
		case F_BPCHAREQ:
			*family = GX_TYPE_BPCHAR;
			return GX_JKEY_BPCHAR;
		default:
			return 0;
	}
}

/* Does a device value class belong to a key family? */
static bool
type_in_family(int type, int family)
{
	switch (family)
	{
		case GX_TYPE_INT8:
			return type == GX_TYPE_INT2 || type == GX_TYPE_INT4 || type == GX_TYPE_INT8;
		case GX_TYPE_FLOAT8:
			return type == GX_TYPE_FLOAT4 || type == GX_TYPE_FLOAT8;
		default:
			return type == family;
	}
}

/* Anything the inner key evaluation cannot take (Params, subplans)? */
static bool
unsupported_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param) || IsA(node, SubPlan) || IsA(node, AlternativeSubPlan) ||
		IsA(node, SubLink) || IsA(node, Aggref) || IsA(node, WindowFunc) ||
		IsA(node, GroupingFunc))
		return true;
	return expression_tree_walker(node, unsupported_walker, context);
}

/* Replace parts of an inner key equal to an inner target entry by INNER_VAR Vars. */
typedef struct InnerRefContext
{
	List	   *exprs;			/* the inner plan's output expressions */
	bool		missing;		/* a Var was not among them */
} InnerRefContext;

static Node *
inner_ref_mutator(Node *node, InnerRefContext *ctx)
{
	int			i = 1;
	ListCell   *lc;

	if (node == NULL)
		return NULL;
	foreach(lc, ctx->exprs)
	{
		if (equal(node, lfirst(lc)))
		{
			Expr	   *e = (Expr *) lfirst(lc);

			return (Node *) makeVar(INNER_VAR, i, exprType((Node *) e), exprTypmod((Node *) e),
									exprCollation((Node *) e), 0);
		}
		i++;
	}
	if (IsA(node, Var) || IsA(node, PlaceHolderVar))
	{
		ctx->missing = true;
		return node;
	}
	return expression_tree_mutator(node, inner_ref_mutator, (void *) ctx);
}

/* The inner plan's output expressions, from its path (CP_EXACT_TLIST) or plan. */
static List *
tlist_exprs(List *tlist)
{
	List	   *exprs = NIL;
	ListCell   *lc;

	foreach(lc, tlist)
		exprs = lappend(exprs, ((TargetEntry *) lfirst(lc))->expr);
	return exprs;
}

/* ---------------------------------------------------------------------
 * Planner
 * ---------------------------------------------------------------------
 */

/* Is this one of our paths? */
static bool
is_gpujoin_path(Path *path)
{
	return IsA(path, CustomPath) && ((CustomPath *) path)->methods == &gpujoin_path_methods;
}

/*
 * Where a column of the joined row comes from: 0 for the scanned
 * relation (attno in *attno), d + 1 for depth d (position in its inner
 * target), -1 when nowhere.
 */
static int
column_source(Node *var, Index fact_relid, int ndepths, List **inner_exprs, AttrNumber *attno)
{
	if (IsA(var, Var) && ((Var *) var)->varno == fact_relid && ((Var *) var)->varlevelsup == 0)
	{
		*attno = ((Var *) var)->varattno;
		return *attno > 0 ? 0 : -1;
	}
	for (int d = 0; d < ndepths; d++)
	{
		int			i = 1;
		ListCell   *lc;

		foreach(lc, inner_exprs[d])
		{
			if (equal(var, lfirst(lc)))
			{
				*attno = i;
				return d + 1;
			}
			i++;
		}
	}
	return -1;
}

/* Can every Var of these expressions be found in the joined row? */
static bool
columns_available(List *exprs, GpuJoinPath *gp)
{
	List	   *inner_exprs[GX_JOIN_MAX_DEPTH];
	List	   *vars = pull_var_clause((Node *) exprs, PVC_INCLUDE_PLACEHOLDERS);
	ListCell   *lc;

	for (int d = 0; d < gp->ndepths; d++)
		inner_exprs[d] = gp->depths[d].inner_path->pathtarget->exprs;
	foreach(lc, vars)
	{
		AttrNumber	attno;

		if (column_source(lfirst(lc), gp->fact_relid, gp->ndepths, inner_exprs, &attno) < 0)
			return false;
	}
	return true;
}

/*
 * Sort the join clauses of one depth into device keys and host filters.
 * Returns false when the join cannot be a GpuJoin depth.
 */
static bool
classify_clauses(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
				 RelOptInfo *innerrel, JoinType jointype, List *restrictlist,
				 Relids fact_relids, Path *inner_path, GpuJoinDepthInfo *di,
				 List **filters)
{
	List	   *inner_exprs = inner_path->pathtarget->exprs;
	List	   *depth_filters = NIL;
	ListCell   *lc;

	foreach(lc, restrictlist)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		bool		pushed = RINFO_IS_PUSHED_DOWN(ri, joinrel->relids);
		bool		is_key = false;

		/*
		 * Inner and semi joins treat every clause as a join clause; outer
		 * and anti joins filter their result with the "pushed down" ones.
		 */
		if ((jointype == JOIN_INNER || jointype == JOIN_SEMI || !pushed) && ri->can_join && OidIsValid(ri->hashjoinoperator) &&
			IsA(ri->clause, OpExpr) && list_length(((OpExpr *) ri->clause)->args) == 2 &&
			list_length(di->outer_keys) < GX_JOIN_MAX_KEYS)
		{
			OpExpr	   *op = (OpExpr *) ri->clause;
			Expr	   *outer_arg = NULL;
			Expr	   *inner_arg = NULL;
			Relids		outer_relids = NULL;
			int			family;
			int			kclass = eqfunc_kclass(get_opcode(op->opno), &family);

			if (bms_is_subset(ri->left_relids, outerrel->relids) &&
				bms_is_subset(ri->right_relids, innerrel->relids))
			{
				outer_arg = linitial(op->args);
				inner_arg = lsecond(op->args);
				outer_relids = ri->left_relids;
			}
			else if (bms_is_subset(ri->right_relids, outerrel->relids) &&
					 bms_is_subset(ri->left_relids, innerrel->relids))
			{
				outer_arg = lsecond(op->args);
				inner_arg = linitial(op->args);
				outer_relids = ri->right_relids;
			}
			if (kclass != 0 && outer_arg != NULL && !bms_is_empty(outer_relids) &&
				bms_is_subset(outer_relids, fact_relids) &&
				(kclass != GX_JKEY_TEXT && kclass != GX_JKEY_BPCHAR ?
				 true : (OidIsValid(op->inputcollid) &&
						 get_collation_isdeterministic(op->inputcollid))) &&
				!contain_volatile_functions((Node *) op) &&
				!unsupported_walker((Node *) outer_arg, NULL) &&
				!unsupported_walker((Node *) inner_arg, NULL))
			{
				InnerRefContext ctx = {inner_exprs, false};

				(void) inner_ref_mutator((Node *) inner_arg, &ctx);
				if (!ctx.missing)
				{
					di->outer_keys = lappend(di->outer_keys, outer_arg);
					di->inner_keys = lappend(di->inner_keys, inner_arg);
					di->eqfuncs = lappend_oid(di->eqfuncs, get_opcode(op->opno));
					di->collations = lappend_oid(di->collations, op->inputcollid);
					di->kclasses = lappend_int(di->kclasses, kclass);
					di->key_clauses = lappend(di->key_clauses, op);
					is_key = true;
				}
			}
		}
		if (is_key)
			continue;
		/* the rest: filters over the joined row, where that is the same thing */
		if (jointype == JOIN_INNER ||
			((jointype == JOIN_LEFT || jointype == JOIN_ANTI) && pushed))
		{
			if (contain_volatile_functions((Node *) ri->clause))
				return false;
			depth_filters = lappend(depth_filters, ri);
		}
		else
			return false;
	}

	/*
	 * After the filters of the depths before, in the order PostgreSQL's
	 * hash join evaluates its join clauses
	 */
	*filters = list_concat(*filters, gx_order_qual_clauses(root, depth_filters));
	return di->outer_keys != NIL;
}

/* Estimated bytes of the hash tables of these depths. */
static double
estimate_table_bytes(GpuJoinPath *gp)
{
	double		bytes = 0;

	for (int d = 0; d < gp->ndepths; d++)
	{
		double		rows = gp->depths[d].inner_rows;
		double		words = list_length(gp->depths[d].outer_keys) * 2;

		bytes += sizeof(GxJoinTable) + rows * (8 + sizeof(GxJoinRow) + words * 8);
	}
	return bytes;
}

/*
 * The cost of an inner path of a GpuJoin (or of a fused one): a forced
 * GpuJoin as inner side counts at its real cost, which gx_cost_forced
 * made a millionth, like any other inner path.
 */
static Cost
inner_path_cost(Path *ip)
{
	return ip->total_cost * (gpuext_force_offload && is_gpujoin_path(ip) ? 1e6 : 1);
}

/*
 * What the device program of a GpuJoin's outer scan reads: its device
 * quals and every depth's outer keys (for the column cache's share of the
 * scan, gx_colcache_cost_input).
 */
static List *
outer_program_exprs(GpuJoinPath *gp)
{
	List	   *exprs = list_copy(gp->device_quals);

	for (int d = 0; d < gp->ndepths; d++)
		exprs = list_concat(exprs, gp->depths[d].outer_keys);
	return exprs;
}

/*
 * Cost a GpuJoin path: the outer scan, then the join.  A partial path
 * (workers > 0) gets the workers of at most 'workers' that pay for their
 * start.
 */
static void
cost_gpujoin(PlannerInfo *root, GpuJoinPath *gp, RelOptInfo *fact, RelOptInfo *joinrel,
			 int workers, bool gpu)
{
	Path	   *path = &gp->cpath.path;
	const GxCostParams *cp = gx_cost_params();
	GxScanCostInput in;
	GxJoinCostInput jin;
	QualCost	host_cost;
	QualCost	filter_cost;
	Cost		scan_startup,
				scan_total,
				join_startup,
				join_run;
	Cost		inner_cost = 0;
	double		divisor = 1;

	cost_qual_eval(&host_cost, list_difference_ptr(gp->fact_quals, gp->device_quals), root);
	cost_qual_eval(&filter_cost, gp->host_filters, root);
	memset(&in, 0, sizeof(in));
	in.pages = fact->pages;
	in.allvisfrac = fact->allvisfrac;
	in.tuples = fact->tuples;
	in.rows_out = fact->rows;
	in.program_len = 3.0 * list_length(gp->device_quals);
	for (int d = 0; d < gp->ndepths; d++)
		in.program_len += 2.0 * list_length(gp->depths[d].outer_keys);
	in.host_qual_per_row = host_cost.per_tuple;
	in.gpu = gpu;
	gx_colcache_cost_input(root, fact, outer_program_exprs(gp), &in);
	/* a partial path: of the most workers it could use, those that pay */
	if (workers > 0)
		path->parallel_workers = workers = gx_choose_scan_workers(cp, &in, workers);
	in.parallel_workers = workers;
	gx_cost_scan(cp, &in, &scan_startup, &scan_total);

	memset(&jin, 0, sizeof(jin));
	for (int d = 0; d < gp->ndepths; d++)
	{
		Path	   *ip = gp->depths[d].inner_path;

		jin.inner_rows += gp->depths[d].inner_rows;
		inner_cost += inner_path_cost(ip);
	}
	jin.table_bytes = estimate_table_bytes(gp);
	jin.outer_rows = fact->rows;
	jin.depths = gp->ndepths;
	jin.rows_out = joinrel->rows;
	jin.parallel_workers = workers;
	jin.gpu = gpu;
	gx_cost_join(cp, &jin, &join_startup, &join_run);

	if (workers > 0)
		divisor = gx_parallel_divisor(workers);
	path->rows = clamp_row_est(joinrel->rows / divisor);
	path->startup_cost = scan_startup + inner_cost + join_startup + host_cost.startup +
		filter_cost.startup;
	path->total_cost = scan_total + inner_cost + join_startup + join_run + host_cost.startup +
		filter_cost.startup +
		joinrel->rows * (cpu_tuple_cost + filter_cost.per_tuple) / divisor;

	if (gpuext_force_offload)
		gx_cost_forced(path);
}

/*
 * Make a GpuJoin path: 'prev' (a GpuJoin path of the outer relation) or
 * the base relation 'fact' is extended by one depth.
 */
static GpuJoinPath *
make_gpujoin_path(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
				  RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra,
				  RelOptInfo *fact, GpuJoinPath *prev, Path *inner_path, int workers, bool gpu)
{
	GpuJoinPath *gp = palloc0(sizeof(GpuJoinPath));
	GpuJoinDepthInfo *di;
	RangeTblEntry *rte = planner_rt_fetch(fact->relid, root);
	Relids		fact_relids = bms_make_singleton(fact->relid);
	List	   *filters = NIL;
	List	   *all_outer_keys = NIL;
	int		   *types;
	int			i;
	const char *why;
	Relation	rel;
	bool		ok;

	if (prev)
	{
		memcpy(gp, prev, sizeof(GpuJoinPath));
		if (gp->ndepths >= GX_JOIN_MAX_DEPTH)
			return NULL;
		filters = list_copy(prev->host_filters);
	}
	else
	{
		List	   *device_quals;
		List	   *host_quals;

		gp->fact_relid = fact->relid;
		/*
		 * In the order a scan of the relation evaluates them (a policy's
		 * quals before the user's), on the device and in host rechecks
		 */
		gp->fact_quals = gx_order_qual_clauses(root, fact->baserestrictinfo);
		if (!gx_split_scan_quals(root, fact, rte, gp->fact_quals, &device_quals, &host_quals))
			return NULL;
		if (contain_subplans((Node *) extract_actual_clauses(host_quals, false)))
			return NULL;
		gp->device_quals = device_quals;
	}
	di = &gp->depths[gp->ndepths];
	memset(di, 0, sizeof(*di));
	di->jointype = jointype;
	di->inner_path = inner_path;
	di->inner_rows = inner_path->rows;
	if (!classify_clauses(root, joinrel, outerrel, innerrel, jointype, extra->restrictlist,
						  fact_relids, inner_path, di, &filters))
		return NULL;
	gp->ndepths++;
	gp->host_filters = filters;

	/* the outer keys of every depth and the device quals: one program */
	for (int d = 0; d < gp->ndepths; d++)
		all_outer_keys = list_concat(all_outer_keys, gp->depths[d].outer_keys);
	types = palloc(sizeof(int) * (list_length(all_outer_keys) + 1));
	rel = table_open(rte->relid, NoLock);
	ok = gx_exprs_are_device_executable(extract_actual_clauses(gp->device_quals, false),
										all_outer_keys, fact->relid, RelationGetDescr(rel),
										types, &why);
	table_close(rel, NoLock);
	if (!ok)
		return NULL;
	i = 0;
	for (int d = 0; d < gp->ndepths; d++)
	{
		ListCell   *lc1,
				   *lc2;

		forboth(lc1, gp->depths[d].eqfuncs, lc2, gp->depths[d].inner_keys)
		{
			int			family;

			(void) eqfunc_kclass(lfirst_oid(lc1), &family);
			if (!type_in_family(types[i], family))
				return NULL;
			i++;
		}
	}

	/* every column of the joined row must come from somewhere we know */
	if (!columns_available(joinrel->reltarget->exprs, gp) ||
		!columns_available(extract_actual_clauses(filters, false), gp))
		return NULL;

	/* inner sides too large for the device only when forced */
	if (gx_gpu_memory_limit_bytes() > 0 && !gpuext_force_offload &&
		estimate_table_bytes(gp) > (double) gx_gpu_memory_limit_bytes())
		return NULL;

	/*
	 * The inner rows are held in backend memory whole (no batching): much
	 * beyond what PostgreSQL's hash join may use, leave it to PostgreSQL.
	 */
	if (!gpuext_force_offload &&
		estimate_table_bytes(gp) > 8.0 * (double) get_hash_memory_limit())
		return NULL;

	gp->cpath.path.type = T_CustomPath;
	gp->cpath.path.pathtype = T_CustomScan;
	gp->cpath.path.parent = joinrel;
	gp->cpath.path.pathtarget = joinrel->reltarget;
	gp->cpath.path.param_info = NULL;
	gp->cpath.path.parallel_aware = workers > 0;
	gp->cpath.path.parallel_safe = joinrel->consider_parallel && inner_path->parallel_safe &&
		(prev == NULL || prev->cpath.path.parallel_safe);
	gp->cpath.path.parallel_workers = workers;
	gp->cpath.path.pathkeys = NIL;
	gp->cpath.flags = 0;
	gp->cpath.custom_paths = NIL;
	for (int d = 0; d < gp->ndepths; d++)
		gp->cpath.custom_paths = lappend(gp->cpath.custom_paths, gp->depths[d].inner_path);
	gp->cpath.custom_private = NIL;
	gp->cpath.methods = &gpujoin_path_methods;
	cost_gpujoin(root, gp, fact, joinrel, workers, gpu);
	return gp;
}

/*
 * Keep a copy of a new GpuJoin path in kept_paths, unless one kept for the
 * same relation, scanned relation and kind (serial or partial, parallel
 * safe or not, with host filters or not) is as cheap: one a kind bounds
 * the list, as add_path bounds a path list.  Only in a standard join
 * search: GEQO builds join relations in memory it frees after each try.
 */
static void
remember_path(PlannerInfo *root, GpuJoinPath *gp)
{
	MemoryContext old;
	GpuJoinPath *copy;
	ListCell   *lc;

	if (kept_parent == NULL || root->join_rel_level == NULL)
		return;
	foreach(lc, kept_paths)
	{
		GpuJoinPath *k = lfirst(lc);

		if (k->cpath.path.parent != gp->cpath.path.parent || k->fact_relid != gp->fact_relid ||
			k->cpath.path.parallel_aware != gp->cpath.path.parallel_aware ||
			k->cpath.path.parallel_safe != gp->cpath.path.parallel_safe ||
			(k->host_filters != NIL) != (gp->host_filters != NIL))
			continue;
		if (k->cpath.path.total_cost > gp->cpath.path.total_cost)
			memcpy(k, gp, sizeof(GpuJoinPath));
		return;
	}
	if (kept_cxt == NULL)
		kept_cxt = AllocSetContextCreate(kept_parent, "gpuext GpuJoin paths",
										 ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(kept_cxt);
	copy = palloc(sizeof(GpuJoinPath));
	memcpy(copy, gp, sizeof(GpuJoinPath));
	kept_paths = lappend(kept_paths, copy);
	MemoryContextSwitchTo(old);
}

/*
 * The GpuJoin paths of 'rel': those kept (the cheapest of each kind, made
 * for it in this planner call) and those in its path lists (with GEQO the
 * only ones), unwrapped from a projection the final target may have added.
 */
static List *
gpujoin_paths_of(RelOptInfo *rel)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, kept_paths)
		if (((Path *) lfirst(lc))->parent == rel)
			result = lappend(result, lfirst(lc));
	foreach(lc, list_concat(list_copy(rel->pathlist), rel->partial_pathlist))
	{
		Path	   *p = lfirst(lc);

		if (IsA(p, ProjectionPath))
			p = ((ProjectionPath *) p)->subpath;
		if (is_gpujoin_path(p) && !list_member_ptr(result, p))
			result = lappend(result, p);
	}
	return result;
}

/*
 * Free the paths a planner call kept (back in the call's own context) and
 * give the caller's planner call its own again.
 */
static void
restore_kept_paths(List *paths, MemoryContext cxt, MemoryContext parent)
{
	if (kept_cxt != NULL)
	{
		/* (an error in remember_path leaves it current) */
		if (CurrentMemoryContext == kept_cxt)
			MemoryContextSwitchTo(kept_parent);
		MemoryContextDelete(kept_cxt);
	}
	kept_paths = paths;
	kept_cxt = cxt;
	kept_parent = parent;
}

/*
 * planner_hook: a new kept_paths for each planner call (SQL functions
 * inlined or evaluated while planning may plan a query of their own).  Its
 * memory context is made only when a path is kept: most queries plan none.
 */
static PlannedStmt *
gpujoin_planner(Query *parse, const char *query_string, int cursor_options,
				ParamListInfo bound_params)
{
	List	   *saved_paths = kept_paths;
	MemoryContext saved_cxt = kept_cxt;
	MemoryContext saved_parent = kept_parent;
	PlannedStmt *volatile result = NULL;

	kept_paths = NIL;
	kept_cxt = NULL;
	kept_parent = CurrentMemoryContext;
	PG_TRY();
	{
		if (prev_planner_hook)
			result = prev_planner_hook(parse, query_string, cursor_options, bound_params);
		else
			result = standard_planner(parse, query_string, cursor_options, bound_params);
	}
	PG_CATCH();
	{
		restore_kept_paths(saved_paths, saved_cxt, saved_parent);
		PG_RE_THROW();
	}
	PG_END_TRY();
	restore_kept_paths(saved_paths, saved_cxt, saved_parent);
	return result;
}

/*
 * Add the serial GpuJoin path that extends 'prev' (or starts from the base
 * relation 'fact' when both are NULL) and the partial one that extends
 * 'prev_partial' (or starts a parallel scan of 'fact').
 */
static void
add_gpujoin_paths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
				  RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra,
				  RelOptInfo *fact, GpuJoinPath *prev, GpuJoinPath *prev_partial,
				  Path *inner_path, bool gpu)
{
	bool		from_base = (prev == NULL && prev_partial == NULL);
	GpuJoinPath *gp;

	if (prev != NULL || from_base)
	{
		gp = make_gpujoin_path(root, joinrel, outerrel, innerrel, jointype, extra, fact,
							   prev, inner_path, 0, gpu);
		if (gp)
		{
			remember_path(root, gp);
			add_path(joinrel, &gp->cpath.path);
		}
	}

	/*
	 * partial: workers share the outer scan; the leader builds the inner
	 * tables for all (the inner plans go to the workers with the plan, and
	 * run there when no DSM segment can hold the tables: parallel safe)
	 */
	if (!inner_path->parallel_safe)
	{
		ListCell   *lc;

		/* the cheapest inner path a worker can run (not a Gather) */
		inner_path = NULL;
		foreach(lc, innerrel->pathlist)
		{
			Path	   *p = lfirst(lc);

			if (p->parallel_safe && p->param_info == NULL &&
				(inner_path == NULL || p->total_cost < inner_path->total_cost))
				inner_path = p;
		}
	}
	if ((prev_partial != NULL || from_base) && inner_path != NULL &&
		joinrel->consider_parallel && fact->consider_parallel)
	{
		int			workers;

		if (prev_partial)
			workers = prev_partial->cpath.path.parallel_workers;
		else
			workers = gx_parallel_scan_workers(gx_cost_params(), fact);
		if (workers > 0)
		{
			gp = make_gpujoin_path(root, joinrel, outerrel, innerrel, jointype, extra, fact,
								   prev_partial, inner_path, workers, gpu);
			if (gp)
			{
				remember_path(root, gp);
				add_partial_path(joinrel, &gp->cpath.path);
			}
		}
	}
}

/*
 * More than PostgreSQL charges for grouping and aggregating 'rows' rows
 * for this query, sorted or hashed: four times a tuple and, for each
 * target and grouping expression and each comparison of a sort, an
 * operator, a row.
 */
static Cost
agg_cost_bound(PlannerInfo *root, double rows)
{
	double		ops = list_length(root->processed_tlist) + list_length(root->parse->groupClause) +
		2.0 * log2(rows + 2.0);

	return 4.0 * rows * (cpu_tuple_cost + ops * cpu_operator_cost);
}

/*
 * Would every GpuJoin path on the GPU of 'joinrel' be rejected at once,
 * and never be looked for again?  Only for the query's last join: a
 * kept_paths entry serves a GpuJoin that extends one more inner relation
 * even when add_path rejected it.  A GpuJoin costs at least a GPU scan's
 * setup before its first row (cost_gpujoin); add_path and
 * add_partial_path reject it when a stock path of the join costs less
 * (gx_stock_path_beats), and a Gather over a partial one costs
 * parallel_setup_cost more.  Under a GROUP BY or aggregates the kept path
 * also serves a GpuAgg that fuses the join, which costs at least the
 * setup of a GPU scan and of an aggregation: no use either when a stock
 * path of the join plus the most PostgreSQL could charge for grouping its
 * rows (agg_cost_bound) costs less.  Asked before any qual or key is
 * examined, so that joining a few small tables costs little more to plan
 * than with gpuext off (on the H100, session 11, gpuext's planning of the
 * 20-row cm_nation_join, grouped, took about 30 us).
 */
static bool
gpujoin_cannot_win(PlannerInfo *root, RelOptInfo *joinrel)
{
	const GxCostParams *cp = gx_cost_params();
	Cost		floor = gx_gpu_cost_floor(cp);
	bool		grouped = root->parse->hasAggs || root->parse->groupClause != NIL;
	Cost		cheapest = DBL_MAX;
	ListCell   *lc;

	if (!bms_equal(joinrel->relids, root->all_baserels) ||
		root->parse->hasWindowFuncs || root->parse->groupingSets != NIL)
		return false;
	if (!gx_stock_path_beats(joinrel->pathlist, floor, joinrel->rows,
							 joinrel->consider_parallel))
		return false;
	/* (set_cheapest has not run yet: the hook comes after each join order) */
	foreach(lc, joinrel->pathlist)
	{
		Path	   *p = (Path *) lfirst(lc);

		if (p->param_info == NULL && p->total_cost < cheapest)
			cheapest = p->total_cost;
	}
	/* a partial path loses to a cheaper partial one, or under its Gather */
	if (joinrel->consider_parallel &&
		!gx_stock_path_beats(joinrel->partial_pathlist, floor, -1, false) &&
		cheapest * 1.01 >= floor + parallel_setup_cost)
		return false;
	if (!grouped)
		return true;
	return (cheapest + agg_cost_bound(root, joinrel->rows)) * 1.01 <
		floor + cp->gpuagg_setup_us / cp->cost_unit_us;
}

/* set_join_pathlist_hook: add GpuJoin paths for a join. */
static void
gpujoin_add_paths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
				  RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	Path	   *inner_path = innerrel->cheapest_total_path;
	const char *why;
	bool		gpu;

	if (prev_set_join_pathlist_hook)
		prev_set_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);

	if (!gpuext_enabled || !gpuext_enable_gpujoin)
		return;
	if (jointype != JOIN_INNER && jointype != JOIN_LEFT &&
		jointype != JOIN_SEMI && jointype != JOIN_ANTI)
		return;
	/* no row locks or EvalPlanQual through a join of ours */
	if (root->parse->commandType != CMD_SELECT || root->rowMarks != NIL)
		return;
	if (joinrel->lateral_relids != NULL || innerrel->lateral_relids != NULL ||
		outerrel->lateral_relids != NULL)
		return;
	if (inner_path == NULL || inner_path->param_info != NULL || IS_DUMMY_REL(innerrel))
		return;
	gx_cost_refresh();
	/*
	 * Joins run on the GPU only with gpuext.gpujoin_kernels; else on the
	 * CPU engine, which (as for scans) is planned only when forced.
	 */
	gpu = gpujoin_kernels &&
		(gpuext_device_mode == GPUEXT_DEVICE_GPU ||
		 (gpuext_device_mode == GPUEXT_DEVICE_AUTO && gx_service_has_gpu(&why)));
	if (!gpu && !gpuext_force_offload)
		return;
	if (gpu && !gpuext_force_offload && gpujoin_cannot_win(root, joinrel))
		return;

	if (outerrel->reloptkind == RELOPT_BASEREL)
	{
		RangeTblEntry *rte = planner_rt_fetch(outerrel->relid, root);

		if (rte->rtekind != RTE_RELATION || rte->tablesample != NULL || rte->inh ||
			(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW) ||
			IS_DUMMY_REL(outerrel))
			return;
		add_gpujoin_paths(root, joinrel, outerrel, innerrel, jointype, extra, outerrel,
						  NULL, NULL, inner_path, gpu);
	}
	else if (outerrel->reloptkind == RELOPT_JOINREL)
	{
		ListCell   *lc;

		/* one more depth for each GpuJoin of the outer relation, kept or listed */
		foreach(lc, gpujoin_paths_of(outerrel))
		{
			Path	   *p = lfirst(lc);
			GpuJoinPath *prev = (GpuJoinPath *) p;

			if (p->param_info != NULL)
				continue;
			add_gpujoin_paths(root, joinrel, outerrel, innerrel, jointype, extra,
							  find_base_rel(root, prev->fact_relid),
							  p->parallel_aware ? NULL : prev,
							  p->parallel_aware ? prev : NULL, inner_path, gpu);
		}
	}
}

/*
 * What the executor needs of every depth, as seven lists (one element per
 * depth): join types, outer keys, inner keys (INNER_VAR references to the
 * inner plan's output), equality functions, collations, key classes and
 * the key clauses (for EXPLAIN).
 */
static List *
depth_lists(GpuJoinPath *gp, List *inner_plans)
{
	List	   *jointypes = NIL;
	List	   *outer_keys = NIL;
	List	   *inner_keys = NIL;
	List	   *eqfuncs = NIL;
	List	   *collations = NIL;
	List	   *kclasses = NIL;
	List	   *key_clauses = NIL;

	for (int d = 0; d < gp->ndepths; d++)
	{
		GpuJoinDepthInfo *di = &gp->depths[d];
		InnerRefContext ctx = {tlist_exprs(((Plan *) list_nth(inner_plans, d))->targetlist), false};
		List	   *ik = NIL;
		ListCell   *lc;

		switch (di->jointype)
		{
			case JOIN_LEFT:
				jointypes = lappend_int(jointypes, GX_JOIN_LEFT);
				break;
			case JOIN_SEMI:
				jointypes = lappend_int(jointypes, GX_JOIN_SEMI);
				break;
			case JOIN_ANTI:
				jointypes = lappend_int(jointypes, GX_JOIN_ANTI);
				break;
			default:
				jointypes = lappend_int(jointypes, GX_JOIN_INNER);
				break;
		}
		foreach(lc, di->inner_keys)
		{
			ik = lappend(ik, inner_ref_mutator(lfirst(lc), &ctx));
			if (ctx.missing)
				elog(ERROR, "gpuext: GpuJoin cannot find an inner key column");
		}
		outer_keys = lappend(outer_keys, di->outer_keys);
		inner_keys = lappend(inner_keys, ik);
		eqfuncs = lappend(eqfuncs, di->eqfuncs);
		collations = lappend(collations, di->collations);
		kclasses = lappend(kclasses, di->kclasses);
		key_clauses = lappend(key_clauses, di->key_clauses);
	}
	return lappend(lappend(list_make5(jointypes, outer_keys, inner_keys, eqfuncs, collations),
						   kclasses), key_clauses);
}

/*
 * PlanCustomPath: the scanned relation is the node's scan relation; the
 * joined row is described by custom_scan_tlist (every column the target
 * list and the host filters need), whose setrefs turns the target list and
 * filters into references to it.  Keys and the scanned relation's quals
 * travel in custom_private, untouched by setrefs: their Vars keep the
 * scanned relation's range table index (evaluated against its heap tuple),
 * inner keys refer to their inner plan's output as INNER_VAR.
 */
static Plan *
gpujoin_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			 List *tlist, List *clauses, List *custom_plans)
{
	GpuJoinPath *gp = (GpuJoinPath *) best_path;
	CustomScan *cscan = makeNode(CustomScan);
	List	   *filters = extract_actual_clauses(gp->host_filters, false);
	List	   *inner_exprs[GX_JOIN_MAX_DEPTH];
	List	   *scan_tlist = NIL;
	List	   *vars;
	List	   *all_quals = NIL;
	List	   *on_device = NIL;
	List	   *src_depth = NIL;
	List	   *src_attno = NIL;
	ListCell   *lc;
	int			d;

	d = 0;
	foreach(lc, custom_plans)
		inner_exprs[d++] = tlist_exprs(((Plan *) lfirst(lc))->targetlist);

	/* the joined row */
	vars = pull_var_clause((Node *) list_concat(list_copy(tlist), filters),
						   PVC_INCLUDE_PLACEHOLDERS);
	scan_tlist = add_to_flat_tlist(NIL, vars);
	foreach(lc, scan_tlist)
	{
		TargetEntry *tle = lfirst(lc);
		AttrNumber	attno;
		int			src = column_source((Node *) tle->expr, gp->fact_relid, gp->ndepths,
										inner_exprs, &attno);

		if (src < 0)
			elog(ERROR, "gpuext: GpuJoin cannot find a column of the joined row");
		src_depth = lappend_int(src_depth, src);
		src_attno = lappend_int(src_attno, attno);
	}

	foreach(lc, gp->fact_quals)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		if (ri->pseudoconstant)
			continue;
		all_quals = lappend(all_quals, ri->clause);
		on_device = lappend_int(on_device, list_member_ptr(gp->device_quals, ri) ? 1 : 0);
	}
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = filters;
	cscan->scan.scanrelid = gp->fact_relid;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = NIL;
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_private = list_make1(list_make2_int(gp->fact_relid, gp->ndepths));
	cscan->custom_private = lappend(cscan->custom_private, all_quals);
	cscan->custom_private = lappend(cscan->custom_private, on_device);
	cscan->custom_private = list_concat(cscan->custom_private, depth_lists(gp, custom_plans));
	cscan->custom_private = lappend(cscan->custom_private, src_depth);
	cscan->custom_private = lappend(cscan->custom_private, src_attno);
	cscan->methods = &gpujoin_plan_methods;
	return &cscan->scan.plan;
}

/* ---------------------------------------------------------------------
 * Executor
 * ---------------------------------------------------------------------
 */
/* Read the seven per-depth lists of depth_lists() into the state. */
static void
read_depths(GpuJoinState *gjs, List *lists)
{
	for (int d = 0; d < gjs->ndepths; d++)
	{
		GpuJoinDepth *jd = &gjs->depths[d];
		List	   *eqfuncs = list_nth(list_nth(lists, 3), d);
		List	   *collations = list_nth(list_nth(lists, 4), d);
		List	   *kclasses = list_nth(list_nth(lists, 5), d);

		jd->jointype = list_nth_int(list_nth(lists, 0), d);
		jd->outer_keys = list_nth(list_nth(lists, 1), d);
		jd->inner_keys = list_nth(list_nth(lists, 2), d);
		jd->key_clauses = list_nth(list_nth(lists, 6), d);
		jd->nkeys = list_length(jd->outer_keys);
		for (int k = 0; k < jd->nkeys; k++)
		{
			Expr	   *ik = list_nth(jd->inner_keys, k);

			fmgr_info(list_nth_oid(eqfuncs, k), &jd->eqfn[k]);
			jd->collation[k] = list_nth_oid(collations, k);
			jd->kclass[k] = list_nth_int(kclasses, k);
			jd->inner_type[k] = exprType((Node *) ik);
			get_typlenbyval(jd->inner_type[k], &jd->inner_typlen[k], &jd->inner_typbyval[k]);
		}
	}
}

/*
 * Start the inner plans of every depth (the given plans) under 'parent',
 * with a slot for their stored rows and the states of the key
 * expressions.
 */
static void
init_depths(GpuJoinState *gjs, List *inner_plans, EState *estate, int eflags,
			PlanState *parent, List **children)
{
	for (int d = 0; d < gjs->ndepths; d++)
	{
		GpuJoinDepth *jd = &gjs->depths[d];
		PlanState  *ps = ExecInitNode((Plan *) list_nth(inner_plans, d), estate, eflags);

		*children = lappend(*children, ps);
		jd->child = ps;
		jd->slot = ExecAllocTableSlot(&estate->es_tupleTable, ExecGetResultType(ps),
									  &TTSOpsMinimalTuple);
		jd->stored_in_slot = NULL_ROW;
		for (int k = 0; k < jd->nkeys; k++)
		{
			jd->outer_key_states[k] = ExecInitExpr(list_nth(jd->outer_keys, k), parent);
			jd->inner_key_states[k] = ExecInitExpr(list_nth(jd->inner_keys, k), parent);
		}
	}
}

static Node *
gpujoin_create_state(CustomScan *cscan)
{
	GpuJoinState *gjs = (GpuJoinState *) newNode(sizeof(GpuJoinState), T_CustomScanState);
	List	   *priv = cscan->custom_private;
	List	   *head = linitial(priv);
	ListCell   *lc1,
			   *lc2;
	int			i;

	gjs->css.methods = &gpujoin_exec_methods;
	gjs->css.flags = cscan->flags;
	gjs->shared_workers = -1;
	gjs->fact_relid = linitial_int(head);
	gjs->ndepths = lsecond_int(head);
	gjs->all_quals = list_nth(priv, 1);
	forboth(lc1, gjs->all_quals, lc2, (List *) list_nth(priv, 2))
	{
		if (lfirst_int(lc2))
			gjs->plan_device_quals = lappend(gjs->plan_device_quals, lfirst(lc1));
		else
			gjs->host_fact_quals = true;
	}
	read_depths(gjs, list_copy_tail(priv, 3));
	gjs->nsrc = list_length((List *) list_nth(priv, 10));
	gjs->src_depth = palloc(sizeof(int) * (gjs->nsrc + 1));
	gjs->src_attno = palloc(sizeof(AttrNumber) * (gjs->nsrc + 1));
	i = 0;
	forboth(lc1, (List *) list_nth(priv, 10), lc2, (List *) list_nth(priv, 11))
	{
		gjs->src_depth[i] = lfirst_int(lc1);
		gjs->src_attno[i] = lfirst_int(lc2);
		i++;
	}
	return (Node *) gjs;
}

/*
 * Start the node: inner plans, the scanned relation's heap slot, and the
 * expression states of the quals and keys.  Those expressions were not
 * set up by setrefs against the joined row: they are evaluated against
 * the heap tuple (scan Vars) and the inner plans' rows (INNER_VAR), with
 * slot types checked at run time.
 */
static void
gpujoin_begin(CustomScanState *node, EState *estate, int eflags)
{
	GpuJoinState *gjs = (GpuJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	ScanState  *ss = &node->ss;
	TupleDesc	tupdesc = RelationGetDescr(ss->ss_currentRelation);

	gjs->fact_slot = ExecAllocTableSlot(&estate->es_tupleTable, tupdesc, &TTSOpsHeapTuple);
	/* our own expressions see the heap slot as the scan tuple */
	ss->ps.scanopsfixed = false;
	init_depths(gjs, cscan->custom_plans, estate, eflags, &ss->ps, &node->custom_ps);
	gjs->recheck_state = ExecInitQual(gjs->all_quals, &ss->ps);

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	gjs->program_cxt = AllocSetContextCreate(CurrentMemoryContext, "GpuJoin program",
											 ALLOCSET_SMALL_SIZES);
	gjs->inner_cxt = AllocSetContextCreate(CurrentMemoryContext, "GpuJoin inner tables",
										   ALLOCSET_DEFAULT_SIZES);
	gx_pipeline_init(&gjs->pipe, ss->ss_currentRelation, estate->es_snapshot,
					 GX_REQ_JOIN, gx_join_out_per_page(gjs->ndepths));
	/* with gpuext.gpujoin_kernels off, the CPU engine runs the batches */
	if (!gpujoin_kernels)
	{
		gx_engine_start_with_mode(&gjs->pipe.engine, GPUEXT_DEVICE_CPU);
		gjs->pipe.depth = 1;
	}
	/* a failed GPU batch is rerun here, against the CPU engine's tables */
	gjs->pipe.engine.rerun_on_cpu = false;
	gjs->pipe_started = true;
}

/* A key Datum of an inner row as a device register; false if it cannot be one. */
static bool
datum_to_register(GpuJoinDepth *jd, int k, Datum value, GxDatum *r)
{
	memset(r, 0, sizeof(*r));
	switch (getBaseType(jd->inner_type[k]))
	{
		case BOOLOID:
			r->v.i = DatumGetBool(value);
			break;
		case INT2OID:
			r->v.i = DatumGetInt16(value);
			break;
		case INT4OID:
			r->v.i = DatumGetInt32(value);
			break;
		case INT8OID:
			r->v.i = DatumGetInt64(value);
			break;
		case FLOAT4OID:
			r->v.f = DatumGetFloat4(value);
			break;
		case FLOAT8OID:
			r->v.f = DatumGetFloat8(value);
			break;
		case DATEOID:
			r->v.i = DatumGetDateADT(value);
			break;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			r->v.i = DatumGetTimestamp(value);
			break;
		case NUMERICOID:
			{
				struct varlena *v = (struct varlena *) DatumGetPointer(value);
				int32		scale;

				if (gx_numeric_decode((const unsigned char *) VARDATA_ANY(v),
									  VARSIZE_ANY_EXHDR(v), &r->v.n, &scale) != 0)
					return false;
				r->scale = scale;
				break;
			}
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			{
				struct varlena *v = (struct varlena *) DatumGetPointer(value);

				r->v.s.ptr = (const unsigned char *) VARDATA_ANY(v);
				r->v.s.len = VARSIZE_ANY_EXHDR(v);
				break;
			}
		default:
			return false;
	}
	return true;
}

/*
 * An inner column's value as a stored register image (text bytes appended
 * to 'texts', their offset in text_off for now); false when the device
 * cannot hold it (numeric NaN, infinity or beyond 128 bits).
 */
static bool
store_value(Oid type, Datum value, bool isnull, GxJoinValue *out, StringInfo texts)
{
	memset(out, 0, sizeof(*out));
	if (isnull)
	{
		out->isnull = 1;
		return true;
	}
	switch (getBaseType(type))
	{
		case BOOLOID:
			out->lo = DatumGetBool(value);
			break;
		case INT2OID:
			out->lo = DatumGetInt16(value);
			break;
		case INT4OID:
			out->lo = DatumGetInt32(value);
			break;
		case INT8OID:
			out->lo = DatumGetInt64(value);
			break;
		case FLOAT4OID:
		case FLOAT8OID:
			{
				double		f = (getBaseType(type) == FLOAT4OID) ?
					DatumGetFloat4(value) : DatumGetFloat8(value);

				memcpy(&out->lo, &f, sizeof(f));
				break;
			}
		case DATEOID:
			out->lo = DatumGetDateADT(value);
			break;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			out->lo = DatumGetTimestamp(value);
			break;
		case NUMERICOID:
			{
				struct varlena *v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(value));
				__int128	n;
				int32		scale;

				if (gx_numeric_decode((const unsigned char *) VARDATA_ANY(v),
									  VARSIZE_ANY_EXHDR(v), &n, &scale) != 0)
					return false;
				out->lo = (int64) (uint64) ((unsigned __int128) n);
				out->hi = (int64) (n >> 64);
				out->scale = scale;
				break;
			}
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			{
				struct varlena *v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(value));

				out->lo = VARSIZE_ANY_EXHDR(v);
				out->text_off = texts->len;
				appendBinaryStringInfo(texts, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
				break;
			}
		default:
			return false;
	}
	return true;
}

/* Grow an array of 'elem' bytes to hold at least 'need' elements. */
static void *
grow_array(void *arr, uint32 *cap, uint32 need, Size elem)
{
	uint32		ncap;

	if (need <= *cap)
		return arr;
	ncap = Max(need, Max(*cap * 2, 64));
	arr = arr ? repalloc_huge(arr, (Size) ncap * elem) : MemoryContextAllocHuge(CurrentMemoryContext, (Size) ncap * elem);
	*cap = ncap;
	return arr;
}

/*
 * Append 'len' bytes to a depth's arena (in the current memory context),
 * MAXALIGNed: minimal tuples must be.  Returns their offset.
 */
static uint64
arena_put(GpuJoinDepth *jd, const void *data, Size len)
{
	uint64		off = MAXALIGN(jd->arena_len);
	uint64		need = off + len;

	if (need > jd->arena_cap)
	{
		uint64		ncap = Max(need, Max(jd->arena_cap * 2, 8192));

		jd->arena = jd->arena ? repalloc_huge(jd->arena, ncap) :
			MemoryContextAllocHuge(CurrentMemoryContext, ncap);
		jd->arena_cap = ncap;
	}
	memcpy(jd->arena + off, data, len);
	jd->arena_len = need;
	return off;
}

/* Stored inner row r of a depth. */
static inline MinimalTuple
inner_tuple(GpuJoinDepth *jd, uint32 r)
{
	return (MinimalTuple) (jd->arena + jd->tuples[r]);
}

/* Key k of stored inner row r of a depth, as a Datum. */
static inline Datum
inner_keyval(GpuJoinDepth *jd, uint32 r, int k)
{
	Datum		v = jd->keyvals[(Size) r * jd->nkeys + k];

	return jd->inner_typbyval[k] ? v : PointerGetDatum(jd->arena + (uint64) v);
}

/* Keep the row in a slot in a depth's arena; returns its offset. */
static uint64
store_tuple(GpuJoinDepth *jd, TupleTableSlot *slot)
{
	bool		shouldfree;
	MinimalTuple mt = ExecFetchSlotMinimalTuple(slot, &shouldfree);
	uint64		off = arena_put(jd, mt, mt->t_len);

	if (shouldfree)
		pfree(mt);
	return off;
}

/*
 * For every hashed row, the first row of its key in our chains: the device
 * builds its own chains (in another order) and reports whichever row heads
 * its chain; the host then walks its own chain of that key.
 */
static void
set_group_heads(GpuJoinState *gjs)
{
	for (int d = 0; d < gjs->ndepths; d++)
	{
		GpuJoinDepth *jd = &gjs->depths[d];
		GxJoinTable *t = gx_join_table(gjs->tables, d);
		uint32	   *slots = gx_join_slots(t);
		GxJoinRow  *rows = gx_join_rows(t);

		jd->group_head = MemoryContextAllocHuge(gjs->inner_cxt,
												sizeof(uint32) * (Size) Max(jd->nrows, 1));
		for (uint64 s = 0; s < t->capacity; s++)
		{
			uint32		head = slots[s];

			if (head == 0)
				continue;
			for (uint32 r = head; r != 0; r = rows[r - 1].next)
				jd->group_head[r - 1] = head - 1;
		}
	}
}

/*
 * A copy of the tables as the device's build kernel wants them: rows, keys
 * and values in place, slots and chains empty.  *rows: inner rows in all.
 */
static char *
unbuilt_copy(GpuJoinState *gjs, uint64 *rows)
{
	char	   *copy = MemoryContextAllocHuge(gjs->inner_cxt, gjs->table_bytes);

	memcpy(copy, gjs->tables, gjs->table_bytes);
	*rows = 0;
	for (int d = 0; d < gjs->ndepths; d++)
	{
		GxJoinTable *t = gx_join_table((GxJoinTables *) copy, d);
		GxJoinRow  *r = gx_join_rows(t);

		memset(gx_join_slots(t), 0, t->capacity * sizeof(uint32));
		for (uint64 i = 0; i < t->nrows; i++)
			r[i].next = 0;
		*rows += t->nrows;
	}
	return copy;
}

/*
 * Send the tables unbuilt (an unbuilt_copy, or the tables themselves when
 * build_inner left them so) to the device beside
 * task 'near_task' (0: none), timed for EXPLAIN ANALYZE.  Returns the
 * task id, or 0 with *status and err set.
 */
static uint32
send_tables(GpuJoinState *gjs, uint32 near_task, int *status, char *err)
{
	instr_time	t0;
	uint64		rows;
	char	   *copy;
	uint32		task;

	INSTR_TIME_SET_CURRENT(t0);
	if (gjs->device_builds)
	{
		/* built without chains (build_inner): they go as they are */
		rows = 0;
		for (int d = 0; d < gjs->ndepths; d++)
			rows += gx_join_table(gjs->tables, d)->nrows;
		task = gx_join_task_create((char *) gjs->tables, gjs->table_bytes, rows, near_task,
								   status, err);
	}
	else
	{
		copy = unbuilt_copy(gjs, &rows);
		task = gx_join_task_create(copy, gjs->table_bytes, rows, near_task, status, err);
		pfree(copy);
	}
	gjs->inner_upload_ms += gx_elapsed_us(t0) / 1000.0;
	return task;
}

/*
 * GPU engine: send the tables to the device, where the build kernel
 * inserts the rows (empty slots and chains in the copy sent).  Tables over
 * gpuext.gpu_memory_limit, or too large for the device or the DMA arena,
 * leave the node on the CPU engine; a device error does too, unless
 * gpuext.cpu_fallback = off (then it is raised).
 */
static void
upload_tables(GpuJoinState *gjs)
{
	int			status = GX_OK;
	char		err[GX_ERRLEN];

	/* (a batch describes its output in 32 bits: far beyond any DMA arena) */
	if (gjs->table_bytes > PG_UINT32_MAX / 2)
		gjs->over_limit = true;
	if (!gjs->over_limit)
		gjs->gpu_task = send_tables(gjs, 0, &status, err);
	else
		strlcpy(err, "the inner hash tables exceed gpuext.gpu_memory_limit", sizeof(err));
	if (gjs->gpu_task != 0)
	{
		gjs->pipe.task_id = gjs->gpu_task;
		return;
	}
	/* over gpuext.gpu_memory_limit is a decision, as too large for the device */
	gx_device_table_unavailable(gjs->over_limit ? GX_ERR_OUT_OF_MEMORY : status, err,
								"gpuext join runs on the CPU engine");
	gx_engine_start_with_mode(&gjs->pipe.engine, GPUEXT_DEVICE_CPU);
	gjs->pipe.depth = 1;
}

static void move_to_segment(GpuJoinState *gjs);

/*
 * Run the inner plans and build the hash tables.  Rows with a NULL key can
 * never match, so they are not kept.  Rows are stored as minimal tuples
 * with their key Datums (for PostgreSQL's own operators on rechecks), in
 * each depth's arena; the hashed rows come first, extras (keys the device
 * cannot hold) last.  A parallel leader then moves everything to a DSM
 * segment for its workers (move_to_segment).
 */
static void
build_inner(GpuJoinState *gjs)
{
	ExprContext *econtext = gjs->css.ss.ps.ps_ExprContext;
	MemoryContext old;
	uint64	  **words = palloc0(sizeof(uint64 *) * gjs->ndepths);
	uint64	   *nwords = palloc0(sizeof(uint64) * gjs->ndepths);
	uint32	  **hashes = palloc0(sizeof(uint32 *) * gjs->ndepths);
	uint32	  **rownw = palloc0(sizeof(uint32 *) * gjs->ndepths);
	GxJoinValue **values = palloc0(sizeof(GxJoinValue *) * gjs->ndepths);
	StringInfoData *texts = palloc0(sizeof(StringInfoData) * gjs->ndepths);
	uint64		total;
	uint64		capacity[GX_JOIN_MAX_DEPTH];
	uint64		table_bytes[GX_JOIN_MAX_DEPTH];
	instr_time	t0;

	INSTR_TIME_SET_CURRENT(t0);
	MemoryContextReset(gjs->inner_cxt);
	old = MemoryContextSwitchTo(gjs->inner_cxt);
	for (int d = 0; d < gjs->ndepths; d++)
	{
		GpuJoinDepth *jd = &gjs->depths[d];
		GxJoinDepth spec;
		uint64	   *etuples = NULL;
		Datum	   *ekeys = NULL;
		uint32		ecap = 0,
					ekcap = 0,
					wcap = 0,
					hcap = 0,
					tcap = 0,
					kcap = 0,
					ncap = 0,
					vcap = 0;
		uint64		wlen = 0;

		memset(&spec, 0, sizeof(spec));
		spec.nkeys = jd->nkeys;
		for (int k = 0; k < jd->nkeys; k++)
		{
			spec.keys[k].kclass = jd->kclass[k];
			spec.keys[k].reg = k;
		}
		initStringInfo(&texts[d]);
		jd->values_bad = false;
		jd->tuples = NULL;
		jd->keyvals = NULL;
		jd->arena = NULL;
		jd->arena_len = jd->arena_cap = 0;
		jd->nrows = jd->nextras = jd->ntuples = 0;
		jd->cap = 0;
		jd->stored_in_slot = NULL_ROW;
		ExecClearTuple(jd->slot);

		/*
		 * Arrays sized for the rows the planner expects (memory is touched
		 * only as rows come), so that most builds need no copy to grow; none
		 * when the inner plans will not run.
		 */
		if (!gjs->outer_empty)
		{
			uint32		est = (uint32) Min(Max(jd->child->plan->plan_rows, 64.0), 4.0 * 1024 * 1024);

			hashes[d] = grow_array(NULL, &hcap, est, sizeof(uint32));
			rownw[d] = grow_array(NULL, &ncap, est, sizeof(uint32));
			words[d] = grow_array(NULL, &wcap, est * jd->nkeys, sizeof(uint64));
			if (jd->nvalues > 0)
				values[d] = grow_array(NULL, &vcap, est * jd->nvalues, sizeof(GxJoinValue));
			if (!gjs->rows_unused)
			{
				jd->tuples = grow_array(NULL, &tcap, est, sizeof(uint64));
				jd->keyvals = grow_array(NULL, &kcap, est * jd->nkeys, sizeof(Datum));
			}
		}

		/*
		 * With no outer rows there is nothing to join: like PostgreSQL's hash
		 * join, do not run the inner plans (nor raise their errors).
		 */
		for (; !gjs->outer_empty;)
		{
			TupleTableSlot *slot;
			Datum		vals[GX_JOIN_MAX_KEYS];
			GxDatum		regs[GX_JOIN_MAX_KEYS];
			bool		hashable = true;
			bool		isnull = false;
			uint32		nw;

			/* the inner plan allocates in the query's context, not ours */
			MemoryContextSwitchTo(old);
			slot = ExecProcNode(jd->child);
			MemoryContextSwitchTo(gjs->inner_cxt);
			if (TupIsNull(slot))
				break;
			CHECK_FOR_INTERRUPTS();
			ResetExprContext(econtext);
			econtext->ecxt_innertuple = slot;
			for (int k = 0; k < jd->nkeys && !isnull; k++)
			{
				Datum		v = ExecEvalExprSwitchContext(jd->inner_key_states[k], econtext, &isnull);

				if (isnull)
					break;
				if (!jd->inner_typbyval[k] && jd->inner_typlen[k] == -1)
					v = PointerGetDatum(pg_detoast_datum_packed((struct varlena *) DatumGetPointer(v)));
				if (!datum_to_register(jd, k, v, &regs[k]))
					hashable = false;
				/* a by-reference key: its bytes in the arena (inner_keyval) */
				if (jd->inner_typbyval[k])
					vals[k] = v;
				else if (!gjs->rows_unused)
					vals[k] = (Datum) arena_put(jd, DatumGetPointer(v),
												datumGetSize(v, false, jd->inner_typlen[k]));
			}
			if (isnull)
				continue;		/* a NULL key matches nothing */
			if (!hashable)
			{
				/* (a fused aggregation cannot join it at all: counted only) */
				if (!gjs->rows_unused)
				{
					etuples = grow_array(etuples, &ecap, jd->nextras + 1, sizeof(uint64));
					ekeys = grow_array(ekeys, &ekcap, (jd->nextras + 1) * jd->nkeys, sizeof(Datum));
					etuples[jd->nextras] = store_tuple(jd, slot);
					memcpy(&ekeys[jd->nextras * jd->nkeys], vals, sizeof(Datum) * jd->nkeys);
				}
				jd->nextras++;
				continue;
			}
			if (jd->nrows >= PG_UINT32_MAX / 2 - 1)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("too many inner rows for a GPU hash join")));
			if (!gjs->rows_unused)
			{
				jd->tuples = grow_array(jd->tuples, &tcap, jd->nrows + 1, sizeof(uint64));
				jd->keyvals = grow_array(jd->keyvals, &kcap, (jd->nrows + 1) * jd->nkeys, sizeof(Datum));
				jd->tuples[jd->nrows] = store_tuple(jd, slot);
				memcpy(&jd->keyvals[jd->nrows * jd->nkeys], vals, sizeof(Datum) * jd->nkeys);
			}
			nw = gx_join_nwords(&spec, regs);
			words[d] = grow_array(words[d], &wcap, (uint32) (wlen + nw), sizeof(uint64));
			gx_join_encode(&spec, regs, words[d] + wlen);
			hashes[d] = grow_array(hashes[d], &hcap, jd->nrows + 1, sizeof(uint32));
			hashes[d][jd->nrows] = gx_join_hash_words(words[d] + wlen, nw);
			rownw[d] = grow_array(rownw[d], &ncap, jd->nrows + 1, sizeof(uint32));
			rownw[d][jd->nrows] = nw;
			if (jd->nvalues > 0)
			{
				values[d] = grow_array(values[d], &vcap, (jd->nrows + 1) * jd->nvalues,
									   sizeof(GxJoinValue));
				for (int c = 0; c < jd->nvalues; c++)
				{
					bool		vnull;
					Datum		v = slot_getattr(slot, jd->value_attno[c], &vnull);

					if (!store_value(jd->value_type[c], v, vnull,
									 &values[d][jd->nrows * jd->nvalues + c], &texts[d]))
						jd->values_bad = true;
				}
			}
			wlen += nw;
			jd->nrows++;
		}
		nwords[d] = wlen;
		/* extras go after the hashed rows */
		jd->ntuples = jd->nrows + jd->nextras;
		if (jd->nextras > 0 && !gjs->rows_unused)
		{
			jd->tuples = grow_array(jd->tuples, &tcap, jd->ntuples, sizeof(uint64));
			jd->keyvals = grow_array(jd->keyvals, &kcap, jd->ntuples * jd->nkeys, sizeof(Datum));
			memcpy(&jd->tuples[jd->nrows], etuples, sizeof(uint64) * jd->nextras);
			memcpy(&jd->keyvals[jd->nrows * jd->nkeys], ekeys, sizeof(Datum) * jd->nextras * jd->nkeys);
		}
		ResetExprContext(econtext);
	}

	gjs->inner_rows_ms += gx_elapsed_us(t0) / 1000.0;
	INSTR_TIME_SET_CURRENT(t0);

	/* one block for every table */
	total = MAXALIGN(sizeof(GxJoinTables));
	for (int d = 0; d < gjs->ndepths; d++)
	{
		table_bytes[d] = gx_join_table_bytes(gjs->depths[d].nrows, nwords[d], &capacity[d]);
		/* stored values and their text bytes */
		table_bytes[d] = TYPEALIGN(16, table_bytes[d]) +
			(uint64) gjs->depths[d].nrows * gjs->depths[d].nvalues * sizeof(GxJoinValue) +
			texts[d].len;
		total += TYPEALIGN(64, table_bytes[d]);
	}
	gjs->tables = MemoryContextAllocHuge(gjs->inner_cxt, total);
	memset(gjs->tables, 0, total);
	gjs->tables->ndepths = gjs->ndepths;
	gjs->tables->total_bytes = total;
	{
		uint64		off = MAXALIGN(sizeof(GxJoinTables));

		for (int d = 0; d < gjs->ndepths; d++)
		{
			GpuJoinDepth *jd = &gjs->depths[d];
			GxJoinTable *t;
			GxJoinRow  *rows;
			uint64		woff = 0;

			gjs->tables->table_off[d] = off;
			t = gx_join_table(gjs->tables, d);
			t->nrows = jd->nrows;
			t->capacity = capacity[d];
			t->slots_off = sizeof(GxJoinTable);
			t->rows_off = t->slots_off + ((capacity[d] * 4 + 15) & ~(uint64) 15);
			t->keys_off = t->rows_off + (uint64) jd->nrows * sizeof(GxJoinRow);
			t->nwords = nwords[d];
			t->values_off = TYPEALIGN(16, t->keys_off + nwords[d] * 8);
			t->nvalues = jd->nvalues;
			rows = gx_join_rows(t);
			if (nwords[d] > 0)
				memcpy(gx_join_keys(t), words[d], nwords[d] * 8);
			if (jd->nvalues > 0 && jd->nrows > 0)
			{
				uint64		nv = (uint64) jd->nrows * jd->nvalues;
				GxJoinValue *tv = (GxJoinValue *) ((char *) t + t->values_off);
				uint64		text_start = t->values_off + nv * sizeof(GxJoinValue);

				memcpy(tv, values[d], nv * sizeof(GxJoinValue));
				for (uint64 i = 0; i < nv; i++)
					tv[i].text_off += text_start;
				if (texts[d].len > 0)
					memcpy((char *) t + text_start, texts[d].data, texts[d].len);
			}
			/* the words of row i follow those of row i - 1 */
			for (uint32 i = 0; i < jd->nrows; i++)
			{
				rows[i].key_off = woff;
				rows[i].key_words = rownw[d][i];
				rows[i].hash = hashes[d][i];
				rows[i].next = 0;
				woff += rownw[d][i];
			}
			/* (the device's build kernel inserts them when it alone probes) */
			if (!gjs->device_builds)
				for (uint32 i = 0; i < jd->nrows; i++)
					if (gx_join_insert(t, i) != 0)
						elog(ERROR, "gpuext: GpuJoin hash table overflow");
			off += TYPEALIGN(64, table_bytes[d]);
		}
	}
	/* the temporaries of the build */
	for (int d = 0; d < gjs->ndepths; d++)
	{
		if (words[d])
			pfree(words[d]);
		if (hashes[d])
			pfree(hashes[d]);
		if (rownw[d])
			pfree(rownw[d]);
		if (values[d])
			pfree(values[d]);
		pfree(texts[d].data);
	}
	MemoryContextSwitchTo(old);
	gjs->table_bytes = total;
	gjs->over_limit = gx_gpu_memory_limit_bytes() > 0 && total > gx_gpu_memory_limit_bytes();
	if (!gjs->rows_unused)
		set_group_heads(gjs);
	/* a parallel leader: the tables move to a segment its workers map */
	if (gjs->shared != NULL && !IsParallelWorker())
		move_to_segment(gjs);
	/* unbuilt tables are not the CPU engine's to probe: not registered */
	gjs->table_id = gjs->device_builds ? 0 :
		gx_cpu_table_register(gjs->tables, gjs->inner_cxt);
	gjs->pipe.task_id = gjs->table_id;
	gjs->inner_built = true;
	gjs->inner_hash_ms += gx_elapsed_us(t0) / 1000.0;
	if (gjs->pipe_started && gjs->pipe.engine.use_gpu)
		upload_tables(gjs);
}

/*
 * Point the depths at the inner tables held in DSM segment 'seg' (by the
 * leader's move_to_segment): the same per-row code then reads them in
 * every participant.
 */
static void
map_segment(GpuJoinState *gjs, dsm_segment *seg)
{
	char	   *base = dsm_segment_address(seg);
	GpuJoinSharedTables *hdr = (GpuJoinSharedTables *) base;

	gjs->seg = seg;
	gjs->tables = (GxJoinTables *) (base + hdr->tables_at);
	gjs->table_bytes = hdr->table_bytes;
	for (int d = 0; d < gjs->ndepths; d++)
	{
		GpuJoinDepth *jd = &gjs->depths[d];
		GpuJoinSharedDepth *sd = &hdr->depths[d];

		ExecClearTuple(jd->slot);
		jd->stored_in_slot = NULL_ROW;
		jd->nrows = sd->nrows;
		jd->nextras = sd->nextras;
		jd->ntuples = sd->nrows + sd->nextras;
		jd->values_bad = sd->values_bad;
		jd->tuples = (uint64 *) (base + sd->tuples_at);
		jd->keyvals = (Datum *) (base + sd->keyvals_at);
		jd->group_head = (uint32 *) (base + sd->group_head_at);
		jd->arena = base + sd->arena_at;
		jd->arena_len = jd->arena_cap = sd->arena_len;
		jd->matches = NULL;
		jd->mcap = 0;
	}
}

/*
 * A parallel leader's inner tables, just built in backend memory, move to
 * a DSM segment of their own (the node's DSM chunk is sized before they
 * exist), which the leader then uses as its workers do.  Without room for
 * one they stay where they are, and each worker builds its own.
 */
static void
move_to_segment(GpuJoinState *gjs)
{
	GpuJoinSharedTables hdr;
	uint64		at = TYPEALIGN(64, sizeof(GpuJoinSharedTables));
	dsm_segment *seg;
	char	   *base;

	memset(&hdr, 0, sizeof(hdr));
	hdr.ndepths = gjs->ndepths;
	hdr.tables_at = at;
	hdr.table_bytes = gjs->table_bytes;
	at += gjs->table_bytes;
	for (int d = 0; d < gjs->ndepths; d++)
	{
		GpuJoinDepth *jd = &gjs->depths[d];
		GpuJoinSharedDepth *sd = &hdr.depths[d];

		sd->nrows = jd->nrows;
		sd->nextras = jd->nextras;
		sd->values_bad = jd->values_bad;
		sd->tuples_at = at = TYPEALIGN(64, at);
		at += (uint64) jd->ntuples * sizeof(uint64);
		sd->keyvals_at = at = MAXALIGN(at);
		at += (uint64) jd->ntuples * jd->nkeys * sizeof(Datum);
		sd->group_head_at = at = MAXALIGN(at);
		at += (uint64) jd->nrows * sizeof(uint32);
		sd->arena_at = at = TYPEALIGN(64, at);
		sd->arena_len = jd->arena_len;
		at += jd->arena_len;
	}
	hdr.total_bytes = at;
	if (gpuext_debug_inject_fault == GX_FAULT_NO_DSM || !gx_dsm_has_room(at) ||
		(seg = dsm_create(at, DSM_CREATE_NULL_IF_MAXSEGMENTS)) == NULL)
	{
		elog(DEBUG1, "gpuext: no DSM segment of " UINT64_FORMAT " bytes for GpuJoin's inner tables: each participant builds its own",
			 at);
		return;
	}
	base = dsm_segment_address(seg);
	memcpy(base, &hdr, sizeof(hdr));
	memcpy(base + hdr.tables_at, gjs->tables, gjs->table_bytes);
	for (int d = 0; d < gjs->ndepths; d++)
	{
		GpuJoinDepth *jd = &gjs->depths[d];
		GpuJoinSharedDepth *sd = &hdr.depths[d];

		if (jd->ntuples > 0)
		{
			memcpy(base + sd->tuples_at, jd->tuples, (Size) jd->ntuples * sizeof(uint64));
			memcpy(base + sd->keyvals_at, jd->keyvals,
				   (Size) jd->ntuples * jd->nkeys * sizeof(Datum));
		}
		if (jd->nrows > 0)
			memcpy(base + sd->group_head_at, jd->group_head, (Size) jd->nrows * sizeof(uint32));
		if (jd->arena_len > 0)
			memcpy(base + sd->arena_at, jd->arena, jd->arena_len);
	}
	/* the backend's copy goes */
	MemoryContextReset(gjs->inner_cxt);
	map_segment(gjs, seg);
}

/* Drop the inner tables (end, or a rescan with new parameter values). */
static void
drop_inner(GpuJoinState *gjs)
{
	if (gjs->table_id != 0)
		gx_cpu_table_unregister(gjs->table_id, gjs->tables);
	gjs->table_id = 0;
	/* (a worker's borrowed device copy is the leader's to free) */
	if (gjs->gpu_task != 0 && !gjs->gpu_task_borrowed)
		gx_task_destroy(gjs->gpu_task);
	gjs->gpu_task = 0;
	gjs->gpu_task_borrowed = false;
	gjs->pipe.task_id = 0;
	gjs->tables = NULL;
	for (int d = 0; d < gjs->ndepths; d++)
	{
		GpuJoinDepth *jd = &gjs->depths[d];

		ExecClearTuple(jd->slot);
		jd->stored_in_slot = NULL_ROW;
		jd->tuples = NULL;
		jd->keyvals = NULL;
		jd->group_head = NULL;
		jd->arena = NULL;
		jd->arena_len = jd->arena_cap = 0;
		jd->nrows = jd->nextras = jd->ntuples = 0;
		jd->matches = NULL;
		jd->mcap = 0;
	}
	/* the segment goes when its last process detaches */
	if (gjs->seg != NULL)
		dsm_detach(gjs->seg);
	gjs->seg = NULL;
	if (gjs->inner_cxt)
		MemoryContextReset(gjs->inner_cxt);
	gjs->inner_built = false;
}

/*
 * Build the device program (the scanned relation's device quals, then the
 * outer key expressions of every depth) followed by the join spec, with
 * the current values of Params.  Quals that cannot be built now run on
 * the host.
 */
static void
build_program(GpuJoinState *gjs)
{
	ScanState  *ss = &gjs->css.ss;
	TupleDesc	tupdesc = RelationGetDescr(ss->ss_currentRelation);
	List	   *keys = NIL;
	List	   *on_host = NIL;
	int		   *regs;
	int		   *types;
	const char *why;
	GxProgram  *prog;
	GxJoinSpec	spec;
	Size		len;
	char	   *buf;
	MemoryContext old;
	ListCell   *lc;
	int			i;

	MemoryContextReset(gjs->program_cxt);
	old = MemoryContextSwitchTo(gjs->program_cxt);
	for (int d = 0; d < gjs->ndepths; d++)
		keys = list_concat(keys, list_copy(gjs->depths[d].outer_keys));
	regs = palloc(sizeof(int) * (list_length(keys) + 1));
	types = palloc(sizeof(int) * (list_length(keys) + 1));
	gjs->device_quals = gjs->plan_device_quals;
	prog = gx_build_projection_program(gjs->device_quals, keys, gjs->fact_relid, tupdesc,
									   &ss->ps, ss->ps.ps_ExprContext, regs, types, &why);
	if (prog == NULL)
	{
		/* a Param the device cannot hold: every qual on the host */
		gjs->device_quals = NIL;
		prog = gx_build_projection_program(NIL, keys, gjs->fact_relid, tupdesc,
										   &ss->ps, ss->ps.ps_ExprContext, regs, types, &why);
		if (prog == NULL)
			elog(ERROR, "gpuext: cannot build the GpuJoin device program: %s", why);
	}
	foreach(lc, gjs->all_quals)
		if (!list_member_ptr(gjs->device_quals, lfirst(lc)))
			on_host = lappend(on_host, lfirst(lc));
	gjs->pass_state = ExecInitQual(on_host, &ss->ps);

	memset(&spec, 0, sizeof(spec));
	spec.ndepths = gjs->ndepths;
	i = 0;
	for (int d = 0; d < gjs->ndepths; d++)
	{
		GpuJoinDepth *jd = &gjs->depths[d];
		GxJoinDepth *sd = &spec.depths[d];

		sd->jointype = jd->jointype;
		sd->nkeys = jd->nkeys;
		/*
		 * The device drops rows the join type rejects, unless the host must
		 * still see them: extras to compare, or host quals that PostgreSQL
		 * would evaluate (and maybe raise an error on) before the join.
		 */
		sd->filter = (jd->nextras == 0 && on_host == NIL);
		for (int k = 0; k < jd->nkeys; k++)
		{
			sd->keys[k].kclass = jd->kclass[k];
			sd->keys[k].reg = regs[i++];
		}
	}
	len = TYPEALIGN(16, prog->length) + sizeof(GxJoinSpec);
	buf = palloc0(len);
	memcpy(buf, prog, prog->length);
	memcpy(buf + TYPEALIGN(16, prog->length), &spec, sizeof(spec));
	gjs->program = (GxProgram *) buf;
	MemoryContextSwitchTo(old);
	gx_pipeline_set_program(&gjs->pipe, gjs->program, len);
	gjs->program_built = true;
}

/* Release the batch being consumed. */
static void
finish_current(GpuJoinState *gjs)
{
	gjs->have_row = false;
	if (gjs->cur == NULL)
		return;
	/* slots point into the batch's pages: clear them before unpinning */
	ExecClearTuple(gjs->css.ss.ss_ScanTupleSlot);
	ExecClearTuple(gjs->fact_slot);
	gx_pipeline_release(&gjs->pipe, gjs->cur);
	gjs->cur = NULL;
}

/* Add inner row r to the current row's matches at depth jd. */
static inline void
add_match(GpuJoinState *gjs, GpuJoinDepth *jd, uint32 r)
{
	if (jd->nmatches >= jd->mcap)
	{
		MemoryContext old = MemoryContextSwitchTo(gjs->inner_cxt);

		jd->matches = grow_array(jd->matches, &jd->mcap, jd->nmatches + 1, sizeof(uint32));
		MemoryContextSwitchTo(old);
	}
	jd->matches[jd->nmatches++] = r;
}

/*
 * Does inner row r of a depth match outer key values, by PostgreSQL's own
 * equality operators?
 */
static bool
host_match(GpuJoinDepth *jd, uint32 r, Datum *ovals)
{
	for (int k = 0; k < jd->nkeys; k++)
	{
		Datum		res = FunctionCall2Coll(&jd->eqfn[k], jd->collation[k], ovals[k],
											inner_keyval(jd, r, k));

		if (!DatumGetBool(res))
			return false;
	}
	return true;
}

/*
 * The matches of the current outer row (in the fact slot) at every depth:
 * from the device's first match and the duplicate chain, plus the extras
 * compared on the host; a rechecked row is compared with every inner row
 * on the host.  Then the join types: false when the row yields nothing.
 */
static bool
collect_matches(GpuJoinState *gjs, const uint32 *match, bool recheck)
{
	ExprContext *econtext = gjs->css.ss.ps.ps_ExprContext;
	uint64		combos = 1;

	for (int d = 0; d < gjs->ndepths; d++)
	{
		GpuJoinDepth *jd = &gjs->depths[d];

		jd->nmatches = 0;
		jd->pos = 0;
		if (!recheck && match[d] != 0)
		{
			GxJoinRow  *rows = gx_join_rows(gx_join_table(gjs->tables, d));
			uint32		r = jd->group_head[match[d] - 1];

			add_match(gjs, jd, r);
			for (uint32 n = rows[r].next; n != 0; n = rows[n - 1].next)
				add_match(gjs, jd, n - 1);
		}
		if (recheck || jd->nextras > 0)
		{
			Datum		ovals[GX_JOIN_MAX_KEYS];
			bool		isnull = false;

			econtext->ecxt_scantuple = gjs->fact_slot;
			for (int k = 0; k < jd->nkeys && !isnull; k++)
				ovals[k] = ExecEvalExprSwitchContext(jd->outer_key_states[k], econtext, &isnull);
			if (!isnull)
			{
				for (uint32 r = recheck ? 0 : jd->nrows; r < jd->ntuples; r++)
					if (host_match(jd, r, ovals))
						add_match(gjs, jd, r);
			}
		}
		switch (jd->jointype)
		{
			case GX_JOIN_INNER:
				if (jd->nmatches == 0)
					return false;
				break;
			case GX_JOIN_LEFT:
				if (jd->nmatches == 0)
					add_match(gjs, jd, NULL_ROW);
				break;
			case GX_JOIN_SEMI:
				if (jd->nmatches == 0)
					return false;
				jd->nmatches = 0;
				add_match(gjs, jd, NULL_ROW);
				break;
			case GX_JOIN_ANTI:
				if (jd->nmatches != 0)
					return false;
				add_match(gjs, jd, NULL_ROW);
				break;
		}
		combos *= jd->nmatches;
		jd->rows_out += combos;
	}
	return true;
}

/* Form the joined row of the current combination in the scan slot. */
static TupleTableSlot *
form_joined_row(GpuJoinState *gjs)
{
	TupleTableSlot *slot = gjs->css.ss.ss_ScanTupleSlot;

	ExecClearTuple(slot);
	for (int i = 0; i < gjs->nsrc; i++)
	{
		int			d = gjs->src_depth[i];

		if (d == 0)
			slot->tts_values[i] = slot_getattr(gjs->fact_slot, gjs->src_attno[i],
											   &slot->tts_isnull[i]);
		else
		{
			GpuJoinDepth *jd = &gjs->depths[d - 1];
			uint32		r = jd->matches[jd->pos];

			if (r == NULL_ROW)
			{
				slot->tts_values[i] = (Datum) 0;
				slot->tts_isnull[i] = true;
				continue;
			}
			if (jd->stored_in_slot != r)
			{
				ExecStoreMinimalTuple(inner_tuple(jd, r), jd->slot, false);
				jd->stored_in_slot = r;
			}
			slot->tts_values[i] = slot_getattr(jd->slot, gjs->src_attno[i], &slot->tts_isnull[i]);
		}
	}
	return ExecStoreVirtualTuple(slot);
}

/* Step to the next combination of matches; false when none is left. */
static bool
next_combination(GpuJoinState *gjs)
{
	for (int d = gjs->ndepths - 1; d >= 0; d--)
	{
		GpuJoinDepth *jd = &gjs->depths[d];

		if (++jd->pos < jd->nmatches)
			return true;
		jd->pos = 0;
	}
	return false;
}

/*
 * The next outer row of the current batch that the device passed or wants
 * rechecked, in the fact slot; false when the batch is exhausted.
 */
static bool
next_outer_row(GpuJoinState *gjs, bool *recheck, const uint32 **match)
{
	GxPipeBatch *b = gjs->cur;
	GxBatch    *batch = b->pb.batch;
	uint32		stride = gx_join_out_per_page(gjs->ndepths);

	while (gjs->cur_page < b->npages)
	{
		GxJoinPageOut *out = (GxJoinPageOut *) ((char *) gx_batch_out(batch) +
												(Size) gjs->cur_page * stride);

		while (gjs->cur_bits == 0 && gjs->cur_word < GX_BITMAP_WORDS)
		{
			gjs->cur_bits = out->pass[gjs->cur_word] | out->recheck[gjs->cur_word];
			if (gjs->cur_bits == 0)
				gjs->cur_word++;
		}
		if (gjs->cur_bits != 0)
		{
			int			bit = pg_rightmost_one_pos32(gjs->cur_bits);
			OffsetNumber off = gjs->cur_word * 32 + bit + 1;
			HeapTuple	tup = &gjs->tuple;

			*recheck = (out->recheck[gjs->cur_word] >> bit) & 1;
			*match = gx_join_matches(out, gjs->ndepths, off);
			gjs->cur_bits &= gjs->cur_bits - 1;
			if (gjs->cur_bits == 0)
				gjs->cur_word++;

			/* (a cached page is pinned only now, for its rows that passed) */
			gx_pipeline_heap_tuple(&gjs->pipe, b, gjs->cur_page, off, tup);
			ExecStoreHeapTuple(tup, gjs->fact_slot, false);
			return true;
		}
		gjs->cur_page++;
		gjs->cur_word = 0;
		gjs->cur_bits = 0;
	}
	return false;
}

/* ExecScan access method: the next joined row. */
static TupleTableSlot *
gpujoin_next(ScanState *ss)
{
	GpuJoinState *gjs = (GpuJoinState *) ss;
	ExprContext *econtext = ss->ps.ps_ExprContext;

	for (;;)
	{
		bool		recheck;
		const uint32 *match;

		if (gjs->have_row)
		{
			if (next_combination(gjs))
				return form_joined_row(gjs);
			gjs->have_row = false;
		}
		if (gjs->cur != NULL && next_outer_row(gjs, &recheck, &match))
		{
			ResetExprContext(econtext);
			econtext->ecxt_scantuple = gjs->fact_slot;
			if (recheck)
				gjs->rows_rechecked++;
			if (!ExecQual(recheck ? gjs->recheck_state : gjs->pass_state, econtext))
				continue;
			gjs->outer_rows++;
			if (!collect_matches(gjs, match, recheck))
				continue;
			pgstat_count_heap_getnext(ss->ss_currentRelation);
			gjs->have_row = true;
			return form_joined_row(gjs);
		}
		finish_current(gjs);
		if (!gjs->inner_built)
		{
			gjs->outer_empty = RelationGetNumberOfBlocks(ss->ss_currentRelation) == 0;
			build_inner(gjs);
		}
		if (!gjs->program_built)
			build_program(gjs);
		gjs->cur = gx_pipeline_next(&gjs->pipe);
		if (gjs->cur == NULL)
			return ExecClearTuple(ss->ss_ScanTupleSlot);
		if (gjs->pipe.engine.failed)
		{
			/* the GPU failed (fallback allowed): this batch and the rest on the CPU */
			gjs->pipe.engine.failed = false;
			gjs->pipe.task_id = gjs->table_id;
			gjs->cur->pb.batch->task_id = gjs->table_id;
			gx_cpu_run_batch(gjs->cur->pb.batch, gjs->cur->pb.size);
			gjs->pipe.engine.cpu_batches++;
		}
		gjs->cur_page = 0;
		gjs->cur_word = 0;
		gjs->cur_bits = 0;
	}
}

/* No EvalPlanQual through GpuJoin: the planner never offers it then. */
static bool
gpujoin_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
gpujoin_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, gpujoin_next, gpujoin_recheck);
}

static void
gpujoin_end(CustomScanState *node)
{
	GpuJoinState *gjs = (GpuJoinState *) node;
	ListCell   *lc;

	foreach(lc, node->custom_ps)
		ExecEndNode((PlanState *) lfirst(lc));
	if (gjs->pipe_started)
	{
		finish_current(gjs);
		gx_pipeline_end(&gjs->pipe);
		gjs->pipe_started = false;
		drop_inner(gjs);
	}
}

/*
 * Rescan: the outer scan starts over; the inner tables are kept unless a
 * parameter of an inner plan changed (then they run again), as
 * PostgreSQL's hash join does.  A parallel leader's inner tables are
 * ReInitializeDSMCustomScan's to keep or rebuild: that runs before the
 * workers start, and (Gather's rescan parameter) before this.
 */
static void
gpujoin_rescan(CustomScanState *node)
{
	GpuJoinState *gjs = (GpuJoinState *) node;

	finish_current(gjs);
	gx_pipeline_reset(&gjs->pipe);
	gjs->program_built = false;
	if (gjs->shared != NULL && !IsParallelWorker())
		return;
	if (node->ss.ps.chgParam != NULL)
	{
		bool		changed = false;
		ListCell   *lc;

		/* the inner plans rescan themselves when read again */
		foreach(lc, node->custom_ps)
		{
			PlanState  *child = (PlanState *) lfirst(lc);

			UpdateChangedParamSet(child, node->ss.ps.chgParam);
			if (child->chgParam != NULL)
				changed = true;
		}
		if (changed && gjs->inner_built)
			drop_inner(gjs);
	}
}

static Size
gpujoin_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return GPUJOIN_SHARED_SIZE + table_block_parallelscan_estimate(node->ss.ss_currentRelation);
}

/*
 * The parallel leader, before its workers start: build the inner tables
 * (unless those of the previous scan still hold), in a DSM segment, and
 * on the GPU upload them, once for every participant; describe them in
 * the node's DSM chunk.  An error here (an inner plan's, or building) is
 * the query's, before any worker runs.
 */
static void
share_inner(GpuJoinState *gjs)
{
	GpuJoinShared *sh = gjs->shared;

	sh->has_tables = false;
	sh->handle = 0;
	sh->gpu_task = 0;
	sh->over_limit = false;
	pg_atomic_init_u32(&sh->adopted, 0);
	gjs->shared_rounds++;
	if (!gjs->pipe_started)
		return;
	if (!gjs->inner_built)
	{
		gjs->outer_empty = RelationGetNumberOfBlocks(gjs->css.ss.ss_currentRelation) == 0;
		build_inner(gjs);
		gjs->leader_builds++;
	}
	if (gjs->seg == NULL)
		return;					/* no room: each worker builds its own */
	sh->handle = dsm_segment_handle(gjs->seg);
	sh->gpu_task = gjs->gpu_task;
	sh->over_limit = gjs->over_limit;
	sh->has_tables = true;
}

/*
 * Could the inner plans return other rows in another scan?  Only if they
 * depend on a parameter (of an outer query level, an InitPlan's): the
 * changed ones are not known yet when ReInitializeDSMCustomScan runs.
 */
static bool
inner_may_change(GpuJoinState *gjs)
{
	ListCell   *lc;

	foreach(lc, gjs->css.custom_ps)
	{
		PlanState  *child = (PlanState *) lfirst(lc);

		if (!bms_is_empty(child->plan->allParam) || child->chgParam != NULL)
			return true;
	}
	return false;
}

static void
gpujoin_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuJoinState *gjs = (GpuJoinState *) node;
	ParallelBlockTableScanDesc pscan =
		(ParallelBlockTableScanDesc) ((char *) coordinate + GPUJOIN_SHARED_SIZE);

	table_block_parallelscan_initialize(node->ss.ss_currentRelation, (ParallelTableScanDesc) pscan);
	gjs->pipe.pscan = pscan;
	gjs->shared = (GpuJoinShared *) coordinate;
	share_inner(gjs);
}

/*
 * ReInitializeDSMCustomScan (the leader, the workers of the previous scan
 * done): the tables are rebuilt if an inner plan may now return other
 * rows, then shared again.
 */
static void
gpujoin_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuJoinState *gjs = (GpuJoinState *) node;
	ParallelBlockTableScanDesc pscan =
		(ParallelBlockTableScanDesc) ((char *) coordinate + GPUJOIN_SHARED_SIZE);

	table_block_parallelscan_reinitialize(node->ss.ss_currentRelation,
										  (ParallelTableScanDesc) pscan);
	gjs->pipe.pscan = pscan;
	gjs->shared = (GpuJoinShared *) coordinate;
	if (gjs->inner_built && inner_may_change(gjs))
	{
		ListCell   *lc;

		drop_inner(gjs);

		/*
		 * gpujoin_rescan, which tells the inner plans which parameters
		 * changed, runs only after this: without them, an inner plan that
		 * keeps its rows across rescans (a Material, a sort, a hashed
		 * aggregation) would return those of the previous scan.
		 */
		foreach(lc, node->custom_ps)
		{
			PlanState  *child = (PlanState *) lfirst(lc);

			if (node->ss.ps.chgParam != NULL)
				UpdateChangedParamSet(child, node->ss.ps.chgParam);
			ExecReScan(child);
		}
	}
	share_inner(gjs);
}

/*
 * A worker: map the leader's inner tables and use its device copy (the
 * leader frees both, after every worker is done).  Where the leader's
 * tables stayed in host memory, so do this worker's batches: the CPU
 * engine.  False when there is nothing to map: the worker then builds its
 * own at its first batch.
 */
static bool
adopt_inner(GpuJoinState *gjs)
{
	GpuJoinShared *sh = gjs->shared;
	dsm_segment *seg;
	GpuJoinSharedTables *hdr;

	if (!sh->has_tables || !gjs->pipe_started)
		return false;
	seg = dsm_attach(sh->handle);
	if (seg == NULL)
		return false;
	hdr = (GpuJoinSharedTables *) dsm_segment_address(seg);
	if (dsm_segment_map_length(seg) < sizeof(GpuJoinSharedTables) ||
		hdr->ndepths != gjs->ndepths || hdr->total_bytes > dsm_segment_map_length(seg))
	{
		dsm_detach(seg);
		return false;
	}
	map_segment(gjs, seg);
	gjs->over_limit = sh->over_limit;
	gjs->table_id = gx_cpu_table_register(gjs->tables, gjs->inner_cxt);
	gjs->pipe.task_id = gjs->table_id;
	gjs->inner_built = true;
	if (gjs->pipe.engine.use_gpu)
	{
		if (sh->gpu_task != 0)
		{
			gjs->gpu_task = sh->gpu_task;
			gjs->gpu_task_borrowed = true;
			gjs->pipe.task_id = gjs->gpu_task;
		}
		else
		{
			gx_engine_start_with_mode(&gjs->pipe.engine, GPUEXT_DEVICE_CPU);
			gjs->pipe.depth = 1;
		}
	}
	pg_atomic_fetch_add_u32(&sh->adopted, 1);
	return true;
}

static void
gpujoin_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GpuJoinState *gjs = (GpuJoinState *) node;

	gjs->shared = (GpuJoinShared *) coordinate;
	gjs->pipe.pscan = (ParallelBlockTableScanDesc) ((char *) coordinate + GPUJOIN_SHARED_SIZE);
	(void) adopt_inner(gjs);
}

/*
 * ShutdownCustomScan: the leader notes for EXPLAIN ANALYZE how many
 * workers took its tables, before the DSM chunk goes.
 */
static void
gpujoin_shutdown(CustomScanState *node)
{
	GpuJoinState *gjs = (GpuJoinState *) node;

	if (gjs->shared != NULL && !IsParallelWorker())
	{
		gjs->shared_workers = gjs->shared->has_tables ?
			(int) pg_atomic_read_u32(&gjs->shared->adopted) : -2;
		gjs->shared = NULL;
	}
}

/* EXPLAIN lines of every depth: join type and keys, rows with ANALYZE. */
static void
explain_depths(GpuJoinState *gjs, List *context, int rtoffset, bool show_rows,
			   ExplainState *es)
{
	for (int d = 0; d < gjs->ndepths; d++)
	{
		GpuJoinDepth *jd = &gjs->depths[d];
		Node	   *keys = (Node *) copyObject(make_ands_explicit(jd->key_clauses));
		char		label[64];
		char	   *str;

		if (rtoffset != 0)
			OffsetVarNodes(keys, rtoffset, 0);
		str = deparse_expression(keys, context, true, false);
		snprintf(label, sizeof(label), "Depth %d", d + 1);
		ExplainPropertyText(label, psprintf("%s Join, keys %s", jointype_name(jd->jointype), str), es);
		if (es->analyze && show_rows)
		{
			snprintf(label, sizeof(label), "Rows after Depth %d", d + 1);
			ExplainPropertyInteger(label, NULL, jd->rows_out, es);
		}
	}
}

/*
 * EXPLAIN ANALYZE of a parallel leader: who built the inner tables (the
 * leader, once for all participants, or each participant when no DSM
 * segment could hold them), and with rescans how many times.
 */
static void
explain_inner_build(GpuJoinState *gjs, ExplainState *es)
{
	if (gjs->shared_workers == -1)
		return;
	if (gjs->shared_workers >= 0)
		ExplainPropertyText("Inner Build",
							psprintf("leader, shared with %d worker%s", gjs->shared_workers,
									 gjs->shared_workers == 1 ? "" : "s"), es);
	else
		ExplainPropertyText("Inner Build", "each participant (no DSM segment for them)", es);
	if (gjs->shared_rounds > 1)
		ExplainPropertyText("Inner Builds by Leader",
							psprintf("%d in %d parallel scans", gjs->leader_builds,
									 gjs->shared_rounds), es);
}

/*
 * EXPLAIN ANALYZE (not in regression test mode): the host's time for the
 * inner side, over all builds: running the inner plans and keeping their
 * rows (their own nodes show the plans' share), assembling and hashing the
 * tables, and sending them to the device.
 */
static void
explain_inner_times(GpuJoinState *gjs, ExplainState *es)
{
	if (!es->analyze || gpuext_regression_test_mode)
		return;
	ExplainPropertyFloat("Inner Rows Time", "ms", gjs->inner_rows_ms, 3, es);
	ExplainPropertyFloat("Inner Hash Time", "ms", gjs->inner_hash_ms, 3, es);
	if (gjs->inner_upload_ms > 0)
		ExplainPropertyFloat("Inner Upload Time", "ms", gjs->inner_upload_ms, 3, es);
}

static const char *
jointype_name(int jointype)
{
	switch (jointype)
	{
		case GX_JOIN_LEFT:
			return "Left";
		case GX_JOIN_SEMI:
			return "Semi";
		case GX_JOIN_ANTI:
			return "Anti";
		default:
			return "Inner";
	}
}

/*
 * EXPLAIN: the scanned relation's device quals, each depth's join type and
 * keys, and with ANALYZE the rows after each depth.  Keys keep the range
 * table indexes they had at planning; setrefs moved the scan relation by
 * the plan's offset, and the keys are moved the same way to deparse them.
 */
static void
gpujoin_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuJoinState *gjs = (GpuJoinState *) node;
	Plan	   *plan = node->ss.ps.plan;
	int			rtoffset = (int) ((Scan *) plan)->scanrelid - (int) gjs->fact_relid;
	List	   *context;
	bool		useprefix = true;
	char	   *str;

	context = set_deparse_context_plan(es->deparse_cxt, plan, ancestors);
	if (gjs->plan_device_quals != NIL)
	{
		Node	   *q = (Node *) copyObject(make_ands_explicit(gjs->plan_device_quals));

		if (rtoffset != 0)
			OffsetVarNodes(q, rtoffset, 0);
		str = deparse_expression(q, context, useprefix, false);
		ExplainPropertyText("GPU Filter", str, es);
	}
	explain_depths(gjs, context, rtoffset, true, es);
	if (!gjs->pipe_started)
	{
		const char *why;

		/* the engine the node would start with */
		if (!gpuext_regression_test_mode)
			ExplainPropertyText("Engine",
								gpujoin_kernels && gpuext_device_mode != GPUEXT_DEVICE_CPU &&
								gx_service_has_gpu(&why) ? "GPU" : "CPU engine", es);
		return;
	}
	if (es->verbose && gjs->program)
		ExplainPropertyText("Device Program", gx_program_summary(gjs->program), es);
	if (!gpuext_regression_test_mode)
		ExplainPropertyText("Engine", gx_engine_name(&gjs->pipe.engine), es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Pages", NULL, gjs->pipe.npages, es);
		ExplainPropertyInteger("Outer Rows", NULL, gjs->outer_rows, es);
		ExplainPropertyInteger("Rows Rechecked on Host", NULL, gjs->rows_rechecked, es);
		gx_pipeline_explain_cache(&gjs->pipe, true, es);
		if (gjs->over_limit)
			ExplainPropertyText("Inner Tables", "in host memory (over gpuext.gpu_memory_limit)", es);
		explain_inner_build(gjs, es);
		if (!gpuext_regression_test_mode)
		{
			ExplainPropertyInteger("Inner Table Bytes", NULL, gjs->table_bytes, es);
			explain_inner_times(gjs, es);
			gx_pipeline_explain_batches(&gjs->pipe, es);
			gx_pipeline_explain_times(&gjs->pipe, es);
		}
	}
}

/* Register the hook and the node; from _PG_init. */
void
gx_gpujoin_init(void)
{
	DefineCustomBoolVariable("gpuext.gpujoin_kernels",
							 "Runs GpuJoin batches with the CUDA join kernels when a GPU is available.",
							 "Off: the CPU engine runs them, and GpuJoin is planned only with gpuext.force_offload.",
							 &gpujoin_kernels, true, PGC_USERSET, 0, NULL, NULL, NULL);
	RegisterCustomScanMethods(&gpujoin_plan_methods);
	prev_set_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = gpujoin_add_paths;
	prev_planner_hook = planner_hook;
	planner_hook = gpujoin_planner;
}

/* ---------------------------------------------------------------------
 * Fusion: GpuAgg over a GpuJoin (gpuagg.c) scans the outer relation and
 * probes the inner tables in its own batches, so only groups come back.
 * ---------------------------------------------------------------------
 */
struct GxFusedJoin
{
	GpuJoinState gjs;			/* only its depths and tables are used */
	int			rtoffset;		/* setrefs' offset of range table indexes */
	int			npayload;		/* inner group keys */
	int			payload_depth[GX_JOIN_MAX_PAYLOAD];
	int			payload_col[GX_JOIN_MAX_PAYLOAD];
	int			payload_type[GX_JOIN_MAX_PAYLOAD];
};

/*
 * Can a group key of an aggregation over this GpuJoin path come from an
 * inner relation (stored with its inner rows, loaded for each joined row)?
 * It must be an output column of an inner or left depth, of a type the
 * device holds.  Returns its value class, or 0.
 */
int
gx_gpujoin_inner_key_class(Path *joinpath, Expr *key)
{
	GpuJoinPath *gp = (GpuJoinPath *) joinpath;

	for (int d = 0; d < gp->ndepths; d++)
	{
		if (gp->depths[d].jointype != JOIN_INNER && gp->depths[d].jointype != JOIN_LEFT)
			continue;
		if (list_member(gp->depths[d].inner_path->pathtarget->exprs, key))
			return gx_type_class(exprType((Node *) key));
	}
	return 0;
}

/*
 * Cost of a GpuJoin's work when fused under a GpuAgg, beyond its outer
 * scan: the inner plans, building their tables, and probing with every
 * row of the scanned relation that passes its quals (no joined row comes
 * to the host).
 */
static Cost
fused_join_cost(PlannerInfo *root, GpuJoinPath *gp, bool gpu)
{
	GxJoinCostInput jin;
	Cost		startup,
				run,
				cost = 0;

	memset(&jin, 0, sizeof(jin));
	for (int d = 0; d < gp->ndepths; d++)
	{
		jin.inner_rows += gp->depths[d].inner_rows;
		cost += inner_path_cost(gp->depths[d].inner_path);
	}
	jin.table_bytes = estimate_table_bytes(gp);
	jin.outer_rows = find_base_rel(root, gp->fact_relid)->rows;
	jin.depths = gp->ndepths;
	jin.rows_out = 0;			/* rows stay on the device */
	jin.gpu = gpu;
	gx_cost_join(gx_cost_params(), &jin, &startup, &run);
	return cost + startup + run;
}

/* Cost of the serial scan of a fused GpuJoin's outer relation, rows kept. */
static Cost
fused_scan_cost(PlannerInfo *root, GpuJoinPath *gp, bool gpu)
{
	RelOptInfo *fact = find_base_rel(root, gp->fact_relid);
	GxScanCostInput in;
	Cost		startup,
				total;

	memset(&in, 0, sizeof(in));
	in.pages = fact->pages;
	in.allvisfrac = fact->allvisfrac;
	in.tuples = fact->tuples;
	in.program_len = 3.0 * list_length(gp->device_quals);
	for (int d = 0; d < gp->ndepths; d++)
		in.program_len += 2.0 * list_length(gp->depths[d].outer_keys);
	in.gpu = gpu;
	gx_colcache_cost_input(root, fact, outer_program_exprs(gp), &in);
	gx_cost_scan(gx_cost_params(), &in, &startup, &total);
	return total;
}

/*
 * A GpuJoin path of 'joinrel' that an aggregation can absorb:
 * unparameterized, every qual of the scanned relation on the device and
 * no host filter over the joined row.  Returns it (the cheapest such), with the scanned relation, its device quals (RestrictInfos), the inner paths,
 * and the cost of the join beyond the outer scan, on the GPU if 'gpu' (the
 * fused kernels), else on the CPU engine; NULL when none.
 */
Path *
gx_gpujoin_fusable(PlannerInfo *root, RelOptInfo *joinrel, bool gpu, Index *fact_relid,
				   List **device_quals, List **inner_paths, Cost *join_cost)
{
	GpuJoinPath *best = NULL;
	Cost		best_cost = 0;
	ListCell   *lc;

	/*
	 * Only the GpuJoin's depths and inner paths are taken: a partial one
	 * (parallel-aware, with parallel-safe inner paths) serves as well, and
	 * is the one a parallel GpuAgg needs.  Also one that lost to a stock
	 * join in the path list (kept_paths): its cost includes forming every
	 * joined row on the host, which the fused path does not pay.
	 */
	foreach(lc, gpujoin_paths_of(joinrel))
	{
		Path	   *p = lfirst(lc);
		GpuJoinPath *gp = (GpuJoinPath *) p;
		int			nquals = 0;
		ListCell   *lc2;
		Cost		cost;

		if (p->param_info != NULL || gp->host_filters != NIL)
			continue;
		foreach(lc2, gp->fact_quals)
			if (!lfirst_node(RestrictInfo, lc2)->pseudoconstant)
				nquals++;
		if (nquals != list_length(gp->device_quals))
			continue;
		/*
		 * The cheapest when fused (not the cheapest GpuJoin path, whose cost
		 * is mostly its joined rows): the scan of its outer relation and
		 * the join without them.  A parallel GpuAgg replaces the inner
		 * paths that may not run in a worker (a serial GpuScan) by
		 * parallel-safe ones, and pays for it (gpuagg.c, replace_inner_paths).
		 */
		cost = fused_join_cost(root, gp, gpu) + fused_scan_cost(root, gp, gpu);
		if (best == NULL || cost < best_cost)
		{
			best = gp;
			best_cost = cost;
		}
	}
	if (best == NULL)
		return NULL;
	*fact_relid = best->fact_relid;
	*device_quals = best->device_quals;
	*inner_paths = best->cpath.custom_paths;
	*join_cost = fused_join_cost(root, best, gpu);
	return &best->cpath.path;
}

/*
 * What the executor of a fused join needs, for the node's custom_private;
 * inner_keys: the group keys that come from inner relations, each found
 * as an output column of an inner or left depth's plan.
 */
List *
gx_gpujoin_fused_plan(Path *joinpath, List *inner_plans, List *inner_keys)
{
	GpuJoinPath *gp = (GpuJoinPath *) joinpath;
	List	   *pdepth = NIL;
	List	   *pattno = NIL;
	ListCell   *lc;

	foreach(lc, inner_keys)
	{
		bool		found = false;

		for (int d = 0; d < gp->ndepths && !found; d++)
		{
			int			i = 1;
			ListCell   *lc2;

			if (gp->depths[d].jointype != JOIN_INNER && gp->depths[d].jointype != JOIN_LEFT)
				continue;
			foreach(lc2, ((Plan *) list_nth(inner_plans, d))->targetlist)
			{
				if (equal(lfirst(lc), ((TargetEntry *) lfirst(lc2))->expr))
				{
					pdepth = lappend_int(pdepth, d);
					pattno = lappend_int(pattno, i);
					found = true;
					break;
				}
				i++;
			}
		}
		if (!found)
			elog(ERROR, "gpuext: GpuAgg cannot find an inner group key");
	}
	return lappend(lappend(lcons(list_make2_int(gp->fact_relid, gp->ndepths),
								 depth_lists(gp, inner_plans)), pdepth), pattno);
}

/*
 * Start a fused join inside node 'parent' scanning range table index
 * 'scanrelid': the inner plans become children (*children), the outer keys
 * are moved to the scan's final range table index.
 */
GxFusedJoin *
gx_fused_join_begin(List *priv, List *inner_plans, EState *estate, int eflags,
					PlanState *parent, Index scanrelid, List **children)
{
	GxFusedJoin *fj = palloc0(sizeof(GxFusedJoin));
	GpuJoinState *gjs = &fj->gjs;
	List	   *head = linitial(priv);

	gjs->fact_relid = linitial_int(head);
	gjs->ndepths = lsecond_int(head);
	read_depths(gjs, list_copy_tail(priv, 1));
	fj->rtoffset = (int) scanrelid - (int) gjs->fact_relid;
	for (int d = 0; d < gjs->ndepths; d++)
	{
		GpuJoinDepth *jd = &gjs->depths[d];

		jd->outer_keys = copyObject(jd->outer_keys);
		if (fj->rtoffset != 0)
			OffsetVarNodes((Node *) jd->outer_keys, fj->rtoffset, 0);
	}
	gjs->css.ss.ps.ps_ExprContext = parent->ps_ExprContext;
	gjs->rows_unused = true;
	init_depths(gjs, inner_plans, estate, eflags, parent, children);
	/* inner group keys: stored columns of their depths */
	{
		ListCell   *lc1,
				   *lc2;

		forboth(lc1, (List *) list_nth(priv, 8), lc2, (List *) list_nth(priv, 9))
		{
			GpuJoinDepth *jd = &gjs->depths[lfirst_int(lc1)];
			TupleDesc	desc = ExecGetResultType(jd->child);
			Oid			type = TupleDescAttr(desc, lfirst_int(lc2) - 1)->atttypid;

			fj->payload_depth[fj->npayload] = lfirst_int(lc1);
			fj->payload_col[fj->npayload] = jd->nvalues;
			fj->payload_type[fj->npayload] = gx_type_class(type);
			jd->value_attno[jd->nvalues] = lfirst_int(lc2);
			jd->value_type[jd->nvalues] = type;
			jd->nvalues++;
			fj->npayload++;
		}
	}
	if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY))
		gjs->inner_cxt = AllocSetContextCreate(CurrentMemoryContext, "GpuJoin inner tables",
											   ALLOCSET_DEFAULT_SIZES);
	return fj;
}

/* The outer key expressions of every depth, in order. */
List *
gx_fused_join_outer_keys(GxFusedJoin *fj)
{
	List	   *keys = NIL;

	for (int d = 0; d < fj->gjs.ndepths; d++)
		keys = list_concat(keys, list_copy(fj->gjs.depths[d].outer_keys));
	return keys;
}

/*
 * The join spec, the outer keys being in registers regs[0..], the inner
 * group keys loaded into registers payload_regs[0..].
 */
void
gx_fused_join_spec(GxFusedJoin *fj, const int *regs, const int *payload_regs, GxJoinSpec *spec)
{
	int			i = 0;

	memset(spec, 0, sizeof(*spec));
	spec->ndepths = fj->gjs.ndepths;
	spec->npayload = fj->npayload;
	for (int p = 0; p < fj->npayload; p++)
	{
		spec->payload[p].depth = fj->payload_depth[p];
		spec->payload[p].type = fj->payload_type[p];
		spec->payload[p].reg = payload_regs[p];
		spec->payload[p].col = fj->payload_col[p];
	}
	for (int d = 0; d < fj->gjs.ndepths; d++)
	{
		GpuJoinDepth *jd = &fj->gjs.depths[d];

		spec->depths[d].jointype = jd->jointype;
		spec->depths[d].nkeys = jd->nkeys;
		spec->depths[d].filter = 1;
		for (int k = 0; k < jd->nkeys; k++)
		{
			spec->depths[d].keys[k].kclass = jd->kclass[k];
			spec->depths[d].keys[k].reg = regs[i++];
		}
	}
}

/*
 * Run the inner plans and build the tables (once per scan; not when the
 * scanned relation 'outer' is empty); false (with *why) when the device
 * cannot join exactly: an inner key it cannot hold.
 */
bool
gx_fused_join_build(GxFusedJoin *fj, Relation outer, bool for_device, uint32 *table_id,
					const char **why)
{
	GpuJoinState *gjs = &fj->gjs;

	if (!gjs->inner_built)
	{
		gjs->device_builds = for_device;
		gjs->outer_empty = RelationGetNumberOfBlocks(outer) == 0;
		build_inner(gjs);
	}
	*table_id = gjs->table_id;
	for (int d = 0; d < gjs->ndepths; d++)
	{
		if (gjs->depths[d].nextras > 0)
		{
			*why = "an inner join key the device cannot hold (numeric NaN or beyond 128 bits)";
			return false;
		}
		if (gjs->depths[d].values_bad)
		{
			*why = "an inner group key the device cannot hold (numeric NaN or beyond 128 bits)";
			return false;
		}
	}
	return true;
}

/*
 * GPU: send the built tables to the device beside task 'near_task' (the
 * aggregation's group table).  Returns the join tables' task id, or 0 with
 * *why (the aggregation then runs PostgreSQL's plan).
 */
uint32
gx_fused_join_upload(GxFusedJoin *fj, uint32 near_task, const char **why)
{
	GpuJoinState *gjs = &fj->gjs;
	uint64		limit = gx_gpu_memory_limit_bytes();
	int			status;
	char		err[GX_ERRLEN];

	if ((limit > 0 && gjs->table_bytes > limit) || gjs->table_bytes > PG_UINT32_MAX / 2)
	{
		*why = "the inner hash tables exceed gpuext.gpu_memory_limit";
		return 0;
	}
	gjs->gpu_task = send_tables(gjs, near_task, &status, err);
	if (gjs->gpu_task == 0)
	{
		if (status != GX_ERR_OUT_OF_MEMORY && gpuext_cpu_fallback == GPUEXT_FALLBACK_OFF)
			gx_report_failure(status, err);
		*why = pstrdup(err);
	}
	return gjs->gpu_task;
}

/* Does gpuext.gpujoin_kernels let joins run on the GPU? */
bool
gx_gpujoin_kernels_enabled(void)
{
	return gpujoin_kernels;
}

/* The value class of inner group key p. */
int
gx_fused_join_payload_type(GxFusedJoin *fj, int p)
{
	return fj->payload_type[p];
}

/* Rescan: drop the tables, start the inner plans over. */
void
gx_fused_join_reset(GxFusedJoin *fj)
{
	if (fj->gjs.inner_built)
		drop_inner(&fj->gjs);
	for (int d = 0; d < fj->gjs.ndepths; d++)
		ExecReScan(fj->gjs.depths[d].child);
}

void
gx_fused_join_end(GxFusedJoin *fj)
{
	for (int d = 0; d < fj->gjs.ndepths; d++)
		ExecEndNode(fj->gjs.depths[d].child);
	if (fj->gjs.inner_cxt)
		drop_inner(&fj->gjs);
}

/* EXPLAIN lines of the fused join's depths. */
void
gx_fused_join_explain(GxFusedJoin *fj, List *context, ExplainState *es)
{
	/* (the device counts no rows per depth when it aggregates them) */
	explain_depths(&fj->gjs, context, fj->rtoffset, false, es);
	explain_inner_times(&fj->gjs, es);
}
