/*-------------------------------------------------------------------------
 * gx_program.h
 *		The device-program format and its interpreter: the per-row
 *		semantics of every offloaded expression, written once and compiled
 *		by both nvcc (GPU kernels) and gcc (the CPU engine).
 *
 * A device program is a compact, position-independent byte string made by
 * src/codegen.c from PostgreSQL expression trees: a header, the attributes
 * to deform from each heap tuple (and the registers they land in), a pool
 * of constants, and register-machine instructions.  No code is compiled
 * at query time.
 *
 * Errors: any condition under which PostgreSQL would raise an ERROR for a
 * row (integer overflow, division by zero, float overflow, values out of
 * range), and any value the device cannot decode (TOASTed or compressed
 * varlena, numeric that does not fit in 128 bits, NaN or infinite
 * numeric), makes the row GX_ROW_RECHECK: the backend re-evaluates it with
 * PostgreSQL's own executor, which raises the exact ERROR (SQLSTATE and
 * message) or computes the value.  The device never invents an error and
 * never silently drops one.
 *
 * IDENTIFICATION
 *		cuda/gx_program.h
 *-------------------------------------------------------------------------
 */
#ifndef GX_PROGRAM_H
#define GX_PROGRAM_H

#include "gx_common.h"

#define GX_PROGRAM_MAGIC	0x47585031	/* "GXP1" */
#define GX_MAX_REGS			32
#define GX_MAX_ATTRS		256

/* result of a row */
#define GX_ROW_FAIL			0
#define GX_ROW_PASS			1
#define GX_ROW_RECHECK		2

/* value classes of registers and operations */
typedef enum GxType
{
	GX_TYPE_BOOL = 1,
	GX_TYPE_INT2,				/* integers are held as int64 */
	GX_TYPE_INT4,
	GX_TYPE_INT8,
	GX_TYPE_FLOAT4,				/* floats are held as double */
	GX_TYPE_FLOAT8,
	GX_TYPE_NUMERIC,			/* int128 scaled by 10^scale */
	GX_TYPE_DATE,				/* days since 2000-01-01 */
	GX_TYPE_TIMESTAMP,			/* microseconds; timestamp and timestamptz */
	GX_TYPE_TEXT,				/* bytes of text/varchar */
	GX_TYPE_BPCHAR				/* blank-padded: trailing spaces ignored */
} GxType;

/* how an attribute is decoded from a heap tuple */
typedef struct GxAttr
{
	int16_t		attlen;			/* > 0 fixed, -1 varlena */
	uint8_t		attalign;		/* 1, 2, 4 or 8 */
	uint8_t		type;			/* GxType to load, 0 = skip */
	int16_t		reg;			/* destination register, -1 = not needed */
	uint8_t		has_missing;	/* absent from old tuples: default value */
	uint8_t		pad;
} GxAttr;

/* a constant: the register image, with text bytes in the blob area */
typedef struct GxConst
{
	uint8_t		type;
	uint8_t		isnull;
	int16_t		scale;
	uint32_t	blob_off;		/* text: offset of bytes in the program */
	uint32_t	blob_len;
	uint32_t	pad;
	int64_t		lo;				/* int, date, timestamp, bool, float bits, numeric low */
	int64_t		hi;				/* numeric high 64 bits */
} GxConst;

/* opcodes */
typedef enum GxOp
{
	GX_OP_END = 0,				/* the row passes */
	GX_OP_QUAL,					/* a not true: the row fails */
	GX_OP_CONST,				/* dst = consts[c] */
	GX_OP_MOVE,					/* dst = a */
	GX_OP_AND_INIT,				/* dst = true */
	GX_OP_AND_STEP,				/* a false: dst = false, jump c; a null: dst null */
	GX_OP_OR_INIT,				/* dst = false */
	GX_OP_OR_STEP,				/* a true: dst = true, jump c; a null: dst null */
	GX_OP_NOT,					/* dst = NOT a */
	GX_OP_BOOLTEST,				/* dst = a IS [NOT] TRUE/FALSE/UNKNOWN (flags) */
	GX_OP_NULLTEST,				/* dst = a IS [NOT] NULL (flags) */
	GX_OP_CMP,					/* dst = a <flags> b over type */
	GX_OP_ARITH,				/* dst = a <flags> b, result type */
	GX_OP_UNARY,				/* dst = -a or abs(a) (flags), type */
	GX_OP_CAST,					/* dst = a cast to type, from flags */
	GX_OP_JUMP,					/* goto c */
	GX_OP_JUMP_IF_NOT_TRUE,		/* a false or null: goto c */
	GX_OP_JUMP_IF_NOT_NULL,		/* a not null: goto c */
	GX_OP_NULLIF,				/* dst = (a = b) ? NULL : a, type */
	GX_OP_LIKE,					/* dst = a [NOT] LIKE consts[c] */
	GX_OP_IN,					/* dst = a <cmp> ANY/ALL (consts[c .. c+b-1]) */
	GX_OP_SUBSTR,				/* dst = substr(a, b [, e]) */
	GX_OP_DATE_ARITH,			/* date +/- int4, date - date (flags) */
	GX_OP_MAX
} GxOp;

/* GX_OP_CMP flags */
#define GX_CMP_EQ	0
#define GX_CMP_NE	1
#define GX_CMP_LT	2
#define GX_CMP_LE	3
#define GX_CMP_GT	4
#define GX_CMP_GE	5

/* GX_OP_ARITH flags */
#define GX_ARITH_ADD	0
#define GX_ARITH_SUB	1
#define GX_ARITH_MUL	2
#define GX_ARITH_DIV	3
#define GX_ARITH_MOD	4

/* GX_OP_UNARY flags */
#define GX_UNARY_NEG	0
#define GX_UNARY_ABS	1

/* GX_OP_BOOLTEST flags (PostgreSQL's BoolTestType order) */
#define GX_BT_IS_TRUE		0
#define GX_BT_IS_NOT_TRUE	1
#define GX_BT_IS_FALSE		2
#define GX_BT_IS_NOT_FALSE	3
#define GX_BT_IS_UNKNOWN	4
#define GX_BT_IS_NOT_UNKNOWN 5

/* GX_OP_NULLTEST flags */
#define GX_NT_IS_NULL		0
#define GX_NT_IS_NOT_NULL	1

