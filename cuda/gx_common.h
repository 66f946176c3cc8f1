/*-------------------------------------------------------------------------
 * gx_common.h
 *		Definitions shared by the host code (gcc) and the device code (nvcc).
 *
 * Everything in this header is plain data or small inline functions: it
 * must compile in both compilers and never includes postgres.h.  The host
 * side checks at compile time (src/layout_check.c) that the heap page
 * layout constants below match PostgreSQL's own structs.
 *
 * IDENTIFICATION
 *		cuda/gx_common.h
 *-------------------------------------------------------------------------
 */
#ifndef GX_COMMON_H
#define GX_COMMON_H

#include <stdint.h>
#include <stddef.h>

/*
 * GX_FUNC: shared per-row code, for both compilers.  GX_ATOMIC_FUNC: code
 * that updates shared state with atomics, which nvcc compiles for the
 * device only (the CPU engine gets plain updates).
 */
#if defined(__CUDACC__)
#define GX_FUNC		__host__ __device__ __forceinline__ static
#define GX_ATOMIC_FUNC	__device__ __forceinline__ static
#define GX_DEVICE_CODE 1
#else
#define GX_FUNC		static inline
#define GX_ATOMIC_FUNC	static inline
#endif

/* ---------------------------------------------------------------------
 * Heap page layout (PostgreSQL 15, BLCKSZ 8192, x86-64)
 * ---------------------------------------------------------------------
 */
#define GX_BLCKSZ				8192
#define GX_PAGE_HEADER_SIZE		24		/* SizeOfPageHeaderData */
#define GX_PD_LOWER_OFFSET		12		/* offsetof(PageHeaderData, pd_lower) */
#define GX_MAX_TUPLES_PER_PAGE	291		/* MaxHeapTuplesPerPage */
#define GX_BITMAP_WORDS			10		/* 320 bits >= 291 line pointers */

/* ItemIdData is a 32-bit word: lp_off:15, lp_flags:2, lp_len:15 */
#define GX_LP_NORMAL			1
#define GX_LP_OFF(w)			((w) & 0x7fff)
#define GX_LP_FLAGS(w)			(((w) >> 15) & 0x03)
#define GX_LP_LEN(w)			((w) >> 17)

/* HeapTupleHeaderData */
#define GX_T_INFOMASK2_OFFSET	18
#define GX_T_INFOMASK_OFFSET	20
#define GX_T_HOFF_OFFSET		22
#define GX_T_BITS_OFFSET		23
#define GX_HEAP_HASNULL			0x0001
#define GX_HEAP_HASVARWIDTH		0x0002
#define GX_HEAP_HASEXTERNAL		0x0004
#define GX_HEAP_NATTS_MASK		0x07FF

/* ---------------------------------------------------------------------
 * Requests between backends and the GPU service
 * ---------------------------------------------------------------------
 */
typedef enum GxRequestKind
{
	GX_REQ_NOOP = 1,			/* empty round trip */
	GX_REQ_PAGE_COUNT,			/* per-page counts of visible tuples */
	GX_REQ_SLEEP,				/* debug: occupy the device for a while */
	GX_REQ_SCAN,				/* evaluate a device program over a batch */
	GX_REQ_TASK_CREATE,			/* allocate a device-resident group table */
	GX_REQ_AGG,					/* aggregate a batch into a task's table */
	GX_REQ_TASK_FETCH,			/* copy a task's groups to the arena */
	GX_REQ_TASK_DESTROY,		/* free a task */
	GX_REQ_CALIBRATE,			/* measure the link and the device */
	GX_REQ_JOIN_BUILD,			/* upload inner keys, build join hash tables (task) */
	GX_REQ_JOIN,				/* probe a task's join tables with a batch */
	GX_REQ_RTREE_LOAD,			/* reserve a gpuext_gist tree mirror, copy its first part (task) */
	GX_REQ_RTREE_FILL,			/* copy a further part of a tree mirror into its task */
	GX_REQ_RTREE_SEARCH,		/* walk a task's tree mirror for a batch of query boxes */
	GX_REQ_PTREE_LOAD,			/* a gpuext_ptree mirror to device memory (task), first part */
	GX_REQ_PTREE_UPLOAD,		/* more of a mirror, into its task at an offset */
	GX_REQ_PTREE_LOOKUP,		/* look a batch of keys up in a task's mirror */
	GX_REQ_PTREE_MERGE,			/* sort, deduplicate and rank a delta in a task's mirror */
	GX_REQ_KIND_MAX
} GxRequestKind;

