/*-------------------------------------------------------------------------
 * arena.c
 *		The DMA arena: shared memory registered with the GPU, from which
 *		batches and their results are allocated in 64 kB units.
 *
 * The GPU service page-locks the arena once at start, so kernels read
 * batches and write results there directly.  Allocation is first-fit over
 * a unit map under an LWLock; an allocation belongs to the backend that
 * made it, or to the service once the backend abandoned its request.
 *
 * IDENTIFICATION
 *		src/arena.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#define UNIT_USED	0xFFFFFFFF		/* inside an allocation, not its start */

/* The unit map, after the slots and the queue in GxShared. */
static uint32 *
arena_map(void)
{
	return gx_queue() + gx_shared->queue_size;
}

/*
 * Allocate 'bytes' (rounded up to whole units).  Returns false when the
 * arena has no run of free units that long; the caller then runs on the
 * CPU engine or waits for its own earlier batches.
 */
bool
gx_arena_alloc(Size bytes, uint64 *offset, uint64 *len)
{
	uint32	   *map = arena_map();
	uint32		need = (bytes + GX_ARENA_UNIT - 1) / GX_ARENA_UNIT;
	uint32		nunits = gx_shared->arena_units;
	uint32		run = 0;
	bool		ok = false;

	if (need == 0)
		need = 1;
	if (need > nunits)
		return false;

	LWLockAcquire(gx_shared->arena_lock, LW_EXCLUSIVE);
	for (uint32 i = 0; i < nunits; i++)
	{
		if (map[i] != 0)
		{
			run = 0;
			/* skip over the whole allocation */
			if (map[i] != UNIT_USED)
				i += map[i] - 1;
			continue;
		}
		if (++run == need)
		{
			uint32		start = i + 1 - need;

			map[start] = need;
			for (uint32 j = start + 1; j <= i; j++)
				map[j] = UNIT_USED;
			gx_shared->arena_units_used += need;
			*offset = (uint64) start * GX_ARENA_UNIT;
			*len = (uint64) need * GX_ARENA_UNIT;
			ok = true;
			break;
		}
	}
	LWLockRelease(gx_shared->arena_lock);
	return ok;
}

/* Return an allocation made by gx_arena_alloc. */
void
gx_arena_free(uint64 offset, uint64 len)
{
	uint32	   *map = arena_map();
	uint32		start = offset / GX_ARENA_UNIT;
	uint32		n;

	LWLockAcquire(gx_shared->arena_lock, LW_EXCLUSIVE);
	n = map[start];
	if (n == 0 || n == UNIT_USED || (uint64) n * GX_ARENA_UNIT != len)
	{
		LWLockRelease(gx_shared->arena_lock);
		elog(WARNING, "gpuext: bad DMA arena free at offset " UINT64_FORMAT, offset);
		return;
	}
	for (uint32 j = start; j < start + n; j++)
		map[j] = 0;
	gx_shared->arena_units_used -= n;
	LWLockRelease(gx_shared->arena_lock);
}

uint64
gx_arena_bytes_in_use(void)
{
	uint64		used;

	LWLockAcquire(gx_shared->arena_lock, LW_SHARED);
	used = (uint64) gx_shared->arena_units_used * GX_ARENA_UNIT;
	LWLockRelease(gx_shared->arena_lock);
	return used;
}
