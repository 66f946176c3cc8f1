/*-------------------------------------------------------------------------
 * params.c
 *		The cost model's parameter set: each parameter's name, default,
 *		bounds and description (from cost_params.h), and its place in
 *		GxCostParams.
 *
 * The settings gpuext.<name> are defined from this table, and calibrated
 * values are checked against its bounds before they are used.
 *
 * IDENTIFICATION
 *		costmodel/params.c
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stddef.h>

#include "cost.h"

const GxCostParamDef gx_cost_param_defs[GX_NUM_COST_PARAMS] = {
#define GX_COST_PARAM(name, boot, min, max, desc) \
	{#name, desc, offsetof(GxCostParams, name), boot, min, max},
#include "cost_params.h"
#undef GX_COST_PARAM
};

/* The definition of the parameter called 'name' (no prefix), or NULL. */
const GxCostParamDef *
gx_cost_param_find(const char *name)
{
	for (int i = 0; i < GX_NUM_COST_PARAMS; i++)
		if (strcmp(gx_cost_param_defs[i].name, name) == 0)
			return &gx_cost_param_defs[i];
	return NULL;
}
