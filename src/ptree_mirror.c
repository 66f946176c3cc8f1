/*-------------------------------------------------------------------------
 * ptree_mirror.c
 *		gpuext_ptree: the prefix-tree mirror of an index's main structure
 *		(layout and lookup in cuda/gx_ptree.h), built in the backend and
 *		kept per backend, and the batched lookups of a join.
 *
 * A scan with an = ANY(array) key of at least gpuext.ptree_batch_min
 * elements looks all of them up in one batch against the mirror instead
 * of descending the directory once per element.  The mirror belongs to one
 * generation of the index (whose main pages never change): any merge (and
 * so any VACUUM) makes a new generation, and the next batch rebuilds it.
 * The lookups themselves run on the GPU (a device copy of the mirror) or
 * on the CPU engine: src/ptree_device.c.
 *
 * The workers of a parallel PtreeBatchJoin map the leader's mirror instead
 * of each building one (the mirror is position-independent): the first
 * time a mirror is shared (ptree_mirror_share), it moves to a DSM segment
 * of its own, mapped for the backend's life, where the server's dynamic
 * shared memory has room for it (gx_dsm_has_room), and the workers
 * map that (ptree_mirror_adopt).  Only mirrors that are shared take DSM
 * segments (a system-wide resource).  The segment starts with the
 * mirror's identity (PtreeMirrorKey), which a worker checks.
 *
 * IDENTIFICATION
 *		src/ptree_mirror.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/dsm.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "gx_ptree.h"
#include "ptree.h"

#define PTREE_MIRROR_CACHE 8

/* a mirror, and which index and generation it was built from */
typedef struct PtreeMirrorEntry
{
	PtreeMirrorKey key;
	GxPtreeMirror *mirror;		/* NULL: none, or refused */
	dsm_segment *seg;			/* the mirror's DSM segment, or NULL (local memory) */
	int			refused_mb;		/* > 0: refused as over this cap */
} PtreeMirrorEntry;

/* where the mirror starts in its DSM segment, after its identity */
#define PTREE_MIRROR_DSM_OFFSET	TYPEALIGN(16, sizeof(PtreeMirrorKey))

static PtreeMirrorEntry mirror_cache[PTREE_MIRROR_CACHE];
static int	mirror_next = 0;
static MemoryContext mirror_ctx = NULL;

/* gpuext.ptree_mirror_max_mb, within gpuext.ptree_mirror_ceiling, in bytes */
static double
ptree_mirror_cap(void)
{
	return (double) ptree_mirror_cap_mb() * 1024 * 1024;
}

/* The identity of generation meta->gen of an index */
static void
ptree_mirror_key(Relation index, const PtreeMetaData *meta, PtreeMirrorKey *key)
{
	memset(key, 0, sizeof(*key));
	key->relid = RelationGetRelid(index);
	key->node = index->rd_node;
	key->gen = meta->gen;
	key->merges = meta->merges;
	key->main_tids = meta->main_tids;
}

/* Free a mirror: its DSM segment (shared or adopted), or local memory */
static void
ptree_mirror_free(GxPtreeMirror *m, dsm_segment *seg)
{
	if (seg != NULL)
		dsm_detach(seg);
	else
		pfree(m);
}

/* Free a cached entry's mirror and its device copy; the entry stays */
static void
ptree_mirror_drop(PtreeMirrorEntry *e)
{
	if (e->mirror == NULL)
		return;
	ptree_device_forget(e->mirror);
	ptree_mirror_free(e->mirror, e->seg);
	e->mirror = NULL;
	e->seg = NULL;
	e->refused_mb = 0;
}

/*
 * Drop cached mirrors (the oldest built first) until 'need' more bytes
 * keep the backend's mirrors within gpuext.ptree_mirror_max_mb (and its
 * ceiling, gpuext.ptree_mirror_ceiling), which caps all of them together; false if even with none 'need' is over the cap.
 * Lookups use a mirror only within one call, so none is in use here.
 */
static bool
ptree_mirror_make_room(Size need)
{
	double		cap = ptree_mirror_cap();
	double		used = 0;
	int			i;

	if ((double) need > cap)
		return false;
	for (i = 0; i < PTREE_MIRROR_CACHE; i++)
		if (mirror_cache[i].mirror)
			used += (double) mirror_cache[i].mirror->total_size;
	for (i = 0; i < PTREE_MIRROR_CACHE && used + (double) need > cap; i++)
	{
		PtreeMirrorEntry *e = &mirror_cache[(mirror_next + i) % PTREE_MIRROR_CACHE];

		if (e->mirror == NULL)
			continue;
		used -= (double) e->mirror->total_size;
		ptree_mirror_drop(e);
	}
	return true;
}

