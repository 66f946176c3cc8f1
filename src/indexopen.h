/*-------------------------------------------------------------------------
 * indexopen.h
 *		Opening a gpuext index named by an SQL function's argument.
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

extern Relation gx_open_index_of_am(Oid indexoid, const char *amname, LOCKMODE heaplock,
									LOCKMODE indexlock, Relation *heap);

#endif							/* GPUEXT_INDEXOPEN_H */
