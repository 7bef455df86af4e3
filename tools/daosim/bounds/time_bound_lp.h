/* SPDX-License-Identifier: MIT */
/*
 * time_bound_lp.h - inside the time-indexed bound (time_bound.c): the LP
 * in triplets, a starting basis, where its columns and rows lie, and the
 * two ways CLP solves it (time_bound_clp.c: whole; time_bound_sift.c: by
 * sifting). Not an interface for other tools.
 */
#ifndef DAOSIM_TIME_BOUND_LP_H
#define DAOSIM_TIME_BOUND_LP_H

#include <stdbool.h>
#include <stddef.h>

#include "../profile.h"

/* The LP in triplets, then handed to CLP column by column. */
struct lp {
	size_t nrows, ncols, nnz, cap;
	int *row, *col;
	double *val;
	double *collb, *colub, *obj, *rowlb, *rowub;
	int nomem; /* an entry could not be stored */
};

void lp_entry(struct lp *lp, size_t r, size_t c, double v);
void lp_free(struct lp *lp);

/* A starting vertex for the simplex: values and basis statuses. */
struct start {
	double *x;
	unsigned char *stat; /* CLP's layout: columns, then rows */
	unsigned char *colstat, *rowstat;
	double value; /* its objective: the sum of the windows' lengths */
};

void start_free(struct start *s);

/* Where the LP's columns and rows lie (time_bound.c's solve says what
 * each is): cE_j + j is interval j's dropped bytes, rV the first of the
 * write-back rows, one per interval that holds written data, in order. */
struct layout {
	size_t cW, cH, cD, cQ, cE, cL, cE_j, cWB, ncols;
	size_t rIN, rOUT, rQ, rE, rC, rL, rV, nrows;
};

/* CLP's status codes (ClpSimplex::Status); the low 3 bits of a status. */
enum { CLP_BASIC = 1, CLP_AT_UPPER = 2, CLP_AT_LOWER = 3, CLP_SUPERBASIC = 4 };
#define CLP_STATUS(s) ((s) & 7)

/* CPU seconds of the process so far (the limits are CPU time). */
double cpu_s(void);
/* The CPU seconds left of max_seconds since t0 (cpu_s) into *left (0
 * without a limit); false, with err set, when none are. */
bool time_left(double t0, double max_seconds, double *left, char *err, size_t errlen);

/* What a solve hands back beside its value; any pointer may be NULL. */
struct clp_result {
	double *x;         /* column values (ncols) */
	unsigned char *stat; /* final statuses, CLP's layout (ncols + nrows) */
	double *row_price; /* row duals (nrows) */
};

/*
 * Solve lp with CLP's primal simplex from x0 (NULL: presolve and CLP's
 * own start). max_iters > 0: stop there (-2); max_seconds > 0: stop there
 * (-1, "not solved within"). 0, or -1 with err set; *iters either way.
 */
int clp_solve(struct lp *lp, const struct start *x0, int max_iters, double max_seconds,
	      double *objval, const struct clp_result *res, size_t *iters, char *err,
	      size_t errlen);

/*
 * lp (laid out as L, its intervals p's) from x0 by sifting
 * (time_bound_sift.c). prove: finish with CLP on the whole LP from the
 * sifted basis, so that the value is CLP's proven optimum; else (a start
 * for a finer LP) stop after at most two pricing rounds with the
 * restricted optimum, the columns left out at 0. margin: a column left
 * out whose reduced cost is below it is taken in (> 0: near-degenerate
 * ones too). *priced_in: columns taken in by pricing. Errors as
 * clp_solve.
 */
int sift_solve(struct lp *lp, const struct layout *L, const struct trace_profile *p,
	       const struct start *x0, int prove, double margin, double max_seconds,
	       double *objval, double *xout, size_t *iters, size_t *priced_in, char *err,
	       size_t errlen);

#endif /* DAOSIM_TIME_BOUND_LP_H */