/* GX_OP_IN flags: low bits the GX_CMP_*, then */
#define GX_IN_ANY			0x10	/* = ANY (OR); without it, ALL (AND) */

/* GX_OP_LIKE flags */
#define GX_LIKE_NEGATE		0x01

/* GX_OP_CAST: for date to timestamp, comparison semantics (no error) */
#define GX_CAST_FOR_COMPARE	0x80

/* GX_OP_DATE_ARITH flags */
#define GX_DATE_PLUS_INT	0
#define GX_DATE_MINUS_INT	1
#define GX_DATE_MINUS_DATE	2

/* GX_OP_SUBSTR: e == 0xffff means no length argument */
#define GX_NO_REG			0xffff

typedef struct GxInstr
{
	uint8_t		op;
	uint8_t		type;
	uint8_t		flags;
	uint8_t		pad;
	uint16_t	dst;
	uint16_t	a;
	uint16_t	b;
	uint16_t	e;
	uint32_t	c;
} GxInstr;

/* encoding of the database: how substr and LIKE's _ count characters */
#define GX_ENC_SINGLE_BYTE	0
#define GX_ENC_UTF8			1

typedef struct GxProgram
{
	uint32_t	magic;
	uint32_t	length;			/* bytes of the whole program */
	uint16_t	nregs;
	uint16_t	natts;			/* attributes to walk in each tuple */
	uint16_t	nconsts;
	uint16_t	ninstrs;
	uint16_t	encoding;		/* GX_ENC_* */
	uint16_t	pad;
	uint32_t	atts_off;		/* GxAttr[natts] */
	uint32_t	consts_off;		/* GxConst[nconsts] */
	uint32_t	instrs_off;		/* GxInstr[ninstrs] */
	uint32_t	blob_off;		/* text bytes of constants */
} GxProgram;

/* a register */
typedef struct GxDatum
{
	union
	{
		int64_t		i;
		double		f;
		__int128	n;
		struct
		{
			const unsigned char *ptr;
			int64_t		len;
		}			s;
	}			v;
	int32_t		scale;
	int32_t		isnull;
} GxDatum;

GX_FUNC const GxAttr *
gx_prog_atts(const GxProgram *p)
{
	return (const GxAttr *) ((const char *) p + p->atts_off);
}

GX_FUNC const GxConst *
gx_prog_consts(const GxProgram *p)
{
	return (const GxConst *) ((const char *) p + p->consts_off);
}

GX_FUNC const GxInstr *
gx_prog_instrs(const GxProgram *p)
{
	return (const GxInstr *) ((const char *) p + p->instrs_off);
}

/* ---------------------------------------------------------------------
 * Integer semantics
 * ---------------------------------------------------------------------
 */
#define GX_INT16_MIN	(-32767 - 1)
#define GX_INT16_MAX	32767
#define GX_INT32_MIN	(-2147483647 - 1)
#define GX_INT32_MAX	2147483647
#define GX_INT64_MIN	(-INT64_C(9223372036854775807) - 1)
#define GX_INT64_MAX	INT64_C(9223372036854775807)

/* does v fit in the integer type t? */
GX_FUNC int
gx_int_fits(int64_t v, int t)
{
	if (t == GX_TYPE_INT2)
		return v >= GX_INT16_MIN && v <= GX_INT16_MAX;
	if (t == GX_TYPE_INT4)
		return v >= GX_INT32_MIN && v <= GX_INT32_MAX;
	return 1;
}

/*
 * Integer arithmetic with PostgreSQL's checks: 0 and the result in *r, or
 * -1 where PostgreSQL raises "integer out of range" / "division by zero".
 */
GX_FUNC int
gx_int_arith(int op, int t, int64_t a, int64_t b, int64_t *r)
{
	switch (op)
	{
		case GX_ARITH_ADD:
			{
				uint64_t	u = (uint64_t) a + (uint64_t) b;
				int64_t		s = (int64_t) u;

				if (((a ^ s) & (b ^ s)) < 0)
					return -1;
				*r = s;
				break;
			}
		case GX_ARITH_SUB:
			{
				uint64_t	u = (uint64_t) a - (uint64_t) b;
				int64_t		s = (int64_t) u;

				if (((a ^ b) & (a ^ s)) < 0)
					return -1;
				*r = s;
				break;
			}
		case GX_ARITH_MUL:
			{
				__int128	p = (__int128) a * (__int128) b;

				if (p > GX_INT64_MAX || p < GX_INT64_MIN)
					return -1;
				*r = (int64_t) p;
				break;
			}
		case GX_ARITH_DIV:
			if (b == 0)
				return -1;
			if (b == -1)
			{
				if (a == GX_INT64_MIN)
					return -1;
				*r = -a;
			}
			else
				*r = a / b;
			break;
		case GX_ARITH_MOD:
			if (b == 0)
				return -1;
			/* INT_MIN % -1 would trap; the answer is 0 */
			*r = (b == -1) ? 0 : a % b;
			break;
		default:
			return -1;
	}
	return gx_int_fits(*r, t) ? 0 : -1;
}

/* ---------------------------------------------------------------------
 * Float semantics (utils/float.h): NaN equals NaN and sorts last
 * ---------------------------------------------------------------------
 */
GX_FUNC int
gx_isnan(double x)
{
	return x != x;
}

GX_FUNC int
gx_isinf(double x)
{
	return x == 1.0 / 0.0 || x == -1.0 / 0.0;
}

GX_FUNC int
gx_float_cmp(double a, double b)
{
	if (gx_isnan(a))
		return gx_isnan(b) ? 0 : 1;
	if (gx_isnan(b))
		return -1;
	return a > b ? 1 : (a < b ? -1 : 0);
}

/*
 * PostgreSQL's checks of a float result x = a op b (utils/float.h), the
 * same for float4 and float8: -1 where PostgreSQL raises overflow,
 * underflow or division by zero.
 */
