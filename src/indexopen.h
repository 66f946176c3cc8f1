/*-------------------------------------------------------------------------
 * indexopen.h
 *		Opening a relation named by an SQL function's argument: the
 *		caller's privileges and row-level security are checked before any
 *		lock is taken.
 *
 * IDENTIFICATION
 *		src/indexopen.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_INDEXOPEN_H
#define GPUEXT_INDEXOPEN_H

#include "postgres.h"

#include "storage/lockdefs.h"
#include "utils/relcache.h"

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

#endif							/* GPUEXT_INDEXOPEN_H */
