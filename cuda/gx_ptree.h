/*-------------------------------------------------------------------------
 * gx_ptree.h
 *		The prefix-tree mirror of a gpuext_ptree index and its lookup,
 *		shared by the CPU engine (gcc) and the CUDA kernel (nvcc).
 *
 * The mirror is built on the host from the index's sorted main structure
 * (src/ptree_mirror.c) as one position-independent allocation, so the
 * same bytes can be copied to a device as they are.  Its top is a
 * KISS-Tree (Kissinger et al., seed 002) over the first 32 bits of the
 * normalized key:
 *   level 1: 2^16 entries, indexed by bits 31..16, each 0 or 1 + the index
 *            of a level-2 node (a compact 32-bit pointer);
 *   level 2: nodes of 2^10 entries, indexed by bits 15..6, each 0 or 1 +
 *            the index of a level-3 leaf;
 *   level 3: leaves of a 64-bit bitmap over bits 5..0 and the index of
 *            their first slot; the slot of a set bit is first + the number
 *            of set bits below it (the bitmap-compressed node).
 * A slot is one distinct 32-bit prefix: the range of distinct keys that
 * share it, sorted.  For 4-byte keys (int4, date) a slot holds exactly one
 * key, so a lookup is three dependent reads and a compare; for longer keys
 * (int8, timestamp, text) the KISS levels are 32 bits of a generalized
 * prefix tree and the slot is searched by binary search on the whole key.
 * Keys are normalized (memcmp order, then length, as in src/ptree.c).  The
 * leading bytes that every key of the index shares (the common prefix of
 * its first and last key: the high bytes of int8 keys of moderate size,
 * say) tell keys apart nowhere, so the 32-bit prefix of a key is the four
 * bytes after them (m->skip), big-endian, zero-padded, which is monotone
 * in key order; a probe that does not start with those bytes is not in
 * the index.  Without the skip, int8 keys below 2^32 would all fall in one
 * slot and every lookup would be a binary search over the whole index.
 *
 * Compact parts.  Where the keys allow, the mirror leaves out what it can
 * compute (flags): GX_PTREE_FIXED, every key of the same length, so no
 * key offsets (key i is at i * keylen), and the shared leading bytes
 * ('strip' of them, at most GX_PTREE_PREFIX, kept once in the header) are
 * not stored with each key; GX_PTREE_ONE_PER_SLOT, every slot one key, so
 * no slot array (slot s is key s); GX_PTREE_UNIQUE, every key one TID, so
 * no posting offsets (key i's TID is tids[i]).  An index of unique int8
 * keys below 2^32 thus costs 4 bytes of key and 8 of TID per row, plus the
 * KISS levels, about half its pages.
 *
 * Lookups are batched, one probe per thread (the throughput design of
 * seed 000's batched traversal); the result of a probe is the index of its
 * key (then its posting list) or -1.  The GPU service keeps a device copy
 * of the part lookups read (gx_ptree_lookup_bytes) as a task; the CPU
 * engine reads the backend's own copy; both run gx_ptree_probe.
 *
 * IDENTIFICATION
 *		cuda/gx_ptree.h
 *-------------------------------------------------------------------------
 */
#ifndef GX_PTREE_H
#define GX_PTREE_H

#include "gx_common.h"

#define GX_PTREE_MAGIC		0x50544D32	/* "PTM2" */
#define GX_PTREE_ROOT_SIZE	(1u << 16)
#define GX_PTREE_NODE_SIZE	(1u << 10)

/* GxPtreeMirror.flags: parts left out (see above) */
#define GX_PTREE_FIXED			0x0001	/* keys of one length: no keyoff, prefix stripped */
#define GX_PTREE_ONE_PER_SLOT	0x0002	/* no slots: slot s is key s */
#define GX_PTREE_UNIQUE			0x0004	/* no postoff: key i's TID is tids[i] */

/* most shared leading bytes a mirror keeps once in its header */
#define GX_PTREE_PREFIX		8

/* population count: the device instruction in device code, gcc's builtin on the host */
GX_FUNC int
gx_popc64(uint64_t x)
{
#if defined(__CUDA_ARCH__)
	return __popcll(x);
#else
	return __builtin_popcountll(x);
#endif
}

