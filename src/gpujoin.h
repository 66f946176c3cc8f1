/*-------------------------------------------------------------------------
 * gpujoin.h
 *		GpuJoin: hash joins of a scanned heap relation with inner
 *		relations, probed on the device; and the same join fused into
 *		GpuAgg.
 *
 * IDENTIFICATION
 *		src/gpujoin.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_GPUJOIN_H
#define GPUEXT_GPUJOIN_H

#include "commands/explain.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "utils/relcache.h"

#include "gx_join.h"

extern void gx_gpujoin_init(void);

/* GpuAgg over GpuJoin (see gpujoin.c) */
typedef struct GxFusedJoin GxFusedJoin;

extern Path *gx_gpujoin_fusable(PlannerInfo *root, RelOptInfo *joinrel, bool gpu,
								Index *fact_relid, List **device_quals, List **inner_paths,
								Cost *join_cost);
extern int	gx_gpujoin_inner_key_class(Path *joinpath, Expr *key);
extern List *gx_gpujoin_fused_plan(Path *joinpath, List *inner_plans, List *inner_keys);
extern GxFusedJoin *gx_fused_join_begin(List *priv, List *inner_plans, EState *estate,
										int eflags, PlanState *parent, Index scanrelid,
										List **children);
extern List *gx_fused_join_outer_keys(GxFusedJoin *fj);
extern void gx_fused_join_spec(GxFusedJoin *fj, const int *regs, const int *payload_regs,
							   GxJoinSpec *spec);
extern int	gx_fused_join_payload_type(GxFusedJoin *fj, int p);
extern uint32 gx_fused_join_upload(GxFusedJoin *fj, uint32 near_task, const char **why);
extern bool gx_gpujoin_kernels_enabled(void);
extern bool gx_fused_join_build(GxFusedJoin *fj, Relation outer, bool for_device,
								uint32 *table_id, const char **why);
extern void gx_fused_join_reset(GxFusedJoin *fj);
extern void gx_fused_join_end(GxFusedJoin *fj);
extern void gx_fused_join_explain(GxFusedJoin *fj, List *context, ExplainState *es);

#endif							/* GPUEXT_GPUJOIN_H */
