/*-------------------------------------------------------------------------
 * colcache.c
 *		The column cache: a relation's fixed-width columns of its
 *		all-visible pages, kept as arrays (cuda/gx_colcache.h) so that a
 *		scan reads those instead of the heap pages, and the rules that
 *		keep it MVCC-exact (docs/architecture.md, "Column cache").
 *
 * gpuext_cache_enable builds a cache under ShareRowExclusiveLock (no
 * writer in flight, none can start) from the pages that are all-visible,
 * and installs two triggers that count writes in shared memory: a
 * statement-level BEFORE trigger on INSERT, UPDATE, DELETE and TRUNCATE,
 * ENABLE ALWAYS (fires whatever session_replication_role says), and a
 * row-level BEFORE trigger on INSERT, UPDATE and DELETE, ENABLE REPLICA
 * (fires only where session_replication_role = replica: logical
 * replication's apply workers fire row triggers but no statement
 * triggers).  A scan uses the cache only if, after its snapshot was
 * taken, the count is the one the cache was built at, the relation's file
 * is the one cached, and both triggers are the very catalog rows the
 * build installed (same xmin: ALTER TABLE DISABLE/ENABLE TRIGGER writes a
 * new row version) with their firing mode; then each cached page is taken
 * only while the visibility map still says all-visible.  Everything else
 * reads heap pages as before.
 *
 * Where it lives: the image is a DSM segment pinned for the life of the
 * server (the CPU engine reads it in place; the GPU copy is the next
 * step), named by an entry of a small registry in the main shared memory.
 * A crash restart resets both.  gpuext.cache_memory_limit caps the
 * images' total size.
 *
 * IDENTIFICATION
 *		src/colcache.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/catalog.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "parser/parse_func.h"
#include "tcop/utility.h"
#include "storage/bufmgr.h"
#include "storage/dsm.h"
#include "storage/lmgr.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "codegen.h"
#include "colcache.h"
#include "cost.h"
#include "quota.h"

#define CC_MAX_RELS			64
#define CC_STMT_TRIGGER		"gpuext_cache_stmt"
#define CC_ROW_TRIGGER		"gpuext_cache_row"
#define CC_STMT_TGTYPE		(TRIGGER_TYPE_BEFORE | TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE | \
							 TRIGGER_TYPE_DELETE | TRIGGER_TYPE_TRUNCATE)
#define CC_ROW_TGTYPE		(TRIGGER_TYPE_ROW | TRIGGER_TYPE_BEFORE | TRIGGER_TYPE_INSERT | \
							 TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE)

/* a registry entry: one cached relation */
typedef struct CcEntry
{
	bool		used;
	Oid			dbid;
	Oid			relid;
	Oid			relfilenode;	/* the file cached: TRUNCATE, VACUUM FULL,
								 * CLUSTER and rewrites give a new one */
	Oid			stmt_trigger;
	TransactionId stmt_trigger_xmin;
	ItemPointerData stmt_trigger_tid;	/* the row version: an ALTER in the
										 * creating transaction keeps xmin */
	Oid			row_trigger;
	TransactionId row_trigger_xmin;
	ItemPointerData row_trigger_tid;
	pg_atomic_uint64 changes;	/* bumped by the triggers */
	uint64		built_changes;	/* 'changes' when the image was built */
	uint64		generation;
	dsm_handle	handle;
	uint64		bytes;
	uint32		npages;
	uint32		nblocks;
	uint64		nrows;
	int			ncols;
	int16		attnums[GX_CC_MAX_COLS];
	Oid			atttypids[GX_CC_MAX_COLS];
	TimestampTz built_at;
} CcEntry;

typedef struct CcShared
{
	LWLock	   *lock;
	uint64		next_generation;
	CcEntry		entries[CC_MAX_RELS];
} CcShared;

static CcShared *cc_shared = NULL;

int			gpuext_cache_memory_limit_mb = 1024;
bool		gpuext_enable_cache = true;
bool		gpuext_cache_gpu = false;

/*
 * generations published by this transaction, with the subtransaction that
 * published each: dropped if that subtransaction or the transaction aborts
 */
static uint64 cc_xact_generations[CC_MAX_RELS];
static SubTransactionId cc_xact_subids[CC_MAX_RELS];
static int	cc_xact_ngenerations = 0;
static bool cc_xact_callback_registered = false;

/* per registry slot, the generation whose image this backend checked (gx_colcache_image_ok) */
static uint64 cc_checked[CC_MAX_RELS];

PG_FUNCTION_INFO_V1(gpuext_cache_enable);
PG_FUNCTION_INFO_V1(gpuext_cache_drop);
PG_FUNCTION_INFO_V1(gpuext_caches);
PG_FUNCTION_INFO_V1(gpuext_cache_invalidate);
PG_FUNCTION_INFO_V1(gpuext_cache_forget);

static ProcessUtility_hook_type prev_process_utility = NULL;

static CcEntry *find_entry(Oid relid);
static void free_entry(CcEntry *e);

/* Count a write to relation relid, if it has a cache (the triggers' work). */
static void
count_write(Oid relid)
{
	CcEntry    *e;

	LWLockAcquire(cc_shared->lock, LW_SHARED);
	e = find_entry(relid);
	if (e)
		pg_atomic_fetch_add_u64(&e->changes, 1);
	LWLockRelease(cc_shared->lock);
}

/* Count a write to relation rv (if it has a cache), as the triggers do. */
static void
bump_rangevar(RangeVar *rv)
{
	Oid			relid = rv ? RangeVarGetRelid(rv, NoLock, true) : InvalidOid;

	if (OidIsValid(relid))
		count_write(relid);
}

/* Free the cache entry of relid, if there is one; returns whether there was. */
static bool
forget_entry(Oid relid)
{
	CcEntry    *e;

	LWLockAcquire(cc_shared->lock, LW_EXCLUSIVE);
	e = find_entry(relid);
	if (e)
		free_entry(e);
	LWLockRelease(cc_shared->lock);
	return e != NULL;
}

/*
 * ProcessUtility hook: a table that becomes (or stops being) an
 * inheritance child or a partition stops its cache.  While it is one,
 * writes through the parent fire the parent's statement triggers, not its
 * own; the scan refuses a child's cache, and this count (non-
 * transactional, before the command runs) keeps a table attached,
 * written through its parent and detached again from looking unchanged.
 */
static void
cc_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
				   ProcessUtilityContext context, ParamListInfo params,
				   QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *node = pstmt->utilityStmt;

	if (cc_shared != NULL && IsA(node, AlterTableStmt))
	{
		AlterTableStmt *stmt = (AlterTableStmt *) node;
		ListCell   *lc;

		foreach(lc, stmt->cmds)
		{
			AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

			if (cmd->subtype == AT_AddInherit || cmd->subtype == AT_DropInherit)
				bump_rangevar(stmt->relation);
			else if (cmd->subtype == AT_AttachPartition || cmd->subtype == AT_DetachPartition ||
					 cmd->subtype == AT_DetachPartitionFinalize)
				bump_rangevar(((PartitionCmd *) cmd->def)->name);
		}
	}
	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context, params, queryEnv,
							 dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv,
								dest, qc);
}

