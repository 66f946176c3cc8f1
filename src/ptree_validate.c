/*-------------------------------------------------------------------------
 * ptree_validate.c
 *		gpuext_ptree: operator class validator.
 *
 * The access method compares normalized keys itself, so an operator class
 * is valid only if each of its operators is the one whose meaning is that
 * byte order: the type's own <, <=, =, >=, > (int8 also with int4 and int2
 * on the right; for text: = and either the
 * pattern operators or the collation-aware ones, which the build accepts
 * only under the C collation).
 *
 * IDENTIFICATION
 *		src/ptree_validate.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "ptree.h"

/*
 * Is proc the function of strategy comparing lefttype with righttype?
 */
static bool
ptree_operator_ok(Oid lefttype, Oid righttype, int strategy, Oid proc)
{
	static const struct
	{
		Oid			left;
		Oid			right;
		Oid			procs[PTREE_NSTRATEGIES];
	}			known[] = {
		{INT4OID, INT4OID, {F_INT4LT, F_INT4LE, F_INT4EQ, F_INT4GE, F_INT4GT}},
		{INT8OID, INT8OID, {F_INT8LT, F_INT8LE, F_INT8EQ, F_INT8GE, F_INT8GT}},
		{INT8OID, INT4OID, {F_INT84LT, F_INT84LE, F_INT84EQ, F_INT84GE, F_INT84GT}},
		{INT8OID, INT2OID, {F_INT82LT, F_INT82LE, F_INT82EQ, F_INT82GE, F_INT82GT}},
		{DATEOID, DATEOID, {F_DATE_LT, F_DATE_LE, F_DATE_EQ, F_DATE_GE, F_DATE_GT}},
		{TIMESTAMPOID, TIMESTAMPOID, {F_TIMESTAMP_LT, F_TIMESTAMP_LE, F_TIMESTAMP_EQ, F_TIMESTAMP_GE, F_TIMESTAMP_GT}},
		{TEXTOID, TEXTOID, {F_TEXT_LT, F_TEXT_LE, F_TEXTEQ, F_TEXT_GE, F_TEXT_GT}},
		{TEXTOID, TEXTOID, {F_TEXT_PATTERN_LT, F_TEXT_PATTERN_LE, F_TEXTEQ, F_TEXT_PATTERN_GE, F_TEXT_PATTERN_GT}},
	};
	int			i;

	for (i = 0; i < lengthof(known); i++)
		if (known[i].left == lefttype && known[i].right == righttype &&
			known[i].procs[strategy - 1] == proc)
			return true;
	return false;
}

/*
 * amvalidate
 */
bool
ptreevalidate(Oid opclassoid)
{
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	char	   *opclassname;
	CatCList   *oprlist;
	CatCList   *proclist;
	bool		result = true;
	int			i;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = NameStr(classform->opcname);

	if (!ptree_type_supported(opcintype))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("gpuext_ptree operator class \"%s\" is for type %s, which the access method does not support",
						opclassname, format_type_be(opcintype))));
		result = false;
	}

	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));
	if (proclist->n_members > 0)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("gpuext_ptree operator family of \"%s\" has support functions, which the access method does not use",
						opclassname)));
		result = false;
	}
	ReleaseSysCacheList(proclist);

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	for (i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);

		if (oprform->amopstrategy < 1 || oprform->amopstrategy > PTREE_NSTRATEGIES ||
			oprform->amoppurpose != AMOP_SEARCH ||
			!check_amop_signature(oprform->amopopr, BOOLOID,
								  oprform->amoplefttype, oprform->amoprighttype) ||
			!ptree_operator_ok(oprform->amoplefttype, oprform->amoprighttype, oprform->amopstrategy,
							   get_opcode(oprform->amopopr)))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("gpuext_ptree operator family of \"%s\" contains operator %s with strategy %d, which is not the byte-order comparison of its type",
							opclassname, format_operator(oprform->amopopr),
							oprform->amopstrategy)));
			result = false;
		}
	}
	ReleaseSysCacheList(oprlist);
	ReleaseSysCache(classtup);
	return result;
}
