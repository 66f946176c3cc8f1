/*-------------------------------------------------------------------------
 * gx_join.h
 *		Hash joins: the inner hash tables and the per-row semantics of
 *		building and probing them, shared by the GPU kernels (nvcc) and the
 *		CPU engine (gcc).
 *
 * A GpuJoin node probes up to GX_JOIN_MAX_DEPTH inner relations ("depths")
 * with the keys of each row of one scanned heap relation (the outer side).
 * Every depth has its own open-addressing hash table (after Kaldewey et
 * al.): a power-of-two array of slots, each 0 (empty) or the number + 1 of
 * the first inner row of one distinct key.  Rows are inserted with a
 * compare-and-swap on the slot; a row whose key is already there is pushed
 * (again with a compare-and-swap) on the duplicate chain of that key's
 * first row, so a probe finds one slot per distinct key and the host walks
 * the chain to produce every match.
 *
 * Keys are compared as canonical 8-byte words, so equal SQL values have
 * equal words whatever their type within a class: int2, int4 and int8 are
 * all int64 (cross-type int4 = int8 joins), float4 and float8 are double
 * with -0 = 0 and one NaN (float48eq), numeric drops trailing zeros,
 * bpchar drops trailing blanks, text compares bytes (deterministic
 * collations only).  A NULL key never matches; 0 is an ordinary key.
 * Inner keys are encoded into words by the host; outer keys are hashed
 * and compared word by word straight from the program's registers, which
 * the program loads from a heap tuple or from a column cache's row
 * (gx_join_tuple, gx_join_cached_row: only the column fetch differs).
 *
 * IDENTIFICATION
 *		cuda/gx_join.h
 *-------------------------------------------------------------------------
 */
#ifndef GX_JOIN_H
#define GX_JOIN_H

#include "gx_agg.h"

#define GX_JOIN_MAX_DEPTH	8
#define GX_JOIN_MAX_KEYS	8

/* join types of a depth */
#define GX_JOIN_INNER		0
#define GX_JOIN_LEFT		1
#define GX_JOIN_SEMI		2
#define GX_JOIN_ANTI		3

/* key classes: how a key is turned into words */
#define GX_JKEY_INT			1	/* int2/int4/int8, bool, date, timestamp(tz) */
#define GX_JKEY_FLOAT		2	/* float4/float8 */
#define GX_JKEY_NUMERIC		3
#define GX_JKEY_TEXT		4	/* text, varchar */
#define GX_JKEY_BPCHAR		5

typedef struct GxJoinKey
{
	uint8_t		kclass;			/* GX_JKEY_* */
	uint8_t		pad;
	uint16_t	reg;			/* register of the outer key value */
} GxJoinKey;

typedef struct GxJoinDepth
{
	uint8_t		jointype;		/* GX_JOIN_* */
	uint8_t		nkeys;
	uint8_t		filter;			/* drop rows the join type rejects */
	uint8_t		pad;
	GxJoinKey	keys[GX_JOIN_MAX_KEYS];
} GxJoinDepth;

/*
 * An inner column loaded into a register for each joined row (a group key
 * of an aggregation fused with the join): column 'col' of the stored
 * values of depth 'depth'.
 */
#define GX_JOIN_MAX_PAYLOAD	8

typedef struct GxJoinPayload
{
	uint8_t		depth;
	uint8_t		type;			/* GxType */
	uint16_t	reg;
	uint32_t	col;
} GxJoinPayload;

/* what a GX_REQ_JOIN batch does after its program ran: follows the program */
typedef struct GxJoinSpec
{
	uint32_t	ndepths;
	uint32_t	npayload;		/* fused aggregation only */
	GxJoinDepth depths[GX_JOIN_MAX_DEPTH];
	GxJoinPayload payload[GX_JOIN_MAX_PAYLOAD];
} GxJoinSpec;

/* A fused join aggregation's join spec: after its aggregation spec, 16-byte aligned. */
GX_FUNC const GxJoinSpec *
gx_join_spec_after_agg(const GxAggSpec *aspec)
{
	return (const GxJoinSpec *) ((const char *) aspec + ((sizeof(GxAggSpec) + 15) & ~(size_t) 15));
}

/* a stored inner value (register image); text bytes elsewhere in the table */
typedef struct GxJoinValue
{
	int64_t		lo;				/* int, date, timestamp, bool, float bits, numeric
								 * low, text length */
	int64_t		hi;				/* numeric high 64 bits */
	int32_t		scale;
	int32_t		isnull;
	uint64_t	text_off;		/* text: offset of its bytes from the table */
} GxJoinValue;

