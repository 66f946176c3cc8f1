/*-------------------------------------------------------------------------
 * spill.c
 *		Re-cost PostgreSQL's own spilling operators with separate write
 *		costs (the asymmetric read/write model of Bausch et al.), and its
 *		hashed aggregations and Gathers with what calibration measured
 *		them taking beyond the planner's estimates.
 *
 * PostgreSQL prices a page written to a temporary file like a page read
 * (random_page_cost, seq_page_cost).  On flash a write costs several
 * reads.  From the planner's create_upper_paths hook (src/paths.c), before
 * the paths of an upper relation compete, every hashed aggregation
 * expected to spill and every sort expected to go to disk gets a
 * surcharge: the pages PostgreSQL charged as written, times its own page
 * cost, times (write / read - 1), where write / read is the ratio of the
 * storage parameters that gpuext_calibrate() measures
 * (gpuext.storage_*_write_us over gpuext.storage_*_read_us).  The page counts are PostgreSQL's own
 * (costsize.c: cost_agg and cost_sort), so a plan that does not spill is
 * never touched.  The surcharge is paid before the first row, so it is
 * added to the startup and total cost of the node and of every node above
 * it in the same relation.
 *
 * Grouped aggregations are also charged gpuext.stock_agg_row_us per input
 * row (what calibration measures hashing a row's keys and finding its
 * group taking beyond the planner's one operator a key), sorted ones as
 * hashed ones: charged to the hashed ones only, it made PostgreSQL's
 * choice between the two its own no longer, and a join of 20 rows grouped
 * by a text (cm_nation_join) went to a Sort and a GroupAggregate, 5-10 %
 * slower than the HashAggregate it had chosen, in four H100 runs of eight
 * (sessions 14-15).  Hashed ones are charged
 * gpuext.stock_group_us per group beyond the first GX_STOCK_GROUPS_CACHED
 * (measured by gpuext_calibrate():
 * what a group takes beyond the planner's estimate once the table
 * outgrows the CPU's caches), whether or not they spill, and
 * independently of gpuext.recost_spills.  The groups are the planner's
 * estimate, which for a grouping expression can be far more than there
 * are (cm_1k_group: 632 estimated for 10): charged from the first group,
 * at 0.3 us that aggregation of 1000 rows looked dearer than a GpuAgg
 * 20 % slower than it.
 *
 * Every stock aggregation of the query's grouping (not a DISTINCT's or a
 * set operation's) is charged gpuext.stock_byref_us per input row
 * and aggregate over a by-reference value (sum(numeric), min(text)) or
 * by-reference group key (a bpchar, a text): PostgreSQL prices such a step
 * as it prices one over an int, and numeric arithmetic, bpchar hashing and
 * their allocations take several times longer.  A stock hash join that is
 * the input of an aggregation is charged gpuext.stock_join_row_us per
 * outer row (its probe beyond the planner's estimate).  On the H100
 * (session 14) cm_join_supp's stock plan (supplier joined to nation,
 * sum(s_acctbal) by n_name, 1000 rows) ran 0.7-0.9 ms, estimated at a
 * third of that, against a GpuAgg of 0.6 estimated within a fifth; a
 * stock aggregation of 1000 ints by an int key (cm_1k_group) was
 * estimated about right.  Joins with nothing above them, and the
 * operators of scans' filters, are not charged (a GpuScan returning
 * rows to the client is estimated with less margin than that).
 *
 * A Gather or Gather Merge of stock nodes that is the input of a node of
 * the relation is charged its workers' launches beyond parallel_setup_cost
 * (gx_stock_launch_surcharge), as gpuext's own partial paths are; one
 * whose input a partial gpuext path with as many workers drives was
 * charged them there.  A Gather that ends a scan or join (a query with no
 * aggregation, sort or limit above it) is out of reach.
 *
 * What this cannot reach (no hook sees those costs): hash joins that
 * batch, sorts inside merge joins, Material nodes, and paths that add_path
 * had already discarded because a path re-costed here looked cheaper.
 *
 * IDENTIFICATION
 *		costmodel/spill.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "executor/nodeAgg.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "optimizer/prep.h"
#include "utils/lsyscache.h"
#include "utils/tuplesort.h"

#include "cost.h"

/* a node of the relation already re-costed, and what it was charged */
typedef struct Recosted
{
	Path	   *path;
	Cost		surcharge;
} Recosted;

