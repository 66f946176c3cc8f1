/*-------------------------------------------------------------------------
 * costparams.c
 *		The cost model's parameters in force in this backend: the
 *		gpuext.* cost settings, defined from the cost model's table of
 *		parameters, and the values gpuext_calibrate() stored.
 *
 * Calibrated values are stored in the extension's table
 * gpuext_calibration_values.  A backend reads that table without SQL (a
 * heap scan, as of a catalog) the first time a planner hook asks for the
 * parameters (gx_cost_refresh), and again after a calibration: a
 * calibration bumps gx_shared->calibration_generation and, at its commit,
 * invalidates the table's relcache entry in every backend of the
 * database (gx_cost_calibration_changed); a relcache callback marks the
 * loaded values stale.  The values are kept here, not pushed into the
 * settings: gx_cost_params() lays them over the settings' values for the
 * planner.
 *
 * Precedence is that of a database-level setting (ALTER DATABASE SET): a
 * calibrated value overrides the built-in default, postgresql.conf, the
 * server's command line, ALTER ROLE ALL and ALTER DATABASE settings, and
 * is overridden by ALTER ROLE settings (with or without IN DATABASE), a
 * connection's options and SET (SET LOCAL, a function's SET clause):
 * whichever of those set the setting's value in force, it wins.  SHOW,
 * current_setting() and pg_settings show the value in force (a show hook
 * on each setting); pg_settings.source still names the setting's own
 * source.
 *
 * IDENTIFICATION
 *		src/costparams.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include <math.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "commands/extension.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "costparams.h"
#include "pipeline.h"

#define CALIBRATION_TABLE "gpuext_calibration_values"

/* the settings' variables: built-in defaults, postgresql.conf, SET, ... */
static GxCostParams settings;

/* each setting's record, for the source of its value (found_records) */
static struct config_generic *records[GX_NUM_COST_PARAMS];
static bool found_records = false;

/* the calibrated values this backend loaded */
static double calibrated[GX_NUM_COST_PARAMS];
static bool is_calibrated[GX_NUM_COST_PARAMS];

/*
 * When they were loaded: the calibration generation, and the count of
 * invalidations of the table seen then; the table's OID, for the relcache
 * callback.
 */
static uint32 loaded_generation = 0;	/* 0: never loaded */
static bool callback_registered = false;
static uint64 invalidations = 0;
static uint64 loaded_invalidations = 0;
static Oid	calibration_relid = InvalidOid;

/* what gx_cost_params() returns */
static GxCostParams in_force;

/*
 * Find the settings' records among the server's, once (after _PG_init has
 * defined them, a record stays where it is).
 */
static void
find_records(void)
{
	struct config_generic **vars = get_guc_variables();
	int			nvars = GetNumConfigOptions();

	for (int i = 0; i < GX_NUM_COST_PARAMS; i++)
	{
		char	   *name = psprintf("gpuext.%s", gx_cost_param_defs[i].name);

		records[i] = NULL;
		for (int v = 0; v < nvars; v++)
			if (strcmp(vars[v]->name, name) == 0)
			{
				records[i] = vars[v];
				break;
			}
		if (records[i] == NULL)
			elog(ERROR, "gpuext: setting \"%s\" is not defined", name);
		pfree(name);
	}
	found_records = true;
}

/*
 * Does calibrated parameter i apply, its setting's value coming from no
 * more than the database level (the built-in default, postgresql.conf,
 * the command line, ALTER ROLE ALL or ALTER DATABASE)?
 */
static bool
calibration_applies(int i)
{
	if (!is_calibrated[i])
		return false;
	if (!found_records)
		find_records();
	return records[i]->source <= PGC_S_DATABASE;
}

/* The value of parameter i in force (see the file comment). */
static double
param_in_force(int i)
{
	if (calibration_applies(i))
		return calibrated[i];
	return gx_cost_param_get(&settings, &gx_cost_param_defs[i]);
}

/* SHOW of setting i: the value in force, formatted as for any real setting. */
static const char *
show_param(int i)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%g", param_in_force(i));
	return buf;
}

/* one show hook per setting (a show hook has no argument) */
#define GX_COST_PARAM(name, boot, min, max, desc) \
static const char *show_##name(void) { return show_param(GX_COST_PARAM_##name); }
#include "cost_params.h"
#undef GX_COST_PARAM

static const GucShowHook show_hooks[GX_NUM_COST_PARAMS] = {
#define GX_COST_PARAM(name, boot, min, max, desc) show_##name,
#include "cost_params.h"
#undef GX_COST_PARAM
};

/*
 * Relcache callback: an invalidation of the calibration table (a
 * calibration committed, the table altered or dropped), or of every
 * relation, makes the loaded values stale.
 */
static void
calibration_invalidated(Datum arg, Oid relid)
{
	if (!OidIsValid(relid) || relid == calibration_relid)
		invalidations++;
}

/* Define the settings gpuext.<name> of the cost parameters. */
void
gx_cost_define_gucs(void)
{
	for (int i = 0; i < GX_NUM_COST_PARAMS; i++)
	{
		const GxCostParamDef *def = &gx_cost_param_defs[i];
		char	   *name = psprintf("gpuext.%s", def->name);

		DefineCustomRealVariable(name, def->desc, NULL,
								 gx_cost_param_ref(&settings, def), def->boot,
								 def->min, def->max, PGC_USERSET, 0, NULL, NULL,
								 show_hooks[i]);
		pfree(name);
	}
	DefineCustomBoolVariable("gpuext.recost_spills",
							 "Re-costs PostgreSQL's spilling hash aggregations and sorts with the storage write costs.",
							 "A page written to a temporary file costs PostgreSQL's page cost times "
							 "storage_*_write_us / storage_*_read_us.",
							 &settings.recost_spills, true, PGC_USERSET, 0, NULL, NULL, NULL);
}

