/*-------------------------------------------------------------------------
 * pipeline.h
 *		A pipeline of page batches through an engine: while the executor
 *		consumes the results of one batch, the next ones are being read
 *		and evaluated on the device.
 *
 * IDENTIFICATION
 *		src/pipeline.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_PIPELINE_H
#define GPUEXT_PIPELINE_H

#include "gpuext.h"
#include "gx_program.h"

#define GX_PIPELINE_DEPTH 3		/* batches in flight or being consumed */

typedef struct GxPipeBatch
{
	GxPendingBatch pb;
	Buffer	   *buffers;		/* pinned pages of the batch */
	uint32		npages;
	bool		used;
} GxPipeBatch;

typedef struct GxPipeline
{
	GxEngine	engine;
	Relation	rel;
	Snapshot	snapshot;
	ParallelBlockTableScanDesc pscan;	/* shared state of a parallel scan */
	GxPageSource *src;
	const GxProgram *program;	/* copied into every batch */
	Size		program_len;	/* bytes copied (a program may carry a spec) */
	uint32		task_id;		/* task the batches work on (GX_REQ_AGG) */
	uint64		batch_arg;		/* GxBatch.arg of every batch */
	uint64		batch_arg2;		/* GxBatch.arg2 of every batch */
	int			kind;			/* GxRequestKind of the batches */
	Size		out_per_page;
	uint32		max_pages;
	int			depth;			/* batches kept in flight */
	GxPipeBatch batches[GX_PIPELINE_DEPTH];
	int			head;			/* oldest batch */
	int			count;			/* batches started and not yet released */
	bool		source_done;
	/* statistics for EXPLAIN ANALYZE */
	uint64		nbatches;
	uint64		npages;
	bool		cache_open;		/* reading through a column cache */
	uint32		cache_id;		/* its CPU engine id, for the batches */
	uint64		cached_pages;	/* pages taken from it */
	uint64		cached_in_batches;	/* of those, pages with rows (in batches) */
	uint64		cached_pages_read;	/* of those, pinned for rows returned */
	uint32		cache_slot;		/* GPU batches: its registry slot + 1 */
	uint64		cache_gen;		/* and generation */
	double		page_ms;		/* pinning and describing pages */
	double		wait_ms;		/* waiting for batch results */
} GxPipeline;

extern void gx_pipeline_init(GxPipeline *p, Relation rel, Snapshot snapshot, int kind,
							 Size out_per_page);
extern void gx_pipeline_set_program(GxPipeline *p, const GxProgram *program, Size len);
extern GxPipeBatch *gx_pipeline_next(GxPipeline *p);
extern void gx_pipeline_release(GxPipeline *p, GxPipeBatch *b);
extern void gx_pipeline_heap_tuple(GxPipeline *p, GxPipeBatch *b, uint32 i, OffsetNumber off,
								   HeapTuple tup);
extern void gx_pipeline_explain_batches(GxPipeline *p, struct ExplainState *es);
extern void gx_pipeline_explain_cache(GxPipeline *p, bool rows_returned, struct ExplainState *es);
extern void gx_pipeline_reset(GxPipeline *p);
extern void gx_pipeline_end(GxPipeline *p);
extern void gx_pipeline_explain_times(GxPipeline *p, struct ExplainState *es);

#endif							/* GPUEXT_PIPELINE_H */
