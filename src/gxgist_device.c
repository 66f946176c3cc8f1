/*-------------------------------------------------------------------------
 * gxgist_device.c
 *		Batched gpuext_gist searches through the GPU service: a copy of the
 *		tree in device memory for the life of a scan or join node, and the
 *		requests that walk it for batches of probes.
 *
 * A node (an index scan, a GistJoin, one gpuext_gist_probe call) owns a
 * GxgDevice.  Its first batch of at least gpuext.gist_gpu_min_batch probes
 * copies the index into a mirror (src/gxgist_mirror.c) under the index's
 * share lock, and sends it to the service, which keeps it in a task
 * (GX_REQ_RTREE_LOAD, then GX_REQ_RTREE_FILL for the parts that did not
 * fit one request); the host copy is then freed.  Every batch of the node
 * is then one or more GX_REQ_RTREE_SEARCH requests.
 *
 * Within a node the copy is exact for MVCC snapshots (callers pass no
 * GxgDevice otherwise): an entry inserted after the copy was made belongs
 * to a row the snapshot cannot see, and an entry that vacuum removed since
 * pointed to a row dead to every snapshot, whose slot, if reused, holds a
 * row this snapshot cannot see either; the heap fetch drops both (device
 * results are never counted without a fetch).
 *
 * Across nodes and queries, with gpuext.gist_device_cache (off by default
 * until it has run on a GPU): a GPU copy is kept for the session (up to
 * GXG_DEVICE_COPIES, least recently used out, and within the device copy
 * quota: gpuext.device_copy_memory and gpuext.device_copy_memory_total;
 * a copy over it stays the node's own) with the index's state when
 * it was made: the metapage's build id (a new one for every build, REINDEX
 * and TRUNCATE included, with the relfilenode) and insert count (every
 * insert bumps it in its WAL record, so standbys see it too).  A later node
 * whose snapshot was taken before it reads the same state uses the copy:
 * no entry was inserted since (an insert precedes its commit), and removed
 * entries are as above.  Any insert makes the copy unused; it is freed at
 * the next look-up once no node of the backend uses it, or at the end of
 * the session, or by an aborted transaction (with the setting off, at the
 * next GPU node).  Otherwise, and for indexes built before the count
 * existed (build id 0), a node gets its own copy, freed at its end (or
 * with its resource owner on an error, or by the service when the backend
 * is gone).  The CPU engine's copy (gist_walk = mirror) is per node.
 *
 * Bounds: a request carries up to a quarter of the DMA arena (probes and
 * results); its visit lists hold visit_cap >= max(probes, nodes) visits,
 * so a single probe never overflows them (a node has one parent).  A
 * request whose visits overflow is split in two; one whose results do not
 * fit is sent again with room for the count the first run reported
 * ("size first, then run"), or split when that is more than a request can
 * carry; a single probe with more results than that is handed back to the
 * caller, which walks the pages for it.
 *
 * gpuext.gist_walk = mirror runs the same requests on the CPU engine (the
 * mirror stays in backend memory, registered as a CPU engine table) for
 * every search: so the requests, the bounds and the level driver are
 * tested without a GPU.  A GPU failure applies gpuext.cpu_fallback: an
 * ERROR, or this batch and the node's later ones walk the pages.
 *
 * IDENTIFICATION
 *		src/gxgist_device.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include <math.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gxgist.h"
#include "quota.h"

typedef enum GxgDeviceState
{
	GXG_DEV_UNDECIDED,			/* no batch has wanted it yet */
	GXG_DEV_READY,				/* the tree is on the device (or the CPU engine's) */
	GXG_DEV_OFF					/* the pages walk, for the rest of the node */
} GxgDeviceState;

/* what a node knows of the tree copy it searches (kept with session copies) */
typedef struct GxgTreeCopy
{
	GxgMetaVersion version;		/* the index's state when the copy was made */
	uint32		nblocks;
	uint32		root;
	uint32		root_level;
	uint64		tree_bytes;
	/* for the result room of a request (gxg_device_room) */
	double		leaf_entries;	/* leaf entries of the copy */
	double		leaf_w;			/* their mean width and height */
	double		leaf_h;
	double		area_w;			/* the width and height of their bounds */
	double		area_h;
} GxgTreeCopy;

