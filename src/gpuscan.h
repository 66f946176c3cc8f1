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
 * A list of quals (RestrictInfos or expressions) in the order PostgreSQL's
 * plan evaluates them (createplan.c's order_qual_clauses): a new list.
 */
extern List *gx_order_qual_clauses(PlannerInfo *root, List *clauses);

/*
 * Split a relation's restriction clauses (RestrictInfos) into those the
 * device can run and the rest, each in PostgreSQL's order of evaluation.
 * The device quals come first when a node runs: a qual after a host qual
 * that could fail is left on the host.  Returns false when the relation
 * cannot be scanned by gpuext at all.
 */
extern bool gx_split_scan_quals(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte,
								List *clauses, List **device_quals, List **host_quals);

#endif							/* GPUEXT_GPUSCAN_H */
