/*-------------------------------------------------------------------------
 * ptree.c
 *		The gpuext_ptree index access method: handler, reloptions, keys,
 *		page helpers and cost estimate.
 *
 * What the index is
 * -----------------
 * A single-column index on int4, int8, date, timestamp or text.  Every key
 * is turned into a normalized key, a byte string whose memcmp order (then
 * length) is the SQL order: fixed-width values are stored big-endian with
 * the sign bit flipped, text as its bytes (so ordering operators are only
 * offered where byte order is their meaning: the pattern operators ~<~ and
 * friends, or <, <=, >=, > under the C collation).  Byte strings are what
 * a generalized prefix tree indexes; the device mirror of a later session
 * builds its prefix tree (KISS-Tree levels for 4-byte keys) from the sorted
 * main structure below, which is the truth on disk.
 *
 * The index has two parts, as an in-memory column store does (seed 003):
 *   - main: a sorted run of posting lists, (key, TID, TID, ...), packed in
 *     leaf pages chained left to right, with a static directory of inner
 *     pages above them (each inner tuple: the first key of a child page
 *     and the child's block).  Main is never changed in place: VACUUM
 *     removes TIDs by a merge.
 *   - delta: an append-only chain of pages of (key, TID) tuples, written by
 *     inserts.  Scans read all of it.  When it reaches delta_pages pages
 *     (a reloption), the inserting backend merges main and delta into a new
 *     main (sorted delta merged with the old run, equal keys joined into one
 *     posting list, duplicate TIDs dropped), written to free pages, and
 *     switches to it in one WAL record, while scans and inserts go on.
 *
 * Page layout (all pages are standard pages, pd_lower/pd_upper valid, so
 * generic WAL and wal_consistency_checking work on them):
 *
 *   block 0, metapage: PtreeMetaData right after the page header (below
 *            pd_lower): generations, root, first leaf, levels, counts,
 *            head and tail of the delta and of the sealed delta.
 *   leaf:    items are PtreeTuples (flags, keylen, ntids, key padded to 2
 *            bytes, ntids ItemPointers in ascending order).  Keys are
 *            non-decreasing along the chain; a long posting list is split
 *            into several tuples of the same key, possibly across pages.
 *            NULL keys (flag PTREE_TUPLE_NULL) sort after every other key.
 *   inner:   PtreeTuples with one item pointer whose block is the child.
 *            The first tuple of the level above holds the first key of
 *            the level's first page.
 *   delta:   PtreeTuples with one TID each, in insertion order.
 *   special: PtreePageOpaqueData (generation, type, level, next block).
 *
 * Generations.  Every page carries the generation it was written for, and
 * the metapage names the generations in use: main's, the delta's, the
 * sealed delta's while a merge folds it into main, and the one a merge is
 * writing.  A merge runs in three steps:
 *   1. seal (one metapage record): the delta becomes the sealed delta,
 *      inserts start a new delta of a fresh generation, and a fresh
 *      generation is taken for the new main;
 *   2. rewrite, with no buffer lock held but one page's at a time: read
 *      main and the sealed delta, plan (possibly on the GPU), write the
 *      new main's pages with the new generation (each page is first
 *      claimed, WAL-logged empty with that generation, then filled in
 *      memory and written as one full-page record);
 *   3. switch (one metapage record): the new main becomes live and the
 *      sealed delta goes; the old main's and the sealed delta's pages go
 *      to the free space map.
 * A crash or an error before the switch leaves the old main and the sealed
 * delta live (readers read them), the half-written pages with a generation
 * that never becomes live, and the sealed delta for the next merge to
 * finish.  A page is reused only if its own generation says it is in use
 * by none of the metapage's, so a stale free space map cannot hand out a
 * live page, and a generation whose pages were freed is never written
 * again.
 *
 * Concurrency.  Merges are serialized by a heavyweight lock, the page lock
 * of the metapage's block (LockPage, as GIN's pending-list cleanup and
 * gpuext_gist's inserts use), held for the whole merge; no buffer lock is
 * held across a device request, a wait for the service or the rewrite.
 * The metapage's buffer lock is taken only for short updates: an insert's
 * append to the delta, a merge's seal and switch.  An insert that finds
 * the delta full only tries the merge lock (ConditionalLockPage): when a
 * merge is running it appends to the new delta and goes on.  VACUUM waits
 * for it; that is a lock wait, which statement_timeout, lock_timeout and
 * pg_cancel_backend end and the deadlock detector sees.  A lock rather
 * than a flag in the metapage: it goes away with the backend that holds it
 * (an error, a crash), so whoever gets it and finds a sealed delta knows
 * that delta's merge failed and finishes it, with no recovery step.
 *
 * A scan reads the metapage, lets it go, and collects all its TIDs from
 * main, the sealed delta and the delta, each page under its own share lock
 * and checked to carry the generation of its part, then returns them with
 * no lock held: it never waits for a merge.  Pages of a generation never
 * change once a switch has replaced it (the delta's only grow at its
 * tail), and a freed page is only ever rewritten with a newer generation,
 * so a page that still carries the expected generation holds what the
 * scan expects; if it carries another, the scan starts again, once it has
 * seen in the metapage a seal or a switch since it read it (without one,
 * no merge replaced the page: it is corrupted, ptree_page_replaced).
 * After three restarts a scan takes the merge lock in share mode for its
 * collection (waiting, cancellably, for a running merge), which keeps
 * merges out; on a standby, where replay takes no such lock, it keeps
 * starting again as long as merges replayed meanwhile replace what it
 * reads.  Every page, tuple and link a reader follows is checked
 * (ptree_validate.c): each chain walk (main's levels, the sealed delta,
 * the delta) starts from the metapage or the page above and is bounded by
 * the index's size.  An
 * entry removed by VACUUM may still be returned by a scan of the older
 * generation, which is harmless for MVCC snapshots (the heap slot can only
 * be reused by a tuple the snapshot does not see), the only ones plain
 * index scans accept.  Entries inserted during a merge are in the new
 * delta, which the switch leaves alone; those VACUUM's bulk delete
 * removes cannot be among them (a dead heap slot is not reused before its
 * index entries are gone).
 *
 * IDENTIFICATION
 *		src/ptree.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/reloptions.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/selfuncs.h"

#include "ptree.h"

PG_FUNCTION_INFO_V1(gpuext_ptree_handler);

static relopt_kind ptree_relopt_kind;

int			ptree_batch_min = 64;
int			ptree_mirror_max_mb = PTREE_MIRROR_MAX_MB_DEFAULT;
int			ptree_mirror_ceiling_mb = 1024;

static const struct config_enum_entry ptree_merge_plan_options[] = {
	{"off", PTREE_MERGE_PLAN_OFF, false},
	{"auto", PTREE_MERGE_PLAN_AUTO, false},
	{"on", PTREE_MERGE_PLAN_ON, false},
	{NULL, 0, false}
};

static void ptreecostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
							  Cost *indexStartupCost, Cost *indexTotalCost,
							  Selectivity *indexSelectivity, double *indexCorrelation,
							  double *indexPages);
static bytea *ptreeoptions(Datum reloptions, bool validate);

/*
 * gpuext.ptree_mirror_max_mb: a role that is not a superuser may not set it
 * above gpuext.ptree_mirror_ceiling for its session, its startup options or
 * ALTER ROLE (its default is always accepted).  Whatever was set, mirrors
 * never take more than the ceiling (ptree_mirror_cap_mb): this only tells
 * the user so.
 */
