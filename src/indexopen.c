/*-------------------------------------------------------------------------
 * indexopen.c
 *		Opening a relation named by an SQL function's argument (the
 *		checkers, the batch probe, the page counts), and the number of
 *		blocks of an index, which readers check the block numbers they
 *		follow against (remembered in the relcache entry, so that a scan
 *		does not ask the kernel each time).
 *
 * The caller's privileges are checked on the OID before any lock is
 * taken, as PostgreSQL's own commands check while they look a name up: a
 * refused user must not queue a lock behind, or ahead of, the owner's
 * sessions.  Functions that read every row of a table refuse a user whom
 * a row-level security policy of the table applies to (they could not
 * apply its quals), as PostgreSQL's COPY FROM does.  An
 * index must exist, be an index, and be of the expected access method,
 * each with its own SQLSTATE.
 *
 * IDENTIFICATION
 *		src/indexopen.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/syscache.h"

#include "indexopen.h"

/*
 * The table whose TOAST table is toastoid, or InvalidOid (pg_class has no
 * index on reltoastrelid: a scan, done only for TOAST arguments).
 */
static Oid
toast_owner_table(Oid toastoid)
{
	Relation	classrel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	Oid			result = InvalidOid;

	ScanKeyInit(&key, Anum_pg_class_reltoastrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(toastoid));
	classrel = table_open(RelationRelationId, AccessShareLock);
	scan = systable_beginscan(classrel, InvalidOid, false, NULL, 1, &key);
	if (HeapTupleIsValid(tup = systable_getnext(scan)))
		result = ((Form_pg_class) GETSTRUCT(tup))->oid;
	systable_endscan(scan);
	table_close(classrel, AccessShareLock);
	return result;
}

/*
 * Refuse the current user when a row-level security policy of relid (of
 * its table, for a TOAST table) applies to them: funcname reads every row
 * and cannot apply the policies' quals.  row_security = off does not help:
 * it only turns such a query into an error.  ERROR 42501 naming the table.
 */
void
gx_check_no_row_security(Oid relid, const char *funcname)
{
	Oid			table = relid;

	if (get_rel_relkind(relid) == RELKIND_TOASTVALUE)
	{
		table = toast_owner_table(relid);
		if (!OidIsValid(table))
			return;
	}
	if (check_enable_rls(table, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s would bypass row-level security policy for table \"%s\"",
						funcname, get_rel_name(table)),
				 errdetail("The function reads every row of the table and cannot apply the policies."),
				 errhint("Query the table instead, or call the function as a role that the policies do not apply to.")));
}

/*
 * Refuse the current user, before any lock is taken on relid, unless they
 * have SELECT on the relation itself (a column grant is not enough: the
 * functions read whole rows or return their locations) and no row-level
 * security policy of it applies to them.  42P01 for an OID that names no
 * relation, 42501 otherwise.
 */
void
gx_check_table_select(Oid relid, const char *funcname)
{
	char		relkind = get_rel_relkind(relid);
	AclResult	aclresult;

	if (relkind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	aclresult = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, get_relkind_objtype(relkind), get_rel_name(relid));
	gx_check_no_row_security(relid, funcname);
}

/*
 * Check that the current user may use funcname on index indexoid of table
 * heapoid (see GxIndexAccess); no lock is needed.
 */
static void
check_index_access(Oid indexoid, Oid heapoid, GxIndexAccess access, const char *funcname)
{
	if (access == GX_INDEX_ACCESS_SELECT)
	{
		gx_check_table_select(heapoid, funcname);
		return;
	}
	/* pg_class_ownercheck says yes to superusers */
	if (!pg_class_ownercheck(indexoid, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser or the owner of index \"%s\" to check it",
						get_rel_name(indexoid))));
	gx_check_no_row_security(heapoid, funcname);
}

/*
 * Open the table of index 'indexoid' with 'heaplock' (stored in *heap),
 * then the index with 'indexlock' (the order other index users lock them
 * in), and check that it is an index of access method 'amname'.  The
 * caller's access (see GxIndexAccess) is checked before the first lock and
 * again once both are held.  ERROR 42P01 for an OID that names no
 * relation, 42809 for a relation that is not an index or an index of
 * another access method, 42501 for a user without the access.
 */
Relation
gx_open_index_of_am(Oid indexoid, const char *amname, LOCKMODE heaplock, LOCKMODE indexlock,
					GxIndexAccess access, const char *funcname, Relation *heap)
{
	Oid			heapoid;
	Relation	index;

	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(indexoid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", indexoid)));
	heapoid = IndexGetRelation(indexoid, true);
	if (!OidIsValid(heapoid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", get_rel_name(indexoid))));
	check_index_access(indexoid, heapoid, access, funcname);
	*heap = table_open(heapoid, heaplock);
	index = relation_open(indexoid, indexlock);
	/* dropped and its OID reused between the lookup and the locks */
	if (index->rd_rel->relkind != RELKIND_INDEX || IndexGetRelation(indexoid, false) != heapoid)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", RelationGetRelationName(index))));
	check_index_access(indexoid, heapoid, access, funcname);
	if (index->rd_rel->relam != get_index_am_oid(amname, false))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a %s index", RelationGetRelationName(index), amname)));
	return index;
}

/*
 * The number of blocks of an index, at least as many as the last time it
 * was read, read again from the storage manager only when the remembered
 * count is not above 'beyond' (a block number or a count of pages read
 * that must be below it).  The count is kept in the relcache entry's
 * rd_amcache, which neither access method uses otherwise and which the
 * relcache frees at every invalidation.  gpuext indexes only grow within
 * one relfilenode (VACUUM never truncates them); a count remembered too
 * high would only make the readers' checks weaker, never refuse a block.
 */
BlockNumber
gx_index_nblocks(Relation index, BlockNumber beyond)
{
	BlockNumber *known = (BlockNumber *) index->rd_amcache;

	if (known != NULL && *known > beyond)
		return *known;
	if (known == NULL)
	{
		known = MemoryContextAlloc(index->rd_indexcxt, sizeof(BlockNumber));
		index->rd_amcache = known;
	}
	*known = RelationGetNumberOfBlocks(index);
	return *known;
}
