/*-------------------------------------------------------------------------
 * codegen.c
 *		Compile PostgreSQL expression trees into device programs.
 *
 * The planner asks, qual by qual, whether an expression can run on the
 * device (gx_qual_is_device_executable); the executor then builds one
 * program for all the device quals of a scan (gx_build_qual_program),
 * evaluating Params first so the program holds only constants.  The
 * program format and its semantics are in cuda/gx_program.h.
 *
 * What is supported: Var (user columns), Const, Param; comparisons and
 * arithmetic on bool, int2/4/8, float4/8, numeric, date, timestamp(tz),
 * text/varchar/bpchar (equality with deterministic collations, ordering
 * only in the C collation, LIKE, substr); AND/OR/NOT, IS [NOT] NULL,
 * IS [NOT] TRUE/FALSE/UNKNOWN, BETWEEN (as AND), IN / = ANY(array), CASE,
 * COALESCE, NULLIF, abs, mod, and casts among these types.  Everything
 * else stays on the host.
 *
 * IDENTIFICATION
 *		src/codegen.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "access/htup_details.h"
#include "access/tupdesc.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_database.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "mb/pg_wchar.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "codegen.h"

/* kinds of supported functions */
typedef enum GxFuncKind
{
	GXF_CMP = 1,
	GXF_ARITH,
	GXF_UNARY,
	GXF_CAST,
	GXF_TEXT_EQ,				/* equality: deterministic collations */
	GXF_TEXT_ORD,				/* ordering: C collation only */
	GXF_LIKE,
	GXF_SUBSTR,
	GXF_DATE_ARITH
} GxFuncKind;

typedef struct GxFuncInfo
{
	Oid			funcid;
	uint8		kind;			/* GxFuncKind */
	uint8		type;			/* GxType (see codegen_funcs.h) */
	uint8		flags;
} GxFuncInfo;

static const GxFuncInfo gx_funcs[] = {
#include "codegen_funcs.h"
};

/* state of one compilation */
typedef struct GxCodegen
{
	Index		varno;
	TupleDesc	tupdesc;
	bool		check_only;		/* planner: decide support, emit nothing real */
	PlanState  *parent;
	ExprContext *econtext;
	int			encoding;		/* GX_ENC_* or -1 when unsupported */

	StringInfoData instrs;
	StringInfoData consts;
	StringInfoData blob;
	int			ninstrs;
	int			nconsts;

	/*
	 * Registers: attributes are loaded before any instruction runs, so they
	 * take registers from the top down; temporaries go from the bottom up
	 * and are reused by each qual.
	 */
	int16		att_reg[GX_MAX_ATTRS + 1];	/* by attno, -1 = none */
	uint8		att_type[GX_MAX_ATTRS + 1];
	int			max_attno;
	int			next_reg;		/* next temporary */
	int			max_temp;		/* highest temporary used by any qual so far */
	int			next_att_reg;	/* next attribute register */

	int			casetest_reg;	/* register of the current CASE operand */
	int			casetest_type;

	const char *why;			/* first reason of failure */
} GxCodegen;

static int	gen_expr(GxCodegen *cg, Expr *expr, int *type);

/* Record the first reason of failure; returns -1 for convenience. */
static int
cg_fail(GxCodegen *cg, const char *why)
{
	if (cg->why == NULL)
		cg->why = why;
	return -1;
}

static const GxFuncInfo *
lookup_func(Oid funcid)
{
	for (int i = 0; i < lengthof(gx_funcs); i++)
		if (gx_funcs[i].funcid == funcid)
			return &gx_funcs[i];
	return NULL;
}

/*
 * The value class of a type, or 0 when the device cannot hold it (device
 * programs here, GpuJoin's stored inner columns in gpujoin.c).
 */
int
gx_type_class(Oid typid)
{
	switch (getBaseType(typid))
	{
		case BOOLOID:
			return GX_TYPE_BOOL;
		case INT2OID:
			return GX_TYPE_INT2;
		case INT4OID:
			return GX_TYPE_INT4;
		case INT8OID:
			return GX_TYPE_INT8;
		case FLOAT4OID:
			return GX_TYPE_FLOAT4;
		case FLOAT8OID:
			return GX_TYPE_FLOAT8;
		case NUMERICOID:
			return GX_TYPE_NUMERIC;
		case DATEOID:
			return GX_TYPE_DATE;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return GX_TYPE_TIMESTAMP;
		case TEXTOID:
		case VARCHAROID:
			return GX_TYPE_TEXT;
		case BPCHAROID:
			return GX_TYPE_BPCHAR;
		default:
			return 0;
	}
}

static bool
is_int_class(int t)
{
	return t == GX_TYPE_INT2 || t == GX_TYPE_INT4 || t == GX_TYPE_INT8;
}

static bool
is_float_class(int t)
{
	return t == GX_TYPE_FLOAT4 || t == GX_TYPE_FLOAT8;
}

/* Allocate a temporary register. */
static int
new_reg(GxCodegen *cg)
{
	if (cg->next_reg > cg->next_att_reg)
		return cg_fail(cg, "expression needs too many registers");
	if (cg->next_reg > cg->max_temp)
		cg->max_temp = cg->next_reg;
	return cg->next_reg++;
}

