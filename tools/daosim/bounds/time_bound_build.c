/* SPDX-License-Identifier: MIT */
/*
 * time_bound_build.c - the time-indexed LP (time_bound.h) in an aggregated
 * form with O(kernels + intervals) nonzeros (time_bound_lp.h, ti_lp_build).
 *
 * Windows m = 0..T: 0 runs before the first kernel, m = t + 1 is kernel
 * t's. Checkpoint t is the start of kernel t; it sees the copies of
 * windows 0..t. Per window and checkpoint there are running totals instead
 * of one variable per (use, window) pair:
 *
 *   Q_t  bytes fetched in windows <= t for uses after t (fetched ahead):
 *        Q_t = Q_(t-1) + H_t - (bytes that kernel t's uses needed fetched)
 *   E_t  bytes of the reuse intervals spanning t that are not kept:
 *        E_t = E_(t-1) + (e of intervals opened at t-1) - (e of those ending at t)
 *   L_m  bytes of dropped written data not yet written back after window m:
 *        L_m = L_(m-1) + (wb of writes in window m) - D_m, L_T = 0
 *
 * and space at checkpoint t is operands(t) + kept + Q_t =
 * operands(t) + B_t - E_t + Q_t <= budget, B_t being the bytes of all
 * intervals spanning t. Q_t >= 0 is "every use fetched before it", L_m >= 0
 * "nothing written back before it was written". Documentation/daosim.md
 * shows why these running totals lose nothing against one variable per
 * (use, window): an optimum never needs a fetch before the buffer's
 * previous use.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "time_bound_lp.h"

/* Where the columns and rows lie, in t->L; DAO_ERR_INVALID when CLP's
 * int indices would not hold them. */
static dao_status lay_out(struct ti_lp *t, char *err, size_t errlen)
{
	const struct trace_profile *p = t->p;
	size_t T = p->nkernels, n = p->nintervals, nv = p->nversions;
	struct layout *L = &t->L;

	L->cW = 0;              /* w_m, m = 0..T */
	L->cH = L->cW + T + 1;  /* H_m, m = 0..T-1 */
	L->cD = L->cH + T;      /* D_m at cD + m - 1, m = 1..T */
	L->cQ = L->cD + T;      /* Q_t */
	L->cE = L->cQ + T;      /* E_t */
	L->cL = L->cE + T;      /* L_m at cL + m - 1, m = 1..T */
	L->cE_j = L->cL + T;    /* e_j */
	L->cWB = L->cE_j + n;   /* wb_v */
	L->ncols = L->cWB + nv;
	L->rIN = 0;             /* w_m - H_m / bin >= 0, m = 0..T-1 */
	L->rOUT = L->rIN + T;   /* w_m - D_m / bout >= 0 at rOUT + m - 1, m = 1..T */
	L->rQ = L->rOUT + T;    /* Q_t recurrence */
	L->rE = L->rQ + T;      /* E_t recurrence */
	L->rC = L->rE + T;      /* capacity */
	L->rL = L->rC + T;      /* L_m recurrence at rL + m - 1 */
	L->rV = L->rL + T;      /* wb_v - e_j >= 0 per interval holding written data */
	L->nrows = L->rV;
	for (size_t j = 0; j < n; j++)
		L->nrows += p->intervals[j].version != SIZE_MAX;
	if (L->nrows > INT32_MAX / 2 || L->ncols > INT32_MAX / 2) {
		snprintf(err, errlen, "trace too large for the time-indexed LP");
		return DAO_ERR_INVALID;
	}
	return DAO_OK;
}

static dao_status allocate(struct ti_lp *t)
{
	size_t T = t->p->nkernels, ncols = t->L.ncols, nrows = t->L.nrows;
	struct lp *lp = &t->lp;

	lp->nrows = nrows;
	lp->ncols = ncols;
	lp->collb = calloc(ncols, sizeof(double));
	lp->colub = malloc(ncols * sizeof(double));
	lp->obj = calloc(ncols, sizeof(double));
	lp->rowlb = calloc(nrows, sizeof(double));
	lp->rowub = calloc(nrows, sizeof(double));
	t->span = calloc(T + 1, sizeof(*t->span));
	t->comp = calloc(T + 1, sizeof(*t->comp));
	if (!lp->collb || !lp->colub || !lp->obj || !lp->rowlb || !lp->rowub || !t->span ||
	    !t->comp)
		return DAO_ERR_NOMEM;
	for (size_t c = 0; c < ncols; c++)
		lp->colub[c] = INFINITY;
	return DAO_OK;
}

/* B_t (as a difference array, then summed) and the compulsory bytes each
 * kernel needs fetched (first reads). */
static void spans(struct ti_lp *t)
{
	const struct trace_profile *p = t->p;
	size_t T = p->nkernels;

	for (size_t j = 0; j < p->nintervals; j++) {
		const struct reuse_interval *iv = &p->intervals[j];

		t->span[iv->start + 1] += (double)iv->bytes / t->scale;
		t->span[iv->end] -= (double)iv->bytes / t->scale;
	}
	for (size_t k = 1; k <= T; k++)
		t->span[k] += t->span[k - 1];
	for (size_t k = 0; k < T; k++)
		t->comp[k] = (double)p->first_read_bytes[k] / t->scale;
}

