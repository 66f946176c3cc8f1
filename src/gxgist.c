/*-------------------------------------------------------------------------
 * gxgist.c
 *		The gpuext_gist index access method: handler, reloptions, operator
 *		class validation, cost estimate, and the page helpers.
 *
 * An R-tree with wide nodes over one box or point column (issue #9,
 * Beier et al.'s GiST node scans, ../shared/design/seeds-002-*.md).
 *
 * Page layout.  Every node is one page (8 kB):
 *
 *   +----------------------------+  0
 *   | PageHeaderData (24 bytes)  |
 *   +----------------------------+  24 = MAXALIGN(SizeOfPageHeaderData)
 *   | GxRtEntry[0 .. n)          |  40 bytes each (cuda/gx_rtree.h):
 *   |   xlo, ylo, xhi, yhi       |    float8 box
 *   |   blk, off                 |    heap TID (leaf) or child block (inner)
 *   +----------------------------+  pd_lower = 24 + 40 n
 *   | free                       |
 *   +----------------------------+  pd_upper = pd_special
 *   | GxgPageOpaqueData (8 bytes)|  flags (META, LEAF), level, page id
 *   +----------------------------+  8192
 *
 * No line pointers: the entry count is (pd_lower - 24) / 40, and the
 * entries are a plain array, the form the device mirror and the node scan
 * read.  Up to 204 entries per page; the node_size reloption (8 .. 204,
 * default 204) caps a node below that.  fillfactor (10 .. 100, default 90)
 * is how full the bulk load packs nodes.  A point column stores degenerate
 * boxes (x, y, x, y).  NULLs are not indexed (every operator is strict and
 * the access method requires a qual).
 *
 * Block 0 is the metapage (GxgMetaPageData at the start of the contents):
 * root block, root level, node size, key type, count of node splits.
 * Leaves are level 0; an inner entry's box covers (exact min/max of the
 * coordinates, NaNs ignored) every box in its child.
 *
 * WAL and crash safety.  Every change is one GenericXLog record, and every
 * record leaves a valid tree:
 *   - an insert splits full nodes on the way down (a node is split while
 *     its parent still has room), so a split writes exactly the parent, the
 *     node, the new sibling and the metapage (a root split: the metapage,
 *     the old root, the sibling and the new root), 4 pages in one record;
 *   - it enlarges the chosen parent entry's box before descending (a box
 *     larger than needed is still valid), then appends to the leaf;
 *   - vacuum removes leaf entries; boxes are never shrunk, pages never
 *     freed or reused (an emptied leaf stays in the tree).
 * A crash between extending the relation and the record that fills the
 * new page leaves an all-zero page that nothing points to; scans, vacuum
 * and the checker skip such pages.  The bulk build writes its pages and
 * logs them as full images (log_newpage_range).
 *
 * Concurrency.  Inserts serialize on a heavyweight lock on the metapage's
 * block (LockPage ExclusiveLock); scans take it in share mode while they
 * walk the tree (they collect every TID first, then return them), so a
 * scan never sees a half-moved node.  Vacuum takes only buffer locks: it
 * reads the blocks in order and entries only ever move to new blocks at the
 * end of the relation, which it reaches too.  On a hot standby (no
 * heavyweight locks against replay) a scan reads the split count before and
 * after its walk and walks again if a split was replayed meanwhile.
 *
 * IDENTIFICATION
 *		src/gxgist.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "access/reloptions.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "commands/vacuum.h"
#include "fmgr.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "costparams.h"
#include "gxgist.h"
#include "indexopen.h"

PG_FUNCTION_INFO_V1(gpuext_gist_handler);

/* the entry layout the device mirror and cuda/rtree.cu assume */
StaticAssertDecl(sizeof(GxRtEntry) == 40, "GxRtEntry is 40 bytes");
StaticAssertDecl(GXG_MAX_NODE_SIZE == 204, "204 entries per 8 kB node (GX_RT_MAX_NODE)");

static relopt_kind gxg_relopt_kind;
static relopt_parse_elt gxg_relopt_tab[2];

/*
 * Register the reloptions (node_size, fillfactor).  Called from _PG_init
 * whether or not the library is preloaded: CREATE INDEX needs them.
 */