/* Append an instruction; returns its index. */
static int
emit(GxCodegen *cg, int op, int type, int flags, int dst, int a, int b, uint32 c)
{
	GxInstr		in;

	memset(&in, 0, sizeof(in));
	in.op = op;
	in.type = type;
	in.flags = flags;
	in.dst = dst < 0 ? 0 : dst;
	in.a = a < 0 ? 0 : a;
	in.b = b < 0 ? 0 : b;
	in.e = GX_NO_REG;
	in.c = c;
	appendBinaryStringInfo(&cg->instrs, (char *) &in, sizeof(in));
	return cg->ninstrs++;
}

static GxInstr *
instr_at(GxCodegen *cg, int idx)
{
	return (GxInstr *) (cg->instrs.data + idx * sizeof(GxInstr));
}

/* Point the jump at 'idx' to the next instruction to be emitted. */
static void
patch_here(GxCodegen *cg, int idx)
{
	instr_at(cg, idx)->c = cg->ninstrs;
}

/*
 * Encode a Datum of class 'type' as a constant; returns its index, or -1
 * when the device cannot hold the value (numeric out of range, NaN).
 */
static int
add_const(GxCodegen *cg, int type, Datum value, bool isnull)
{
	GxConst		k;

	memset(&k, 0, sizeof(k));
	k.type = type;
	k.isnull = isnull;
	if (!isnull)
	{
		switch (type)
		{
			case GX_TYPE_BOOL:
				k.lo = DatumGetBool(value);
				break;
			case GX_TYPE_INT2:
				k.lo = DatumGetInt16(value);
				break;
			case GX_TYPE_INT4:
				k.lo = DatumGetInt32(value);
				break;
			case GX_TYPE_INT8:
				k.lo = DatumGetInt64(value);
				break;
			case GX_TYPE_FLOAT4:
				{
					double		d = DatumGetFloat4(value);

					memcpy(&k.lo, &d, sizeof(d));
					break;
				}
			case GX_TYPE_FLOAT8:
				{
					double		d = DatumGetFloat8(value);

					memcpy(&k.lo, &d, sizeof(d));
					break;
				}
			case GX_TYPE_DATE:
				k.lo = DatumGetDateADT(value);
				break;
			case GX_TYPE_TIMESTAMP:
				k.lo = DatumGetTimestamp(value);
				break;
			case GX_TYPE_NUMERIC:
				{
					struct varlena *v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(value));
					__int128	n;
					int32		scale;

					if (gx_numeric_decode((const unsigned char *) VARDATA_ANY(v),
										  VARSIZE_ANY_EXHDR(v), &n, &scale) != 0)
						return cg_fail(cg, "numeric constant does not fit in 128 bits");
					k.lo = (int64) (uint64) ((unsigned __int128) n);
					k.hi = (int64) (n >> 64);
					k.scale = scale;
					break;
				}
			case GX_TYPE_TEXT:
			case GX_TYPE_BPCHAR:
				{
					struct varlena *v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(value));

					k.blob_off = cg->blob.len;
					k.blob_len = VARSIZE_ANY_EXHDR(v);
					appendBinaryStringInfo(&cg->blob, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
					break;
				}
			default:
				return cg_fail(cg, "unsupported constant type");
		}
	}
	appendBinaryStringInfo(&cg->consts, (char *) &k, sizeof(k));
	return cg->nconsts++;
}

/*
 * The value of a Param at executor start.  Any kind of Param works: it is
 * evaluated with the executor's own machinery in the node's context.
 */
static Datum
eval_param(GxCodegen *cg, Expr *param, bool *isnull)
{
	ExprState  *es = ExecInitExpr(param, cg->parent);

	return ExecEvalExprSwitchContext(es, cg->econtext, isnull);
}

/* Load a Const or an evaluated Param into a register. */
static int
gen_value(GxCodegen *cg, Expr *expr, Oid typid, Datum value, bool isnull, int *type)
{
	int			t = gx_type_class(typid);
	int			k,
				r;

	if (t == 0)
		return cg_fail(cg, "unsupported constant type");
	*type = t;
	if (cg->check_only && !IsA(expr, Const))
		return new_reg(cg);		/* the value is only known at execution */
	k = add_const(cg, t, value, isnull);
	if (k < 0)
		return -1;
	r = new_reg(cg);
	if (r < 0)
		return -1;
	emit(cg, GX_OP_CONST, t, 0, r, 0, 0, k);
	return r;
}

/* A user column of the scanned relation: its attribute register. */
static int
gen_var(GxCodegen *cg, Var *var, int *type)
{
	int			t = gx_type_class(var->vartype);
	AttrNumber	attno = var->varattno;

	if (var->varno != cg->varno || var->varlevelsup != 0)
		return cg_fail(cg, "column of another relation");
	if (attno <= 0 || attno > GX_MAX_ATTRS || attno > cg->tupdesc->natts)
		return cg_fail(cg, "system or whole-row column");
	if (t == 0)
		return cg_fail(cg, "unsupported column type");
	*type = t;
	if (cg->att_reg[attno] < 0)
	{
		int			r = cg->next_att_reg--;

		/*
		 * Attributes are loaded before any instruction runs: no earlier
		 * qual's temporaries may have used this register.
		 */
		if (r < cg->next_reg || r <= cg->max_temp)
			return cg_fail(cg, "expression needs too many registers");
		cg->att_reg[attno] = r;
		cg->att_type[attno] = t;
		if (attno > cg->max_attno)
			cg->max_attno = attno;
	}
	return cg->att_reg[attno];
}