/* one inner row of a hash table */
typedef struct GxJoinRow
{
	uint64_t	key_off;		/* its key words, from the table's key area */
	uint32_t	key_words;
	uint32_t	hash;
	uint32_t	next;			/* next row with the same key, + 1; 0 ends */
	uint32_t	pad;
} GxJoinRow;

/*
 * The hash table of one depth: header, slots, rows, key words.  Offsets
 * are relative to the header, so the bytes are valid in any address space.
 */
typedef struct GxJoinTable
{
	uint64_t	nrows;
	uint64_t	capacity;		/* slots, a power of two */
	uint64_t	slots_off;		/* uint32_t[capacity] */
	uint64_t	rows_off;		/* GxJoinRow[nrows] */
	uint64_t	keys_off;		/* uint64_t words */
	uint64_t	nwords;
	uint64_t	values_off;		/* GxJoinValue[nrows][nvalues], then text bytes */
	uint32_t	nvalues;		/* stored columns per row */
	uint32_t	pad;
} GxJoinTable;

/* the tables of every depth, in one block (device memory or backend memory) */
typedef struct GxJoinTables
{
	uint32_t	ndepths;
	uint32_t	pad;
	uint64_t	total_bytes;
	uint64_t	table_off[GX_JOIN_MAX_DEPTH];
} GxJoinTables;

/* per-page output of a GX_REQ_JOIN batch: then uint32_t match[ndepths][291] */
typedef struct GxJoinPageOut
{
	uint32_t	pass[GX_BITMAP_WORDS];
	uint32_t	recheck[GX_BITMAP_WORDS];
} GxJoinPageOut;

GX_FUNC uint32_t
gx_join_out_per_page(uint32_t ndepths)
{
	return (uint32_t) sizeof(GxJoinPageOut) + 4 * GX_MAX_TUPLES_PER_PAGE * ndepths;
}

/* match[d] of tuple 'off' (1-based) of a page's output */
GX_FUNC uint32_t *
gx_join_matches(GxJoinPageOut *out, uint32_t ndepths, uint32_t off)
{
	return (uint32_t *) (out + 1) + (uint64_t) (off - 1) * ndepths;
}

GX_FUNC GxJoinTable *
gx_join_table(GxJoinTables *ts, uint32_t d)
{
	return (GxJoinTable *) ((char *) ts + ts->table_off[d]);
}

GX_FUNC uint32_t *
gx_join_slots(GxJoinTable *t)
{
	return (uint32_t *) ((char *) t + t->slots_off);
}

GX_FUNC GxJoinRow *
gx_join_rows(GxJoinTable *t)
{
	return (GxJoinRow *) ((char *) t + t->rows_off);
}

GX_FUNC uint64_t *
gx_join_keys(GxJoinTable *t)
{
	return (uint64_t *) ((char *) t + t->keys_off);
}

/* ---------------------------------------------------------------------
 * Key words
 * ---------------------------------------------------------------------
 */

/*
 * The hash mix and the numeric canonical form are gx_agg.h's (gx_mix64,
 * gx_numeric_canonical): join and aggregation keys are hashed alike.
 */

/* bytes of a text key (bpchar without its trailing blanks) */
GX_FUNC int64_t
gx_join_text_len(int kclass, const GxDatum *r)
{
	return kclass == GX_JKEY_BPCHAR ? gx_bpchar_truelen(r->v.s.ptr, r->v.s.len) : r->v.s.len;
}

/* number of words of one (non-null) key */
GX_FUNC uint32_t
gx_join_key_nwords(int kclass, const GxDatum *r)
{
	switch (kclass)
	{
		case GX_JKEY_NUMERIC:
			return 3;
		case GX_JKEY_TEXT:
		case GX_JKEY_BPCHAR:
			return 1 + (uint32_t) ((gx_join_text_len(kclass, r) + 7) / 8);
		default:
			return 1;
	}
}

