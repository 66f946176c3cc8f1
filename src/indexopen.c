/*-------------------------------------------------------------------------
 * indexopen.c
 *		Opening a gpuext index named by an SQL function's argument (the
 *		checkers, the batch probe): the relation must exist, be an index,
 *		and be of the expected access method, each with its own SQLSTATE.
 *		And the number of blocks of an index, which readers check the
 *		block numbers they follow against (remembered in the relcache
 *		entry, so that a scan does not ask the kernel each time).
 *
 * IDENTIFICATION
 *		src/indexopen.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "storage/bufmgr.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "indexopen.h"

/*
 * Open the table of index 'indexoid' with 'heaplock' (stored in *heap),
 * then the index with 'indexlock' (the order other index users lock them
 * in), and check that it is an index of access method 'amname'.  ERROR
 * 42P01 for an OID that names no relation, 42809 for a relation that is
 * not an index or an index of another access method.
 */
Relation
gx_open_index_of_am(Oid indexoid, const char *amname, LOCKMODE heaplock, LOCKMODE indexlock,
					Relation *heap)
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
	*heap = table_open(heapoid, heaplock);
	index = relation_open(indexoid, indexlock);
	/* dropped and its OID reused between the lookup and the locks */
	if (index->rd_rel->relkind != RELKIND_INDEX || IndexGetRelation(indexoid, false) != heapoid)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", RelationGetRelationName(index))));
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
