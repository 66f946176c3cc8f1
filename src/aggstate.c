/*-------------------------------------------------------------------------
 * aggstate.c
 *		Finish an aggregate from the device's accumulators with PostgreSQL's
 *		own final function, so the result is PostgreSQL's to the last digit.
 *
 * The device keeps exact sums (count, sum and sum of squares as 128-bit
 * integers).  PostgreSQL's variance and stddev aggregates keep the same
 * three numbers in an internal state and compute the result from them in
 * numeric arithmetic (numeric.c: numeric_stddev_internal), with scales and
 * rounding of its own.  Rather than imitate that arithmetic, we write the
 * sums in the aggregate's serialized-state format (the one parallel
 * aggregation ships between processes), read it back with the
 * aggregate's deserialization function and call its final function: the
 * very code a stock plan would run.
 *
 * The serialized formats are PostgreSQL 15's (numeric.c):
 *	  numeric_poly_serialize (int2/int4 inputs): int64 N, var sumX, var sumX2
 *	  numeric_serialize (int8/numeric inputs): int64 N, var sumX, var sumX2,
 *		int32 maxScale, int64 maxScaleCount, int64 NaNcount, pInfcount,
 *		nInfcount
 * where a var is int32 ndigits, weight, sign, dscale, then ndigits int16
 * base-10000 digits: the fields numeric_send writes as int16s, in the same
 * order.  The regression tests compare every result with the stock
 * plan's, so a change of format shows at once.
 *
 * IDENTIFICATION
 *		src/aggstate.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "access/htup_details.h"
#include "catalog/pg_aggregate.h"
#include "fmgr.h"
#include "libpq/pqformat.h"
#include "nodes/execnodes.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/numeric.h"
#include "utils/syscache.h"

#include "aggstate.h"

/*
 * Append a numeric value in the serialized-state 'var' layout: the
 * header fields of numeric_send widened from int16 to int32, then the
 * digits.
 */
static void
append_numeric_var(StringInfo buf, Datum num)
{
	bytea	   *wire = DatumGetByteaPP(DirectFunctionCall1(numeric_send, num));
	StringInfoData in;
	int			ndigits;

	in.data = VARDATA_ANY(wire);
	in.len = VARSIZE_ANY_EXHDR(wire);
	in.maxlen = in.len;
	in.cursor = 0;
	ndigits = (int16) pq_getmsgint(&in, 2);
	pq_sendint32(buf, ndigits);
	pq_sendint32(buf, (int16) pq_getmsgint(&in, 2));	/* weight */
	pq_sendint32(buf, (uint16) pq_getmsgint(&in, 2));	/* sign */
	pq_sendint32(buf, (uint16) pq_getmsgint(&in, 2));	/* dscale */
	for (int i = 0; i < ndigits; i++)
		pq_sendint16(buf, (int16) pq_getmsgint(&in, 2));
}

/* PostgreSQL's functions that finish one variance-like aggregate */
struct GxStateFinisher
{
	bool		numeric_state;	/* numeric_serialize's layout (else numeric_poly_) */
	FmgrInfo	deserialfn;
	FmgrInfo	finalfn;
	AggState   *agg_node;		/* what the functions see as their caller */
};

/*
 * Look up the state functions of a variance or standard deviation
 * aggregate once, for every group the node will finish: those of its
 * numeric state, or (over float4/float8, whose state is float8[3]) its
 * final function alone.
 */
GxStateFinisher *
gx_variance_finisher(Oid aggfnoid)
{
	GxStateFinisher *f = palloc0(sizeof(GxStateFinisher));
	HeapTuple	tup;
	Form_pg_aggregate agg;

	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for aggregate %u", aggfnoid);
	agg = (Form_pg_aggregate) GETSTRUCT(tup);
	if (agg->aggtranstype != FLOAT8ARRAYOID &&
		agg->aggserialfn != F_NUMERIC_POLY_SERIALIZE && agg->aggserialfn != F_NUMERIC_SERIALIZE)
		elog(ERROR, "gpuext: cannot build the state of aggregate %u", aggfnoid);
	f->numeric_state = (agg->aggserialfn == F_NUMERIC_SERIALIZE);
	if (agg->aggtranstype != FLOAT8ARRAYOID)
		fmgr_info(agg->aggdeserialfn, &f->deserialfn);
	fmgr_info(agg->aggfinalfn, &f->finalfn);
	ReleaseSysCache(tup);
	/* deserialization functions check that an Agg node calls them */
	f->agg_node = makeNode(AggState);
	return f;
}

/* Call a state function on 'nargs' (at most two) non-null arguments. */
static Datum
call_as_aggregate(GxStateFinisher *f, FmgrInfo *flinfo, int nargs, Datum arg0, Datum arg1,
				  bool *isnull)
{
	LOCAL_FCINFO(fcinfo, 2);
	Datum		result;

	InitFunctionCallInfoData(*fcinfo, flinfo, nargs, InvalidOid, (Node *) f->agg_node, NULL);
	fcinfo->args[0].value = arg0;
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = arg1;
	fcinfo->args[1].isnull = false;
	result = FunctionCallInvoke(fcinfo);
	*isnull = fcinfo->isnull;
	return result;
}

/*
 * The final value of a variance or standard deviation aggregate over n
 * values whose exact sum and sum of squares are given as numerics (the
 * sum at the inputs' largest display scale, the squares at twice that).
 */
Datum
gx_finish_variance(GxStateFinisher *f, int64 n, Datum sum, Datum sum_squares, int max_scale,
				   bool *isnull)
{
	StringInfoData buf;
	Datum		state;
	bool		state_isnull;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, n);
	append_numeric_var(&buf, sum);
	append_numeric_var(&buf, sum_squares);
	if (f->numeric_state)
	{
		pq_sendint32(&buf, max_scale);	/* maxScale */
		pq_sendint64(&buf, n);	/* maxScaleCount: read by the inverse transition only */
		pq_sendint64(&buf, 0);	/* NaNcount: NaN inputs never reach the device */
		pq_sendint64(&buf, 0);	/* pInfcount */
		pq_sendint64(&buf, 0);	/* nInfcount */
	}
	state = call_as_aggregate(f, &f->deserialfn, 2, PointerGetDatum(pq_endtypsend(&buf)),
							  (Datum) 0, &state_isnull);
	return call_as_aggregate(f, &f->finalfn, 1, state, (Datum) 0, isnull);
}

/*
 * Its value over n inputs with this sum and sum of squared deviations from
 * their mean: the state PostgreSQL's transition function would have
 * reached ({N, Sx, Sxx}), given to its final function.
 */
Datum
gx_finish_float_variance(GxStateFinisher *f, double n, double sum, double deviations,
						 bool *isnull)
{
	Datum		elems[3] = {Float8GetDatum(n), Float8GetDatum(sum), Float8GetDatum(deviations)};
	ArrayType  *state = construct_array(elems, 3, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
										TYPALIGN_DOUBLE);

	return call_as_aggregate(f, &f->finalfn, 1, PointerGetDatum(state), (Datum) 0, isnull);
}
