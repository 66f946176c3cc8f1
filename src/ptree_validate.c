/*-------------------------------------------------------------------------
 * ptree_validate.c
 *		gpuext_ptree: operator class validator, and the checked reads of
 *		the index's pages.
 *
 * The access method compares normalized keys itself, so an operator class
 * is valid only if each of its operators is the one whose meaning is that
 * byte order: the type's own <, <=, =, >=, > (int8 also with int4 and int2
 * on the right; for text: = and either the
 * pattern operators or the collation-aware ones, which the build accepts
 * only under the C collation).
 *
 * Every reader of the index (scans, batched lookups and the mirror build,
 * merges and VACUUM, inserts, the checker) reads the metapage, pages of
 * main, the sealed delta and the delta (each against its own generation),
 * tuples and TIDs through the checks below and their inline parts in
 * ptree.h (ptree_page_ok, ptree_page_tuple, ptree_page_key,
 * ptree_tuple_tids, ptree_check_link, ptree_check_order), cheaply: the
 * page header and special space once per page read, the line pointer and
 * the tuple's sizes per tuple used, TIDs where they are handed on, keys in
 * order where a walk depends on it, and every block number followed (in
 * range, and no chain longer than the index, so that a loop is an error
 * rather than a hang).  The common case is decided inline; the functions
 * here report what is wrong, as an ERROR with ERRCODE_INDEX_CORRUPTED
 * naming the index, the block and the item.  What they do not find: keys
 * or TIDs changed into other valid ones (the checker's heapallindexed
 * finds rows the index misses).
 *
 * IDENTIFICATION
 *		src/ptree_validate.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "access/itup.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "indexopen.h"
#include "ptree.h"

/*
 * Is proc the function of strategy comparing lefttype with righttype?
 */
static bool
ptree_operator_ok(Oid lefttype, Oid righttype, int strategy, Oid proc)
{
	static const struct
	{
		Oid			left;
		Oid			right;
		Oid			procs[PTREE_NSTRATEGIES];
	}			known[] = {
		{INT4OID, INT4OID, {F_INT4LT, F_INT4LE, F_INT4EQ, F_INT4GE, F_INT4GT}},
		{INT8OID, INT8OID, {F_INT8LT, F_INT8LE, F_INT8EQ, F_INT8GE, F_INT8GT}},
		{INT8OID, INT4OID, {F_INT84LT, F_INT84LE, F_INT84EQ, F_INT84GE, F_INT84GT}},
		{INT8OID, INT2OID, {F_INT82LT, F_INT82LE, F_INT82EQ, F_INT82GE, F_INT82GT}},
		{DATEOID, DATEOID, {F_DATE_LT, F_DATE_LE, F_DATE_EQ, F_DATE_GE, F_DATE_GT}},
		{TIMESTAMPOID, TIMESTAMPOID, {F_TIMESTAMP_LT, F_TIMESTAMP_LE, F_TIMESTAMP_EQ, F_TIMESTAMP_GE, F_TIMESTAMP_GT}},
		{TEXTOID, TEXTOID, {F_TEXT_LT, F_TEXT_LE, F_TEXTEQ, F_TEXT_GE, F_TEXT_GT}},
		{TEXTOID, TEXTOID, {F_TEXT_PATTERN_LT, F_TEXT_PATTERN_LE, F_TEXTEQ, F_TEXT_PATTERN_GE, F_TEXT_PATTERN_GT}},
	};
	int			i;

	for (i = 0; i < lengthof(known); i++)
		if (known[i].left == lefttype && known[i].right == righttype &&
			known[i].procs[strategy - 1] == proc)
			return true;
	return false;
}

/*
 * amvalidate
 */
bool
ptreevalidate(Oid opclassoid)
{
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	char	   *opclassname;
	CatCList   *oprlist;
	CatCList   *proclist;
	bool		result = true;
	int			i;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = NameStr(classform->opcname);

	if (!ptree_type_supported(opcintype))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("gpuext_ptree operator class \"%s\" is for type %s, which the access method does not support",
						opclassname, format_type_be(opcintype))));
		result = false;
	}

	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));
	if (proclist->n_members > 0)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("gpuext_ptree operator family of \"%s\" has support functions, which the access method does not use",
						opclassname)));
		result = false;
	}
	ReleaseSysCacheList(proclist);

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	for (i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);

		if (oprform->amopstrategy < 1 || oprform->amopstrategy > PTREE_NSTRATEGIES ||
			oprform->amoppurpose != AMOP_SEARCH ||
			!check_amop_signature(oprform->amopopr, BOOLOID,
								  oprform->amoplefttype, oprform->amoprighttype) ||
			!ptree_operator_ok(oprform->amoplefttype, oprform->amoprighttype, oprform->amopstrategy,
							   get_opcode(oprform->amopopr)))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("gpuext_ptree operator family of \"%s\" contains operator %s with strategy %d, which is not the byte-order comparison of its type",
							opclassname, format_operator(oprform->amopopr),
							oprform->amopstrategy)));
			result = false;
		}
	}
	ReleaseSysCacheList(oprlist);
	ReleaseSysCache(classtup);
	return result;
}