struct GxgDevice
{
	MemoryContext cxt;			/* the CPU engine's mirror, for mirror mode */
	GxgDeviceState state;
	GxEngine	engine;
	uint32		task_id;		/* GPU: the task holding the tree */
	uint32		cpu_table;		/* CPU engine: the table id of the mirror */
	GxRtMirror *mirror;			/* CPU engine: the mirror */
	GxgTreeCopy tree;			/* the copy the GPU or the CPU engine searches */
	uint64		requests;
	uint64		splits;			/* requests split in two (visits, results) */
	uint64		resends;		/* requests sent again with more room */
	uint64		probes_left;	/* probes handed back for the pages walk */
	uint64		seen_probes;	/* probes and results of this node's requests */
	uint64		seen_pairs;
	bool		cached;			/* task_id is a session copy (gxg_copies) */
	bool		borrowed;		/* task_id is a parallel leader's copy (never
								 * freed here) */
	char		why[GX_ERRLEN]; /* why the GPU is not used, if it was wanted */
};

/* what a parallel leader tells its workers of its device copy */
typedef struct GxgDeviceShared
{
	uint32		task_id;		/* 0: none, each participant decides alone */
	GxgTreeCopy tree;
} GxgDeviceShared;

/* a range of a batch's probes still to send, and the result room to ask */
typedef struct GxgRange
{
	uint32		lo;
	uint32		hi;
	uint64		room;
} GxgRange;

/*
 * Device copies kept for the session, by index state: a copy made when the
 * index's metapage read (build id, insert count) serves every later node
 * that reads the same pair.  GPU copies only.
 */
#define GXG_DEVICE_COPIES	4

typedef struct GxgDeviceCopy
{
	Oid			relid;			/* InvalidOid: an unused slot */
	RelFileNode node;
	GxgTreeCopy tree;			/* its version matched: build, inserts */
	uint32		task_id;		/* a session task */
	uint64		last_use;
	int			users;			/* nodes using it now (0 at a transaction's end) */
	bool		stale;			/* matches no state: freed once unused */
} GxgDeviceCopy;

bool		gxg_device_cache = false;	/* gpuext.gist_device_cache */

static GxgDeviceCopy gxg_copies[GXG_DEVICE_COPIES];
static uint64 gxg_copy_clock = 0;
static bool gxg_copy_callback = false;

/*
 * The end of a transaction ends every node: no copy has users.  (Nodes
 * that an error stopped never released theirs.)
 */
static void
gxg_copy_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
		for (int i = 0; i < GXG_DEVICE_COPIES; i++)
			gxg_copies[i].users = 0;
}

/* Start a device context for a node, in the current memory context */
GxgDevice *
gxg_device_create(void)
{
	GxgDevice  *dev = palloc0(sizeof(GxgDevice));

	dev->cxt = AllocSetContextCreate(CurrentMemoryContext, "gpuext_gist tree mirror",
									 ALLOCSET_DEFAULT_SIZES);
	dev->state = GXG_DEV_UNDECIDED;
	return dev;
}

/*
 * Should a search of ndrive probes go through the service?  Single probes
 * and small batches walk the pages; gpuext.gist_walk = mirror sends every
 * search to the CPU engine's copy (tests).
 */
bool
gxg_device_wanted(GxgDevice *dev, uint32 ndrive)
{
	if (dev == NULL || dev->state == GXG_DEV_OFF || ndrive == 0)
		return false;
	if (dev->state == GXG_DEV_READY && !dev->engine.use_gpu)
		return true;			/* the CPU engine's copy, for this node */
	switch (gxg_walk_engine)
	{
		case GXG_WALK_PAGES:
			return false;
		case GXG_WALK_MIRROR:
			return true;
		default:
			/* gpuext.enabled = off: nothing offloaded */
			return gpuext_enabled && ndrive >= (uint32) gxg_gpu_min_batch;
	}
}

/*
 * A node is done with the session copy whose task is task_id; failed: the
 * copy is not to be used again.  Returns true when the caller must free the
 * task (no longer a session copy, and unused).
 */
static bool
gxg_copy_release(uint32 task_id, bool failed)
{
	for (int i = 0; i < GXG_DEVICE_COPIES; i++)
	{
		GxgDeviceCopy *c = &gxg_copies[i];

		if (c->relid == InvalidOid || c->task_id != task_id)
			continue;
		if (c->users > 0)
			c->users--;
		if (failed)
			c->stale = true;
		if (c->stale && c->users == 0)
		{
			memset(c, 0, sizeof(*c));
			return true;
		}
		return false;
	}
	return true;				/* forgotten meanwhile (a gone task) */
}

