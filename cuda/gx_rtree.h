/*-------------------------------------------------------------------------
 * gx_rtree.h
 *		Node entries of the gpuext_gist R-tree and the per-entry tests of
 *		its search, shared by the host (gcc) and the device (nvcc).
 *
 * An entry is 40 bytes: a box (four float8) and either a heap TID (leaf)
 * or a child block number (inner node).  The same array of entries is the
 * body of an index page on disk (src/gxgist.h) and of a node in the device
 * mirror, so a node scan reads it in place.
 *
 * Leaf tests are PostgreSQL's operators to the bit (utils/adt/geo_ops.c:
 * "fuzzy" comparisons within EPSILON, NaN rules of point_eq_point), so the
 * index needs no recheck.  Inner tests are their monotone relaxations: an
 * inner entry's box covers every box below it (exact min/max), so whenever
 * a leaf below it can match, the inner test is true.  The EPSILON slack of
 * the leaf tests is doubled in the inner tests, which covers the rounding
 * of "A - B <= EPSILON" against "A <= B + EPSILON".
 *
 * gx_rtree_node_scan is one node scan of the seed's test matrix: every
 * (query, entry) pair, queries of one scan key OR-ed, keys AND-ed.  The
 * CPU engine calls it per node; the CUDA kernel (cuda/rtree.cu) runs the
 * same tests with one thread per pair.
 *
 * IDENTIFICATION
 *		cuda/gx_rtree.h
 *-------------------------------------------------------------------------
 */
#ifndef GX_RTREE_H
#define GX_RTREE_H

#include "gx_common.h"

#ifndef __CUDACC__
#include <math.h>
#endif

#define GX_RT_EPSILON		1.0E-06		/* geo_decls.h EPSILON */
#define GX_RT_INNER_EPSILON	2.0E-06

/* one node entry: 40 bytes, the same on disk and on the device */
typedef struct GxRtEntry
{
	double		xlo;
	double		ylo;
	double		xhi;
	double		yhi;
	uint32_t	blk;			/* heap block (leaf) or child block (inner) */
	uint16_t	off;			/* heap line pointer (leaf), 0 (inner) */
	uint16_t	pad;
} GxRtEntry;

/* search strategies: the operator class's strategy numbers */
typedef enum GxRtStrategy
{
	GX_RT_OVERLAP = 1,			/* box && box */
	GX_RT_CONTAINS = 2,			/* box @> box */
	GX_RT_CONTAINED = 3,		/* box <@ box */
	GX_RT_SAME = 4,				/* box ~= box */
	GX_RT_CONTAINS_PT = 5,		/* box @> point */
	GX_RT_PT_IN_BOX = 6,		/* point <@ box */
	GX_RT_PT_SAME = 7,			/* point ~= point */
	GX_RT_NSTRATEGIES = 7
} GxRtStrategy;

/* a query: a strategy and its argument as a box (a point is degenerate) */
typedef struct GxRtQuery
{
	double		xlo;
	double		ylo;
	double		xhi;
	double		yhi;
	int32_t		strategy;
	int32_t		key;			/* scan key it belongs to (0-based) */
} GxRtQuery;

/* the fuzzy comparisons of geo_decls.h, with a given slack */
GX_FUNC bool
gx_rt_le(double a, double b, double eps)
{
	return a <= b + eps;
}

GX_FUNC bool
gx_rt_ge(double a, double b, double eps)
{
	return a + eps >= b;
}

GX_FUNC bool
gx_rt_feq(double a, double b)
{
	return a == b || fabs(a - b) <= GX_RT_EPSILON;
}

/* float8_eq: NaN equals NaN */
GX_FUNC bool
gx_rt_float8_eq(double a, double b)
{
	if (isnan(a))
		return isnan(b);
	if (isnan(b))
		return false;
	return a == b;
}

/* point_eq_point: exact when a NaN is involved, fuzzy otherwise */
GX_FUNC bool
gx_rt_point_eq(double x1, double y1, double x2, double y2)
{
	if (isnan(x1) || isnan(y1) || isnan(x2) || isnan(y2))
		return gx_rt_float8_eq(x1, x2) && gx_rt_float8_eq(y1, y2);
	return gx_rt_feq(x1, x2) && gx_rt_feq(y1, y2);
}