/*
 * ERROR: the index is corrupted at block blkno (detail: what is wrong)
 */
#define PTREE_CORRUPT(index, blkno, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INDEX_CORRUPTED), \
			 errmsg("gpuext_ptree index \"%s\" is corrupted at block %u", \
					RelationGetRelationName(index), (blkno)), \
			 errdetail(__VA_ARGS__)))

/* ERROR: the index is corrupted at item off of block blkno */
#define PTREE_CORRUPT_ITEM(index, blkno, off, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INDEX_CORRUPTED), \
			 errmsg("gpuext_ptree index \"%s\" is corrupted at block %u, item %u", \
					RelationGetRelationName(index), (blkno), (off)), \
			 errdetail(__VA_ARGS__)))

/*
 * ERROR unless the page header is that of a standard page with a ptree
 * special space whose item array and free space lie within it
 */
static void
ptree_check_header(Relation index, Page page, BlockNumber blkno)
{
	PageHeader	ph = (PageHeader) page;

	if (PageIsNew(page))
		PTREE_CORRUPT(index, blkno, "The page is not initialized.");
	if (PageGetPageSize(page) != BLCKSZ ||
		ph->pd_special != BLCKSZ - MAXALIGN(sizeof(PtreePageOpaqueData)) ||
		ph->pd_lower < SizeOfPageHeaderData || ph->pd_lower > ph->pd_upper ||
		ph->pd_upper > ph->pd_special)
		PTREE_CORRUPT(index, blkno,
					  "The page header is not a gpuext_ptree page's (pd_lower %u, pd_upper %u, pd_special %u).",
					  ph->pd_lower, ph->pd_upper, ph->pd_special);
}

/*
 * The metapage's contents, checked: the page, magic, version, key type,
 * generations (none above the highest handed out; main, the delta and the
 * sealed delta each their own), and block numbers that are either all
 * invalid or none the metapage's own, for main, the delta and the sealed
 * delta (whether they lie within the index is checked where they are
 * followed: ptree_check_link).  The caller holds the metapage's buffer
 * lock.
 */
PtreeMetaData *
ptree_meta_check(Relation index, Page metapage)
{
	PtreeMetaData *meta = PtreePageGetMeta(metapage);
	PtreePageOpaque opaque;

	ptree_check_header(index, metapage, PTREE_METAPAGE_BLKNO);
	opaque = PtreePageGetOpaque(metapage);
	if (opaque->type != PTREE_META || meta->magic != PTREE_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a gpuext_ptree index", RelationGetRelationName(index)),
				 errdetail("Block %u has type %u and magic %08x.", PTREE_METAPAGE_BLKNO,
						   opaque->type, meta->magic)));
	if (meta->version != PTREE_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("gpuext_ptree index \"%s\" has version %u, expected %u",
						RelationGetRelationName(index), meta->version, PTREE_VERSION),
				 errdetail("The metapage (block %u) is of another version of the access method.",
						   PTREE_METAPAGE_BLKNO),
				 errhint("REINDEX the index.")));
	if (meta->keytype != index->rd_opcintype[0])
		PTREE_CORRUPT(index, PTREE_METAPAGE_BLKNO,
					  "The metapage's key type %u is not the operator class's %u.",
					  meta->keytype, index->rd_opcintype[0]);
	if (meta->gen > meta->max_gen || meta->delta_gen > meta->max_gen ||
		meta->sealed_gen > meta->max_gen || meta->merge_gen > meta->max_gen)
		PTREE_CORRUPT(index, PTREE_METAPAGE_BLKNO,
					  "Generations %u (main), %u (delta), %u (sealed delta), %u (merge) are not all at most the highest %u.",
					  meta->gen, meta->delta_gen, meta->sealed_gen, meta->merge_gen, meta->max_gen);
	if (meta->delta_gen == meta->gen ||
		(BlockNumberIsValid(meta->sealed_head) &&
		 (meta->sealed_gen == meta->gen || meta->sealed_gen == meta->delta_gen)))
		PTREE_CORRUPT(index, PTREE_METAPAGE_BLKNO,
					  "Main, the delta and the sealed delta share a generation (%u, %u, %u).",
					  meta->gen, meta->delta_gen, meta->sealed_gen);
	if ((meta->levels == 0) != !BlockNumberIsValid(meta->root) ||
		(meta->levels == 0) != !BlockNumberIsValid(meta->first_leaf) ||
		meta->root == PTREE_METAPAGE_BLKNO || meta->first_leaf == PTREE_METAPAGE_BLKNO)
		PTREE_CORRUPT(index, PTREE_METAPAGE_BLKNO,
					  "The metapage has %u levels, root %u and first leaf %u.",
					  meta->levels, meta->root, meta->first_leaf);
	if ((meta->delta_pages == 0) != !BlockNumberIsValid(meta->delta_head) ||
		(meta->delta_pages == 0) != !BlockNumberIsValid(meta->delta_tail) ||
		meta->delta_head == PTREE_METAPAGE_BLKNO || meta->delta_tail == PTREE_METAPAGE_BLKNO)
		PTREE_CORRUPT(index, PTREE_METAPAGE_BLKNO,
					  "The metapage has %u delta pages, head %u and tail %u.",
					  meta->delta_pages, meta->delta_head, meta->delta_tail);
	if ((meta->sealed_pages == 0) != !BlockNumberIsValid(meta->sealed_head) ||
		(meta->sealed_pages == 0) != !BlockNumberIsValid(meta->sealed_tail) ||
		meta->sealed_head == PTREE_METAPAGE_BLKNO || meta->sealed_tail == PTREE_METAPAGE_BLKNO)
		PTREE_CORRUPT(index, PTREE_METAPAGE_BLKNO,
					  "The metapage has %u sealed delta pages, head %u and tail %u.",
					  meta->sealed_pages, meta->sealed_head, meta->sealed_tail);
	return meta;
}