/* growable arrays of the build */
typedef struct PtreeMirrorBuild
{
	uint32	   *keyoff;
	char	   *keys;
	uint64	   *postoff;
	uint64	   *tids;
	Size		nkeys,
				maxkeys;
	Size		keybytes,
				maxkeybytes;
	Size		ntids,
				maxtids;
} PtreeMirrorBuild;

/*
 * Append a posting list to the build: tuple t's key (a new key, or the
 * last one again: same) and its TIDs, tids (checked)
 */
static void
ptree_mirror_add(PtreeMirrorBuild *b, PtreeTuple t, const ItemPointerData *tids, bool same)
{
	int			i;

	if (!same)
	{
		if (b->nkeys + 2 > b->maxkeys)
		{
			b->maxkeys *= 2;
			b->keyoff = repalloc_huge(b->keyoff, sizeof(uint32) * b->maxkeys);
			b->postoff = repalloc_huge(b->postoff, sizeof(uint64) * b->maxkeys);
		}
		if (b->keybytes + t->keylen > b->maxkeybytes)
		{
			while (b->keybytes + t->keylen > b->maxkeybytes)
				b->maxkeybytes *= 2;
			b->keys = repalloc_huge(b->keys, b->maxkeybytes);
		}
		b->keyoff[b->nkeys] = (uint32) b->keybytes;
		b->postoff[b->nkeys] = b->ntids;
		memcpy(b->keys + b->keybytes, t->data, t->keylen);
		b->keybytes += t->keylen;
		b->nkeys++;
	}
	if (b->ntids + t->ntids > b->maxtids)
	{
		while (b->ntids + t->ntids > b->maxtids)
			b->maxtids *= 2;
		b->tids = repalloc_huge(b->tids, sizeof(uint64) * b->maxtids);
	}
	for (i = 0; i < t->ntids; i++)
		b->tids[b->ntids++] = ((uint64) ItemPointerGetBlockNumber(&tids[i]) << 16) |
			ItemPointerGetOffsetNumber(&tids[i]);
}

/*
 * Build the mirror of main's generation meta->gen.  Pages are checked to
 * belong to it: if one does not and a merge has replaced the generation
 * since meta was read (ptree_page_replaced), NULL; with no such merge, or
 * when the caller keeps merges out (hold: it holds the merge lock), it is
 * corruption.  Pages, tuples, TIDs, the chain and the keys' order (which
 * the mirror's lookups depend on) are checked as the leaves are read.
 */
