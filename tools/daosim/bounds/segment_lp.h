/* SPDX-License-Identifier: MIT */
/*
 * segment_lp.h - the segment LP (segment_lp.c) as built, for a solver
 * other than its row's own: segment_mip.c holds its residency columns to
 * 0 or 1 (Documentation/daosim.md, "Segment LP bound" and "A block is
 * held whole").
 */
#ifndef DAOSIM_SEGMENT_LP_H
#define DAOSIM_SEGMENT_LP_H

#include <stdint.h>

#include "bound.h"
#include "time_bound_lp.h"

struct segment_lp {
	struct lp lp;         /* time in us: the objective times 1e3 is in ns */
	unsigned char *is_r;  /* per column: 1 for a residency column (r) */
	size_t nsegs;         /* 0: a trace of no kernels, and no LP */
};

/*
 * in's LP on the segment cut's cut set, with a cut added at every
 * every-th kernel (0: none; any cut set gives a bound). The errors of
 * segment_cut_segments, DAO_ERR_NOMEM; out is to be freed
 * (segment_lp_free) either way.
 */
dao_status segment_lp_build(const struct bound_input *in, size_t every, struct segment_lp *out,
			    char *err, size_t errlen);
void segment_lp_free(struct segment_lp *s);

/* Whole ns from an optimum of it, or a lower bound on one, as a solver
 * reports it: rounded up after taking off more than the solvers' noise. */
uint64_t segment_lp_ns(double obj);

#endif /* DAOSIM_SEGMENT_LP_H */
