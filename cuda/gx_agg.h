/*-------------------------------------------------------------------------
 * gx_agg.h
 *		GROUP BY aggregation: the group table and the per-row semantics of
 *		grouping and accumulating, shared by the GPU kernels (nvcc) and the
 *		CPU engine (gcc).
 *
 * A group table is an open-addressing hash table of fixed-size entries:
 *
 *		uint32 state | uint32 hash | key area | accumulators
 *
 * An entry is claimed with a compare-and-swap on its state (EMPTY ->
 * BUSY), filled, then published (READY); other threads looking for the
 * same key wait for READY.  Keys are encoded so that equal SQL values have
 * equal bytes (floats: -0 is 0, every NaN the same; text compared without
 * trailing blanks for bpchar).  Accumulators are exact where PostgreSQL's
 * are: counts and integer sums in 64/128 bits, numeric sums in 128 bits
 * at a fixed scale; float sums in double (the summation order differs from
 * PostgreSQL's, see docs/).  Every update is an atomic on the device and
 * a plain add in the CPU engine.
 *
 * IDENTIFICATION
 *		cuda/gx_agg.h
 *-------------------------------------------------------------------------
 */
#ifndef GX_AGG_H
#define GX_AGG_H

#include "gx_program.h"
#include "gx_colcache.h"

#define GX_AGG_MAX_KEYS		8
#define GX_AGG_MAX_AGGS		32
#define GX_KEY_TEXT_MAX		32		/* longer text keys go to the host */

/* a min/max accumulator that has seen no value yet */
#define GX_F64_EMPTY		UINT64_C(0xFFFFFFFFFFFFFFFF)

/* entry states */
#define GX_ENTRY_EMPTY		0
#define GX_ENTRY_BUSY		1
#define GX_ENTRY_READY		2

/* accumulator kinds */
typedef enum GxAggKind
{
	GX_AGG_COUNT_STAR = 1,		/* n */
	GX_AGG_COUNT,				/* n of non-null */
	GX_AGG_SUM_INT,				/* n, int128 sum of integers */
	GX_AGG_SUM_NUMERIC,			/* n, int128 sum at a fixed scale, max scale */
	GX_AGG_SUM_FLOAT,			/* n, double sum */
	GX_AGG_MIN_INT,				/* n, int64 min (ints, dates, timestamps) */
	GX_AGG_MAX_INT,
	GX_AGG_MIN_FLOAT,			/* n, double min with NaN largest */
	GX_AGG_MAX_FLOAT,
	GX_AGG_KEY_SCALE,			/* n, largest display scale of a numeric key */
	GX_AGG_MIN_NUMERIC,			/* n, int64 min at a fixed scale, min and max input scale */
	GX_AGG_MAX_NUMERIC,
	GX_AGG_VARIANCE,			/* n, int128 sum and sum of squares (integers or
								 * numeric at a fixed scale), max scale */
	GX_AGG_VARIANCE_FLOAT		/* n, double sum, max |v|, double sum of squares */
} GxAggKind;

typedef struct GxAggKey
{
	uint8_t		type;			/* GxType */
	uint8_t		pad;
	uint16_t	reg;			/* register with the key value */
	uint16_t	offset;			/* in the entry */
	uint16_t	width;			/* bytes in the entry */
} GxAggKey;

typedef struct GxAggFunc
{
	uint8_t		kind;			/* GxAggKind */
	uint8_t		type;			/* GxType of the input */
	uint16_t	reg;			/* register with the input (not COUNT_STAR) */
	uint16_t	offset;			/* accumulator offset in the entry */
	int16_t		scale;			/* GX_AGG_SUM_NUMERIC: fixed scale */
	uint16_t	filter_reg;		/* FILTER (WHERE ...) result, or GX_NO_REG */
	uint8_t		neg_zero_init;	/* GX_AGG_SUM_FLOAT: start at -0.0 */
	uint8_t		track_lsb;		/* GX_AGG_SUM_FLOAT: least bit of the inputs (sum(float4)) */
} GxAggFunc;

/* the aggregation a batch performs, after its program has run */
typedef struct GxAggSpec
{
	uint16_t	nkeys;
	uint16_t	naggs;
	uint32_t	entry_size;		/* bytes per entry, multiple of 16 */
	uint32_t	key_offset;		/* start of the key area */
	uint32_t	key_size;		/* bytes of the key area, a multiple of 8 */
	GxAggKey	keys[GX_AGG_MAX_KEYS];
	GxAggFunc	aggs[GX_AGG_MAX_AGGS];
} GxAggSpec;

/* header of a group table (device memory, or backend memory) */
typedef struct GxAggTable
{
	uint64_t	capacity;		/* entries, a power of two */
	uint64_t	ngroups;		/* entries claimed */
	uint64_t	max_groups;		/* claims beyond this fail: table full */
	uint32_t	full;			/* a claim failed */
	uint32_t	recheck;		/* a row needs the host */
	uint64_t	rows;			/* rows aggregated */
	uint64_t	pad[3];
	/* then capacity entries of entry_size bytes, 64-byte aligned */
} GxAggTable;

