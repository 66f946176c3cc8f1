/*-------------------------------------------------------------------------
 * calibrate_workload.c
 *		gpuext_calibrate_workload(): refine the cost model's parameters
 *		against the user's own queries, by simulated annealing (as Bausch
 *		et al. did for their asymmetric model).
 *
 * Each query of the training and the test set is timed twice: with
 * PostgreSQL's plan (gpuext off) and with the gpuext plan forced.  Queries
 * with no gpuext plan have no choice to make and are left out.  The
 * search then changes the parameters that decide between the two (the
 * GPU's setup and per-batch costs, host work per page, row and group, the
 * link and device rates, the CPU engine's rate and the cost unit) by
 * random multiplicative steps, and scores each candidate by planning the
 * training queries: the planner's cost ratio of the gpuext plan to
 * PostgreSQL's should match the measured time ratio.  The score is the
 * time the planner's choices would take, relative to always choosing the
 * faster plan, plus a small term for the mismatch of the ratios (which
 * tells candidates with the same choices apart).  The best candidate is
 * judged on the test queries, which the search never saw, and stored
 * (like gpuext_calibrate()'s values) only when it is no worse there.
 *
 * IDENTIFICATION
 *		src/calibrate_workload.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "common/pg_prng.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/plancache.h"

#include "calibrate.h"
#include "costparams.h"
#include "timing.h"

PG_FUNCTION_INFO_V1(gpuext_calibrate_workload);

#define MAX_WORKLOAD_QUERIES	1000

/* the parameters the search may change */
typedef struct TunedParam
{
	const char *name;			/* GUC without the gpuext. prefix */
	const char *unit;
	double		min;			/* the GUC's bounds */
	double		max;
} TunedParam;

static const TunedParam tuned[] = {
	{"cost_unit_us", "us", 0.001, 1e6},
	{"gpu_setup_us", "us", 0, 1e9},
	{"gpu_batch_us", "us", 0, 1e9},
	{"host_page_us", "us", 0, 1e6},
	{"host_visibility_us", "us", 0, 1e6},
	{"host_tuple_us", "us", 0, 1e6},
	{"host_group_us", "us", 0, 1e6},
	{"link_read_gbps", "GB/s", 0.001, 1e6},
	{"device_row_ns", "ns", 0, 1e6},
	{"device_atomic_ns", "ns", 0, 1e6},
	{"cpu_engine_row_ns", "ns", 0, 1e6},
};

#define NTUNED lengthof(tuned)

/* one query of the workload, as measured */
typedef struct WorkloadQuery
{
	char	   *sql;
	bool		training;
	bool		has_choice;		/* a gpuext plan exists */
	double		stock_us;		/* measured, PostgreSQL's plan */
	double		gpuext_us;		/* measured, the gpuext plan forced */
	double		stock_cost;		/* planner cost of PostgreSQL's plan */
} WorkloadQuery;

/* what a parameter vector makes of a set of queries */
typedef struct Verdict
{
	double		chosen_us;		/* time of the plans the planner would pick */
	double		best_us;		/* time of the faster plan of each query */
	int			right;			/* queries where it picks the faster plan */
	int			n;				/* queries with a choice */
	double		log_error;		/* sum of squared log ratio mismatches */
} Verdict;

/* Reject anything but one plain SELECT (it is run, and timed, as given). */
static void
check_user_query(const char *sql)
{
	SPIPlanPtr	plan = SPI_prepare(sql, 0, NULL);
	List	   *sources;

	if (plan == NULL)
		elog(ERROR, "gpuext workload calibration: SPI_prepare failed: %s",
			 SPI_result_code_string(SPI_result));
	sources = SPI_plan_get_plan_sources(plan);
	if (list_length(sources) != 1 ||
		((CachedPlanSource *) linitial(sources))->commandTag != CMDTAG_SELECT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a workload query must be one SELECT statement"),
				 errdetail("Query: %s", sql)));
	SPI_freeplan(plan);
}