static bool
check_ptree_mirror_max_mb(int *newval, void **extra, GucSource source)
{
	if (*newval <= ptree_mirror_ceiling_mb || *newval == PTREE_MIRROR_MAX_MB_DEFAULT)
		return true;
	if (source != PGC_S_SESSION && source != PGC_S_CLIENT && source != PGC_S_TEST)
		return true;
	/* superuser() reads the catalog; a parallel worker repeats its leader's */
	if (!IsTransactionState() || IsParallelWorker() || superuser())
		return true;
	GUC_check_errcode(ERRCODE_INSUFFICIENT_PRIVILEGE);
	GUC_check_errmsg("permission denied to set parameter \"gpuext.ptree_mirror_max_mb\" above gpuext.ptree_mirror_ceiling (%d MB)",
					 ptree_mirror_ceiling_mb);
	GUC_check_errhint("A superuser can raise gpuext.ptree_mirror_ceiling.");
	return false;
}

/* The most memory this backend's mirrors may take: the setting, within the ceiling */
int
ptree_mirror_cap_mb(void)
{
	return Min(ptree_mirror_max_mb, ptree_mirror_ceiling_mb);
}

/*
 * Register the reloptions (called from _PG_init, with or without preload:
 * the handler can load the library on its own)
 */
void
gx_ptree_init(void)
{
	ptree_relopt_kind = add_reloption_kind();
	add_int_reloption(ptree_relopt_kind, "delta_pages",
					  "Pages of recent inserts that trigger a merge into the main structure",
					  32, 1, 100000, AccessExclusiveLock);
	add_real_reloption(ptree_relopt_kind, "delta_percent",
					   "Percent of the main structure's pages the delta may reach before a merge, when that is more than delta_pages",
					   0, 0, 100, AccessExclusiveLock);
	add_int_reloption(ptree_relopt_kind, "fillfactor",
					  "Packs every leaf page to this percentage when the main structure is written",
					  100, 10, 100, ShareUpdateExclusiveLock);
	DefineCustomIntVariable("gpuext.ptree_batch_min",
							"= ANY arrays of at least this many elements are looked up in one batch in a gpuext_ptree index's prefix-tree mirror.",
							"0 looks every element up through the directory.",
							&ptree_batch_min, 64, 0, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.ptree_mirror_ceiling",
							"Most memory gpuext_ptree mirrors take in a backend, whatever gpuext.ptree_mirror_max_mb says.",
							"Roles that are not superusers cannot set gpuext.ptree_mirror_max_mb above it.",
							&ptree_mirror_ceiling_mb, 1024, 0, INT_MAX / 2,
							PGC_SUSET, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.ptree_mirror_max_mb",
							"Most memory the prefix-tree mirrors of gpuext_ptree indexes take in a backend, all together.",
							"Older mirrors are dropped to make room; batches against an index whose mirror alone is larger descend the directory once per key; 0 never builds mirrors; never more than gpuext.ptree_mirror_ceiling.",
							&ptree_mirror_max_mb, PTREE_MIRROR_MAX_MB_DEFAULT, 0, INT_MAX / 2,
							PGC_USERSET, GUC_UNIT_MB, check_ptree_mirror_max_mb, NULL, NULL);
	DefineCustomIntVariable("gpuext.ptree_gpu_batch_min",
							"gpuext_ptree batched lookups and merge plans of at least this many keys run on the GPU when there is one.",
							"Smaller ones run on the CPU engine (any size with gpuext.force_offload); 0 never uses the GPU.",
							&ptree_gpu_batch_min, 1024, 0, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpuext.ptree_merge_plan",
							 "When merges of gpuext_ptree deltas of int4, int8, date and timestamp keys are planned (sort, duplicate removal, ranks in main) before main is rewritten.",
							 "auto plans where the backend has the index's mirror already, on always plans (building the mirror), off compares keys, as merges of text keys do; plans of at least gpuext.ptree_gpu_batch_min entries run on the GPU when there is one, others on the CPU engine.",
							 &ptree_merge_plan_mode, PTREE_MERGE_PLAN_AUTO, ptree_merge_plan_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.debug_ptree_merge_delay",
							"Makes every gpuext_ptree merge wait this long before it switches to the new main structure, for testing.",
							"The wait is a device request (the GPU service's, or the CPU engine's) made after the new pages are written; 0 makes none.",
							&ptree_debug_merge_delay, 0, 0, 3600 * 1000,
							PGC_SUSET, GUC_UNIT_MS | GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
}

/*
 * The access method's handler: every IndexAmRoutine field, NULLs included
 */
Datum
gpuext_ptree_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = PTREE_NSTRATEGIES;
	amroutine->amsupport = 0;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = false;	/* the delta is not sorted */
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = false;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = false;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = true;
	amroutine->amsearchnulls = true;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = false;
	amroutine->amusemaintenanceworkmem = true;
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = ptreebuild;
	amroutine->ambuildempty = ptreebuildempty;
	amroutine->aminsert = ptreeinsert;
	amroutine->ambulkdelete = ptreebulkdelete;
	amroutine->amvacuumcleanup = ptreevacuumcleanup;
	amroutine->amcanreturn = NULL;
	amroutine->amcostestimate = ptreecostestimate;
	amroutine->amoptions = ptreeoptions;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = NULL;
	amroutine->amvalidate = ptreevalidate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = ptreebeginscan;
	amroutine->amrescan = ptreerescan;
	amroutine->amgettuple = ptreegettuple;
	amroutine->amgetbitmap = ptreegetbitmap;
	amroutine->amendscan = ptreeendscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}