/* Stop using the device for this node: free the task, walk the pages */
static void
gxg_device_off(GxgDevice *dev, const char *why)
{
	/* a session copy that failed is not kept either; a leader's is its own */
	if (dev->task_id != 0 && !dev->borrowed &&
		(!dev->cached || gxg_copy_release(dev->task_id, true)))
		gx_task_destroy(dev->task_id);
	dev->cached = false;
	dev->borrowed = false;
	dev->task_id = 0;
	dev->state = GXG_DEV_OFF;
	if (why)
		strlcpy(dev->why, why, sizeof(dev->why));
}

/*
 * Copy the tree under the lock that keeps inserts out (on a standby, where
 * replay takes no such lock, again until no split was replayed meanwhile),
 * and check the copy's structure, which the engines trust
 * (gxg_mirror_check).
 */
static GxRtMirror *
gxg_device_copy_tree(Relation index, uint64 *bytes)
{
	bool		locked = !RecoveryInProgress();
	GxRtMirror *m;

	if (locked)
		LockPage(index, GXG_META_BLKNO, ShareLock);
	for (;;)
	{
		BlockNumber root;
		uint64		before;
		uint64		after;

		gxg_batch_meta(index, &root, &before, NULL);
		m = gxg_mirror_build(index, bytes);
		gxg_batch_meta(index, &root, &after, NULL);
		if (before == after)
			break;
		pfree(m);
	}
	if (locked)
		UnlockPage(index, GXG_META_BLKNO, ShareLock);
	gxg_mirror_check(index, m);
	return m;
}

/*
 * The leaf entries of a copy: their count, mean size and bounds, for
 * gxg_device_room (NaN and infinite boxes left out of the sizes)
 */
static void
gxg_device_leaf_stats(GxgDevice *dev, const GxRtMirror *m)
{
	const uint16_t *counts = gx_rt_mirror_counts(m);
	const GxRtEntry *nodes = gx_rt_mirror_nodes(m);
	double		n = 0;
	double		nsized = 0;
	double		sw = 0;
	double		sh = 0;
	double		xlo = INFINITY;
	double		ylo = INFINITY;
	double		xhi = -INFINITY;
	double		yhi = -INFINITY;

	for (uint32 b = 0; b < m->nblocks; b++)
	{
		const GxRtEntry *e = nodes + (size_t) b * m->node_stride;
		int			c = counts[b] & GX_RT_COUNT_MASK;

		if ((counts[b] & GX_RT_NODE_BIT) == 0 || (counts[b] & GX_RT_LEAF_BIT) == 0)
			continue;
		n += c;
		for (int i = 0; i < c; i++)
		{
			double		w = e[i].xhi - e[i].xlo;
			double		h = e[i].yhi - e[i].ylo;

			if (!isfinite(w) || !isfinite(h))
				continue;
			nsized++;
			sw += w;
			sh += h;
			xlo = Min(xlo, e[i].xlo);
			ylo = Min(ylo, e[i].ylo);
			xhi = Max(xhi, e[i].xhi);
			yhi = Max(yhi, e[i].yhi);
		}
	}
	dev->tree.leaf_entries = n;
	dev->tree.leaf_w = nsized > 0 ? sw / nsized : 0;
	dev->tree.leaf_h = nsized > 0 ? sh / nsized : 0;
	dev->tree.area_w = nsized > 0 ? xhi - xlo : 0;
	dev->tree.area_h = nsized > 0 ? yhi - ylo : 0;
}

/*
 * The result room to ask for probes q[0..nq): the pairs this node's
 * requests have had a probe so far, or before any, for && probes, the
 * entries that a box of the query's size grown by the mean leaf size
 * would meet if they were spread evenly over their bounds (4 a probe for
 * the other strategies), with a margin.  A guess: a request whose results
 * do not fit is sent again with room for their count.
 */
static uint64
gxg_device_room(GxgDevice *dev, const GxRtQuery *q, uint32 nq)
{
	double		area = dev->tree.area_w * dev->tree.area_h;
	double		guess = 0;

	if (dev->seen_probes > 0)
		guess = (double) nq * dev->seen_pairs / dev->seen_probes;
	else
	{
		for (uint32 i = 0; i < nq; i++)
		{
			double		w = q[i].xhi - q[i].xlo + dev->tree.leaf_w;
			double		h = q[i].yhi - q[i].ylo + dev->tree.leaf_h;
			double		share = 1.0;

			if (q[i].strategy != GX_RT_OVERLAP)
			{
				guess += 4;
				continue;
			}
			if (area > 0 && isfinite(w) && isfinite(h))
				share = Min(Max(w, 0) * Max(h, 0) / area, 1.0);
			guess += share * dev->tree.leaf_entries;
		}
	}
	guess = guess * 1.25 + 1024;
	return guess >= (double) PG_UINT32_MAX ? PG_UINT32_MAX : (uint64) guess;
}

