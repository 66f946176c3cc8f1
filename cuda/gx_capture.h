/*-------------------------------------------------------------------------
 * gx_capture.h
 *		The file format of captured device requests: what the GPU service
 *		writes with gpuext.debug_capture_dir set (src/capture.c), and what
 *		the replay program runs again under compute-sanitizer
 *		(test/gpu/replay.cu).
 *
 * A file is a GxCaptureFileHeader followed by records.  A record is a
 * GxCaptureRecord, then batch_len bytes of the batch as it was launched,
 * then npages times a uint32 buffer index followed by that page's bytes
 * (GX_BLCKSZ).  Native byte order: a capture is replayed on the machine
 * that made it.
 *
 * IDENTIFICATION
 *		cuda/gx_capture.h
 *-------------------------------------------------------------------------
 */
#ifndef GX_CAPTURE_H
#define GX_CAPTURE_H

#include "gx_common.h"

#define GX_CAPTURE_MAGIC		0x46435847	/* "GXCF" */
#define GX_CAPTURE_VERSION		1
#define GX_CAPTURE_RECORD_MAGIC 0x52435847	/* "GXCR" */

typedef struct GxCaptureFileHeader
{
	uint32_t	magic;
	uint32_t	version;
	uint32_t	nbuffers;		/* shared buffers: page indexes are below */
	uint32_t	blcksz;
} GxCaptureFileHeader;

typedef struct GxCaptureRecord
{
	uint32_t	magic;
	uint32_t	kind;			/* GxRequestKind; GX_REQ_TASK_DESTROY: free task_id */
	uint64_t	batch_len;		/* bytes of batch that follow */
	uint64_t	scratch_bytes;	/* device memory reserved (create kinds: the task's) */
	uint32_t	task_id;		/* the task made (create kinds) or used, or 0 */
	uint32_t	task2_id;		/* the join tables of a fused aggregation, or 0 */
	uint32_t	npages;			/* pages that follow the batch */
	uint32_t	pad;
} GxCaptureRecord;

#endif							/* GX_CAPTURE_H */
