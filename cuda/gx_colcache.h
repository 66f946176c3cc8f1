/*-------------------------------------------------------------------------
 * gx_colcache.h
 *		The column cache's layout and its per-row fetch: a relation's
 *		fixed-width columns of its all-visible pages as arrays, read by a
 *		device program instead of the heap pages (src/colcache.c builds it
 *		and decides when a query may use it).
 *
 * One cache is one position-independent image (offsets from its header),
 * so the same bytes serve the CPU engine (a pinned DSM segment) and, later,
 * a device copy.  Rows are dense: the cached pages' rows in block order,
 * page p's rows at [row_start, row_start + nrows), each with its line
 * pointer (offsets[]) so that results come out as the page bitmaps of
 * GX_REQ_SCAN.  A column is an array of its values (the heap's own bytes,
 * the value's width apart) and a bitmap of NULLs (bit set = NULL).  A
 * column added after a row was written holds its default (the cache is
 * built with heap_getattr).
 *
 * IDENTIFICATION
 *		cuda/gx_colcache.h
 *-------------------------------------------------------------------------
 */
#ifndef GX_COLCACHE_H
#define GX_COLCACHE_H

#include "gx_program.h"

#define GX_CC_MAGIC			0x47584343	/* "GXCC" */
#define GX_CC_MAX_COLS		64
#define GX_CC_NO_SLOT		0xffffffffu

/* one cached column */
typedef struct GxCcColumn
{
	int16_t		attnum;
	uint8_t		type;			/* GxType */
	uint8_t		width;			/* 1, 2, 4 or 8 bytes */
	uint32_t	pad;
	uint64_t	values_off;		/* width * nrows bytes */
	uint64_t	nulls_off;		/* (nrows + 7) / 8 bytes, bit set = NULL */
} GxCcColumn;

/* one cached page */
typedef struct GxCcPage
{
	uint32_t	blkno;
	uint32_t	nrows;
	uint64_t	row_start;		/* first row in the column arrays */
	uint16_t	maxoff;			/* line pointers of the page when cached */
	uint16_t	pad[3];
} GxCcPage;

typedef struct GxColCache
{
	uint32_t	magic;
	uint32_t	ncols;
	uint32_t	npages;			/* cached pages (slots) */
	uint32_t	nblocks;		/* blocks of the relation when cached */
	uint64_t	nrows;
	uint64_t	size;			/* bytes of the whole image */
	uint64_t	block_map_off;	/* uint32_t[nblocks]: slot or GX_CC_NO_SLOT */
	uint64_t	pages_off;		/* GxCcPage[npages] */
	uint64_t	offsets_off;	/* uint16_t[nrows]: line pointer of each row */
	int16_t		colmap[GX_MAX_ATTRS];	/* attnum - 1 -> column, -1 = none */
	GxCcColumn	cols[GX_CC_MAX_COLS];
} GxColCache;

GX_FUNC const uint32_t *
gx_cc_block_map(const GxColCache *cc)
{
	return (const uint32_t *) ((const char *) cc + cc->block_map_off);
}

GX_FUNC const GxCcPage *
gx_cc_pages(const GxColCache *cc)
{
	return (const GxCcPage *) ((const char *) cc + cc->pages_off);
}

GX_FUNC const uint16_t *
gx_cc_offsets(const GxColCache *cc)
{
	return (const uint16_t *) ((const char *) cc + cc->offsets_off);
}

/*
 * Load the attributes a program needs for row 'row' from the cache: the
 * counterpart of gx_deform for cached pages.  The host checked that every
 * needed attribute is cached with the program's type; a program rebuilt
 * since (a rescan) that needs another one gets the row rechecked on the
 * host, from the heap page.
 */
GX_FUNC int
gx_cc_deform(const GxProgram *prog, const GxColCache *cc, uint64_t row, GxDatum *regs)
{
	const GxAttr *atts = gx_prog_atts(prog);
	const unsigned char *base = (const unsigned char *) cc;

	for (int i = 0; i < prog->natts; i++)
	{
		const GxAttr *att = &atts[i];
		const GxCcColumn *col;
		GxDatum    *r;

		if (att->reg < 0)
			continue;
		if (cc->colmap[i] < 0)
			return GX_ROW_RECHECK;
		col = &cc->cols[cc->colmap[i]];
		if (col->type != att->type)
			return GX_ROW_RECHECK;
		r = &regs[att->reg];
		if ((base[col->nulls_off + (row >> 3)] >> (row & 7)) & 1)
		{
			r->isnull = 1;
			continue;
		}
		if (gx_load_fixed(att->type, base + col->values_off + row * col->width, r) != 0)
			return GX_ROW_RECHECK;
	}
	return GX_ROW_PASS;
}

/*
 * Evaluate a program for row 'row' of the cache: the per-row step of a
 * GX_REQ_SCAN batch's cached pages (gx_scan_tuple for heap pages).
 */
GX_FUNC int
gx_scan_cached_row(const GxProgram *prog, const GxColCache *cc, uint64_t row, GxDatum *regs)
{
	int			rc = gx_cc_deform(prog, cc, row, regs);

	if (rc != GX_ROW_PASS)
		return rc;
	return gx_run(prog, regs);
}

#endif							/* GX_COLCACHE_H */