GX_FUNC int
gx_float_checks(int op, double x, double a, double b)
{
	switch (op)
	{
		case GX_ARITH_ADD:
		case GX_ARITH_SUB:
			return (gx_isinf(x) && !gx_isinf(a) && !gx_isinf(b)) ? -1 : 0;
		case GX_ARITH_MUL:
			if (gx_isinf(x) && !gx_isinf(a) && !gx_isinf(b))
				return -1;
			return (x == 0.0 && a != 0.0 && b != 0.0) ? -1 : 0;
		case GX_ARITH_DIV:
			if (b == 0.0 && !gx_isnan(a))
				return -1;
			if (gx_isinf(x) && !gx_isinf(a))
				return -1;
			return (x == 0.0 && a != 0.0 && !gx_isinf(b)) ? -1 : 0;
		default:
			return -1;
	}
}

/* float8 arithmetic; -1 where PostgreSQL raises an error */
GX_FUNC int
gx_float8_arith(int op, double a, double b, double *r)
{
	double		x = (op == GX_ARITH_ADD) ? a + b : (op == GX_ARITH_SUB) ? a - b :
		(op == GX_ARITH_MUL) ? a * b : a / b;

	*r = x;
	return gx_float_checks(op, x, a, b);
}

/* float4 arithmetic, rounded in single precision as float4pl etc. are */
GX_FUNC int
gx_float4_arith(int op, float a, float b, double *r)
{
	float		x = (op == GX_ARITH_ADD) ? a + b : (op == GX_ARITH_SUB) ? a - b :
		(op == GX_ARITH_MUL) ? a * b : a / b;

	*r = x;
	return gx_float_checks(op, x, a, b);
}

/* ---------------------------------------------------------------------
 * Numeric semantics: exact values as int128 scaled by 10^scale
 * ---------------------------------------------------------------------
 */
#define GX_NUMERIC_MAX_SCALE	38

/* 10^k for 0 <= k <= 38 */
GX_FUNC __int128
gx_pow10(int k)
{
	__int128	r = 1;

	for (int i = 0; i < k; i++)
		r *= 10;
	return r;
}

/* |v| < 10^38: the range every numeric register stays in */
GX_FUNC int
gx_numeric_in_range(__int128 v)
{
	__int128	lim = gx_pow10(38);

	return v < lim && v > -lim;
}

/* v * 10^k, or -1 when it leaves the range */
GX_FUNC int
gx_numeric_upscale(__int128 v, int k, __int128 *r)
{
	if (k < 0 || k > GX_NUMERIC_MAX_SCALE)
		return -1;
	if (k > 0)
	{
		__int128	lim = gx_pow10(38 - k);

		if (v >= lim || v <= -lim)
			return -1;
		v *= gx_pow10(k);
	}
	*r = v;
	return 0;
}

/* bring a and b to the same scale; -1 on overflow */
GX_FUNC int
gx_numeric_align(const GxDatum *a, const GxDatum *b, __int128 *x, __int128 *y, int *scale)
{
	int			s = a->scale > b->scale ? a->scale : b->scale;

	if (gx_numeric_upscale(a->v.n, s - a->scale, x) != 0 ||
		gx_numeric_upscale(b->v.n, s - b->scale, y) != 0)
		return -1;
	*scale = s;
	return 0;
}

/* numeric + - * with PostgreSQL's result scales; -1: recheck on host */
GX_FUNC int
gx_numeric_arith(int op, const GxDatum *a, const GxDatum *b, GxDatum *r)
{
	__int128	x,
				y,
				z;
	int			s;

	switch (op)
	{
		case GX_ARITH_ADD:
		case GX_ARITH_SUB:
			if (gx_numeric_align(a, b, &x, &y, &s) != 0)
				return -1;
			z = (op == GX_ARITH_ADD) ? x + y : x - y;
			break;
		case GX_ARITH_MUL:
			{
				__int128	lim = (__int128) 1 << 62;

				x = a->v.n;
				y = b->v.n;
				s = a->scale + b->scale;
				if (s > GX_NUMERIC_MAX_SCALE || x >= lim || x <= -lim || y >= lim || y <= -lim)
					return -1;
				z = x * y;
				break;
			}
		default:
			return -1;
	}
	if (!gx_numeric_in_range(z))
		return -1;
	r->v.n = z;
	r->scale = s;
	return 0;
}

GX_FUNC int
gx_numeric_cmp(const GxDatum *a, const GxDatum *b, int *cmp)
{
	__int128	x,
				y;
	int			s;

	if (gx_numeric_align(a, b, &x, &y, &s) != 0)
		return -1;
	*cmp = x > y ? 1 : (x < y ? -1 : 0);
	return 0;
}

/*
 * Decode PostgreSQL's numeric format (after the varlena header) into an
 * int128 at its display scale.  -1 for NaN, infinities and values out of
 * range: the row goes to the host.
 */
GX_FUNC int
gx_numeric_decode(const unsigned char *p, int64_t len, __int128 *value, int32_t *scale)
{
	uint16_t	header;
	int			weight,
				dscale,
				neg,
				hdr,
				ndigits;
	__int128	acc = 0;

	if (len < 2)
		return -1;
	header = (uint16_t) (p[0] | (p[1] << 8));
	if ((header & 0xC000) == 0xC000)
		return -1;				/* NaN, +Inf, -Inf */
	if (header & 0x8000)
	{
		/* short format */
		neg = (header & 0x2000) != 0;
		dscale = (header & 0x1F80) >> 7;
		weight = (header & 0x0040) ? (int) (~0x003F | (header & 0x003F)) : (int) (header & 0x003F);
		hdr = 2;
	}
	else
	{
		if (len < 4)
			return -1;
		neg = (header & 0xC000) == 0x4000;
		dscale = header & 0x3FFF;
		weight = (int16_t) (p[2] | (p[3] << 8));
		hdr = 4;
	}
	if (dscale > GX_NUMERIC_MAX_SCALE)
		return -1;
	ndigits = (int) ((len - hdr) / 2);
	for (int i = 0; i < ndigits; i++)
	{
		int			d = (int) (p[hdr + 2 * i] | (p[hdr + 2 * i + 1] << 8));
		int			e = 4 * (weight - i) + dscale;	/* decimal exponent at scale */
		__int128	term;

		if (d == 0)
			continue;
		if (e < 0)
		{
			/* digits beyond the display scale must be zero */
			__int128	div = gx_pow10(-e > 4 ? 4 : -e);

			if (-e > 4 || d % div != 0)
				return -1;
			term = d / div;
		}
		else
		{
			if (e > 37 || gx_numeric_upscale(d, e, &term) != 0)
				return -1;
		}
		acc += term;
		if (!gx_numeric_in_range(acc))
			return -1;
	}
	*value = neg ? -acc : acc;
	*scale = dscale;
	return 0;
}

