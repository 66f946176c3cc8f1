/*-------------------------------------------------------------------------
 * indexopen.h
 *		Opening a gpuext index named by an SQL function's argument, and
 *		the size its readers check block numbers against.
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

extern Relation gx_open_index_of_am(Oid indexoid, const char *amname, LOCKMODE heaplock,
									LOCKMODE indexlock, Relation *heap);
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