/*
 * Make register r of class 'from' usable as class 'to' in a comparison
 * or arithmetic of class 'to'.  Integers share one representation, and
 * so do floats; dates become timestamps.
 */
static int
coerce_operand(GxCodegen *cg, int r, int from, int to, bool for_compare)
{
	int			d;

	if (from == to)
		return r;
	if (is_int_class(from) && is_int_class(to))
		return r;
	if (is_float_class(from) && is_float_class(to))
		return r;
	if (from == GX_TYPE_DATE && to == GX_TYPE_TIMESTAMP)
	{
		d = new_reg(cg);
		if (d < 0)
			return -1;
		emit(cg, GX_OP_CAST, GX_TYPE_TIMESTAMP,
			 GX_TYPE_DATE | (for_compare ? GX_CAST_FOR_COMPARE : 0), d, r, 0, 0);
		return d;
	}
	return cg_fail(cg, "incompatible operand types");
}

/* Is a collate string the C locale? */
static bool
locale_is_c(const char *name)
{
	return strcmp(name, "C") == 0 || strcmp(name, "POSIX") == 0;
}

/*
 * Does the collation sort by bytes (the C or POSIX locale)?  Read from the
 * catalogs (pg_locale.h would drag in ICU's headers).
 */
static bool
collation_is_c(Oid collid)
{
	HeapTuple	tp;
	bool		isnull;
	Datum		d;
	bool		result = false;

	if (collid == C_COLLATION_OID || collid == POSIX_COLLATION_OID)
		return true;
	if (collid == DEFAULT_COLLATION_OID)
	{
		tp = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));
		if (!HeapTupleIsValid(tp))
			return false;
		d = SysCacheGetAttr(DATABASEOID, tp, Anum_pg_database_datcollate, &isnull);
		result = !isnull &&
			((Form_pg_database) GETSTRUCT(tp))->datlocprovider == COLLPROVIDER_LIBC &&
			locale_is_c(TextDatumGetCString(d));
		ReleaseSysCache(tp);
		return result;
	}
	tp = SearchSysCache1(COLLOID, ObjectIdGetDatum(collid));
	if (!HeapTupleIsValid(tp))
		return false;
	d = SysCacheGetAttr(COLLOID, tp, Anum_pg_collation_collcollate, &isnull);
	result = !isnull &&
		((Form_pg_collation) GETSTRUCT(tp))->collprovider == COLLPROVIDER_LIBC &&
		locale_is_c(TextDatumGetCString(d));
	ReleaseSysCache(tp);
	return result;
}

/* Check the collation rules of a text operation. */
static bool
text_collation_ok(GxCodegen *cg, int kind, Oid collid)
{
	if (kind == GXF_TEXT_ORD)
	{
		if (!OidIsValid(collid) || !collation_is_c(collid))
			return cg_fail(cg, "text ordering depends on the collation") >= 0;
	}
	else if (OidIsValid(collid) && collid != DEFAULT_COLLATION_OID &&
			 !get_collation_isdeterministic(collid))
		return cg_fail(cg, "nondeterministic collation") >= 0;
	return true;
}

/* The pattern of a LIKE: must be a constant (or a Param) text. */
static int
gen_like(GxCodegen *cg, const GxFuncInfo *fi, List *args, Oid collid, int *type)
{
	Expr	   *pat = lsecond(args);
	int			a,
				ta,
				k,
				d;
	Datum		value;
	bool		isnull;

	if (cg->encoding < 0)
		return cg_fail(cg, "LIKE in this database encoding");
	if (OidIsValid(collid) && collid != DEFAULT_COLLATION_OID &&
		!get_collation_isdeterministic(collid))
		return cg_fail(cg, "nondeterministic collation");
	if (!IsA(pat, Const) && !IsA(pat, Param))
		return cg_fail(cg, "LIKE pattern is not a constant");
	a = gen_expr(cg, linitial(args), &ta);
	if (a < 0)
		return -1;
	if (ta != GX_TYPE_TEXT && ta != GX_TYPE_BPCHAR)
		return cg_fail(cg, "LIKE on a non-text value");
	*type = GX_TYPE_BOOL;
	d = new_reg(cg);
	if (d < 0)
		return -1;
	if (cg->check_only && IsA(pat, Param))
		return d;
	if (IsA(pat, Const))
	{
		value = ((Const *) pat)->constvalue;
		isnull = ((Const *) pat)->constisnull;
	}
	else
		value = eval_param(cg, pat, &isnull);
	if (isnull)
		return cg_fail(cg, "NULL LIKE pattern");
	k = add_const(cg, GX_TYPE_TEXT, value, false);
	if (k < 0)
		return -1;
	/* the escape character: PostgreSQL's default backslash */
	((GxConst *) (cg->consts.data + k * sizeof(GxConst)))->lo = '\\';
	emit(cg, GX_OP_LIKE, GX_TYPE_BOOL, fi->flags, d, a, 0, k);
	return d;
}

