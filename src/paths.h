/*-------------------------------------------------------------------------
 * paths.h
 *		The planner's work on PostgreSQL's paths with the cost model's
 *		numbers: re-costing them before gpuext's paths compete, keeping
 *		the path lists in order, and asking whether a path can win.
 *
 * IDENTIFICATION
 *		src/paths.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_PATHS_H
#define GPUEXT_PATHS_H

#include "nodes/pathnodes.h"

#include "cost.h"

extern void gx_paths_init(void);
extern bool gx_output_recost(const GxCostParams *p, PlannerInfo *root, RelOptInfo *rel,
							 Path *path);
extern void gx_add_partial_path(PlannerInfo *root, RelOptInfo *rel, Path *path);
extern bool gx_stock_path_beats(List *paths, Cost floor, double rows, bool parallel_safe);

#endif							/* GPUEXT_PATHS_H */
