/*-------------------------------------------------------------------------
 * quota.h
 *		Bounds on what one operator, backend or database may take of
 *		gpuext's shared resources.
 *
 * IDENTIFICATION
 *		src/quota.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_QUOTA_H
#define GPUEXT_QUOTA_H

#include "postgres.h"

extern int	gpuext_device_copy_memory_mb;
extern int	gpuext_device_copy_memory_total_mb;
extern int	gpuext_max_caches_per_database;
extern int	gpuext_cache_memory_per_database_mb;
extern int	gpuext_max_tasks_per_database;

extern void gx_quota_define_gucs(void);
extern void gx_quota_shmem_request(void);
extern void gx_quota_shmem_startup(void);

/*
 * The device memory one operator may reserve (gpuext.gpu_memory_limit,
 * whose default is a share of the smallest GPU's memory), in bytes; 0 for
 * no limit (also while the service reports no GPU).
 */
extern uint64 gx_gpu_memory_limit_bytes(void);

/*
 * Take 'bytes' of the device memory this backend and all backends
 * together may keep in device copies between queries
 * (gpuext.device_copy_memory, gpuext.device_copy_memory_total); false,
 * with err (GX_ERRLEN) saying which bound, when it would go over.
 */
extern bool gx_device_copy_reserve(uint64 bytes, char *err);
extern void gx_device_copy_release(uint64 bytes);

#endif							/* GPUEXT_QUOTA_H */
