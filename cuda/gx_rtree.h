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
 * gx_rt_test is one cell of the seed's test matrix, (query, entry);
 * gx_rt_entry_passes tests an entry against the filter keys of a scan
 * (queries of one key OR-ed, keys AND-ed).  The walk over the index's
 * pages (src/gxgist_batch.c), the CPU engine's GX_REQ_RTREE_SEARCH
 * (src/cpu_engine.c, gx_rtree_level_cpu below) and the CUDA kernels
 * (cuda/rtree.cu, one thread per cell) all call them.  Below them: the
 * mirror layout (the tree as one block, a GPU task's memory or the CPU
 * engine's table) and the search request's layout, bounds and checks.
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
	uint32_t	node;			/* block number (the mirror is indexed by it too) */
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
 * Does entry e pass every key of queries[0..nqueries) (sorted by key, nkeys
 * keys, the queries of one key OR-ed)?  The filter keys of an index scan
 * with several keys, tested once per entry by both engines.
 */
GX_FUNC bool
gx_rt_entry_passes(const GxRtEntry *e, bool leaf, const GxRtQuery *queries,
				   int nqueries, int nkeys)
{
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
			return false;
		keys_passed++;
	}
	return keys_passed == nkeys;
}

/*
 * One node scan: entries[0..nentries) against queries[0..nqueries), which
 * are sorted by key, nkeys keys in all.  Sets match[i] when entry i passes
 * every key (some query of each key).
 */
GX_FUNC void
gx_rt_node_scan(const GxRtEntry *entries, int nentries, bool leaf,
				const GxRtQuery *queries, int nqueries, int nkeys,
				bool *match)
{
	for (int i = 0; i < nentries; i++)
		match[i] = gx_rt_entry_passes(&entries[i], leaf, queries, nqueries, nkeys);
}

/* ---------------------------------------------------------------------
 * The mirror: the tree in the layout both engines search, one block of
 * memory (a GPU task's device memory, or the CPU engine's table in
 * backend memory), built by src/gxgist_mirror.c.
 *
 *   GxRtMirror header
 *   counts[nblocks]      uint16: entries of node b (GX_RT_COUNT_MASK),
 *                        GX_RT_NODE_BIT, and GX_RT_LEAF_BIT for a leaf;
 *                        0 for the metapage and blocks that are not nodes
 *   nodes                node b's entries at nodes + b * node_stride
 * ---------------------------------------------------------------------
 */
#define GX_RT_MIRROR_MAGIC	0x4D545247	/* "GRTM" */
#define GX_RT_LEAF_BIT		0x8000
#define GX_RT_NODE_BIT		0x4000
#define GX_RT_COUNT_MASK	0x3FFF
#define GX_RT_MAX_STRIDE	204			/* the most entries of a node (8 kB pages) */

typedef struct GxRtMirror
{
	uint32_t	magic;
	uint32_t	nblocks;
	uint32_t	node_stride;	/* entries per node slot */
	uint32_t	root;
	uint32_t	root_level;
	uint32_t	pad;
	uint64_t	counts_offset;	/* from the header */
	uint64_t	nodes_offset;
	uint64_t	total_bytes;
} GxRtMirror;

/* the block of a mirror of nblocks nodes of node_stride entries; offsets out */
GX_FUNC uint64_t
gx_rt_mirror_layout(uint32_t nblocks, uint32_t node_stride,
					uint64_t *counts_offset, uint64_t *nodes_offset)
{
	uint64_t	c = 256;
	uint64_t	n = (c + (uint64_t) nblocks * sizeof(uint16_t) + 255) & ~(uint64_t) 255;

	*counts_offset = c;
	*nodes_offset = n;
	return n + (uint64_t) nblocks * node_stride * sizeof(GxRtEntry);
}

GX_FUNC const uint16_t *
gx_rt_mirror_counts(const GxRtMirror *m)
{
	return (const uint16_t *) ((const char *) m + m->counts_offset);
}

GX_FUNC const GxRtEntry *
gx_rt_mirror_nodes(const GxRtMirror *m)
{
	return (const GxRtEntry *) ((const char *) m + m->nodes_offset);
}

/* ---------------------------------------------------------------------
 * GX_REQ_RTREE_SEARCH: a batch of independent probes walked over a
 * mirror, level by level, all levels in one request.
 *
 * Program area: a GxRtSearch, then nqueries drive queries (each its own
 * result list), then nfilter filter queries (nfilterkeys keys, sorted by
 * key; every result entry must pass them all).  Output area: a
 * GxRtSearchOut, then room for GxRtPair results.  A level's visits that
 * exceed visit_cap set GX_RT_OVERFLOW_VISITS and the walk stops (the
 * backend splits the batch); results beyond the output's room are counted,
 * not written (npairs > room: the backend asks again with room for
 * npairs).  A child pointer outside the mirror, or a node at the wrong
 * level, sets GX_RT_CORRUPT.  Query numbers in the pairs are positions in
 * the batch.  Pairs come in no particular order.
 * ---------------------------------------------------------------------
 */
