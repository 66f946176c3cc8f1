/*-------------------------------------------------------------------------
 * gpuext.h
 *		Declarations shared by the host-side modules of gpuext.
 *
 * IDENTIFICATION
 *		src/gpuext.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_H
#define GPUEXT_H

#include "postgres.h"

#include "access/relscan.h"
#include "datatype/timestamp.h"
#include "lib/ilist.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/buf.h"
#include "storage/spin.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"
#include "utils/resowner.h"

#include "gx_common.h"
#include "gx_runtime.h"

#define GPUEXT_VERSION_STR	"0.1"

/* ---------------------------------------------------------------------
 * GUCs (gpuext.c)
 * ---------------------------------------------------------------------
 */
typedef enum GpuextDeviceMode
{
	GPUEXT_DEVICE_AUTO,
	GPUEXT_DEVICE_GPU,
	GPUEXT_DEVICE_CPU
} GpuextDeviceMode;

typedef enum GpuextFallbackMode
{
	GPUEXT_FALLBACK_ON,
	GPUEXT_FALLBACK_NOTICE,
	GPUEXT_FALLBACK_OFF
} GpuextFallbackMode;

extern bool gpuext_enabled;
extern bool gpuext_enable_gpuscan;
extern bool gpuext_enable_gpujoin;
extern bool gpuext_enable_gpuagg;
extern int	gpuext_device_mode;
extern int	gpuext_cpu_fallback;
extern int	gpuext_gpu_memory_limit_mb;
extern bool gpuext_regression_test_mode;
extern bool gpuext_force_offload;
extern int	gpuext_dma_buffer_size_mb;
extern int	gpuext_max_batch_pages;
extern int	gpuext_service_poll_ms;
extern int	gpuext_debug_inject_fault;
extern int	gpuext_debug_queue_start;
extern bool gpuext_debug_host_device;

extern PGDLLEXPORT void _PG_init(void);

/* true when loaded through shared_preload_libraries */
extern bool gpuext_preloaded;

/* ---------------------------------------------------------------------
 * Shared state between backends and the GPU service (shmem.c)
 * ---------------------------------------------------------------------
 */
typedef enum GxServiceState
{
	GX_SERVICE_NOT_STARTED = 0,
	GX_SERVICE_STARTING,
	GX_SERVICE_READY,			/* serving requests on at least one GPU */
	GX_SERVICE_NO_GPU,			/* running, but no usable GPU */
	GX_SERVICE_STOPPED			/* exited; the postmaster restarts it */
} GxServiceState;

/* life of a request slot; transitions are compare-and-swap */
typedef enum GxSlotState
{
	GX_SLOT_FREE = 0,
	GX_SLOT_QUEUED,				/* submitted by its owner */
	GX_SLOT_RUNNING,			/* taken by the service */
	GX_SLOT_DONE,				/* result ready for the owner */
	GX_SLOT_ABANDONED			/* owner gave up: the service frees it */
} GxSlotState;

#define GX_SLOTS_PER_BACKEND 4

/* one request, in shared memory */
typedef struct GxSlot
{
	pg_atomic_uint32 state;		/* GxSlotState */
	pg_atomic_uint32 cancel;	/* owner asks the service to stop it */
	int			owner_pid;		/* (for messages) */
	int			owner_procno;	/* its owner: slot index / GX_SLOTS_PER_BACKEND */
	uint64		owner_session;	/* and the owner's session (gx_session_id) */
	int			group_procno;	/* the owner's parallel group: its leader */
	uint64		group_session;	/* and the leader's session */
	bool		detached;		/* the owner will not collect it: the service
								 * frees the slot when it is done */
	uint32		generation;		/* service generation it was sent to */
	int			kind;			/* GxRequestKind */
	int			fault;			/* GxFault */
	uint64		mem_limit;		/* device bytes it may reserve, 0 = any */
	Oid			dbid;			/* the owner's database */
	int			task_quota;		/* tasks that database may hold */
	uint64		arena_off;		/* its batch in the DMA arena */
	uint64		arena_len;
	/* filled in by the service */
	int			status;			/* GxStatus */
	int			device;
	float		device_ms;
	char		errmsg[GX_ERRLEN];
} GxSlot;