#define GX_AGG_TABLE_HEADER	64

/*
 * The batch argument of an aggregation launch: the entries of each GPU
 * block's private table (0: none) in the low half, and how many copies of
 * that table each block keeps (warp w updates copy w % copies, so that the
 * lanes updating a hot group spread over copies; 0 counts as 1) above.
 */
#define GX_AGG_LOCAL_MAX_COPIES 8

GX_FUNC uint64_t
gx_agg_local_arg(uint32_t capacity, uint32_t copies)
{
	return (uint64_t) capacity | ((uint64_t) copies << 32);
}

GX_FUNC uint32_t
gx_agg_local_capacity(uint64_t arg)
{
	return (uint32_t) arg;
}

GX_FUNC uint32_t
gx_agg_local_copies(uint64_t arg)
{
	uint32_t	c = (uint32_t) (arg >> 32);

	return c == 0 ? 1 : (c > GX_AGG_LOCAL_MAX_COPIES ? GX_AGG_LOCAL_MAX_COPIES : c);
}

GX_FUNC unsigned char *
gx_agg_entry(GxAggTable *t, const GxAggSpec *spec, uint64_t i)
{
	return (unsigned char *) t + GX_AGG_TABLE_HEADER + i * spec->entry_size;
}

/* the accumulator layout of each kind: n first, then the value */
#define GX_ACC_N(p)			((uint64_t *) (p))
#define GX_ACC_I64(p)		((int64_t *) ((p) + 8))
#define GX_ACC_F64(p)		((double *) ((p) + 8))
#define GX_ACC_LO(p)		((uint64_t *) ((p) + 8))
#define GX_ACC_HI(p)		((uint64_t *) ((p) + 16))
#define GX_ACC_SCALE(p)		((int32_t *) ((p) + 24))
#define GX_ACC_ABSSUM(p)	((double *) ((p) + 32))	/* SUM_NUMERIC: sum of |v| */
#define GX_ACC_MAXABS(p)	((uint64_t *) ((p) + 16))	/* SUM_FLOAT: bits of max |v| */
#define GX_ACC_SQ_LO(p)		((uint64_t *) ((p) + 40))	/* VARIANCE: sum of squares */
#define GX_ACC_SQ_HI(p)		((uint64_t *) ((p) + 48))
#define GX_ACC_SQ_ABSSUM(p) ((double *) ((p) + 56))	/* VARIANCE: the same in double */
#define GX_ACC_MINSCALE(p)	((int32_t *) ((p) + 16))	/* MIN/MAX_NUMERIC: least input scale */
#define GX_ACC_LSB(p)		((int32_t *) ((p) + 24))	/* SUM_FLOAT: least bit's exponent */
#define GX_ACC_FSQ(p)		((double *) ((p) + 24))	/* VARIANCE_FLOAT: sum of squares */

/*
 * Sums that the device cannot vouch for: an int128 numeric sum (or sum of
 * squares) whose magnitude could have passed 2^127 (the sum of |v| is a
 * bound), and a
 * float sum with an input so large that PostgreSQL's accumulation (which
 * squares its inputs for avg) could overflow and raise an error.
 */
#define GX_NUMERIC_SUM_LIMIT	1.0e38
#define GX_FLOAT_INPUT_LIMIT	1.0e154

GX_FUNC uint32_t
gx_agg_acc_size(int kind)
{
	switch (kind)
	{
		case GX_AGG_COUNT_STAR:
		case GX_AGG_COUNT:
			return 8;
		case GX_AGG_SUM_INT:
			return 32;			/* n, lo, hi, pad */
		case GX_AGG_SUM_NUMERIC:
			return 48;			/* n, lo, hi, max scale, sum of |v| */
		case GX_AGG_KEY_SCALE:
			return 32;			/* n, lo, hi, max scale */
		case GX_AGG_SUM_FLOAT:
			return 32;			/* n, sum, max |v| */
		case GX_AGG_VARIANCE_FLOAT:
			return 32;			/* n, sum, max |v|, sum of squares */
		case GX_AGG_VARIANCE:
			return 64;			/* as SUM_NUMERIC, then sum of squares, its |bound| */
		case GX_AGG_MIN_NUMERIC:
		case GX_AGG_MAX_NUMERIC:
			return 32;			/* n, value, least scale, greatest scale */
		default:
			return 16;			/* n, value */
	}
}

GX_FUNC uint32_t
gx_agg_key_width(int type)
{
	switch (type)
	{
		case GX_TYPE_NUMERIC:
			return 24;			/* flags, display scale, int128 at scale 0..38 */
		case GX_TYPE_TEXT:
		case GX_TYPE_BPCHAR:
			return 8 + GX_KEY_TEXT_MAX;	/* flags, length, bytes */
		default:
			return 16;			/* flags, value */
	}
}

/* ---------------------------------------------------------------------
 * Atomics: real on the device, plain in the (single-threaded) CPU engine
 * ---------------------------------------------------------------------
 */
