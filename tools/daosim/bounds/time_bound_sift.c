/* SPDX-License-Identifier: MIT */
/*
 * time_bound_sift.c - the time-indexed LP solved by sifting
 * (time_bound_lp.h, sift_solve).
 *
 * Most of a long trace's reuse intervals are kept whole at the optimum
 * (on a 49,152-kernel 2-D stencil at 50%, 210,000 of 220,000): their
 * columns sit at 0 and only make each simplex pivot dearer, since CLP
 * prices every column and updates every column's weight. So CLP first
 * solves the LP restricted to the intervals the start drops any of, with
 * the write-back rows of the others gone too (each holds one column that
 * is left out). Then every column left out is priced with that optimum's
 * row duals: those that would lower the objective, and those within a
 * margin of it (near-degenerate ones, which the next pivots tend to make
 * attractive), are taken in, and the restricted LP is solved again from
 * where it stopped; until no column left out would lower the objective.
 *
 * The restricted optimum, with the columns left out at 0 and their rows'
 * slacks basic, is then a basis of the whole LP that is primal feasible
 * (a kept interval violates nothing) and dual feasible (every column left
 * out was priced). To prove it, CLP solves the whole LP from it: no pivot
 * when the pricing here was right, a few where tolerances differ, and
 * the value is CLP's optimum of the whole LP either way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "time_bound_lp.h"

/* CLP's default dual tolerance: a reduced cost below -SIFT_DUAL_TOL
 * would lower the objective. */
#define SIFT_DUAL_TOL 1e-7
/* Rounds of pricing before the whole LP takes over (prove) or the
 * restricted optimum is handed on (a start for a finer LP). */
enum { SIFT_MAX_ROUNDS = 20, SIFT_HINT_ROUNDS = 2 };

struct sift {
	const struct lp *lp;
	const struct layout *L;
	const struct trace_profile *p;
	size_t *rv_row;       /* per interval: its write-back row, SIZE_MAX if none */
	unsigned char *in;    /* per interval: its column is in the restricted LP */
	long *col_to, *row_to; /* whole LP -> restricted LP index, -1 if left out */
	struct start cur;     /* the whole LP's point and basis so far */
};

static void sift_free(struct sift *s)
{
	free(s->rv_row);
	free(s->in);
	free(s->col_to);
	free(s->row_to);
	start_free(&s->cur);
}

/*
 * The restricted LP and its start from s->cur; the numbering of both in
 * s->col_to and s->row_to. -1 when out of memory, -2 when the start does
 * not have one basic variable per row (a bug: the caller says so).
 */
static int restrict_lp(struct sift *s, struct lp *rl, struct start *rs)
{
	const struct layout *L = s->L;
	const struct lp *lp = s->lp;
	size_t nc = 0, nr = 0, basic = 0;

	for (size_t c = 0; c < L->ncols; c++)
		s->col_to[c] = 0;
	for (size_t r = 0; r < L->nrows; r++)
		s->row_to[r] = 0;
	for (size_t j = 0; j < s->p->nintervals; j++) {
		if (s->in[j])
			continue;
		s->col_to[L->cE_j + j] = -1;
		if (s->rv_row[j] != SIZE_MAX)
			s->row_to[s->rv_row[j]] = -1;
	}
	for (size_t c = 0; c < L->ncols; c++)
		s->col_to[c] = s->col_to[c] < 0 ? -1 : (long)nc++;
	for (size_t r = 0; r < L->nrows; r++)
		s->row_to[r] = s->row_to[r] < 0 ? -1 : (long)nr++;
	memset(rl, 0, sizeof(*rl));
	memset(rs, 0, sizeof(*rs));
	rl->nrows = nr;
	rl->ncols = nc;
	rl->collb = malloc(nc * sizeof(double));
	rl->colub = malloc(nc * sizeof(double));
	rl->obj = malloc(nc * sizeof(double));
	rl->rowlb = malloc(nr * sizeof(double));
	rl->rowub = malloc(nr * sizeof(double));
	rs->x = malloc(nc * sizeof(double));
	rs->stat = malloc(nc + nr);
	if (!rl->collb || !rl->colub || !rl->obj || !rl->rowlb || !rl->rowub || !rs->x ||
	    !rs->stat)
		return -1;
	for (size_t c = 0; c < L->ncols; c++) {
		long k = s->col_to[c];

		if (k < 0)
			continue;
		rl->collb[k] = lp->collb[c];
		rl->colub[k] = lp->colub[c];
		rl->obj[k] = lp->obj[c];
		rs->x[k] = s->cur.x[c];
		rs->stat[k] = s->cur.stat[c];
		basic += CLP_STATUS(rs->stat[k]) == CLP_BASIC;
	}
	for (size_t r = 0; r < L->nrows; r++) {
		long k = s->row_to[r];

		if (k < 0)
			continue;
		rl->rowlb[k] = lp->rowlb[r];
		rl->rowub[k] = lp->rowub[r];
		rs->stat[nc + k] = s->cur.stat[L->ncols + r];
		basic += CLP_STATUS(rs->stat[nc + k]) == CLP_BASIC;
	}
	for (size_t i = 0; i < lp->nnz; i++) {
		long r = s->row_to[lp->row[i]], c = s->col_to[lp->col[i]];

		if (r >= 0 && c >= 0)
			lp_entry(rl, (size_t)r, (size_t)c, lp->val[i]);
	}
	if (rl->nomem)
		return -1;
	return basic == nr ? 0 : -2;
}