static GxPtreeMirror *
ptree_mirror_build(Relation index, PtreeMetaData *meta, bool hold, bool *too_large)
{
	PtreeMirrorBuild b;
	BlockNumber blkno = meta->first_leaf;
	BlockNumber from = PTREE_METAPAGE_BLKNO;
	uint32		steps = 0;
	bool		hasprev = false;
	PtreeKey	prev = {false, 0, NULL};
	uint32	   *slots;
	uint32	   *root;
	uint32	   *nodes;
	GxPtreeLeaf *leaves;
	Size		nslots = 0,
				nnodes = 0,
				maxnodes = 16,
				nleaves = 0,
				maxleaves = 64;
	Size		i;
	uint32		skip;
	uint32		minlen = PG_UINT32_MAX;
	uint32		maxlen = 0;
	uint32		flags;
	uint32		strip;
	uint32		keylen;
	int16		typlen;
	GxPtreeMirror *m;
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "gpuext_ptree mirror build",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);

	/* sized from the metapage's counts: no regrowth (and copy) on the way */
	memset(&b, 0, sizeof(b));
	typlen = meta->keytype == TEXTOID ? -1 : get_typlen(meta->keytype);
	b.maxkeys = Max(1024, (Size) meta->main_keys + 2);
	b.keyoff = palloc_extended(sizeof(uint32) * b.maxkeys, MCXT_ALLOC_HUGE);
	b.postoff = palloc_extended(sizeof(uint64) * b.maxkeys, MCXT_ALLOC_HUGE);
	b.maxkeybytes = Max(8192, typlen > 0 ? (Size) meta->main_keys * typlen : 0);
	b.keys = palloc_extended(b.maxkeybytes, MCXT_ALLOC_HUGE);
	b.maxtids = Max(4096, (Size) meta->main_tids);
	b.tids = palloc_extended(sizeof(uint64) * b.maxtids, MCXT_ALLOC_HUGE);

	/* the distinct keys and their TIDs, in key order (NULLs left out) */
	while (BlockNumberIsValid(blkno))
	{
		Buffer		buf;
		Page		page;
		OffsetNumber o,
					maxoff;

		CHECK_FOR_INTERRUPTS();
		ptree_check_link(index, from, blkno, &steps);
		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (hold)
			ptree_page_check(index, page, blkno, meta->gen, PTREE_LEAF, 0);
		else if (!ptree_page_ok(index, page, blkno, meta->gen, PTREE_LEAF, 0))
		{
			uint32		pagegen = PtreePageGetOpaque(page)->gen;

			UnlockReleaseBuffer(buf);
			MemoryContextSwitchTo(old);
			MemoryContextDelete(tmp);
			/* a merge since the caller read the metapage, or corruption */
			ptree_page_replaced(index, meta, blkno, pagegen, meta->gen);
			return NULL;
		}
		maxoff = PageGetMaxOffsetNumber(page);
		for (o = FirstOffsetNumber; o <= maxoff; o++)
		{
			PtreeTuple	t = ptree_page_tuple(index, page, blkno, o);
			PtreeKey	k;
			int			c;

			/* in order (the lookups depend on it); equal: the same key goes on */
			ptree_tuple_key(t, &k);
			c = hasprev ? ptree_key_cmp(&prev, &k) : -1;
			if (unlikely(c > 0))
				ptree_order_corrupt(index, blkno, o);
			hasprev = true;
			prev = k;
			if (!k.isnull)
			{
				ptree_mirror_add(&b, t, ptree_tuple_tids(index, t, blkno, o), c == 0);
				/* the key as the build keeps it: the page is released */
				prev.data = b.keys + b.keyoff[b.nkeys - 1];
			}
		}
		from = blkno;
		blkno = PtreePageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
	}
	b.keyoff[b.nkeys] = (uint32) b.keybytes;
	b.postoff[b.nkeys] = b.ntids;

	/*
	 * The bytes the 32-bit prefix skips: those every key shares (the common
	 * prefix of the first and the last key).  When every key has the same
	 * length (int8, timestamp), the prefix ends at the key's last byte at
	 * the latest, so that it holds four bytes that vary rather than zero
	 * padding (which would leave one key a level-3 leaf).
	 */
	skip = 0;
	if (b.nkeys > 0)
	{
		const unsigned char *first = (unsigned char *) b.keys + b.keyoff[0];
		const unsigned char *last = (unsigned char *) b.keys + b.keyoff[b.nkeys - 1];

		for (i = 0; i < b.nkeys; i++)
		{
			minlen = Min(minlen, b.keyoff[i + 1] - b.keyoff[i]);
			maxlen = Max(maxlen, b.keyoff[i + 1] - b.keyoff[i]);
		}
		while (skip < minlen && first[skip] == last[skip])
			skip++;
		if (minlen == maxlen && minlen >= 4)
			skip = Min(skip, minlen - 4);
	}

	/* the KISS levels over the slots (distinct 32-bit prefixes, ascending) */
	slots = palloc(sizeof(uint32) * (b.nkeys + 1));
	root = palloc0(sizeof(uint32) * GX_PTREE_ROOT_SIZE);
	nodes = palloc0(sizeof(uint32) * GX_PTREE_NODE_SIZE * maxnodes);
	leaves = palloc0(sizeof(GxPtreeLeaf) * maxleaves);
	for (i = 0; i < b.nkeys; i++)
	{
		uint32		p = gx_ptree_prefix32((unsigned char *) b.keys + b.keyoff[i],
										  b.keyoff[i + 1] - b.keyoff[i], skip);
		uint32		node;
		uint32	   *entry;

		if (i > 0 && p == gx_ptree_prefix32((unsigned char *) b.keys + b.keyoff[i - 1],
											b.keyoff[i] - b.keyoff[i - 1], skip))
			continue;
		slots[nslots] = (uint32) i;
		if (root[p >> 16] == 0)
		{
			if (nnodes == maxnodes)
			{
				nodes = repalloc_huge(nodes, sizeof(uint32) * GX_PTREE_NODE_SIZE * maxnodes * 2);
				memset(nodes + GX_PTREE_NODE_SIZE * maxnodes, 0, sizeof(uint32) * GX_PTREE_NODE_SIZE * maxnodes);
				maxnodes *= 2;
			}
			root[p >> 16] = (uint32) ++nnodes;
		}
		node = root[p >> 16] - 1;
		entry = &nodes[(Size) node * GX_PTREE_NODE_SIZE + ((p >> 6) & (GX_PTREE_NODE_SIZE - 1))];
		if (*entry == 0)
		{
			if (nleaves == maxleaves)
			{
				maxleaves *= 2;
				leaves = repalloc_huge(leaves, sizeof(GxPtreeLeaf) * maxleaves);
			}
			leaves[nleaves].bitmap = 0;
			leaves[nleaves].first = (uint32) nslots;
			leaves[nleaves].pad = 0;
			*entry = (uint32) ++nleaves;
		}
		leaves[*entry - 1].bitmap |= ((uint64) 1) << (p & 63);
		nslots++;
	}
	slots[nslots] = (uint32) b.nkeys;

	/*
	 * What the mirror can leave out (cuda/gx_ptree.h): the key offsets and
	 * the shared leading bytes when every key has one length, the slots
	 * when every slot is one key, the posting offsets when every key has
	 * one TID
	 */
	flags = 0;
	strip = 0;
	keylen = 0;
	if (b.nkeys > 0 && minlen == maxlen)
	{
		flags |= GX_PTREE_FIXED;
		strip = Min(skip, GX_PTREE_PREFIX);
		keylen = minlen - strip;
	}
	if (nslots == b.nkeys)
		flags |= GX_PTREE_ONE_PER_SLOT;
	if (b.ntids == b.nkeys)
		flags |= GX_PTREE_UNIQUE;

	/* one allocation, parts 8-byte aligned; refused when over the cap */
	{
		Size		o_root = TYPEALIGN(8, sizeof(GxPtreeMirror));
		Size		o_nodes = o_root + TYPEALIGN(8, sizeof(uint32) * GX_PTREE_ROOT_SIZE);
		Size		o_leaves = o_nodes + TYPEALIGN(8, sizeof(uint32) * GX_PTREE_NODE_SIZE * nnodes);
		Size		o_slots = o_leaves + TYPEALIGN(8, sizeof(GxPtreeLeaf) * nleaves);
		Size		o_keyoff = o_slots + ((flags & GX_PTREE_ONE_PER_SLOT) ? 0 :
										  TYPEALIGN(8, sizeof(uint32) * (nslots + 1)));
		Size		o_keys = o_keyoff + ((flags & GX_PTREE_FIXED) ? 0 :
										 TYPEALIGN(8, sizeof(uint32) * (b.nkeys + 1)));
		Size		o_postoff = o_keys + TYPEALIGN(8, (flags & GX_PTREE_FIXED) ?
												   (Size) keylen * b.nkeys : b.keybytes);
		Size		o_tids = o_postoff + ((flags & GX_PTREE_UNIQUE) ? 0 :
										  TYPEALIGN(8, sizeof(uint64) * (b.nkeys + 1)));
		Size		total = o_tids + sizeof(uint64) * b.ntids;

		if (!ptree_mirror_make_room(total))
		{
			MemoryContextSwitchTo(old);
			MemoryContextDelete(tmp);
			*too_large = true;
			return NULL;
		}
		m = MemoryContextAllocHuge(mirror_ctx, total);
		memset(m, 0, sizeof(GxPtreeMirror));
		m->magic = GX_PTREE_MAGIC;
		m->nkeys = (uint32) b.nkeys;
		m->nnodes = (uint32) nnodes;
		m->nleaves = (uint32) nleaves;
		m->nslots = (uint32) nslots;
		m->skip = skip;
		m->flags = flags;
		m->keylen = keylen;
		m->strip = strip;
		if (strip > 0)
			memcpy(m->prefix, b.keys + b.keyoff[0], strip);
		m->ntids = b.ntids;
		m->total_size = total;
		m->off_root = o_root;
		m->off_nodes = o_nodes;
		m->off_leaves = o_leaves;
		m->off_slots = o_slots;
		m->off_keyoff = o_keyoff;
		m->off_keys = o_keys;
		m->off_postoff = o_postoff;
		m->off_tids = o_tids;
		memcpy((char *) m + o_root, root, sizeof(uint32) * GX_PTREE_ROOT_SIZE);
		memcpy((char *) m + o_nodes, nodes, sizeof(uint32) * GX_PTREE_NODE_SIZE * nnodes);
		memcpy((char *) m + o_leaves, leaves, sizeof(GxPtreeLeaf) * nleaves);
		if (!(flags & GX_PTREE_ONE_PER_SLOT))
			memcpy((char *) m + o_slots, slots, sizeof(uint32) * (nslots + 1));
		if (flags & GX_PTREE_FIXED)
		{
			char	   *to = (char *) m + o_keys;

			for (i = 0; i < b.nkeys; i++)
				memcpy(to + i * keylen, b.keys + b.keyoff[i] + strip, keylen);
		}
		else
		{
			memcpy((char *) m + o_keyoff, b.keyoff, sizeof(uint32) * (b.nkeys + 1));
			memcpy((char *) m + o_keys, b.keys, b.keybytes);
		}
		if (!(flags & GX_PTREE_UNIQUE))
			memcpy((char *) m + o_postoff, b.postoff, sizeof(uint64) * (b.nkeys + 1));
		memcpy((char *) m + o_tids, b.tids, sizeof(uint64) * b.ntids);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	/* the check the GPU service makes when it loads a device copy */
	if (!gx_ptree_mirror_ok(m, gx_ptree_lookup_bytes(m)))
	{
		pfree(m);
		elog(ERROR, "gpuext_ptree: the mirror of index \"%s\" is malformed",
			 RelationGetRelationName(index));
	}
	return m;
}

