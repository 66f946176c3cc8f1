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
 * the same count filtered on the third, src/calibrate.c).  The planner's
 * set_rel_pathlist hook (src/paths.c, before the GpuScan paths are added)
 * charges every unparameterized sequential scan of a base relation,
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
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "optimizer/restrictinfo.h"

#include "cost.h"

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
 * Microseconds a serial sequential scan of 'rel' (its columns 'desc')
 * spends stepping over columns that a GpuScan's host does not (see the
 * file comment).
 */
static double
deform_us(const GxCostParams *p, RelOptInfo *rel, TupleDesc desc)
{
	int			natts = desc->natts;
	int			first_varwidth = 0;
	int			filter_last;
	int			output_last;
	double		us;

	for (int i = 0; i < natts && first_varwidth == 0; i++)
		if (TupleDescAttr(desc, i)->attlen < 0)
			first_varwidth = i + 1;
	if (first_varwidth == 0)
		return 0;
	filter_last = last_column_read(extract_actual_clauses(rel->baserestrictinfo, false),
								   rel->relid, natts);
	output_last = last_column_read(rel->reltarget->exprs, rel->relid, natts);
#define COLUMNS_PAST(k) Max((k) - first_varwidth, 0)
	us = (rel->tuples * COLUMNS_PAST(filter_last) -
		  rel->rows * COLUMNS_PAST(Min(filter_last, output_last))) * p->stock_deform_us;
#undef COLUMNS_PAST
	return Max(us, 0);
}

/*
 * What a serial sequential scan of base relation 'rel' (a plain table of
 * columns 'desc') is charged for stepping over the columns its filter
 * reads, in cost units; a partial scan's processes divide it.  0 when
 * nothing is charged.
 */
Cost
gx_deform_charge(const GxCostParams *p, RelOptInfo *rel, TupleDesc desc)
{
	if (p->stock_deform_us <= 0 || rel->baserestrictinfo == NIL)
		return 0;
	return deform_us(p, rel, desc) / p->cost_unit_us;
}