/* word i of one (non-null) key */
GX_FUNC uint64_t
gx_join_key_word(int kclass, const GxDatum *r, uint32_t i)
{
	switch (kclass)
	{
		case GX_JKEY_FLOAT:
			{
				union
				{
					double		f;
					uint64_t	w;
				}			u;

				u.f = r->v.f;
				if (gx_isnan(u.f))
					return UINT64_C(0x7ff8000000000000);
				if (u.f == 0.0)
					u.f = 0.0;	/* -0 equals 0 */
				return u.w;
			}
		case GX_JKEY_NUMERIC:
			{
				__int128	cv;
				int			cs;

				gx_numeric_canonical(r->v.n, r->scale, &cv, &cs);
				if (i == 0)
					return (uint64_t) cv;
				if (i == 1)
					return (uint64_t) (cv >> 64);
				return (uint64_t) cs;
			}
		case GX_JKEY_TEXT:
		case GX_JKEY_BPCHAR:
			{
				int64_t		len = gx_join_text_len(kclass, r);
				uint64_t	w = 0;

				if (i == 0)
					return (uint64_t) len;
				for (int b = 0; b < 8; b++)
				{
					int64_t		at = (int64_t) (i - 1) * 8 + b;

					if (at < len)
						w |= (uint64_t) r->v.s.ptr[at] << (8 * b);
				}
				return w;
			}
		default:
			return (uint64_t) r->v.i;
	}
}

/* any key NULL?  Then the row matches nothing */
GX_FUNC int
gx_join_key_has_null(const GxJoinDepth *d, const GxDatum *regs)
{
	for (int k = 0; k < d->nkeys; k++)
		if (regs[d->keys[k].reg].isnull)
			return 1;
	return 0;
}

/* words of a whole key tuple */
GX_FUNC uint32_t
gx_join_nwords(const GxJoinDepth *d, const GxDatum *regs)
{
	uint32_t	n = 0;

	for (int k = 0; k < d->nkeys; k++)
		n += gx_join_key_nwords(d->keys[k].kclass, &regs[d->keys[k].reg]);
	return n;
}

/* hash of a sequence of words: the same for registers and stored keys */
GX_FUNC uint64_t
gx_join_hash_step(uint64_t h, uint64_t w)
{
	return gx_mix64(h ^ w) + UINT64_C(0x9e3779b97f4a7c15);
}

GX_FUNC uint32_t
gx_join_hash_final(uint64_t h, uint32_t nwords)
{
	h = gx_mix64(h ^ nwords);
	return (uint32_t) (h ^ (h >> 32));
}

/* hash of the key tuple of a row's registers (no key NULL) */
GX_FUNC uint32_t
gx_join_hash_regs(const GxJoinDepth *d, const GxDatum *regs)
{
	uint64_t	h = 0;
	uint32_t	n = 0;

	for (int k = 0; k < d->nkeys; k++)
	{
		const GxDatum *r = &regs[d->keys[k].reg];
		uint32_t	nw = gx_join_key_nwords(d->keys[k].kclass, r);

		for (uint32_t i = 0; i < nw; i++)
			h = gx_join_hash_step(h, gx_join_key_word(d->keys[k].kclass, r, i));
		n += nw;
	}
	return gx_join_hash_final(h, n);
}

/* hash of stored key words */
GX_FUNC uint32_t
gx_join_hash_words(const uint64_t *w, uint32_t nwords)
{
	uint64_t	h = 0;

	for (uint32_t i = 0; i < nwords; i++)
		h = gx_join_hash_step(h, w[i]);
	return gx_join_hash_final(h, nwords);
}

/* Write the words of a key tuple (the host encodes inner keys with it). */
GX_FUNC void
gx_join_encode(const GxJoinDepth *d, const GxDatum *regs, uint64_t *out)
{
	for (int k = 0; k < d->nkeys; k++)
	{
		const GxDatum *r = &regs[d->keys[k].reg];
		uint32_t	nw = gx_join_key_nwords(d->keys[k].kclass, r);

		for (uint32_t i = 0; i < nw; i++)
			*out++ = gx_join_key_word(d->keys[k].kclass, r, i);
	}
}

/* Do a row's key registers equal stored key words? */
GX_FUNC int
gx_join_equal_regs(const GxJoinDepth *d, const GxDatum *regs, const uint64_t *w,
				   uint32_t nwords)
{
	uint32_t	at = 0;

	for (int k = 0; k < d->nkeys; k++)
	{
		const GxDatum *r = &regs[d->keys[k].reg];
		uint32_t	nw = gx_join_key_nwords(d->keys[k].kclass, r);

		if (at + nw > nwords)
			return 0;
		for (uint32_t i = 0; i < nw; i++)
			if (w[at + i] != gx_join_key_word(d->keys[k].kclass, r, i))
				return 0;
		at += nw;
	}
	return at == nwords;
}

