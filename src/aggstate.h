/*-------------------------------------------------------------------------
 * aggstate.h
 *		Finish aggregates from device accumulators with PostgreSQL's own
 *		final functions.
 *
 * IDENTIFICATION
 *		src/aggstate.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_AGGSTATE_H
#define GPUEXT_AGGSTATE_H

typedef struct GxStateFinisher GxStateFinisher;

extern GxStateFinisher *gx_variance_finisher(Oid aggfnoid);
extern Datum gx_finish_variance(GxStateFinisher *f, int64 n, Datum sum, Datum sum_squares,
								int max_scale, bool *isnull);
extern Datum gx_finish_float_variance(GxStateFinisher *f, double n, double sum,
									  double deviations, bool *isnull);

#endif							/* GPUEXT_AGGSTATE_H */
