/* SPDX-License-Identifier: MIT */
/*
 * time_bound_clp.c - the time-indexed LP in triplets, and CLP solving it
 * whole (time_bound_lp.h).
 */
#include <coin/Clp_C_Interface.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "time_bound_lp.h"

void lp_entry(struct lp *lp, size_t r, size_t c, double v)
{
	if (lp->nnz == lp->cap) {
		size_t ncap = lp->cap ? 2 * lp->cap : 4096;
		int *nr = realloc(lp->row, ncap * sizeof(*nr));
		int *nc = nr ? realloc(lp->col, ncap * sizeof(*nc)) : NULL;
		double *nv = nc ? realloc(lp->val, ncap * sizeof(*nv)) : NULL;

		if (nr)
			lp->row = nr;
		if (nc)
			lp->col = nc;
		if (!nv) {
			lp->nomem = 1;
			return;
		}
		lp->val = nv;
		lp->cap = ncap;
	}
	lp->row[lp->nnz] = (int)r;
	lp->col[lp->nnz] = (int)c;
	lp->val[lp->nnz] = v;
	lp->nnz++;
}

void lp_free(struct lp *lp)
{
	free(lp->row);
	free(lp->col);
	free(lp->val);
	free(lp->collb);
	free(lp->colub);
	free(lp->obj);
	free(lp->rowlb);
	free(lp->rowub);
}

double cpu_s(void)
{
	return (double)clock() / CLOCKS_PER_SEC;
}

bool time_left(double t0, double max_seconds, double *left, char *err, size_t errlen)
{
	*left = 0.0;
	if (max_seconds <= 0)
		return true;
	*left = max_seconds - (cpu_s() - t0);
	if (*left > 0)
		return true;
	snprintf(err, errlen, "not solved within %g s (CLP stopped)", max_seconds);
	return false;
}

void start_free(struct start *s)
{
	free(s->x);
	free(s->stat);
}

/* lp's triplets column by column (CLP's layout): start[c] .. start[c+1]
 * index into index (rows) and value; -1 when out of memory. */
static int by_column(const struct lp *lp, CoinBigIndex **start, int **index, double **value)
{
	CoinBigIndex *fill;

	*start = calloc(lp->ncols + 1, sizeof(**start));
	*index = malloc((lp->nnz + 1) * sizeof(**index));
	*value = malloc((lp->nnz + 1) * sizeof(**value));
	fill = malloc((lp->ncols + 1) * sizeof(*fill));
	if (!*start || !*index || !*value || !fill) {
		free(fill);
		return -1;
	}
	for (size_t i = 0; i < lp->nnz; i++)
		(*start)[lp->col[i] + 1]++;
	for (size_t c = 0; c < lp->ncols; c++)
		(*start)[c + 1] += (*start)[c];
	memcpy(fill, *start, (lp->ncols + 1) * sizeof(*fill));
	for (size_t i = 0; i < lp->nnz; i++) {
		CoinBigIndex at = fill[lp->col[i]]++;

		(*index)[at] = lp->row[i];
		(*value)[at] = lp->val[i];
	}
	free(fill);
	return 0;
}

/* What CLP's model hands back, as clp_solve says. */
static int clp_result(Clp_Simplex *model, const struct lp *lp, int ret, int max_iters,
		      double max_seconds, double *objval, const struct clp_result *res, char *err,
		      size_t errlen)
{
	int status = Clp_status(model);

	if (status == 3 && max_iters > 0 && Clp_hitMaximumIterations(model)) {
		snprintf(err, errlen, "not solved within %d iterations (CLP stopped)", max_iters);
		return -2;
	}
	if (status == 3) {
		snprintf(err, errlen, "not solved within %g s (CLP stopped)", max_seconds);
		return -1;
	}
	if (status != 0) {
		snprintf(err, errlen, "CLP did not reach an optimum (return %d, status %d)", ret,
			 status);
		return -1;
	}
	*objval = Clp_objectiveValue(model);
	if (res && res->x)
		memcpy(res->x, Clp_getColSolution(model), lp->ncols * sizeof(*res->x));
	if (res && res->stat)
		memcpy(res->stat, Clp_statusArray(model), lp->ncols + lp->nrows);
	if (res && res->row_price)
		memcpy(res->row_price, Clp_getRowPrice(model), lp->nrows * sizeof(*res->row_price));
	return 0;
}

int clp_solve(const struct lp *lp, const struct start *x0, int max_iters, double max_seconds,
	      double *objval, const struct clp_result *res, size_t *iters, char *err,
	      size_t errlen)
{
	CoinBigIndex *start = NULL;
	int *index = NULL, rc = -1, ret;
	double *value = NULL;
	Clp_Simplex *model;

	if (by_column(lp, &start, &index, &value)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	model = Clp_newModel();
	Clp_setLogLevel(model, 0);
	Clp_loadProblem(model, (int)lp->ncols, (int)lp->nrows, start, index, value, lp->collb,
			lp->colub, lp->obj, lp->rowlb, lp->rowub);
	Clp_setOptimizationDirection(model, 1.0);
	if (max_seconds > 0)
		Clp_setMaximumSeconds(model, max_seconds);
	if (max_iters > 0)
		Clp_setMaximumIterations(model, max_iters);
	if (x0) {
		/* From the greedy's vertex: CLP's primal simplex keeps the
		 * basis it is given (no presolve, which would drop it). */
		Clp_setColSolution(model, x0->x);
		Clp_copyinStatus(model, x0->stat);
		ret = Clp_primal(model, 0);
	} else {
		/* The reference: presolve, then the primal simplex from CLP's
		 * own start (the method before the warm start). */
		ret = Clp_initialPrimalSolve(model);
	}
	*iters = (size_t)Clp_numberIterations(model);
	rc = clp_result(model, lp, ret, max_iters, max_seconds, objval, res, err, errlen);
	Clp_deleteModel(model);
out:
	free(start);
	free(index);
	free(value);
	return rc;
}