/* Empty a session copy's slot and free its device task */
static void
gxg_copy_free(GxgDeviceCopy *c)
{
	uint32		task = c->task_id;

	memset(c, 0, sizeof(*c));
	gx_task_destroy(task);
}

/*
 * The session's copy of index at state v (its build and inserts), or NULL.
 * Copies whose task is gone (an aborted transaction, a restarted service)
 * are forgotten; copies of an older state of the same index are freed
 * (once no node of this backend uses them).
 */
static GxgDeviceCopy *
gxg_copy_find(Relation index, const GxgMetaVersion *v)
{
	GxgDeviceCopy *found = NULL;

	for (int i = 0; i < GXG_DEVICE_COPIES; i++)
	{
		GxgDeviceCopy *c = &gxg_copies[i];

		if (c->relid == InvalidOid)
			continue;
		if (!gx_session_task_valid(c->task_id))
		{
			memset(c, 0, sizeof(*c));
			continue;
		}
		if (c->relid != RelationGetRelid(index))
			continue;
		if (!c->stale && RelFileNodeEquals(c->node, index->rd_node) &&
			c->tree.version.build_id == v->build_id && c->tree.version.inserts == v->inserts)
			found = c;
		else if (c->users == 0)
			gxg_copy_free(c);
		else
			c->stale = true;	/* freed when no node uses it */
	}
	return found;
}

/* Free the session copies no node uses (gpuext.gist_device_cache off) */
static void
gxg_copy_free_unused(void)
{
	for (int i = 0; i < GXG_DEVICE_COPIES; i++)
	{
		GxgDeviceCopy *c = &gxg_copies[i];
		uint32		task = c->task_id;

		if (c->relid == InvalidOid || c->users > 0)
			continue;
		memset(c, 0, sizeof(*c));
		if (gx_session_task_valid(task))
			gx_task_destroy(task);
	}
}

/*
 * Keep dev's new device copy (task) for the session as the copy of index
 * at state dev->tree.version, in place of the least recently used one
 */
static void
gxg_copy_store(GxgDevice *dev, Relation index)
{
	GxgDeviceCopy *slot = NULL;
	char		err[GX_ERRLEN];

	if (!gxg_copy_callback)
	{
		RegisterXactCallback(gxg_copy_xact_callback, NULL);
		gxg_copy_callback = true;
	}
	for (int i = 0; i < GXG_DEVICE_COPIES; i++)
	{
		GxgDeviceCopy *c = &gxg_copies[i];

		if (c->relid != InvalidOid && c->users > 0)
			continue;
		if (slot == NULL || c->relid == InvalidOid ||
			(slot->relid != InvalidOid && c->last_use < slot->last_use))
			slot = c;
	}
	if (slot == NULL)
		return;					/* every copy in use: this one is the node's */
	if (slot->relid != InvalidOid)
		gxg_copy_free(slot);
	/* within this backend's and everyone's share, else the node's own copy */
	if (!gx_device_copy_reserve(dev->tree.tree_bytes, err))
	{
		elog(DEBUG1, "gpuext_gist: the device copy of \"%s\" is not kept: %s",
			 RelationGetRelationName(index), err);
		return;
	}
	gx_task_keep_for_session(dev->task_id, dev->tree.tree_bytes);
	slot->relid = RelationGetRelid(index);
	slot->node = index->rd_node;
	slot->tree = dev->tree;
	slot->task_id = dev->task_id;
	slot->last_use = ++gxg_copy_clock;
	slot->users = 1;
	slot->stale = false;
	dev->cached = true;
}

/* Take the session copy c for dev's node */
static void
gxg_copy_use(GxgDevice *dev, GxgDeviceCopy *c)
{
	c->last_use = ++gxg_copy_clock;
	c->users++;
	dev->task_id = c->task_id;
	dev->tree = c->tree;
	dev->cached = true;
	dev->mirror = NULL;
	dev->state = GXG_DEV_READY;
}


/*
 * The first wanted batch: pick the engine, copy the tree and put it where
 * that engine searches it.  Returns false when the node walks the pages.
 */
