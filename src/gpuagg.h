/*-------------------------------------------------------------------------
 * gpuagg.h
 *		GpuAgg: GROUP BY aggregation fused with the scan, on the device.
 *
 * IDENTIFICATION
 *		src/gpuagg.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_GPUAGG_H
#define GPUEXT_GPUAGG_H

extern void gx_gpuagg_init(void);

#endif							/* GPUEXT_GPUAGG_H */
