/* SPDX-License-Identifier: MIT */
/*
 * lp_bound.h - lower bounds on the bytes any schedule must copy, from the
 * LP relaxation of offline caching with one capacity constraint per kernel
 * (after FOO, Berger et al. 2018), solved with GLPK.
 */
#ifndef DAOSIM_LP_BOUND_H
#define DAOSIM_LP_BOUND_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

enum lp_direction {
	LP_H2D, /* intervals ending in a read; plus the compulsory bytes */
	LP_D2H, /* intervals starting with a write and ending in a read */
};

/*
 * Minimise the bytes of the intervals not kept, each kept for a fraction in
 * [0, 1], such that at every kernel the intervals kept strictly around it
 * plus its own operands fit in budget. Solved as a min-cost flow: kernels
 * are nodes of capacity budget - operand bytes, each interval a bypass arc.
 * Flow LPs have integral optima, so the result is exact in bytes.
 * DAO_ERR_BUDGET when a kernel's operands exceed the budget, DAO_ERR_FAILED
 * when GLPK does not reach an optimum (err says why).
 */
dao_status lp_bound_bytes(const struct trace_profile *p, uint64_t budget, enum lp_direction dir,
			  uint64_t *bytes, char *err, size_t errlen);

#endif /* DAOSIM_LP_BOUND_H */
