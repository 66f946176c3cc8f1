/*-------------------------------------------------------------------------
 * gx_runtime.h
 *		C interface of the CUDA runtime layer used by the GPU service.
 *
 * Only the GPU service process calls these functions: no CUDA call ever
 * happens in the postmaster or in an ordinary backend.  The interface is
 * plain C so that the service (compiled against PostgreSQL's headers) and
 * the CUDA code (compiled by nvcc, without PostgreSQL's headers) meet here.
 * When the extension is built without nvcc, src/gpu_runtime_none.c
 * implements it by reporting that no device exists.
 *
 * IDENTIFICATION
 *		cuda/gx_runtime.h
 *-------------------------------------------------------------------------
 */
#ifndef GX_RUNTIME_H
#define GX_RUNTIME_H

#include "gx_common.h"

#ifdef __cplusplus
extern "C"
{
#endif

#define GX_MAX_DEVICES		8
#define GX_MAX_INFLIGHT		64	/* launches in flight per device */
#define GX_ERRLEN			256

typedef struct GxDeviceProps
{
	char		name[256];
	int			sm_count;
	int			cc_major;
	int			cc_minor;
	uint64_t	mem_total;
	uint64_t	mem_free;
	int			pci_bus;
	int			can_map_host;	/* kernels may read registered host memory */
} GxDeviceProps;

/* what one launch needs; all pointers are device views */
typedef struct GxLaunch
{
	int			kind;			/* GxRequestKind */
	int			fault;			/* GxFault to simulate */
	GxBatch    *batch_host;		/* the batch, host view (arena) */
	GxBatch    *batch_dev;		/* the batch, device view */
	const unsigned char *pages_dev; /* device view of shared buffers */
	void	   *scratch_dev;	/* device memory reserved for this launch */
	uint64_t	scratch_bytes;
	void	   *task_dev;		/* device-resident state of the task, if any */
	uint64_t	task_bytes;		/* its size */
	void	   *task2_dev;		/* a second task's (GX_REQ_AGG fused with a join) */
	const void *cache_dev;		/* a column cache's copy (GX_PAGE_CACHED pages) */
} GxLaunch;

/* Initialise CUDA and count devices; 0 devices is not an error. */
extern int	gxr_init(int *ndevices, char *err, int errlen);

/* Release every device resource of this process. */
extern void gxr_shutdown(void);

extern int	gxr_device_props(int dev, GxDeviceProps *props, char *err, int errlen);
extern int	gxr_mem_info(int dev, uint64_t *free_bytes, uint64_t *total_bytes);

/* Page-lock host memory for every device and return its device view. */
extern int	gxr_register_host(void *host, size_t len, char *err, int errlen);
extern void *gxr_device_view(int dev, void *host);

/* Device memory, allocated before a launch (size first, then run). */
extern int	gxr_alloc(int dev, uint64_t bytes, void **ptr, char *err, int errlen);
extern void gxr_free(int dev, void *ptr);
extern int	gxr_copy_to_device(int dev, void *dst, const void *src, size_t bytes,
							   char *err, int errlen);
extern void gxr_trim(int dev);

/*
 * Start a launch asynchronously; *handle identifies it for gxr_poll.
 * Returns 0, or -1 with the CUDA message in err.
 */
extern int	gxr_launch(int dev, const GxLaunch *launch, int *handle,
					   char *err, int errlen);

/*
 * Is the launch finished?  1: done (elapsed device time in *ms),
 * 0: still running, -1: failed (message in err; the device may need a
 * reset, which *sticky says).
 */
extern int	gxr_poll(int dev, int handle, float *ms, int *sticky,
					 char *err, int errlen);

/* what gxr_calibrate measures */
typedef struct GxCalibration
{
	double		launch_us;		/* launch and completion of an empty kernel */
	double		copy_latency_us;	/* a 4 kB pinned copy to the device */
	double		h2d_gbps;		/* pinned copies to the device */
	double		d2h_gbps;		/* pinned copies to the host */
	double		zero_copy_gbps; /* kernels reading registered host memory */
	double		hbm_gbps;		/* kernels reading device memory, coalesced */
	double		gather_mps;		/* random 8-byte device reads, millions/s */
	double		atomic_mps;		/* random 8-byte atomic adds, millions/s */
} GxCalibration;

/*
 * Measure the link and the device, synchronously, using 'host' (registered
 * host memory of host_bytes) for the host side.
 */
extern int	gxr_calibrate(int dev, void *host, size_t host_bytes, GxCalibration *out,
						  char *err, int errlen);

/* Destroy and recreate the device context after a sticky error. */
extern int	gxr_reset(int dev, char *err, int errlen);

#ifdef __cplusplus
}
#endif

#endif							/* GX_RUNTIME_H */
