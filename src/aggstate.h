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

extern Datum gx_finish_variance(Oid aggfnoid, int64 n, Datum sum, Datum sum_squares,
								int max_scale, bool *isnull);

#endif							/* GPUEXT_AGGSTATE_H */