static bool
gxg_device_prepare(GxgDevice *dev, Relation index)
{
	GxRtMirror *m;
	uint64		bytes;
	int			status = GX_OK;
	char		err[GX_ERRLEN];
	GxgMetaVersion version;

	if (gxg_walk_engine == GXG_WALK_MIRROR)
		gx_engine_start_with_mode(&dev->engine, GPUEXT_DEVICE_CPU);
	else
	{
		gx_engine_start(&dev->engine);
		if (!dev->engine.use_gpu)
		{
			const char *why = "gpuext.device is cpu";

			if (gpuext_device_mode != GPUEXT_DEVICE_CPU)
				(void) gx_service_has_gpu(&why);
			gxg_device_off(dev, why ? why : "no GPU");
			return false;
		}
	}
	/* a failed search is redone by the pages walk, not by the engine */
	dev->engine.rerun_on_cpu = false;

	/*
	 * The index's state, read before the copy: an entry inserted or removed
	 * meanwhile moves it on, and the copy is then not taken for the index
	 * as it is (the session cache, gxg_device_mark_all_visible).  Read after
	 * this node's snapshot was taken.
	 */
	gxg_meta_version(index, &version);
	dev->tree.version = version;
	if (!dev->engine.use_gpu)
	{
		MemoryContext old = MemoryContextSwitchTo(dev->cxt);

		m = gxg_device_copy_tree(index, &bytes);
		MemoryContextSwitchTo(old);
		dev->mirror = m;
		dev->cpu_table = gx_cpu_table_register(m, dev->cxt);
	}
	else
	{
		uint64		limit = gx_gpu_memory_limit_bytes();
		uint64		part = Max(Min(gx_shared->arena_size / 8, 64 * 1024 * 1024),
							   1024 * 1024);
		GxgDeviceCopy *c;

		/*
		 * The session's copy when no entry was inserted since: one would
		 * have moved the count (its insert precedes its commit, and so this
		 * snapshot); an entry removed since pointed to a row dead to every
		 * snapshot, which the heap fetch drops (see the top of the file).
		 */
		if (!gxg_device_cache)
			gxg_copy_free_unused();
		else if (version.build_id != 0 &&
				 (c = gxg_copy_find(index, &version)) != NULL &&
				 (limit == 0 || c->tree.tree_bytes <= limit))
		{
			gxg_copy_use(dev, c);
			return true;
		}
		m = gxg_device_copy_tree(index, &bytes);
		if (limit > 0 && bytes > limit)
		{
			pfree(m);
			gxg_device_off(dev, "the tree exceeds gpuext.gpu_memory_limit");
			return false;
		}
		dev->task_id = gx_mirror_task_create(GX_REQ_RTREE_LOAD, GX_REQ_RTREE_FILL, m, bytes,
											 part, &status, err);
		if (dev->task_id == 0)
		{
			pfree(m);
			gx_device_table_unavailable(status, err,
										psprintf("gpuext_gist searches of \"%s\" walk the index pages on the CPU",
												 RelationGetRelationName(index)));
			dev->engine.fallback_batches++;
			if (gx_shared)
				pg_atomic_fetch_add_u64(&gx_shared->fallbacks, 1);
			gxg_device_off(dev, err);
			return false;
		}
		dev->mirror = NULL;
	}
	gxg_device_leaf_stats(dev, m);
	dev->tree.nblocks = m->nblocks;
	dev->tree.root = m->root;
	dev->tree.root_level = m->root_level;
	dev->tree.tree_bytes = bytes;
	if (dev->engine.use_gpu)
	{
		pfree(m);
		if (gxg_device_cache && version.build_id != 0)
			gxg_copy_store(dev, index);
	}
	dev->state = GXG_DEV_READY;
	return true;
}

/* Append n result pairs (query numbers moved by 'base') to a growable list */
static void
gxg_device_append(GxRtPair **pairs, int64 *npairs, int64 *cap, const GxRtPair *src,
				  uint64 n, uint32 base)
{
	if (*npairs + (int64) n > *cap)
	{
		int64		want = Max(*cap * 2, *npairs + (int64) n);

		want = Max(want, 256);
		*pairs = *pairs ? repalloc_huge(*pairs, want * sizeof(GxRtPair))
			: palloc_extended(want * sizeof(GxRtPair), MCXT_ALLOC_HUGE);
		*cap = want;
	}
	for (uint64 i = 0; i < n; i++)
	{
		GxRtPair   *p = &(*pairs)[*npairs + i];

		*p = src[i];
		p->query += base;
	}
	*npairs += n;
}