GX_FUNC int
gx_join_equal_words(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	if (na != nb)
		return 0;
	for (uint32_t i = 0; i < na; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* ---------------------------------------------------------------------
 * Build and probe
 * ---------------------------------------------------------------------
 */
#ifdef GX_DEVICE_CODE
#define GX_JOIN_CAS_U32(p, o, n) atomicCAS((unsigned int *) (p), (unsigned int) (o), (unsigned int) (n))
#else
GX_FUNC uint32_t
gx_join_plain_cas_u32(uint32_t *p, uint32_t o, uint32_t n)
{
	uint32_t	old = *p;

	if (old == o)
		*p = n;
	return old;
}
#define GX_JOIN_CAS_U32(p, o, n) gx_join_plain_cas_u32((uint32_t *) (p), (o), (n))
#endif

/*
 * Insert inner row i (its key words and hash already stored) into its
 * table: claim an empty slot, or join the duplicate chain of the row that
 * holds the same key.  Rows are never moved, so concurrent inserts only
 * race on slots and chain heads, both settled by compare-and-swap.
 * Returns 0, or -1 when the table is full (cannot happen when capacity >
 * nrows, as the host sizes it).
 */
GX_ATOMIC_FUNC int
gx_join_insert(GxJoinTable *t, uint32_t i)
{
	uint32_t   *slots = gx_join_slots(t);
	GxJoinRow  *rows = gx_join_rows(t);
	const uint64_t *keys = gx_join_keys(t);
	GxJoinRow  *me = &rows[i];
	uint64_t	mask = t->capacity - 1;
	uint64_t	s = me->hash & mask;

	for (uint64_t probes = 0; probes < t->capacity; probes++, s = (s + 1) & mask)
	{
		uint32_t	cur = ((volatile uint32_t *) slots)[s];
		GxJoinRow  *head;

		if (cur == 0)
		{
			cur = GX_JOIN_CAS_U32(&slots[s], 0, i + 1);
			if (cur == 0)
				return 0;
		}
		head = &rows[cur - 1];
		if (head->hash == me->hash &&
			gx_join_equal_words(keys + head->key_off, head->key_words,
								keys + me->key_off, me->key_words))
		{
			/* push on the chain that follows the head */
			uint32_t	old = ((volatile uint32_t *) &head->next)[0];

			for (;;)
			{
				uint32_t	seen;

				me->next = old;
				seen = GX_JOIN_CAS_U32(&head->next, old, i + 1);
				if (seen == old)
					return 0;
				old = seen;
			}
		}
	}
	return -1;
}

/*
 * The first inner row (number + 1) whose key equals the row's key
 * registers, or 0: a NULL key matches nothing.
 */
GX_FUNC uint32_t
gx_join_probe(GxJoinTable *t, const GxJoinDepth *d, const GxDatum *regs)
{
	const uint32_t *slots;
	const GxJoinRow *rows;
	const uint64_t *keys;
	uint32_t	hash;
	uint64_t	mask,
				s;

	if (t->nrows == 0 || gx_join_key_has_null(d, regs))
		return 0;
	slots = gx_join_slots(t);
	rows = gx_join_rows(t);
	keys = gx_join_keys(t);
	hash = gx_join_hash_regs(d, regs);
	mask = t->capacity - 1;
	s = hash & mask;
	for (uint64_t probes = 0; probes < t->capacity; probes++, s = (s + 1) & mask)
	{
		uint32_t	cur = slots[s];
		const GxJoinRow *r;

		if (cur == 0)
			return 0;
		r = &rows[cur - 1];
		if (r->hash == hash && gx_join_equal_regs(d, regs, keys + r->key_off, r->key_words))
			return cur;
	}
	return 0;
}

/*
 * Probe every depth with a row the program evaluated to rc (its registers
 * in regs): match[d] gets the first matching inner row + 1 (0: none).
 * Returns GX_ROW_PASS when the row survives every depth whose join type
 * filters (inner and semi need a match, anti needs none; left keeps every
 * row), GX_ROW_FAIL, or GX_ROW_RECHECK when the device cannot decide the
 * row (the host evaluates it with PostgreSQL).
 */
GX_FUNC int
gx_join_probe_row(const GxJoinSpec *spec, GxJoinTables *ts, int rc, GxDatum *regs,
				  uint32_t *match)
{
	if (rc != GX_ROW_PASS)
		return rc;
	for (uint32_t d = 0; d < spec->ndepths; d++)
	{
		const GxJoinDepth *jd = &spec->depths[d];
		uint32_t	m = gx_join_probe(gx_join_table(ts, d), jd, regs);

		match[d] = m;
		if (!jd->filter)
			continue;
		if ((jd->jointype == GX_JOIN_INNER || jd->jointype == GX_JOIN_SEMI) && m == 0)
			return GX_ROW_FAIL;
		if (jd->jointype == GX_JOIN_ANTI && m != 0)
			return GX_ROW_FAIL;
	}
	return GX_ROW_PASS;
}

/*
 * One outer tuple of a page: run the program (quals, then the outer key
 * expressions), then probe every depth (gx_join_probe_row).
 */
GX_FUNC int
gx_join_tuple(const GxProgram *prog, const GxJoinSpec *spec, GxJoinTables *ts,
			  const unsigned char *page, const GxPageRef *ref, uint32_t off,
			  GxDatum *regs, uint32_t *match)
{
	return gx_join_probe_row(spec, ts, gx_scan_tuple(prog, page, ref, off, regs), regs, match);
}

/* The same for row 'row' of a column cache (a GX_PAGE_CACHED page's row). */
GX_FUNC int
gx_join_cached_row(const GxProgram *prog, const GxJoinSpec *spec, GxJoinTables *ts,
				   const GxColCache *cc, uint64_t row, GxDatum *regs, uint32_t *match)
{
	return gx_join_probe_row(spec, ts, gx_scan_cached_row(prog, cc, row, regs), regs, match);
}

/* Load stored column 'col' of inner row 'row' (UINT32_MAX: none, NULL). */
GX_FUNC void
gx_join_load_value(GxJoinTable *t, uint32_t row, uint32_t col, int type, GxDatum *r)
{
	const GxJoinValue *v;

	r->scale = 0;
	if (row == UINT32_MAX)
	{
		r->isnull = 1;
		return;
	}
	v = (const GxJoinValue *) ((const char *) t + t->values_off) + (uint64_t) row * t->nvalues + col;
	r->isnull = v->isnull;
	r->scale = v->scale;
	switch (type)
	{
		case GX_TYPE_TEXT:
		case GX_TYPE_BPCHAR:
			r->v.s.ptr = (const unsigned char *) t + v->text_off;
			r->v.s.len = v->lo;
			break;
		case GX_TYPE_NUMERIC:
			r->v.n = (__int128) (((unsigned __int128) (uint64_t) v->hi << 64) | (uint64_t) v->lo);
			break;
		case GX_TYPE_FLOAT4:
		case GX_TYPE_FLOAT8:
			{
				union
				{
					int64_t		i;
					double		f;
				}			u;

				u.i = v->lo;
				r->v.f = u.f;
				break;
			}
		default:
			r->v.i = v->lo;
			break;
	}
}

/*
 * The fused aggregation with inner group keys: one group update per
 * joined row, each with the inner columns of its rows in registers.  The
 * rows of each inner or left depth are enumerated like an odometer over
 * the duplicate chains (an unmatched left row: NULL columns).
 */
GX_ATOMIC_FUNC int
gx_join_agg_combinations(const GxAggSpec *aspec, const GxJoinSpec *jspec, GxAggTable *local,
						 GxAggTable *t, GxJoinTables *ts, GxDatum *regs, unsigned char *keybuf,
						 const uint32_t *match)
{
	uint32_t	head[GX_JOIN_MAX_DEPTH];
	uint32_t	cur[GX_JOIN_MAX_DEPTH];

	for (uint32_t d = 0; d < jspec->ndepths; d++)
	{
		int			jt = jspec->depths[d].jointype;

		head[d] = (match[d] != 0 && (jt == GX_JOIN_INNER || jt == GX_JOIN_LEFT)) ?
			match[d] - 1 : UINT32_MAX;
		cur[d] = head[d];
	}
	for (;;)
	{
		unsigned char *entry;
		int			d;

		for (uint32_t p = 0; p < jspec->npayload; p++)
		{
			const GxJoinPayload *pl = &jspec->payload[p];

			gx_join_load_value(gx_join_table(ts, pl->depth), cur[pl->depth], pl->col,
							   pl->type, &regs[pl->reg]);
		}
		entry = gx_agg_group_entry(local, t, aspec, regs, keybuf);
		if (entry == NULL || gx_agg_accumulate(aspec, entry, regs) != 0)
			return GX_ROW_RECHECK;
		/* next combination */
		for (d = (int) jspec->ndepths - 1; d >= 0; d--)
		{
			const GxJoinRow *rows = gx_join_rows(gx_join_table(ts, d));

			if (cur[d] != UINT32_MAX && rows[cur[d]].next != 0)
			{
				cur[d] = rows[cur[d]].next - 1;
				break;
			}
			cur[d] = head[d];
		}
		if (d < 0)
			return GX_ROW_PASS;
	}
}

/*
 * How many joined rows an outer row that passed gx_join_tuple makes: the
 * product over inner and left depths of its matches (a left join's
 * unmatched row counts once); semi and anti depths keep or drop it whole.
 */
GX_FUNC uint64_t
gx_join_multiplicity(GxJoinTables *ts, const GxJoinSpec *spec, const uint32_t *match)
{
	uint64_t	m = 1;

	for (uint32_t d = 0; d < spec->ndepths; d++)
	{
		const GxJoinRow *rows = gx_join_rows(gx_join_table(ts, d));
		uint64_t	n = 0;
		int			jt = spec->depths[d].jointype;

		if (jt == GX_JOIN_SEMI || jt == GX_JOIN_ANTI)
			continue;
		for (uint32_t r = match[d]; r != 0; r = rows[r - 1].next)
			n++;
		if (jt == GX_JOIN_LEFT && n == 0)
			n = 1;
		m *= n;
	}
	return m;
}

/*
 * Aggregation fused with the join (GpuAgg over GpuJoin, group keys and
 * aggregate inputs from the outer relation): a row the program evaluated
 * to rc (its registers in regs) probes every depth, then is added to its
 * group once per joined row it makes.  Returns GX_ROW_PASS, GX_ROW_FAIL or
 * GX_ROW_RECHECK.
 */
GX_ATOMIC_FUNC int
gx_join_agg_row(const GxAggSpec *aspec, const GxJoinSpec *jspec, GxAggTable *local,
				GxAggTable *t, GxJoinTables *ts, int rc, GxDatum *regs, unsigned char *keybuf,
				uint32_t *match)
{
	uint64_t	m;
	unsigned char *entry;

	rc = gx_join_probe_row(jspec, ts, rc, regs, match);
	if (rc != GX_ROW_PASS)
		return rc;
	if (jspec->npayload > 0)
		return gx_join_agg_combinations(aspec, jspec, local, t, ts, regs, keybuf, match);
	m = gx_join_multiplicity(ts, jspec, match);
	if (m == 0)
		return GX_ROW_FAIL;
	entry = gx_agg_group_entry(local, t, aspec, regs, keybuf);
	if (entry == NULL)
		return GX_ROW_RECHECK;
	for (uint64_t i = 0; i < m; i++)
		if (gx_agg_accumulate(aspec, entry, regs) != 0)
			return GX_ROW_RECHECK;
	return GX_ROW_PASS;
}

/* The fused aggregation's step for tuple 'off' of a heap page. */
GX_ATOMIC_FUNC int
gx_join_agg_tuple(const GxProgram *prog, const GxAggSpec *aspec, const GxJoinSpec *jspec,
				  GxAggTable *local, GxAggTable *t, GxJoinTables *ts, const unsigned char *page,
				  const GxPageRef *ref, uint32_t off, GxDatum *regs, unsigned char *keybuf,
				  uint32_t *match)
{
	return gx_join_agg_row(aspec, jspec, local, t, ts, gx_scan_tuple(prog, page, ref, off, regs),
						   regs, keybuf, match);
}

/* The same for row 'row' of a column cache (a GX_PAGE_CACHED page's row). */
GX_ATOMIC_FUNC int
gx_join_agg_cached_row(const GxProgram *prog, const GxAggSpec *aspec, const GxJoinSpec *jspec,
					   GxAggTable *local, GxAggTable *t, GxJoinTables *ts, const GxColCache *cc,
					   uint64_t row, GxDatum *regs, unsigned char *keybuf, uint32_t *match)
{
	return gx_join_agg_row(aspec, jspec, local, t, ts, gx_scan_cached_row(prog, cc, row, regs),
						   regs, keybuf, match);
}

/* Bytes of the table block for these depths (rows and key words each). */
GX_FUNC uint64_t
gx_join_table_bytes(uint64_t nrows, uint64_t nwords, uint64_t *capacity)
{
	uint64_t	cap = 16;

	while (cap < 2 * nrows)
		cap <<= 1;
	*capacity = cap;
	return sizeof(GxJoinTable) + ((cap * 4 + 15) & ~(uint64_t) 15) +
		nrows * sizeof(GxJoinRow) + nwords * 8;
}

#endif							/* GX_JOIN_H */