/* Bytes of 'tuples' rows of 'width' bytes in a temporary file (as costsize.c). */
static double
spill_bytes(double tuples, int width)
{
	return tuples * (MAXALIGN(width) + MAXALIGN(SizeofHeapTupleHeader));
}

/* Measured cost of a write over the cost of a read, minus one (>= -1). */
static double
extra_write_factor(double write_us, double read_us)
{
	if (read_us <= 0)
		return 0;
	return Max(write_us / read_us, 0) - 1.0;
}

/*
 * Extra cost of the writes of a hashed aggregation that spills: the pages
 * cost_agg charges as written (at random_page_cost), re-priced.
 */
static Cost
hashagg_surcharge(const GxCostParams *p, PlannerInfo *root, AggPath *agg,
				  Size transition_space)
{
	Path	   *input = agg->subpath;
	double		entry_size;
	double		nbatches;
	double		depth;
	double		pages_written;
	Size		mem_limit;
	uint64		ngroups_limit;
	int			num_partitions;

	entry_size = hash_agg_entry_size(list_length(root->aggtransinfos),
									 input->pathtarget->width, transition_space);
	hash_agg_set_limits(entry_size, agg->numGroups, 0, &mem_limit, &ngroups_limit,
						&num_partitions);
	nbatches = Max(agg->numGroups * entry_size / mem_limit,
				   agg->numGroups / ngroups_limit);
	nbatches = Max(ceil(nbatches), 1.0);
	if (nbatches <= 1.0)
		return 0;
	depth = ceil(log(nbatches) / log(Max(num_partitions, 2)));
	/* cost_agg doubles the pages of a hashed spill, written and read */
	pages_written = 2.0 * depth * spill_bytes(input->rows, input->pathtarget->width) / BLCKSZ;
	return pages_written * random_page_cost *
		extra_write_factor(p->storage_random_write_us, p->storage_random_read_us);
}

/*
 * Extra cost of the writes of a sort that goes to disk: cost_sort charges
 * 2 * pages * passes accesses, 3/4 sequential; half of them are writes.
 */
static Cost
sort_surcharge(const GxCostParams *p, SortPath *sort, double limit_tuples)
{
	Path	   *input = sort->subpath;
	double		tuples = input->rows;
	double		input_bytes = spill_bytes(tuples, input->pathtarget->width);
	double		output_bytes = input_bytes;
	double		sort_mem_bytes = work_mem * 1024.0;
	double		nruns;
	double		merge_order;
	double		passes;
	double		pages_written;

	if (limit_tuples > 0 && limit_tuples < tuples)
		output_bytes = spill_bytes(limit_tuples, input->pathtarget->width);
	if (output_bytes <= sort_mem_bytes)
		return 0;
	nruns = input_bytes / sort_mem_bytes * 0.5;
	merge_order = tuplesort_merge_order((int64) sort_mem_bytes);
	passes = nruns > merge_order ? ceil(log(nruns) / log(merge_order)) : 1.0;
	pages_written = ceil(input_bytes / BLCKSZ) * passes;
	return pages_written *
		(0.75 * seq_page_cost *
		 extra_write_factor(p->storage_seq_write_us, p->storage_seq_read_us) +
		 0.25 * random_page_cost *
		 extra_write_factor(p->storage_random_write_us, p->storage_random_read_us));
}

/* The one input of a path whose cost includes its input's, or NULL. */
static Path *
single_input(Path *p)
{
	switch (nodeTag(p))
	{
		case T_AggPath:
			return ((AggPath *) p)->subpath;
		case T_SortPath:
		case T_IncrementalSortPath:
			return ((SortPath *) p)->subpath;
		case T_GroupPath:
			return ((GroupPath *) p)->subpath;
		case T_ProjectionPath:
			return ((ProjectionPath *) p)->subpath;
		case T_UpperUniquePath:
			return ((UpperUniquePath *) p)->subpath;
		case T_LimitPath:
			return ((LimitPath *) p)->subpath;
		case T_GatherPath:
			return ((GatherPath *) p)->subpath;
		case T_GatherMergePath:
			return ((GatherMergePath *) p)->subpath;
		case T_WindowAggPath:
			return ((WindowAggPath *) p)->subpath;
		default:
			return NULL;
	}
}

