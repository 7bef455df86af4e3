/* SPDX-License-Identifier: MIT */
/*
 * segment_mip.c - the segment LP (segment_lp.h) with its residency
 * columns held to 0 or 1, by GLPK's branch and bound within a time limit
 * (Documentation/daosim.md, "A block is held whole"). Every run is a
 * point of it (a buffer occupies a block at a cut or does not), so the
 * branch and bound's bound when it stops is a lower bound on every run;
 * with r in {0, 1}, any share of a fetch before a cut holds the whole
 * block there, which the LP counts only by the share. Not a row of
 * daosim's table: on traces of a few hundred kernels and more it rarely
 * gets past the LP in seconds. daosim-bench-mip runs it.
 */
#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segment_lp.h"
#include "segment_mip.h"

/* GLPK's bounds for [lb, ub]. */
static int glp_type(double lb, double ub)
{
	if (isinf(lb) && isinf(ub))
		return GLP_FR;
	if (isinf(ub))
		return GLP_LO;
	if (isinf(lb))
		return GLP_UP;
	return lb == ub ? GLP_FX : GLP_DB;
}

/* The largest bound the search has proven so far: the best active
 * node's, which only rises. */
static void track(glp_tree *tree, void *info)
{
	double *bound = info;
	int best = glp_ios_best_node(tree);

	if (best) {
		double b = glp_ios_node_bound(tree, best);

		if (b > *bound)
			*bound = b;
	}
}

/* s's LP into a GLPK problem, residency columns binary; NULL when it
 * holds a duplicate entry (which GLPK would abort on) or out of memory. */
static glp_prob *load(const struct segment_lp *s, size_t *binaries)
{
	const struct lp *lp = &s->lp;
	int *ia = malloc((lp->nnz + 1) * sizeof(*ia));
	int *ja = malloc((lp->nnz + 1) * sizeof(*ja));
	double *ar = malloc((lp->nnz + 1) * sizeof(*ar));
	glp_prob *P = NULL;

	if (!ia || !ja || !ar)
		goto out;
	for (size_t e = 0; e < lp->nnz; e++) {
		ia[e + 1] = lp->row[e] + 1;
		ja[e + 1] = lp->col[e] + 1;
		ar[e + 1] = lp->val[e];
	}
	if (glp_check_dup((int)lp->nrows, (int)lp->ncols, (int)lp->nnz, ia, ja))
		goto out;
	P = glp_create_prob();
	glp_set_obj_dir(P, GLP_MIN);
	glp_add_rows(P, (int)lp->nrows);
	glp_add_cols(P, (int)lp->ncols);
	for (size_t r = 0; r < lp->nrows; r++)
		glp_set_row_bnds(P, (int)r + 1, glp_type(lp->rowlb[r], lp->rowub[r]),
				 isinf(lp->rowlb[r]) ? 0 : lp->rowlb[r],
				 isinf(lp->rowub[r]) ? 0 : lp->rowub[r]);
	*binaries = 0;
	for (size_t c = 0; c < lp->ncols; c++) {
		glp_set_obj_coef(P, (int)c + 1, lp->obj[c]);
		glp_set_col_bnds(P, (int)c + 1, glp_type(lp->collb[c], lp->colub[c]),
				 isinf(lp->collb[c]) ? 0 : lp->collb[c],
				 isinf(lp->colub[c]) ? 0 : lp->colub[c]);
		if (s->is_r[c]) {
			glp_set_col_kind(P, (int)c + 1, GLP_BV);
			(*binaries)++;
		}
	}
	glp_load_matrix(P, (int)lp->nnz, ia, ja, ar);
out:
	free(ia);
	free(ja);
	free(ar);
	return P;
}

/* in's program built (s, to be freed either way) and handed to GLPK (*P,
 * NULL for a trace of no kernels or on failure); out zeroed but for its
 * segments and binary columns. */