/*
 * Walk the device's copy for drive[0..ndrive) with the filter keys; the
 * pairs (query = position in drive; unsorted) in *pairs and *npairs, and
 * the probes whose results did not fit any request in *left (the caller
 * walks the pages for them).  Returns false when the device is not (or no
 * longer) used: the caller walks the pages for the whole batch.
 */
bool
gxg_device_walk(GxgDevice *dev, Relation index, const GxRtQuery *drive, uint32 ndrive,
				const GxRtQuery *filter, int nfilter, int nfilterkeys,
				GxRtPair **pairs, int64 *npairs, uint32 **left, uint32 *nleft)
{
	uint64		max_bytes;
	uint64		prog_filter = (uint64) nfilter * sizeof(GxRtQuery);
	uint32		chunk;
	GxgRange   *stack;
	int			nstack = 0;
	int			stack_cap;
	int64		cap = 0;
	uint32		left_cap = 0;

	*pairs = NULL;
	*npairs = 0;
	*left = NULL;
	*nleft = 0;
	if (dev->state == GXG_DEV_UNDECIDED && !gxg_device_prepare(dev, index))
		return false;
	if (dev->state != GXG_DEV_READY)
		return false;

	/* a request carries up to a quarter of the arena (64 MB on the CPU engine) */
	max_bytes = gx_shared && dev->engine.use_gpu ? gx_shared->arena_size / 4 : 64 * 1024 * 1024;
	max_bytes = Min(max_bytes, (uint64) PG_UINT32_MAX / 2);
	chunk = (uint32) Max(Min((uint64) ndrive,
							 (max_bytes / 2 - Min(prog_filter, max_bytes / 4)) / sizeof(GxRtQuery)), 1);

	stack_cap = 64;
	stack = palloc(stack_cap * sizeof(GxgRange));
	/* the chunks pushed last first, so that they are sent in order */
	for (int64 lo = ((int64) ndrive - 1) / chunk * chunk; lo >= 0; lo -= chunk)
	{
		if (nstack == stack_cap)
		{
			stack_cap *= 2;
			stack = repalloc(stack, stack_cap * sizeof(GxgRange));
		}
		stack[nstack].lo = (uint32) lo;
		stack[nstack].hi = (uint32) Min((uint64) lo + chunk, ndrive);
		stack[nstack].room = 0;
		nstack++;
	}

	while (nstack > 0)
	{
		GxgRange	r = stack[--nstack];
		uint32		nq = r.hi - r.lo;
		uint64		prog_len = gx_rt_search_program_bytes(nq, (uint32) nfilter);
		Size		out_off = TYPEALIGN(16, TYPEALIGN(16, sizeof(GxBatch)) + prog_len);
		uint64		max_room = (max_bytes - Min(max_bytes, out_off + sizeof(GxRtSearchOut))) /
			sizeof(GxRtPair);
		uint64		room;
		GxPendingBatch pb;
		GxBatch    *b;
		GxRtSearch *s;
		GxRtSearchOut *out;
		uint64		visit_cap;
		bool		split = false;
		bool		resend = false;

		CHECK_FOR_INTERRUPTS();
		room = r.room ? r.room : gxg_device_room(dev, drive + r.lo, nq);
		room = Max(Min(room, max_room), 1);
		visit_cap = Max((uint64) nq * 8, (uint64) dev->tree.nblocks);
		visit_cap = Min(visit_cap, (uint64) PG_INT32_MAX);

		b = gx_engine_batch_alloc(&dev->engine, &pb, out_off + sizeof(GxRtSearchOut) +
								  room * sizeof(GxRtPair));
		if (dev->engine.failed || (dev->engine.use_gpu && pb.req == NULL))
		{
			/* no room in the arena: the policy was applied (an ERROR when off) */
			gx_engine_batch_free(&pb);
			gxg_device_off(dev, "the gpuext DMA arena has no room for the batch");
			pfree(stack);
			return false;
		}
		b->kind = GX_REQ_RTREE_SEARCH;
		b->pages_offset = sizeof(GxBatch);
		b->program_offset = TYPEALIGN(16, sizeof(GxBatch));
		b->program_len = (uint32) prog_len;
		b->out_offset = (uint32) out_off;
		b->out_len = (uint32) (sizeof(GxRtSearchOut) + room * sizeof(GxRtPair));
		b->task_id = dev->engine.use_gpu ? dev->task_id : dev->cpu_table;
		s = (GxRtSearch *) ((char *) b + b->program_offset);
		memset(s, 0, sizeof(GxRtSearch));
		s->nqueries = nq;
		s->nfilter = (uint32) nfilter;
		s->nfilterkeys = (uint32) nfilterkeys;
		s->visit_cap = (uint32) visit_cap;
		s->nblocks = dev->tree.nblocks;
		s->root = dev->tree.root;
		s->root_level = dev->tree.root_level;
		memcpy((GxRtQuery *) (s + 1), drive + r.lo, (Size) nq * sizeof(GxRtQuery));
		if (nfilter > 0)
			memcpy((GxRtQuery *) (s + 1) + nq, filter, prog_filter);
		out = (GxRtSearchOut *) ((char *) b + b->out_offset);
		memset(out, 0, sizeof(GxRtSearchOut));

		gx_engine_submit(&dev->engine, &pb);
		dev->requests++;
		if (!gx_engine_wait(&dev->engine, &pb))
		{
			/* the GPU failed and cpu_fallback allows the CPU: the pages walk */
			gx_engine_batch_free(&pb);
			gxg_device_off(dev, dev->engine.failure);
			pfree(stack);
			if (*pairs)
				pfree(*pairs);
			if (*left)
				pfree(*left);
			*pairs = NULL;
			*npairs = 0;
			*left = NULL;
			*nleft = 0;
			return false;
		}
		if (b->kernel_error != GX_KERR_NONE)
			elog(ERROR, "gpuext_gist: the search request of index \"%s\" was malformed",
				 RelationGetRelationName(index));
		if (out->flags & GX_RT_CORRUPT)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\": a child pointer or a node level is out of place",
							RelationGetRelationName(index)),
					 errhint("Check it with gpuext_gist_check(); REINDEX rebuilds it.")));
		if (out->flags & GX_RT_OVERFLOW_VISITS)
			split = true;
		else if (out->npairs > room)
		{
			if (out->npairs <= max_room)
				resend = true;
			else
				split = true;
		}
		else
			gxg_device_append(pairs, npairs, &cap,
							  (const GxRtPair *) ((char *) out + sizeof(GxRtSearchOut)),
							  out->npairs, r.lo);
		if (!(out->flags & GX_RT_OVERFLOW_VISITS))
		{
			dev->seen_probes += nq;
			dev->seen_pairs += out->npairs;
		}

		if (nstack + 2 > stack_cap)
		{
			stack_cap *= 2;
			stack = repalloc(stack, stack_cap * sizeof(GxgRange));
		}
		if (resend)
		{
			dev->resends++;
			stack[nstack].lo = r.lo;
			stack[nstack].hi = r.hi;
			stack[nstack].room = out->npairs;
			nstack++;
		}
		else if (split && nq > 1)
		{
			uint32		mid = r.lo + nq / 2;

			dev->splits++;
			stack[nstack].lo = mid;
			stack[nstack].hi = r.hi;
			stack[nstack].room = 0;
			stack[nstack + 1].lo = r.lo;
			stack[nstack + 1].hi = mid;
			stack[nstack + 1].room = 0;
			nstack += 2;
		}
		else if (split)
		{
			/* one probe with more results than a request carries */
			if (*nleft == left_cap)
			{
				left_cap = left_cap ? left_cap * 2 : 16;
				*left = *left ? repalloc(*left, left_cap * sizeof(uint32))
					: palloc(left_cap * sizeof(uint32));
			}
			(*left)[(*nleft)++] = r.lo;
			dev->probes_left++;
		}
		gx_engine_batch_free(&pb);
	}
	pfree(stack);
	return true;
}

