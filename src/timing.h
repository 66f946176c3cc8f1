/*-------------------------------------------------------------------------
 * timing.h
 *		Elapsed wall-clock time, for the executor's EXPLAIN figures and the
 *		calibration's measurements.
 *
 * IDENTIFICATION
 *		src/timing.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_TIMING_H
#define GPUEXT_TIMING_H

#include "portability/instr_time.h"

/* Microseconds since 'start' (taken with INSTR_TIME_SET_CURRENT). */
static inline double
gx_elapsed_us(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MICROSEC(now);
}

#endif							/* GPUEXT_TIMING_H */