#ifdef GX_DEVICE_CODE
#define GX_ADD_U64(p, v)	atomicAdd((unsigned long long *) (p), (unsigned long long) (v))
#define GX_ADD_F64(p, v)	atomicAdd((double *) (p), (double) (v))
#define GX_MIN_I64(p, v)	atomicMin((long long *) (p), (long long) (v))
#define GX_MAX_I64(p, v)	atomicMax((long long *) (p), (long long) (v))
#define GX_MAX_I32(p, v)	atomicMax((int *) (p), (int) (v))
#define GX_MIN_I32(p, v)	atomicMin((int *) (p), (int) (v))
#define GX_MAX_U64(p, v)	atomicMax((unsigned long long *) (p), (unsigned long long) (v))
#define GX_CAS_U32(p, o, n) atomicCAS((unsigned int *) (p), (unsigned int) (o), (unsigned int) (n))
#define GX_CAS_U64(p, o, n) atomicCAS((unsigned long long *) (p), (unsigned long long) (o), (unsigned long long) (n))
#define GX_FENCE()			__threadfence()
/*
 * Reads and writes of words other threads write concurrently (an entry's
 * state, hash and key, a table's full flag) are atomic instructions:
 * compute-sanitizer's racecheck accepts no other publication protocol in
 * shared memory (volatile, ld.relaxed and ld.acquire all count as races).
 */
#define GX_READ_U32(p)		atomicOr((unsigned int *) (p), 0u)
#define GX_READ_U64(p)		atomicOr((unsigned long long *) (p), 0ull)
#define GX_WRITE_U32(p, v)	((void) atomicExch((unsigned int *) (p), (unsigned int) (v)))
#define GX_WRITE_U64(p, v)	((void) atomicExch((unsigned long long *) (p), (unsigned long long) (v)))
#else
GX_FUNC uint64_t
gx_plain_add_u64(uint64_t *p, uint64_t v)
{
	uint64_t	old = *p;

	*p = old + v;
	return old;
}
GX_FUNC uint32_t
gx_plain_cas_u32(uint32_t *p, uint32_t o, uint32_t n)
{
	uint32_t	old = *p;

	if (old == o)
		*p = n;
	return old;
}
GX_FUNC uint64_t
gx_plain_cas_u64(uint64_t *p, uint64_t o, uint64_t n)
{
	uint64_t	old = *p;

	if (old == o)
		*p = n;
	return old;
}
#define GX_ADD_U64(p, v)	gx_plain_add_u64((uint64_t *) (p), (uint64_t) (v))
#define GX_ADD_F64(p, v)	(*(double *) (p) += (double) (v))
#define GX_MIN_I64(p, v)	do { if ((int64_t) (v) < *(int64_t *) (p)) *(int64_t *) (p) = (v); } while (0)
#define GX_MAX_I64(p, v)	do { if ((int64_t) (v) > *(int64_t *) (p)) *(int64_t *) (p) = (v); } while (0)
#define GX_MAX_I32(p, v)	do { if ((int32_t) (v) > *(int32_t *) (p)) *(int32_t *) (p) = (v); } while (0)
#define GX_MIN_I32(p, v)	do { if ((int32_t) (v) < *(int32_t *) (p)) *(int32_t *) (p) = (v); } while (0)
#define GX_MAX_U64(p, v)	do { if ((uint64_t) (v) > *(uint64_t *) (p)) *(uint64_t *) (p) = (v); } while (0)
#define GX_CAS_U32(p, o, n) gx_plain_cas_u32((uint32_t *) (p), (o), (n))
#define GX_CAS_U64(p, o, n) gx_plain_cas_u64((uint64_t *) (p), (o), (n))
#define GX_FENCE()			((void) 0)
#define GX_READ_U32(p)		(*(const uint32_t *) (p))
#define GX_READ_U64(p)		(*(const uint64_t *) (p))
#define GX_WRITE_U32(p, v)	((void) (*(uint32_t *) (p) = (uint32_t) (v)))
#define GX_WRITE_U64(p, v)	((void) (*(uint64_t *) (p) = (uint64_t) (v)))
#endif

/* ---------------------------------------------------------------------
 * Keys
 * ---------------------------------------------------------------------
 */

/* 64-bit mix (splitmix64 finaliser) */
GX_FUNC uint64_t
gx_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/* strip trailing zeros of a numeric value: one representation per value */
GX_FUNC void
gx_numeric_canonical(__int128 v, int scale, __int128 *cv, int *cs)
{
	while (scale > 0 && v % 10 == 0)
	{
		v /= 10;
		scale--;
	}
	*cv = v;
	*cs = scale;
}

/*
 * Encode the key registers of a row into 'key' (spec->key_size bytes,
 * zeroed by the caller).  Returns -1 for a key the table cannot hold
 * (text longer than GX_KEY_TEXT_MAX): the row goes to the host.
 */