/* Install the ProcessUtility hook; called from _PG_init when preloaded. */
void
gx_colcache_init(void)
{
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = cc_process_utility;
}

/* Shared memory of the registry; called from shmem_request_hook. */
void
gx_colcache_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(sizeof(CcShared)));
	RequestNamedLWLockTranche("gpuext_colcache", 1);
}

/* Create or attach the registry; called from shmem_startup_hook (AddinShmemInitLock held). */
void
gx_colcache_shmem_startup(void)
{
	bool		found;

	cc_shared = ShmemInitStruct("gpuext column cache", sizeof(CcShared), &found);
	if (!found)
	{
		memset(cc_shared, 0, sizeof(CcShared));
		cc_shared->lock = &(GetNamedLWLockTranche("gpuext_colcache"))->lock;
		cc_shared->next_generation = 1;
		for (int i = 0; i < CC_MAX_RELS; i++)
			pg_atomic_init_u64(&cc_shared->entries[i].changes, 0);
	}
}

/* The entry of (this database, relid), or NULL; the registry lock is held. */
static CcEntry *
find_entry(Oid relid)
{
	for (int i = 0; i < CC_MAX_RELS; i++)
	{
		CcEntry    *e = &cc_shared->entries[i];

		if (e->used && e->dbid == MyDatabaseId && e->relid == relid)
			return e;
	}
	return NULL;
}

/* Forget an entry and let its image go; the registry lock is held exclusively. */
static void
free_entry(CcEntry *e)
{
	if (e->used)
		dsm_unpin_segment(e->handle);
	e->used = false;
	e->relid = InvalidOid;
	e->generation = 0;
}

/*
 * Free the caches of databases and relations that no longer exist.  DROP
 * DATABASE fires no sql_drop event trigger and nobody can connect there to
 * drop them; a table dropped while event triggers do not fire
 * (session_replication_role = replica, the event trigger disabled, the
 * extension dropped) is not forgotten either.  Without this they would
 * keep their memory (counted against gpuext.cache_memory_limit) and
 * registry slots until a restart.  A relation is looked up only under a
 * lock taken without waiting (a transaction that creates or drops it
 * holds AccessExclusiveLock: it is left alone).  The catalog is read
 * outside the registry lock; an entry is freed only if it still has the
 * generation seen.
 */
static void
forget_dropped(void)
{
	Oid			dbids[CC_MAX_RELS];
	Oid			relids[CC_MAX_RELS];
	uint64		gens[CC_MAX_RELS];
	int			n = 0;
	int			ngone = 0;

	LWLockAcquire(cc_shared->lock, LW_SHARED);
	for (int i = 0; i < CC_MAX_RELS; i++)
	{
		CcEntry    *e = &cc_shared->entries[i];

		if (e->used)
		{
			dbids[n] = e->dbid;
			relids[n] = e->relid;
			gens[n++] = e->generation;
		}
	}
	LWLockRelease(cc_shared->lock);
	for (int i = 0; i < n; i++)
	{
		bool		gone = false;

		if (dbids[i] != MyDatabaseId)
			gone = !SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(dbids[i]));
		else if (ConditionalLockRelationOid(relids[i], AccessShareLock))
		{
			gone = !SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relids[i]));
			UnlockRelationOid(relids[i], AccessShareLock);
		}
		if (gone)
			gens[ngone++] = gens[i];
	}
	if (ngone == 0)
		return;
	LWLockAcquire(cc_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < CC_MAX_RELS; i++)
		for (int g = 0; g < ngone; g++)
			if (cc_shared->entries[i].used && cc_shared->entries[i].generation == gens[g])
				free_entry(&cc_shared->entries[i]);
	LWLockRelease(cc_shared->lock);
}

/*
 * Would a cache of 'size' bytes for relid (replacing its own, if it has
 * one) take this database past its share of the registry,
 * gpuext.max_caches_per_database caches and gpuext.cache_memory_per_database
 * bytes?  The registry lock is held (dbname: this database's, read before).  Returns false, with the message in
 * msg (of msglen bytes), when it would.
 */
static bool
within_database_share(Relation rel, const char *dbname, uint64 size, char *msg, int msglen)
{
	int			count = 0;
	uint64		bytes = 0;
	bool		replaces = false;

	for (int i = 0; i < CC_MAX_RELS; i++)
	{
		CcEntry    *o = &cc_shared->entries[i];

		if (!o->used || o->dbid != MyDatabaseId)
			continue;
		if (o->relid == RelationGetRelid(rel))
			replaces = true;
		else
		{
			count++;
			bytes += o->bytes;
		}
	}
	if (!replaces && count >= gpuext_max_caches_per_database)
	{
		snprintf(msg, msglen,
				 "database \"%s\" has %d gpuext column caches, gpuext.max_caches_per_database allows %d",
				 dbname, count, gpuext_max_caches_per_database);
		return false;
	}
	if (bytes + size > (uint64) gpuext_cache_memory_per_database_mb * 1024 * 1024)
	{
		snprintf(msg, msglen,
				 "gpuext column cache of \"%s\" needs %llu kB, and %llu kB of gpuext.cache_memory_per_database (%d MB) are used in database \"%s\"",
				 RelationGetRelationName(rel), (unsigned long long) (size / 1024),
				 (unsigned long long) (bytes / 1024), gpuext_cache_memory_per_database_mb,
				 dbname);
		return false;
	}
	return true;
}

/* The caches need the registry, which exists only when preloaded. */
static void
require_preload(void)
{
	if (!gpuext_preloaded || cc_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("gpuext column caches need gpuext in shared_preload_libraries")));
}

/*
 * Refuse a user who does not own relid before any lock is taken on it
 * (as PostgreSQL's own commands check while they look the name up): a
 * request for ShareRowExclusiveLock would otherwise wait for the table's
 * writers in flight, and queue ahead of the next ones, before the check.
 */
static void
check_owner_unlocked(Oid relid)
{
	char		relkind = get_rel_relkind(relid);

	if (relkind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(relkind), get_rel_name(relid));
}

/*
 * Check that rel can be cached by the current user: a plain heap table,
 * permanent or unlogged, not a partition or an inheritance child (writes
 * through the parent fire the parent's statement triggers, not its own),
 * owned by the user (or a superuser).
 */
static void
check_relation(Relation rel)
{
	const char *name = RelationGetRelationName(rel);

	if (!pg_class_ownercheck(RelationGetRelid(rel), GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(rel->rd_rel->relkind), name);
	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relam != HEAP_TABLE_AM_OID)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a heap table", name),
				 errdetail("Only plain tables of the heap access method can have a gpuext column cache.")));
	if (IsCatalogRelation(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("system catalog \"%s\" cannot have a gpuext column cache", name)));
	if (RelationUsesLocalBuffers(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("temporary table \"%s\" cannot have a gpuext column cache", name)));
	if (rel->rd_rel->relispartition || has_superclass(RelationGetRelid(rel)))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("\"%s\" is a partition or an inheritance child", name),
				 errdetail("Writes through a parent table do not fire the child's statement triggers, which keep the cache exact.")));
}