/* Does a request of this kind make a task (its memory reserved for it)? */
GX_FUNC int
gx_kind_creates_task(int kind)
{
	return kind == GX_REQ_TASK_CREATE || kind == GX_REQ_JOIN_BUILD ||
		kind == GX_REQ_RTREE_LOAD || kind == GX_REQ_PTREE_LOAD;
}

/* Does a request of this kind work on a task that exists (batch->task_id)? */
GX_FUNC int
gx_kind_uses_task(int kind)
{
	return kind == GX_REQ_AGG || kind == GX_REQ_JOIN || kind == GX_REQ_TASK_FETCH ||
		kind == GX_REQ_TASK_DESTROY || kind == GX_REQ_RTREE_FILL ||
		kind == GX_REQ_RTREE_SEARCH || kind == GX_REQ_PTREE_UPLOAD ||
		kind == GX_REQ_PTREE_LOOKUP || kind == GX_REQ_PTREE_MERGE;
}

/*
 * May only the process that created the task use it with this kind?  A
 * gpuext_ptree mirror is one backend's (a GpuAgg group table is shared by
 * the processes of a parallel query).
 */
GX_FUNC int
gx_kind_owner_only(int kind)
{
	return kind == GX_REQ_PTREE_UPLOAD || kind == GX_REQ_PTREE_LOOKUP ||
		kind == GX_REQ_PTREE_MERGE;
}

/* Does a request of this kind read the heap pages its batch lists? */
GX_FUNC int
gx_kind_reads_pages(int kind)
{
	return kind == GX_REQ_PAGE_COUNT || kind == GX_REQ_SCAN ||
		kind == GX_REQ_AGG || kind == GX_REQ_JOIN;
}

/* status of a finished request */
typedef enum GxStatus
{
	GX_OK = 0,
	GX_ERR_OUT_OF_MEMORY,		/* device memory reservation failed */
	GX_ERR_DEVICE,				/* CUDA reported an error */
	GX_ERR_CANCELLED,			/* the owner cancelled it */
	GX_ERR_SERVICE_GONE,		/* the service stopped while it was queued */
	GX_ERR_BAD_REQUEST,			/* malformed request (a bug) */
	GX_ERR_NO_DEVICE			/* no usable GPU */
} GxStatus;

/* debug faults that a request can ask the service to simulate */
typedef enum GxFault
{
	GX_FAULT_NONE = 0,
	GX_FAULT_ALLOC,				/* the next device allocation fails */
	GX_FAULT_KERNEL,			/* the kernel reports an error */
	GX_FAULT_SERVICE_DIE,		/* the service exits while running it */
	GX_FAULT_TRANSFER_STALL,	/* the transfer stalls until cancelled */
	GX_FAULT_NO_DSM				/* (host only, never sent) a parallel GpuJoin's
								 * leader finds no DSM segment for its inner
								 * tables */
} GxFault;

/* errors a kernel reports in GxBatch.kernel_error */
#define GX_KERR_NONE			0
#define GX_KERR_INJECTED		1	/* fault injection asked for it */
#define GX_KERR_BAD_PROGRAM		2	/* malformed device program */
#define GX_KERR_NO_TASK			3	/* the task does not exist */

/* page flags in a batch */
#define GX_PAGE_ALL_VISIBLE		0x0001
#define GX_PAGE_CACHED			0x0002	/* read from the column cache: buf_id
										 * is the cache's page slot */

/*
 * One heap page of a batch.  The page itself stays in shared_buffers
 * (pinned by the backend for the life of the batch); the device reads it
 * in place through the registered segment.  For pages that are not
 * all-visible, 'visible' has a bit per line pointer (bit i-1 for offset
 * i) set for tuples visible to the query's snapshot.
 */