/*
 * Parse and check the reloptions (bounds are enforced by the reloption
 * machinery)
 */
static bytea *
ptreeoptions(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"delta_pages", RELOPT_TYPE_INT, offsetof(PtreeOptions, delta_pages)},
		{"fillfactor", RELOPT_TYPE_INT, offsetof(PtreeOptions, fillfactor)},
		{"delta_percent", RELOPT_TYPE_REAL, offsetof(PtreeOptions, delta_percent)},
	};

	return (bytea *) build_reloptions(reloptions, validate, ptree_relopt_kind,
									  sizeof(PtreeOptions), tab, lengthof(tab));
}

/*
 * The delta size (pages) at which an insert merges it into main:
 * delta_pages, or delta_percent of main's pages if that is more (a merge
 * rewrites all of main, so a delta that grows with main bounds how often
 * each main page is rewritten per row inserted; but every scan reads the
 * whole delta)
 */
int
ptree_delta_limit(Relation index, const PtreeMetaData *meta)
{
	PtreeOptions *opts = (PtreeOptions *) index->rd_options;
	double		scaled;

	if (opts == NULL)
		return 32;
	scaled = (double) meta->main_pages * opts->delta_percent / 100.0;
	return scaled > opts->delta_pages ? (int) Min(scaled, (double) INT_MAX) : opts->delta_pages;
}