/* a level-3 leaf */
typedef struct GxPtreeLeaf
{
	uint64_t	bitmap;			/* which of the 64 low-6-bit values exist */
	uint32_t	first;			/* slot of the lowest set bit */
	uint32_t	pad;
} GxPtreeLeaf;

/* the header of a mirror; every part is at an offset from its start */
typedef struct GxPtreeMirror
{
	uint32_t	magic;
	uint32_t	nkeys;			/* distinct non-NULL keys */
	uint32_t	nnodes;			/* level-2 nodes */
	uint32_t	nleaves;		/* level-3 leaves */
	uint32_t	nslots;			/* distinct 32-bit prefixes */
	uint32_t	skip;			/* leading bytes every key shares (the prefix starts after them) */
	uint32_t	flags;			/* GX_PTREE_FIXED, ... */
	uint32_t	keylen;			/* GX_PTREE_FIXED: bytes stored per key (after strip) */
	uint32_t	strip;			/* GX_PTREE_FIXED: leading bytes not stored (<= skip) */
	uint32_t	pad;
	unsigned char prefix[GX_PTREE_PREFIX];	/* the first strip bytes of every key */
	uint64_t	ntids;
	uint64_t	total_size;		/* bytes of the whole mirror */
	uint64_t	off_root;		/* uint32_t[GX_PTREE_ROOT_SIZE] */
	uint64_t	off_nodes;		/* uint32_t[nnodes * GX_PTREE_NODE_SIZE] */
	uint64_t	off_leaves;		/* GxPtreeLeaf[nleaves] */
	uint64_t	off_slots;		/* uint32_t[nslots + 1]: first key of each slot (not ONE_PER_SLOT) */
	uint64_t	off_keyoff;		/* uint32_t[nkeys + 1]: key bytes of key i (not FIXED) */
	uint64_t	off_keys;		/* the keys' bytes (FIXED: keylen each, after strip) */
	uint64_t	off_postoff;	/* uint64_t[nkeys + 1]: TIDs of key i (not UNIQUE) */
	uint64_t	off_tids;		/* uint64_t TIDs: block << 16 | offset */
} GxPtreeMirror;

#define GX_PTREE_PART(m, off, type)	((type *) ((unsigned char *) (m) + (m)->off))

/*
 * The 32 bits of a normalized key after its first 'skip' bytes, big-endian,
 * zero-padded.  For keys that share their first 'skip' bytes this is
 * monotone in key order.
 */
GX_FUNC uint32_t
gx_ptree_prefix32(const unsigned char *key, uint32_t len, uint32_t skip)
{
	uint32_t	p = 0;
	uint32_t	i;

	for (i = skip; i < skip + 4; i++)
		p = (p << 8) | (i < len ? key[i] : 0);
	return p;
}

/*
 * Order of two normalized keys: bytes, then length
 */
GX_FUNC int
gx_ptree_keycmp(const unsigned char *a, uint32_t alen, const unsigned char *b, uint32_t blen)
{
	uint32_t	n = alen < blen ? alen : blen;
	uint32_t	i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return (alen > blen) - (alen < blen);
}

/*
 * The slot of a 32-bit prefix, or -1: the three KISS levels
 */
GX_FUNC int64_t
gx_ptree_slot(const GxPtreeMirror *m, uint32_t prefix)
{
	const uint32_t *root = GX_PTREE_PART(m, off_root, const uint32_t);
	const uint32_t *nodes = GX_PTREE_PART(m, off_nodes, const uint32_t);
	const GxPtreeLeaf *leaves = GX_PTREE_PART(m, off_leaves, const GxPtreeLeaf);
	uint32_t	node = root[prefix >> 16];
	uint32_t	leaf;
	uint32_t	bit;
	uint64_t	bitmap;

	if (node == 0)
		return -1;
	leaf = nodes[(uint64_t) (node - 1) * GX_PTREE_NODE_SIZE + ((prefix >> 6) & (GX_PTREE_NODE_SIZE - 1))];
	if (leaf == 0)
		return -1;
	bit = prefix & 63;
	bitmap = leaves[leaf - 1].bitmap;
	if (((bitmap >> bit) & 1) == 0)
		return -1;
	return (int64_t) leaves[leaf - 1].first +
		gx_popc64(bitmap & ((((uint64_t) 1) << bit) - 1));
}