#define GX_RT_OVERFLOW_VISITS	0x0001
#define GX_RT_CORRUPT			0x0002

typedef struct GxRtSearch
{
	uint32_t	nqueries;
	uint32_t	nfilter;
	uint32_t	nfilterkeys;
	uint32_t	visit_cap;		/* visits a level may have (>= nqueries) */
	uint32_t	nblocks;		/* the mirror's, checked against the task */
	uint32_t	root;
	uint32_t	root_level;
	uint32_t	pad;
} GxRtSearch;

typedef struct GxRtSearchOut
{
	uint64_t	npairs;			/* results found (may exceed the room) */
	uint32_t	flags;			/* GX_RT_OVERFLOW_VISITS, GX_RT_CORRUPT */
	uint32_t	levels;			/* levels walked */
} GxRtSearchOut;

GX_FUNC const GxRtQuery *
gx_rt_search_queries(const GxRtSearch *s)
{
	return (const GxRtQuery *) (s + 1);
}

GX_FUNC const GxRtQuery *
gx_rt_search_filter(const GxRtSearch *s)
{
	return gx_rt_search_queries(s) + s->nqueries;
}

/* bytes of the program area a search of these sizes needs */
GX_FUNC uint64_t
gx_rt_search_program_bytes(uint32_t nqueries, uint32_t nfilter)
{
	return sizeof(GxRtSearch) + ((uint64_t) nqueries + nfilter) * sizeof(GxRtQuery);
}

/* room for results in an output area of out_len bytes */
GX_FUNC uint64_t
gx_rt_search_out_room(uint64_t out_len)
{
	return out_len < sizeof(GxRtSearchOut) ? 0 :
		(out_len - sizeof(GxRtSearchOut)) / sizeof(GxRtPair);
}

/*
 * Is a search's program area consistent with its length and the limits of
 * the kernels?  Checked by the service, the launcher and the CPU engine.
 */
GX_FUNC bool
gx_rt_search_ok(const GxRtSearch *s, uint64_t program_len)
{
	return program_len >= sizeof(GxRtSearch) &&
		program_len >= gx_rt_search_program_bytes(s->nqueries, s->nfilter) &&
		s->nqueries > 0 && s->visit_cap >= s->nqueries && s->nblocks > 0 &&
		s->root < s->nblocks && s->root_level < 64 &&
		(s->nfilter == 0) == (s->nfilterkeys == 0) && s->nfilterkeys <= s->nfilter;
}

/*
 * Device working memory of a search (reserved by the service before the
 * launch, "size first"): the program area, counters, two visit lists of
 * visit_cap and a counter per node (the grouping of a level by node).
 */
#define GX_RT_SCRATCH_COUNTERS	256
GX_FUNC uint64_t
gx_rt_search_scratch_bytes(const GxRtSearch *s, uint64_t program_len)
{
	uint64_t	prog = (program_len + 255) & ~(uint64_t) 255;
	uint64_t	visits = ((uint64_t) s->visit_cap * sizeof(GxRtVisit) + 255) & ~(uint64_t) 255;
	uint64_t	per_node = ((uint64_t) s->nblocks * sizeof(uint32_t) + 255) & ~(uint64_t) 255;

	return prog + GX_RT_SCRATCH_COUNTERS + 2 * visits + per_node;
}

/*
 * Check a visit against the mirror: the node exists, is not the metapage
 * and is a leaf exactly at level 0.  Both engines skip a visit that fails
 * and report GX_RT_CORRUPT.
 */
GX_FUNC bool
gx_rt_visit_ok(const GxRtMirror *m, const uint16_t *counts, uint32_t node, bool leaf)
{
	if (node == 0 || node >= m->nblocks || (counts[node] & GX_RT_NODE_BIT) == 0)
		return false;
	return ((counts[node] & GX_RT_LEAF_BIT) != 0) == leaf &&
		(counts[node] & GX_RT_COUNT_MASK) <= m->node_stride;
}

#ifndef __CUDACC__
/*
 * The entries of a node (n of them, a leaf or not) that pass query q and,
 * where pass is given, the filter keys (pass[i]): their positions into
 * out, in order; returns how many.  gx_rt_test for each entry, with the
 * strategy's switch out of the loop for the common && (a tight, branch-free
 * loop): the host's test matrix (the pages walk, the CPU engine).
 */
static inline int
gx_rt_node_matches(const GxRtEntry *e, int n, bool leaf, const GxRtQuery *q,
				   const bool *pass, uint16_t *out)
{
	int			m = 0;

	if (q->strategy == GX_RT_OVERLAP)
	{
		/* gx_rt_overlap, its sums of the query's bounds and eps once */
		double		eps = leaf ? GX_RT_EPSILON : GX_RT_INNER_EPSILON;
		double		xhi = q->xhi + eps;
		double		yhi = q->yhi + eps;
		double		qxlo = q->xlo;
		double		qylo = q->ylo;

		for (int i = 0; i < n; i++)
		{
			bool		hit = (e[i].xlo <= xhi) & (qxlo <= e[i].xhi + eps) &
				(e[i].ylo <= yhi) & (qylo <= e[i].yhi + eps);

			out[m] = (uint16_t) i;
			m += hit & (pass == NULL || pass[i]);
		}
		return m;
	}
	for (int i = 0; i < n; i++)
	{
		if ((pass == NULL || pass[i]) && gx_rt_test(&e[i], q, leaf))
			out[m++] = (uint16_t) i;
	}
	return m;
}