typedef struct GxShared
{
	slock_t		mutex;			/* protects the service fields below */
	int			service_state;	/* GxServiceState */
	int			service_pid;
	uint32		generation;		/* bumped at each service start */
	Latch	   *service_latch;
	char		detail[GX_ERRLEN];
	TimestampTz service_started;

	int			ndevices;
	GxDeviceProps devices[GX_MAX_DEVICES];
	pg_atomic_uint64 device_mem_used[GX_MAX_DEVICES];

	/* statistics */
	pg_atomic_uint64 requests_served;
	pg_atomic_uint64 requests_failed;
	pg_atomic_uint64 requests_cancelled;
	pg_atomic_uint64 gpu_batches;
	pg_atomic_uint64 cpu_batches;
	pg_atomic_uint64 fallbacks;
	pg_atomic_uint64 bytes_read;	/* heap bytes read by kernels */
	pg_atomic_uint64 bytes_returned;
	pg_atomic_uint64 device_time_us;
	pg_atomic_uint64 service_restarts;
	pg_atomic_uint64 requests_abandoned;	/* handed to the service by their owner */
	pg_atomic_uint32 calibration_generation;	/* bumped by gpuext_calibrate() */

	/* faults injected by gpuext_debug_inject_fault(): launches, allocations to fail */
	pg_atomic_uint32 fault_kernel;
	pg_atomic_uint32 fault_alloc;

	/*
	 * Sessions: each process that uses the service gets a number never
	 * used before (at its first request), kept per PGPROC number in
	 * sessions[] while it lives; the service tells a process that is gone
	 * from one that has taken over its PGPROC (or its pid) by it.
	 */
	pg_atomic_uint64 next_session;
	int			nprocs;

	/*
	 * submission queue: ring of queue_size (a power of two) slot indexes;
	 * head and tail count the entries taken and added, wrapping at 2^32
	 */
	slock_t		queue_lock;
	uint32		queue_head;
	uint32		queue_tail;
	uint32		queue_size;

	/* the DMA arena */
	LWLock	   *arena_lock;
	uint64		arena_size;
	uint32		arena_units;
	uint32		arena_units_used;

	int			nslots;
	/*
	 * then: GxSlot slots[nslots]; uint32 queue[queue_size];
	 * uint32 units[arena_units]; pg_atomic_uint64 sessions[nprocs]
	 */
} GxShared;

#define GX_ARENA_UNIT		(64 * 1024)
#define GX_AGG_TABLE_HEADER_BYTES 64	/* GX_AGG_TABLE_HEADER of gx_agg.h */

extern GxShared *gx_shared;
extern char *gx_arena;			/* 2 MB aligned base of the DMA arena */

extern void gx_shmem_request(void);
extern void gx_shmem_startup(void);
extern GxSlot *gx_slot(int index);
extern uint32 *gx_queue(void);
extern bool gx_queue_push(uint32 slot_index);
extern bool gx_queue_pop(uint32 *slot_index);
extern pg_atomic_uint64 *gx_proc_session(int procno);
extern bool gx_fault_take(int fault);
extern const char *gx_service_state_name(int state);

/* ---------------------------------------------------------------------
 * DMA arena (arena.c)
 * ---------------------------------------------------------------------
 */
extern bool gx_arena_alloc(Size bytes, uint64 *offset, uint64 *len);
extern void gx_arena_free(uint64 offset, uint64 len);
extern uint64 gx_arena_bytes_in_use(void);

/* ---------------------------------------------------------------------
 * GPU service (service.c)
 * ---------------------------------------------------------------------
 */
extern void gx_register_service(void);
PGDLLEXPORT void gpuext_service_main(Datum arg);

/*
 * What the service does with a device (gx_runtime.h's functions, or the
 * host test device's in host_device.c)
 */
typedef struct GxRuntimeOps
{
	int			(*alloc) (int dev, uint64_t bytes, void **ptr, char *err, int errlen);
	void		(*free) (int dev, void *ptr);
	int			(*copy_to_device) (int dev, void *dst, const void *src, size_t bytes,
								   char *err, int errlen);
	void	   *(*device_view) (int dev, void *host);
	int			(*mem_info) (int dev, uint64_t *free_bytes, uint64_t *total_bytes);
	void		(*trim) (int dev);
	int			(*launch) (int dev, const GxLaunch *launch, int *handle, char *err, int errlen);
	int			(*poll) (int dev, int handle, float *ms, int *sticky, char *err, int errlen);
	int			(*calibrate) (int dev, void *host, size_t host_bytes, GxCalibration *out,
							  char *err, int errlen);
	int			(*reset) (int dev, char *err, int errlen);
	void		(*shutdown) (void);
} GxRuntimeOps;

/* host_device.c: a stand-in for a GPU, for tests (gpuext.debug_host_device) */
extern const GxRuntimeOps gx_host_device_ops;
extern void gx_host_device_props(GxDeviceProps *props);

/*
 * validate.c: is a request well-formed against its batch and the tasks it
 * names (as the service describes them; NULL: not checked here)?
 */
typedef struct GxTaskInfo
{
	int			kind;			/* the GxRequestKind that made it */
	uint64		bytes;			/* its device memory */
	uint64		capacity;		/* a group table's entries */
	uint32		ndepths;		/* join tables' depths */
} GxTaskInfo;

extern bool gx_request_check(int kind, const GxBatch *b, uint64 batch_len,
							 const GxTaskInfo *task, const GxTaskInfo *task2,
							 char *err, int errlen);

/* ---------------------------------------------------------------------
 * Backend side of requests (client.c)
 * ---------------------------------------------------------------------
 */
typedef struct GxRequest
{
	int			slot_index;		/* -1 once released */
	uint64		arena_off;
	uint64		arena_len;
	GxBatch    *batch;			/* the batch in the arena */
	ResourceOwner owner;
	bool		in_flight;
	int			status;			/* GxStatus of the last wait */
	float		device_ms;
	char		errmsg[GX_ERRLEN];
	dlist_node	node;
} GxRequest;

