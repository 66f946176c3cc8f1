/*-------------------------------------------------------------------------
 * capture.c
 *		Record the device requests the GPU service launches, so that their
 *		kernels can be run again, outside the server, under NVIDIA's
 *		compute-sanitizer (test/gpu/replay.cu, make compute-sanitizer).
 *
 * compute-sanitizer follows exec'd processes only; the GPU service is
 * forked from the postmaster without exec, so its kernels cannot be
 * checked in place.  With gpuext.debug_capture_dir set, the service writes
 * each request it launches (the batch as launched, the pages it reads,
 * its device memory sizes and task ids) to a file there, in the format of
 * cuda/gx_capture.h; requests with an injected fault are left out.
 *
 * IDENTIFICATION
 *		src/capture.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "gpuext.h"
#include "gx_capture.h"

static char *capture_dir = NULL;
static int	capture_max_mb = 4096;

static FILE *capture_file = NULL;
static char *capture_open_dir = NULL;	/* the folder capture_file is in */
static uint64 capture_bytes = 0;
static char *capture_stopped_dir = NULL;	/* capturing there stopped (error, size) */

/* The settings; from _PG_init. */
void
gx_capture_init(void)
{
	DefineCustomStringVariable("gpuext.debug_capture_dir",
							   "Folder where the GPU service records the device requests it launches.",
							   "For replaying the kernels under compute-sanitizer (test/gpu/replay.cu). "
							   "Empty: no recording.",
							   &capture_dir, "", PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.debug_capture_max_mb",
							"Most megabytes the GPU service records in one capture file.",
							NULL, &capture_max_mb, 4096, 1, INT_MAX / 2,
							PGC_SIGHUP, GUC_UNIT_MB, NULL, NULL, NULL);
}

/* Close the capture file (the folder setting changed, or the service ends). */
void
gx_capture_close(void)
{
	if (capture_file)
		fclose(capture_file);
	capture_file = NULL;
	if (capture_open_dir)
		pfree(capture_open_dir);
	capture_open_dir = NULL;
}

/* Stop capturing to the current folder until the setting changes. */
static void
capture_stop(void)
{
	gx_capture_close();
	if (capture_stopped_dir)
		pfree(capture_stopped_dir);
	capture_stopped_dir = MemoryContextStrdup(TopMemoryContext, capture_dir);
}

/* Write n bytes to the capture file; false (and capture stops) on failure. */
static bool
capture_write(const void *p, size_t n)
{
	if (fwrite(p, 1, n, capture_file) != n)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("gpuext GPU service stops capturing requests: %m")));
		capture_stop();
		return false;
	}
	capture_bytes += n;
	return true;
}

/* The capture file to write to now, opened on first use; NULL: none. */
static FILE *
capture_target(void)
{
	GxCaptureFileHeader h = {GX_CAPTURE_MAGIC, GX_CAPTURE_VERSION, NBuffers, BLCKSZ};
	char	   *path;

	if (capture_dir == NULL || capture_dir[0] == '\0')
	{
		gx_capture_close();
		return NULL;
	}
	if (capture_stopped_dir && strcmp(capture_stopped_dir, capture_dir) == 0)
		return NULL;
	if (capture_file && strcmp(capture_open_dir, capture_dir) == 0)
		return capture_file;
	gx_capture_close();
	capture_bytes = 0;
	path = psprintf("%s/gpuext-capture-%d.bin", capture_dir, (int) getpid());
	capture_file = fopen(path, "wb");
	if (capture_file == NULL)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("gpuext GPU service cannot capture requests to \"%s\": %m", path)));
		capture_stop();
		return NULL;
	}
	capture_open_dir = MemoryContextStrdup(TopMemoryContext, capture_dir);
	ereport(LOG, (errmsg("gpuext GPU service capturing device requests to \"%s\"", path)));
	if (!capture_write(&h, sizeof(h)))
		return NULL;
	return capture_file;
}

/*
 * Record one request the service is about to launch (or, for
 * GX_REQ_TASK_DESTROY, has done): its batch of batch_len bytes (NULL for
 * none), the pages the batch refers to, and its device memory.
 */
void
gx_capture_request(int kind, const GxBatch *b, uint64 batch_len, uint64 scratch_bytes,
				   uint32 task_id, uint32 task2_id)
{
	GxCaptureRecord r;
	const GxPageRef *refs;
	uint32		npages;

	if (capture_target() == NULL)
		return;
	npages = (b && gx_kind_reads_pages(kind)) ? b->npages : 0;
	if (capture_bytes + batch_len + (uint64) npages * (BLCKSZ + 4) >
		(uint64) capture_max_mb * 1024 * 1024)
	{
		ereport(LOG,
				(errmsg("gpuext GPU service stops capturing requests: gpuext.debug_capture_max_mb reached")));
		capture_stop();
		return;
	}
	memset(&r, 0, sizeof(r));
	r.magic = GX_CAPTURE_RECORD_MAGIC;
	r.kind = kind;
	r.batch_len = b ? batch_len : 0;
	r.scratch_bytes = scratch_bytes;
	r.task_id = task_id;
	r.task2_id = task2_id;
	r.npages = npages;
	if (!capture_write(&r, sizeof(r)) || (b && !capture_write(b, batch_len)))
		return;
	refs = b ? gx_batch_pages(b) : NULL;
	for (uint32 i = 0; i < npages; i++)
	{
		uint32		buf_id = refs[i].buf_id;

		if (!capture_write(&buf_id, sizeof(buf_id)) ||
			!capture_write(BufferBlocks + (Size) buf_id * BLCKSZ, BLCKSZ))
			return;
	}
	/* whole records on disk, whatever ends the service */
	fflush(capture_file);
}