/*
 * ptree_check_link (ptree.h) when its quick test fails: the index's block
 * count read again, then ERROR unless block 'to', which block 'from' (the
 * metapage, or a page) links to, is a page of the index other than the
 * metapage.  With steps, the count of pages read on the chain so far
 * (counting 'to'), it must also be below the index's number of blocks: a
 * chain that visits more pages than the index has loops.
 */
void
ptree_check_link_slow(Relation index, BlockNumber from, BlockNumber to, uint32 *steps)
{
	BlockNumber nblocks;

	if (to == PTREE_METAPAGE_BLKNO)
		PTREE_CORRUPT(index, from, "It links to the metapage.");
	nblocks = gx_index_nblocks(index, to);
	if (to >= nblocks)
		PTREE_CORRUPT(index, from, "It links to block %u, but the index has %u blocks.",
					  to, nblocks);
	if (steps == NULL)
		return;
	(*steps)++;
	if (*steps >= gx_index_nblocks(index, *steps))
		PTREE_CORRUPT(index, from,
					  "The chain of pages through it is longer than the index's %u blocks: it loops back to block %u.",
					  gx_index_nblocks(index, *steps), to);
}

/*
 * ptree_page_ok (ptree.h) when its quick test fails: false (nothing else
 * checked) when the page carries another generation, which a concurrent
 * merge may have given it since the reader read the metapage; ERROR for a
 * damaged header, a page of the reader's generation of another type or
 * level, or one without items (no page of the index is written empty).
 */
bool
ptree_page_ok_slow(Relation index, Page page, BlockNumber blkno, uint32 gen, uint16 type,
				   uint16 level)
{
	PtreePageOpaque opaque;

	ptree_check_header(index, page, blkno);
	opaque = PtreePageGetOpaque(page);
	if (opaque->gen != gen)
		return false;
	if (opaque->type != type || opaque->level != level)
		PTREE_CORRUPT(index, blkno, "The page has type %u level %u, expected type %u level %u.",
					  opaque->type, opaque->level, type, level);
	if (PageGetMaxOffsetNumber(page) < FirstOffsetNumber)
		PTREE_CORRUPT(index, blkno, "The page has no items.");
	return true;
}

/*
 * As ptree_page_ok, for readers that hold the structure of generation gen
 * (no merge can replace it under them: they hold the merge lock, or the
 * metapage's buffer lock for the delta's tail): a page of another
 * generation is corruption too
 */
void
ptree_page_check(Relation index, Page page, BlockNumber blkno, uint32 gen, uint16 type,
				 uint16 level)
{
	if (!ptree_page_ok(index, page, blkno, gen, type, level))
		PTREE_CORRUPT(index, blkno,
					  "The page belongs to generation %u, not to the live generation %u.",
					  PtreePageGetOpaque(page)->gen, gen);
}