/* Is a column of this type cacheable?  Returns its GxType, or 0. */
static int
cacheable_type(Oid typid)
{
	int			t = gx_type_class(typid);

	switch (t)
	{
		case GX_TYPE_BOOL:
		case GX_TYPE_INT2:
		case GX_TYPE_INT4:
		case GX_TYPE_INT8:
		case GX_TYPE_FLOAT4:
		case GX_TYPE_FLOAT8:
		case GX_TYPE_DATE:
		case GX_TYPE_TIMESTAMP:
			return t;
		default:
			return 0;
	}
}

/*
 * The columns to cache: the named ones (each must exist and be of a
 * cacheable type), or with a NULL array every cacheable column.
 */
static int
choose_columns(Relation rel, ArrayType *names, int16 *attnums)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			n = 0;

	if (names == NULL)
	{
		for (int i = 0; i < desc->natts && n < GX_CC_MAX_COLS; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);

			if (!att->attisdropped && att->attnum <= GX_MAX_ATTRS &&
				cacheable_type(att->atttypid) != 0)
				attnums[n++] = att->attnum;
		}
		if (n == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("table \"%s\" has no column that a gpuext column cache can hold",
							RelationGetRelationName(rel)),
					 errdetail("Cached columns are of types bool, smallint, integer, bigint, real, double precision, date, timestamp and timestamptz.")));
		return n;
	}
	else
	{
		Datum	   *elems;
		bool	   *nulls;
		int			nelems;

		if (ARR_NDIM(names) > 1)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("columns must be a one-dimensional array")));
		deconstruct_array(names, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &nelems);
		if (nelems == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("columns must name at least one column")));
		if (nelems > GX_CC_MAX_COLS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a gpuext column cache holds at most %d columns", GX_CC_MAX_COLS)));
		for (int i = 0; i < nelems; i++)
		{
			char	   *colname;
			AttrNumber	attnum;
			Form_pg_attribute att;

			if (nulls[i])
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("column names must not be null")));
			colname = TextDatumGetCString(elems[i]);
			attnum = get_attnum(RelationGetRelid(rel), colname);
			if (attnum == InvalidAttrNumber)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_COLUMN),
						 errmsg("column \"%s\" of relation \"%s\" does not exist",
								colname, RelationGetRelationName(rel))));
			if (attnum < 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("system column \"%s\" cannot be cached", colname)));
			att = TupleDescAttr(desc, attnum - 1);
			if (cacheable_type(att->atttypid) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("column \"%s\" of type %s cannot be cached",
								colname, format_type_be(att->atttypid)),
						 errdetail("Cached columns are of types bool, smallint, integer, bigint, real, double precision, date, timestamp and timestamptz.")));
			if (attnum > GX_MAX_ATTRS)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("column \"%s\" is beyond the first %d columns that device programs read",
								colname, GX_MAX_ATTRS)));
			for (int j = 0; j < n; j++)
				if (attnums[j] == attnum)
					ereport(ERROR,
							(errcode(ERRCODE_DUPLICATE_COLUMN),
							 errmsg("column \"%s\" is named twice", colname)));
			attnums[n++] = attnum;
		}
		return n;
	}
}

/*
 * The oid, xmin and row version (tid) of the trigger 'name' of relid, if it calls funcoid;
 * false if absent.  *as_made (when not NULL) says whether it fires as
 * gpuext makes it: on tgtype, every column, no WHEN, firing mode enabled.
 */
static bool
find_trigger(Oid relid, const char *name, Oid funcoid, Oid *oid, TransactionId *xmin,
			 ItemPointer tid, int16 tgtype, char enabled, bool *as_made)
{
	Relation	tgrel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData keys[2];
	SysScanDesc scan;
	HeapTuple	tup;
	bool		found = false;

	ScanKeyInit(&keys[0], Anum_pg_trigger_tgrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	ScanKeyInit(&keys[1], Anum_pg_trigger_tgname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum(name));
	scan = systable_beginscan(tgrel, TriggerRelidNameIndexId, true, NULL, 2, keys);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		Form_pg_trigger tg = (Form_pg_trigger) GETSTRUCT(tup);

		if (funcoid != InvalidOid && tg->tgfoid != funcoid)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("table \"%s\" has a trigger \"%s\" that gpuext did not create",
							get_rel_name(relid), name)));
		*oid = tg->oid;
		*xmin = HeapTupleHeaderGetRawXmin(tup->t_data);
		if (tid)
			*tid = tup->t_self;
		found = true;
		if (as_made)
			*as_made = tg->tgtype == tgtype && tg->tgenabled == enabled && tg->tgattr.dim1 == 0 &&
				heap_attisnull(tup, Anum_pg_trigger_tgqual, NULL);
	}
	systable_endscan(scan);
	table_close(tgrel, AccessShareLock);
	return found;
}

/*
 * Is trigger oid still the catalog row the cache was built with (same
 * xmin and row version: any ALTER of it writes a new version, with the
 * same xmin when made by the transaction that created it), on relid,
 * firing as 'enabled'?
 */
static bool
trigger_unchanged(Oid oid, TransactionId xmin, const ItemPointerData *tid, Oid relid,
				  char enabled)
{
	Relation	tgrel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		ok = false;

	ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(oid));
	scan = systable_beginscan(tgrel, TriggerOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		Form_pg_trigger tg = (Form_pg_trigger) GETSTRUCT(tup);

		ok = HeapTupleHeaderGetRawXmin(tup->t_data) == xmin &&
			ItemPointerEquals(&tup->t_self, (ItemPointer) tid) && tg->tgrelid == relid && tg->tgenabled == enabled;
	}
	systable_endscan(scan);
	table_close(tgrel, AccessShareLock);
	return ok;
}

/* Run one utility statement through SPI. */
static void
spi_exec(const char *sql)
{
	if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "gpuext: could not run \"%s\"", sql);
}

/*
 * Make sure rel has trigger 'name' as gpuext makes it (type tgtype, firing
 * mode 'firing').  One already there as made is kept: a rebuild must not
 * take the AccessExclusiveLock of DROP TRIGGER, which would wait for every
 * reader.  One of that name on gpuext's function but altered since is
 * dropped; then the trigger is made with 'create' (the CREATE TRIGGER
 * statement) and 'enable' (its ALTER TABLE ... ENABLE).  A user's trigger
 * of that name on another function is refused (find_trigger).  Inside SPI.
 */
static void
ensure_trigger(Oid relid, const char *name, Oid funcoid, int tgtype, char firing,
			   const char *create, const char *enable)
{
	Oid			found = InvalidOid;
	TransactionId xmin;
	bool		as_made;

	if (find_trigger(relid, name, funcoid, &found, &xmin, NULL, tgtype, firing, &as_made) &&
		as_made)
		return;
	if (OidIsValid(found))
		spi_exec(psprintf("DROP TRIGGER %s ON %s", name,
						  quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
													 get_rel_name(relid))));
	spi_exec(create);
	spi_exec(enable);
}

/*
 * Install (or re-create) the two invalidation triggers of rel, calling
 * schema.gpuext_cache_invalidate(), and return their oids and xmins.
 */