GX_FUNC int
gx_agg_encode_key(const GxAggSpec *spec, const GxDatum *regs, unsigned char *key)
{
	for (int k = 0; k < spec->nkeys; k++)
	{
		const GxAggKey *ak = &spec->keys[k];
		const GxDatum *r = &regs[ak->reg];
		unsigned char *p = key + (ak->offset - spec->key_offset);

		if (r->isnull)
		{
			p[0] = 1;			/* NULLs group together */
			continue;
		}
		switch (ak->type)
		{
			case GX_TYPE_FLOAT4:
			case GX_TYPE_FLOAT8:
				{
					double		f = r->v.f;

					if (f == 0.0)
						f = 0.0;	/* -0 groups with 0 */
					if (gx_isnan(f))
						*(uint64_t *) (p + 8) = UINT64_C(0x7ff8000000000000);
					else
						*(double *) (p + 8) = f;
					break;
				}
			case GX_TYPE_NUMERIC:
				{
					__int128	cv;
					int			cs;

					gx_numeric_canonical(r->v.n, r->scale, &cv, &cs);
					p[1] = (unsigned char) cs;
					*(uint64_t *) (p + 8) = (uint64_t) cv;
					*(uint64_t *) (p + 16) = (uint64_t) (cv >> 64);
					break;
				}
			case GX_TYPE_TEXT:
			case GX_TYPE_BPCHAR:
				{
					int64_t		len = r->v.s.len;

					if (ak->type == GX_TYPE_BPCHAR)
						len = gx_bpchar_truelen(r->v.s.ptr, len);
					if (len > GX_KEY_TEXT_MAX)
						return -1;
					*(uint32_t *) (p + 4) = (uint32_t) len;
					for (int64_t i = 0; i < len; i++)
						p[8 + i] = r->v.s.ptr[i];
					break;
				}
			default:
				*(int64_t *) (p + 8) = r->v.i;
				break;
		}
	}
	return 0;
}

GX_FUNC uint32_t
gx_agg_hash(const unsigned char *key, uint32_t size)
{
	uint64_t	h = UINT64_C(0x9e3779b97f4a7c15) ^ size;

	for (uint32_t i = 0; i < size; i += 8)
		h = gx_mix64(h ^ *(const uint64_t *) (key + i));
	return (uint32_t) (h ^ (h >> 32));
}

/* Initialise the accumulators of a freshly claimed entry. */
GX_FUNC void
gx_agg_init_entry(const GxAggSpec *spec, unsigned char *entry)
{
	for (int a = 0; a < spec->naggs; a++)
	{
		const GxAggFunc *f = &spec->aggs[a];
		unsigned char *acc = entry + f->offset;

		*GX_ACC_N(acc) = 0;
		switch (f->kind)
		{
			case GX_AGG_SUM_INT:
			case GX_AGG_SUM_NUMERIC:
			case GX_AGG_KEY_SCALE:
			case GX_AGG_VARIANCE:
				*GX_ACC_LO(acc) = 0;
				*GX_ACC_HI(acc) = 0;
				*GX_ACC_SCALE(acc) = 0;
				if (f->kind == GX_AGG_SUM_NUMERIC || f->kind == GX_AGG_VARIANCE)
					*GX_ACC_ABSSUM(acc) = 0.0;
				if (f->kind == GX_AGG_VARIANCE)
				{
					*GX_ACC_SQ_LO(acc) = 0;
					*GX_ACC_SQ_HI(acc) = 0;
					*GX_ACC_SQ_ABSSUM(acc) = 0.0;
				}
				break;
			case GX_AGG_SUM_FLOAT:
				/* sum() starts from its first input (so -0 stays -0), avg() from +0 */
				*GX_ACC_F64(acc) = f->neg_zero_init ? -0.0 : 0.0;
				*GX_ACC_MAXABS(acc) = 0;
				*GX_ACC_LSB(acc) = GX_INT32_MAX;
				break;
			case GX_AGG_VARIANCE_FLOAT:
				*GX_ACC_F64(acc) = 0.0;
				*GX_ACC_MAXABS(acc) = 0;
				*GX_ACC_FSQ(acc) = 0.0;
				break;
			case GX_AGG_MIN_INT:
				*GX_ACC_I64(acc) = GX_INT64_MAX;
				break;
			case GX_AGG_MAX_INT:
				*GX_ACC_I64(acc) = GX_INT64_MIN;
				break;
			case GX_AGG_MIN_NUMERIC:
			case GX_AGG_MAX_NUMERIC:
				*GX_ACC_I64(acc) = f->kind == GX_AGG_MIN_NUMERIC ? GX_INT64_MAX : GX_INT64_MIN;
				*GX_ACC_MINSCALE(acc) = GX_INT32_MAX;
				*GX_ACC_SCALE(acc) = 0;
				break;
			case GX_AGG_MIN_FLOAT:
			case GX_AGG_MAX_FLOAT:
				*(uint64_t *) GX_ACC_F64(acc) = GX_F64_EMPTY;
				break;
			default:
				break;
		}
	}
}

/*
 * Find the entry of a key, claiming an empty one if the key is new and
 * 'may_insert'.  Returns its index, or -1 when the key is not there and
 * cannot be added (the table is full, or may_insert is 0).
 */
