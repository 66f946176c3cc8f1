/*-------------------------------------------------------------------------
 * cost.c
 *		Cost functions of gpuext's paths.
 *
 * A GPU scan overlaps two pipelines: the host pins pages and computes
 * visibility (per page), while the device reads the pages over the link
 * and evaluates the program (per byte and per row).  The slower of the
 * two sets the pace; rows returned to the executor add host work after
 * that.  A fixed setup cost keeps small scans on the CPU: what an
 * offloaded query of a tiny table costs end to end beyond its stock plan
 * (gpuext_calibrate() measures it on each engine: gpu_setup_us,
 * cpu_engine_setup_us; a GpuAgg's beyond its scan: gpuagg_setup_us,
 * cpu_engine_agg_setup_us), charged as the startup of every gpuext
 * operator.  Parallel workers divide the host side, not the device.
 *
 * IDENTIFICATION
 *		costmodel/cost.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"

#include "cost.h"

/*
 * PostgreSQL's divisor of a partial plan's per-row cost: its workers, plus
 * the part of a worker's work the leader does (costsize.c's rule).
 */
double
gx_parallel_divisor(int workers)
{
	double		divisor = workers;

	if (parallel_leader_participation)
	{
		double		leader = 1.0 - 0.3 * workers;

		if (leader > 0)
			divisor += leader;
	}
	return divisor;
}

/*
 * Microseconds of host work per heap page of a gpuext scan (pin, lock),
 * with the visibility checks of the share that is not all-visible.
 */
static double
host_page_cost_us(const GxCostParams *p, double allvisfrac)
{
	return p->host_page_us + (1.0 - allvisfrac) * p->host_visibility_us;
}

/*
 * The most workers a parallel gpuext scan of 'rel' (GpuScan, GpuJoin,
 * GpuAgg) can use: PostgreSQL's number for its size, but no more than the
 * scan's batches, less the leader's.  Each process takes a batch of up to
 * p->batch_pages pages at a time, so a table of few batches is done by
 * the first processes to start (the leader first, then workers as they
 * are launched): the others find no page left.  Its rows then come out of
 * those few, with whatever the plan does to them above the scan (a Sort
 * under a Gather Merge sorts in each process): costed for all the
 * workers, a parallel GpuScan of a small table looked several times
 * cheaper per process than it ran (on the H100 a sort of 16 % of
 * virginian under 16 workers, session 7).  At least one worker where
 * PostgreSQL would plan any.  How many of them pay for their start is the
 * path's own choice (gx_choose_scan_workers).  (Counted in rounds of the
 * pipeline's three batches a process keeps in flight, as until session
 * 12, this allowed 4 workers for a GpuScan of 400 MB, which ran 22 ms
 * under 4 workers and 16.4 to 17.4 under 6 to 16 on the H100.)
 */
int
gx_parallel_scan_workers(const GxCostParams *p, RelOptInfo *rel)
{
	int			workers = compute_parallel_worker(rel, rel->pages, -1,
												  max_parallel_workers_per_gather);
	double		batch = (double) p->batch_pages;
	double		busy = ceil(rel->pages / batch) - (parallel_leader_participation ? 1 : 0);

	if (workers <= 0)
		return 0;
	return (int) Max(1, Min(workers, busy));
}

/* Microseconds to cost units. */
static Cost
us_to_cost(const GxCostParams *p, double us)
{
	return us / p->cost_unit_us;
}

/* The fixed setup of a gpuext operator on the GPU or on the CPU engine. */
static Cost
engine_setup_cost(const GxCostParams *p, bool gpu)
{
	return us_to_cost(p, gpu ? p->gpu_setup_us : p->cpu_engine_setup_us);
}

/*
 * The least startup cost of any gpuext path planned for the GPU: its fixed
 * setup (gx_cost_scan charges it to every GPU scan, which every GpuScan,
 * GpuJoin and GpuAgg path starts with).  Planner hooks compare it with the
 * stock paths already made (gx_stock_path_beats) to return before any
 * program or catalog work where nothing of theirs could win.
 */
Cost
gx_gpu_cost_floor(const GxCostParams *p)
{
	return engine_setup_cost(p, true);
}

/*
 * The pages of a scan that hold at least one of the rows it returns, the
 * rows spread at random over them.
 */