static void
install_triggers(Oid relid, const char *schema, CcEntry *e)
{
	char	   *qrel = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
												  get_rel_name(relid));
	const char *qfunc = quote_qualified_identifier(schema, "gpuext_cache_invalidate");
	Oid			funcoid;
	bool		as_made;

	{
		List	   *names = list_make2(makeString(pstrdup(schema)),
									   makeString("gpuext_cache_invalidate"));

		funcoid = LookupFuncName(names, 0, NULL, false);
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "gpuext: SPI_connect failed");

	ensure_trigger(relid, CC_STMT_TRIGGER, funcoid, CC_STMT_TGTYPE, TRIGGER_FIRES_ALWAYS,
				   psprintf("CREATE TRIGGER %s BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s "
							"FOR EACH STATEMENT EXECUTE FUNCTION %s()", CC_STMT_TRIGGER, qrel, qfunc),
				   psprintf("ALTER TABLE %s ENABLE ALWAYS TRIGGER %s", qrel, CC_STMT_TRIGGER));
	ensure_trigger(relid, CC_ROW_TRIGGER, funcoid, CC_ROW_TGTYPE, TRIGGER_FIRES_ON_REPLICA,
				   psprintf("CREATE TRIGGER %s BEFORE INSERT OR UPDATE OR DELETE ON %s "
							"FOR EACH ROW EXECUTE FUNCTION %s()", CC_ROW_TRIGGER, qrel, qfunc),
				   psprintf("ALTER TABLE %s ENABLE REPLICA TRIGGER %s", qrel, CC_ROW_TRIGGER));
	SPI_finish();
	CommandCounterIncrement();

	if (!find_trigger(relid, CC_STMT_TRIGGER, funcoid, &e->stmt_trigger, &e->stmt_trigger_xmin,
					  &e->stmt_trigger_tid, CC_STMT_TGTYPE, TRIGGER_FIRES_ALWAYS, &as_made) || !as_made ||
		!find_trigger(relid, CC_ROW_TRIGGER, funcoid, &e->row_trigger, &e->row_trigger_xmin,
					  &e->row_trigger_tid, CC_ROW_TGTYPE, TRIGGER_FIRES_ON_REPLICA, &as_made) || !as_made)
		elog(ERROR, "gpuext: the column cache's triggers were not created");
}

/* Drop the invalidation triggers of relid if they are there (and ours). */
static void
drop_triggers(Oid relid, Oid funcoid)
{
	char	   *qrel = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
												  get_rel_name(relid));
	Oid			oid;
	TransactionId xmin;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "gpuext: SPI_connect failed");
	if (find_trigger(relid, CC_STMT_TRIGGER, funcoid, &oid, &xmin, NULL, 0, 0, NULL))
		spi_exec(psprintf("DROP TRIGGER %s ON %s", CC_STMT_TRIGGER, qrel));
	if (find_trigger(relid, CC_ROW_TRIGGER, funcoid, &oid, &xmin, NULL, 0, 0, NULL))
		spi_exec(psprintf("DROP TRIGGER %s ON %s", CC_ROW_TRIGGER, qrel));
	SPI_finish();
}

/* growing arrays of the image under construction */
typedef struct CcBuild
{
	int			ncols;
	int16	   *attnums;
	int			types[GX_CC_MAX_COLS];
	int			widths[GX_CC_MAX_COLS];
	char	   *values[GX_CC_MAX_COLS];
	uint8	   *nulls[GX_CC_MAX_COLS];
	uint16	   *offsets;
	GxCcPage   *pages;
	uint32	   *block_map;
	uint64		nrows;
	uint64		cap;			/* rows the arrays hold */
	uint32		npages;
} CcBuild;

/* Make room for 'more' rows. */
static void
build_reserve(CcBuild *b, uint64 more)
{
	uint64		cap = b->cap;

	if (b->nrows + more <= cap)
		return;
	while (b->nrows + more > cap)
		cap *= 2;
	for (int c = 0; c < b->ncols; c++)
	{
		b->values[c] = repalloc_huge(b->values[c], cap * b->widths[c]);
		b->nulls[c] = repalloc_huge(b->nulls[c], (cap + 7) / 8);
		memset(b->nulls[c] + (b->cap + 7) / 8, 0, (cap + 7) / 8 - (b->cap + 7) / 8);
	}
	b->offsets = repalloc_huge(b->offsets, cap * sizeof(uint16));
	b->cap = cap;
}

/* Add the rows of an all-visible page (share-locked by the caller). */
static void
build_add_page(CcBuild *b, Relation rel, Buffer buf, BlockNumber blkno)
{
	Page		page = BufferGetPage(buf);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	TupleDesc	desc = RelationGetDescr(rel);
	GxCcPage   *pg = &b->pages[b->npages];

	build_reserve(b, maxoff);
	pg->blkno = blkno;
	pg->row_start = b->nrows;
	pg->maxoff = maxoff;
	pg->nrows = 0;
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		lp = PageGetItemId(page, off);
		HeapTupleData tup;
		uint64		row = b->nrows;

		if (!ItemIdIsNormal(lp))
			continue;
		tup.t_data = (HeapTupleHeader) PageGetItem(page, lp);
		tup.t_len = ItemIdGetLength(lp);
		tup.t_tableOid = RelationGetRelid(rel);
		ItemPointerSet(&tup.t_self, blkno, off);
		for (int c = 0; c < b->ncols; c++)
		{
			bool		isnull;
			Datum		d = heap_getattr(&tup, b->attnums[c], desc, &isnull);
			char	   *dst = b->values[c] + row * b->widths[c];

			if (isnull)
			{
				b->nulls[c][row >> 3] |= (uint8) (1 << (row & 7));
				memset(dst, 0, b->widths[c]);
				continue;
			}
			switch (b->widths[c])
			{
				case 1:
					*(uint8 *) dst = DatumGetUInt8(d);
					break;
				case 2:
					*(int16 *) dst = DatumGetInt16(d);
					break;
				case 4:
					*(int32 *) dst = DatumGetInt32(d);
					break;
				default:
					*(int64 *) dst = DatumGetInt64(d);
					break;
			}
		}
		b->offsets[row] = off;
		b->nrows++;
		pg->nrows++;
	}
	b->block_map[blkno] = b->npages;
	b->npages++;
}

/*
 * Read every page of rel and keep the all-visible ones (the flag read
 * under the page's share lock, as heapgetpage does).  The caller holds
 * ShareRowExclusiveLock, so no writer is in flight and none starts.
 */
static void
build_scan(CcBuild *b, Relation rel, BlockNumber nblocks)
{
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);

	b->block_map = palloc_extended(Max(nblocks, 1) * sizeof(uint32), MCXT_ALLOC_HUGE);
	b->pages = palloc_extended(Max(nblocks, 1) * sizeof(GxCcPage), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (BlockNumber blk = 0; blk < nblocks; blk++)
	{
		Buffer		buf;

		b->block_map[blk] = GX_CC_NO_SLOT;
		CHECK_FOR_INTERRUPTS();
		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		if (PageIsAllVisible(BufferGetPage(buf)))
			build_add_page(b, rel, buf, blk);
		UnlockReleaseBuffer(buf);
	}
	FreeAccessStrategy(strategy);
}

