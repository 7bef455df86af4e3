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

dao_status lp_bound_bytes_glpk(const struct trace_profile *p, uint64_t budget, enum lp_direction dir,
			       double max_seconds, uint64_t *bytes, char *err, size_t errlen)
{
	size_t T = p->nkernels, nint = 0, nnz = 0, col;
	double scale = 1.0, obj;
	uint64_t base = dir == LP_H2D ? p->compulsory_bytes : 0;
	int *ia = NULL, *ja = NULL;
	double *ar = NULL;
	glp_prob *lp;
	glp_smcp parm;
	dao_status st = DAO_OK;
	int ret, status;

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
	/* Rows: 2t = in_t, 2t+1 = out_t (GLPK counts from 1). */
	glp_add_rows(lp, (int)(2 * T));
	for (size_t t = 0; t < T; t++) {
		glp_set_row_bnds(lp, (int)(2 * t + 1), GLP_FX, 0.0, 0.0);
		glp_set_row_bnds(lp, (int)(2 * t + 2), GLP_FX, 0.0, 0.0);
	}
	/* Columns: y_t (T), u_t (T - 1), z_j (nint). */
	glp_add_cols(lp, (int)(2 * T - 1 + nint));
	ia = malloc((4 * T + 2 * nint + 1) * sizeof(*ia));
	ja = malloc((4 * T + 2 * nint + 1) * sizeof(*ja));
	ar = malloc((4 * T + 2 * nint + 1) * sizeof(*ar));
	if (!ia || !ja || !ar) {
		st = DAO_ERR_NOMEM;
		goto out;
	}
#define ENTRY(row, c, v)                \
	do {                            \
		nnz++;                  \
		ia[nnz] = (int)(row);   \
		ja[nnz] = (int)(c);     \
		ar[nnz] = (v);          \
	} while (0)
	col = 1;
	for (size_t t = 0; t < T; t++, col++) {
		/* y_t: in_t -> out_t; GLPK wants GLP_FX, not an empty GLP_DB */
		double cap = (double)(budget - p->kernel_bytes[t]) / scale;

		glp_set_col_bnds(lp, (int)col, cap > 0 ? GLP_DB : GLP_FX, 0.0, cap);
		ENTRY(2 * t + 1, col, -1.0);
		ENTRY(2 * t + 2, col, 1.0);
	}
	for (size_t t = 0; t + 1 < T; t++, col++) {
		/* u_t: out_t -> in_(t+1) */
		glp_set_col_bnds(lp, (int)col, GLP_LO, 0.0, 0.0);
		ENTRY(2 * t + 2, col, -1.0);
		ENTRY(2 * (t + 1) + 1, col, 1.0);
	}
	for (size_t j = 0; j < p->nintervals; j++) {
		const struct reuse_interval *iv = &p->intervals[j];
		double b = (double)iv->bytes / scale;

		if (dir == LP_D2H && !iv->dirty)
			continue;
		/* z_j: out_s -> in_e, cost 1 per byte (the objective is in scaled
		 * bytes, converted back below) */
		glp_set_col_bnds(lp, (int)col, GLP_DB, 0.0, b);
		glp_set_obj_coef(lp, (int)col, 1.0);
		ENTRY(2 * iv->start + 2, col, -1.0);
		ENTRY(2 * iv->end + 1, col, 1.0);
		/* supply b at out_s, demand b at in_e */
		glp_set_row_bnds(lp, (int)(2 * iv->start + 2), GLP_FX,
				 glp_get_row_lb(lp, (int)(2 * iv->start + 2)) - b,
				 glp_get_row_lb(lp, (int)(2 * iv->start + 2)) - b);
		glp_set_row_bnds(lp, (int)(2 * iv->end + 1), GLP_FX,
				 glp_get_row_lb(lp, (int)(2 * iv->end + 1)) + b,
				 glp_get_row_lb(lp, (int)(2 * iv->end + 1)) + b);
		col++;
	}
#undef ENTRY
	glp_load_matrix(lp, (int)nnz, ia, ja, ar);
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_ON;
	if (max_seconds > 0)
		parm.tm_lim = max_seconds * 1000 < INT_MAX ? (int)(max_seconds * 1000) : INT_MAX;
	ret = glp_simplex(lp, &parm);
	if (ret == GLP_ETMLIM) {
		if (err && errlen)
			snprintf(err, errlen, "not solved within %g s (GLPK stopped)", max_seconds);
		st = DAO_ERR_RANGE;
		goto out;
	}
	status = glp_get_status(lp);
	if (ret != 0 || status != GLP_OPT) {
		if (err && errlen)
			snprintf(err, errlen, "GLPK simplex failed (return %d, status %d)", ret,
				 status);
		st = DAO_ERR_FAILED;
		goto out;
	}
	obj = glp_get_obj_val(lp) * scale;
	/* The optimum is integral in bytes; round away solver noise. */
	*bytes = base + (obj > 0 ? (uint64_t)llround(obj) : 0);
out:
	glp_delete_prob(lp);
	glp_term_hook(NULL, NULL);
	free(ia);
	free(ja);
	free(ar);
	return st;
}