/* A call of a supported built-in function (OpExpr or FuncExpr). */
static int
gen_call(GxCodegen *cg, Oid funcid, List *args, Oid collid, int *type)
{
	const GxFuncInfo *fi = lookup_func(funcid);
	int			a = -1,
				b = -1,
				ta = 0,
				tb = 0,
				d;

	if (fi == NULL)
		return cg_fail(cg, "function not supported on the device");
	if (fi->kind == GXF_LIKE)
		return gen_like(cg, fi, args, collid, type);
	if ((fi->kind == GXF_TEXT_EQ || fi->kind == GXF_TEXT_ORD) &&
		!text_collation_ok(cg, fi->kind, collid))
		return -1;
	if (fi->kind == GXF_SUBSTR && cg->encoding < 0)
		return cg_fail(cg, "substr in this database encoding");

	if (list_length(args) >= 1 && (a = gen_expr(cg, linitial(args), &ta)) < 0)
		return -1;
	if (list_length(args) >= 2 && (b = gen_expr(cg, lsecond(args), &tb)) < 0)
		return -1;

	switch (fi->kind)
	{
		case GXF_CMP:
		case GXF_TEXT_EQ:
		case GXF_TEXT_ORD:
			if ((a = coerce_operand(cg, a, ta, fi->type, true)) < 0 ||
				(b = coerce_operand(cg, b, tb, fi->type, true)) < 0)
				return -1;
			*type = GX_TYPE_BOOL;
			d = new_reg(cg);
			if (d >= 0)
				emit(cg, GX_OP_CMP, fi->type, fi->flags, d, a, b, 0);
			return d;
		case GXF_ARITH:
			*type = fi->type;
			d = new_reg(cg);
			if (d >= 0)
				emit(cg, GX_OP_ARITH, fi->type, fi->flags, d, a, b, 0);
			return d;
		case GXF_UNARY:
			*type = fi->type;
			d = new_reg(cg);
			if (d >= 0)
				emit(cg, GX_OP_UNARY, fi->type, fi->flags, d, a, 0, 0);
			return d;
		case GXF_CAST:
			if (ta != fi->flags &&
				!(is_int_class(ta) && is_int_class(fi->flags)) &&
				!(is_float_class(ta) && is_float_class(fi->flags)))
				return cg_fail(cg, "cast from an unexpected type");
			*type = fi->type;
			d = new_reg(cg);
			if (d >= 0)
				emit(cg, GX_OP_CAST, fi->type, fi->flags, d, a, 0, 0);
			return d;
		case GXF_DATE_ARITH:
			*type = fi->type;
			d = new_reg(cg);
			if (d >= 0)
				emit(cg, GX_OP_DATE_ARITH, fi->type, fi->flags, d, a, b, 0);
			return d;
		case GXF_SUBSTR:
			{
				int			e = GX_NO_REG;
				int			idx;

				if (ta != GX_TYPE_TEXT)
					return cg_fail(cg, "substr of a non-text value");
				if (list_length(args) == 3)
				{
					int			te;

					e = gen_expr(cg, lthird(args), &te);
					if (e < 0)
						return -1;
				}
				*type = GX_TYPE_TEXT;
				d = new_reg(cg);
				if (d < 0)
					return -1;
				idx = emit(cg, GX_OP_SUBSTR, GX_TYPE_TEXT, 0, d, a, b, 0);
				instr_at(cg, idx)->e = e;
				return d;
			}
	}
	return cg_fail(cg, "function not supported on the device");
}

/* AND / OR with short-circuit evaluation in argument order, NOT. */
static int
gen_bool(GxCodegen *cg, BoolExpr *be, int *type)
{
	ListCell   *lc;
	int			d,
				t;
	List	   *jumps = NIL;

	*type = GX_TYPE_BOOL;
	if (be->boolop == NOT_EXPR)
	{
		int			a = gen_expr(cg, linitial(be->args), &t);

		if (a < 0)
			return -1;
		if (t != GX_TYPE_BOOL)
			return cg_fail(cg, "NOT of a non-boolean");
		d = new_reg(cg);
		if (d >= 0)
			emit(cg, GX_OP_NOT, GX_TYPE_BOOL, 0, d, a, 0, 0);
		return d;
	}
	d = new_reg(cg);
	if (d < 0)
		return -1;
	emit(cg, be->boolop == AND_EXPR ? GX_OP_AND_INIT : GX_OP_OR_INIT, GX_TYPE_BOOL, 0, d, 0, 0, 0);
	foreach(lc, be->args)
	{
		int			a = gen_expr(cg, lfirst(lc), &t);

		if (a < 0)
			return -1;
		if (t != GX_TYPE_BOOL)
			return cg_fail(cg, "AND/OR of a non-boolean");
		jumps = lappend_int(jumps,
							emit(cg, be->boolop == AND_EXPR ? GX_OP_AND_STEP : GX_OP_OR_STEP,
								 GX_TYPE_BOOL, 0, d, a, 0, 0));
	}
	foreach(lc, jumps)
		patch_here(cg, lfirst_int(lc));
	return d;
}

