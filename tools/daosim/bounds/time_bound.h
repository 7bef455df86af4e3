/* SPDX-License-Identifier: MIT */
/*
 * time_bound.h - the time-indexed lower bound on modeled run time: an LP
 * over windows (one before the first kernel, then one per kernel) in which
 * fetches, write-backs and device space are placed in time
 * (Documentation/daosim.md, "Time-indexed bound", says why every schedule
 * the executor can produce is a feasible point). Solved with COIN-OR CLP.
 */
#ifndef DAOSIM_TIME_BOUND_H
#define DAOSIM_TIME_BOUND_H

#include <stddef.h>
#include <stdint.h>

#include "../profile.h"
#include "dao_sim.h"

struct time_bound {
	uint64_t ns;         /* the LP optimum, rounded up to whole ns */
	double lp_ns;        /* the LP optimum as the solver reports it */
	size_t rows, cols;   /* LP size */
	size_t iterations;   /* simplex iterations CLP took, all solves together */
	size_t levels;       /* coarser LPs solved for the start (0: best_start) */
	size_t priced_in;    /* columns sifting took in by pricing, all LPs together */
};

/*
 * Minimise the sum over windows of w, where w >= the window's kernel time
 * (model_kernel_ns), >= bytes fetched in it / h2d bandwidth, >= bytes
 * written back in it / d2h bandwidth, subject to: each use's bytes that
 * were not kept since the buffer's previous use are fetched in some window
 * before the use and take space from then on; the data of a write that is
 * dropped anywhere before its last read is written back in some window
 * after the write; at the start of every kernel its operands, the bytes
 * kept across it and the bytes fetched ahead fit in budget.
 * DAO_ERR_BUDGET when a kernel's operands exceed budget, DAO_ERR_NOMEM,
 * DAO_ERR_RANGE when CLP stops at max_seconds (> 0; 0 or less: no
 * limit) before the optimum, DAO_ERR_FAILED when it fails otherwise (err
 * says why).
 */
dao_status time_bound_solve(const struct trace_profile *p, const struct dao_sim_model *m,
			    uint64_t budget, double max_seconds, struct time_bound *out, char *err,
			    size_t errlen);

/* Where CLP's simplex starts; the optimum is the same LP's either way. */
enum time_bound_start {
	/* From the vertex the byte LP's greedy gives (what time_bound_solve
	 * does): fast. */
	TIME_BOUND_START_GREEDY,
	/* CLP's presolve and its own start: the previous method, kept as
	 * the reference for tests and daosim-bench-bounds. */
	TIME_BOUND_START_CLP,
};

/* time_bound_solve with the start chosen. */
dao_status time_bound_solve_from(const struct trace_profile *p, const struct dao_sim_model *m,
				 uint64_t budget, enum time_bound_start start, double max_seconds,
				 struct time_bound *out, char *err, size_t errlen);

/*
 * time_bound_solve's coarse-to-fine method with its settings given (for
 * tests; time_bound_solve uses k = 2, kmin = 1500, plain_pivots = 100):
 * when p has at least k * kmin kernels, first CLP from best_start for at
 * most plain_pivots iterations (none if 0), then, if not optimal, the LP
 * of p coarsened into blocks of k kernels (recursively, while the level
 * has k * kmin kernels or more) gives the start; the result is CLP's
 * optimum of p's own LP either way. Errors as time_bound_solve.
 */
dao_status time_bound_solve_coarse(const struct trace_profile *p, const struct dao_sim_model *m,
				   uint64_t budget, size_t k, size_t kmin, int plain_pivots,
				   double max_seconds, struct time_bound *out, char *err,
				   size_t errlen);

/*
 * For a process that solves large time-indexed LPs (daosim, its bench):
 * keep freed memory in the heap rather than give it back to the kernel.
 * CLP's factorization frees and allocates its arrays again at every
 * refactorization of the basis; with glibc's defaults large ones come from
 * fresh mappings each time and every page faults in again (10-12% of the
 * stencil solves' CPU in a profile). Process-wide, so the program calls it
 * (once, before solving), not the solver. 0, or -1 when the allocator
 * refused a setting.
 */
int time_bound_keep_heap(void);

#endif /* DAOSIM_TIME_BOUND_H */
