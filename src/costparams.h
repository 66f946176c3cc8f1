/*-------------------------------------------------------------------------
 * costparams.h
 *		The cost model's parameters in force in this backend: the
 *		gpuext.* cost settings and the calibrated values.
 *
 * IDENTIFICATION
 *		src/costparams.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_COSTPARAMS_H
#define GPUEXT_COSTPARAMS_H

#include "cost.h"

extern void gx_cost_define_gucs(void);
extern void gx_cost_refresh(void);
extern const GxCostParams *gx_cost_params(void);
extern void gx_cost_calibration_changed(void);
extern Oid	gx_extension_namespace(void);

#endif							/* GPUEXT_COSTPARAMS_H */
