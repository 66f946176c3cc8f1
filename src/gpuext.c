/*-------------------------------------------------------------------------
 * gpuext.c
 *		Module initialisation: GUCs, shared memory hooks, the GPU service
 *		and the planner hooks of every offloaded operator.
 *
 * No CUDA call happens here: CUDA contexts live in the GPU service only.
 *
 * IDENTIFICATION
 *		src/gpuext.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/guc.h"

#include "colcache.h"
#include "costparams.h"
#include "gpuagg.h"
#include "gpujoin.h"
#include "gpuscan.h"
#include "paths.h"
#include "ptree.h"
#include "quota.h"


PG_MODULE_MAGIC;

bool		gpuext_enabled = true;
bool		gpuext_enable_gpuscan = true;
bool		gpuext_enable_gpujoin = true;
bool		gpuext_enable_gpuagg = true;
int			gpuext_device_mode = GPUEXT_DEVICE_AUTO;
int			gpuext_cpu_fallback = GPUEXT_FALLBACK_ON;
int			gpuext_gpu_memory_limit_mb = -1;
bool		gpuext_regression_test_mode = false;
bool		gpuext_force_offload = false;
int			gpuext_dma_buffer_size_mb = 256;
int			gpuext_max_batch_pages = 4096;
int			gpuext_service_poll_ms = 100;
int			gpuext_debug_inject_fault = GX_FAULT_NONE;
int			gpuext_debug_queue_start = 0;
bool		gpuext_debug_host_device = false;
bool		gpuext_preloaded = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static const struct config_enum_entry device_options[] = {
	{"auto", GPUEXT_DEVICE_AUTO, false},
	{"gpu", GPUEXT_DEVICE_GPU, false},
	{"cpu", GPUEXT_DEVICE_CPU, false},
	{NULL, 0, false}
};

static const struct config_enum_entry fallback_options[] = {
	{"on", GPUEXT_FALLBACK_ON, false},
	{"notice", GPUEXT_FALLBACK_NOTICE, false},
	{"off", GPUEXT_FALLBACK_OFF, false},
	{"true", GPUEXT_FALLBACK_ON, true},
	{"false", GPUEXT_FALLBACK_OFF, true},
	{NULL, 0, false}
};

static const struct config_enum_entry fault_options[] = {
	{"none", GX_FAULT_NONE, false},
	{"alloc", GX_FAULT_ALLOC, false},
	{"kernel", GX_FAULT_KERNEL, false},
	{"service_die", GX_FAULT_SERVICE_DIE, false},
	{"transfer_stall", GX_FAULT_TRANSFER_STALL, false},
	{"no_dsm", GX_FAULT_NO_DSM, false},
	{NULL, 0, false}
};

/* Request the shared memory of the service, the queue and the arena. */
static void
gpuext_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	gx_shmem_request();
	gx_quota_shmem_request();
}

/* Create or attach the shared state. */
static void
gpuext_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	gx_shmem_startup();
	gx_quota_shmem_startup();
}

