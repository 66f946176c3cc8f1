/*-------------------------------------------------------------------------
 * quota.c
 *		Bounds on what one operator, backend or database may take of
 *		gpuext's shared resources, so that one user cannot starve others.
 *
 * - Device memory of one operator: gpuext.gpu_memory_limit (superuser),
 *   by default 80 % of the smallest GPU's memory as the service reports
 *   it (gx_gpu_memory_limit_bytes).
 * - Device copies a backend keeps between queries (gpuext_ptree mirror
 *   copies, the gpuext_gist device cache): gpuext.device_copy_memory per
 *   backend (superuser) and gpuext.device_copy_memory_total for all of
 *   them (postgresql.conf), a counter in shared memory that backends
 *   update atomically before they make a copy and after they free one
 *   (gx_device_copy_reserve / gx_device_copy_release).  A copy that does
 *   not fit is not kept: the lookups run on the CPU engine (gpuext_ptree)
 *   or the node's copy is freed at its end (gpuext_gist).
 * - Per database: gpuext.max_caches_per_database and
 *   gpuext.cache_memory_per_database bound its column caches (checked by
 *   gpuext_cache_enable, colcache.c), gpuext.max_tasks_per_database its
 *   GPU tasks (sent with every request, checked by the service when a
 *   task is created, service.c).  All superuser-only.
 *
 * IDENTIFICATION
 *		src/quota.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "quota.h"

#define MB		((uint64) 1024 * 1024)

int			gpuext_device_copy_memory_mb = 1024;
int			gpuext_device_copy_memory_total_mb = -1;
int			gpuext_max_caches_per_database = 32;
int			gpuext_cache_memory_per_database_mb = 512;
int			gpuext_max_tasks_per_database = 512;

/* the device copies of every backend, in bytes */
typedef struct GxQuotaShared
{
	pg_atomic_uint64 device_copy_bytes;
} GxQuotaShared;

static GxQuotaShared *quota_shared = NULL;

/* what this backend holds of device_copy_bytes */
static uint64 my_device_copy_bytes = 0;
static bool exit_callback_registered = false;

/* Define the quota GUCs; from define_gucs (gpuext.c). */
void
gx_quota_define_gucs(void)
{
	DefineCustomIntVariable("gpuext.device_copy_memory",
							"Device memory one backend may keep in copies between queries.",
							"gpuext_ptree mirror copies and the gpuext_gist device cache; "
							"a copy that does not fit is not kept.",
							&gpuext_device_copy_memory_mb, 1024, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.device_copy_memory_total",
							"Device memory all backends together may keep in copies between queries.",
							"-1 means a quarter of the smallest GPU's memory.",
							&gpuext_device_copy_memory_total_mb, -1, -1, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.max_caches_per_database",
							"Column caches one database may hold (of 64 in the server).",
							NULL,
							&gpuext_max_caches_per_database, 32, 0, 64,
							PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.cache_memory_per_database",
							"Memory the column caches of one database may hold together.",
							"Checked when a cache is built, as gpuext.cache_memory_limit.",
							&gpuext_cache_memory_per_database_mb, 512, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.max_tasks_per_database",
							"GPU tasks (device-resident tables and copies) one database may hold at once.",
							"The GPU service holds 1024 for every database together.",
							&gpuext_max_tasks_per_database, 512, 0, 1024,
							PGC_SUSET, 0, NULL, NULL, NULL);
}

/* Shared memory of the counters; from shmem_request_hook. */
void
gx_quota_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(sizeof(GxQuotaShared)));
}

/* Create or attach the counters; from shmem_startup_hook. */
void
gx_quota_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	quota_shared = ShmemInitStruct("gpuext quotas", sizeof(GxQuotaShared), &found);
	if (!found)
		pg_atomic_init_u64(&quota_shared->device_copy_bytes, 0);
	LWLockRelease(AddinShmemInitLock);
}

/* The memory of the smallest GPU the service opened; 0 with none. */
static uint64
smallest_device_memory(void)
{
	uint64		least = 0;

	if (!gpuext_preloaded || gx_shared == NULL)
		return 0;
	SpinLockAcquire(&gx_shared->mutex);
	for (int d = 0; d < gx_shared->ndevices && d < GX_MAX_DEVICES; d++)
		if (least == 0 || gx_shared->devices[d].mem_total < least)
			least = gx_shared->devices[d].mem_total;
	SpinLockRelease(&gx_shared->mutex);
	return least;
}

uint64
gx_gpu_memory_limit_bytes(void)
{
	if (gpuext_gpu_memory_limit_mb >= 0)
		return (uint64) gpuext_gpu_memory_limit_mb * MB;
	/* -1: 80 % of the device, leaving room for other operators and copies */
	return smallest_device_memory() / 5 * 4;
}

/* gpuext.device_copy_memory_total in bytes */
static uint64
device_copy_total_bytes(void)
{
	if (gpuext_device_copy_memory_total_mb >= 0)
		return (uint64) gpuext_device_copy_memory_total_mb * MB;
	return smallest_device_memory() / 4;
}

/* Give back what this backend still holds when it exits. */
static void
release_at_exit(int code, Datum arg)
{
	gx_device_copy_release(my_device_copy_bytes);
}

bool
gx_device_copy_reserve(uint64 bytes, char *err)
{
	uint64		total = device_copy_total_bytes();
	uint64		cur;

	if (quota_shared == NULL)
	{
		strlcpy(err, "gpuext is not in shared_preload_libraries", GX_ERRLEN);
		return false;
	}
	if (my_device_copy_bytes + bytes > (uint64) gpuext_device_copy_memory_mb * MB)
	{
		snprintf(err, GX_ERRLEN,
				 "a device copy of " UINT64_FORMAT " bytes would take this backend's copies past gpuext.device_copy_memory (%d MB)",
				 bytes, gpuext_device_copy_memory_mb);
		return false;
	}
	cur = pg_atomic_read_u64(&quota_shared->device_copy_bytes);
	do
	{
		if (cur + bytes > total)
		{
			snprintf(err, GX_ERRLEN,
					 "a device copy of " UINT64_FORMAT " bytes would take all backends' copies past gpuext.device_copy_memory_total (" UINT64_FORMAT " MB, " UINT64_FORMAT " MB in use)",
					 bytes, total / MB, cur / MB);
			return false;
		}
	} while (!pg_atomic_compare_exchange_u64(&quota_shared->device_copy_bytes, &cur, cur + bytes));
	if (!exit_callback_registered)
	{
		before_shmem_exit(release_at_exit, 0);
		exit_callback_registered = true;
	}
	my_device_copy_bytes += bytes;
	return true;
}

/*
 * Give back 'bytes' of this backend's device copies (never more than it
 * holds: the exit callback may have given everything back already)
 */
void
gx_device_copy_release(uint64 bytes)
{
	bytes = Min(bytes, my_device_copy_bytes);
	if (bytes == 0 || quota_shared == NULL)
		return;
	pg_atomic_fetch_sub_u64(&quota_shared->device_copy_bytes, bytes);
	my_device_copy_bytes -= bytes;
}
