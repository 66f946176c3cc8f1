/*-------------------------------------------------------------------------
 * codegen.h
 *		Compiling PostgreSQL expressions into device programs.
 *
 * IDENTIFICATION
 *		src/codegen.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_CODEGEN_H
#define GPUEXT_CODEGEN_H

#include "nodes/execnodes.h"
#include "nodes/primnodes.h"

#include "gx_program.h"

/*
 * Can 'expr' (a boolean qual over relation 'varno' with row type
 * 'tupdesc') run on the device?  Used by the planner; Params count as
 * supported when their type is.  *why gets the reason when not.
 */
extern bool gx_qual_is_device_executable(Expr *expr, Index varno, TupleDesc tupdesc,
										 const char **why);

/*
 * Can this qual neither raise an error nor have a side effect, so that
 * evaluating it after quals PostgreSQL evaluates later (or not at all for
 * rows they reject) changes nothing a query shows?
 */
extern bool gx_qual_is_deferrable(Expr *qual);

/*
 * Build the device program of a list of quals (implicit AND, in
 * PostgreSQL's order) at executor start: Params are evaluated in 'econtext'
 * through 'parent'.  A qual that cannot be built now (a Param value the
 * device cannot hold) goes to *host_quals instead, and so does every qual
 * after it unless it is deferrable; *device_quals gets the ones in the
 * program (with none, the program passes every visible row).
 */
extern GxProgram *gx_build_qual_program(List *quals, Index varno, TupleDesc tupdesc,
										PlanState *parent, ExprContext *econtext,
										List **device_quals, List **host_quals);

/*
 * Quals, then expressions whose values the program leaves in registers
 * (group keys, aggregate inputs): all of them must run on the device.
 * out_types[i] (and out_regs[i]) describe expression i.
 */
extern bool gx_exprs_are_device_executable(List *quals, List *exprs, Index varno,
										   TupleDesc tupdesc, int *out_types,
										   const char **why);
extern GxProgram *gx_build_projection_program(List *quals, List *exprs, Index varno,
											  TupleDesc tupdesc, PlanState *parent,
											  ExprContext *econtext, int *out_regs,
											  int *out_types, const char **why);

/* the device value class (GX_TYPE_*) of a type, or 0 */
extern int	gx_type_class(Oid typid);

/* a one-line summary of a program, for EXPLAIN VERBOSE */
extern char *gx_program_summary(const GxProgram *prog);

#endif							/* GPUEXT_CODEGEN_H */