/*
 * How full a merge packs leaf pages (percent)
 */
int
ptree_fillfactor(Relation index)
{
	PtreeOptions *opts = (PtreeOptions *) index->rd_options;

	return opts ? opts->fillfactor : 100;
}

/*
 * Key types the index knows how to normalize
 */
bool
ptree_type_supported(Oid typid)
{
	return typid == INT4OID || typid == INT8OID || typid == DATEOID ||
		typid == TIMESTAMPOID || typid == TEXTOID;
}

/*
 * Store v big-endian with its sign bit flipped, so memcmp orders it
 */
static void
ptree_put_signed(char *buf, uint64 v, int nbytes)
{
	int			i;

	v ^= UINT64CONST(1) << (nbytes * 8 - 1);
	for (i = nbytes - 1; i >= 0; i--)
	{
		buf[i] = (char) (v & 0xff);
		v >>= 8;
	}
}

/*
 * Turn a datum into a normalized key.  Fixed-width keys are written to
 * fixbuf (8 bytes); text keys point into the (detoasted) value, which is
 * allocated in the current memory context.
 */
void
ptree_make_key(Oid typid, Datum value, bool isnull, PtreeKey *key, char *fixbuf)
{
	key->isnull = isnull;
	key->len = 0;
	key->data = fixbuf;
	if (isnull)
		return;
	switch (typid)
	{
		case INT4OID:
		case DATEOID:
			ptree_put_signed(fixbuf, (uint64) (uint32) DatumGetInt32(value), 4);
			key->len = 4;
			break;
		case INT8OID:
		case TIMESTAMPOID:
			ptree_put_signed(fixbuf, (uint64) DatumGetInt64(value), 8);
			key->len = 8;
			break;
		case TEXTOID:
			{
				text	   *t = DatumGetTextPP(value);

				key->data = VARDATA_ANY(t);
				key->len = VARSIZE_ANY_EXHDR(t);
				break;
			}
		default:
			elog(ERROR, "gpuext_ptree: unsupported key type %u", typid);
	}
}