/* Define every gpuext.* GUC. */
static void
define_gucs(void)
{
	DefineCustomBoolVariable("gpuext.enabled",
							 "Enables offloading of query work to gpuext.",
							 NULL,
							 &gpuext_enabled, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuext.enable_gpuscan",
							 "Enables the planner's use of GPU scans.",
							 NULL,
							 &gpuext_enable_gpuscan, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuext.enable_gpujoin",
							 "Enables the planner's use of GPU hash joins.",
							 NULL,
							 &gpuext_enable_gpujoin, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuext.enable_gpuagg",
							 "Enables the planner's use of GPU aggregation.",
							 NULL,
							 &gpuext_enable_gpuagg, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpuext.device",
							 "Selects the engine that runs offloaded work.",
							 "auto uses the GPU when the service has one and the CPU engine otherwise; "
							 "gpu insists on the GPU; cpu always uses the CPU engine.",
							 &gpuext_device_mode, GPUEXT_DEVICE_AUTO, device_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpuext.cpu_fallback",
							 "What to do when the GPU cannot run a batch.",
							 "on reruns it on the CPU engine, notice does so with a NOTICE, "
							 "off raises an ERROR.",
							 &gpuext_cpu_fallback, GPUEXT_FALLBACK_ON, fallback_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.gpu_memory_limit",
							"Device memory one gpuext operator may reserve.",
							"-1 means 80 % of the smallest GPU's memory; "
							"0 means no limit beyond the device's own memory.",
							&gpuext_gpu_memory_limit_mb, -1, -1, INT_MAX,
							PGC_SUSET, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuext.enable_cache",
							 "Lets scans read pages from gpuext column caches.",
							 "Off reads every page from the heap, as without a cache.",
							 &gpuext_enable_cache, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuext.cache_gpu",
							 "Lets GpuScan, GpuJoin and GpuAgg on the GPU read column caches (a device copy).",
							 "Off: only the CPU engine reads them; on the GPU they read heap pages.",
							 &gpuext_cache_gpu, false,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.cache_memory_limit",
							"Memory all gpuext column caches together may hold.",
							"Checked when a cache is built (gpuext_cache_enable).",
							&gpuext_cache_memory_limit_mb, 1024, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuext.regression_test_mode",
							 "Hides device names, engines and timings in EXPLAIN.",
							 "Makes regression test output stable across machines.",
							 &gpuext_regression_test_mode, false,
							 PGC_USERSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuext.force_offload",
							 "Takes the gpuext path wherever one exists, whatever it costs.",
							 "For tests and diagnosis.",
							 &gpuext_force_offload, false,
							 PGC_USERSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	/* server-start settings may only be defined while preloading */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("gpuext.dma_buffer_size",
								"Size of the shared DMA arena used for batches and results.",
								NULL,
								&gpuext_dma_buffer_size_mb, 256, 16, 65536,
								PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("gpuext.debug_queue_start",
								"Starts the submission queue's counters this many requests before they wrap around.",
								"For tests of the queue's wrap-around only; 0 starts them at 0.",
								&gpuext_debug_queue_start, 0, 0, INT_MAX,
								PGC_POSTMASTER, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	if (process_shared_preload_libraries_in_progress)
		DefineCustomBoolVariable("gpuext.debug_host_device",
								 "Without a GPU, the GPU service serves debug requests on a stand-in in host memory.",
								 "For tests of the service on machines without a GPU only; "
								 "queries still use the CPU engine.",
								 &gpuext_debug_host_device, false,
								 PGC_POSTMASTER, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.max_batch_pages",
							"Heap pages per batch sent to the device.",
							NULL,
							&gpuext_max_batch_pages, 4096, 1, 65536,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.service_poll_interval",
							"How often a waiting backend checks that the GPU service is alive.",
							NULL,
							&gpuext_service_poll_ms, 100, 1, 10000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpuext.debug_inject_fault",
							 "Makes device requests fail on purpose, for testing.",
							 "alloc fails the device allocation, kernel makes the kernel "
							 "report an error, service_die stops the GPU service, "
							 "transfer_stall stalls the transfer until cancelled, "
							 "no_dsm leaves a parallel GpuJoin's inner tables without a DSM segment.",
							 &gpuext_debug_inject_fault, GX_FAULT_NONE, fault_options,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);


	gx_quota_define_gucs();
	gx_cost_define_gucs();
}

/*
 * Module load.  Without shared_preload_libraries only the GUCs exist (so
 * SET works and the SQL functions can say why offload is off); with it,
 * the shared state, the GPU service and the planner hooks are set up.
 */
void
_PG_init(void)
{
	define_gucs();
	gx_capture_init();
	gx_check_itemid_layout();
	gx_gist_init();				/* gpuext_gist reloptions: with or without preload */
	gx_ptree_init();			/* reloptions of gpuext_ptree, preloaded or not */

	if (!process_shared_preload_libraries_in_progress)
	{
		MarkGUCPrefixReserved("gpuext");
		return;
	}
	gpuext_preloaded = true;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = gpuext_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = gpuext_shmem_startup;

	gx_register_service();
	gx_client_init();
	gx_paths_init();			/* before GpuScan and GpuAgg: they add their
								 * paths to re-costed ones */
	gx_gpuscan_init();
	gx_gpuagg_init();
	gx_gpujoin_init();
	gx_ptree_join_init();
	gx_colcache_init();

	/*
	 * Last: PostgreSQL drops any gpuext.* setting of postgresql.conf that is
	 * not defined by now (tested by test/t/008_gucs_in_conf.pl).
	 */
	MarkGUCPrefixReserved("gpuext");
}