GX_ATOMIC_FUNC int64_t
gx_agg_lookup(GxAggTable *t, const GxAggSpec *spec, const unsigned char *key,
			  uint32_t hash, int may_insert)
{
	uint64_t	mask = t->capacity - 1;
	uint64_t	i = hash & mask;

	for (uint64_t probes = 0; probes < t->capacity; probes++, i = (i + 1) & mask)
	{
		unsigned char *e = gx_agg_entry(t, spec, i);
		unsigned char *ek = e + spec->key_offset;
		uint32_t	st = GX_READ_U32(e);
		int			same;

		if (st == GX_ENTRY_EMPTY)
		{
			if (!may_insert)
				return -1;
			if (GX_ADD_U64(&t->ngroups, 1) >= t->max_groups)
			{
				GX_WRITE_U32(&t->full, 1);
				return -1;
			}
			st = GX_CAS_U32((uint32_t *) e, GX_ENTRY_EMPTY, GX_ENTRY_BUSY);
			if (st == GX_ENTRY_EMPTY)
			{
				GX_WRITE_U32(e + 4, hash);
				for (uint32_t b = 0; b < spec->key_size; b += 8)
				{
					uint64_t	w;

					memcpy(&w, key + b, 8);
					GX_WRITE_U64(ek + b, w);
				}
				gx_agg_init_entry(spec, e);
				GX_FENCE();
				GX_WRITE_U32(e, GX_ENTRY_READY);
				return (int64_t) i;
			}
			/* somebody else claimed it first: our count was one too many */
			GX_ADD_U64(&t->ngroups, (uint64_t) -1);
		}
		while (st == GX_ENTRY_BUSY)
			st = GX_READ_U32(e);
		GX_FENCE();
		if (GX_READ_U32(e + 4) != hash)
			continue;
		same = 1;
		for (uint32_t b = 0; b < spec->key_size && same; b += 8)
		{
			uint64_t	w;

			memcpy(&w, key + b, 8);
			same = (GX_READ_U64(ek + b) == w);
		}
		if (same)
			return (int64_t) i;
	}
	GX_WRITE_U32(&t->full, 1);
	return -1;
}

/* Find the entry of a key, claiming an empty one if the key is new. */
GX_ATOMIC_FUNC int64_t
gx_agg_find_or_insert(GxAggTable *t, const GxAggSpec *spec, const unsigned char *key,
					  uint32_t hash)
{
	return gx_agg_lookup(t, spec, key, hash, 1);
}

/* add a signed 128-bit value to a sum kept as two 64-bit halves */
GX_ATOMIC_FUNC void
gx_add_i128_halves(uint64_t *lo_p, uint64_t *hi_p, __int128 v)
{
	uint64_t	lo = (uint64_t) v;
	uint64_t	hi = (uint64_t) (v >> 64);
	uint64_t	old = GX_ADD_U64(lo_p, lo);

	if (old + lo < old)
		hi++;					/* carry out of the low half */
	if (hi)
		GX_ADD_U64(hi_p, hi);
}

/* add a signed 128-bit value to an accumulator's sum */
GX_ATOMIC_FUNC void
gx_acc_add_i128(unsigned char *acc, __int128 v)
{
	gx_add_i128_halves(GX_ACC_LO(acc), GX_ACC_HI(acc), v);
}

/* the 128-bit value of two 64-bit halves */
GX_FUNC __int128
gx_i128_of_halves(const unsigned char *lo_p)
{
	return (__int128) (((unsigned __int128) *(const uint64_t *) (lo_p + 8) << 64) |
					   *(const uint64_t *) lo_p);
}

/*
 * A numeric input at the accumulator's fixed scale, in *v; the largest
 * input scale is tracked.  Returns -1 when it has more decimals than the
 * fixed scale or does not fit there: the row goes to the host.
 */
GX_ATOMIC_FUNC int
gx_acc_numeric_input(const GxAggFunc *f, unsigned char *acc, const GxDatum *r, __int128 *v)
{
	if (r->scale > f->scale || gx_numeric_upscale(r->v.n, f->scale - r->scale, v) != 0)
		return -1;
	GX_MAX_I32(GX_ACC_SCALE(acc), r->scale);
	return 0;
}

/*
 * Accumulate v (an integer, or a numeric at the accumulator's fixed
 * scale) and its square.  Returns -1 when the square could not fit in
 * 127 bits (only a numeric upscaled past 2^63 can do that).
 */
GX_ATOMIC_FUNC int
gx_acc_add_variance(unsigned char *acc, __int128 v)
{
	const __int128 limit = (__int128) GX_INT64_MAX + 1;
	__int128	sq;

	if (v > limit || v < -limit)
		return -1;
	sq = v * v;
	gx_acc_add_i128(acc, v);
	gx_add_i128_halves(GX_ACC_SQ_LO(acc), GX_ACC_SQ_HI(acc), sq);
	GX_ADD_F64(GX_ACC_ABSSUM(acc), v < 0 ? -(double) v : (double) v);
	GX_ADD_F64(GX_ACC_SQ_ABSSUM(acc), (double) sq);
	return 0;
}

