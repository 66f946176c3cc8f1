/*-------------------------------------------------------------------------
 * indexopen.c
 *		Opening a gpuext index named by an SQL function's argument (the
 *		checkers, the batch probe): the relation must exist, be an index,
 *		and be of the expected access method, each with its own SQLSTATE.
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