/*
 * Order of two normalized keys: bytes, then length; NULL after everything
 */
int
ptree_key_compare(const PtreeKey *a, const PtreeKey *b)
{
	return ptree_key_cmp(a, b);
}

/*
 * Refuse operator classes and collations whose meaning is not byte order:
 * text indexes need a deterministic collation, and the operator class with
 * <, <=, >=, > needs the C collation
 */
void
ptree_check_opclass(Relation index)
{
	Oid			keytype = index->rd_opcintype[0];
	Oid			collation = index->rd_indcollation[0];
	Oid			ltop;

	if (!ptree_type_supported(keytype))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("type %s is not supported by gpuext_ptree", format_type_be(keytype))));
	if (keytype != TEXTOID)
		return;
	if (!OidIsValid(collation))
		ereport(ERROR,
				(errcode(ERRCODE_INDETERMINATE_COLLATION),
				 errmsg("could not determine which collation to use for gpuext_ptree index \"%s\"",
						RelationGetRelationName(index))));
	if (!get_collation_isdeterministic(collation))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpuext_ptree does not support nondeterministic collations")));
	ltop = get_opfamily_member(index->rd_opfamily[0], TEXTOID, TEXTOID, PTREE_LT);
	if (OidIsValid(ltop) && get_opcode(ltop) == F_TEXT_LT && !lc_collate_is_c(collation))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("operator class \"text_c_ptree_ops\" needs the C collation"),
				 errhint("Use COLLATE \"C\" on the index column, or the default operator class text_ptree_ops (equality and the byte-order operators ~<~, ~<=~, ~>=~, ~>~).")));
}

/*
 * Initialize a page of the given type and generation
 */
void
ptree_init_page(Page page, uint16 type, uint16 level, uint32 gen)
{
	PtreePageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(PtreePageOpaqueData));
	opaque = PtreePageGetOpaque(page);
	opaque->gen = gen;
	opaque->type = type;
	opaque->level = level;
	opaque->next = InvalidBlockNumber;
}

/*
 * Write an empty index's metapage into page
 */
void
ptree_fill_metapage(Page page, Oid keytype)
{
	PtreeMetaData *meta;

	ptree_init_page(page, PTREE_META, 0, 0);
	meta = PtreePageGetMeta(page);
	memset(meta, 0, sizeof(PtreeMetaData));
	meta->magic = PTREE_MAGIC;
	meta->version = PTREE_VERSION;
	meta->keytype = keytype;
	meta->gen = 0;
	meta->delta_gen = 1;
	meta->max_gen = 1;
	meta->root = InvalidBlockNumber;
	meta->first_leaf = InvalidBlockNumber;
	meta->levels = 0;
	meta->delta_head = InvalidBlockNumber;
	meta->delta_tail = InvalidBlockNumber;
	meta->sealed_head = InvalidBlockNumber;
	meta->sealed_tail = InvalidBlockNumber;
	/* keep the metadata below pd_lower, so generic WAL copies it */
	((PageHeader) page)->pd_lower = ((char *) meta + sizeof(PtreeMetaData)) - (char *) page;
}

/*
 * Does this page belong to generation gen?
 */
bool
ptree_page_is_live(Page page, uint32 gen)
{
	if (PageIsNew(page) ||
		PageGetSpecialSize(page) != MAXALIGN(sizeof(PtreePageOpaqueData)))
		return false;
	return PtreePageGetOpaque(page)->gen == gen;
}