/*
 * Flag the device's result pairs whose heap page is all-visible
 * (gxg_mark_all_visible), when the node's copy is the index as it is now:
 * the same build, no insert and no removal since it was made, read under
 * the metapage's share lock, which is held through the visibility checks as
 * in the pages walk (vacuum's barrier, gxg_bulkdelete, waits for it).  A
 * copy made before a removal may hold entries whose heap items are gone;
 * its pairs keep pad 0 (fetched).  Not on a standby (no such lock).
 */
void
gxg_device_mark_all_visible(GxgDevice *dev, Relation index, Relation heap,
							GxRtPair *pairs, int64 n)
{
	GxgMetaVersion now;

	if (dev == NULL || dev->tree.version.build_id == 0 || n == 0 || RecoveryInProgress())
		return;
	LockPage(index, GXG_META_BLKNO, ShareLock);
	gxg_meta_version(index, &now);
	if (now.build_id == dev->tree.version.build_id && now.inserts == dev->tree.version.inserts &&
		now.removals == dev->tree.version.removals)
		gxg_mark_all_visible(heap, pairs, n);
	UnlockPage(index, GXG_META_BLKNO, ShareLock);
}

/* End of the node: free the task (or the CPU engine's copy) */
void
gxg_device_release(GxgDevice *dev)
{
	if (dev == NULL)
		return;
	/* a session copy stays for the next node; a leader's is its own */
	if (dev->task_id != 0 && !dev->borrowed &&
		(!dev->cached || gxg_copy_release(dev->task_id, false)))
		gx_task_destroy(dev->task_id);
	dev->task_id = 0;
	if (dev->cpu_table != 0)
		gx_cpu_table_unregister(dev->cpu_table, dev->mirror);
	dev->cpu_table = 0;
	dev->mirror = NULL;
	MemoryContextDelete(dev->cxt);
	pfree(dev);
}