/* x op ANY/ALL (array) with a constant (or Param) array. */
static int
gen_scalar_array(GxCodegen *cg, ScalarArrayOpExpr *sa, int *type)
{
	const GxFuncInfo *fi = lookup_func(sa->opfuncid);
	Expr	   *arr = lsecond(sa->args);
	Oid			elemtype;
	int			te,
				a,
				ta,
				d,
				first = -1,
				nelems = 0;
	Datum		value;
	bool		isnull;

	if (fi == NULL || (fi->kind != GXF_CMP && fi->kind != GXF_TEXT_EQ && fi->kind != GXF_TEXT_ORD))
		return cg_fail(cg, "array operator not supported on the device");
	if ((fi->kind == GXF_TEXT_EQ || fi->kind == GXF_TEXT_ORD) &&
		!text_collation_ok(cg, fi->kind, sa->inputcollid))
		return -1;
	if (!IsA(arr, Const) && !IsA(arr, Param))
		return cg_fail(cg, "array is not a constant");
	elemtype = get_element_type(exprType((Node *) arr));
	te = gx_type_class(elemtype);
	if (te == 0)
		return cg_fail(cg, "unsupported array element type");
	a = gen_expr(cg, linitial(sa->args), &ta);
	if (a < 0 || (a = coerce_operand(cg, a, ta, fi->type, true)) < 0)
		return -1;
	if (!(te == fi->type || (is_int_class(te) && is_int_class(fi->type)) ||
		  (is_float_class(te) && is_float_class(fi->type))))
		return cg_fail(cg, "array element type needs a conversion");
	*type = GX_TYPE_BOOL;
	d = new_reg(cg);
	if (d < 0)
		return -1;
	if (cg->check_only && IsA(arr, Param))
		return d;

	if (IsA(arr, Const))
	{
		value = ((Const *) arr)->constvalue;
		isnull = ((Const *) arr)->constisnull;
	}
	else
		value = eval_param(cg, arr, &isnull);
	if (isnull)
		return cg_fail(cg, "NULL array");
	{
		ArrayType  *at = DatumGetArrayTypeP(value);
		int16		typlen;
		bool		typbyval;
		char		typalign;
		Datum	   *elems;
		bool	   *nulls;

		get_typlenbyvalalign(ARR_ELEMTYPE(at), &typlen, &typbyval, &typalign);
		deconstruct_array(at, ARR_ELEMTYPE(at), typlen, typbyval, typalign,
						  &elems, &nulls, &nelems);
		if (nelems > 65535)
			return cg_fail(cg, "array too long for the device");
		for (int i = 0; i < nelems; i++)
		{
			int			k = add_const(cg, te, elems[i], nulls[i]);

			if (k < 0)
				return -1;
			if (first < 0)
				first = k;
		}
	}
	emit(cg, GX_OP_IN, fi->type, fi->flags | (sa->useOr ? GX_IN_ANY : 0), d, a, nelems,
		 first < 0 ? 0 : first);
	return d;
}

/* CASE [arg] WHEN ... THEN ... ELSE ... END */
static int
gen_case(GxCodegen *cg, CaseExpr *ce, int *type)
{
	int			saved_reg = cg->casetest_reg;
	int			saved_type = cg->casetest_type;
	int			rtype = gx_type_class(ce->casetype);
	int			d;
	List	   *ends = NIL;
	ListCell   *lc;

	if (rtype == 0)
		return cg_fail(cg, "unsupported CASE result type");
	if (ce->arg)
	{
		int			t;
		int			a = gen_expr(cg, ce->arg, &t);

		if (a < 0)
			return -1;
		cg->casetest_reg = a;
		cg->casetest_type = t;
	}
	d = new_reg(cg);
	if (d < 0)
		return -1;
	foreach(lc, ce->args)
	{
		CaseWhen   *w = lfirst_node(CaseWhen, lc);
		int			t,
					c,
					r,
					skip;

		c = gen_expr(cg, w->expr, &t);
		if (c < 0)
			return -1;
		skip = emit(cg, GX_OP_JUMP_IF_NOT_TRUE, 0, 0, 0, c, 0, 0);
		r = gen_expr(cg, w->result, &t);
		if (r < 0)
			return -1;
		if (t != rtype && !(is_int_class(t) && is_int_class(rtype)))
			return cg_fail(cg, "CASE branches of different types");
		emit(cg, GX_OP_MOVE, rtype, 0, d, r, 0, 0);
		ends = lappend_int(ends, emit(cg, GX_OP_JUMP, 0, 0, 0, 0, 0, 0));
		patch_here(cg, skip);
	}
	if (ce->defresult)
	{
		int			t;
		int			r = gen_expr(cg, ce->defresult, &t);

		if (r < 0)
			return -1;
		emit(cg, GX_OP_MOVE, rtype, 0, d, r, 0, 0);
	}
	else
	{
		int			k = add_const(cg, rtype, (Datum) 0, true);

		if (k < 0)
			return -1;
		emit(cg, GX_OP_CONST, rtype, 0, d, 0, 0, k);
	}
	foreach(lc, ends)
		patch_here(cg, lfirst_int(lc));
	cg->casetest_reg = saved_reg;
	cg->casetest_type = saved_type;
	*type = rtype;
	return d;
}

/* COALESCE(a, b, ...): the first non-null argument, evaluated lazily. */
static int
gen_coalesce(GxCodegen *cg, CoalesceExpr *ce, int *type)
{
	int			rtype = gx_type_class(ce->coalescetype);
	int			d = new_reg(cg);
	List	   *ends = NIL;
	ListCell   *lc;

	if (rtype == 0)
		return cg_fail(cg, "unsupported COALESCE type");
	if (d < 0)
		return -1;
	foreach(lc, ce->args)
	{
		int			t;
		int			r = gen_expr(cg, lfirst(lc), &t);

		if (r < 0)
			return -1;
		emit(cg, GX_OP_MOVE, rtype, 0, d, r, 0, 0);
		if (lnext(ce->args, lc))
			ends = lappend_int(ends, emit(cg, GX_OP_JUMP_IF_NOT_NULL, 0, 0, 0, d, 0, 0));
	}
	foreach(lc, ends)
		patch_here(cg, lfirst_int(lc));
	*type = rtype;
	return d;
}

