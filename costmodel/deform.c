/*-------------------------------------------------------------------------
 * deform.c
 *		Charge PostgreSQL's sequential scans for reading their filter's
 *		columns out of each row, the work a GpuScan's device does instead.
 *
 * PostgreSQL prices a sequential scan's row at cpu_tuple_cost and its
 * filter at its operators, whichever columns the filter reads.  To read
 * column k of a row the executor steps over every column before it; up to
 * the first variable-width one (text, numeric) each offset is known in
 * advance, past it each has to be computed from the lengths before it.
 * On the H100 a 50 000-row table filtered on its eighth column, behind a
 * numeric and a text one (cm_50k_topn), scanned in about twice its
 * estimate at the calibrated cost unit, and its GpuScan, which ran 35 %
 * faster, was estimated a few percent dearer (sessions 13-15).
 *
 * gpuext_calibrate() measures stock_deform_us, the microseconds of one
 * such column a row (a count filtered on the last of ten columns against
 * the same count filtered on the third, calibrate.c).  From the
 * set_rel_pathlist hook (indexread.c, before the GpuScan paths are added)
 * every unparameterized sequential scan of a base relation is charged,
 * per row it reads, the columns past the first variable-width one up to
 * the last its filter reads, less, per row it returns, those up to the
 * last that both its filter and its output read: a GpuScan's device
 * evaluates the filter, and the host steps over the columns of the rows
 * it returns only.  The default, 0, changes nothing.
 *
 * Approximate: a row with a NULL makes every later column's offset
 * computed too, which this leaves out; index scans are not charged (their
 * filters read few rows).
 *
 * IDENTIFICATION
 *		costmodel/deform.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/table.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "optimizer/restrictinfo.h"
#include "utils/rel.h"

#include "cost.h"
#include "gpuext.h"

/*
 * The last user column that the expressions in 'exprs' read from relation
 * 'relid' (a whole-row reference reads them all: 'natts'); 0 for none.
 */
static int
last_column_read(List *exprs, Index relid, int natts)
{
	Bitmapset  *attrs = NULL;
	int			last = 0;
	int			member = -1;

	pull_varattnos((Node *) exprs, relid, &attrs);
	while ((member = bms_next_member(attrs, member)) >= 0)
	{
		int			attno = member + FirstLowInvalidHeapAttributeNumber;

		if (attno == InvalidAttrNumber)
			return natts;
		last = Max(last, attno);
	}
	return last;
}

/*
 * Microseconds a serial sequential scan of 'rel' spends stepping over
 * columns that a GpuScan's host does not (see the file comment).
 */
static double
deform_us(RelOptInfo *rel, RangeTblEntry *rte)
{
	Relation	relation = table_open(rte->relid, NoLock);
	TupleDesc	desc = RelationGetDescr(relation);
	int			natts = desc->natts;
	int			first_varwidth = 0;
	int			filter_last;
	int			output_last;
	double		us;

	for (int i = 0; i < natts && first_varwidth == 0; i++)
		if (TupleDescAttr(desc, i)->attlen < 0)
			first_varwidth = i + 1;
	table_close(relation, NoLock);
	if (first_varwidth == 0)
		return 0;
	filter_last = last_column_read(extract_actual_clauses(rel->baserestrictinfo, false),
								   rel->relid, natts);
	output_last = last_column_read(rel->reltarget->exprs, rel->relid, natts);
#define COLUMNS_PAST(k) Max((k) - first_varwidth, 0)
	us = (rel->tuples * COLUMNS_PAST(filter_last) -
		  rel->rows * COLUMNS_PAST(Min(filter_last, output_last))) * gx_stock_deform_us;
#undef COLUMNS_PAST
	return Max(us, 0);
}

/* Add 'charge' (divided among a partial path's processes) to seq scans. */
static void
charge_seqscans(List **paths, Cost charge)
{
	ListCell   *lc;
	bool		changed = false;

	foreach(lc, *paths)
	{
		Path	   *path = (Path *) lfirst(lc);

		if (path->pathtype != T_SeqScan || path->param_info != NULL)
			continue;
		path->total_cost += path->parallel_workers > 0 ?
			charge / gx_parallel_divisor(path->parallel_workers) : charge;
		changed = true;
	}
	if (changed)
		list_sort(*paths, gx_compare_total_cost);
}

/*
 * Charge the sequential scans of base relation 'rel' (a plain table) for
 * stepping over the columns its filter reads; called from indexread.c's
 * set_rel_pathlist hook.
 */
void
gx_deform_recost_paths(RelOptInfo *rel, RangeTblEntry *rte)
{
	Cost		charge;

	if (gx_stock_deform_us <= 0 || rte->rtekind != RTE_RELATION ||
		rel->baserestrictinfo == NIL)
		return;
	charge = deform_us(rel, rte) / gx_cost_unit_us;
	if (charge <= 0)
		return;
	charge_seqscans(&rel->pathlist, charge);
	charge_seqscans(&rel->partial_pathlist, charge);
}
