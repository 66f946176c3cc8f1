/*-------------------------------------------------------------------------
 * colcache.h
 *		The column cache (src/colcache.c): what a scan needs to read
 *		cached pages instead of heap pages.
 *
 * IDENTIFICATION
 *		src/colcache.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_COLCACHE_H
#define GPUEXT_COLCACHE_H

#include "gpuext.h"
#include "nodes/pathnodes.h"
#include "gx_colcache.h"

struct GxScanCostInput;

/* a scan's mapping of one relation's cache */
typedef struct GxCcScan
{
	struct dsm_segment *seg;
	const GxColCache *cc;
	Relation	rel;
	Buffer		vmbuf;			/* visibility map page last read */
	uint32		cpu_id;			/* the CPU engine's table id of the image */
	int			slot;			/* its registry slot (the GPU service's name) */
	uint64		generation;
} GxCcScan;

extern int	gpuext_cache_memory_limit_mb;
extern bool gpuext_enable_cache;
extern bool gpuext_cache_gpu;

extern void gx_colcache_init(void);
extern void gx_colcache_shmem_request(void);
extern void gx_colcache_shmem_startup(void);
extern GxCcScan *gx_colcache_open(Relation rel, Snapshot snapshot, const GxProgram *prog);
extern int64 gx_colcache_slot(GxCcScan *s, BlockNumber blkno);
extern void gx_colcache_cost_input(PlannerInfo *root, RelOptInfo *rel, List *exprs,
								   struct GxScanCostInput *in);
extern void gx_colcache_close(GxCcScan *s);
extern struct dsm_segment *gx_colcache_attach_slot(int slot, uint64 generation);
extern bool gx_colcache_slot_current(int slot, uint64 generation);
extern bool gx_colcache_image_ok(const GxColCache *cc, Size len);

#endif							/* GPUEXT_COLCACHE_H */
