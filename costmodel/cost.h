/*-------------------------------------------------------------------------
 * cost.h
 *		The cost model of gpuext's paths: parameters and cost functions.
 *
 * Parameters are physical (microseconds, bytes per second, nanoseconds per
 * row) so that calibration can measure them; gpuext.cost_unit_us converts
 * them to PostgreSQL cost units, so GPU and CPU plans compare directly.
 *
 * IDENTIFICATION
 *		costmodel/cost.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_COST_H
#define GPUEXT_COST_H

#include "nodes/pathnodes.h"

/* parameters (GUCs gpuext.*) */
extern double gx_cost_unit_us;			/* microseconds per cost unit */
extern double gx_gpu_setup_us;			/* fixed cost of a GPU operator, end to end */
extern double gx_gpu_batch_us;			/* per batch: request, launch, sync */
extern double gx_host_page_us;			/* host work per all-visible page: pin, lock */
extern double gx_host_visibility_us;	/* more per page not all-visible: tuple checks */
extern double gx_host_tuple_us;			/* host work per returned row */
extern double gx_host_row_page_us;		/* more per page holding returned rows */
extern double gx_client_row_us;			/* sending a result row to the client */
extern double gx_link_read_gbps;		/* device reads of host memory (zero-copy) */
extern double gx_device_row_ns;			/* device work per row and instruction */
extern double gx_cpu_engine_row_ns;		/* CPU engine work per row and instruction */
extern double gx_cpu_engine_setup_us;	/* fixed cost of a CPU engine operator */
extern double gx_cpu_engine_agg_setup_us;	/* a CPU engine GpuAgg's, beyond its scan */
extern double gx_gpuagg_setup_us;		/* a GPU GpuAgg's, beyond its scan */
extern double gx_device_atomic_ns;		/* device work per aggregated row (atomics) */
extern double gx_link_write_gbps;		/* device to host copies */
extern double gx_host_group_us;			/* host work to finish one group */
extern double gx_kernel_launch_us;		/* launch and completion of a kernel */
extern double gx_link_latency_us;		/* a small pinned copy */
extern double gx_link_copy_gbps;		/* pinned copies to the device */
extern double gx_device_read_gbps;		/* coalesced reads of device memory */
extern double gx_device_gather_ns;		/* a random device read (amortised) */
extern double gx_storage_seq_read_us;	/* a page read sequentially from storage */
extern double gx_storage_random_read_us;
extern double gx_storage_seq_write_us;	/* a page written (and synced) sequentially */
extern double gx_storage_random_write_us;

extern double gx_index_cost_scale;		/* page costs of stock index paths (indexread.c) */
extern double gx_parallel_page_share;	/* page costs of stock partial seq scans (indexread.c) */
extern double gx_parallel_worker_us;	/* between two workers' starts (gx_cost_scan) */
extern double gx_parallel_start_us;	/* until the first worker works, and its exit */
extern double gx_stock_group_us;		/* a stock hashed aggregation's group, beyond its estimate */
extern double gx_stock_agg_row_us;	/* a stock hashed aggregation's input row, beyond its estimate */
extern double gx_stock_byref_us;	/* a stock aggregate's or group key's by-reference value, a row */
extern double gx_stock_join_row_us;	/* a stock hash join's outer row, beyond its estimate */
extern double gx_stock_deform_us;	/* a stock scan's row, a column stepped over past a variable-width one */
/* groups of a hashed aggregation whose table stays in the CPU's caches
 * (some 100 bytes each: about 1 MB), not charged gx_stock_group_us */
#define GX_STOCK_GROUPS_CACHED 10000.0
extern bool gx_recost_spills;			/* re-cost PostgreSQL's spilling operators */

extern void gx_cost_define_gucs(void);
extern void gx_spill_cost_init(void);
extern void gx_index_cost_init(void);
extern void gx_output_cost_init(void);
extern void gx_deform_recost_paths(RelOptInfo *rel, RangeTblEntry *rte);
extern bool gx_output_recost(PlannerInfo *root, RelOptInfo *rel, Path *path);
extern void gx_add_partial_path(PlannerInfo *root, RelOptInfo *rel, Path *path);
extern void gx_cost_refresh(void);
extern int	gx_compare_total_cost(const ListCell *a, const ListCell *b);
extern double gx_parallel_divisor(int workers);
extern int	gx_parallel_scan_workers(RelOptInfo *rel);
extern Cost gx_gpu_cost_floor(void);
extern bool gx_stock_path_beats(List *paths, Cost floor, double rows, bool parallel_safe);
extern Cost gx_stock_launch_surcharge(Cost process_cost, int workers);

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

extern void gx_cost_scan(const GxScanCostInput *in, Cost *startup, Cost *total);
extern int	gx_choose_scan_workers(const GxScanCostInput *in, int max_workers);
extern Cost gx_cost_agg(double rows, double groups, uint32 entry_size, bool gpu);

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

extern void gx_cost_join(const GxJoinCostInput *in, Cost *startup, Cost *run);

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