/*
 * qsort order of a level's visits: by node, then query, so that a node is
 * read once a level (the walk over the pages, the CPU engine's search; the
 * kernels group them by node with a counting sort)
 */
static inline int
gx_rt_cmp_visit(const void *a, const void *b)
{
	const GxRtVisit *va = (const GxRtVisit *) a;
	const GxRtVisit *vb = (const GxRtVisit *) b;

	if (va->node != vb->node)
		return va->node < vb->node ? -1 : 1;
	return (va->query > vb->query) - (va->query < vb->query);
}

/*
 * One counting pass of an LSD radix sort: turn the counts of each byte
 * value among n keys into the first output position of that value.
 * Returns false when one value has all n keys (the pass would change
 * nothing, and can be skipped).
 */
static inline bool
gx_radix_offsets(uint64_t count[256], uint64_t n)
{
	uint64_t	pos = 0;

	for (int b = 0; b < 256; b++)
	{
		uint64_t	c = count[b];

		if (c == n)
			return false;
		count[b] = pos;
		pos += c;
	}
	return true;
}

/*
 * Sort n visits into gx_rt_cmp_visit's order (node, then query) with an LSD
 * radix sort: one stable counting pass per key byte, least significant
 * first, skipping bytes that are the same in every visit; tmp has room for
 * n visits.  Returns the array that holds the result (v or tmp).
 */
static inline GxRtVisit *
gx_rt_sort_visits(GxRtVisit *v, uint64_t n, GxRtVisit *tmp)
{
	GxRtVisit  *src = v;
	GxRtVisit  *dst = tmp;

	for (int pass = 0; pass < 8 && n > 1; pass++)
	{
		uint64_t	count[256] = {0};
		int			shift = 8 * (pass & 3);
		GxRtVisit  *t;

		for (uint64_t i = 0; i < n; i++)
			count[((pass < 4 ? src[i].query : src[i].node) >> shift) & 0xFF]++;
		if (!gx_radix_offsets(count, n))
			continue;			/* one value: the order stays */
		for (uint64_t i = 0; i < n; i++)
			dst[count[((pass < 4 ? src[i].query : src[i].node) >> shift) & 0xFF]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	return src;
}

/*
 * One level of the walk over a mirror, the kernel's contract on the host
 * (the CPU engine's form of cuda/rtree.cu): visits grouped by node, the
 * same tests and outputs, at most out_cap written; returns how many there
 * are (more than out_cap: counted, not written).  Bad visits set
 * GX_RT_CORRUPT in *flags.
 */
static inline uint64_t
gx_rtree_level_cpu(const GxRtMirror *m, const GxRtSearch *s,
				   const GxRtVisit *visits, uint32_t nvisits,
				   bool leaf, void *out, uint64_t out_cap, uint32_t *flags)
{
	const uint16_t *counts = gx_rt_mirror_counts(m);
	const GxRtEntry *nodes = gx_rt_mirror_nodes(m);
	const GxRtQuery *queries = gx_rt_search_queries(s);
	const GxRtQuery *filter = gx_rt_search_filter(s);
	bool		pass[GX_RT_MAX_STRIDE];
	uint16_t	hits[GX_RT_MAX_STRIDE];
	uint32_t	pass_node = 0;
	uint64_t	count = 0;

	for (uint32_t v = 0; v < nvisits; v++)
	{
		uint32_t	node = visits[v].node;
		const GxRtEntry *e = nodes + (size_t) node * m->node_stride;
		const GxRtQuery *q = &queries[visits[v].query];
		uint32_t	n;
		int			nhit;

		if (!gx_rt_visit_ok(m, counts, node, leaf))
		{
			*flags |= GX_RT_CORRUPT;
			continue;
		}
		n = counts[node] & GX_RT_COUNT_MASK;
		/* the filter keys once per node of a run of visits */
		if (v == 0 || node != pass_node)
		{
			for (uint32_t i = 0; i < n; i++)
				pass[i] = s->nfilterkeys == 0 ||
					gx_rt_entry_passes(&e[i], leaf, filter, (int) s->nfilter,
									   (int) s->nfilterkeys);
			pass_node = node;
		}
		nhit = gx_rt_node_matches(e, (int) n, leaf, q,
								  s->nfilterkeys == 0 ? NULL : pass, hits);
		for (int h = 0; h < nhit; h++)
		{
			uint32_t	i = hits[h];

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
					GxRtVisit  *nv = &((GxRtVisit *) out)[count];

					nv->node = e[i].blk;
					nv->query = visits[v].query;
				}
			}
			count++;
		}
	}
	return count;
}
#endif

#endif							/* GX_RTREE_H */