/*
 * Can the mirror of this generation be within gpuext.ptree_mirror_max_mb?
 * The parts whose size the metapage's counts give: the keys (a fixed-width
 * type at its width, text at most what main's pages hold besides TIDs, and
 * its offsets), the TIDs, the posting
 * offsets unless every key has one TID.  The slots and KISS levels depend
 * on how the keys spread: the build measures the whole mirror and refuses
 * one over the cap before allocating it (remembered for the generation:
 * ptree_mirror_get), so this only spares the builds that cannot fit.
 */
bool
ptree_mirror_fits(PtreeMetaData *meta)
{
	double		nkeys = (double) meta->main_keys;
	int16		typlen = meta->keytype == TEXTOID ? -1 : get_typlen(meta->keytype);
	double		keybytes = typlen > 0 ? nkeys * typlen :
		Max((double) meta->main_pages * PTREE_PAGE_ROOM -
			(double) meta->main_tids * sizeof(ItemPointerData), 0) + nkeys * sizeof(uint32);
	double		est = sizeof(uint32) * GX_PTREE_ROOT_SIZE + keybytes +
		(double) meta->main_tids * sizeof(uint64) +
		(meta->main_tids == meta->main_keys ? 0 : nkeys * sizeof(uint64));

	return ptree_mirror_cap_mb() > 0 && est <= ptree_mirror_cap();
}

