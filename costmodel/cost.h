/*-------------------------------------------------------------------------
 * cost.h
 *		The cost model of gpuext's paths: parameters and cost functions.
 *
 * Parameters are physical (microseconds, bytes per second, nanoseconds per
 * row) so that calibration can measure them; cost_unit_us converts them
 * to PostgreSQL cost units, so GPU and CPU plans compare directly.  Every
 * function takes the parameters it costs with (GxCostParams) and the
 * planner's structures; none of them adds, removes or reorders paths.
 *
 * IDENTIFICATION
 *		costmodel/cost.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_COST_H
#define GPUEXT_COST_H

#include "access/tupdesc.h"
#include "nodes/pathnodes.h"

/*
 * What the cost functions read besides their arguments: the cost
 * parameters (cost_params.h), calibrated or configured, and the planner's
 * settings that change how gpuext's paths are costed.  The planner passes
 * the set in force; nothing else of gpuext's is read here.
 */
typedef struct GxCostParams
{
#define GX_COST_PARAM(name, boot, min, max, desc) double name;
#include "cost_params.h"
#undef GX_COST_PARAM
	bool		recost_spills;	/* re-cost PostgreSQL's spilling operators */
	bool		force_offload;	/* gpuext.force_offload: gpuext's paths win */
	int			batch_pages;	/* pages a process of a scan takes at a time */
} GxCostParams;

/* one cost parameter: its name, description, bounds and place in the set */
typedef struct GxCostParamDef
{
	const char *name;			/* without the "gpuext." prefix */
	const char *desc;
	size_t		offset;			/* of its field in GxCostParams */
	double		boot;			/* default */
	double		min;
	double		max;
} GxCostParamDef;

/* the parameters' indexes in gx_cost_param_defs, and their number */
typedef enum GxCostParamId
{
#define GX_COST_PARAM(name, boot, min, max, desc) GX_COST_PARAM_##name,
#include "cost_params.h"
#undef GX_COST_PARAM
	GX_NUM_COST_PARAMS
} GxCostParamId;

extern const GxCostParamDef gx_cost_param_defs[GX_NUM_COST_PARAMS];
extern const GxCostParamDef *gx_cost_param_find(const char *name);

/* The value of parameter 'def' in a set. */
static inline double
gx_cost_param_get(const GxCostParams *p, const GxCostParamDef *def)
{
	return *(const double *) ((const char *) p + def->offset);
}

/* The field of parameter 'def' in a set. */
static inline double *
gx_cost_param_ref(GxCostParams *p, const GxCostParamDef *def)
{
	return (double *) ((char *) p + def->offset);
}

/* groups of a hashed aggregation whose table stays in the CPU's caches
 * (some 100 bytes each: about 1 MB), not charged stock_group_us */
#define GX_STOCK_GROUPS_CACHED 10000.0

extern double gx_parallel_divisor(int workers);
extern int	gx_parallel_scan_workers(const GxCostParams *p, RelOptInfo *rel);
extern Cost gx_gpu_cost_floor(const GxCostParams *p);
extern Cost gx_stock_launch_surcharge(const GxCostParams *p, Cost process_cost, int workers);

/* inputs of a scan's costing */
typedef struct GxScanCostInput
{
	double		pages;			/* heap pages read */
	double		allvisfrac;		/* fraction of them all-visible */
	double		tuples;			/* tuples in them */
	double		rows_out;		/* rows returned to the executor */
	double		program_len;	/* device instructions per row */
	double		cached_frac;	/* fraction of the pages a column cache
								 * holds (gx_colcache_cost_input) */
	double		cached_row_bytes;	/* bytes a row reads from it */
	Cost		host_qual_per_row;	/* host quals and projection, per returned row */
	int			parallel_workers;	/* 0 for a serial path */
	bool		gpu;			/* costed for the GPU (else the CPU engine) */
} GxScanCostInput;

extern void gx_cost_scan(const GxCostParams *p, const GxScanCostInput *in,
						 Cost *startup, Cost *total);
extern int	gx_choose_scan_workers(const GxCostParams *p, const GxScanCostInput *in,
								   int max_workers);
extern Cost gx_cost_agg(const GxCostParams *p, double rows, double groups,
						uint32 entry_size, bool gpu);

/* inputs of a hash join's costing (GpuJoin), beyond its outer scan */
typedef struct GxJoinCostInput
{
	double		inner_rows;		/* rows of every inner relation */
	double		table_bytes;	/* bytes of the hash tables */
	double		outer_rows;		/* outer rows that probe */
	double		depths;			/* inner relations probed by each row */
	double		rows_out;		/* joined rows formed on the host */
	int			parallel_workers;	/* 0 for a serial path */
	bool		gpu;
} GxJoinCostInput;

extern void gx_cost_join(const GxCostParams *p, const GxJoinCostInput *in,
						 Cost *startup, Cost *run);

/*
 * PostgreSQL's own paths, costed again with what calibration measured
 * (indexread.c, deform.c, output.c, spill.c).  These return a path's new
 * cost or the change to it, or set the cost fields of the paths they are
 * given as PostgreSQL's cost functions do; the planner applies the
 * changes and keeps its path lists in order.
 */
extern void gx_recost_index_paths(const GxCostParams *p, PlannerInfo *root,
								  RelOptInfo *rel);
extern bool gx_partial_seqscan_discount(const GxCostParams *p, RelOptInfo *rel,
										Path *path, Cost *discount);
extern Cost gx_deform_charge(const GxCostParams *p, RelOptInfo *rel, TupleDesc desc);
extern bool gx_rows_go_to_client(PlannerInfo *root, RelOptInfo *rel);
extern bool gx_output_charge(const GxCostParams *p, PlannerInfo *root, RelOptInfo *rel,
							 Path *path, Cost *change);
extern Cost gx_partial_sort_cost(PlannerInfo *root, Path *path);

/* Is a path one of gpuext's own (costed by gx_cost_scan)? */
typedef bool (*GxOwnPathTest) (Path *path);

extern bool gx_recost_upper_paths(const GxCostParams *p, PlannerInfo *root,
								  UpperRelationKind stage, RelOptInfo *rel,
								  GxOwnPathTest is_own_path);

/*
 * gpuext.force_offload: a gpuext path made cheaper than anything
 * PostgreSQL can offer, keeping the order among gpuext's own paths.
 */
static inline void
gx_cost_forced(Path *path)
{
	path->startup_cost *= 1e-6;
	path->total_cost *= 1e-6;
}

#endif							/* GPUEXT_COST_H */