/*
 * Were the launches of a Gather's 'workers' charged already, to the
 * partial gpuext path ('is_own_path') that drives its input (gx_cost_scan
 * charges them for the path's own workers)?  Through the nodes between, not through a
 * join: a partial GpuScan on one side of a parallel join is costed for its
 * own workers (often fewer: cm_join_ol's GpuScan under a Parallel Hash
 * planned 1, charged nothing for launches, and ran in 16), and the other
 * side's work is not in its cost.
 */
static bool
launches_charged(GxOwnPathTest is_own_path, Path *p, int workers)
{
	for (; p != NULL; p = single_input(p))
		if (is_own_path(p))
			return p->parallel_workers >= workers;
	return false;
}

/*
 * The query's aggregates whose (first) argument is of a by-reference type:
 * a step over such a value for each row an aggregation of them takes.
 */
static int
byref_aggregates(PlannerInfo *root)
{
	ListCell   *lc;
	int			n = 0;

	foreach(lc, root->aggtransinfos)
	{
		AggTransInfo *transinfo = lfirst(lc);
		TargetEntry *arg;

		if (transinfo->args == NIL)
			continue;
		arg = linitial_node(TargetEntry, transinfo->args);
		if (!get_typbyval(exprType((Node *) arg->expr)))
			n++;
	}
	return n;
}

/*
 * Steps over by-reference values an aggregation of the query's grouping
 * (not a DISTINCT's or a set operation's) makes per input row: the
 * query's by-reference aggregates ('aggregates', byref_aggregates) and,
 * when it groups, its group keys of such a type.  A key not in the
 * query's target list is not counted (looked up without
 * get_sortgroupref_tle, which raises an error for it).
 */
static int
byref_steps(PlannerInfo *root, AggPath *agg, int aggregates)
{
	ListCell   *lc;
	int			steps = aggregates;

	if (agg->aggstrategy == AGG_PLAIN)
		return steps;
	foreach(lc, agg->groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		ListCell   *tl;

		foreach(tl, root->processed_tlist)
		{
			TargetEntry *tle = lfirst_node(TargetEntry, tl);

			if (tle->ressortgroupref == sgc->tleSortGroupRef)
			{
				if (!get_typbyval(exprType((Node *) tle->expr)))
					steps++;
				break;
			}
		}
	}
	return steps;
}

/* what the paths of one upper relation are re-costed with */
typedef struct RecostContext
{
	const GxCostParams *params;
	GxOwnPathTest is_own_path;	/* a path of gpuext's */
	PlannerInfo *root;
	RelOptInfo *rel;
	Size		transition_space;	/* of the aggregates' states (cost_agg) */
	double		limit_tuples;	/* a bounded sort's output, or -1 */
	List	   *done;			/* Recosted nodes */
	bool		changed;		/* some node got a surcharge */
	bool		grouping;		/* the query's grouping (not DISTINCT, set operations) */
	int			byref_aggs;		/* its by-reference aggregates (byref_aggregates) */
} RecostContext;

/*
 * Re-cost 'p' and the nodes under it that belong to the relation (nodes
 * of lower relations were re-costed, if at all, before these were built
 * on them).  Returns the surcharge added to p; each node is charged once.
 */