extern bool gx_service_has_gpu(const char **why);
extern GxRequest *gx_request_create(Size batch_bytes);
extern int	gx_request_slots_free(void);
extern void gx_request_submit(GxRequest *req, int kind);
extern int	gx_request_wait(GxRequest *req);
extern void gx_request_destroy(GxRequest *req);
extern GxRequest *gx_request_run(int kind, Size bytes, Size out_len);
extern void gx_client_init(void);

/* capture.c: device requests recorded for replay under compute-sanitizer */
extern void gx_capture_init(void);
extern void gx_capture_close(void);
extern void gx_capture_request(int kind, const GxBatch *b, uint64 batch_len,
							   uint64 scratch_bytes, uint32 task_id, uint32 task2_id);
extern uint32 gx_task_create(uint64 bytes, uint64 capacity, uint64 max_groups,
							 int *status, char *errmsg);
extern void gx_task_destroy(uint32 task_id);
extern uint32 gx_join_task_create(const void *tables, uint64 bytes, uint64 rows,
								  uint32 near_task, int *status, char *errmsg);
extern uint32 gx_mirror_task_create(int load_kind, int add_kind, const void *mirror,
									uint64 bytes, uint64 part, int *status, char *errmsg);
extern int	gx_task_fetch(uint32 task_id, uint64 first, uint64 nslots, uint32 entry_size,
						  void *dest, uint64 *count, void *header, char *errmsg);
extern void gx_task_keep_for_session(uint32 task_id, uint64 reserved);
extern void gx_task_forget(uint32 task_id);
extern int	gx_debug_owner_pid;
extern bool gx_session_task_valid(uint32 task_id);
extern void gx_client_attach(void);
extern void gx_check_itemid_layout(void);

/* ---------------------------------------------------------------------
 * Engines: where a batch runs, and fallback (engine.c, cpu_engine.c)
 * ---------------------------------------------------------------------
 */
typedef struct GxEngine
{
	bool		use_gpu;		/* decided when the node starts */
	bool		rerun_on_cpu;	/* rerun a failed GPU batch on the CPU engine */
	bool		failed;			/* a GPU batch failed and was not rerun */
	char		failure[GX_ERRLEN];
	bool		fallback_noticed;
	uint64		gpu_batches;
	uint64		cpu_batches;
	uint64		fallback_batches;
	uint64		pages;
	double		device_ms;
} GxEngine;

/* a batch being built or in flight, on either engine */
typedef struct GxPendingBatch
{
	GxBatch    *batch;
	Size		size;
	GxRequest  *req;			/* GPU: its request, else NULL */
	bool		in_flight;
	int			cpu_status;		/* CPU engine: a failure injected at its launch */
} GxPendingBatch;

extern void gx_engine_start(GxEngine *engine);
extern void gx_engine_start_with_mode(GxEngine *engine, int device_mode);
extern GxBatch *gx_engine_batch_alloc(GxEngine *engine, GxPendingBatch *pb, Size size);
extern void gx_engine_submit(GxEngine *engine, GxPendingBatch *pb);
extern bool gx_engine_wait(GxEngine *engine, GxPendingBatch *pb);
extern void gx_engine_batch_free(GxPendingBatch *pb);
extern const char *gx_engine_name(const GxEngine *engine);
extern void gx_cpu_run_batch(GxBatch *batch, Size len);
extern uint32 gx_cpu_table_register(void *table, MemoryContext cxt);
extern void gx_cpu_table_unregister(uint32 id, const void *table);
extern bool gx_dsm_has_room(Size bytes);
extern void gx_report_failure(int status, const char *msg);
extern void gx_device_table_unavailable(int status, const char *err, const char *instead);
extern void gx_count_fallback(void);

/* ---------------------------------------------------------------------
 * Reading heap pages into batches (relscan.c)
 * ---------------------------------------------------------------------
 */
typedef struct GxPageSource GxPageSource;	/* opaque */

extern GxPageSource *gx_pages_begin(Relation rel, Snapshot snapshot,
									ParallelBlockTableScanDesc pscan);
extern uint32 gx_pages_fill(GxPageSource *src, GxPageRef *refs,
							Buffer *buffers, uint32 max_pages);
extern void gx_pages_release(Buffer *buffers, uint32 npages);
extern uint32 gx_batch_pages_cap(int batches_in_flight);
extern void gx_pages_end(GxPageSource *src);
struct GxCcScan;
extern void gx_pages_use_cache(GxPageSource *src, struct GxCcScan *cache);
extern uint64 gx_pages_cached(GxPageSource *src);
extern void gx_pages_rescan(GxPageSource *src);
extern Size gx_batch_size(uint32 npages, Size program_len, Size out_per_page);
extern void gx_batch_layout(GxBatch *batch, int kind, uint32 npages,
							Size program_len, Size out_per_page);

/* gxgist.c: the gpuext_gist index access method */
extern void gx_gist_init(void);

#endif							/* GPUEXT_H */
