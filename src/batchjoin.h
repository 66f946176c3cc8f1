/*-------------------------------------------------------------------------
 * batchjoin.h
 *		Pieces shared by the batched index nested-loop join custom scans
 *		(GistJoin in gxgist_join.c, PtreeBatchJoin in ptree_join.c).
 *
 * Both nodes read a batch of outer rows, probe an index of the inner
 * table with the outer keys, fetch the visible inner rows and return outer
 * + inner columns in a scan tuple (custom_scan_tlist).  What is common:
 * the plain-column check of the planner, the CustomPath and CustomScan
 * skeletons, the scan tuple and its source map, its assembly at run time
 * and the inner row fetch.  The index probes, eligibility rules, costs
 * and EXPLAIN stay with each node.
 *
 * IDENTIFICATION
 *		src/batchjoin.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_BATCHJOIN_H
#define GPUEXT_BATCHJOIN_H

#include "access/tableam.h"
#include "executor/tuptable.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"

/* Where each column of the scan tuple comes from */
typedef struct BatchJoinColumns
{
	int			natts;			/* columns of the scan tuple */
	int		   *from_inner;		/* per column: 1 = inner heap row, 0 = outer row */
	int		   *attno;			/* per column: attribute number in its source */
	int			inner_maxatt;	/* highest inner attribute needed */
} BatchJoinColumns;

extern bool batchjoin_vars_ok(Node *node);
extern CustomPath *batchjoin_make_path(RelOptInfo *joinrel, Path *outer_path,
									   const CustomPathMethods *methods);
extern double batchjoin_path_rows(RelOptInfo *joinrel, Path *outer_path);
extern List *batchjoin_scan_tlist(Node *needed, Index inner_relid, Plan *outer_plan,
								  const char *node_name, List **from_inner, List **attnos);
extern CustomScan *batchjoin_make_plan(RelOptInfo *rel, CustomPath *best_path,
									   List *tlist, List *quals, Expr *outer_key,
									   List *custom_plans, List *scan_tlist,
									   const CustomScanMethods *methods);
extern void batchjoin_columns_init(BatchJoinColumns *cols, List *from_inner, List *attnos);
extern TupleTableSlot *batchjoin_fill(const BatchJoinColumns *cols, TupleTableSlot *scan,
									  TupleTableSlot *outer, TupleTableSlot *inner);
extern bool batchjoin_fetch_inner(IndexFetchTableData *fetch, ItemPointer tid,
								  Snapshot snapshot, TupleTableSlot *slot);

#endif							/* GPUEXT_BATCHJOIN_H */