/* Run a user query read-only (a data-modifying CTE fails here). */
static void
run_user_query(const char *sql)
{
	if (SPI_execute(sql, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "gpuext workload calibration: query did not run as a SELECT");
}

/* Microseconds of the better of two runs after a warm-up run. */
static double
time_user_query(const char *sql)
{
	double		best = 1e30;

	for (int i = 0; i < 3; i++)
	{
		instr_time	t;

		INSTR_TIME_SET_CURRENT(t);
		run_user_query(sql);
		if (i > 0)
			best = Min(best, gx_elapsed_us(t));
	}
	return best;
}

/* Does the current plan of a query use a gpuext node? */
static bool
plan_uses_gpuext(const char *sql)
{
	char	   *json;

	gx_spi_exec(psprintf("EXPLAIN (FORMAT JSON) %s", sql), SPI_OK_UTILITY);
	json = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	return strstr(json, "\"Custom Plan Provider\": \"Gpu") != NULL;
}

/* Time a query both ways and cost PostgreSQL's plan; settings restored. */
static void
measure_query(WorkloadQuery *q)
{
	int			level = NewGUCNestLevel();

	check_user_query(q->sql);
	gx_set_local("gpuext.enabled", "off");
	q->stock_cost = gx_planned_cost(q->sql);
	q->stock_us = time_user_query(q->sql);
	AtEOXact_GUC(true, level);

	level = NewGUCNestLevel();
	gx_set_local("gpuext.force_offload", "on");
	q->has_choice = plan_uses_gpuext(q->sql);
	q->gpuext_us = q->has_choice ? time_user_query(q->sql) : q->stock_us;
	AtEOXact_GUC(true, level);
}

/* Set every tuned parameter for the current GUC nest level. */
static void
set_params(const double *values)
{
	for (int i = 0; i < NTUNED; i++)
		gx_set_local(psprintf("gpuext.%s", tuned[i].name), psprintf("%.9g", values[i]));
}

/* Plan the queries of one set under 'values' and score the choices. */
static Verdict
judge(WorkloadQuery *qs, int nq, bool training, const double *values)
{
	Verdict		v = {0};
	int			level = NewGUCNestLevel();

	set_params(values);
	gx_set_local("gpuext.force_offload", "on");
	for (int i = 0; i < nq; i++)
	{
		WorkloadQuery *q = &qs[i];
		double		gpuext_cost;
		bool		picks_gpuext;
		double		err;

		if (q->training != training || !q->has_choice)
			continue;
		gpuext_cost = gx_planned_cost(q->sql);
		picks_gpuext = gpuext_cost < q->stock_cost;
		v.chosen_us += picks_gpuext ? q->gpuext_us : q->stock_us;
		v.best_us += Min(q->gpuext_us, q->stock_us);
		v.right += (picks_gpuext == (q->gpuext_us < q->stock_us)) ? 1 : 0;
		v.n++;
		err = log(Max(gpuext_cost, 1e-9) / Max(q->stock_cost, 1e-9)) -
			log(Max(q->gpuext_us, 1e-3) / Max(q->stock_us, 1e-3));
		v.log_error += err * err;
	}
	AtEOXact_GUC(true, level);
	return v;
}

/* The annealing score of a verdict: lower is better. */
static double
score(const Verdict *v)
{
	if (v->n == 0)
		return 0;
	return v->chosen_us / Max(v->best_us, 1e-3) + 0.01 * v->log_error / v->n;
}

/* Current values of the tuned parameters. */
static void
current_params(double *values)
{
	for (int i = 0; i < NTUNED; i++)
		values[i] = strtod(GetConfigOptionByName(psprintf("gpuext.%s", tuned[i].name), NULL, false),
						   NULL);
}

/*
 * Simulated annealing from 'start': each step scales one parameter by
 * exp(N(0, step)), the step and the temperature shrinking linearly.
 * Returns the best vector seen in 'best'.
 */
static void
anneal(WorkloadQuery *qs, int nq, const double *start, int iterations, uint64 seed,
	   double *best)
{
	pg_prng_state rng;
	double		cur[NTUNED];
	double		cur_score;
	double		best_score;

	pg_prng_seed(&rng, seed);
	memcpy(cur, start, sizeof(cur));
	memcpy(best, start, sizeof(cur));
	{
		Verdict		v = judge(qs, nq, true, cur);

		cur_score = best_score = score(&v);
	}
	for (int it = 0; it < iterations; it++)
	{
		double		frac = 1.0 - (double) it / iterations;
		double		temperature = 0.05 * frac + 1e-6;
		double		cand[NTUNED];
		int			p = (int) pg_prng_uint64_range(&rng, 0, NTUNED - 1);
		double		u1 = Max(pg_prng_double(&rng), 1e-12);
		double		u2 = pg_prng_double(&rng);
		double		gauss = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
		Verdict		v;
		double		s;

		CHECK_FOR_INTERRUPTS();
		memcpy(cand, cur, sizeof(cand));
		/* a zero stays reachable: scale from a floor */
		cand[p] = Max(cand[p], 1e-6) * exp(gauss * (0.1 + 1.0 * frac));
		cand[p] = Min(Max(cand[p], Max(tuned[p].min, 1e-6)), tuned[p].max);
		v = judge(qs, nq, true, cand);
		s = score(&v);
		if (s <= cur_score || pg_prng_double(&rng) < exp((cur_score - s) / temperature))
		{
			memcpy(cur, cand, sizeof(cur));
			cur_score = s;
		}
		if (s < best_score)
		{
			memcpy(best, cand, sizeof(cand));
			best_score = s;
		}
	}
}

/* Read a text[] argument into the query list. */
static int
add_queries(ArrayType *arr, bool training, WorkloadQuery *qs, int nq)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("workload queries must not be NULL")));
		if (nq >= MAX_WORKLOAD_QUERIES)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("at most %d workload queries", MAX_WORKLOAD_QUERIES)));
		qs[nq].sql = TextDatumGetCString(elems[i]);
		qs[nq].training = training;
		nq++;
	}
	return nq;
}

