/*-------------------------------------------------------------------------
 * replay.cu
 *		Run the device requests a GPU service captured (gpuext.
 *		debug_capture_dir, src/capture.c) again, through the service's own
 *		runtime layer and kernels, in a process compute-sanitizer can
 *		follow.  make compute-sanitizer runs the test suites with capture
 *		on, then this program under the sanitizer's tools.
 *
 *		usage: gpuext-replay [--calibrate] FILE...
 *
 * GPUEXT_REPLAY_STRIDE=N replays one in N of the requests of each kind
 * that need no task (scans, page counts, task creations) and every
 * request on a task it replayed: the slower tools then cover every kernel
 * in less time.  GPUEXT_REPLAY_ONLY="agg join ..." replays the requests
 * of those kinds only (names as in the summary line; a task's requests
 * need its creation listed too, e.g. task_create).
 *
 * Each request is launched as the service launched it (same batch bytes,
 * same pages at the same buffer indexes, device memory of the same sizes,
 * the same task relations) and waited for before the next.  Prints the
 * requests replayed per kind; exits 1 when a launch or a kernel failed.
 * Kernel-reported errors (a malformed program, an injected fault) are
 * counted, not failures: captures leave injected faults out.
 *
 * IDENTIFICATION
 *		test/gpu/replay.cu
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <map>

#include "gx_runtime.h"
#include "gx_capture.h"

#define BATCH_AREA	((size_t) 512 * 1024 * 1024)	/* largest batch replayed */
#define Max_u32(a, b) ((a) > (b) ? (a) : (b))

static const char *kind_names[GX_REQ_KIND_MAX] = {
	"?", "noop", "page_count", "sleep", "scan", "task_create", "agg",
	"task_fetch", "task_destroy", "calibrate", "join_build", "join",
	"rtree_load", "rtree_fill", "rtree_search",
	"ptree_load", "ptree_upload", "ptree_lookup", "ptree_merge"
};

/* page-aligned host memory of 'bytes', registered for the device */
static void *
registered(size_t bytes)
{
	void	   *p = NULL;
	char		err[GX_ERRLEN];

	bytes = (bytes + 4095) & ~(size_t) 4095;
	if (posix_memalign(&p, 4096, bytes) != 0)
	{
		fprintf(stderr, "gpuext-replay: out of host memory (%zu bytes)\n", bytes);
		exit(2);
	}
	memset(p, 0, bytes);
	if (gxr_register_host(p, bytes, err, sizeof(err)) != 0)
	{
		fprintf(stderr, "gpuext-replay: %s\n", err);
		exit(2);
	}
	return p;
}

/* Read exactly n bytes; false at a clean or truncated end of file. */
static bool
read_all(FILE *f, void *p, size_t n)
{
	return n == 0 || fread(p, 1, n, f) == n;
}

/* Launch one request and wait for it; returns false if it failed. */
static bool
run_one(const GxLaunch *l, const char *what)
{
	char		err[GX_ERRLEN];
	int			handle;
	int			rc;
	int			sticky = 0;
	float		ms = 0;

	if (gxr_launch(0, l, &handle, err, sizeof(err)) != 0)
	{
		fprintf(stderr, "gpuext-replay: %s: %s\n", what, err);
		return false;
	}
	while ((rc = gxr_poll(0, handle, &ms, &sticky, err, sizeof(err))) == 0)
		;
	if (rc < 0)
	{
		fprintf(stderr, "gpuext-replay: %s: %s%s\n", what, err, sticky ? " (sticky)" : "");
		if (sticky)
			exit(1);
		return false;
	}
	return true;
}

/*
 * The kinds named in 'list' (space or comma separated) into want[]; all
 * kinds when list is NULL or empty.  False, with a message, on a name
 * that is not a kind.
 */