typedef struct GxPageRef
{
	uint32_t	buf_id;			/* shared buffer index (buffer - 1) */
	uint16_t	nline;			/* line pointers to consider */
	uint16_t	flags;			/* GX_PAGE_* */
	uint32_t	blkno;			/* block number, for reporting */
	uint32_t	visible[GX_BITMAP_WORDS];
} GxPageRef;

/* per-page result of GX_REQ_PAGE_COUNT */
typedef struct GxPageCount
{
	uint32_t	nnormal;		/* LP_NORMAL line pointers */
	uint32_t	nvisible;		/* of those, visible to the snapshot */
} GxPageCount;

/*
 * Header of a batch in the DMA arena (or in backend memory for the CPU
 * engine).  Offsets are relative to the header, so the same bytes are
 * valid in any address space.
 */
typedef struct GxBatch
{
	uint32_t	kind;			/* GxRequestKind */
	uint32_t	npages;
	uint32_t	pages_offset;	/* GxPageRef[npages] */
	uint32_t	program_offset; /* device program (GX_REQ_SCAN) */
	uint32_t	program_len;
	uint32_t	out_offset;		/* results */
	uint32_t	out_len;
	uint32_t	abort_flag;		/* set by the service to stop a kernel */
	uint32_t	kernel_error;	/* set by a kernel that failed (GX_KERR_*) */
	uint32_t	cache_slot;		/* GPU: column cache registry slot + 1 of
								 * GX_PAGE_CACHED pages, 0 = none */
	uint64_t	arg;			/* kind-specific argument */
	uint64_t	arg2;
	uint64_t	reserve_bytes;	/* device memory to reserve */
	uint32_t	task_id;		/* device-resident state it works on */
	uint32_t	cache_id;		/* column cache of GX_PAGE_CACHED pages
								 * (CPU engine: its table id), 0 = none */
	uint64_t	result;			/* kind-specific result (task id, count) */
	uint64_t	cache_gen;		/* GPU: that cache's generation */
} GxBatch;

GX_FUNC const GxPageRef *
gx_batch_pages(const GxBatch *b)
{
	return (const GxPageRef *) ((const char *) b + b->pages_offset);
}

GX_FUNC void *
gx_batch_out(GxBatch *b)
{
	return (void *) ((char *) b + b->out_offset);
}

/* ---------------------------------------------------------------------
 * Reading a heap page: the per-page semantics both engines share
 * ---------------------------------------------------------------------
 */
GX_FUNC uint32_t
gx_load_u32(const unsigned char *p)
{
	return *(const uint32_t *) p;
}

GX_FUNC uint16_t
gx_load_u16(const unsigned char *p)
{
	return *(const uint16_t *) p;
}

/* line pointer 'off' (1-based) of a page */
GX_FUNC uint32_t
gx_page_itemid(const unsigned char *page, uint32_t off)
{
	return gx_load_u32(page + GX_PAGE_HEADER_SIZE + (off - 1) * 4);
}

/* is tuple 'off' (1-based) visible according to the page reference? */
GX_FUNC int
gx_tuple_visible(const GxPageRef *ref, uint32_t off)
{
	if (ref->flags & GX_PAGE_ALL_VISIBLE)
		return 1;
	return (ref->visible[(off - 1) >> 5] >> ((off - 1) & 31)) & 1;
}

/* a bitmap word of a per-page tuple set */
GX_FUNC void
gx_bitmap_set(uint32_t *bitmap, uint32_t off)
{
	bitmap[(off - 1) >> 5] |= (uint32_t) 1 << ((off - 1) & 31);
}

GX_FUNC int
gx_bitmap_test(const uint32_t *bitmap, uint32_t off)
{
	return (bitmap[(off - 1) >> 5] >> ((off - 1) & 31)) & 1;
}

/*
 * Count the normal and the visible tuples of one line pointer: the
 * per-row step of GX_REQ_PAGE_COUNT.
 */
GX_FUNC void
gx_count_tuple(const unsigned char *page, const GxPageRef *ref,
			   uint32_t off, uint32_t *nnormal, uint32_t *nvisible)
{
	uint32_t	lp = gx_page_itemid(page, off);

	if (GX_LP_FLAGS(lp) != GX_LP_NORMAL)
		return;
	(*nnormal)++;
	if (gx_tuple_visible(ref, off))
		(*nvisible)++;
}

#endif							/* GX_COMMON_H */