/* Emit one report row. */
static void
report(ReturnSetInfo *rsinfo, const char *item, double before, double after, const char *unit)
{
	Datum		values[4];
	bool		nulls[4] = {0};

	values[0] = CStringGetTextDatum(item);
	values[1] = Float8GetDatum(before);
	values[2] = Float8GetDatum(after);
	values[3] = CStringGetTextDatum(unit);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* Emit the rows of one set's verdicts before and after. */
static void
report_set(ReturnSetInfo *rsinfo, const char *set, const Verdict *before, const Verdict *after)
{
	report(rsinfo, psprintf("%s: queries with a choice", set), before->n, after->n, "queries");
	report(rsinfo, psprintf("%s: faster plan picked", set),
		   before->n ? 100.0 * before->right / before->n : 100,
		   after->n ? 100.0 * after->right / after->n : 100, "%");
	report(rsinfo, psprintf("%s: time of the picked plans", set),
		   before->chosen_us / 1000, after->chosen_us / 1000, "ms");
	report(rsinfo, psprintf("%s: time of the faster plans", set),
		   before->best_us / 1000, after->best_us / 1000, "ms");
}

/*
 * gpuext_calibrate_workload(training, test, iterations, seed, apply):
 * measure the queries, search, judge on the test set, store the result
 * if it is no worse there (and apply is true).  Superuser only.
 */
Datum
gpuext_calibrate_workload(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			iterations = PG_GETARG_INT32(2);
	int64		seed = PG_GETARG_INT64(3);
	bool		apply = PG_GETARG_BOOL(4);
	WorkloadQuery *qs = palloc0(sizeof(WorkloadQuery) * MAX_WORKLOAD_QUERIES);
	int			nq = 0;
	int			ntrain;
	double		before[NTUNED];
	double		after[NTUNED];
	Verdict		train_before,
				train_after,
				test_before,
				test_after;
	bool		stored;
	char	   *schema;

	schema = gx_calibration_start();
	if (iterations < 0 || iterations > 100000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("iterations must be between 0 and 100000")));
	nq = add_queries(PG_GETARG_ARRAYTYPE_P(0), true, qs, nq);
	ntrain = nq;
	nq = add_queries(PG_GETARG_ARRAYTYPE_P(1), false, qs, nq);
	if (ntrain == 0 || nq == ntrain)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the training and the test set each need at least one query")));
	InitMaterializedSRF(fcinfo, 0);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "gpuext workload calibration: SPI_connect failed");
	gx_cost_refresh();
	for (int i = 0; i < nq; i++)
		measure_query(&qs[i]);

	current_params(before);
	anneal(qs, nq, before, iterations, (uint64) seed, after);
	train_before = judge(qs, nq, true, before);
	train_after = judge(qs, nq, true, after);
	test_before = judge(qs, nq, false, before);
	test_after = judge(qs, nq, false, after);

	/* keep the result only if the unseen queries do not pay for it */
	stored = apply && test_after.chosen_us <= test_before.chosen_us &&
		score(&train_after) < score(&train_before);
	for (int i = 0; i < NTUNED; i++)
	{
		report(rsinfo, tuned[i].name, before[i], after[i], tuned[i].unit);
		if (stored)
			gx_store_parameter(schema, tuned[i].name, after[i], tuned[i].unit);
	}
	report_set(rsinfo, "training", &train_before, &train_after);
	report_set(rsinfo, "test", &test_before, &test_after);
	report(rsinfo, "stored", 0, stored ? 1 : 0, "bool");
	SPI_finish();

	if (stored)
		gx_cost_calibration_changed();
	return (Datum) 0;
}