/*
 * Is the page in use by one of the generations the metapage names (main,
 * the delta, the sealed delta, the main a merge writes)?  Pages that are
 * not may be reused.  A NULL meta (an index being created) uses none.
 */
bool
ptree_page_in_use(Page page, const PtreeMetaData *meta)
{
	uint32		gen;

	if (meta == NULL || PageIsNew(page) ||
		PageGetSpecialSize(page) != MAXALIGN(sizeof(PtreePageOpaqueData)))
		return false;
	gen = PtreePageGetOpaque(page)->gen;
	return gen == meta->gen || gen == meta->delta_gen ||
		(BlockNumberIsValid(meta->sealed_head) && gen == meta->sealed_gen) ||
		(meta->merge_gen != 0 && gen == meta->merge_gen);
}

/*
 * The delta chains readers walk, in order: the sealed delta, then the
 * delta.  *chain starts at 0; sets the head and generation of the next
 * chain that is not empty and returns true, or false when none is left.
 * The chain's walk starts from the metapage: *from (the block that links
 * to *blkno) and *steps (pages read on the chain), which readers pass to
 * ptree_check_link, are reset.
 */
bool
ptree_next_delta(const PtreeMetaData *meta, int *chain, BlockNumber *blkno, uint32 *gen,
				 BlockNumber *from, uint32 *steps)
{
	while (*chain < 2)
	{
		bool		sealed = (*chain)++ == 0;
		BlockNumber head = sealed ? meta->sealed_head : meta->delta_head;

		if (BlockNumberIsValid(head))
		{
			*blkno = head;
			*gen = sealed ? meta->sealed_gen : meta->delta_gen;
			*from = PTREE_METAPAGE_BLKNO;
			*steps = 0;
			return true;
		}
	}
	return false;
}

/*
 * A copy of the metapage's contents, read under a short share lock and
 * checked there (ptree_meta_check)
 */
void
ptree_read_meta(Relation index, PtreeMetaData *meta)
{
	Buffer		metabuf = ReadBuffer(index, PTREE_METAPAGE_BLKNO);

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	*meta = *ptree_meta_check(index, BufferGetPage(metabuf));
	UnlockReleaseBuffer(metabuf);
}

/*
 * The merge lock: the heavyweight lock of the metapage's block.  A merge
 * holds it exclusively; VACUUM waits for it, and so do scans that keep
 * merges out (share mode).  Waiting for it is a lock wait, which query
 * cancel and the timeouts end.
 */
void
ptree_lock_merges(Relation index, LOCKMODE mode)
{
	LockPage(index, PTREE_METAPAGE_BLKNO, mode);
}

/*
 * Take the merge lock exclusively if no one holds it; false if another
 * merge (or a scan keeping merges out) does
 */
bool
ptree_try_lock_merges(Relation index)
{
	return ConditionalLockPage(index, PTREE_METAPAGE_BLKNO, ExclusiveLock);
}

/*
 * Let the merge lock go
 */
void
ptree_unlock_merges(Relation index, LOCKMODE mode)
{
	UnlockPage(index, PTREE_METAPAGE_BLKNO, mode);
}

/*
 * Is this page a leaf of the live index of generation gen?
 */
bool
ptree_page_is_live_leaf(Page page, uint32 gen)
{
	return ptree_page_is_live(page, gen) && PtreePageGetOpaque(page)->type == PTREE_LEAF;
}

/*
 * ERROR unless block blkno (its image page) is a sound leaf of the live
 * index of generation gen (ptree_page_check): readers that hold the
 * structure still find corruption
 */
void
ptree_check_live_leaf(Relation index, Page page, BlockNumber blkno, uint32 gen)
{
	ptree_page_check(index, page, blkno, gen, PTREE_LEAF, 0);
}

