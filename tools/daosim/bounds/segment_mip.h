/* SPDX-License-Identifier: MIT */
/*
 * segment_mip.h - the segment LP with residency 0 or 1 (segment_mip.c):
 * a lower bound on time that sees a block held whole from the start of
 * the fetch into it, for traces small enough for a branch and bound.
 */
#ifndef DAOSIM_SEGMENT_MIP_H
#define DAOSIM_SEGMENT_MIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bound.h"

struct segment_mip {
	uint64_t lp_ns;  /* the LP's optimum (every residency a fraction) */
	uint64_t ns;     /* the bound the branch and bound proved, >= lp_ns */
	bool optimal;    /* ns is the mixed-integer program's optimum */
	size_t segments, binaries;
	double cpu_s;    /* CPU seconds taken, building included */
};

/*
 * in's segment LP (segment_lp_build: the segment cut's cuts and one at
 * every every-th kernel, 0: none) with its residency columns binary,
 * searched for about limit_s seconds (GLPK's clock); what it proved by
 * then. DAO_ERR_RANGE when the LP itself was not solved within the limit,
 * DAO_ERR_FAILED when GLPK fails, the errors of segment_lp_build; err says
 * why. A trace of no kernels gives 0.
 */
dao_status segment_mip_bound(const struct bound_input *in, size_t every, double limit_s,
			     struct segment_mip *out, char *err, size_t errlen);

/*
 * The same program, written to path in free MPS (GLPK's glp_write_mps) for
 * a stronger solver than GLPK's: its residency columns are the integer
 * ones, its objective the run's time in microseconds. out->segments and
 * out->binaries say what was written, its other fields are 0. DAO_ERR_IO
 * when the file could not be written (err names it), DAO_ERR_NOMEM, the
 * errors of segment_lp_build; a trace of no kernels writes nothing and
 * gives DAO_ERR_INVALID.
 */
dao_status segment_mip_write_mps(const struct bound_input *in, size_t every, const char *path,
				 struct segment_mip *out, char *err, size_t errlen);

#endif /* DAOSIM_SEGMENT_MIP_H */