void
gx_gist_init(void)
{
	gxg_relopt_kind = add_reloption_kind();
	add_int_reloption(gxg_relopt_kind, "node_size",
					  "Most entries per gpuext_gist node",
					  GXG_MAX_NODE_SIZE, GXG_MIN_NODE_SIZE, GXG_MAX_NODE_SIZE,
					  AccessExclusiveLock);
	gxg_relopt_tab[0].optname = "node_size";
	gxg_relopt_tab[0].opttype = RELOPT_TYPE_INT;
	gxg_relopt_tab[0].offset = offsetof(GxgOptions, node_size);
	add_int_reloption(gxg_relopt_kind, "fillfactor",
					  "How full the build packs gpuext_gist nodes, in percent",
					  GXG_DEFAULT_FILLFACTOR, 10, 100, ShareUpdateExclusiveLock);
	gxg_relopt_tab[1].optname = "fillfactor";
	gxg_relopt_tab[1].opttype = RELOPT_TYPE_INT;
	gxg_relopt_tab[1].offset = offsetof(GxgOptions, fillfactor);

	gx_gist_join_init();
	gx_gist_mirror_init();
}

/* amoptions: parse and validate the reloptions */
static bytea *
gxg_options(Datum reloptions, bool validate)
{
	return (bytea *) build_reloptions(reloptions, validate, gxg_relopt_kind,
									  sizeof(GxgOptions), gxg_relopt_tab,
									  lengthof(gxg_relopt_tab));
}

/* Initialise an empty page with our special space */
void
gxg_init_page(Page page, uint16 flags, uint16 level)
{
	GxgPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(GxgPageOpaqueData));
	opaque = GxgPageGetOpaque(page);
	opaque->flags = flags;
	opaque->level = level;
	opaque->unused = 0;
	opaque->page_id = GXG_PAGE_ID;
}

/* Set the entry count of a node page (pd_lower marks the array's end) */
void
gxg_set_nentries(Page page, int n)
{
	Assert(n >= 0 && n <= GXG_MAX_NODE_SIZE);
	((PageHeader) page)->pd_lower = MAXALIGN(SizeOfPageHeaderData) + n * sizeof(GxRtEntry);
}

/*
 * Extend the index by one page; returned pinned and exclusively locked.
 * Pages are never reused (see the header comment), so no free space map.
 */
Buffer
gxg_new_buffer(Relation index)
{
	Buffer		buf;
	bool		needLock = !RELATION_IS_LOCAL(index);

	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBuffer(index, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buf;
}

/*
 * ERROR: the index is corrupted at block blk (what: how).  The checker,
 * the walks, inserts and VACUUM all report corruption so.
 */
void
gxg_corrupt(Relation index, BlockNumber blk, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("gpuext_gist index \"%s\" is corrupted at block %u: %s",
					RelationGetRelationName(index), blk, what)));
}

/*
 * Check the metapage, with a clean error for anything else: the page, its
 * magic and version, and the fields readers rely on (a node size that
 * fits a page, a root that is not the metapage, a root level a page can
 * carry).  Whether the root lies within the index is checked where it is
 * followed (gxg_check_child).
 */
GxgMetaPageData *
gxg_check_meta(Relation index, Page page)
{
	GxgMetaPageData *meta = GxgPageGetMeta(page);

	if (PageIsNew(page) ||
		((PageHeader) page)->pd_special != BLCKSZ - MAXALIGN(sizeof(GxgPageOpaqueData)) ||
		!GxgPageIsMeta(page) ||
		meta->magic != GXG_MAGIC || meta->version != GXG_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has no valid gpuext_gist metapage",
						RelationGetRelationName(index))));
	if (meta->node_size < GXG_MIN_NODE_SIZE || meta->node_size > GXG_MAX_NODE_SIZE)
		gxg_corrupt(index, GXG_META_BLKNO, "node size out of range");
	if (meta->root == GXG_META_BLKNO || meta->root_level > PG_UINT16_MAX)
		gxg_corrupt(index, GXG_META_BLKNO, "root block or root level out of range");
	return meta;
}

/*
 * The entries (*n of them) of the node at block blkno, checked as every
 * reader checks a node, once per page read: an initialized page with the
 * node's special space and page id, not the metapage, an entry array of
 * whole entries within the page, at the level the reader expects (level;
 * -1: any), a leaf exactly at level 0, an inner node not empty
 */