/* Bytes of the image of b, and the offsets of its parts (set in img when not NULL). */
static uint64
image_layout(CcBuild *b, uint32 nblocks, GxColCache *img)
{
	uint64		off = TYPEALIGN(64, sizeof(GxColCache));
	uint64		block_map_off,
				pages_off,
				offsets_off;
	uint64		values_off[GX_CC_MAX_COLS];
	uint64		nulls_off[GX_CC_MAX_COLS];

	block_map_off = off;
	off = TYPEALIGN(64, off + (uint64) nblocks * sizeof(uint32));
	pages_off = off;
	off = TYPEALIGN(64, off + (uint64) b->npages * sizeof(GxCcPage));
	offsets_off = off;
	off = TYPEALIGN(64, off + b->nrows * sizeof(uint16));
	for (int c = 0; c < b->ncols; c++)
	{
		values_off[c] = off;
		off = TYPEALIGN(64, off + b->nrows * b->widths[c]);
		nulls_off[c] = off;
		off = TYPEALIGN(64, off + (b->nrows + 7) / 8);
	}
	if (img)
	{
		memset(img, 0, sizeof(GxColCache));
		img->magic = GX_CC_MAGIC;
		img->ncols = b->ncols;
		img->npages = b->npages;
		img->nblocks = nblocks;
		img->nrows = b->nrows;
		img->size = off;
		img->block_map_off = block_map_off;
		img->pages_off = pages_off;
		img->offsets_off = offsets_off;
		for (int i = 0; i < GX_MAX_ATTRS; i++)
			img->colmap[i] = -1;
		for (int c = 0; c < b->ncols; c++)
		{
			img->cols[c].attnum = b->attnums[c];
			img->cols[c].type = b->types[c];
			img->cols[c].width = b->widths[c];
			img->cols[c].values_off = values_off[c];
			img->cols[c].nulls_off = nulls_off[c];
			img->colmap[b->attnums[c] - 1] = c;
		}
	}
	return off;
}

/* Copy the built arrays into the image (laid out by image_layout). */
static void
image_fill(CcBuild *b, GxColCache *img)
{
	char	   *base = (char *) img;

	memcpy(base + img->block_map_off, b->block_map, (Size) img->nblocks * sizeof(uint32));
	memcpy(base + img->pages_off, b->pages, (Size) b->npages * sizeof(GxCcPage));
	memcpy(base + img->offsets_off, b->offsets, (Size) b->nrows * sizeof(uint16));
	for (int c = 0; c < b->ncols; c++)
	{
		memcpy(base + img->cols[c].values_off, b->values[c], (Size) b->nrows * b->widths[c]);
		memcpy(base + img->cols[c].nulls_off, b->nulls[c], (Size) (b->nrows + 7) / 8);
	}
}

/* Transaction end: an aborted enable leaves no entry behind. */
static void
cc_xact_callback(XactEvent event, void *arg)
{
	if (cc_xact_ngenerations == 0)
		return;
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
	{
		LWLockAcquire(cc_shared->lock, LW_EXCLUSIVE);
		for (int i = 0; i < CC_MAX_RELS; i++)
			for (int g = 0; g < cc_xact_ngenerations; g++)
				if (cc_shared->entries[i].used &&
					cc_shared->entries[i].generation == cc_xact_generations[g])
					free_entry(&cc_shared->entries[i]);
		LWLockRelease(cc_shared->lock);
	}
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
		cc_xact_ngenerations = 0;
}

/*
 * Subtransaction end: the entries an aborted savepoint published go (its
 * triggers are rolled back with it, so they could never be used); those
 * of a released one now belong to its parent.
 */
static void
cc_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					SubTransactionId parentSubid, void *arg)
{
	int			kept = 0;

	if (cc_xact_ngenerations == 0)
		return;
	if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		for (int g = 0; g < cc_xact_ngenerations; g++)
			if (cc_xact_subids[g] == mySubid)
				cc_xact_subids[g] = parentSubid;
		return;
	}
	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	LWLockAcquire(cc_shared->lock, LW_EXCLUSIVE);
	for (int g = 0; g < cc_xact_ngenerations; g++)
	{
		if (cc_xact_subids[g] != mySubid)
		{
			cc_xact_generations[kept] = cc_xact_generations[g];
			cc_xact_subids[kept++] = cc_xact_subids[g];
			continue;
		}
		for (int i = 0; i < CC_MAX_RELS; i++)
			if (cc_shared->entries[i].used &&
				cc_shared->entries[i].generation == cc_xact_generations[g])
				free_entry(&cc_shared->entries[i]);
	}
	LWLockRelease(cc_shared->lock);
	cc_xact_ngenerations = kept;
}

/*
 * gpuext_cache_enable(rel regclass, columns text[] DEFAULT NULL): build
 * (or rebuild) the column cache of rel; returns the pages cached.
 */