/* The namespace of the extension, or InvalidOid when not installed here. */
Oid
gx_extension_namespace(void)
{
	Oid			ext = get_extension_oid("gpuext", true);
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	if (!OidIsValid(ext))
		return InvalidOid;
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ext));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

/* The calibration table of this database, or InvalidOid when none. */
static Oid
calibration_table(void)
{
	Oid			nsp = gx_extension_namespace();

	if (!OidIsValid(nsp))
		return InvalidOid;
	return get_relname_relid(CALIBRATION_TABLE, nsp);
}

/*
 * Check one stored value as setting it would: a cost parameter's name, a
 * number within its bounds.  A WARNING and false for anything else.
 */
static bool
stored_value_ok(const char *name, double value, const GxCostParamDef *def)
{
	if (def == NULL)
	{
		ereport(WARNING,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("\"%s\" in %s is not a cost parameter of gpuext; ignored",
						name, CALIBRATION_TABLE)));
		return false;
	}
	if (isnan(value) || value < def->min || value > def->max)
	{
		ereport(WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%g is outside the valid range for parameter \"gpuext.%s\" (%g .. %g)",
						value, def->name, def->min, def->max)));
		return false;
	}
	return true;
}

/*
 * Read the calibration table (a heap scan under a fresh catalog snapshot,
 * no SQL) into calibrated[].  False, nothing changed, where there is no
 * table (the extension is not installed in this database).  A table whose
 * columns are not the extension's gives a WARNING and no values.
 */
static bool
load_calibration(void)
{
	Oid			relid = calibration_table();
	double		values[GX_NUM_COST_PARAMS];
	bool		found[GX_NUM_COST_PARAMS] = {0};
	Relation	rel;
	TupleDesc	desc;
	SysScanDesc scan;
	HeapTuple	tup;

	if (!OidIsValid(relid))
		return false;
	rel = table_open(relid, AccessShareLock);
	calibration_relid = relid;
	desc = RelationGetDescr(rel);
	if (desc->natts < 2 || TupleDescAttr(desc, 0)->atttypid != TEXTOID ||
		TupleDescAttr(desc, 1)->atttypid != FLOAT8OID)
	{
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table %s does not have the columns (parameter text, value float8); no calibrated values used",
						CALIBRATION_TABLE)));
		table_close(rel, AccessShareLock);
		memset(is_calibrated, 0, sizeof(is_calibrated));
		return true;
	}
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		name_null;
		bool		value_null;
		Datum		name_datum = heap_getattr(tup, 1, desc, &name_null);
		Datum		value_datum = heap_getattr(tup, 2, desc, &value_null);
		char	   *name;
		double		value;
		const GxCostParamDef *def;

		if (name_null || value_null)
			continue;
		name = TextDatumGetCString(name_datum);
		value = DatumGetFloat8(value_datum);
		def = gx_cost_param_find(name);
		if (!stored_value_ok(name, value, def))
			continue;
		values[def - gx_cost_param_defs] = value;
		found[def - gx_cost_param_defs] = true;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	memcpy(calibrated, values, sizeof(calibrated));
	memcpy(is_calibrated, found, sizeof(is_calibrated));
	return true;
}

/*
 * Load the calibrated values if this backend has not yet, or they changed
 * since (a calibration, an invalidation of the table): called by the
 * planner hooks before they cost.  Reads a table; runs no SQL and sets no
 * setting.
 */
void
gx_cost_refresh(void)
{
	uint32		gen;
	uint64		seen;

	if (!gpuext_preloaded || gx_shared == NULL || !IsTransactionState())
		return;
	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(calibration_invalidated, (Datum) 0);
		callback_registered = true;
	}
	gen = pg_atomic_read_u32(&gx_shared->calibration_generation);
	if (gen == loaded_generation && invalidations == loaded_invalidations)
		return;
	/* an invalidation while loading makes the next call load again */
	seen = invalidations;
	if (!load_calibration())
		return;
	loaded_generation = gen;
	loaded_invalidations = seen;
}

/*
 * After a calibration stored values in this database (inside its
 * transaction): every backend of the database loads them when it plans
 * next after the commit (this one at its next command).
 */
void
gx_cost_calibration_changed(void)
{
	Oid			relid = calibration_table();

	if (OidIsValid(relid))
		CacheInvalidateRelcacheByRelid(relid);
	pg_atomic_fetch_add_u32(&gx_shared->calibration_generation, 1);
}

/*
 * The parameters the planner costs with now: the settings, with the
 * calibrated values laid over them where they apply (see the file
 * comment), and the planner's settings the cost functions read.
 */
const GxCostParams *
gx_cost_params(void)
{
	in_force = settings;
	for (int i = 0; i < GX_NUM_COST_PARAMS; i++)
		if (calibration_applies(i))
			*gx_cost_param_ref(&in_force, &gx_cost_param_defs[i]) = calibrated[i];
	in_force.force_offload = gpuext_force_offload;
	in_force.batch_pages = (int) gx_batch_pages_cap(GX_PIPELINE_DEPTH);
	return &in_force;
}
