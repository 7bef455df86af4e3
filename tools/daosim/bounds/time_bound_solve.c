/* SPDX-License-Identifier: MIT */
/*
 * time_bound_solve.c - one time-indexed LP built (time_bound_build.c),
 * started (time_bound_start.c) and solved by CLP, whole or by sifting
 * (time_bound_lp.h, ti_solve).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lp_bound.h"
#include "time_bound_lp.h"

/* Sifting takes in a column left out when its reduced cost is below 0.1%
 * of the time to fetch a byte: near-degenerate columns, most of which the
 * next pivots would make attractive (without them, more rounds). */
#define SIFT_MARGIN 1e-3

/* CLP's answer as a status: its iteration limit, memory, its time limit,
 * or another failure (err says which). */
static dao_status clp_status(int ret, const char *err)
{
	return ret == -2		   ? DAO_ERR_LIMIT :
	       strstr(err, "memory") ? DAO_ERR_NOMEM :
	       strstr(err, "within") ? DAO_ERR_RANGE : DAO_ERR_FAILED;
}

/* t's LP from ws (NULL: CLP's own start), the way a asks for. */
static dao_status run(const struct solve_args *a, const struct ti_lp *t, const struct start *ws,
		      double *objval, double *xout, struct time_bound *out, char *err,
		      size_t errlen)
{
	int ret;

	if (ws && a->way != WHOLE) {
		struct sift_opts o = { .prove = a->way == SIFT_PROVE,
				       .margin = SIFT_MARGIN / t->bin,
				       .max_seconds = a->max_seconds };

		ret = sift_solve(t, ws, &o, objval, xout, &out->iterations, &out->priced_in, err,
				 errlen);
	} else {
		ret = clp_solve(&t->lp, ws, a->max_iters, a->max_seconds, objval,
				&(struct clp_result){ .x = xout }, &out->iterations, err, errlen);
	}
	return ret ? clp_status(ret, err) : DAO_OK;
}

dao_status ti_solve(const struct solve_args *a, struct time_bound *out, double *eout, char *err,
		    size_t errlen)
{
	const struct trace_profile *p = a->p;
	double *xout = NULL, objval;
	struct start ws = { 0 };
	struct ti_lp t = { 0 };
	dao_status st;
	char dummy[128];
	int warm = a->start == TIME_BOUND_START_GREEDY;

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	st = lp_check_budget(p, a->budget, err, errlen);
	if (st)
		return st;
	memset(out, 0, sizeof(*out));
	if (p->nkernels == 0)
		return DAO_OK;
	st = ti_lp_build(&t, p, a->m, a->kns, a->budget, err, errlen);
	if (!st && warm)
		st = a->hint ? ti_warm_start(&t, 0, a->hint, &ws, err, errlen) :
			       ti_best_start(&t, &ws, err, errlen);
	if (!st && eout && !(xout = malloc(t.L.ncols * sizeof(*xout))))
		st = DAO_ERR_NOMEM;
	if (!st)
		st = run(a, &t, warm ? &ws : NULL, &objval, xout, out, err, errlen);
	if (!st) {
		out->lp_ns = objval;
		/* Real schedules take whole ns: round up what is above an
		 * integer by more than the solver's noise. */
		out->ns = (uint64_t)ceil(objval * (1.0 - 1e-9) - 1e-6);
		out->rows = t.L.nrows;
		out->cols = t.L.ncols;
		if (eout)
			for (size_t j = 0; j < p->nintervals; j++)
				eout[j] = xout[t.L.cE_j + j] * t.scale;
	}
	free(xout);
	start_free(&ws);
	ti_lp_free(&t);
	return st;
}