Datum
gpuext_cache_enable(PG_FUNCTION_ARGS)
{
	Oid			relid;
	ArrayType  *names = PG_ARGISNULL(1) ? NULL : PG_GETARG_ARRAYTYPE_P(1);
	char	   *schema = get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid));
	MemoryContext cxt;
	MemoryContext old;
	Relation	rel;
	int16		attnums[GX_CC_MAX_COLS];
	CcEntry		fresh;
	CcEntry    *e;
	CcBuild		b;
	BlockNumber nblocks;
	uint64		size;
	uint64		used = 0;
	GxColCache	header;
	dsm_segment *seg;
	bool		share_ok;
	char		share_msg[512];
	char	   *dbname;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the relation must not be null")));
	relid = PG_GETARG_OID(0);
	require_preload();
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("gpuext column caches cannot be built during recovery")));
	check_owner_unlocked(relid);
	rel = try_relation_open(relid, ShareRowExclusiveLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	check_relation(rel);

	cxt = AllocSetContextCreate(CurrentMemoryContext, "gpuext column cache build",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	memset(&fresh, 0, sizeof(fresh));
	memset(&b, 0, sizeof(b));
	b.ncols = choose_columns(rel, names, attnums);
	b.attnums = attnums;
	for (int c = 0; c < b.ncols; c++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnums[c] - 1);

		b.types[c] = cacheable_type(att->atttypid);
		b.widths[c] = att->attlen;
		fresh.attnums[c] = attnums[c];
		fresh.atttypids[c] = att->atttypid;
	}
	fresh.ncols = b.ncols;

	/* ALTER TABLE refuses a relation this backend has open: close it, keeping the lock */
	relation_close(rel, NoLock);
	install_triggers(relid, schema, &fresh);
	rel = relation_open(relid, NoLock);

	b.cap = 1024;
	for (int c = 0; c < b.ncols; c++)
	{
		b.values[c] = palloc_extended(b.cap * b.widths[c], MCXT_ALLOC_HUGE);
		b.nulls[c] = palloc_extended((b.cap + 7) / 8, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	}
	b.offsets = palloc_extended(b.cap * sizeof(uint16), MCXT_ALLOC_HUGE);
	nblocks = RelationGetNumberOfBlocks(rel);
	build_scan(&b, rel, nblocks);
	size = image_layout(&b, nblocks, &header);

	/*
	 * within gpuext.cache_memory_limit, counting every other cache, and
	 * within this database's share
	 */
	dbname = get_database_name(MyDatabaseId);
	forget_dropped();
	LWLockAcquire(cc_shared->lock, LW_SHARED);
	for (int i = 0; i < CC_MAX_RELS; i++)
	{
		CcEntry    *o = &cc_shared->entries[i];

		if (o->used && !(o->dbid == MyDatabaseId && o->relid == relid))
			used += o->bytes;
	}
	share_ok = within_database_share(rel, dbname, size, share_msg, sizeof(share_msg));
	LWLockRelease(cc_shared->lock);
	if (!share_ok)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("%s", share_msg),
				 errhint("A superuser can raise the setting, or drop another cache of this database.")));
	if (used + size > (uint64) gpuext_cache_memory_limit_mb * 1024 * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("gpuext column cache of \"%s\" needs %llu kB, and %llu kB of gpuext.cache_memory_limit (%d MB) are used",
						RelationGetRelationName(rel), (unsigned long long) (size / 1024),
						(unsigned long long) (used / 1024), gpuext_cache_memory_limit_mb)));

	seg = dsm_create(size, 0);
	memcpy(dsm_segment_address(seg), &header, sizeof(header));
	image_fill(&b, (GxColCache *) dsm_segment_address(seg));

	/* publish (the limit checked again: another build may have published) */
	LWLockAcquire(cc_shared->lock, LW_EXCLUSIVE);
	used = 0;
	for (int i = 0; i < CC_MAX_RELS; i++)
	{
		CcEntry    *o = &cc_shared->entries[i];

		if (o->used && !(o->dbid == MyDatabaseId && o->relid == relid))
			used += o->bytes;
	}
	if (used + size > (uint64) gpuext_cache_memory_limit_mb * 1024 * 1024)
	{
		LWLockRelease(cc_shared->lock);
		dsm_detach(seg);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("gpuext column cache of \"%s\" needs %llu kB, and %llu kB of gpuext.cache_memory_limit (%d MB) are used",
						RelationGetRelationName(rel), (unsigned long long) (size / 1024),
						(unsigned long long) (used / 1024), gpuext_cache_memory_limit_mb)));
	}
	if (!within_database_share(rel, dbname, size, share_msg, sizeof(share_msg)))
	{
		LWLockRelease(cc_shared->lock);
		dsm_detach(seg);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("%s", share_msg),
				 errhint("A superuser can raise the setting, or drop another cache of this database.")));
	}
	e = find_entry(relid);
	if (e == NULL)
		for (int i = 0; i < CC_MAX_RELS && e == NULL; i++)
			if (!cc_shared->entries[i].used)
				e = &cc_shared->entries[i];
	if (e == NULL)
	{
		LWLockRelease(cc_shared->lock);
		dsm_detach(seg);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("at most %d relations can have a gpuext column cache", CC_MAX_RELS)));
	}
	free_entry(e);
	dsm_pin_segment(seg);
	e->dbid = MyDatabaseId;
	e->relid = relid;
	e->relfilenode = rel->rd_node.relNode;
	e->stmt_trigger = fresh.stmt_trigger;
	e->stmt_trigger_xmin = fresh.stmt_trigger_xmin;
	e->stmt_trigger_tid = fresh.stmt_trigger_tid;
	e->row_trigger = fresh.row_trigger;
	e->row_trigger_xmin = fresh.row_trigger_xmin;
	e->row_trigger_tid = fresh.row_trigger_tid;
	e->built_changes = pg_atomic_read_u64(&e->changes);
	e->generation = cc_shared->next_generation++;
	e->handle = dsm_segment_handle(seg);
	e->bytes = size;
	e->npages = b.npages;
	e->nblocks = nblocks;
	e->nrows = b.nrows;
	e->ncols = b.ncols;
	memcpy(e->attnums, fresh.attnums, sizeof(e->attnums));
	memcpy(e->atttypids, fresh.atttypids, sizeof(e->atttypids));
	e->built_at = GetCurrentTimestamp();
	e->used = true;
	if (!cc_xact_callback_registered)
	{
		RegisterXactCallback(cc_xact_callback, NULL);
		RegisterSubXactCallback(cc_subxact_callback, NULL);
		cc_xact_callback_registered = true;
	}
	if (cc_xact_ngenerations < CC_MAX_RELS)
	{
		cc_xact_subids[cc_xact_ngenerations] = GetCurrentSubTransactionId();
		cc_xact_generations[cc_xact_ngenerations++] = e->generation;
	}
	LWLockRelease(cc_shared->lock);
	dsm_detach(seg);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	/* keep the lock to the end of the transaction: writers wait for the triggers */
	relation_close(rel, NoLock);
	PG_RETURN_INT64(b.npages);
}

/* gpuext_cache_drop(rel regclass): drop rel's cache and its triggers; false if it had none. */
Datum
gpuext_cache_drop(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *schema = get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid));
	List	   *names = list_make2(makeString(schema), makeString("gpuext_cache_invalidate"));
	Relation	rel;
	bool		had;
	bool		heap;

	require_preload();
	check_owner_unlocked(relid);
	rel = try_relation_open(relid, ShareRowExclusiveLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(rel->rd_rel->relkind),
					   RelationGetRelationName(rel));
	had = forget_entry(relid);
	heap = rel->rd_rel->relkind == RELKIND_RELATION;
	relation_close(rel, NoLock);
	if (heap)
		drop_triggers(relid, LookupFuncName(names, 0, NULL, false));
	PG_RETURN_BOOL(had);
}

/*
 * gpuext_cache_forget(rel oid): free the cache of a relation that no
 * longer exists (called by the extension's sql_drop event trigger).
 */
Datum
gpuext_cache_forget(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);

	if (cc_shared == NULL || SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(forget_entry(relid));
}

/*
 * The state of an entry for gpuext_caches(): valid, written (a write since
 * the build), rewritten (a new file), triggers changed, relation dropped.
 */
static const char *
entry_state(const CcEntry *e, uint64 changes)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(e->relid));
	Oid			relfilenode;

	if (!HeapTupleIsValid(tup))
		return "relation dropped";
	relfilenode = ((Form_pg_class) GETSTRUCT(tup))->relfilenode;
	ReleaseSysCache(tup);
	if (relfilenode != e->relfilenode)
		return "rewritten";
	if (!trigger_unchanged(e->stmt_trigger, e->stmt_trigger_xmin, &e->stmt_trigger_tid, e->relid,
						   TRIGGER_FIRES_ALWAYS) ||
		!trigger_unchanged(e->row_trigger, e->row_trigger_xmin, &e->row_trigger_tid, e->relid,
						   TRIGGER_FIRES_ON_REPLICA))
		return "triggers changed";
	if (changes != e->built_changes)
		return "written";
	return "valid";
}

/*
 * gpuext_caches(): the column caches of this database: relation, columns,
 * pages cached, blocks of the relation when built, rows, bytes, state.
 * Only the tables the caller may SELECT from; rows and bytes are NULL for
 * those whose row-level security policies apply to the caller (they
 * count the rows the policies hide).
 */