/*
 * A reader that does not keep merges out found block blkno, which the
 * structure of generation gen that it read in meta links to, carrying
 * generation pagegen instead (ptree_page_ok was false).  Only a merge's
 * switch frees the pages of a generation the metapage names, and only a
 * later merge rewrites them; a seal raises max_gen and a switch counts
 * one more merge.  So unless the metapage shows one of them since meta
 * was read, no merge replaced the page: it is corrupted, ERROR.  Otherwise
 * the reader starts again.  This holds on a standby too, where readers
 * never keep merges out.  The caller holds no buffer lock.
 */
void
ptree_page_replaced(Relation index, const PtreeMetaData *meta, BlockNumber blkno,
					uint32 pagegen, uint32 gen)
{
	PtreeMetaData now;

	ptree_read_meta(index, &now);
	if (now.max_gen == meta->max_gen && now.merges == meta->merges)
		PTREE_CORRUPT(index, blkno,
					  "The page belongs to generation %u, not to generation %u, and no merge has replaced that generation.",
					  pagegen, gen);
}

/*
 * ERROR for tuple off of block blkno, which ptree_page_tuple found wrong:
 * says what is (out of line, so that the check itself stays small)
 */
void
ptree_tuple_corrupt(Relation index, Page page, BlockNumber blkno, OffsetNumber off)
{
	PageHeader	ph = (PageHeader) page;
	ItemId		iid = PageGetItemId(page, off);
	PtreeTuple	tup;

	if (!ItemIdIsNormal(iid) || ItemIdGetOffset(iid) < ph->pd_upper ||
		ItemIdGetOffset(iid) != MAXALIGN(ItemIdGetOffset(iid)) ||
		ItemIdGetLength(iid) < PTREE_TUPLE_HDR ||
		ItemIdGetOffset(iid) + ItemIdGetLength(iid) > ph->pd_special)
		PTREE_CORRUPT_ITEM(index, blkno, off,
						   "The line pointer (flags %u, offset %u, length %u) does not lead to a tuple within the page.",
						   ItemIdGetFlags(iid), ItemIdGetOffset(iid), ItemIdGetLength(iid));
	tup = (PtreeTuple) PageGetItem(page, iid);
	if (tup->keylen > PTREE_MAX_KEY || tup->ntids == 0 ||
		PtreeTupleSize(tup->keylen, tup->ntids) != ItemIdGetLength(iid))
		PTREE_CORRUPT_ITEM(index, blkno, off,
						   "The tuple has %u key bytes and %u TIDs in an item of %u bytes.",
						   tup->keylen, tup->ntids, ItemIdGetLength(iid));
	if ((tup->flags & ~PTREE_TUPLE_NULL) != 0)
		PTREE_CORRUPT_ITEM(index, blkno, off, "The tuple has unknown flags %04x.", tup->flags);
	if (tup->ntids != 1 && PtreePageGetOpaque(page)->type != PTREE_LEAF)
		PTREE_CORRUPT_ITEM(index, blkno, off, "The %s tuple has %u TIDs.",
						   PtreePageGetOpaque(page)->type == PTREE_DELTA ? "delta" : "directory",
						   tup->ntids);
	PTREE_CORRUPT_ITEM(index, blkno, off, "The tuple is NULL with a key of %u bytes.", tup->keylen);
}

/*
 * ERROR for tuple off of block blkno, a TID of which ptree_tuple_tids
 * found not to be a heap TID: says which
 */
void
ptree_tids_corrupt(Relation index, PtreeTuple tup, BlockNumber blkno, OffsetNumber off)
{
	ItemPointer tids = PtreeTupleTids(tup);
	int			i;

	for (i = 0; i < tup->ntids; i++)
	{
		OffsetNumber toff = ItemPointerGetOffsetNumberNoCheck(&tids[i]);

		if (toff < FirstOffsetNumber || toff > MaxHeapTuplesPerPage)
			PTREE_CORRUPT_ITEM(index, blkno, off, "TID %d of the tuple is (%u,%u).", i + 1,
							   ItemPointerGetBlockNumberNoCheck(&tids[i]), toff);
	}
	elog(ERROR, "gpuext_ptree: no bad TID in item %u of block %u", off, blkno);
}

/*
 * ERROR: the key of item off of block blkno sorts before the key read
 * before it on the leaf chain (ptree_check_order)
 */
void
ptree_order_corrupt(Relation index, BlockNumber blkno, OffsetNumber off)
{
	PTREE_CORRUPT_ITEM(index, blkno, off, "Its key sorts before the key before it.");
}