/*
 * The mirror of generation meta->gen of the index if this backend has one
 * (none is built), else NULL
 */
GxPtreeMirror *
ptree_mirror_cached(Relation index, PtreeMetaData *meta)
{
	PtreeMirrorKey key;

	ptree_mirror_key(index, meta, &key);
	for (int i = 0; i < PTREE_MIRROR_CACHE; i++)
	{
		PtreeMirrorEntry *e = &mirror_cache[i];

		if (e->mirror && memcmp(&e->key, &key, sizeof(key)) == 0 &&
			(double) e->mirror->total_size <= ptree_mirror_cap())
			return e->mirror;
	}
	return NULL;
}

/*
 * The mirror of generation meta->gen of the index, built if this backend
 * has none.  NULL if the generation was replaced during the build (see
 * ptree_mirror_build), or, with *too_large, if the mirror is over
 * gpuext.ptree_mirror_max_mb (then the caller walks the pages; the
 * refusal is remembered for the generation and the cap it was made under)
 */
GxPtreeMirror *
ptree_mirror_get(Relation index, PtreeMetaData *meta, bool hold, bool *too_large)
{
	PtreeMirrorEntry *e;
	PtreeMirrorKey key;
	GxPtreeMirror *m;
	int			i;

	*too_large = false;
	if (mirror_ctx == NULL)
		mirror_ctx = AllocSetContextCreate(TopMemoryContext, "gpuext_ptree mirrors",
										   ALLOCSET_DEFAULT_SIZES);
	ptree_mirror_key(index, meta, &key);
	for (i = 0; i < PTREE_MIRROR_CACHE; i++)
	{
		e = &mirror_cache[i];
		if ((e->mirror || e->refused_mb > 0) && memcmp(&e->key, &key, sizeof(key)) == 0)
		{
			/* a mirror kept under a higher cap than today's goes */
			if (e->mirror && (double) e->mirror->total_size > ptree_mirror_cap())
			{
				ptree_mirror_drop(e);
				continue;
			}
			if (e->mirror)
				return e->mirror;
			if (e->refused_mb == ptree_mirror_cap_mb())
			{
				*too_large = true;
				return NULL;
			}
		}
	}
	m = ptree_mirror_build(index, meta, hold, too_large);
	if (m == NULL && !*too_large)
		return NULL;
	e = &mirror_cache[mirror_next];
	mirror_next = (mirror_next + 1) % PTREE_MIRROR_CACHE;
	ptree_mirror_drop(e);
	e->mirror = m;
	e->seg = NULL;
	e->refused_mb = m ? 0 : ptree_mirror_cap_mb();
	e->key = key;
	return e->mirror;
}

