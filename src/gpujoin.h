/*-------------------------------------------------------------------------
 * gpujoin.h
 *		GpuJoin: hash joins of a scanned heap relation with inner
 *		relations, probed on the device.
 *
 * IDENTIFICATION
 *		src/gpujoin.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_GPUJOIN_H
#define GPUEXT_GPUJOIN_H

extern void gx_gpujoin_init(void);

#endif							/* GPUEXT_GPUJOIN_H */