/*
 * The exponent of the least set bit of a finite, non-zero double given as
 * the bits of its absolute value: the value is a multiple of 2^result.
 * (A float4 sum of multiples of 2^e stays exact while it is below 2^(24+e).)
 */
GX_FUNC int32_t
gx_lsb_exponent(uint64_t abs_bits)
{
	uint64_t	mant = abs_bits & ((UINT64_C(1) << 52) - 1);
	int32_t		exp = (int32_t) (abs_bits >> 52);

	if (exp == 0)
		exp = 1;				/* subnormal: no implicit bit */
	else
		mant |= UINT64_C(1) << 52;
#ifdef __CUDA_ARCH__
	return exp - 1075 + (__ffsll((long long) mant) - 1);
#else
	return exp - 1075 + __builtin_ctzll(mant);
#endif
}

/*
 * min/max of doubles in PostgreSQL's order (NaN above everything).  The
 * accumulator starts as GX_F64_EMPTY, a NaN pattern no input has (input
 * NaNs are canonical), which any value replaces.
 */
GX_ATOMIC_FUNC void
gx_acc_minmax_f64(unsigned char *acc, double v, int want_max)
{
	uint64_t   *p = (uint64_t *) GX_ACC_F64(acc);
	uint64_t	old = *(volatile uint64_t *) p;
	uint64_t	bits;

	if (gx_isnan(v))
		bits = UINT64_C(0x7ff8000000000000);
	else
		*(double *) &bits = v;
	for (;;)
	{
		double		cur;
		uint64_t	prev;

		if (old != GX_F64_EMPTY)
		{
			int			c;

			*(uint64_t *) &cur = old;
			c = gx_float_cmp(v, cur);
			if (want_max ? c <= 0 : c >= 0)
				return;
		}
		prev = GX_CAS_U64(p, old, bits);
		if (prev == old)
			return;
		old = prev;
	}
}

/*
 * Accumulate one row into an entry.  Returns -1 when a value cannot be
 * accumulated exactly (numeric beyond the fixed scale or range): the
 * row goes to the host.
 */
GX_ATOMIC_FUNC int
gx_agg_accumulate(const GxAggSpec *spec, unsigned char *entry, const GxDatum *regs)
{
	for (int a = 0; a < spec->naggs; a++)
	{
		const GxAggFunc *f = &spec->aggs[a];
		unsigned char *acc = entry + f->offset;
		const GxDatum *r = &regs[f->reg];

		if (f->filter_reg != GX_NO_REG &&
			(regs[f->filter_reg].isnull || !regs[f->filter_reg].v.i))
			continue;			/* FILTER (WHERE ...) is not true */
		if (f->kind == GX_AGG_COUNT_STAR)
		{
			GX_ADD_U64(GX_ACC_N(acc), 1);
			continue;
		}
		if (r->isnull)
			continue;			/* aggregates skip NULL inputs */
		GX_ADD_U64(GX_ACC_N(acc), 1);
		switch (f->kind)
		{
			case GX_AGG_KEY_SCALE:
				GX_MAX_I32(GX_ACC_SCALE(acc), r->scale);
				break;
			case GX_AGG_SUM_INT:
				gx_acc_add_i128(acc, (__int128) r->v.i);
				break;
			case GX_AGG_SUM_NUMERIC:
				{
					__int128	v;

					if (gx_acc_numeric_input(f, acc, r, &v) != 0)
						return -1;
					gx_acc_add_i128(acc, v);
					GX_ADD_F64(GX_ACC_ABSSUM(acc), v < 0 ? -(double) v : (double) v);
					break;
				}
			case GX_AGG_VARIANCE:
				{
					__int128	v = r->v.i;

					if (f->type == GX_TYPE_NUMERIC && gx_acc_numeric_input(f, acc, r, &v) != 0)
						return -1;
					if (gx_acc_add_variance(acc, v) != 0)
						return -1;
					break;
				}
			case GX_AGG_SUM_FLOAT:
				GX_ADD_F64(GX_ACC_F64(acc), r->v.f);
				if (!gx_isnan(r->v.f) && !gx_isinf(r->v.f))
				{
					/* |v| as bits: clear the sign (so -0.0 is 0, not the largest) */
					uint64_t	abs_bits = *(const uint64_t *) &r->v.f & ~(UINT64_C(1) << 63);

					GX_MAX_U64(GX_ACC_MAXABS(acc), abs_bits);
					if (f->track_lsb && abs_bits != 0)
						GX_MIN_I32(GX_ACC_LSB(acc), gx_lsb_exponent(abs_bits));
				}
				break;
			case GX_AGG_VARIANCE_FLOAT:
				/* infinities and NaN follow PostgreSQL's own rules: the host's */
				if (gx_isnan(r->v.f) || gx_isinf(r->v.f))
					return -1;
				GX_ADD_F64(GX_ACC_F64(acc), r->v.f);
				GX_ADD_F64(GX_ACC_FSQ(acc), r->v.f * r->v.f);
				GX_MAX_U64(GX_ACC_MAXABS(acc), *(const uint64_t *) &r->v.f & ~(UINT64_C(1) << 63));
				break;
			case GX_AGG_MIN_INT:
				GX_MIN_I64(GX_ACC_I64(acc), r->v.i);
				break;
			case GX_AGG_MAX_INT:
				GX_MAX_I64(GX_ACC_I64(acc), r->v.i);
				break;
			case GX_AGG_MIN_NUMERIC:
			case GX_AGG_MAX_NUMERIC:
				{
					__int128	v;

					/* exact at the fixed scale and within 64 bits, or to the host */
					if (gx_acc_numeric_input(f, acc, r, &v) != 0 ||
						v > (__int128) GX_INT64_MAX || v < (__int128) GX_INT64_MIN)
						return -1;
					GX_MIN_I32(GX_ACC_MINSCALE(acc), r->scale);
					if (f->kind == GX_AGG_MIN_NUMERIC)
						GX_MIN_I64(GX_ACC_I64(acc), (int64_t) v);
					else
						GX_MAX_I64(GX_ACC_I64(acc), (int64_t) v);
					break;
				}
			case GX_AGG_MIN_FLOAT:
				gx_acc_minmax_f64(acc, r->v.f, 0);
				break;
			case GX_AGG_MAX_FLOAT:
				gx_acc_minmax_f64(acc, r->v.f, 1);
				break;
			default:
				break;
		}
	}
	return 0;
}