/* Windows: w_m >= kernel time; copies within w_m. */
static void windows(struct ti_lp *t, const struct dao_sim_model *m, const double *kns)
{
	const struct trace_profile *p = t->p;
	const struct layout *L = &t->L;
	struct lp *lp = &t->lp;
	size_t T = p->nkernels;

	for (size_t mm = 0; mm <= T; mm++) {
		lp->obj[L->cW + mm] = 1.0;
		lp->collb[L->cW + mm] =
			!mm ? 0.0 :
			kns ? kns[mm - 1] :
			      (double)model_kernel_ns(m, p->kernel_flops[mm - 1], p->kernel_bytes[mm - 1]);
		if (mm < T) {
			lp_entry(lp, L->rIN + mm, L->cW + mm, 1.0);
			lp_entry(lp, L->rIN + mm, L->cH + mm, -1.0 / t->bin);
			lp->rowub[L->rIN + mm] = INFINITY;
		}
		if (mm >= 1) {
			lp_entry(lp, L->rOUT + mm - 1, L->cW + mm, 1.0);
			lp_entry(lp, L->rOUT + mm - 1, L->cD + mm - 1, -1.0 / t->bout);
			lp->rowub[L->rOUT + mm - 1] = INFINITY;
		}
	}
}

/* The running totals' rows, and the capacity at every kernel start. */
static void running_totals(struct ti_lp *t)
{
	const struct trace_profile *p = t->p;
	const struct layout *L = &t->L;
	struct lp *lp = &t->lp;
	size_t T = p->nkernels;

	for (size_t k = 0; k < T; k++) {
		/* Q_t - Q_(t-1) - H_t + (e of uses at t) = -comp_t */
		lp_entry(lp, L->rQ + k, L->cQ + k, 1.0);
		if (k)
			lp_entry(lp, L->rQ + k, L->cQ + k - 1, -1.0);
		lp_entry(lp, L->rQ + k, L->cH + k, -1.0);
		lp->rowlb[L->rQ + k] = lp->rowub[L->rQ + k] = -t->comp[k];
		/* E_t - E_(t-1) - (opened at t-1) + (ending at t) = 0 */
		lp_entry(lp, L->rE + k, L->cE + k, 1.0);
		if (k)
			lp_entry(lp, L->rE + k, L->cE + k - 1, -1.0);
		/* Q_t - E_t <= budget - operands(t) - B_t */
		lp_entry(lp, L->rC + k, L->cQ + k, 1.0);
		lp_entry(lp, L->rC + k, L->cE + k, -1.0);
		lp->rowlb[L->rC + k] = -INFINITY;
		lp->rowub[L->rC + k] =
			(double)(t->budget - p->kernel_bytes[k]) / t->scale - t->span[k];
	}
	for (size_t mm = 1; mm <= T; mm++) {
		/* L_m - L_(m-1) + D_m - (wb of writes in window m) = 0 */
		lp_entry(lp, L->rL + mm - 1, L->cL + mm - 1, 1.0);
		if (mm > 1)
			lp_entry(lp, L->rL + mm - 1, L->cL + mm - 2, -1.0);
		lp_entry(lp, L->rL + mm - 1, L->cD + mm - 1, 1.0);
	}
	lp->colub[L->cL + T - 1] = 0.0; /* everything dropped is written back */
}

/* Each interval's dropped bytes e_j in the Q and E rows, and the write
 * of the data it holds written back (wb_v >= e_j) in the window after
 * the write. */
static dao_status intervals(struct ti_lp *t)
{
	const struct trace_profile *p = t->p;
	const struct layout *L = &t->L;
	struct lp *lp = &t->lp;
	size_t r = L->rV, nv = p->nversions;
	size_t *release = malloc((nv + 1) * sizeof(*release));

	if (!release)
		return DAO_ERR_NOMEM;
	for (size_t j = 0; j < p->nintervals; j++) {
		const struct reuse_interval *iv = &p->intervals[j];
		double b = (double)iv->bytes / t->scale;
		size_t c = L->cE_j + j;

		lp->colub[c] = b;
		lp_entry(lp, L->rQ + iv->end, c, 1.0);
		lp_entry(lp, L->rE + iv->start + 1, c, -1.0);
		lp_entry(lp, L->rE + iv->end, c, 1.0);
		if (iv->version != SIZE_MAX) {
			lp_entry(lp, r, L->cWB + iv->version, 1.0);
			lp_entry(lp, r, c, -1.0);
			lp->rowub[r] = INFINITY;
			r++;
			release[iv->version] = iv->written_at;
		}
	}
	/* a write at kernel a is released in window a + 1 */
	for (size_t v = 0; v < nv; v++)
		lp_entry(lp, L->rL + release[v], L->cWB + v, -1.0);
	free(release);
	return DAO_OK;
}

dao_status ti_lp_build(struct ti_lp *t, const struct trace_profile *p,
		       const struct dao_sim_model *m, const double *kns, uint64_t budget,
		       char *err, size_t errlen)
{
	dao_status st;

	*t = (struct ti_lp){ .p = p, .budget = budget, .scale = 1.0 };
	while ((double)budget / t->scale > 1048576.0)
		t->scale *= 2.0;
	t->bin = m->h2d_bytes_per_s / 1e9 / t->scale; /* scaled bytes per ns */
	t->bout = m->d2h_bytes_per_s / 1e9 / t->scale;
	st = lay_out(t, err, errlen);
	if (!st)
		st = allocate(t);
	if (st)
		return st;
	spans(t);
	windows(t, m, kns);
	running_totals(t);
	st = intervals(t);
	if (!st && t->lp.nomem)
		st = DAO_ERR_NOMEM;
	return st;
}

void ti_lp_free(struct ti_lp *t)
{
	lp_free(&t->lp);
	free(t->span);
	free(t->comp);
}