/* Compile one expression node; returns its register or -1. */
static int
gen_expr(GxCodegen *cg, Expr *expr, int *type)
{
	check_stack_depth();
	if (cg->why)
		return -1;
	switch (nodeTag(expr))
	{
		case T_Var:
			return gen_var(cg, (Var *) expr, type);
		case T_Const:
			{
				Const	   *c = (Const *) expr;

				return gen_value(cg, expr, c->consttype, c->constvalue, c->constisnull, type);
			}
		case T_Param:
			{
				Param	   *p = (Param *) expr;
				Datum		v = (Datum) 0;
				bool		isnull = true;

				if (gx_type_class(p->paramtype) == 0)
					return cg_fail(cg, "unsupported parameter type");
				if (!cg->check_only)
					v = eval_param(cg, expr, &isnull);
				return gen_value(cg, expr, p->paramtype, v, isnull, type);
			}
		case T_RelabelType:
			{
				RelabelType *rt = (RelabelType *) expr;
				int			r = gen_expr(cg, rt->arg, type);
				int			t = gx_type_class(rt->resulttype);

				if (r < 0)
					return -1;
				if (t != *type && !(*type == GX_TYPE_TEXT && t == GX_TYPE_TEXT))
					return cg_fail(cg, "unsupported binary coercion");
				return r;
			}
		case T_OpExpr:
			{
				OpExpr	   *op = (OpExpr *) expr;

				return gen_call(cg, op->opfuncid, op->args, op->inputcollid, type);
			}
		case T_FuncExpr:
			{
				FuncExpr   *fe = (FuncExpr *) expr;

				if (fe->funcretset)
					return cg_fail(cg, "set-returning function");
				return gen_call(cg, fe->funcid, fe->args, fe->inputcollid, type);
			}
		case T_BoolExpr:
			return gen_bool(cg, (BoolExpr *) expr, type);
		case T_NullTest:
			{
				NullTest   *nt = (NullTest *) expr;
				int			t,
							a,
							d;

				if (nt->argisrow)
					return cg_fail(cg, "row-valued IS NULL");
				a = gen_expr(cg, nt->arg, &t);
				if (a < 0)
					return -1;
				*type = GX_TYPE_BOOL;
				d = new_reg(cg);
				if (d >= 0)
					emit(cg, GX_OP_NULLTEST, GX_TYPE_BOOL,
						 nt->nulltesttype == IS_NULL ? GX_NT_IS_NULL : GX_NT_IS_NOT_NULL,
						 d, a, 0, 0);
				return d;
			}
		case T_BooleanTest:
			{
				BooleanTest *bt = (BooleanTest *) expr;
				int			t,
							a,
							d;

				a = gen_expr(cg, bt->arg, &t);
				if (a < 0)
					return -1;
				if (t != GX_TYPE_BOOL)
					return cg_fail(cg, "boolean test of a non-boolean");
				*type = GX_TYPE_BOOL;
				d = new_reg(cg);
				if (d >= 0)
					emit(cg, GX_OP_BOOLTEST, GX_TYPE_BOOL, (int) bt->booltesttype, d, a, 0, 0);
				return d;
			}
		case T_ScalarArrayOpExpr:
			return gen_scalar_array(cg, (ScalarArrayOpExpr *) expr, type);
		case T_CaseExpr:
			return gen_case(cg, (CaseExpr *) expr, type);
		case T_CaseTestExpr:
			if (cg->casetest_reg < 0)
				return cg_fail(cg, "CASE operand out of context");
			*type = cg->casetest_type;
			return cg->casetest_reg;
		case T_CoalesceExpr:
			return gen_coalesce(cg, (CoalesceExpr *) expr, type);
		case T_NullIfExpr:
			{
				NullIfExpr *ni = (NullIfExpr *) expr;
				const GxFuncInfo *fi = lookup_func(ni->opfuncid);
				int			ta,
							tb,
							a,
							b,
							ca,
							cb,
							d;

				if (fi == NULL || (fi->kind != GXF_CMP && fi->kind != GXF_TEXT_EQ) ||
					fi->flags != GX_CMP_EQ)
					return cg_fail(cg, "NULLIF operator not supported on the device");
				if (fi->kind == GXF_TEXT_EQ && !text_collation_ok(cg, fi->kind, ni->inputcollid))
					return -1;
				if ((a = gen_expr(cg, linitial(ni->args), &ta)) < 0 ||
					(b = gen_expr(cg, lsecond(ni->args), &tb)) < 0)
					return -1;
				/* compare in the operator's class; the value stays a's */
				if ((ca = coerce_operand(cg, a, ta, fi->type, true)) < 0 ||
					(cb = coerce_operand(cg, b, tb, fi->type, true)) < 0)
					return -1;
				if (ca != a)
					return cg_fail(cg, "NULLIF across date and timestamp");
				*type = ta;
				d = new_reg(cg);
				if (d >= 0)
					emit(cg, GX_OP_NULLIF, fi->type, 0, d, a, cb, 0);
				return d;
			}
		default:
			return cg_fail(cg, "expression node not supported on the device");
	}
}