/*
 * Merge the accumulators of entry 'src' (a block-private partial) into
 * 'dst' (the global entry of the same key).
 */
GX_ATOMIC_FUNC void
gx_agg_merge(const GxAggSpec *spec, unsigned char *dst, const unsigned char *src)
{
	for (int a = 0; a < spec->naggs; a++)
	{
		const GxAggFunc *f = &spec->aggs[a];
		unsigned char *d = dst + f->offset;
		const unsigned char *s = src + f->offset;
		uint64_t	n = *(const uint64_t *) s;

		if (n == 0)
			continue;
		GX_ADD_U64(GX_ACC_N(d), n);
		switch (f->kind)
		{
			case GX_AGG_KEY_SCALE:
				GX_MAX_I32(GX_ACC_SCALE(d), *(const int32_t *) (s + 24));
				break;
			case GX_AGG_SUM_INT:
			case GX_AGG_SUM_NUMERIC:
			case GX_AGG_VARIANCE:
				gx_acc_add_i128(d, gx_i128_of_halves(s + 8));
				if (f->kind != GX_AGG_SUM_INT)
				{
					GX_MAX_I32(GX_ACC_SCALE(d), *(const int32_t *) (s + 24));
					GX_ADD_F64(GX_ACC_ABSSUM(d), *(const double *) (s + 32));
				}
				if (f->kind == GX_AGG_VARIANCE)
				{
					gx_add_i128_halves(GX_ACC_SQ_LO(d), GX_ACC_SQ_HI(d), gx_i128_of_halves(s + 40));
					GX_ADD_F64(GX_ACC_SQ_ABSSUM(d), *(const double *) (s + 56));
				}
				break;
			case GX_AGG_SUM_FLOAT:
				GX_ADD_F64(GX_ACC_F64(d), *(const double *) (s + 8));
				GX_MAX_U64(GX_ACC_MAXABS(d), *(const uint64_t *) (s + 16));
				GX_MIN_I32(GX_ACC_LSB(d), *(const int32_t *) (s + 24));
				break;
			case GX_AGG_VARIANCE_FLOAT:
				GX_ADD_F64(GX_ACC_F64(d), *(const double *) (s + 8));
				GX_MAX_U64(GX_ACC_MAXABS(d), *(const uint64_t *) (s + 16));
				GX_ADD_F64(GX_ACC_FSQ(d), *(const double *) (s + 24));
				break;
			case GX_AGG_MIN_INT:
				GX_MIN_I64(GX_ACC_I64(d), *(const int64_t *) (s + 8));
				break;
			case GX_AGG_MAX_INT:
				GX_MAX_I64(GX_ACC_I64(d), *(const int64_t *) (s + 8));
				break;
			case GX_AGG_MIN_NUMERIC:
			case GX_AGG_MAX_NUMERIC:
				if (f->kind == GX_AGG_MIN_NUMERIC)
					GX_MIN_I64(GX_ACC_I64(d), *(const int64_t *) (s + 8));
				else
					GX_MAX_I64(GX_ACC_I64(d), *(const int64_t *) (s + 8));
				GX_MIN_I32(GX_ACC_MINSCALE(d), *(const int32_t *) (s + 16));
				GX_MAX_I32(GX_ACC_SCALE(d), *(const int32_t *) (s + 24));
				break;
			case GX_AGG_MIN_FLOAT:
			case GX_AGG_MAX_FLOAT:
				if (*(const uint64_t *) (s + 8) != GX_F64_EMPTY)
					gx_acc_minmax_f64(d, *(const double *) (s + 8), f->kind == GX_AGG_MAX_FLOAT);
				break;
			default:
				break;
		}
	}
}