/*
 * The stored bytes of key i (after the m->strip bytes every key shares)
 * and their number
 */
GX_FUNC const unsigned char *
gx_ptree_key(const GxPtreeMirror *m, uint64_t i, uint32_t *len)
{
	const unsigned char *keys = GX_PTREE_PART(m, off_keys, const unsigned char);
	const uint32_t *keyoff;

	if (m->flags & GX_PTREE_FIXED)
	{
		*len = m->keylen;
		return keys + i * m->keylen;
	}
	keyoff = GX_PTREE_PART(m, off_keyoff, const uint32_t);
	*len = keyoff[i + 1] - keyoff[i];
	return keys + keyoff[i];
}

/* The first key of slot s (s = nslots: nkeys) */
GX_FUNC int64_t
gx_ptree_slot_first(const GxPtreeMirror *m, int64_t s)
{
	if (m->flags & GX_PTREE_ONE_PER_SLOT)
		return s;
	return GX_PTREE_PART(m, off_slots, const uint32_t)[s];
}

/*
 * Does key start with the 'skip' bytes every key of the mirror shares?
 */
GX_FUNC int
gx_ptree_has_skip(const GxPtreeMirror *m, const unsigned char *key, uint32_t len)
{
	const unsigned char *first;
	uint32_t	flen;

	if (len < m->skip)
		return 0;
	for (uint32_t b = 0; b < m->strip; b++)
		if (key[b] != m->prefix[b])
			return 0;
	if (m->skip == m->strip)
		return 1;
	first = gx_ptree_key(m, 0, &flen);
	for (uint32_t b = m->strip; b < m->skip; b++)
		if (key[b] != first[b - m->strip])
			return 0;
	return 1;
}

/*
 * The index of key in the mirror, or -1
 */