Datum
gpuext_caches(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	CcEntry		copies[CC_MAX_RELS];
	uint64		changes[CC_MAX_RELS];
	int			n = 0;

	InitMaterializedSRF(fcinfo, 0);
	if (cc_shared == NULL)
		return (Datum) 0;
	LWLockAcquire(cc_shared->lock, LW_SHARED);
	for (int i = 0; i < CC_MAX_RELS; i++)
	{
		CcEntry    *e = &cc_shared->entries[i];

		if (e->used && e->dbid == MyDatabaseId)
		{
			/* the caller's tables only (SELECT privilege), checked below */
			memcpy(&copies[n], e, sizeof(CcEntry));
			changes[n] = pg_atomic_read_u64(&e->changes);
			n++;
		}
	}
	LWLockRelease(cc_shared->lock);
	for (int i = 0; i < n; i++)
	{
		CcEntry    *e = &copies[i];
		Datum		values[8];
		bool		nulls[8] = {0};
		Datum	   *cols;

		if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(e->relid)) &&
			pg_class_aclcheck(e->relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
			continue;
		cols = palloc(sizeof(Datum) * Max(e->ncols, 1));

		for (int c = 0; c < e->ncols; c++)
		{
			char	   *name = get_attname(e->relid, e->attnums[c], true);

			cols[c] = CStringGetTextDatum(name ? name : psprintf("%d", e->attnums[c]));
		}
		values[0] = ObjectIdGetDatum(e->relid);
		values[1] = PointerGetDatum(construct_array(cols, e->ncols, TEXTOID, -1, false,
													TYPALIGN_INT));
		values[2] = Int64GetDatum(e->npages);
		values[3] = Int64GetDatum(e->nblocks);
		values[4] = Int64GetDatum(e->nrows);
		values[5] = Int64GetDatum(e->bytes);
		if (check_enable_rls(e->relid, InvalidOid, true) == RLS_ENABLED)
			nulls[4] = nulls[5] = true;
		values[6] = CStringGetTextDatum(entry_state(e, changes[i]));
		values[7] = TimestampTzGetDatum(e->built_at);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * The triggers' function: count a write to the relation.  The statement
 * trigger fires before the statement touches a page, so the count moves
 * before the writing transaction can commit.
 */
Datum
gpuext_cache_invalidate(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Oid			relid;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("gpuext_cache_invalidate() must be called as a trigger")));
	relid = RelationGetRelid(td->tg_relation);
	if (cc_shared != NULL)
		count_write(relid);
	if (TRIGGER_FIRED_FOR_ROW(td->tg_event))
	{
		if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
			return PointerGetDatum(td->tg_newtuple);
		return PointerGetDatum(td->tg_trigtuple);
	}
	return PointerGetDatum(NULL);
}

/* Does [off, off + bytes) lie inside an image of 'size' bytes? */
static bool
part_ok(uint64 off, uint64 bytes, uint64 size)
{
	return off <= size && bytes <= size - off;
}

/*
 * Is the image in a segment of 'len' bytes well formed: every part inside
 * it, every block's slot a cached page, every page's rows inside the row
 * arrays?  The scans and engines follow its offsets unchecked (but for
 * the line pointers, checked per row), so a damaged image is refused, not
 * followed.  Reads the block map and the page array: done once per
 * generation in each backend (gx_colcache_open), and by the GPU service
 * before its device copy.
 */
bool
gx_colcache_image_ok(const GxColCache *cc, Size len)
{
	const uint32 *map;
	const GxCcPage *pages;

	if (len < sizeof(GxColCache) || cc->magic != GX_CC_MAGIC || cc->size > len ||
		cc->ncols > GX_CC_MAX_COLS || cc->nrows > cc->size || cc->npages > cc->nblocks ||
		!part_ok(cc->block_map_off, (uint64) cc->nblocks * sizeof(uint32), cc->size) ||
		!part_ok(cc->pages_off, (uint64) cc->npages * sizeof(GxCcPage), cc->size) ||
		!part_ok(cc->offsets_off, cc->nrows * sizeof(uint16), cc->size))
		return false;
	for (uint32 c = 0; c < cc->ncols; c++)
	{
		const GxCcColumn *col = &cc->cols[c];

		if ((col->width != 1 && col->width != 2 && col->width != 4 && col->width != 8) ||
			!part_ok(col->values_off, cc->nrows * col->width, cc->size) ||
			!part_ok(col->nulls_off, (cc->nrows + 7) / 8, cc->size))
			return false;
	}
	for (int i = 0; i < GX_MAX_ATTRS; i++)
		if (cc->colmap[i] < -1 || cc->colmap[i] >= (int) cc->ncols)
			return false;
	map = gx_cc_block_map(cc);
	for (uint32 b = 0; b < cc->nblocks; b++)
		if (map[b] != GX_CC_NO_SLOT && map[b] >= cc->npages)
			return false;
	pages = gx_cc_pages(cc);
	for (uint32 p = 0; p < cc->npages; p++)
		if (pages[p].row_start > cc->nrows || pages[p].nrows > cc->nrows - pages[p].row_start ||
			pages[p].maxoff > MaxHeapTuplesPerPage)
			return false;
	return true;
}

/*
 * A scan's use of a cache: the image mapped for the scan, or NULL when
 * the scan must read every page.  Called after the scan's snapshot was
 * taken (the argument in docs/architecture.md needs that order); prog's
 * needed attributes must all be cached with its types.
 */
GxCcScan *
gx_colcache_open(Relation rel, Snapshot snapshot, const GxProgram *prog)
{
	Oid			relid = RelationGetRelid(rel);
	CcEntry		copy;
	CcEntry    *e;
	uint64		changes;
	dsm_segment *seg;
	const GxColCache *cc;
	const GxAttr *atts;
	GxCcScan   *s;
	int			slot;

	if (!gpuext_enable_cache || cc_shared == NULL || prog == NULL)
		return NULL;
	if (!IsMVCCSnapshot(snapshot) || snapshot->takenDuringRecovery || RecoveryInProgress() ||
		IsolationIsSerializable())
		return NULL;

	/*
	 * With old_snapshot_threshold set, VACUUM may remove rows that old
	 * snapshots still see and mark the page all-visible (reading it then
	 * fails with "snapshot too old"): all-visible no longer means visible
	 * to every snapshot, which the cache rests on.
	 */
	if (old_snapshot_threshold >= 0)
		return NULL;
	if (rel->rd_rel->relispartition)
		return NULL;

	LWLockAcquire(cc_shared->lock, LW_SHARED);
	e = find_entry(relid);
	if (e == NULL)
	{
		LWLockRelease(cc_shared->lock);
		return NULL;
	}
	memcpy(&copy, e, sizeof(copy));
	/* the count is read after the snapshot was taken (see the file header) */
	pg_memory_barrier();
	changes = pg_atomic_read_u64(&e->changes);
	/*
	 * Attached under the lock: a drop cannot destroy it before.  A backend
	 * maps a segment once: a second scan of the table while the first is
	 * open (a GpuAgg's fallback plan, a self-join) reads the heap pages.
	 */
	seg = (changes == copy.built_changes && dsm_find_mapping(copy.handle) == NULL)
		? dsm_attach(copy.handle) : NULL;
	LWLockRelease(cc_shared->lock);
	if (seg == NULL)
		return NULL;

	cc = (const GxColCache *) dsm_segment_address(seg);
	slot = (int) (e - cc_shared->entries);
	if (cc_checked[slot] != copy.generation)
	{
		if (!gx_colcache_image_ok(cc, dsm_segment_map_length(seg)))
		{
			ereport(WARNING,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("gpuext column cache of \"%s\" is damaged: its heap pages are read instead",
							RelationGetRelationName(rel))));
			goto refuse;
		}
		cc_checked[slot] = copy.generation;
	}
	atts = gx_prog_atts(prog);
	for (int i = 0; i < prog->natts; i++)
		if (atts[i].reg >= 0 &&
			(cc->colmap[i] < 0 || cc->cols[cc->colmap[i]].type != atts[i].type))
			goto refuse;
	if (rel->rd_node.relNode != copy.relfilenode || has_superclass(relid) ||
		!trigger_unchanged(copy.stmt_trigger, copy.stmt_trigger_xmin, &copy.stmt_trigger_tid, relid,
						   TRIGGER_FIRES_ALWAYS) ||
		!trigger_unchanged(copy.row_trigger, copy.row_trigger_xmin, &copy.row_trigger_tid, relid,
						   TRIGGER_FIRES_ON_REPLICA))
		goto refuse;
	/* a needed column must still be the cached one (type unchanged, not dropped) */
	for (int i = 0; i < prog->natts; i++)
		if (atts[i].reg >= 0)
		{
			Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), i);
			int			c = cc->colmap[i];

			if (att->attisdropped || att->atttypid != copy.atttypids[c])
				goto refuse;
		}

	s = palloc0(sizeof(GxCcScan));
	s->slot = slot;
	s->generation = copy.generation;
	s->seg = seg;
	s->cc = cc;
	s->rel = rel;
	s->vmbuf = InvalidBuffer;
	s->cpu_id = gx_cpu_table_register((void *) cc, CurrentMemoryContext);
	return s;