GxRtEntry *
gxg_node_entries(Relation index, Page page, BlockNumber blkno, int level, int *n)
{
	PageHeader	ph = (PageHeader) page;
	GxgPageOpaque opaque;

	if (PageIsNew(page))
		gxg_corrupt(index, blkno, "a child pointer leads to an empty page");
	if (PageGetPageSize(page) != BLCKSZ ||
		ph->pd_special != BLCKSZ - MAXALIGN(sizeof(GxgPageOpaqueData)))
		gxg_corrupt(index, blkno, "not a gpuext_gist node");
	opaque = GxgPageGetOpaque(page);
	if (opaque->page_id != GXG_PAGE_ID || (opaque->flags & ~GXG_LEAF) != 0)
		gxg_corrupt(index, blkno, "not a gpuext_gist node");
	if (ph->pd_lower < MAXALIGN(SizeOfPageHeaderData) || ph->pd_lower > ph->pd_special ||
		(ph->pd_lower - MAXALIGN(SizeOfPageHeaderData)) % sizeof(GxRtEntry) != 0)
		gxg_corrupt(index, blkno, "entry array length is not a whole number of entries");
	if (level >= 0 && opaque->level != level)
		gxg_corrupt(index, blkno, "level differs from the parent's");
	if (((opaque->flags & GXG_LEAF) != 0) != (opaque->level == 0))
		gxg_corrupt(index, blkno, "leaf flag differs from the level");
	*n = GxgPageGetNEntries(page);
	if (*n == 0 && opaque->level > 0)
		gxg_corrupt(index, blkno, "empty inner node");
	return GxgPageGetEntries(page);
}

/*
 * ERROR unless block child, which an entry of block parent (or the
 * metapage) links to, is a block of the index other than the metapage
 */
void
gxg_check_child(Relation index, BlockNumber parent, BlockNumber child)
{
	if (child == GXG_META_BLKNO || child >= gx_index_nblocks(index, child))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("gpuext_gist index \"%s\" is corrupted at block %u: child pointer out of range",
						RelationGetRelationName(index), parent),
				 errdetail("It leads to block %u; the index has %u blocks.", child,
						   gx_index_nblocks(index, child))));
}

/*
 * ERROR unless leaf entry e of block blkno holds a heap TID: a valid
 * block, an offset from 1 to MaxHeapTuplesPerPage
 */
void
gxg_check_tid(Relation index, BlockNumber blkno, const GxRtEntry *e)
{
	if (e->off < FirstOffsetNumber || e->off > MaxHeapTuplesPerPage ||
		!BlockNumberIsValid(e->blk))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("gpuext_gist index \"%s\" is corrupted at block %u: invalid heap TID",
						RelationGetRelationName(index), blkno),
				 errdetail("A leaf entry holds TID (%u,%u).", e->blk, e->off)));
}

/*
 * The entry box of a key: a box as it is, a point as the degenerate box.
 */
void
gxg_box_of_datum(Relation index, Datum value, GxRtEntry *e)
{
	if (TupleDescAttr(RelationGetDescr(index), 0)->atttypid == POINTOID)
	{
		Point	   *p = DatumGetPointP(value);

		e->xlo = e->xhi = p->x;
		e->ylo = e->yhi = p->y;
	}
	else
	{
		BOX		   *b = DatumGetBoxP(value);

		e->xlo = b->low.x;
		e->ylo = b->low.y;
		e->xhi = b->high.x;
		e->yhi = b->high.y;
	}
	e->blk = 0;
	e->off = 0;
	e->pad = 0;
}

/*
 * Widen acc to cover e.  NaN coordinates are ignored: no operator matches
 * a box with a NaN unless the query has one too, and those searches do not
 * prune (gx_rt_inner_match).
 */
void
gxg_union_add(GxRtEntry *acc, const GxRtEntry *e)
{
	if (e->xlo < acc->xlo)
		acc->xlo = e->xlo;
	if (e->ylo < acc->ylo)
		acc->ylo = e->ylo;
	if (e->xhi > acc->xhi)
		acc->xhi = e->xhi;
	if (e->yhi > acc->yhi)
		acc->yhi = e->yhi;
}

/* The box covering n entries (an empty node gives the inverted box) */
void
gxg_union(const GxRtEntry *entries, int n, GxRtEntry *out)
{
	out->xlo = out->ylo = get_float8_infinity();
	out->xhi = out->yhi = -get_float8_infinity();
	out->blk = 0;
	out->off = 0;
	out->pad = 0;
	for (int i = 0; i < n; i++)
		gxg_union_add(out, &entries[i]);
}

/* Does outer cover inner (NaN coordinates of inner ignored)? */
bool
gxg_covers(const GxRtEntry *outer, const GxRtEntry *inner)
{
	return !(inner->xlo < outer->xlo) && !(inner->ylo < outer->ylo) &&
		!(inner->xhi > outer->xhi) && !(inner->yhi > outer->yhi);
}

/*
 * Cost of one entry test of a node scan, in cost units: the CPU engine's
 * calibrated time per row and instruction (costmodel/, gpuext_calibrate)
 * times the instructions of a box test, converted by gpuext.cost_unit_us.
 */