static double
pages_with_rows(const GxScanCostInput *in)
{
	double		per_page;
	double		sel;

	if (in->pages < 1 || in->tuples < 1 || in->rows_out <= 0)
		return 0;
	per_page = Max(in->tuples / in->pages, 1);
	sel = Min(in->rows_out / in->tuples, 1);
	return Min(in->pages * (1.0 - pow(1.0 - sel, per_page)), in->rows_out);
}

/*
 * Microseconds until the leader and 'workers' workers have done 'work_us'
 * of host work that any of them can take a share of, when worker i
 * (1..workers) starts gpuext.parallel_start_us + i x
 * gpuext.parallel_worker_us after the leader, and the query cannot end
 * before the last worker has started (and exited: the leader waits for
 * it).  With both parameters 0 it is work_us / (workers + 1).  On the
 * H100 (session 12) a count of 1000 rows took 12 ms longer under 8
 * workers than serial, yet a GpuScan of scan_t with host work of about
 * 54 ms ran in 22 ms under 4 workers and 16.4 to 17.4 under 6 to 16:
 * the workers' starts overlap, and a late worker still takes its share.
 */
static double
parallel_span_us(const GxCostParams *p, double work_us, int workers, bool launches)
{
	double		start = launches ? p->parallel_start_us : 0;
	double		step = launches ? p->parallel_worker_us : 0;
	int			leader = parallel_leader_participation ? 1 : 0;
	double		started = 0;	/* sum of the start times of those working */
	double		span = leader ? work_us : DBL_MAX;

	if (workers <= 0)
		return work_us;
	/* with k workers at work, the time t solves
	 * leader t + sum over i <= k of (t - start - i step) = work */
	for (int k = 1; k <= workers; k++)
	{
		double		t_k = start + k * step;

		if (span <= t_k)
			break;
		started += t_k;
		span = (work_us + started) / (k + leader);
	}
	return Max(span, start + workers * step);
}

/*
 * Cost of what a parallel run that launches its workers ('launched_us')
 * takes beyond the same run with every worker there from the start
 * ('run_us'), less the parallel_setup_cost that the Gather charges once
 * whatever their number; 0 when that covers it.
 */
static Cost
launch_extra_cost(const GxCostParams *p, double launched_us, double run_us)
{
	return us_to_cost(p, Max(launched_us - run_us - parallel_setup_cost * p->cost_unit_us, 0));
}

/*
 * What the launches of a stock Gather's workers add to it beyond the
 * parallel_setup_cost it is charged once whatever their number, for a
 * partial input that PostgreSQL costs at 'process_cost' a process (the work
 * divided by gx_parallel_divisor): that work undivided, shared by the
 * processes as they start (parallel_span_us), against shared from the
 * query's start.  The same launches gx_cost_scan charges gpuext's partial
 * paths, so that a stock parallel plan and a gpuext one compete on equal
 * terms (cm_join_ol: a stock parallel hash join under 16 workers, which
 * PostgreSQL put at 8.5 ms, ran 16 to 19 on the H100, session 12).  None
 * under gpuext.force_offload, like gx_cost_scan's.
 */
Cost
gx_stock_launch_surcharge(const GxCostParams *p, Cost process_cost, int workers)
{
	double		work_us;

	if (workers <= 0 || p->force_offload || process_cost <= 0)
		return 0;
	work_us = process_cost * gx_parallel_divisor(workers) * p->cost_unit_us;
	return launch_extra_cost(p, parallel_span_us(p, work_us, workers, true),
							 parallel_span_us(p, work_us, workers, false));
}

/*
 * Share of the shorter of the host's page work and the device's work
 * that a parallel scan does not overlap.  One process keeps its batches
 * in flight and hides the device's reading behind its page work (on the
 * H100 a serial GpuScan of scan_t, 54 ms of host work and 11 of the
 * link's, ran in 54 ms); several processes queue their batches at the
 * one device, each waiting for its own.  The same scan ran 28.4, 22.0,
 * 17.4, 16.9 and 17.1 ms under 2, 4, 6, 8 and 16 workers (session 12),
 * which the launches (parallel_span_us) with half the shorter exposed
 * fit within 15 %, and which the longer alone put at 11 ms from 4
 * workers on: a GpuAgg of scan_t at scale 1 then planned 3 workers and
 * ran 238-282 ms, against 107-129 with more.  (Charged to serial scans
 * too, it made TPC-H Q1 and Q6 at 0.1 look dearer serial than under 8
 * workers, which took 7.4 ms against 4.3: session 12.)
 */