/* ---------------------------------------------------------------------
 * Date and timestamp semantics (utils/date.h, datatype/timestamp.h)
 * ---------------------------------------------------------------------
 */
#define GX_DATE_NOBEGIN			GX_INT32_MIN
#define GX_DATE_NOEND			GX_INT32_MAX
#define GX_POSTGRES_EPOCH_JDATE	2451545
#define GX_DATE_END_JULIAN		2147483494
#define GX_TIMESTAMP_END_JULIAN 109203528
#define GX_USECS_PER_DAY		INT64_C(86400000000)

GX_FUNC int
gx_date_is_valid(int64_t d)
{
	return (0 - GX_POSTGRES_EPOCH_JDATE) <= d &&
		d < (GX_DATE_END_JULIAN - GX_POSTGRES_EPOCH_JDATE);
}

/*
 * date to timestamp.  For comparisons (date_cmp_timestamp_internal) a
 * finite date beyond the timestamp range sorts after every finite
 * timestamp and before infinity; as a cast it is an error (-1).
 */
GX_FUNC int
gx_date_to_timestamp(int64_t d, int for_compare, int64_t *r)
{
	if (d == GX_DATE_NOBEGIN)
		*r = GX_INT64_MIN;
	else if (d == GX_DATE_NOEND)
		*r = GX_INT64_MAX;
	else if (d >= GX_TIMESTAMP_END_JULIAN - GX_POSTGRES_EPOCH_JDATE)
	{
		if (!for_compare)
			return -1;
		*r = GX_INT64_MAX - 1;
	}
	else
		*r = d * GX_USECS_PER_DAY;
	return 0;
}

/* ---------------------------------------------------------------------
 * Text semantics: byte strings (C collation or equality)
 * ---------------------------------------------------------------------
 */
GX_FUNC int64_t
gx_bpchar_truelen(const unsigned char *p, int64_t len)
{
	while (len > 0 && p[len - 1] == ' ')
		len--;
	return len;
}