GX_FUNC bool
gx_rt_query_has_nan(const GxRtQuery *q)
{
	return isnan(q->xlo) || isnan(q->ylo) || isnan(q->xhi) || isnan(q->yhi);
}

/* box_ov(e, q) with slack eps */
GX_FUNC bool
gx_rt_overlap(const GxRtEntry *e, const GxRtQuery *q, double eps)
{
	return gx_rt_le(e->xlo, q->xhi, eps) && gx_rt_le(q->xlo, e->xhi, eps) &&
		gx_rt_le(e->ylo, q->yhi, eps) && gx_rt_le(q->ylo, e->yhi, eps);
}

/* box_contain_box(e, q) with slack eps */
GX_FUNC bool
gx_rt_contains(const GxRtEntry *e, const GxRtQuery *q, double eps)
{
	return gx_rt_ge(e->xhi, q->xhi, eps) && gx_rt_le(e->xlo, q->xlo, eps) &&
		gx_rt_ge(e->yhi, q->yhi, eps) && gx_rt_le(e->ylo, q->ylo, eps);
}

/* box_contain_point(e, (q.xlo, q.ylo)): exact comparisons */
GX_FUNC bool
gx_rt_contains_point(const GxRtEntry *e, const GxRtQuery *q)
{
	return e->xhi >= q->xlo && e->xlo <= q->xlo &&
		e->yhi >= q->ylo && e->ylo <= q->ylo;
}

/*
 * Leaf test: the operator itself.  For a point column the entry is the
 * degenerate box (x, y, x, y).
 */
GX_FUNC bool
gx_rt_leaf_match(const GxRtEntry *e, const GxRtQuery *q)
{
	switch (q->strategy)
	{
		case GX_RT_OVERLAP:
			return gx_rt_overlap(e, q, GX_RT_EPSILON);
		case GX_RT_CONTAINS:
			return gx_rt_contains(e, q, GX_RT_EPSILON);
		case GX_RT_CONTAINED:
			/* box_contained(e, q) = box_contain_box(q, e) */
			return gx_rt_ge(q->xhi, e->xhi, GX_RT_EPSILON) &&
				gx_rt_le(q->xlo, e->xlo, GX_RT_EPSILON) &&
				gx_rt_ge(q->yhi, e->yhi, GX_RT_EPSILON) &&
				gx_rt_le(q->ylo, e->ylo, GX_RT_EPSILON);
		case GX_RT_SAME:
			return gx_rt_point_eq(e->xhi, e->yhi, q->xhi, q->yhi) &&
				gx_rt_point_eq(e->xlo, e->ylo, q->xlo, q->ylo);
		case GX_RT_CONTAINS_PT:
			return gx_rt_contains_point(e, q);
		case GX_RT_PT_IN_BOX:
			/* on_pb(point e, box q) = box_contain_point(q, e) */
			return q->xhi >= e->xlo && q->xlo <= e->xlo &&
				q->yhi >= e->ylo && q->ylo <= e->ylo;
		case GX_RT_PT_SAME:
			return gx_rt_point_eq(e->xlo, e->ylo, q->xlo, q->ylo);
	}
	return false;
}

/*
 * Inner test: can a leaf entry below an inner entry whose box is e match?
 * True whenever it can (false positives only cost a node visit).
 */
GX_FUNC bool
gx_rt_inner_match(const GxRtEntry *e, const GxRtQuery *q)
{
	switch (q->strategy)
	{
		case GX_RT_OVERLAP:
		case GX_RT_CONTAINED:
			return gx_rt_overlap(e, q, GX_RT_INNER_EPSILON);
		case GX_RT_CONTAINS:
			return gx_rt_contains(e, q, GX_RT_INNER_EPSILON);
		case GX_RT_SAME:
		case GX_RT_PT_SAME:
			/* NaN entries are not covered by their parents' boxes */
			if (gx_rt_query_has_nan(q))
				return true;
			return gx_rt_contains(e, q, GX_RT_INNER_EPSILON);
		case GX_RT_CONTAINS_PT:
			return gx_rt_contains_point(e, q);
		case GX_RT_PT_IN_BOX:
			return gx_rt_overlap(e, q, 0.0);
	}
	return true;
}

/* one cell of the test matrix: entry e of a leaf or inner node, query q */
GX_FUNC bool
gx_rt_test(const GxRtEntry *e, const GxRtQuery *q, bool leaf)
{
	return leaf ? gx_rt_leaf_match(e, q) : gx_rt_inner_match(e, q);
}

