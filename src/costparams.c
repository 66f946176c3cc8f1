/*-------------------------------------------------------------------------
 * costparams.c
 *		The cost model's parameters in force in this backend: the
 *		gpuext.* cost settings, defined from the cost model's table of
 *		parameters, and the values gpuext_calibrate() stored.
 *
 * IDENTIFICATION
 *		src/costparams.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "access/xact.h"
#include "commands/explain.h"
#include "executor/spi.h"
#include "utils/guc.h"

#include "calibrate.h"
#include "costparams.h"
#include "pipeline.h"

/* the settings' variables */
static GxCostParams settings;

/* what gx_cost_params() returns */
static GxCostParams in_force;

/* calibration generation this backend has applied */
static uint32 applied_generation = 0;
static bool applying = false;

/* Define the settings gpuext.<name> of the cost parameters. */
void
gx_cost_define_gucs(void)
{
	for (int i = 0; i < gx_num_cost_params; i++)
	{
		const GxCostParamDef *def = &gx_cost_param_defs[i];
		char	   *name = psprintf("gpuext.%s", def->name);

		DefineCustomRealVariable(name, def->desc, NULL,
								 gx_cost_param_ref(&settings, def), def->boot,
								 def->min, def->max, PGC_USERSET, 0, NULL, NULL, NULL);
		pfree(name);
	}
	DefineCustomBoolVariable("gpuext.recost_spills",
							 "Re-costs PostgreSQL's spilling hash aggregations and sorts with the storage write costs.",
							 "A page written to a temporary file costs PostgreSQL's page cost times "
							 "storage_*_write_us / storage_*_read_us.",
							 &settings.recost_spills, true, PGC_USERSET, 0, NULL, NULL, NULL);
}

/*
 * The parameters the planner costs with now: the settings, and the
 * planner's settings the cost functions read.
 */
const GxCostParams *
gx_cost_params(void)
{
	in_force = settings;
	in_force.force_offload = gpuext_force_offload;
	in_force.batch_pages = (int) gx_batch_pages_cap(GX_PIPELINE_DEPTH);
	return &in_force;
}

/*
 * Apply stored calibration values, once per calibration: called by the
 * planner hooks.  Values become database-level defaults of the GUCs.
 */
void
gx_cost_refresh(void)
{
	uint32		gen;
	char	   *schema;

	if (!gpuext_preloaded || gx_shared == NULL || applying || !IsTransactionState())
		return;
	gen = pg_atomic_read_u32(&gx_shared->calibration_generation);
	if (gen == applied_generation)
		return;
	schema = gx_extension_schema();
	if (schema == NULL)
		return;
	applying = true;
	applied_generation = gen;
	PG_TRY();
	{
		if (SPI_connect() == SPI_OK_CONNECT)
		{
			char	   *q = psprintf("SELECT parameter, value FROM %s.gpuext_calibration_values",
									 schema);

			if (SPI_execute(q, true, 0) == SPI_OK_SELECT)
			{
				for (uint64 i = 0; i < SPI_processed; i++)
				{
					HeapTuple	tup = SPI_tuptable->vals[i];
					TupleDesc	desc = SPI_tuptable->tupdesc;
					char	   *name = SPI_getvalue(tup, desc, 1);
					char	   *value = SPI_getvalue(tup, desc, 2);

					(void) set_config_option(psprintf("gpuext.%s", name), value,
											 PGC_USERSET, PGC_S_DATABASE,
											 GUC_ACTION_SET, true, WARNING, false);
				}
			}
			SPI_finish();
		}
	}
	PG_FINALLY();
	{
		applying = false;
	}
	PG_END_TRY();
}

