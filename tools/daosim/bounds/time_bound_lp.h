/* SPDX-License-Identifier: MIT */
/*
 * time_bound_lp.h - inside the time-indexed bound (time_bound.h), file by
 * file, each below the one before it:
 *   time_bound.c        the entry points and the coarse-to-fine driver
 *   time_bound_coarse.c the trace in blocks, and a level's merged LP
 *   time_bound_solve.c  one LP built, started and solved (ti_solve)
 *   time_bound_start.c  the vertex from the byte LP's greedy
 *   time_bound_build.c  the aggregated LP (struct ti_lp)
 *   time_bound_sift.c   CLP by sifting
 *   time_bound_clp.c    the LP in triplets, and CLP solving it whole
 * Not an interface for other tools.
 */
#ifndef DAOSIM_TIME_BOUND_LP_H
#define DAOSIM_TIME_BOUND_LP_H

#include <stdbool.h>
#include <stddef.h>

#include "../profile.h"
#include "time_bound.h"

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

/* Where the LP's columns and rows lie (time_bound_build.c says what
 * each is): cE_j + j is interval j's dropped bytes, rV the first of the
 * write-back rows, one per interval that holds written data, in order. */
struct layout {
	size_t cW, cH, cD, cQ, cE, cL, cE_j, cWB, ncols;
	size_t rIN, rOUT, rQ, rE, rC, rL, rV, nrows;
};

/* One time-indexed LP as built (time_bound_build.c). Bytes are in LP
 * units of scale bytes (a power of two, so exact) that put the budget
 * near 2^20: moderate numbers keep the simplex's tolerances meaningful.
 * Time stays in ns. */
struct ti_lp {
	const struct trace_profile *p;
	uint64_t budget;
	struct lp lp;
	struct layout L;
	double scale;     /* bytes per LP unit */
	double bin, bout; /* LP units the h2d and the d2h engine move per ns */
	double *span;     /* per kernel t: B_t, the intervals spanning t (LP units) */
	double *comp;     /* per kernel: the compulsory bytes it needs fetched (LP units) */
};

/*
 * p's LP at budget (>= every kernel's operands), its windows' kernel times
 * kns (NULL: the model's). DAO_ERR_INVALID (err says why) when it is too
 * large for CLP, DAO_ERR_NOMEM. t is to be freed (ti_lp_free) either way.
 */
dao_status ti_lp_build(struct ti_lp *t, const struct trace_profile *p,
		       const struct dao_sim_model *m, const double *kns, uint64_t budget,
		       char *err, size_t errlen);
void ti_lp_free(struct ti_lp *t);

/*
 * A vertex of t's LP built from the byte LP's greedy (time_bound_start.c
 * says how), keeping budget - reserve; with hint (bytes dropped per
 * interval, reserve 0) keeping what the hint does not drop instead.
 * DAO_ERR_NOMEM; s to be freed (start_free) either way.
 */
dao_status ti_warm_start(const struct ti_lp *t, uint64_t reserve, const double *hint,
			 struct start *s, char *err, size_t errlen);
/* ti_warm_start's vertex for the reserve that gives the smallest value. */
dao_status ti_best_start(const struct ti_lp *t, struct start *best, char *err, size_t errlen);

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
int clp_solve(const struct lp *lp, const struct start *x0, int max_iters, double max_seconds,
	      double *objval, const struct clp_result *res, size_t *iters, char *err,
	      size_t errlen);

/* How sift_solve ends, and when it takes a column in. */
struct sift_opts {
	/* Finish with CLP on the whole LP from the sifted basis, so that the
	 * value is CLP's proven optimum; else (a start for a finer LP) stop
	 * after at most two pricing rounds with the restricted optimum, the
	 * columns left out at 0. */
	int prove;
	/* A column left out whose reduced cost is below margin is taken in
	 * (> 0: near-degenerate ones too). */
	double margin;
	double max_seconds;
};

/*
 * t's LP from x0 by sifting (time_bound_sift.c). *priced_in: columns
 * taken in by pricing; xout (or NULL): the column values. Errors as
 * clp_solve.
 */
int sift_solve(const struct ti_lp *t, const struct start *x0, const struct sift_opts *o,
	       double *objval, double *xout, size_t *iters, size_t *priced_in, char *err,
	       size_t errlen);

/* How ti_solve hands the LP to CLP: whole, or by sifting to CLP's proven
 * optimum, or to a start for a finer LP. */
enum solve_way { WHOLE, SIFT_PROVE, SIFT_HINT };

/* One LP, and how ti_solve solves it. */
struct solve_args {
	const struct trace_profile *p;
	const struct dao_sim_model *m;
	const double *kns; /* the windows' kernel times; NULL: the model's */
	uint64_t budget;
	enum time_bound_start start;
	/* bytes dropped per interval to start from (ti_warm_start keeps the
	 * rest); NULL: ti_best_start */
	const double *hint;
	int max_iters; /* > 0: CLP stops after that many (DAO_ERR_LIMIT) */
	enum solve_way way;
	double max_seconds;
};

/*
 * The LP of a->p solved from the start a asks for (time_bound_solve.c).
 * eout (or NULL): the optimum's dropped bytes per interval.
 * out->iterations is set either way. Errors as time_bound_solve, and
 * DAO_ERR_LIMIT at a->max_iters.
 */
dao_status ti_solve(const struct solve_args *a, struct time_bound *out, double *eout, char *err,
		    size_t errlen);

/*
 * The trace in blocks of k kernels (time_bound_coarse.c): one coarse
 * kernel each, its window the sum of theirs (ckns). cmap[j]: the coarse
 * interval of p's interval j, SIZE_MAX if gone. DAO_ERR_NOMEM; cp, ckns
 * and cmap to be freed either way.
 */
dao_status ti_coarsen(const struct trace_profile *p, const struct dao_sim_model *m,
		      const double *kns, size_t k, struct trace_profile *cp, double **ckns,
		      size_t **cmap);

/*
 * Dropped bytes per interval of a->p (eout) from the LP with the intervals
 * of one span and one write merged (time_bound_coarse.c): a start for a
 * finer LP, not a->p's own LP. Solved by sifting from a->hint, or from
 * ti_best_start without one.
 */
dao_status ti_solve_merged(const struct solve_args *a, struct time_bound *out, double *eout,
			   char *err, size_t errlen);

#endif /* DAOSIM_TIME_BOUND_LP_H */