static dao_status program(const struct bound_input *in, size_t every, struct segment_lp *s,
			  glp_prob **P, struct segment_mip *out, char *err, size_t errlen)
{
	dao_status st;

	memset(out, 0, sizeof(*out));
	*P = NULL;
	st = segment_lp_build(in, every, s, err, errlen);
	if (st || s->nsegs == 0)
		return st;
	out->segments = s->nsegs;
	*P = load(s, &out->binaries);
	if (!*P) {
		snprintf(err, errlen, "the LP could not be handed to GLPK");
		return DAO_ERR_NOMEM;
	}
	return DAO_OK;
}

dao_status segment_mip_bound(const struct bound_input *in, size_t every, double limit_s,
			     struct segment_mip *out, char *err, size_t errlen)
{
	struct segment_lp s;
	glp_prob *P = NULL;
	glp_smcp sm;
	glp_iocp io;
	double t0 = cpu_s(), bound;
	dao_status st;
	int ret, term = -1;
	char dummy[128] = "";

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	st = program(in, every, &s, &P, out, err, errlen);
	if (st || !P)
		goto out;
	/* GLPK's cut generators print even with messages off */
	term = glp_term_out(GLP_OFF);
	glp_init_smcp(&sm);
	sm.msg_lev = GLP_MSG_OFF;
	sm.tm_lim = (int)fmin(limit_s * 1e3, 1e9);
	ret = glp_simplex(P, &sm);
	if (ret || glp_get_status(P) != GLP_OPT) {
		snprintf(err, errlen, "GLPK's simplex %s (return %d, status %d)",
			 ret == GLP_ETMLIM ? "did not finish within the limit" : "failed", ret,
			 glp_get_status(P));
		st = ret == GLP_ETMLIM ? DAO_ERR_RANGE : DAO_ERR_FAILED;
		goto out;
	}
	bound = glp_get_obj_val(P);
	out->lp_ns = segment_lp_ns(bound);
	glp_init_iocp(&io);
	io.msg_lev = GLP_MSG_OFF;
	io.tm_lim = (int)fmax(1, fmin((limit_s - (cpu_s() - t0)) * 1e3, 1e9));
	io.gmi_cuts = io.mir_cuts = io.cov_cuts = io.clq_cuts = GLP_ON;
	io.cb_func = track;
	io.cb_info = &bound;
	ret = glp_intopt(P, &io);
	out->optimal = ret == 0 && glp_mip_status(P) == GLP_OPT;
	if (out->optimal)
		bound = fmax(bound, glp_mip_obj_val(P));
	else if (ret && ret != GLP_ETMLIM) {
		snprintf(err, errlen, "GLPK's branch and bound failed (return %d)", ret);
		st = DAO_ERR_FAILED;
		goto out;
	}
	out->ns = segment_lp_ns(bound);
out:
	if (term != -1)
		glp_term_out(term);
	out->cpu_s = cpu_s() - t0;
	if (P)
		glp_delete_prob(P);
	segment_lp_free(&s);
	return st;
}

dao_status segment_mip_write_mps(const struct bound_input *in, size_t every, const char *path,
				 struct segment_mip *out, char *err, size_t errlen)
{
	struct segment_lp s;
	glp_prob *P = NULL;
	dao_status st;
	int term = -1;
	char dummy[128] = "";

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	st = program(in, every, &s, &P, out, err, errlen);
	if (!st && !P) {
		snprintf(err, errlen, "a trace of no kernels has no program to write");
		st = DAO_ERR_INVALID;
	}
	if (st)
		goto out;
	/* glp_write_mps reports on the terminal, failures included */
	term = glp_term_out(GLP_OFF);
	if (glp_write_mps(P, GLP_MPS_FILE, NULL, path)) {
		snprintf(err, errlen, "%s: could not be written", path);
		st = DAO_ERR_IO;
	}
out:
	if (term != -1)
		glp_term_out(term);
	if (P)
		glp_delete_prob(P);
	segment_lp_free(&s);
	return st;
}