/*
 * For the leader of a parallel PtreeBatchJoin: the mirror of the index's
 * live generation (built now if this backend has none) and the DSM
 * segment that holds it, for the workers to map; the mirror moves there
 * from local memory the first time (its device copy, the same bytes,
 * stays).  False when there is none to share: main is empty, the mirror
 * is over the cap, or no DSM segment can hold it; then each worker looks
 * its batches up on its own.
 */
bool
ptree_mirror_share(Relation index, PtreeMirrorKey *key, dsm_handle *handle)
{
	PtreeMetaData meta;
	GxPtreeMirror *m;
	bool		too_large;

	ptree_read_meta(index, &meta);
	if (meta.levels == 0 || !ptree_mirror_fits(&meta))
		return false;
	m = ptree_mirror_get(index, &meta, false, &too_large);
	if (m == NULL)
		return false;
	for (int i = 0; i < PTREE_MIRROR_CACHE; i++)
	{
		PtreeMirrorEntry *e = &mirror_cache[i];

		if (e->mirror != m)
			continue;
		if (e->seg == NULL)
		{
			Size		bytes = PTREE_MIRROR_DSM_OFFSET + m->total_size;
			dsm_segment *seg;
			GxPtreeMirror *moved;

			if (!gx_dsm_has_room(bytes) ||
				(seg = dsm_create(bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS)) == NULL)
				return false;
			dsm_pin_mapping(seg);
			memcpy(dsm_segment_address(seg), &e->key, sizeof(e->key));
			moved = (GxPtreeMirror *) ((char *) dsm_segment_address(seg) + PTREE_MIRROR_DSM_OFFSET);
			memcpy(moved, m, m->total_size);
			ptree_device_moved(m, moved);
			pfree(m);
			e->mirror = moved;
			e->seg = seg;
		}
		*key = e->key;
		*handle = dsm_segment_handle(e->seg);
		return true;
	}
	return false;
}

/*
 * For a parallel worker: map the leader's mirror (ptree_mirror_share) into
 * this backend's cache, where its lookups find it as one built here.
 * False (nothing kept) if the segment is gone or holds another mirror:
 * then the worker builds its own if it needs one.
 */
bool
ptree_mirror_adopt(const PtreeMirrorKey *key, dsm_handle handle)
{
	dsm_segment *seg;
	GxPtreeMirror *m;
	PtreeMirrorEntry *e;

	for (int i = 0; i < PTREE_MIRROR_CACHE; i++)
		if (mirror_cache[i].mirror && memcmp(&mirror_cache[i].key, key, sizeof(*key)) == 0)
			return true;
	seg = dsm_attach(handle);
	if (seg == NULL)
	{
		elog(DEBUG1, "gpuext_ptree: the leader's mirror of index %u is gone", key->relid);
		return false;
	}
	m = (GxPtreeMirror *) ((char *) dsm_segment_address(seg) + PTREE_MIRROR_DSM_OFFSET);
	if (dsm_segment_map_length(seg) < PTREE_MIRROR_DSM_OFFSET + sizeof(GxPtreeMirror) ||
		memcmp(dsm_segment_address(seg), key, sizeof(*key)) != 0 ||
		m->total_size > dsm_segment_map_length(seg) - PTREE_MIRROR_DSM_OFFSET ||
		!gx_ptree_mirror_ok(m, gx_ptree_lookup_bytes(m)) ||
		!ptree_mirror_make_room(m->total_size))
	{
		dsm_detach(seg);
		elog(DEBUG1, "gpuext_ptree: the leader's mirror of index %u is not usable here", key->relid);
		return false;
	}
	dsm_pin_mapping(seg);
	elog(DEBUG1, "gpuext_ptree: mapped the leader's mirror of index %u (" UINT64_FORMAT " bytes)",
		 key->relid, m->total_size);
	e = &mirror_cache[mirror_next];
	mirror_next = (mirror_next + 1) % PTREE_MIRROR_CACHE;
	ptree_mirror_drop(e);
	e->mirror = m;
	e->seg = seg;
	e->refused_mb = 0;
	e->key = *key;
	return true;
}

/*
 * The TIDs of key i of a mirror
 */