GX_FUNC int
gx_memcmp(const unsigned char *a, const unsigned char *b, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* varstr_cmp in the C collation */
GX_FUNC int
gx_text_cmp(const unsigned char *a, int64_t alen, const unsigned char *b, int64_t blen)
{
	int			c = gx_memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c;
	return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

/* bytes of the character starting at p (pg_utf_mblen) */
GX_FUNC int
gx_utf8_charlen(unsigned char c)
{
	if ((c & 0x80) == 0)
		return 1;
	if ((c & 0xe0) == 0xc0)
		return 2;
	if ((c & 0xf0) == 0xe0)
		return 3;
	if ((c & 0xf8) == 0xf0)
		return 4;
	return 1;
}

GX_FUNC int
gx_charlen(const unsigned char *p, int64_t left, int enc)
{
	int			n = (enc == GX_ENC_UTF8) ? gx_utf8_charlen(*p) : 1;

	return n > left ? (int) left : n;
}

/*
 * LIKE with PostgreSQL's semantics (like_match.c): % any string, _ one
 * character, escape char (or -1) quotes the next pattern character;
 * case-sensitive byte comparison.  Returns 1/0, or -1 for a pattern
 * PostgreSQL rejects (escape at the end).
 */
GX_FUNC int
gx_like(const unsigned char *s, int64_t slen, const unsigned char *p, int64_t plen,
		int escape, int enc)
{
	int64_t		si = 0,
				pi = 0;
	int64_t		star_p = -1,
				star_s = 0;

	while (si < slen)
	{
		if (pi < plen && p[pi] == '%')
		{
			/* remember where to resume if the rest does not match */
			while (pi < plen && p[pi] == '%')
				pi++;
			if (pi == plen)
				return 1;
			star_p = pi;
			star_s = si;
			continue;
		}
		if (pi < plen && p[pi] == '_')
		{
			si += gx_charlen(s + si, slen - si, enc);
			pi++;
			continue;
		}
		if (pi < plen)
		{
			int64_t		lit = pi;
			int			n;

			if (escape >= 0 && p[pi] == (unsigned char) escape)
			{
				if (pi + 1 >= plen)
					return -1;
				lit = pi + 1;
			}
			/* compare one whole character */
			n = gx_charlen(p + lit, plen - lit, enc);
			if (si + n <= slen && gx_memcmp(s + si, p + lit, n) == 0)
			{
				si += n;
				pi = lit + n;
				continue;
			}
		}
		/* mismatch: backtrack to the last %, consuming one more character */
		if (star_p < 0)
			return 0;
		star_s += gx_charlen(s + star_s, slen - star_s, enc);
		si = star_s;
		pi = star_p;
	}
	/* the string is consumed: the rest of the pattern must be all % */
	while (pi < plen && p[pi] == '%')
		pi++;
	if (pi < plen && escape >= 0 && p[pi] == (unsigned char) escape && pi + 1 >= plen)
		return -1;
	return pi == plen;
}

/*
 * substr(s, start [, count]) in characters (text_substring); -1 where
 * PostgreSQL raises (negative length, overflow).
 */
GX_FUNC int
gx_substr(const unsigned char *s, int64_t slen, int64_t start, int has_count, int64_t count,
		  int enc, const unsigned char **rp, int64_t *rlen)
{
	int64_t		s1 = start < 1 ? 1 : start;
	int64_t		nchars = -1;	/* -1: to the end */
	int64_t		pos = 0;

	if (has_count)
	{
		int64_t		e;

		if (count < 0)
			return -1;
		e = start + count;
		if (e > GX_INT32_MAX)
			nchars = -1;		/* start + count overflows: to the end */
		else if (e < 1)
		{
			*rp = s;
			*rlen = 0;
			return 0;
		}
		else
			nchars = e - s1;
	}
	/* skip s1 - 1 characters */
	for (int64_t c = 1; c < s1 && pos < slen; c++)
		pos += gx_charlen(s + pos, slen - pos, enc);
	*rp = s + pos;
	if (nchars < 0)
		*rlen = slen - pos;
	else
	{
		int64_t		end = pos;

		for (int64_t c = 0; c < nchars && end < slen; c++)
			end += gx_charlen(s + end, slen - end, enc);
		*rlen = end - pos;
	}
	return 0;
}

/* ---------------------------------------------------------------------
 * Comparisons of two registers of one type
 * ---------------------------------------------------------------------
 */

/* three-way comparison; -1 in *err when the device cannot decide */
GX_FUNC int
gx_compare(int type, const GxDatum *a, const GxDatum *b, int *err)
{
	int			c = 0;

	switch (type)
	{
		case GX_TYPE_FLOAT4:
		case GX_TYPE_FLOAT8:
			return gx_float_cmp(a->v.f, b->v.f);
		case GX_TYPE_NUMERIC:
			if (gx_numeric_cmp(a, b, &c) != 0)
				*err = 1;
			return c;
		case GX_TYPE_TEXT:
			return gx_text_cmp(a->v.s.ptr, a->v.s.len, b->v.s.ptr, b->v.s.len);
		case GX_TYPE_BPCHAR:
			return gx_text_cmp(a->v.s.ptr, gx_bpchar_truelen(a->v.s.ptr, a->v.s.len),
							   b->v.s.ptr, gx_bpchar_truelen(b->v.s.ptr, b->v.s.len));
		default:
			return a->v.i > b->v.i ? 1 : (a->v.i < b->v.i ? -1 : 0);
	}
}

GX_FUNC int
gx_cmp_result(int kind, int c)
{
	switch (kind)
	{
		case GX_CMP_EQ:
			return c == 0;
		case GX_CMP_NE:
			return c != 0;
		case GX_CMP_LT:
			return c < 0;
		case GX_CMP_LE:
			return c <= 0;
		case GX_CMP_GT:
			return c > 0;
		default:
			return c >= 0;
	}
}

/* load a constant into a register */
GX_FUNC void
gx_load_const(const GxProgram *prog, const GxConst *k, GxDatum *r)
{
	r->isnull = k->isnull;
	r->scale = k->scale;
	if (k->type == GX_TYPE_TEXT || k->type == GX_TYPE_BPCHAR)
	{
		r->v.s.ptr = (const unsigned char *) prog + prog->blob_off + k->blob_off;
		r->v.s.len = k->blob_len;
	}
	else if (k->type == GX_TYPE_NUMERIC)
		r->v.n = (__int128) (((unsigned __int128) (uint64_t) k->hi << 64) | (uint64_t) k->lo);
	else
		r->v.i = k->lo;			/* floats: the bits of the double */
}

/* ---------------------------------------------------------------------
 * Casts
 * ---------------------------------------------------------------------
 */

/* round half away from zero to an integer (numeric_int8 via round_var) */
GX_FUNC __int128
gx_numeric_round(__int128 v, int scale)
{
	__int128	p,
				q,
				rem;

	if (scale <= 0)
		return v;
	p = gx_pow10(scale);
	q = v / p;
	rem = v % p;
	if (rem * 2 >= p)
		q++;
	else if (rem * 2 <= -p)
		q--;
	return q;
}

/* float to integer, as dtoi4/ftoi8 and friends: rint, then range check */
GX_FUNC int
gx_float_to_int(double x, int t, int64_t *r)
{
	double		lo,
				hi;

	if (gx_isnan(x))
		return -1;
#ifdef GX_DEVICE_CODE
	x = rint(x);
#else
	x = __builtin_rint(x);
#endif
	lo = (t == GX_TYPE_INT2) ? -32768.0 : (t == GX_TYPE_INT4) ? -2147483648.0 : -9223372036854775808.0;
	hi = -lo;
	if (!(x >= lo && x < hi))
		return -1;
	*r = (int64_t) x;
	return 0;
}

/* cast register a of type 'from' into *r of type 'to'; -1: recheck */
GX_FUNC int
gx_cast(int to, int from, int for_compare, const GxDatum *a, GxDatum *r)
{
	int			to_int = (to == GX_TYPE_INT2 || to == GX_TYPE_INT4 || to == GX_TYPE_INT8);
	int			from_int = (from == GX_TYPE_INT2 || from == GX_TYPE_INT4 || from == GX_TYPE_INT8);

	r->scale = 0;
	if (from_int && to_int)
	{
		if (!gx_int_fits(a->v.i, to))
			return -1;
		r->v.i = a->v.i;
		return 0;
	}
	if (from_int && to == GX_TYPE_FLOAT8)
	{
		r->v.f = (double) a->v.i;
		return 0;
	}
	if (from_int && to == GX_TYPE_FLOAT4)
	{
		r->v.f = (double) (float) a->v.i;
		return 0;
	}
	if (from_int && to == GX_TYPE_NUMERIC)
	{
		r->v.n = a->v.i;
		return 0;
	}
	if ((from == GX_TYPE_FLOAT4 || from == GX_TYPE_FLOAT8) && to_int)
	{
		if (from == GX_TYPE_FLOAT4)
		{
			/* ftoi*: rint and range check in single precision */
			float		x = (float) a->v.f;
			float		lo = (to == GX_TYPE_INT2) ? -32768.0f : (to == GX_TYPE_INT4) ? -2147483648.0f : -9223372036854775808.0f;

			if (x != x)
				return -1;
#ifdef GX_DEVICE_CODE
			x = rintf(x);
#else
			x = __builtin_rintf(x);
#endif
			if (!(x >= lo && x < -lo))
				return -1;
			r->v.i = (int64_t) x;
			return 0;
		}
		return gx_float_to_int(a->v.f, to, &r->v.i);
	}
	if (from == GX_TYPE_FLOAT4 && to == GX_TYPE_FLOAT8)
	{
		r->v.f = a->v.f;
		return 0;
	}
	if (from == GX_TYPE_FLOAT8 && to == GX_TYPE_FLOAT4)
	{
		/* dtof: overflow and underflow are errors */
		float		x = (float) a->v.f;

		if (gx_isinf(x) && !gx_isinf(a->v.f))
			return -1;
		if (x == 0.0f && a->v.f != 0.0)
			return -1;
		r->v.f = x;
		return 0;
	}
	if (from == GX_TYPE_NUMERIC && to_int)
	{
		__int128	q = gx_numeric_round(a->v.n, a->scale);

		if (q > GX_INT64_MAX || q < GX_INT64_MIN || !gx_int_fits((int64_t) q, to))
			return -1;
		r->v.i = (int64_t) q;
		return 0;
	}
	if (from == GX_TYPE_DATE && to == GX_TYPE_TIMESTAMP)
		return gx_date_to_timestamp(a->v.i, for_compare, &r->v.i);
	if ((from == GX_TYPE_TEXT || from == GX_TYPE_BPCHAR) &&
		(to == GX_TYPE_TEXT || to == GX_TYPE_BPCHAR))
	{
		/* bpchar to text drops trailing spaces (rtrim in bpchar_text) */
		r->v.s.ptr = a->v.s.ptr;
		r->v.s.len = (from == GX_TYPE_BPCHAR && to == GX_TYPE_TEXT) ?
			gx_bpchar_truelen(a->v.s.ptr, a->v.s.len) : a->v.s.len;
		return 0;
	}
	return -1;
}

/* ---------------------------------------------------------------------
 * Deforming a heap tuple into registers
 * ---------------------------------------------------------------------
 */
GX_FUNC uint32_t
gx_align(uint32_t off, int align)
{
	return (off + (uint32_t) align - 1) & ~((uint32_t) align - 1);
}

/*
 * Load a fixed-width by-value attribute of GxType 'type' stored at p (a
 * heap tuple's bytes, or a column cache's array: the same image) into a
 * register.  Returns -1 for a type that is not fixed-width.
 */
GX_FUNC int
gx_load_fixed(int type, const unsigned char *p, GxDatum *r)
{
	r->isnull = 0;
	r->scale = 0;
	switch (type)
	{
		case GX_TYPE_BOOL:
			r->v.i = p[0] != 0;
			break;
		case GX_TYPE_INT2:
			r->v.i = *(const int16_t *) p;
			break;
		case GX_TYPE_INT4:
		case GX_TYPE_DATE:
			r->v.i = *(const int32_t *) p;
			break;
		case GX_TYPE_INT8:
		case GX_TYPE_TIMESTAMP:
			r->v.i = *(const int64_t *) p;
			break;
		case GX_TYPE_FLOAT4:
			r->v.f = *(const float *) p;
			break;
		case GX_TYPE_FLOAT8:
			r->v.f = *(const double *) p;
			break;
		default:
			return -1;
	}
	return 0;
}

/*
 * Walk the attributes of a tuple up to the last one the program needs,
 * loading the needed ones into their registers.  Returns GX_ROW_PASS, or
 * GX_ROW_RECHECK for a value the device cannot decode.
 */
GX_FUNC int
gx_deform(const GxProgram *prog, const unsigned char *tup, uint32_t tuplen, GxDatum *regs)
{
	const GxAttr *atts = gx_prog_atts(prog);
	uint16_t	infomask = gx_load_u16(tup + GX_T_INFOMASK_OFFSET);
	int			tup_natts = gx_load_u16(tup + GX_T_INFOMASK2_OFFSET) & GX_HEAP_NATTS_MASK;
	int			hasnull = (infomask & GX_HEAP_HASNULL) != 0;
	const unsigned char *bits = tup + GX_T_BITS_OFFSET;
	uint32_t	off = tup[GX_T_HOFF_OFFSET];

	for (int i = 0; i < prog->natts; i++)
	{
		const GxAttr *att = &atts[i];
		GxDatum    *r = (att->reg >= 0) ? &regs[att->reg] : (GxDatum *) 0;
		const unsigned char *p;

		if (i >= tup_natts)
		{
			/* added after this tuple was written: NULL or its default */
			if (r)
			{
				if (att->has_missing)
					return GX_ROW_RECHECK;
				r->isnull = 1;
			}
			continue;
		}
		if (hasnull && !(bits[i >> 3] & (1 << (i & 7))))
		{
			if (r)
				r->isnull = 1;
			continue;
		}
		if (att->attlen > 0)
			off = gx_align(off, att->attalign);
		else if (tup[off] == 0)
			off = gx_align(off, att->attalign);		/* not a short varlena */
		if (off >= tuplen)
			return GX_ROW_RECHECK;
		p = tup + off;

		if (att->attlen > 0)
		{
			if (r && gx_load_fixed(att->type, p, r) != 0)
				return GX_ROW_RECHECK;
			off += att->attlen;
		}
		else
		{
			uint8_t		b0 = p[0];
			uint32_t	size;
			const unsigned char *data;
			int64_t		dlen;

			if (b0 == 0x01)
			{
				/* TOAST pointer: on disk always VARTAG_ONDISK, 18 bytes */
				if (p[1] != 18)
					return GX_ROW_RECHECK;
				size = 18;
				if (r)
					return GX_ROW_RECHECK;
				off += size;
				continue;
			}
			if (b0 & 0x01)
			{
				size = (b0 >> 1) & 0x7F;	/* short header */
				data = p + 1;
				dlen = (int64_t) size - 1;
			}
			else
			{
				uint32_t	w = gx_load_u32(p);

				size = (w >> 2) & 0x3FFFFFFF;
				if ((w & 0x03) == 0x02)
				{
					/* compressed inline */
					if (r)
						return GX_ROW_RECHECK;
					off += size;
					continue;
				}
				data = p + 4;
				dlen = (int64_t) size - 4;
			}
			if (off + size > tuplen || dlen < 0)
				return GX_ROW_RECHECK;
			if (r)
			{
				r->isnull = 0;
				r->scale = 0;
				if (att->type == GX_TYPE_NUMERIC)
				{
					if (gx_numeric_decode(data, dlen, &r->v.n, &r->scale) != 0)
						return GX_ROW_RECHECK;
				}
				else
				{
					r->v.s.ptr = data;
					r->v.s.len = dlen;
				}
			}
			off += size;
		}
	}
	return GX_ROW_PASS;
}

/* ---------------------------------------------------------------------
 * The interpreter
 * ---------------------------------------------------------------------
 */

/*
 * Run the instructions of a program over registers already holding the
 * row's attributes.  Returns GX_ROW_PASS, GX_ROW_FAIL or GX_ROW_RECHECK.
 */
GX_FUNC int
gx_run(const GxProgram *prog, GxDatum *regs)
{
	const GxInstr *code = gx_prog_instrs(prog);
	const GxConst *consts = gx_prog_consts(prog);
	uint32_t	pc = 0;
	uint32_t	steps = 0;

	while (pc < prog->ninstrs)
	{
		const GxInstr *in = &code[pc++];
		GxDatum    *d = &regs[in->dst];
		const GxDatum *a = &regs[in->a];
		const GxDatum *b = &regs[in->b];

		/* programs only jump forward; this bounds a corrupted one */
		if (++steps > 65536)
			return GX_ROW_RECHECK;

		switch (in->op)
		{
			case GX_OP_END:
				return GX_ROW_PASS;
			case GX_OP_QUAL:
				if (a->isnull || !a->v.i)
					return GX_ROW_FAIL;
				break;
			case GX_OP_CONST:
				gx_load_const(prog, &consts[in->c], d);
				break;
			case GX_OP_MOVE:
				*d = *a;
				break;
			case GX_OP_AND_INIT:
				d->isnull = 0;
				d->v.i = 1;
				break;
			case GX_OP_AND_STEP:
				if (a->isnull)
					d->isnull = 1;
				else if (!a->v.i)
				{
					d->isnull = 0;
					d->v.i = 0;
					pc = in->c;
				}
				break;
			case GX_OP_OR_INIT:
				d->isnull = 0;
				d->v.i = 0;
				break;
			case GX_OP_OR_STEP:
				if (a->isnull)
					d->isnull = 1;
				else if (a->v.i)
				{
					d->isnull = 0;
					d->v.i = 1;
					pc = in->c;
				}
				break;
			case GX_OP_NOT:
				d->isnull = a->isnull;
				d->v.i = !a->v.i;
				break;
			case GX_OP_BOOLTEST:
				{
					int			v;

					switch (in->flags)
					{
						case GX_BT_IS_TRUE:
							v = !a->isnull && a->v.i;
							break;
						case GX_BT_IS_NOT_TRUE:
							v = a->isnull || !a->v.i;
							break;
						case GX_BT_IS_FALSE:
							v = !a->isnull && !a->v.i;
							break;
						case GX_BT_IS_NOT_FALSE:
							v = a->isnull || a->v.i;
							break;
						case GX_BT_IS_UNKNOWN:
							v = a->isnull;
							break;
						default:
							v = !a->isnull;
							break;
					}
					d->isnull = 0;
					d->v.i = v;
					break;
				}
			case GX_OP_NULLTEST:
				{
					int			v = (in->flags == GX_NT_IS_NULL) ? a->isnull : !a->isnull;

					d->isnull = 0;
					d->v.i = v;
					break;
				}
			case GX_OP_CMP:
				if (a->isnull || b->isnull)
					d->isnull = 1;
				else
				{
					int			err = 0;
					int			c = gx_compare(in->type, a, b, &err);

					if (err)
						return GX_ROW_RECHECK;
					d->isnull = 0;
					d->v.i = gx_cmp_result(in->flags, c);
				}
				break;
			case GX_OP_ARITH:
				if (a->isnull || b->isnull)
				{
					d->isnull = 1;
					break;
				}
				{
					GxDatum		r;

					r.scale = 0;
					r.isnull = 0;
					switch (in->type)
					{
						case GX_TYPE_FLOAT4:
							if (gx_float4_arith(in->flags, (float) a->v.f, (float) b->v.f, &r.v.f) != 0)
								return GX_ROW_RECHECK;
							break;
						case GX_TYPE_FLOAT8:
							if (gx_float8_arith(in->flags, a->v.f, b->v.f, &r.v.f) != 0)
								return GX_ROW_RECHECK;
							break;
						case GX_TYPE_NUMERIC:
							if (gx_numeric_arith(in->flags, a, b, &r) != 0)
								return GX_ROW_RECHECK;
							break;
						default:
							if (gx_int_arith(in->flags, in->type, a->v.i, b->v.i, &r.v.i) != 0)
								return GX_ROW_RECHECK;
							break;
					}
					*d = r;
				}
				break;
			case GX_OP_UNARY:
				if (a->isnull)
				{
					d->isnull = 1;
					break;
				}
				{
					GxDatum		r = *a;

					switch (in->type)
					{
						case GX_TYPE_FLOAT4:
						case GX_TYPE_FLOAT8:
							if (in->flags == GX_UNARY_NEG)
								r.v.f = -a->v.f;
							else
								r.v.f = a->v.f < 0 ? -a->v.f : (a->v.f == 0 ? 0.0 : a->v.f);
							break;
						case GX_TYPE_NUMERIC:
							if (in->flags == GX_UNARY_NEG || a->v.n < 0)
								r.v.n = -a->v.n;
							break;
						default:
							if (in->flags == GX_UNARY_NEG || a->v.i < 0)
							{
								if (a->v.i == GX_INT64_MIN || !gx_int_fits(-a->v.i, in->type))
									return GX_ROW_RECHECK;
								r.v.i = -a->v.i;
							}
							break;
					}
					*d = r;
				}
				break;
			case GX_OP_CAST:
				if (a->isnull)
				{
					d->isnull = 1;
					break;
				}
				{
					GxDatum		r;

					r.isnull = 0;
					if (gx_cast(in->type, in->flags & 0x7f, (in->flags & GX_CAST_FOR_COMPARE) != 0, a, &r) != 0)
						return GX_ROW_RECHECK;
					*d = r;
				}
				break;
			case GX_OP_JUMP:
				pc = in->c;
				break;
			case GX_OP_JUMP_IF_NOT_TRUE:
				if (a->isnull || !a->v.i)
					pc = in->c;
				break;
			case GX_OP_JUMP_IF_NOT_NULL:
				if (!a->isnull)
					pc = in->c;
				break;
			case GX_OP_NULLIF:
				if (!a->isnull && !b->isnull)
				{
					int			err = 0;
					int			c = gx_compare(in->type, a, b, &err);

					if (err)
						return GX_ROW_RECHECK;
					if (c == 0)
					{
						d->isnull = 1;
						break;
					}
				}
				*d = *a;
				break;
			case GX_OP_LIKE:
				if (a->isnull)
					d->isnull = 1;
				else
				{
					GxDatum		pat;
					int			m;

					pat.v.s.ptr = 0;
					pat.v.s.len = 0;
					gx_load_const(prog, &consts[in->c], &pat);
					m = gx_like(a->v.s.ptr, a->v.s.len, pat.v.s.ptr, pat.v.s.len,
								(int) consts[in->c].lo, prog->encoding);
					if (m < 0)
						return GX_ROW_RECHECK;
					d->isnull = 0;
					d->v.i = (in->flags & GX_LIKE_NEGATE) ? !m : m;
				}
				break;
			case GX_OP_IN:
				{
					int			any = (in->flags & GX_IN_ANY) != 0;
					int			kind = in->flags & 0x0f;
					int			sawnull = 0;
					int			result = any ? 0 : 1;

					if (in->b == 0)
					{
						/* empty array: false for ANY, true for ALL */
						d->isnull = 0;
						d->v.i = result;
						break;
					}
					if (a->isnull)
					{
						d->isnull = 1;
						break;
					}
					for (uint32_t k = 0; k < in->b; k++)
					{
						GxDatum		elem;
						int			err = 0;
						int			m;

						gx_load_const(prog, &consts[in->c + k], &elem);
						if (elem.isnull)
						{
							sawnull = 1;
							continue;
						}
						m = gx_cmp_result(kind, gx_compare(in->type, a, &elem, &err));
						if (err)
							return GX_ROW_RECHECK;
						if (any && m)
						{
							result = 1;
							break;
						}
						if (!any && !m)
						{
							result = 0;
							break;
						}
					}
					/* no decisive element and a NULL seen: NULL */
					if (sawnull && ((any && !result) || (!any && result)))
						d->isnull = 1;
					else
					{
						d->isnull = 0;
						d->v.i = result;
					}
					break;
				}
			case GX_OP_SUBSTR:
				{
					int			has_count = in->e != GX_NO_REG;
					const GxDatum *cnt = has_count ? &regs[in->e] : (const GxDatum *) 0;

					if (a->isnull || b->isnull || (cnt && cnt->isnull))
					{
						d->isnull = 1;
						break;
					}
					{
						const unsigned char *rp;
						int64_t		rl;

						if (gx_substr(a->v.s.ptr, a->v.s.len, b->v.i, has_count,
									  cnt ? cnt->v.i : 0, prog->encoding, &rp, &rl) != 0)
							return GX_ROW_RECHECK;
						d->isnull = 0;
						d->v.s.ptr = rp;
						d->v.s.len = rl;
					}
					break;
				}
			case GX_OP_DATE_ARITH:
				if (a->isnull || b->isnull)
				{
					d->isnull = 1;
					break;
				}
				{
					int64_t		x = a->v.i;
					int64_t		y = b->v.i;
					int64_t		r;

					if (in->flags == GX_DATE_MINUS_DATE)
					{
						if (x == GX_DATE_NOBEGIN || x == GX_DATE_NOEND ||
							y == GX_DATE_NOBEGIN || y == GX_DATE_NOEND)
							return GX_ROW_RECHECK;
						r = x - y;
					}
					else if (x == GX_DATE_NOBEGIN || x == GX_DATE_NOEND)
						r = x;	/* can't change infinity */
					else
					{
						int64_t		days = (in->flags == GX_DATE_PLUS_INT) ? y : -y;

						/* date_mii negates in int32 first */
						if (in->flags == GX_DATE_MINUS_INT && y == GX_INT32_MIN)
							return GX_ROW_RECHECK;
						r = (int64_t) (int32_t) ((uint32_t) x + (uint32_t) days);
						if ((days >= 0 ? (r < x) : (r > x)) || !gx_date_is_valid(r))
							return GX_ROW_RECHECK;
					}
					d->isnull = 0;
					d->scale = 0;
					d->v.i = r;
				}
				break;
			default:
				return GX_ROW_RECHECK;
		}
	}
	return GX_ROW_PASS;
}

/*
 * Evaluate a program for tuple 'off' of a page: the per-row step of a
 * GX_REQ_SCAN batch, shared by the kernel and the CPU engine.
 */
GX_FUNC int
gx_scan_tuple(const GxProgram *prog, const unsigned char *page, const GxPageRef *ref,
			  uint32_t off, GxDatum *regs)
{
	uint32_t	lp = gx_page_itemid(page, off);
	uint32_t	lp_off = GX_LP_OFF(lp);
	uint32_t	lp_len = GX_LP_LEN(lp);
	int			rc;

	if (GX_LP_FLAGS(lp) != GX_LP_NORMAL || !gx_tuple_visible(ref, off))
		return GX_ROW_FAIL;
	if (lp_off + lp_len > GX_BLCKSZ || lp_len < GX_T_BITS_OFFSET)
		return GX_ROW_RECHECK;
	rc = gx_deform(prog, page + lp_off, lp_len, regs);
	if (rc != GX_ROW_PASS)
		return rc;
	return gx_run(prog, regs);
}

/* per-page output of a GX_REQ_SCAN batch */
typedef struct GxScanPageOut
{
	uint32_t	pass[GX_BITMAP_WORDS];
	uint32_t	recheck[GX_BITMAP_WORDS];
} GxScanPageOut;

/*
 * The spec of what a batch does after its program ran (aggregation, join):
 * it follows the program in the batch's program area, 16-byte aligned.
 */
GX_FUNC const void *
gx_program_spec(const GxProgram *prog)
{
	return (const char *) prog + ((prog->length + 15) & ~15u);
}

/* Basic sanity of a program before running it. */
GX_FUNC int
gx_program_ok(const GxProgram *p, uint32_t len)
{
	if (len < sizeof(GxProgram) || p->magic != GX_PROGRAM_MAGIC || p->length > len)
		return 0;
	if (p->nregs > GX_MAX_REGS || p->natts > GX_MAX_ATTRS)
		return 0;
	if (p->atts_off + (uint64_t) p->natts * sizeof(GxAttr) > p->length ||
		p->consts_off + (uint64_t) p->nconsts * sizeof(GxConst) > p->length ||
		p->instrs_off + (uint64_t) p->ninstrs * sizeof(GxInstr) > p->length ||
		p->blob_off > p->length)
		return 0;
	return 1;
}

#endif							/* GX_PROGRAM_H */