#define PARALLEL_EXPOSED_SHARE 0.5

/*
 * Microseconds a scan's processes take: the host's page work overlaps the
 * device's ('device_us', which the processes do not divide; in parallel
 * only in part, PARALLEL_EXPOSED_SHARE), the work on the rows it returns
 * comes after; the processes share the host's work (parallel_span_us,
 * with or without the workers' launches).
 */
static double
scan_run_us(const GxCostParams *p, double host_pages_us, double host_rows_us,
			double device_us, int workers, bool launches)
{
	double		host_us = host_pages_us + host_rows_us;
	double		span;
	double		pages_span;
	double		run_us;

	if (host_us <= 0)
		return device_us;
	span = parallel_span_us(p, host_us, workers, launches);
	pages_span = span * host_pages_us / host_us;
	run_us = Max(pages_span, device_us) + span * host_rows_us / host_us;
	if (workers > 0)
		run_us += PARALLEL_EXPOSED_SHARE * Min(pages_span, device_us);
	return run_us;
}

/*
 * Cost of a GPU scan (or the same scan on the CPU engine): startup is the
 * engine's setup; the run overlaps host page work with device reading,
 * then adds the work on returned rows: per row, and per page holding any
 * (the host reads each such page back: measure_host_rows, calibrate.c).
 *
 * Pages a column cache holds (cached_frac of them) cost neither host page
 * work nor the link: the device reads the columns of their rows from its
 * copy of the cache at device memory speed (the CPU engine in place).  A
 * cached page holding a returned row is pinned then (host page work);
 * cached pages are all-visible, so the heap pages take what is left of
 * allvisfrac.
 */
void
gx_cost_scan(const GxCostParams *p, const GxScanCostInput *in, Cost *startup, Cost *total)
{
	int			workers = Max(in->parallel_workers, 0);
	double		cached_frac = Min(Max(in->cached_frac, 0.0), 1.0);
	double		cached = in->pages * cached_frac;
	double		heap = in->pages - cached;
	double		heap_allvis = cached_frac < 1.0 ?
		Max(0.0, (in->allvisfrac - cached_frac) / (1.0 - cached_frac)) : 1.0;
	double		page_us = host_page_cost_us(p, heap_allvis);
	double		row_pages = pages_with_rows(in);
	double		pinned = row_pages * cached_frac;
	double		host_pages_us = heap * page_us + pinned * p->host_page_us;
	double		host_rows_us = in->rows_out * p->host_tuple_us + row_pages * p->host_row_page_us;
	double		device_us = 0;
	double		fixed_us = 0;
	double		run_us;
	double		launched_us;

	if (in->gpu)
	{
		double		read_us = heap * BLCKSZ / (p->link_read_gbps * 1e3) +
			in->tuples * cached_frac * in->cached_row_bytes / (p->device_read_gbps * 1e3);

		device_us = read_us + in->tuples * Max(in->program_len, 1) * p->device_row_ns / 1e3;
		fixed_us = ceil(in->pages / 4096.0) * p->gpu_batch_us;
	}
	else
	{
		/* the CPU engine runs the program in the processes themselves */
		host_pages_us += in->tuples * Max(in->program_len, 1) * p->cpu_engine_row_ns / 1e3;
	}
	*startup = engine_setup_cost(p, in->gpu);
	run_us = scan_run_us(p, host_pages_us, host_rows_us, device_us, workers, false) + fixed_us;
	if (workers > 0 && !p->force_offload)
	{
		/*
		 * What the workers' launches add, beyond the parallel_setup_cost
		 * that the Gather above charges once whatever their number.  On
		 * the H100 (session 10) TPC-H Q6 at 0.1 ran 7.6 ms under a Gather
		 * of 7 workers against 4.3 ms serial, where each process ran 2.4
		 * ms and parallel_setup_cost stood for 3.0.  Charged before the
		 * first row; not under gpuext.force_offload, whose plans (the
		 * tests' parallel ones among them) stay as they were on any
		 * machine.
		 */
		launched_us = scan_run_us(p, host_pages_us, host_rows_us, device_us, workers, true) + fixed_us;
		*startup += launch_extra_cost(p, launched_us, run_us);
	}
	*total = *startup + us_to_cost(p, run_us) +
		in->rows_out * (cpu_tuple_cost + in->host_qual_per_row) / Max(workers, 1);
}

