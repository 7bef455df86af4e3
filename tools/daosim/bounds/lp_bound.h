/* SPDX-License-Identifier: MIT */
/*
 * lp_bound.h - lower bounds on the bytes any schedule must copy, from the
 * LP relaxation of offline caching with one capacity constraint per kernel
 * (after FOO, Berger et al. 2018): solved exactly by a greedy (lp_bound.c),
 * and as a min-cost flow by GLPK (lp_bound_glpk.c: the independent check).
 */
#ifndef DAOSIM_LP_BOUND_H
#define DAOSIM_LP_BOUND_H

#include <stddef.h>
#include <stdint.h>

#include "../profile.h"

enum lp_direction {
	LP_H2D, /* intervals ending in a read; plus the compulsory bytes */
	LP_D2H, /* intervals starting with a write and ending in a read */
};

/*
 * Minimise the bytes of the intervals not kept, each kept for a fraction in
 * [0, 1], such that at every kernel the intervals kept strictly around it
 * plus its own operands fit in budget; plus the compulsory bytes for
 * LP_H2D. Exact in bytes: intervals by their end, each kept as far as it
 * fits (the proof is in lp_bound.c). DAO_ERR_BUDGET when a kernel's
 * operands exceed the budget (err says which), DAO_ERR_NOMEM.
 */
dao_status lp_bound_bytes(const struct trace_profile *p, uint64_t budget, enum lp_direction dir,
			  uint64_t *bytes, char *err, size_t errlen);

/*
 * The h2d greedy's solution: kept[j] = the bytes it keeps of
 * p->intervals[j] (kept[] has p->nintervals entries), an optimum of the
 * LP_H2D LP. With full (also p->nintervals entries): for an interval kept
 * in part (0 < kept < bytes), the first kernel of its span that it filled
 * to the budget; SIZE_MAX for the others. Distinct kernels: a kernel once
 * full takes no later interval's bytes. Errors as lp_bound_bytes.
 */
dao_status lp_bound_kept(const struct trace_profile *p, uint64_t budget, uint64_t *kept,
			 size_t *full, char *err, size_t errlen);

/*
 * The same LP as a min-cost flow (kernels are nodes of capacity budget -
 * operand bytes, each interval a bypass arc of cost 1 per byte) solved by
 * GLPK's primal simplex; flow LPs have integral optima. Slow on long
 * traces: the reference for tests and the growth benchmark.
 * DAO_ERR_RANGE when GLPK stops at max_seconds (> 0; else no limit),
 * DAO_ERR_FAILED when it does not reach an optimum otherwise.
 */
dao_status lp_bound_bytes_glpk(const struct trace_profile *p, uint64_t budget,
			       enum lp_direction dir, double max_seconds, uint64_t *bytes, char *err,
			       size_t errlen);

/* DAO_ERR_BUDGET (err says which kernel) when a kernel's operands exceed
 * budget; else DAO_OK. */
dao_status lp_check_budget(const struct trace_profile *p, uint64_t budget, char *err,
			   size_t errlen);

#endif /* DAOSIM_LP_BOUND_H */