/*
 * The entry of an encoded key: in the block-private table 'local' when
 * the key is there or it has room (a kernel's table in shared memory,
 * merged into t at the end of the batch; NULL for none), else in table t.
 * NULL when t is full.  Once full, the private table still takes the rows
 * of the groups it holds: with skewed keys the first groups to arrive are
 * the frequent ones, which then never touch the global table.
 */
GX_ATOMIC_FUNC unsigned char *
gx_agg_key_entry(GxAggTable *local, GxAggTable *t, const GxAggSpec *spec,
				 const unsigned char *key, uint32_t hash)
{
	int64_t		slot;

	if (local != NULL &&
		(slot = gx_agg_lookup(local, spec, key, hash, !GX_READ_U32(&local->full))) >= 0)
		return gx_agg_entry(local, spec, slot);
	slot = gx_agg_find_or_insert(t, spec, key, hash);
	if (slot < 0)
		return NULL;
	return gx_agg_entry(t, spec, slot);
}

/*
 * The group entry of the key registers, inserted if new (keybuf:
 * spec->key_size bytes of scratch; see gx_agg_key_entry).  NULL when the
 * row goes to the host: a key the table cannot hold, or the table full.
 *
 * On the device the lanes of a warp that carry the same key look it up
 * once (seed 002's combining of equal keys inside a warp): the lowest such
 * lane searches the tables and hands the entry to the others, so a hot
 * group costs one probe per warp rather than one per row.
 */
GX_ATOMIC_FUNC unsigned char *
gx_agg_group_entry(GxAggTable *local, GxAggTable *t, const GxAggSpec *spec,
				   const GxDatum *regs, unsigned char *keybuf)
{
	uint32_t	hash;

	for (uint32_t b = 0; b < spec->key_size; b++)
		keybuf[b] = 0;
	if (gx_agg_encode_key(spec, regs, keybuf) != 0)
		return NULL;
	hash = gx_agg_hash(keybuf, spec->key_size);
#ifdef GX_DEVICE_CODE
	{
		unsigned	peers = __match_any_sync(__activemask(), hash);
		int			leader = __ffs(peers) - 1;
		int			same = 1;
		unsigned char *entry = NULL;
		unsigned char *leader_entry;

		/* equal hashes are not always equal keys: compare with the leader's */
		for (uint32_t b = 0; b < spec->key_size; b += 4)
		{
			uint32_t	w;

			memcpy(&w, keybuf + b, 4);
			same &= (__shfl_sync(peers, w, leader) == w);
		}
		if ((int) (threadIdx.x & 31) == leader || !same)
			entry = gx_agg_key_entry(local, t, spec, keybuf, hash);
		leader_entry = (unsigned char *)
			__shfl_sync(peers, (unsigned long long) entry, leader);
		return same ? leader_entry : entry;
	}
#else
	return gx_agg_key_entry(local, t, spec, keybuf, hash);
#endif
}

/*
 * Aggregate a row the program evaluated to rc (its registers in regs):
 * find its group and accumulate.  Returns rc, or GX_ROW_RECHECK when the
 * device cannot.
 */
GX_ATOMIC_FUNC int
gx_agg_row(const GxAggSpec *spec, GxAggTable *t, int rc, GxDatum *regs, unsigned char *keybuf)
{
	unsigned char *entry;

	if (rc != GX_ROW_PASS)
		return rc;
	entry = gx_agg_group_entry(NULL, t, spec, regs, keybuf);
	if (entry == NULL || gx_agg_accumulate(spec, entry, regs) != 0)
		return GX_ROW_RECHECK;
	return GX_ROW_PASS;
}

/*
 * Aggregate one tuple of a page: run the program (quals and the key and
 * input expressions), then find the group and accumulate.  Returns
 * GX_ROW_PASS (aggregated), GX_ROW_FAIL (filtered out) or GX_ROW_RECHECK.
 */
GX_ATOMIC_FUNC int
gx_agg_tuple(const GxProgram *prog, const GxAggSpec *spec, GxAggTable *t,
			 const unsigned char *page, const GxPageRef *ref, uint32_t off,
			 GxDatum *regs, unsigned char *keybuf)
{
	return gx_agg_row(spec, t, gx_scan_tuple(prog, page, ref, off, regs), regs, keybuf);
}

/* The same for row 'row' of a column cache (a GX_PAGE_CACHED page's row). */
GX_ATOMIC_FUNC int
gx_agg_cached_row(const GxProgram *prog, const GxAggSpec *spec, GxAggTable *t,
				  const GxColCache *cc, uint64_t row, GxDatum *regs, unsigned char *keybuf)
{
	return gx_agg_row(spec, t, gx_scan_cached_row(prog, cc, row, regs), regs, keybuf);
}

#endif							/* GX_AGG_H */
