/*-------------------------------------------------------------------------
 * indexopen.h
 *		Opening a relation named by an SQL function's argument: the
 *		caller's privileges and row-level security are checked before any
 *		lock is taken.  And the size of an index, which its readers check
 *		block numbers against.
 *
 * IDENTIFICATION
 *		src/indexopen.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_INDEXOPEN_H
#define GPUEXT_INDEXOPEN_H

#include "postgres.h"

#include "storage/block.h"
#include "storage/lockdefs.h"
#include "utils/rel.h"

/* What a function needs to be allowed to read an index and its table */
typedef enum GxIndexAccess
{
	GX_INDEX_ACCESS_SELECT,		/* SELECT on the table (a probe) */
	GX_INDEX_ACCESS_OWNER		/* superuser or the index's owner (a checker) */
} GxIndexAccess;

extern void gx_check_no_row_security(Oid relid, const char *funcname);
extern void gx_check_table_select(Oid relid, const char *funcname);
extern Relation gx_open_index_of_am(Oid indexoid, const char *amname, LOCKMODE heaplock,
									LOCKMODE indexlock, GxIndexAccess access,
									const char *funcname, Relation *heap);
extern BlockNumber gx_index_nblocks(Relation index, BlockNumber beyond);

/*
 * The number of blocks gx_index_nblocks remembers for the index (0 if
 * none): block numbers below it exist, without asking the kernel
 */
static inline BlockNumber
gx_index_nblocks_known(Relation index)
{
	return index->rd_amcache != NULL ? *(BlockNumber *) index->rd_amcache : 0;
}

#endif							/* GPUEXT_INDEXOPEN_H */