/* The size of what gxg_device_share writes */
Size
gxg_device_shared_size(void)
{
	return sizeof(GxgDeviceShared);
}

/*
 * Parallel leader, before its workers start: make the device copy that the
 * node would make at its first batch, when batches of 'batch' probes would
 * go to the GPU, and describe it in 'shared' (gxg_device_shared_size
 * bytes) for the workers, so that a query copies the tree and uploads it
 * once, not once per participant (each copy of a 10 M-box tree took a
 * worker about a second, and as many times the device memory).  No copy
 * (the pages walk, the CPU engine, a failure): task_id 0, and every
 * participant decides alone as without workers.  The leader frees its copy
 * at the end of its node, after the workers have finished.
 */
void
gxg_device_share(GxgDevice *dev, Relation index, uint32 batch, void *shared)
{
	GxgDeviceShared *sh = (GxgDeviceShared *) shared;

	memset(sh, 0, sizeof(*sh));
	if (dev == NULL || !gxg_device_wanted(dev, batch))
		return;
	if (dev->state == GXG_DEV_UNDECIDED && !gxg_device_prepare(dev, index))
		return;
	if (dev->state != GXG_DEV_READY || !dev->engine.use_gpu)
		return;
	sh->task_id = dev->task_id;
	sh->tree = dev->tree;
}

/*
 * Parallel worker: search the leader's device copy described in 'shared'
 * (gxg_device_share).  The copy is the leader's: this node never frees it,
 * and a failed search sends this worker to the pages walk.  Without a copy,
 * or without the GPU here, the worker decides alone.
 */
void
gxg_device_adopt(GxgDevice *dev, const void *shared)
{
	const GxgDeviceShared *sh = (const GxgDeviceShared *) shared;

	if (dev == NULL || sh->task_id == 0 || dev->state != GXG_DEV_UNDECIDED)
		return;
	gx_engine_start(&dev->engine);
	if (!dev->engine.use_gpu)
		return;
	/* a failed search is redone by the pages walk, not by the engine */
	dev->engine.rerun_on_cpu = false;
	dev->task_id = sh->task_id;
	dev->tree = sh->tree;
	dev->borrowed = true;
	dev->state = GXG_DEV_READY;
}

/*
 * EXPLAIN ANALYZE: where the node's batches ran (not in regression test
 * mode, where the output must not depend on the machine)
 */
void
gxg_device_explain(GxgDevice *dev, ExplainState *es)
{
	const char *engine;

	if (dev == NULL || !es->analyze || gpuext_regression_test_mode)
		return;
	if (dev->state == GXG_DEV_READY)
		engine = dev->engine.use_gpu ? "GPU" : "CPU engine (tree mirror)";
	else
		engine = "CPU (index pages)";
	ExplainPropertyText("Engine", engine, es);
	if (dev->why[0] && dev->state == GXG_DEV_OFF)
		ExplainPropertyText("GPU Not Used", dev->why, es);
	if (dev->state == GXG_DEV_READY || dev->requests > 0)
	{
		ExplainPropertyInteger("GPU Batches", NULL, dev->engine.gpu_batches, es);
		ExplainPropertyInteger("CPU Engine Batches", NULL, dev->engine.cpu_batches, es);
		ExplainPropertyInteger("Fallbacks", NULL, dev->engine.fallback_batches, es);
		ExplainPropertyInteger("Split Requests", NULL, dev->splits, es);
		ExplainPropertyInteger("Resent Requests", NULL, dev->resends, es);
		ExplainPropertyInteger("Tree Bytes", "bytes", dev->tree.tree_bytes, es);
		if (dev->engine.use_gpu)
			ExplainPropertyFloat("Device Time", "ms", dev->engine.device_ms, 3, es);
	}
}