static void
cg_init(GxCodegen *cg, Index varno, TupleDesc tupdesc, bool check_only)
{
	memset(cg, 0, sizeof(*cg));
	cg->varno = varno;
	cg->tupdesc = tupdesc;
	cg->check_only = check_only;
	cg->casetest_reg = -1;
	cg->max_temp = -1;
	cg->next_att_reg = GX_MAX_REGS - 1;
	initStringInfo(&cg->instrs);
	initStringInfo(&cg->consts);
	initStringInfo(&cg->blob);
	for (int i = 0; i <= GX_MAX_ATTRS; i++)
		cg->att_reg[i] = -1;
	if (GetDatabaseEncoding() == PG_UTF8)
		cg->encoding = GX_ENC_UTF8;
	else if (pg_database_encoding_max_length() == 1)
		cg->encoding = GX_ENC_SINGLE_BYTE;
	else
		cg->encoding = -1;
}

/*
 * Check that every attribute up to the last one used can be walked on the
 * device (no cstring columns on the way).
 */
static bool
attrs_walkable(GxCodegen *cg)
{
	for (int i = 0; i < cg->max_attno; i++)
	{
		Form_pg_attribute att = TupleDescAttr(cg->tupdesc, i);

		if (att->attlen == -2 || (att->attlen < 0 && att->attlen != -1))
			return cg_fail(cg, "a cstring column precedes a used column") >= 0;
	}
	return true;
}

/* Compile one qual (a boolean) and emit its QUAL check. */
static bool
gen_qual(GxCodegen *cg, Expr *qual)
{
	int			t;
	int			r = gen_expr(cg, qual, &t);

	if (r < 0)
		return false;
	if (t != GX_TYPE_BOOL)
		return cg_fail(cg, "qual is not boolean") >= 0;
	emit(cg, GX_OP_QUAL, GX_TYPE_BOOL, 0, 0, r, 0, 0);
	return true;
}

/*
 * Can this function raise an error (or leak through one)?  Leakproof
 * functions cannot; nor can numeric's comparisons, which PostgreSQL does
 * not mark leakproof but which compare any two values without error.
 */
static bool
leaky_function_checker(Oid funcid, void *context)
{
	switch (funcid)
	{
		case F_NUMERIC_EQ:
		case F_NUMERIC_NE:
		case F_NUMERIC_LT:
		case F_NUMERIC_LE:
		case F_NUMERIC_GT:
		case F_NUMERIC_GE:
			return false;
		default:
			return !get_func_leakproof(funcid);
	}
}

/*
 * Could evaluating this expression raise an error?  Only node types that
 * call nothing but the functions check_functions_in_node sees, and those
 * functions leakproof, are known not to (as contain_leaked_vars, but for
 * Params and constants too).
 */
static bool
may_fail_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	switch (nodeTag(node))
	{
		case T_Var:
		case T_Const:
		case T_Param:
		case T_BoolExpr:
		case T_RelabelType:
		case T_CollateExpr:
		case T_CaseExpr:
		case T_CaseTestExpr:
		case T_CoalesceExpr:
		case T_NullTest:
		case T_BooleanTest:
		case T_List:
			break;
		case T_FuncExpr:
		case T_OpExpr:
		case T_DistinctExpr:
		case T_NullIfExpr:
		case T_ScalarArrayOpExpr:
			if (check_functions_in_node(node, leaky_function_checker, NULL))
				return true;
			break;
		default:
			return true;
	}
	return expression_tree_walker(node, may_fail_walker, context);
}

/*
 * May this qual be evaluated after quals that PostgreSQL evaluates after
 * it, or not at all for a row they reject?  Only when it can neither raise
 * an error nor have a side effect (leakproof functions, nothing volatile):
 * skipping it cannot hide an error PostgreSQL would raise.
 */
bool
gx_qual_is_deferrable(Expr *qual)
{
	return !contain_volatile_functions((Node *) qual) &&
		!may_fail_walker((Node *) qual, NULL);
}

bool
gx_qual_is_device_executable(Expr *expr, Index varno, TupleDesc tupdesc, const char **why)
{
	GxCodegen	cg;
	bool		ok;

	cg_init(&cg, varno, tupdesc, true);
	ok = gen_qual(&cg, expr) && attrs_walkable(&cg);
	*why = cg.why;
	return ok && cg.why == NULL;
}

/* Assemble header, attributes, constants, instructions and blob. */
static GxProgram *
assemble(GxCodegen *cg)
{
	StringInfoData buf;
	GxProgram	hdr;
	int			natts = cg->max_attno;

	memset(&hdr, 0, sizeof(hdr));
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, (char *) &hdr, sizeof(hdr));

	hdr.atts_off = buf.len;
	for (int i = 1; i <= natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(cg->tupdesc, i - 1);
		GxAttr		ga;

		memset(&ga, 0, sizeof(ga));
		ga.attlen = att->attlen;
		ga.attalign = (att->attalign == TYPALIGN_DOUBLE) ? 8 :
			(att->attalign == TYPALIGN_INT) ? 4 :
			(att->attalign == TYPALIGN_SHORT) ? 2 : 1;
		ga.reg = cg->att_reg[i];
		ga.type = cg->att_reg[i] >= 0 ? cg->att_type[i] : 0;
		ga.has_missing = att->atthasmissing;
		appendBinaryStringInfo(&buf, (char *) &ga, sizeof(ga));
	}
	while (buf.len % 16)
		appendStringInfoChar(&buf, 0);
	hdr.consts_off = buf.len;
	appendBinaryStringInfo(&buf, cg->consts.data, cg->consts.len);
	hdr.instrs_off = buf.len;
	appendBinaryStringInfo(&buf, cg->instrs.data, cg->instrs.len);
	hdr.blob_off = buf.len;
	appendBinaryStringInfo(&buf, cg->blob.data, cg->blob.len);
	while (buf.len % 16)
		appendStringInfoChar(&buf, 0);

	hdr.magic = GX_PROGRAM_MAGIC;
	hdr.length = buf.len;
	hdr.nregs = GX_MAX_REGS;
	hdr.natts = natts;
	hdr.nconsts = cg->nconsts;
	hdr.ninstrs = cg->ninstrs;
	hdr.encoding = cg->encoding < 0 ? GX_ENC_SINGLE_BYTE : cg->encoding;
	memcpy(buf.data, &hdr, sizeof(hdr));
	return (GxProgram *) buf.data;
}