/*
 * The workers for a partial path of the scan 'in' describes, of at most
 * 'max_workers': the number whose Gather would end first (the path's
 * cost plus parallel_setup_cost, the same for all), the fewest of those
 * within 1 % (of the cost beyond the engine's setup, which all share: on
 * a small table it would hide the work the workers divide).  All of them
 * under gpuext.force_offload, whose plans stay as they were.
 */
int
gx_choose_scan_workers(const GxCostParams *p, const GxScanCostInput *in, int max_workers)
{
	GxScanCostInput try = *in;
	Cost		setup = engine_setup_cost(p, in->gpu);
	int			best = max_workers;
	Cost		best_cost = -1;

	if (p->force_offload || max_workers <= 1)
		return max_workers;
	for (int w = 1; w <= max_workers; w++)
	{
		Cost		startup,
					total;

		try.parallel_workers = w;
		gx_cost_scan(p, &try, &startup, &total);
		total -= setup;
		if (best_cost < 0 || total < best_cost * 0.99)
		{
			best = w;
			best_cost = total;
		}
	}
	return best;
}

/*
 * Cost of aggregating 'rows' into 'groups' on the device (or the CPU
 * engine), beyond the scan: updating the group table, copying the groups
 * back, and finishing them on the host.  Many groups make updates
 * scattered: the per-row cost grows with the table's size.
 */
Cost
gx_cost_agg(const GxCostParams *p, double rows, double groups, uint32 entry_size, bool gpu)
{
	double		us;
	double		scatter = groups > 100000 ? 4.0 : 1.0;

	if (gpu)
		us = p->gpuagg_setup_us	/* fixed: task, round trips, planning */
			+ rows * p->device_atomic_ns * scatter / 1e3
			+ groups * 4.0 * entry_size / (p->link_write_gbps * 1e3);
	else
		us = p->cpu_engine_agg_setup_us + rows * p->cpu_engine_row_ns * 4 / 1e3;
	us += groups * p->host_group_us;
	return us / p->cost_unit_us;
}

/*
 * Cost of a hash join's own work beyond the outer scan (GpuJoin): building
 * the inner hash tables (host work per inner row to store and encode it,
 * then the upload and build on the device, or the build on the CPU
 * engine) is startup; probing costs per outer row and depth (a scattered
 * read of the table per probe on the device, about eight instructions on
 * the CPU engine); every joined row is then formed on the host.  In a
 * parallel plan the leader builds the tables once, before its workers
 * start, and they all probe that copy (src/gpujoin.c, the fused GpuAgg
 * too): the build is counted once, as startup, not divided among the
 * workers, and not multiplied by them (each participant used to build its
 * own, which the model never counted); probing is shared.
 */
void
gx_cost_join(const GxCostParams *p, const GxJoinCostInput *in, Cost *startup, Cost *run)
{
	double		workers = in->parallel_workers > 0 ? in->parallel_workers : 1;
	/* each inner row: copied, its keys evaluated by PostgreSQL and encoded */
	double		build_us = in->inner_rows * 4.0 * p->host_tuple_us;
	double		probe_us;

	if (in->gpu)
	{
		build_us += p->gpu_setup_us + in->table_bytes / (p->link_copy_gbps * 1e3) +
			in->inner_rows * p->device_gather_ns / 1e3;
		probe_us = in->outer_rows * in->depths * 4.0 * p->device_gather_ns / 1e3;
	}
	else
	{
		build_us += p->cpu_engine_setup_us + in->inner_rows * 8.0 * p->cpu_engine_row_ns / 1e3;
		probe_us = in->outer_rows * in->depths * 8.0 * p->cpu_engine_row_ns / 1e3 / workers;
	}
	*startup = us_to_cost(p, build_us);
	*run = us_to_cost(p, probe_us + in->rows_out * p->host_tuple_us / workers);
}