void
ptree_mirror_tids(const GxPtreeMirror *m, int64 i, const uint64 **tids, int64 *ntids)
{
	const uint64 *all = GX_PTREE_PART(m, off_tids, const uint64);
	const uint64 *postoff;

	if (m->flags & GX_PTREE_UNIQUE)
	{
		*tids = all + i;
		*ntids = 1;
		return;
	}
	postoff = GX_PTREE_PART(m, off_postoff, const uint64);
	*tids = all + postoff[i];
	*ntids = (int64) (postoff[i + 1] - postoff[i]);
}

/* for qsort_arg of probe numbers by their keys */
static int
ptree_probe_cmp(const void *a, const void *b, void *arg)
{
	const PtreeKey *probes = (const PtreeKey *) arg;

	return ptree_key_compare(&probes[*(const int *) a], &probes[*(const int *) b]);
}

/*
 * Look n probe keys up at once (those with valid[i]), for a batched join:
 * main through the mirror (on the engine of pe), the delta in one pass.  Returns, in the current
 * memory context, tidoff[n + 1] and the TIDs, probe i's being
 * tids[tidoff[i] .. tidoff[i + 1]).  Like a scan, it reads the generations
 * it found in the metapage without holding it, and starts again if one is
 * replaced under it (after three times, it keeps merges out: the merge
 * lock in share mode, not on a standby).
 */