double
gxg_entry_test_cost(void)
{
	const GxCostParams *cp = gx_cost_params();

	return GXG_TEST_INSNS * cp->cpu_engine_row_ns / 1e3 / Max(cp->cost_unit_us, 1e-3);
}

/*
 * amcostestimate: PostgreSQL's generic estimate (pages and entries visited
 * in proportion to the selectivity), plus the descent: one node scan of a
 * node's entries per level, priced by the cost model's entry test.
 */
static void
gxg_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				 Cost *indexStartupCost, Cost *indexTotalCost,
				 Selectivity *indexSelectivity, double *indexCorrelation,
				 double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	GenericCosts costs;
	double		levels;
	double		fanout = GXG_MAX_NODE_SIZE * 0.7;
	double		descent;

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);

	/* the descent, as btree's: log_fanout(tuples) levels of node scans */
	levels = (index->tuples > 1) ? ceil(log(index->tuples) / log(fanout)) : 1;
	descent = levels * fanout * gxg_entry_test_cost();
	costs.indexStartupCost += descent;
	costs.indexTotalCost += descent;

	*indexStartupCost = costs.indexStartupCost;
	*indexTotalCost = costs.indexTotalCost;
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = costs.indexCorrelation;
	*indexPages = costs.numIndexPages;
}

/* The operator (left, right types) each strategy must have */
static bool
gxg_strategy_types(int strategy, Oid *left, Oid *right)
{
	switch (strategy)
	{
		case GX_RT_OVERLAP:
		case GX_RT_CONTAINS:
		case GX_RT_CONTAINED:
		case GX_RT_SAME:
			*left = BOXOID;
			*right = BOXOID;
			return true;
		case GX_RT_CONTAINS_PT:
			*left = BOXOID;
			*right = POINTOID;
			return true;
		case GX_RT_PT_IN_BOX:
			*left = POINTOID;
			*right = BOXOID;
			return true;
		case GX_RT_PT_SAME:
			*left = POINTOID;
			*right = POINTOID;
			return true;
	}
	return false;
}

/*
 * amvalidate: every operator of the family is a search operator with a
 * known strategy and that strategy's argument types; no support functions;
 * the indexed type is box or point.
 */
static bool
gxg_validate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	char	   *opclassname;
	CatCList   *oprlist;
	CatCList   *proclist;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = NameStr(classform->opcname);

	if (opcintype != BOXOID && opcintype != POINTOID)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("gpuext_gist operator class \"%s\" indexes type %s, not box or point",
						opclassname, format_type_be(opcintype))));
		result = false;
	}

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	for (int i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);
		Oid			left;
		Oid			right;

		if (!gxg_strategy_types(oprform->amopstrategy, &left, &right) ||
			oprform->amoppurpose != AMOP_SEARCH ||
			oprform->amoplefttype != left || oprform->amoprighttype != right)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("gpuext_gist operator family contains invalid operator %s with strategy %d",
							format_operator(oprform->amopopr), oprform->amopstrategy)));
			result = false;
			continue;
		}
		if (!check_amop_signature(oprform->amopopr, BOOLOID, left, right))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("gpuext_gist operator family contains operator %s with wrong signature",
							format_operator(oprform->amopopr))));
			result = false;
		}
	}
	ReleaseCatCacheList(oprlist);

	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));
	if (proclist->n_members > 0)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("gpuext_gist operator family has support functions, it takes none")));
		result = false;
	}
	ReleaseCatCacheList(proclist);

	ReleaseSysCache(classtup);
	return result;
}

/*
 * The access method handler: what gpuext_gist can do and its entry points.
 */
Datum
gpuext_gist_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = GX_RT_NSTRATEGIES;
	amroutine->amsupport = 0;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = false;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = false;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = false;
	amroutine->amoptionalkey = false;
	amroutine->amsearcharray = true;	/* && ANY(array): one batched walk */
	amroutine->amsearchnulls = false;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = false;
	amroutine->amusemaintenanceworkmem = false;
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_PARALLEL_BULKDEL;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = gxg_build;
	amroutine->ambuildempty = gxg_buildempty;
	amroutine->aminsert = gxg_insert;
	amroutine->ambulkdelete = gxg_bulkdelete;
	amroutine->amvacuumcleanup = gxg_vacuumcleanup;
	amroutine->amcanreturn = NULL;
	amroutine->amcostestimate = gxg_costestimate;
	amroutine->amoptions = gxg_options;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = NULL;
	amroutine->amvalidate = gxg_validate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = gxg_beginscan;
	amroutine->amrescan = gxg_rescan;
	amroutine->amgettuple = gxg_gettuple;
	amroutine->amgetbitmap = gxg_getbitmap;
	amroutine->amendscan = gxg_endscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}