/*
 * Price the columns left out with the restricted optimum's row duals y:
 * interval j's column has +1 in the fetch row of its end, -1 and +1 in
 * the E rows of its start + 1 and its end, -1 in its write-back row
 * (left out with it: its slack is basic, its dual 0) and no cost, so its
 * reduced cost is -(y_Q[end] - y_E[start + 1] + y_E[end]). Those below
 * margin are taken in; *strict: how many of them would lower the
 * objective. Returns how many were taken in.
 */
static size_t price(struct sift *s, const double *y, double margin, size_t *strict)
{
	const struct layout *L = s->L;
	size_t taken = 0;

	*strict = 0;
	for (size_t j = 0; j < s->p->nintervals; j++) {
		const struct reuse_interval *iv = &s->p->intervals[j];
		double d;

		if (s->in[j])
			continue;
		d = -(y[s->row_to[L->rQ + iv->end]] - y[s->row_to[L->rE + iv->start + 1]] +
		      y[s->row_to[L->rE + iv->end]]);
		if (d < margin) {
			s->in[j] = 1;
			taken++;
			*strict += d < -SIFT_DUAL_TOL;
		}
	}
	return taken;
}

/* s set up from x0: every interval the start drops any of in, the rest
 * left out with their write-back rows; -1 when out of memory. */
static int sift_init(struct sift *s, const struct start *x0)
{
	const struct layout *L = s->L;
	const struct trace_profile *p = s->p;
	size_t n = p->nintervals;

	s->rv_row = malloc((n + 1) * sizeof(*s->rv_row));
	s->in = malloc(n + 1);
	s->col_to = malloc((L->ncols + 1) * sizeof(*s->col_to));
	s->row_to = malloc((L->nrows + 1) * sizeof(*s->row_to));
	s->cur.x = malloc(L->ncols * sizeof(*s->cur.x));
	s->cur.stat = malloc(L->ncols + L->nrows);
	if (!s->rv_row || !s->in || !s->col_to || !s->row_to || !s->cur.x || !s->cur.stat)
		return -1;
	memcpy(s->cur.x, x0->x, L->ncols * sizeof(*s->cur.x));
	memcpy(s->cur.stat, x0->stat, L->ncols + L->nrows);
	for (size_t j = 0, r = L->rV; j < n; j++) {
		size_t c = L->cE_j + j;

		s->rv_row[j] = p->intervals[j].version == SIZE_MAX ? SIZE_MAX : r++;
		s->in[j] = s->cur.x[c] > 0 || CLP_STATUS(s->cur.stat[c]) != CLP_AT_LOWER;
	}
	/* A write-back row left out takes its basic variable with it: the
	 * start pairs each version's wb with the row of its interval that
	 * drops the most; when that interval is left out it drops nothing,
	 * so neither does any of the version's, and wb is 0, at its bound. */
	for (size_t j = 0; j < n; j++) {
		size_t r = s->rv_row[j], wb;

		if (s->in[j] || r == SIZE_MAX || CLP_STATUS(s->cur.stat[L->ncols + r]) == CLP_BASIC)
			continue;
		wb = L->cWB + p->intervals[j].version;
		s->cur.stat[L->ncols + r] = CLP_BASIC;
		if (CLP_STATUS(s->cur.stat[wb]) == CLP_BASIC) {
			s->cur.stat[wb] = CLP_AT_LOWER;
			s->cur.x[wb] = 0.0;
		}
	}
	return 0;
}

