/*-------------------------------------------------------------------------
 * gpu_runtime_none.c
 *		The runtime interface of gx_runtime.h for builds without nvcc: no
 *		device exists, and every offloaded batch runs on the CPU engine.
 *
 * IDENTIFICATION
 *		src/gpu_runtime_none.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#ifdef GPUEXT_NO_CUDA

#define NO_CUDA_MSG "gpuext was built without the CUDA toolkit"

int
gxr_init(int *ndevices, char *err, int errlen)
{
	*ndevices = 0;
	strlcpy(err, NO_CUDA_MSG, errlen);
	return 0;
}

void
gxr_shutdown(void)
{
}

int
gxr_device_props(int dev, GxDeviceProps *props, char *err, int errlen)
{
	strlcpy(err, NO_CUDA_MSG, errlen);
	return -1;
}

int
gxr_mem_info(int dev, uint64_t *free_bytes, uint64_t *total_bytes)
{
	return -1;
}

int
gxr_register_host(void *host, size_t len, char *err, int errlen)
{
	strlcpy(err, NO_CUDA_MSG, errlen);
	return -1;
}

void *
gxr_device_view(int dev, void *host)
{
	return NULL;
}

int
gxr_alloc(int dev, uint64_t bytes, void **ptr, char *err, int errlen)
{
	strlcpy(err, NO_CUDA_MSG, errlen);
	return -1;
}

void
gxr_free(int dev, void *ptr)
{
}

int
gxr_copy_to_device(int dev, void *dst, const void *src, size_t bytes, char *err, int errlen)
{
	strlcpy(err, NO_CUDA_MSG, errlen);
	return -1;
}

void
gxr_trim(int dev)
{
}

int
gxr_launch(int dev, const GxLaunch *launch, int *handle, char *err, int errlen)
{
	strlcpy(err, NO_CUDA_MSG, errlen);
	return -1;
}

int
gxr_poll(int dev, int handle, float *ms, int *sticky, char *err, int errlen)
{
	strlcpy(err, NO_CUDA_MSG, errlen);
	return -1;
}

int
gxr_calibrate(int dev, void *host, size_t host_bytes, GxCalibration *out, char *err, int errlen)
{
	strlcpy(err, NO_CUDA_MSG, errlen);
	return -1;
}

int
gxr_reset(int dev, char *err, int errlen)
{
	strlcpy(err, NO_CUDA_MSG, errlen);
	return -1;
}

#endif							/* GPUEXT_NO_CUDA */
