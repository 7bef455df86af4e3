/* SPDX-License-Identifier: MIT */
/*
 * lp_bound_glpk.c - the byte LP bounds as a min-cost flow, solved by GLPK's
 * simplex: the reference that lp_bound.c's greedy is checked against (tests,
 * the growth benchmark), too slow for daosim itself on long traces.
 *
 * Each kernel t becomes two nodes, in_t and out_t, joined by an arc of
 * capacity budget - operand_bytes(t): the flow on it is the bytes kept
 * strictly across t. out_t -> in_(t+1) arcs are uncapacitated. An interval
 * (s, e, b) injects b at out_s and withdraws b at in_e; what does not travel
 * the kernel chain takes its bypass arc out_s -> in_e at cost 1 per byte,
 * i.e. is not kept and must be copied again.
 *
 * The network form keeps the constraint matrix at O(kernels + intervals)
 * nonzeros, where the plain LP (one row per kernel, one column per interval
 * spanning it) would need the sum of the interval lengths.
 *
 * GLPK's RELAX-IV and out-of-kilter solvers need int capacities, which
 * bytes overflow; the primal simplex on the same network is exact in
 * doubles when bytes are scaled by a power of two.
 */
#include <glpk.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lp_bound.h"

static int silence(void *info, const char *msg)
{
	return 1; /* GLPK prints nothing; daosim reports on its own */
}

/* The flow network's entries (ia, ja, ar from 1, as GLPK wants them). */
struct entries {
	int *ia, *ja;
	double *ar;
	size_t nnz;
};

static void entry(struct entries *e, size_t row, size_t col, double v)
{
	e->nnz++;
	e->ia[e->nnz] = (int)row;
	e->ja[e->nnz] = (int)col;
	e->ar[e->nnz] = v;
}

/* Rows 2t + 1 = in_t, 2t + 2 = out_t; columns from 1: y_t (T), u_t
 * (T - 1), then z_j per interval of the direction. */
static void flow(glp_prob *lp, const struct trace_profile *p, uint64_t budget,
		 enum lp_direction dir, double scale, struct entries *e)
{
	size_t T = p->nkernels, col = 1;

	for (size_t t = 0; t < T; t++) {
		glp_set_row_bnds(lp, (int)(2 * t + 1), GLP_FX, 0.0, 0.0);
		glp_set_row_bnds(lp, (int)(2 * t + 2), GLP_FX, 0.0, 0.0);
	}
	for (size_t t = 0; t < T; t++, col++) {
		/* y_t: in_t -> out_t; GLPK wants GLP_FX, not an empty GLP_DB */
		double cap = (double)(budget - p->kernel_bytes[t]) / scale;

		glp_set_col_bnds(lp, (int)col, cap > 0 ? GLP_DB : GLP_FX, 0.0, cap);
		entry(e, 2 * t + 1, col, -1.0);
		entry(e, 2 * t + 2, col, 1.0);
	}
	for (size_t t = 0; t + 1 < T; t++, col++) {
		/* u_t: out_t -> in_(t+1) */
		glp_set_col_bnds(lp, (int)col, GLP_LO, 0.0, 0.0);
		entry(e, 2 * t + 2, col, -1.0);
		entry(e, 2 * (t + 1) + 1, col, 1.0);
	}
	for (size_t j = 0; j < p->nintervals; j++) {
		const struct reuse_interval *iv = &p->intervals[j];
		double b = (double)iv->bytes / scale;
		int out_s = (int)(2 * iv->start + 2), in_e = (int)(2 * iv->end + 1);

		if (dir == LP_D2H && !iv->dirty)
			continue;
		/* z_j: out_s -> in_e, cost 1 per byte (the objective is in scaled
		 * bytes, converted back below) */
		glp_set_col_bnds(lp, (int)col, GLP_DB, 0.0, b);
		glp_set_obj_coef(lp, (int)col, 1.0);
		entry(e, (size_t)out_s, col, -1.0);
		entry(e, (size_t)in_e, col, 1.0);
		/* supply b at out_s, demand b at in_e */
		glp_set_row_bnds(lp, out_s, GLP_FX, glp_get_row_lb(lp, out_s) - b,
				 glp_get_row_lb(lp, out_s) - b);
		glp_set_row_bnds(lp, in_e, GLP_FX, glp_get_row_lb(lp, in_e) + b,
				 glp_get_row_lb(lp, in_e) + b);
		col++;
	}
}

/* GLPK's primal simplex on lp; its optimum in scaled bytes. */
static dao_status simplex(glp_prob *lp, double max_seconds, double *obj, char *err,
			  size_t errlen)
{
	glp_smcp parm;
	int ret, status;

	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_ON;
	if (max_seconds > 0)
		parm.tm_lim = max_seconds * 1000 < INT_MAX ? (int)(max_seconds * 1000) : INT_MAX;
	ret = glp_simplex(lp, &parm);
	if (ret == GLP_ETMLIM) {
		if (err && errlen)
			snprintf(err, errlen, "not solved within %g s (GLPK stopped)", max_seconds);
		return DAO_ERR_RANGE;
	}
	status = glp_get_status(lp);
	if (ret != 0 || status != GLP_OPT) {
		if (err && errlen)
			snprintf(err, errlen, "GLPK simplex failed (return %d, status %d)", ret,
				 status);
		return DAO_ERR_FAILED;
	}
	*obj = glp_get_obj_val(lp);
	return DAO_OK;
}

dao_status lp_bound_bytes_glpk(const struct trace_profile *p, uint64_t budget, enum lp_direction dir,
			       double max_seconds, uint64_t *bytes, char *err, size_t errlen)
{
	size_t T = p->nkernels, nint = 0, cap;
	double scale = 1.0, obj;
	uint64_t base = dir == LP_H2D ? p->compulsory_bytes : 0;
	struct entries e = { 0 };
	glp_prob *lp;
	dao_status st;

	st = lp_check_budget(p, budget, err, errlen);
	if (st)
		return st;
	for (size_t j = 0; j < p->nintervals; j++)
		if (dir == LP_H2D || p->intervals[j].dirty)
			nint++;
	if (nint == 0) {
		*bytes = base;
		return DAO_OK;
	}
	/* Scale by a power of two (exact in floating point) so that the
	 * largest capacity is about 2^24: the simplex tolerances are relative
	 * but its pivots behave better on moderate numbers. */
	while ((double)budget / scale > 16777216.0)
		scale *= 2.0;

	glp_term_hook(silence, NULL);
	lp = glp_create_prob();
	glp_set_obj_dir(lp, GLP_MIN);
	glp_add_rows(lp, (int)(2 * T));
	glp_add_cols(lp, (int)(2 * T - 1 + nint));
	cap = 4 * T + 2 * nint + 1;
	e.ia = malloc(cap * sizeof(*e.ia));
	e.ja = malloc(cap * sizeof(*e.ja));
	e.ar = malloc(cap * sizeof(*e.ar));
	st = e.ia && e.ja && e.ar ? DAO_OK : DAO_ERR_NOMEM;
	if (!st) {
		flow(lp, p, budget, dir, scale, &e);
		glp_load_matrix(lp, (int)e.nnz, e.ia, e.ja, e.ar);
		st = simplex(lp, max_seconds, &obj, err, errlen);
	}
	if (!st) {
		obj *= scale;
		/* The optimum is integral in bytes; round away solver noise. */
		*bytes = base + (obj > 0 ? (uint64_t)llround(obj) : 0);
	}
	glp_delete_prob(lp);
	glp_term_hook(NULL, NULL);
	free(e.ia);
	free(e.ja);
	free(e.ar);
	return st;
}