GX_FUNC int64_t
gx_ptree_lookup(const GxPtreeMirror *m, const unsigned char *key, uint32_t len)
{
	int64_t		slot;
	int64_t		lo,
				hi;

	/* every key starts with the same 'skip' bytes */
	if (!gx_ptree_has_skip(m, key, len))
		return -1;
	slot = gx_ptree_slot(m, gx_ptree_prefix32(key, len, m->skip));
	if (slot < 0)
		return -1;
	lo = gx_ptree_slot_first(m, slot);
	hi = gx_ptree_slot_first(m, slot + 1) - 1;
	while (lo <= hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;
		uint32_t	klen;
		const unsigned char *k = gx_ptree_key(m, (uint64_t) mid, &klen);
		int			c = gx_ptree_keycmp(k, klen, key + m->strip, len - m->strip);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/*
 * The bytes of a mirror that lookups read: the header, the KISS levels,
 * the slots and the keys (every part before the posting lists, which only
 * the host reads).  A device copy holds these.
 */
GX_FUNC uint64_t
gx_ptree_lookup_bytes(const GxPtreeMirror *m)
{
	return m->off_postoff;
}

/* Does a part of 'len' bytes at 'off' lie before 'end'? */
GX_FUNC int
gx_ptree_part_ok(uint64_t off, uint64_t len, uint64_t end)
{
	return off <= end && len <= end - off;
}

/*
 * Is the header of a mirror copy of 'bytes' sane: its magic, and every part
 * that lookups read inside the copy?  Checked once when a copy is loaded,
 * so the lookups need not.
 */
GX_FUNC int
gx_ptree_mirror_ok(const GxPtreeMirror *m, uint64_t bytes)
{
	uint64_t	end = m->off_postoff;

	return bytes >= sizeof(GxPtreeMirror) && m->magic == GX_PTREE_MAGIC &&
		end <= bytes &&
		gx_ptree_part_ok(m->off_root, (uint64_t) GX_PTREE_ROOT_SIZE * 4, end) &&
		gx_ptree_part_ok(m->off_nodes, (uint64_t) m->nnodes * GX_PTREE_NODE_SIZE * 4, end) &&
		gx_ptree_part_ok(m->off_leaves, (uint64_t) m->nleaves * sizeof(GxPtreeLeaf), end) &&
		((m->flags & GX_PTREE_ONE_PER_SLOT) ? m->nslots == m->nkeys :
		 gx_ptree_part_ok(m->off_slots, ((uint64_t) m->nslots + 1) * 4, end)) &&
		((m->flags & GX_PTREE_FIXED) ?
		 (m->strip <= GX_PTREE_PREFIX && m->strip <= m->skip && m->skip <= m->strip + m->keylen &&
		  gx_ptree_part_ok(m->off_keys, (uint64_t) m->nkeys * m->keylen, end)) :
		 (m->strip == 0 && gx_ptree_part_ok(m->off_keyoff, ((uint64_t) m->nkeys + 1) * 4, end) &&
		  m->off_keys <= end)) &&
		(m->skip == 0 || m->nkeys > 0);
}

/*
 * A batch of probes (the program area of a GX_REQ_PTREE_LOOKUP batch, and
 * the CPU engine's): uint32 off[n + 1], then the keys' bytes, probe i
 * being bytes[off[i] .. off[i + 1]).  Results: int64 out[n].
 */
GX_FUNC uint64_t
gx_ptree_probes_size(uint32_t n, uint64_t keybytes)
{
	return ((uint64_t) n + 1) * 4 + keybytes;
}

/* Is an area of 'len' bytes big enough for the offsets of n probes? */
GX_FUNC int
gx_ptree_probes_ok(uint32_t n, uint64_t len)
{
	return gx_ptree_probes_size(n, 0) <= len;
}

/*
 * Device scratch memory of a lookup with a probe area of 'len' bytes: the
 * area, then the n results at a 256-byte boundary
 */
GX_FUNC uint64_t
gx_ptree_lookup_out_at(uint64_t len)
{
	return (len + 255) & ~(uint64_t) 255;
}

GX_FUNC uint64_t
gx_ptree_lookup_scratch(uint64_t len, uint64_t n)
{
	return gx_ptree_lookup_out_at(len) + n * sizeof(int64_t);
}

/*
 * Probe i of a batch of n in an area of 'len' bytes: out[i] is the index of
 * its key in the mirror, or -1.  Returns 0 when the probe's offsets lie
 * outside the area (a malformed batch), else 1.
 */
GX_FUNC int
gx_ptree_probe(const GxPtreeMirror *m, const uint32_t *area, uint64_t len, uint32_t n,
			   uint32_t i, int64_t *out)
{
	const unsigned char *bytes = (const unsigned char *) (area + n + 1);
	uint64_t	room = len - gx_ptree_probes_size(n, 0);
	uint32_t	a = area[i];
	uint32_t	b = area[i + 1];

	if (a > b || b > room)
	{
		out[i] = -1;
		return 0;
	}
	out[i] = gx_ptree_lookup(m, bytes + a, b - a);
	return 1;
}

/* ---------------------------------------------------------------------
 * The merge plan (seed 003's duplicate removal and MUM merge)
 *
 * A merge of the delta into main, for keys of 4 or 8 bytes (int4, date,
 * int8, timestamp), is planned before main is rewritten: the delta's
 * non-NULL entries, as 64-bit keys (the normalized key's bytes read
 * big-endian, so their order is the key order) and TIDs, are sorted by
 * (key, TID), exact duplicates are dropped, and each entry gets its rank in
 * main: the index of the first of main's distinct keys (the mirror's keys)
 * that is >= its key, times two, plus one if that key is equal.  The
 * rewrite (src/ptree_build.c) then streams main's leaves and splices the
 * entries in where their ranks say, without comparing delta keys with main
 * keys.  The GPU (cuda/ptree.cu: radix sort, a scan, this per-entry step)
 * and the CPU engine (qsort, then the same steps) compute it.
 *
 * A GX_REQ_PTREE_MERGE batch of n entries: program area uint64 keys[n],
 * then uint64 tids[n] (block << 16 | offset); output: uint64 count, then
 * keys[n], tids[n] and ranks[n] (count of each used).  arg = n; the mirror
 * is the task's device copy (GPU) or the registered table arg2 (CPU).
 * ---------------------------------------------------------------------
 */

/* The 64-bit merge key of a normalized key of at most 8 bytes */
GX_FUNC uint64_t
gx_ptree_key64(const unsigned char *key, uint32_t len)
{
	uint64_t	v = 0;

	for (uint32_t i = 0; i < len; i++)
		v = (v << 8) | key[i];
	return v;
}

/*
 * Can a mirror's keys be read as merge keys of 'len' bytes?  Every key of
 * the mirror of such an index has that length (or there is none).
 */
GX_FUNC int
gx_ptree_merge_mirror_ok(const GxPtreeMirror *m, uint32_t len)
{
	return len <= 8 && (m->nkeys == 0 ||
						((m->flags & GX_PTREE_FIXED) && m->strip + m->keylen == len));
}

/* The merge key of the mirror's key i (gx_ptree_merge_mirror_ok) */
GX_FUNC uint64_t
gx_ptree_mirror_key64(const GxPtreeMirror *m, uint64_t i)
{
	uint32_t	len;
	const unsigned char *k = gx_ptree_key(m, i, &len);
	uint64_t	v = gx_ptree_key64(m->prefix, m->strip);

	for (uint32_t b = 0; b < len; b++)
		v = (v << 8) | k[b];
	return v;
}

/* Order of merge entries: key, then TID */
GX_FUNC int
gx_ptree_merge_cmp(uint64_t ka, uint64_t ta, uint64_t kb, uint64_t tb)
{
	if (ka != kb)
		return ka < kb ? -1 : 1;
	return (ta > tb) - (ta < tb);
}

/* Is sorted entry i the first of its (key, TID)?  (duplicate removal) */
GX_FUNC int
gx_ptree_merge_keep(const uint64_t *keys, const uint64_t *tids, uint64_t i)
{
	return i == 0 || keys[i] != keys[i - 1] || tids[i] != tids[i - 1];
}

/*
 * The rank of a merge key in the mirror: 2 * (index of the first key >=
 * it, nkeys if none) + (1 if that key is equal), by binary search
 */
GX_FUNC uint64_t
gx_ptree_merge_rank(const GxPtreeMirror *m, uint64_t key)
{
	uint64_t	lo = 0,
				hi = m->nkeys;

	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo) / 2;

		if (gx_ptree_mirror_key64(m, mid) < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo * 2 + (lo < m->nkeys && gx_ptree_mirror_key64(m, lo) == key);
}

/* Bytes of the program area and of the output of a merge of n entries */
GX_FUNC uint64_t
gx_ptree_merge_in_size(uint64_t n)
{
	return n * 2 * sizeof(uint64_t);
}

GX_FUNC uint64_t
gx_ptree_merge_out_size(uint64_t n)
{
	return sizeof(uint64_t) + n * 3 * sizeof(uint64_t);
}

/*
 * Device scratch memory of a merge of n entries, in 256-byte aligned
 * parts: the entries (the program), their sort's second buffers, keep
 * flags and their prefix sums, the output, then the sort's and scan's
 * temporary storage (GX_PTREE_MERGE_TEMP(n) bytes, checked at the launch)
 */
#define GX_PTREE_MERGE_TEMP(n)	((uint64_t) 4 * 1024 * 1024 + (uint64_t) (n) * 8)

GX_FUNC uint64_t
gx_ptree_merge_part(uint64_t bytes)
{
	return (bytes + 255) & ~(uint64_t) 255;
}

GX_FUNC uint64_t
gx_ptree_merge_scratch(uint64_t n)
{
	return gx_ptree_merge_part(gx_ptree_merge_in_size(n)) +
		gx_ptree_merge_part(gx_ptree_merge_in_size(n)) +
		2 * gx_ptree_merge_part((n + 1) * sizeof(uint32_t)) +
		gx_ptree_merge_part(gx_ptree_merge_out_size(n)) +
		GX_PTREE_MERGE_TEMP(n);
}

/*
 * The output step of sorted entry i: if it is kept, its key, TID and rank
 * go to place pos (the number of entries kept before it)
 */
GX_FUNC void
gx_ptree_merge_emit(const GxPtreeMirror *m, const uint64_t *keys, const uint64_t *tids,
					uint64_t i, uint64_t pos, uint64_t n, uint64_t *out)
{
	uint64_t   *okeys = out + 1;

	okeys[pos] = keys[i];
	okeys[n + pos] = tids[i];
	okeys[2 * n + pos] = gx_ptree_merge_rank(m, keys[i]);
}

#ifndef __CUDA_ARCH__

/* probes of a group of the CPU engine (gx_ptree_probe_group) */
#define GX_PTREE_GROUP	32

/*
 * The CPU engine's lookup of probes [first, first + count) of a batch
 * (count at most GX_PTREE_GROUP): the same results as gx_ptree_probe on
 * each, which computes them, but first the KISS levels and the key of
 * every probe of the group are prefetched level by level, so that a core
 * waits for each level's memory reads of the whole group at once rather
 * than for one probe's after another's (a mirror of a large index does
 * not fit any cache).  Returns 0 on a malformed probe, as gx_ptree_probe.
 */
static inline int
gx_ptree_probe_group(const GxPtreeMirror *m, const uint32_t *area, uint64_t len, uint32_t n,
					 uint32_t first, uint32_t count, int64_t *out)
{
	const unsigned char *bytes = (const unsigned char *) (area + n + 1);
	uint64_t	room = len - gx_ptree_probes_size(n, 0);
	const uint32_t *root = GX_PTREE_PART(m, off_root, const uint32_t);
	const uint32_t *nodes = GX_PTREE_PART(m, off_nodes, const uint32_t);
	const GxPtreeLeaf *leaves = GX_PTREE_PART(m, off_leaves, const GxPtreeLeaf);
	uint32_t	prefix[GX_PTREE_GROUP];
	uint32_t	at[GX_PTREE_GROUP];	/* 0: no further level to read */
	uint32_t	j;

	if (count > GX_PTREE_GROUP)
		return 0;
	/* level 1: the root entries (the key bytes are read in order) */
	for (j = 0; j < count; j++)
	{
		uint32_t	a = area[first + j];
		uint32_t	b = area[first + j + 1];

		at[j] = 0;
		if (a > b || b > room)
			continue;
		prefix[j] = gx_ptree_prefix32(bytes + a, b - a, m->skip);
		at[j] = 1;
		__builtin_prefetch(&root[prefix[j] >> 16]);
	}
	/* level 2: the node entries */
	for (j = 0; j < count; j++)
	{
		uint32_t	node;

		if (at[j] == 0 || (node = root[prefix[j] >> 16]) == 0)
		{
			at[j] = 0;
			continue;
		}
		at[j] = (node - 1) * GX_PTREE_NODE_SIZE + ((prefix[j] >> 6) & (GX_PTREE_NODE_SIZE - 1)) + 1;
		__builtin_prefetch(&nodes[at[j] - 1]);
	}
	/* level 3: the leaves */
	for (j = 0; j < count; j++)
	{
		if (at[j] == 0 || (at[j] = nodes[at[j] - 1]) == 0)
			continue;
		__builtin_prefetch(&leaves[at[j] - 1]);
	}
	/* the first key of the slot (of fixed-length keys: where it is known) */
	if (m->flags & GX_PTREE_FIXED)
		for (j = 0; j < count; j++)
		{
			const GxPtreeLeaf *l;
			uint32_t	bit;
			int64_t		slot;
			uint32_t	klen;

			if (at[j] == 0)
				continue;
			l = &leaves[at[j] - 1];
			bit = prefix[j] & 63;
			if (((l->bitmap >> bit) & 1) == 0)
				continue;
			slot = (int64_t) l->first + gx_popc64(l->bitmap & ((((uint64_t) 1) << bit) - 1));
			if (m->flags & GX_PTREE_ONE_PER_SLOT)
				__builtin_prefetch(gx_ptree_key(m, (uint64_t) slot, &klen));
			else
				__builtin_prefetch(&GX_PTREE_PART(m, off_slots, const uint32_t)[slot]);
		}
	/* the lookups, their reads now in cache */
	for (j = 0; j < count; j++)
		if (!gx_ptree_probe(m, area, len, n, first + j, out))
			return 0;
	return 1;
}

#endif							/* !__CUDA_ARCH__ */

#endif							/* GX_PTREE_H */