void
ptree_lookup_batch(Relation index, PtreeEngine *pe, const PtreeKey *probes, const bool *valid,
				   int n, int64 **tidoff_out, ItemPointerData **tids_out)
{
	int			attempt;

	for (attempt = 0;; attempt++)
	{
		bool		hold = attempt >= 3 && !RecoveryInProgress();
		bool		changed = false;
		PtreeMetaData meta;
		GxPtreeMirror *m = NULL;
		int64	   *found = palloc(sizeof(int64) * Max(n, 1));
		int		   *order = palloc(sizeof(int) * Max(n, 1));
		ItemPointerData **mainlist = NULL;	/* without a mirror */
		int64	   *mainn = NULL;
		int			nvalid = 0;
		int		   *dprobe = NULL;
		ItemPointerData *dtid = NULL;
		int64		nd = 0,
					maxd = 0;
		int64	   *tidoff;
		ItemPointerData *tids;
		int64	   *fill;
		int64		total = 0;
		BlockNumber blkno = InvalidBlockNumber;
		BlockNumber from = PTREE_METAPAGE_BLKNO;
		uint32		steps = 0;
		uint32		dgen = 0;
		int			chain = 0;
		int			i;

		if (hold)
			ptree_lock_merges(index, ShareLock);
		ptree_read_meta(index, &meta);

		for (i = 0; i < n; i++)
		{
			found[i] = -1;
			if (valid[i])
				order[nvalid++] = i;
		}

		/* main: one batch of lookups in the mirror, or one descent per probe */
		if (meta.levels > 0 && nvalid > 0 && ptree_mirror_fits(&meta))
		{
			bool		too_large;

			m = ptree_mirror_get(index, &meta, hold, &too_large);
			if (m == NULL && !too_large)
				changed = true;
			else if (m != NULL)
			{
				PtreeKey   *vp = palloc(sizeof(PtreeKey) * nvalid);
				int64	   *vf = palloc(sizeof(int64) * nvalid);

				for (i = 0; i < nvalid; i++)
					vp[i] = probes[order[i]];
				ptree_lookup_probes(pe, m, vp, nvalid, vf);
				for (i = 0; i < nvalid; i++)
					found[order[i]] = vf[i];
				pfree(vp);
				pfree(vf);
			}
		}
		if (meta.levels > 0 && nvalid > 0 && m == NULL && !changed)
		{
			mainlist = palloc0(sizeof(ItemPointerData *) * n);
			mainn = palloc0(sizeof(int64) * n);
			for (i = 0; i < nvalid && !changed; i++)
				if (!ptree_main_lookup(index, &meta, hold, &probes[order[i]],
									   &mainlist[order[i]], &mainn[order[i]]))
					changed = true;
		}

		/*
		 * the sealed delta and the delta, each chain from the metapage and
		 * each page of its own generation: every entry against the sorted
		 * probes (no delta: no sort)
		 */
		if (nvalid > 1 && !changed &&
			(BlockNumberIsValid(meta.sealed_head) || BlockNumberIsValid(meta.delta_head)))
			qsort_arg(order, nvalid, sizeof(int), ptree_probe_cmp, (void *) probes);
		while (!changed && nvalid > 0 &&
			   (BlockNumberIsValid(blkno) ||
				ptree_next_delta(&meta, &chain, &blkno, &dgen, &from, &steps)))
		{
			Buffer		buf;
			Page		page;
			OffsetNumber off,
						maxoff;

			CHECK_FOR_INTERRUPTS();
			ptree_check_link(index, from, blkno, &steps);
			buf = ReadBuffer(index, blkno);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			if (hold)
				ptree_page_check(index, page, blkno, dgen, PTREE_DELTA, 0);
			else if (!ptree_page_ok(index, page, blkno, dgen, PTREE_DELTA, 0))
			{
				uint32		pagegen = PtreePageGetOpaque(page)->gen;

				UnlockReleaseBuffer(buf);
				/* a merge since the metapage was read, or corruption */
				ptree_page_replaced(index, &meta, blkno, pagegen, dgen);
				changed = true;
				break;
			}
			maxoff = PageGetMaxOffsetNumber(page);
			for (off = FirstOffsetNumber; off <= maxoff; off++)
			{
				PtreeTuple	t = ptree_page_tuple(index, page, blkno, off);
				PtreeKey	k;
				int			lo = 0,
							hi = nvalid;

				ptree_tuple_key(t, &k);
				if (k.isnull)
					continue;
				/* the first probe whose key is >= k */
				while (lo < hi)
				{
					int			mid = lo + (hi - lo) / 2;

					if (ptree_key_compare(&probes[order[mid]], &k) < 0)
						lo = mid + 1;
					else
						hi = mid;
				}
				for (; lo < nvalid && ptree_key_compare(&probes[order[lo]], &k) == 0; lo++)
				{
					if (nd == maxd)
					{
						maxd = Max(maxd * 2, 256);
						dprobe = dprobe ? repalloc_huge(dprobe, sizeof(int) * maxd)
							: palloc_extended(sizeof(int) * maxd, MCXT_ALLOC_HUGE);
						dtid = dtid ? repalloc_huge(dtid, sizeof(ItemPointerData) * maxd)
							: palloc_extended(sizeof(ItemPointerData) * maxd, MCXT_ALLOC_HUGE);
					}
					dprobe[nd] = order[lo];
					dtid[nd] = *ptree_tuple_tids(index, t, blkno, off);
					nd++;
				}
			}
			from = blkno;
			blkno = PtreePageGetOpaque(page)->next;
			UnlockReleaseBuffer(buf);
		}
		if (hold)
			ptree_unlock_merges(index, ShareLock);
		if (changed)
		{
			pfree(found);
			pfree(order);
			if (dprobe)
				pfree(dprobe);
			if (dtid)
				pfree(dtid);
			continue;
		}

		/* each probe's TIDs: main's posting list, then its delta entries */
		tidoff = palloc0(sizeof(int64) * (n + 1));
		for (i = 0; i < n; i++)
		{
			if (found[i] >= 0)
			{
				const uint64 *mt;
				int64		mn;

				ptree_mirror_tids(m, found[i], &mt, &mn);
				tidoff[i + 1] += mn;
			}
		}
		if (mainlist)
			for (i = 0; i < n; i++)
				tidoff[i + 1] += mainn[i];
		for (i = 0; i < nd; i++)
			tidoff[dprobe[i] + 1]++;
		for (i = 0; i < n; i++)
			tidoff[i + 1] += tidoff[i];
		total = tidoff[n];
		tids = palloc_extended(sizeof(ItemPointerData) * Max(total, 1), MCXT_ALLOC_HUGE);
		fill = palloc(sizeof(int64) * Max(n, 1));
		for (i = 0; i < n; i++)
		{
			fill[i] = tidoff[i];
			if (found[i] >= 0)
			{
				const uint64 *mt;
				int64		mn,
							j;

				ptree_mirror_tids(m, found[i], &mt, &mn);
				for (j = 0; j < mn; j++)
				{
					/* ItemPointerSet evaluates its first argument twice */
					ItemPointer tid = &tids[fill[i]++];

					ItemPointerSet(tid, (BlockNumber) (mt[j] >> 16), (OffsetNumber) (mt[j] & 0xffff));
				}
			}
		}
		if (mainlist)
			for (i = 0; i < n; i++)
				if (mainn[i] > 0)
				{
					memcpy(&tids[fill[i]], mainlist[i], sizeof(ItemPointerData) * mainn[i]);
					fill[i] += mainn[i];
				}
		for (i = 0; i < nd; i++)
			tids[fill[dprobe[i]]++] = dtid[i];
		pfree(fill);
		pfree(found);
		pfree(order);
		*tidoff_out = tidoff;
		*tids_out = tids;
		return;
	}
}