/* One round: the restricted LP solved from s->cur, its optimum back in
 * s->cur (the rows left out with their slacks basic), the columns left
 * out priced. 0 (*value, *strict: columns taken in that would lower the
 * objective), or -1 with err set. */
static int sift_round(struct sift *s, double t0, double max_seconds, double margin,
		      double *value, size_t *strict, size_t *iters, size_t *priced_in, char *err,
		      size_t errlen)
{
	const struct layout *L = s->L;
	struct lp rl = { 0 };
	struct start rs = { 0 };
	double *rx = NULL, *y = NULL, left;
	unsigned char *rstat = NULL;
	size_t it;
	int ret = restrict_lp(s, &rl, &rs);

	if (ret == -2)
		snprintf(err, errlen, "sifting: the restricted start is not a basis (a bug in daosim)");
	if (ret)
		goto out;
	ret = -1;
	rx = malloc(rl.ncols * sizeof(*rx));
	rstat = malloc(rl.ncols + rl.nrows);
	y = malloc(rl.nrows * sizeof(*y));
	if (!rx || !rstat || !y || !time_left(t0, max_seconds, &left, err, errlen))
		goto out;
	ret = clp_solve(&rl, &rs, 0, left, value,
			&(struct clp_result){ .x = rx, .stat = rstat, .row_price = y }, &it, err,
			errlen);
	*iters += it;
	if (ret)
		goto out;
	for (size_t c = 0; c < L->ncols; c++) {
		long k = s->col_to[c];

		if (k >= 0) {
			s->cur.x[c] = rx[k];
			s->cur.stat[c] = rstat[k];
		}
	}
	for (size_t r = 0; r < L->nrows; r++) {
		long k = s->row_to[r];

		s->cur.stat[L->ncols + r] = k >= 0 ? rstat[rl.ncols + k] : CLP_BASIC;
	}
	*priced_in += price(s, y, margin, strict);
out:
	if (ret == -1 && (!rx || !rstat || !y || rl.nomem))
		snprintf(err, errlen, "out of memory");
	lp_free(&rl);
	start_free(&rs);
	free(rx);
	free(rstat);
	free(y);
	return ret ? -1 : 0;
}

int sift_solve(const struct ti_lp *t, const struct start *x0, const struct sift_opts *o,
	       double *objval, double *xout, size_t *iters, size_t *priced_in, char *err,
	       size_t errlen)
{
	struct sift s = { .lp = &t->lp, .L = &t->L, .p = t->p };
	double t0 = cpu_s(), left;
	int rc = -1;

	*iters = 0;
	*priced_in = 0;
	if (sift_init(&s, x0)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int round = 0;; round++) {
		size_t strict;
		double value;

		if (sift_round(&s, t0, o->max_seconds, o->margin, &value, &strict, iters, priced_in,
			       err, errlen))
			goto out;
		if (!o->prove && (!strict || round + 1 >= SIFT_HINT_ROUNDS)) {
			/* a start for a finer LP: the restricted optimum */
			*objval = value;
			if (xout)
				memcpy(xout, s.cur.x, t->L.ncols * sizeof(*xout));
			rc = 0;
			goto out;
		}
		if (!strict || round + 1 >= SIFT_MAX_ROUNDS)
			break;
	}
	if (time_left(t0, o->max_seconds, &left, err, errlen)) {
		size_t it;

		rc = clp_solve(s.lp, &s.cur, 0, left, objval, &(struct clp_result){ .x = xout }, &it,
			       err, errlen);
		*iters += it;
	}
out:
	sift_free(&s);
	return rc;
}