/* ---------------------------------------------------------------------
 * Batches of independent probes (spatial joins, gpuext_gist_probe): every
 * query has its own result list.  The walk is level-synchronous: a level's
 * work is a list of visits (node, query), grouped by node; a node scan
 * tests its entries against the queries queued on it and emits visits of
 * the next level (inner nodes) or result pairs (leaves).
 * ---------------------------------------------------------------------
 */

/* a visit: query 'query' is queued on node 'node' */
typedef struct GxRtVisit
{
	uint32_t	node;			/* block number (host) or mirror slot (device) */
	uint32_t	query;
} GxRtVisit;

/* a result: query 'query' matches the leaf entry (blk, off) */
typedef struct GxRtPair
{
	uint32_t	query;
	uint32_t	blk;
	uint16_t	off;
	uint16_t	pad;
} GxRtPair;

/*
 * One node scan: entries[0..nentries) against queries[0..nqueries), which
 * are sorted by key, nkeys keys in all.  Sets match[i] when entry i passes
 * every key (some query of each key).  The CPU engine's form of the test
 * matrix; the kernel computes the same matrix in parallel.
 */
GX_FUNC void
gx_rt_node_scan(const GxRtEntry *entries, int nentries, bool leaf,
				const GxRtQuery *queries, int nqueries, int nkeys,
				bool *match)
{
	for (int i = 0; i < nentries; i++)
	{
		const GxRtEntry *e = &entries[i];
		int			keys_passed = 0;
		int			j = 0;

		while (j < nqueries)
		{
			int			key = queries[j].key;
			bool		hit = false;

			for (; j < nqueries && queries[j].key == key; j++)
			{
				if (!hit)
					hit = leaf ? gx_rt_leaf_match(e, &queries[j])
						: gx_rt_inner_match(e, &queries[j]);
			}
			if (!hit)
				break;
			keys_passed++;
		}
		match[i] = (keys_passed == nkeys);
	}
}

#ifndef __CUDACC__
/*
 * One level of the walk over a mirror, the kernel's contract on the host
 * (the CPU engine's form of cuda/rtree.cu): the same mirror layout, visits
 * grouped by node, the same outputs, at most out_cap written; returns how
 * many there are (more than out_cap: retry with a larger buffer).
 */
static inline uint32_t
gx_rtree_level_cpu(const GxRtEntry *nodes, const uint16_t *counts,
				   uint32_t node_stride, const GxRtQuery *queries,
				   const GxRtVisit *visits, uint32_t nvisits,
				   bool leaf, void *out, uint32_t out_cap)
{
	uint32_t	count = 0;

	for (uint32_t v = 0; v < nvisits; v++)
	{
		uint32_t	node = visits[v].node;
		const GxRtEntry *e = nodes + (size_t) node * node_stride;
		const GxRtQuery *q = &queries[visits[v].query];

		for (uint32_t i = 0; i < counts[node]; i++)
		{
			if (!gx_rt_test(&e[i], q, leaf))
				continue;
			if (count < out_cap)
			{
				if (leaf)
				{
					GxRtPair   *p = &((GxRtPair *) out)[count];

					p->query = visits[v].query;
					p->blk = e[i].blk;
					p->off = e[i].off;
					p->pad = 0;
				}
				else
				{
					GxRtVisit  *n = &((GxRtVisit *) out)[count];

					n->node = e[i].blk;
					n->query = visits[v].query;
				}
			}
			count++;
		}
	}
	return count;
}

/*
 * The device form (cuda/rtree.cu): one level of visits over a device
 * mirror of the tree (node i's entries at nodes + i * node_stride, counts
 * in counts[]), run on stream; visits are grouped by node.  Writes the
 * next level's visits (inner level) or result pairs (leaf level), at most
 * out_cap; *out_count may exceed out_cap, then the caller retries with a
 * larger buffer.  Returns 0 or a cudaError_t.  Built only with nvcc.
 */
extern int	gx_rtree_level_launch(const GxRtEntry *nodes, const uint16_t *counts,
								  uint32_t node_stride, const GxRtQuery *queries,
								  const GxRtVisit *visits, uint32_t nvisits,
								  bool leaf, void *out, uint32_t out_cap,
								  uint32_t *out_count, void *stream);
#endif

#endif							/* GX_RTREE_H */