static Cost
recost_path(RecostContext *cx, Path *p, bool below_rel_node)
{
	ListCell   *lc;
	Path	   *input;
	Cost		surcharge = 0;
	Recosted   *r;
	bool		gather = IsA(p, GatherPath) || IsA(p, GatherMergePath);

	/* a lower relation's Gather is charged by the first node above it */
	if (p->parent != cx->rel && !(gather && below_rel_node))
		return 0;
	foreach(lc, cx->done)
	{
		r = lfirst(lc);
		if (r->path == p)
			return r->surcharge;
	}
	input = single_input(p);
	if (input != NULL && p->parent == cx->rel)
		surcharge += recost_path(cx, input, true);
	if (IsA(p, AggPath) && cx->grouping)
	{
		AggPath    *agg = (AggPath *) p;
		Path	   *below = agg->subpath;

		surcharge += below->rows * byref_steps(cx->root, agg, cx->byref_aggs) *
			cx->params->stock_byref_us / cx->params->cost_unit_us;
		/* a hash join whose rows it takes (projected or sorted first): its probes */
		while (IsA(below, ProjectionPath) || IsA(below, SortPath) || IsA(below, IncrementalSortPath))
			below = single_input(below);
		if (IsA(below, HashPath))
			surcharge += ((JoinPath *) below)->outerjoinpath->rows *
				cx->params->stock_join_row_us / cx->params->cost_unit_us;
	}
	/* a grouping's rows, hashed or sorted (PostgreSQL chooses between them) */
	if (IsA(p, AggPath) && ((AggPath *) p)->aggstrategy != AGG_PLAIN)
		surcharge += ((AggPath *) p)->subpath->rows * cx->params->stock_agg_row_us /
			cx->params->cost_unit_us;
	if (IsA(p, AggPath) && ((AggPath *) p)->aggstrategy == AGG_HASHED)
	{
		if (cx->params->recost_spills)
			surcharge += hashagg_surcharge(cx->params, cx->root, (AggPath *) p,
										   cx->transition_space);
		/* its groups' lookups in a table larger than the caches */
		surcharge += Max(((AggPath *) p)->numGroups - GX_STOCK_GROUPS_CACHED, 0) *
			cx->params->stock_group_us / cx->params->cost_unit_us;
	}
	else if (IsA(p, SortPath) && cx->params->recost_spills)
		surcharge += sort_surcharge(cx->params, (SortPath *) p, cx->limit_tuples);
	else if (gather)
	{
		int			workers = IsA(p, GatherPath) ? ((GatherPath *) p)->num_workers :
			((GatherMergePath *) p)->num_workers;

		if (!launches_charged(cx->is_own_path, input, workers))
			surcharge += gx_stock_launch_surcharge(cx->params, input->total_cost,
												   workers);
	}
	/* never below zero: a write factor of -1 only removes what was charged */
	surcharge = Max(surcharge, -p->startup_cost);
	if (surcharge != 0)
		cx->changed = true;
	p->startup_cost += surcharge;
	p->total_cost += surcharge;
	r = palloc(sizeof(Recosted));
	r->path = p;
	r->surcharge = surcharge;
	cx->done = lappend(cx->done, r);
	return surcharge;
}

/*
 * Re-cost the paths of upper relation 'rel' of 'stage' (and the nodes
 * under them that belong to it) before they compete, and before GpuAgg
 * compares with them: their cost fields get the surcharges, the lists'
 * order is the caller's to restore.  'is_own_path' tells gpuext's paths
 * (whose launches gx_cost_scan charged).  Returns whether any cost
 * changed.
 */
bool
gx_recost_upper_paths(const GxCostParams *p, PlannerInfo *root, UpperRelationKind stage,
					  RelOptInfo *rel, GxOwnPathTest is_own_path)
{
	RecostContext cx = {p, is_own_path, root, rel, 0, -1, NIL, false,
	stage == UPPERREL_GROUP_AGG || stage == UPPERREL_PARTIAL_GROUP_AGG, 0};
	ListCell   *lc;

	if (cx.grouping && root->parse->hasAggs)
	{
		/*
		 * The transition space of the aggregates as cost_agg saw it (the
		 * costs in GroupPathExtraData are only filled in when partial
		 * aggregation was considered).
		 */
		AggClauseCosts costs;

		MemSet(&costs, 0, sizeof(costs));
		get_agg_clause_costs(root, stage == UPPERREL_PARTIAL_GROUP_AGG ?
							 AGGSPLIT_INITIAL_SERIAL : AGGSPLIT_SIMPLE, &costs);
		cx.transition_space = costs.transitionSpace;
		cx.byref_aggs = byref_aggregates(root);
	}
	if (stage == UPPERREL_ORDERED)
		cx.limit_tuples = root->limit_tuples;
	foreach(lc, rel->pathlist)
		recost_path(&cx, lfirst(lc), false);
	foreach(lc, rel->partial_pathlist)
		recost_path(&cx, lfirst(lc), false);
	list_free_deep(cx.done);
	return cx.changed;
}