GxProgram *
gx_build_qual_program(List *quals, Index varno, TupleDesc tupdesc,
					  PlanState *parent, ExprContext *econtext,
					  List **device_quals, List **host_quals)
{
	GxCodegen	cg;
	ListCell   *lc;
	bool		in_order = true;

	*device_quals = NIL;
	*host_quals = NIL;
	cg_init(&cg, varno, tupdesc, false);
	cg.parent = parent;
	cg.econtext = econtext;

	foreach(lc, quals)
	{
		Expr	   *qual = lfirst(lc);
		GxCodegen	saved = cg;

		/*
		 * Each qual either compiles whole or is rolled back to the host.  The
		 * device runs before the host quals: a qual after a host qual that
		 * could fail stays on the host too, so that PostgreSQL's order
		 * decides which error a row raises.
		 */
		if (in_order && gen_qual(&cg, qual) && attrs_walkable(&cg) && cg.why == NULL)
		{
			*device_quals = lappend(*device_quals, qual);
			cg.next_reg = 0;	/* temporaries die with their qual */
			continue;
		}
		cg.instrs.len = saved.instrs.len;
		cg.consts.len = saved.consts.len;
		cg.blob.len = saved.blob.len;
		cg.ninstrs = saved.ninstrs;
		cg.nconsts = saved.nconsts;
		memcpy(cg.att_reg, saved.att_reg, sizeof(cg.att_reg));
		memcpy(cg.att_type, saved.att_type, sizeof(cg.att_type));
		cg.max_attno = saved.max_attno;
		cg.next_reg = saved.next_reg;
		cg.max_temp = saved.max_temp;
		cg.next_att_reg = saved.next_att_reg;
		cg.why = NULL;
		*host_quals = lappend(*host_quals, qual);
		if (!gx_qual_is_deferrable(qual))
			in_order = false;
	}
	/* with no qual left the program passes every visible row */
	emit(&cg, GX_OP_END, 0, 0, 0, 0, 0, 0);
	return assemble(&cg);
}

/*
 * Compile quals (implicit AND) and then each expression of 'exprs' into
 * one program; the register and value class of expression i go to
 * out_regs[i] and out_types[i].  All or nothing: returns NULL (with *why)
 * when anything cannot run on the device.  In check_only mode (planner)
 * Params are not evaluated and the returned program is not to be run.
 */
static GxProgram *
build_projection_program(List *quals, List *exprs, Index varno, TupleDesc tupdesc,
						 bool check_only, PlanState *parent, ExprContext *econtext,
						 int *out_regs, int *out_types, const char **why)
{
	GxCodegen	cg;
	ListCell   *lc;
	int			i = 0;

	cg_init(&cg, varno, tupdesc, check_only);
	cg.parent = parent;
	cg.econtext = econtext;
	foreach(lc, quals)
	{
		if (!gen_qual(&cg, lfirst(lc)))
			break;
		cg.next_reg = 0;
	}
	/* projections keep their results: no register reuse among them */
	foreach(lc, exprs)
	{
		if (cg.why)
			break;
		out_regs[i] = gen_expr(&cg, lfirst(lc), &out_types[i]);
		i++;
	}
	if (cg.why == NULL)
		attrs_walkable(&cg);
	*why = cg.why;
	if (cg.why)
		return NULL;
	emit(&cg, GX_OP_END, 0, 0, 0, 0, 0, 0);
	return assemble(&cg);
}

bool
gx_exprs_are_device_executable(List *quals, List *exprs, Index varno, TupleDesc tupdesc,
							   int *out_types, const char **why)
{
	int		   *regs = palloc(sizeof(int) * (list_length(exprs) + 1));

	return build_projection_program(quals, exprs, varno, tupdesc, true, NULL, NULL,
									regs, out_types, why) != NULL;
}

GxProgram *
gx_build_projection_program(List *quals, List *exprs, Index varno, TupleDesc tupdesc,
							PlanState *parent, ExprContext *econtext,
							int *out_regs, int *out_types, const char **why)
{
	return build_projection_program(quals, exprs, varno, tupdesc, false, parent, econtext,
									out_regs, out_types, why);
}

char *
gx_program_summary(const GxProgram *prog)
{
	return psprintf("%u instructions, %u registers, %u constants, %u attributes, %u bytes",
					prog->ninstrs, prog->nregs, prog->nconsts, prog->natts, prog->length);
}