static bool
parse_kind_list(const char *list, bool *want)
{
	char		buf[512];
	char	   *save = NULL;

	for (int k = 0; k < GX_REQ_KIND_MAX; k++)
		want[k] = (list == NULL || *list == '\0');
	if (list == NULL || *list == '\0')
		return true;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *name = strtok_r(buf, " ,", &save); name; name = strtok_r(NULL, " ,", &save))
	{
		int			k = 1;

		while (k < GX_REQ_KIND_MAX && strcmp(kind_names[k], name) != 0)
			k++;
		if (k == GX_REQ_KIND_MAX)
		{
			fprintf(stderr, "gpuext-replay: GPUEXT_REPLAY_ONLY: no request kind \"%s\"\n", name);
			return false;
		}
		want[k] = true;
	}
	return true;
}

int
main(int argc, char **argv)
{
	char		err[GX_ERRLEN];
	int			ndev = 0;
	int			first = 1;
	bool		calibrate = false;
	unsigned char *pages = NULL;
	uint32_t	nbuffers = 0;
	GxBatch    *batch;
	long		count[GX_REQ_KIND_MAX] = {0};
	long		kernel_errors = 0;
	long		failures = 0;
	long		replayed = 0;
	long		seen[GX_REQ_KIND_MAX] = {0};
	bool		want[GX_REQ_KIND_MAX];
	long		stride = getenv("GPUEXT_REPLAY_STRIDE") ? atol(getenv("GPUEXT_REPLAY_STRIDE")) : 1;

	if (stride < 1)
		stride = 1;
	if (!parse_kind_list(getenv("GPUEXT_REPLAY_ONLY"), want))
		return 2;
	/* progress lines reach the log even if a checker kills the process */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "--calibrate") == 0)
	{
		calibrate = true;
		first = 2;
	}
	if (argc <= first)
	{
		fprintf(stderr, "usage: gpuext-replay [--calibrate] FILE...\n");
		return 2;
	}
	if (gxr_init(&ndev, err, sizeof(err)) != 0 || ndev == 0)
	{
		fprintf(stderr, "gpuext-replay: no usable GPU: %s\n", err);
		return 2;
	}
	/* the largest shared buffers of the captures: one page region for all */
	for (int a = first; a < argc; a++)
	{
		FILE	   *f = fopen(argv[a], "rb");
		GxCaptureFileHeader h;

		if (f == NULL || !read_all(f, &h, sizeof(h)) || h.magic != GX_CAPTURE_MAGIC ||
			h.version != GX_CAPTURE_VERSION || h.blcksz != GX_BLCKSZ)
		{
			fprintf(stderr, "gpuext-replay: %s is not a capture of this version\n", argv[a]);
			return 2;
		}
		if (h.nbuffers > nbuffers)
			nbuffers = h.nbuffers;
		fclose(f);
	}
	batch = (GxBatch *) registered(BATCH_AREA);
	pages = (unsigned char *) registered((size_t) Max_u32(nbuffers, 1) * GX_BLCKSZ);

	if (calibrate)
	{
		GxCalibration cal;

		if (gxr_calibrate(0, batch, 64 * 1024 * 1024, &cal, err, sizeof(err)) != 0)
		{
			fprintf(stderr, "gpuext-replay: calibrate: %s\n", err);
			failures++;
		}
		count[GX_REQ_CALIBRATE]++;
	}

	for (int a = first; a < argc; a++)
	{
		FILE	   *f = fopen(argv[a], "rb");
		GxCaptureFileHeader h;
		GxCaptureRecord r;
		std::map<uint32_t, void *> tasks;	/* captured task id: device memory */
		std::map<uint32_t, uint64_t> task_bytes;	/* and its size */

		if (f == NULL || !read_all(f, &h, sizeof(h)))
			return 2;
		while (read_all(f, &r, sizeof(r)))
		{
			GxLaunch	l;
			void	   *scratch = NULL;
			bool		creates = gx_kind_creates_task((int) r.kind);
			bool		complete = true;
			char		what[128];

			if (r.magic != GX_CAPTURE_RECORD_MAGIC || r.kind >= GX_REQ_KIND_MAX ||
				r.batch_len > BATCH_AREA)
			{
				fprintf(stderr, "gpuext-replay: %s: malformed record\n", argv[a]);
				return 2;
			}
			snprintf(what, sizeof(what), "%s (%s request %ld)", argv[a], kind_names[r.kind],
					 count[r.kind] + 1);
			if (r.kind == GX_REQ_TASK_DESTROY)
			{
				if (tasks.count(r.task_id))
				{
					gxr_free(0, tasks[r.task_id]);
					tasks.erase(r.task_id);
					task_bytes.erase(r.task_id);
				}
				count[r.kind]++;
				continue;
			}
			complete = read_all(f, batch, r.batch_len);
			for (uint32_t p = 0; complete && p < r.npages; p++)
			{
				uint32_t	buf_id;

				complete = read_all(f, &buf_id, sizeof(buf_id)) && buf_id < nbuffers &&
					read_all(f, pages + (size_t) buf_id * GX_BLCKSZ, GX_BLCKSZ);
			}
			if (!complete)
				break;			/* a file cut short: replay what is whole */
			if (!want[r.kind])
				continue;
			/* sampling: one in 'stride' of the requests that need no task */
			if ((creates || r.task_id == 0) && seen[r.kind]++ % stride != 0)
				continue;

			if (r.scratch_bytes > 0 &&
				gxr_alloc(0, r.scratch_bytes, &scratch, err, sizeof(err)) != 0)
			{
				fprintf(stderr, "gpuext-replay: %s: %s\n", what, err);
				failures++;
				continue;
			}
			memset(&l, 0, sizeof(l));
			l.kind = (int) r.kind;
			l.fault = GX_FAULT_NONE;
			l.batch_host = batch;
			l.batch_dev = (GxBatch *) gxr_device_view(0, batch);
			l.pages_dev = (const unsigned char *) gxr_device_view(0, pages);
			l.scratch_dev = scratch;
			l.scratch_bytes = r.scratch_bytes;
			/* as the service does: a create's task is its own memory */
			l.task_dev = creates ? scratch : (tasks.count(r.task_id) ? tasks[r.task_id] : NULL);
			l.task_bytes = creates ? r.scratch_bytes :
				(task_bytes.count(r.task_id) ? task_bytes[r.task_id] : 0);
			l.task2_dev = tasks.count(r.task2_id) ? tasks[r.task2_id] : NULL;
			batch->abort_flag = 0;
			batch->kernel_error = GX_KERR_NONE;
			if ((r.task_id != 0 && !creates && l.task_dev == NULL) ||
				(r.task2_id != 0 && l.task2_dev == NULL))
			{
				/* its task was made before the capture began */
				gxr_free(0, scratch);
				continue;
			}
			/* a debug sleep has nothing to check: a millisecond is enough */
			if (r.kind == GX_REQ_SLEEP && batch->arg > 1000000)
				batch->arg = 1000000;
			if (!run_one(&l, what))
				failures++;
			else if (batch->kernel_error != GX_KERR_NONE)
				kernel_errors++;
			count[r.kind]++;
			if (++replayed % 1000 == 0)
				printf("gpuext-replay: %ld requests replayed (%s)\n", replayed, what);
			if (creates)
			{
				tasks[r.task_id] = scratch;		/* the task's memory */
				task_bytes[r.task_id] = r.scratch_bytes;
			}
			else
				gxr_free(0, scratch);
		}
		for (auto &t : tasks)
			gxr_free(0, t.second);
		fclose(f);
	}

	printf("gpuext-replay:");
	for (int k = 1; k < GX_REQ_KIND_MAX; k++)
		if (count[k])
			printf(" %s %ld", kind_names[k], count[k]);
	printf("; %ld kernel-reported errors, %ld failures\n", kernel_errors, failures);
	gxr_shutdown();
	return failures ? 1 : 0;
}