/*
 * An exclusively locked page to write: a free page that no generation of
 * meta uses (ptree_page_in_use), or a new block.  Free pages someone else
 * has locked are passed over (the free space map may hand one page to two
 * backends): the caller never waits for a page here.  The caller
 * initializes the page.
 */
Buffer
ptree_new_buffer(Relation index, const PtreeMetaData *meta)
{
	Buffer		buf;
	bool		needLock;

	for (;;)
	{
		BlockNumber blkno = GetFreeIndexPage(index);

		if (blkno == InvalidBlockNumber)
			break;
		if (blkno == PTREE_METAPAGE_BLKNO)
			continue;
		buf = ReadBuffer(index, blkno);
		if (ConditionalLockBuffer(buf))
		{
			if (!ptree_page_in_use(BufferGetPage(buf), meta))
				return buf;
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		}
		ReleaseBuffer(buf);
	}

	needLock = !RELATION_IS_LOCAL(index);
	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBuffer(index, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buf;
}

/*
 * Build a tuple of key and TIDs (palloc'd); ERROR for keys that are too long
 */
PtreeTuple
ptree_form_tuple(const PtreeKey *key, ItemPointer tids, int ntids, Size *size)
{
	PtreeTuple	tup;
	Size		sz;
	uint32		len = key->isnull ? 0 : key->len;

	if (len > PTREE_MAX_KEY)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index key of %u bytes exceeds the gpuext_ptree maximum of %d bytes",
						len, PTREE_MAX_KEY)));
	sz = PtreeTupleSize(len, ntids);
	tup = (PtreeTuple) palloc0(sz);
	tup->flags = key->isnull ? PTREE_TUPLE_NULL : 0;
	tup->keylen = len;
	tup->ntids = ntids;
	if (len > 0)
		memcpy(tup->data, key->data, len);
	if (ntids > 0)
		memcpy(PtreeTupleTids(tup), tids, ntids * sizeof(ItemPointerData));
	*size = sz;
	return tup;
}

/*
 * The key of a stored tuple
 */
void
ptree_tuple_key(PtreeTuple tup, PtreeKey *key)
{
	key->isnull = (tup->flags & PTREE_TUPLE_NULL) != 0;
	key->len = tup->keylen;
	key->data = tup->data;
}

/*
 * Cost of a scan: PostgreSQL's generic index cost (the directory descent
 * and the leaf pages and tuples the selectivity implies, in the planner's
 * own units, so it competes fairly with btree), plus reading the whole
 * delta, which every scan does
 */
static void
ptreecostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				  Cost *indexStartupCost, Cost *indexTotalCost,
				  Selectivity *indexSelectivity, double *indexCorrelation,
				  double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	GenericCosts costs;
	Relation	rel;
	PtreeMetaData meta;
	uint32		levels;
	uint32		delta_pages;
	uint64		delta_tids;
	double		descent;
	double		delta_cost;

	rel = index_open(index->indexoid, AccessShareLock);
	ptree_read_meta(rel, &meta);
	index_close(rel, AccessShareLock);
	levels = meta.levels;
	/* a merge's sealed delta is read by every scan too, until its switch */
	delta_pages = meta.delta_pages + (BlockNumberIsValid(meta.sealed_head) ? meta.sealed_pages : 0);
	delta_tids = meta.delta_tids + (BlockNumberIsValid(meta.sealed_head) ? meta.sealed_tids : 0);

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);

	/* the descent: one comparison per directory level, as btree charges */
	descent = (levels + 1) * 50.0 * cpu_operator_cost;
	/* the delta: every page read, every tuple compared, on every scan */
	delta_cost = delta_pages * seq_page_cost +
		delta_tids * (cpu_index_tuple_cost + cpu_operator_cost * Max(1, list_length(path->indexclauses)));

	*indexStartupCost = costs.indexStartupCost + descent + delta_cost;
	*indexTotalCost = costs.indexTotalCost + descent + delta_cost;
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = 0.0;	/* TIDs come back sorted by block, not by key */
	*indexPages = costs.numIndexPages + delta_pages;
}