refuse:
	dsm_detach(seg);
	return NULL;
}

/*
 * Plan time: what a scan of base relation 'rel' whose device program reads
 * the columns in 'exprs' (Exprs or RestrictInfos over rel) would take from
 * a column cache: in->cached_frac, the fraction of its in->pages pages the
 * cache holds, and in->cached_row_bytes, the bytes of those columns per
 * row.  Zero unless a current cache holds every one of those columns with
 * its type and the run would read it (gpuext.enable_cache; on the GPU,
 * gpuext.cache_gpu; not serializable, not in recovery).  The run decides
 * again (gx_colcache_open): this only steers the costs.
 */
void
gx_colcache_cost_input(PlannerInfo *root, RelOptInfo *rel, List *exprs, GxScanCostInput *in)
{
	RangeTblEntry *rte;
	Bitmapset  *attnos = NULL;
	CcEntry		copy;
	CcEntry    *e;
	HeapTuple	tup;
	Form_pg_class form;
	bool		current = false;
	double		bytes = 0;
	ListCell   *lc;
	int			x;

	in->cached_frac = 0;
	in->cached_row_bytes = 0;
	if (!gpuext_enable_cache || cc_shared == NULL || (in->gpu && !gpuext_cache_gpu) ||
		IsolationIsSerializable() || RecoveryInProgress() || old_snapshot_threshold >= 0 ||
		rel->reloptkind != RELOPT_BASEREL)
		return;
	rte = planner_rt_fetch(rel->relid, root);
	if (rte->rtekind != RTE_RELATION)
		return;

	LWLockAcquire(cc_shared->lock, LW_SHARED);
	e = find_entry(rte->relid);
	if (e)
	{
		memcpy(&copy, e, sizeof(copy));
		current = pg_atomic_read_u64(&e->changes) == copy.built_changes;
	}
	LWLockRelease(cc_shared->lock);
	if (e == NULL || !current)
		return;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(rte->relid));
	if (!HeapTupleIsValid(tup))
		return;
	form = (Form_pg_class) GETSTRUCT(tup);
	current = form->relfilenode == copy.relfilenode && !form->relispartition;
	ReleaseSysCache(tup);
	if (!current || has_superclass(rte->relid))
		return;

	foreach(lc, exprs)
	{
		Node	   *n = lfirst(lc);

		if (IsA(n, RestrictInfo))
			n = (Node *) ((RestrictInfo *) n)->clause;
		pull_varattnos(n, rel->relid, &attnos);
	}
	x = -1;
	while ((x = bms_next_member(attnos, x)) >= 0)
	{
		AttrNumber	attnum = x + FirstLowInvalidHeapAttributeNumber;
		int			c;

		/* system columns and whole rows are never cached */
		if (attnum <= 0)
			return;
		for (c = 0; c < copy.ncols; c++)
			if (copy.attnums[c] == attnum)
				break;
		if (c == copy.ncols || get_atttype(rte->relid, attnum) != copy.atttypids[c])
			return;
		bytes += get_typlen(copy.atttypids[c]) + 1.0 / 8;
	}
	in->cached_frac = Min(1.0, copy.npages / Max(in->pages, 1.0));
	in->cached_row_bytes = bytes;
}

/*
 * The cache's slot for block blkno, or -1: the page is cached and the
 * visibility map still says all-visible.
 */
int64
gx_colcache_slot(GxCcScan *s, BlockNumber blkno)
{
	uint32		slot;

	if (blkno >= s->cc->nblocks)
		return -1;
	slot = gx_cc_block_map(s->cc)[blkno];
	if (slot == GX_CC_NO_SLOT || slot >= s->cc->npages)
		return -1;
	if (!VM_ALL_VISIBLE(s->rel, blkno, &s->vmbuf))
		return -1;
	return slot;
}

/*
 * For the GPU service: map the image of registry slot 'slot' if it still
 * has generation 'generation' (attached under the registry lock, so a
 * drop cannot destroy it first); NULL otherwise.  The caller detaches.
 */
struct dsm_segment *
gx_colcache_attach_slot(int slot, uint64 generation)
{
	CcEntry    *e;
	dsm_segment *seg = NULL;

	if (cc_shared == NULL || slot < 0 || slot >= CC_MAX_RELS)
		return NULL;
	LWLockAcquire(cc_shared->lock, LW_SHARED);
	e = &cc_shared->entries[slot];
	if (e->used && e->generation == generation)
		seg = dsm_attach(e->handle);
	LWLockRelease(cc_shared->lock);
	return seg;
}

/* Does registry slot 'slot' still hold the image of that generation? */
bool
gx_colcache_slot_current(int slot, uint64 generation)
{
	bool		current;

	if (cc_shared == NULL || slot < 0 || slot >= CC_MAX_RELS)
		return false;
	LWLockAcquire(cc_shared->lock, LW_SHARED);
	current = cc_shared->entries[slot].used && cc_shared->entries[slot].generation == generation;
	LWLockRelease(cc_shared->lock);
	return current;
}

/* End a scan's use of the cache. */
void
gx_colcache_close(GxCcScan *s)
{
	if (s == NULL)
		return;
	gx_cpu_table_unregister(s->cpu_id, s->cc);
	if (BufferIsValid(s->vmbuf))
		ReleaseBuffer(s->vmbuf);
	dsm_detach(s->seg);
	pfree(s);
}
