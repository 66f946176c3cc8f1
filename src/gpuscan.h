/*-------------------------------------------------------------------------
 * gpuscan.h
 *		GpuScan: sequential scans whose quals run on the device.
 *
 * IDENTIFICATION
 *		src/gpuscan.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_GPUSCAN_H
#define GPUEXT_GPUSCAN_H

#include "nodes/pathnodes.h"

extern void gx_gpuscan_init(void);
extern bool gx_is_gpuext_path(Path *path);

/*
 * Split a relation's restriction clauses (RestrictInfos) into those the
 * device can run and the rest, in their original order.  Returns false
 * when the relation cannot be scanned by gpuext at all.
 */
extern bool gx_split_scan_quals(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte,
								List *clauses, List **device_quals, List **host_quals);

/*
 * Restriction clauses (RestrictInfos) in the order PostgreSQL's executor
 * evaluates a scan's quals: by security level (leakproof cheap clauses
 * first), then cost.  A new list.
 */
extern List *gx_order_quals(PlannerInfo *root, List *clauses);

#endif							/* GPUEXT_GPUSCAN_H */
