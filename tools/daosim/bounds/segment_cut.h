/* SPDX-License-Identifier: MIT */
/*
 * segment_cut.h - the segment-cut lower bound on modeled run time
 * (Documentation/daosim.md, "Segment-cut bound", has the proof): cut the
 * run at kernel starts; each segment lasts at least its compute, the
 * write-backs that space forces out of it and the fetches that space
 * forces into it; maximise the sum over the cuts by an exact dynamic
 * program in O((kernels + accesses) log kernels).
 */
#ifndef DAOSIM_SEGMENT_CUT_H
#define DAOSIM_SEGMENT_CUT_H

#include <stddef.h>
#include <stdint.h>

#include "dao_sim.h"
#include "dao_trace.h"
#include "../profile.h"

struct segment_cut {
	uint64_t ns;    /* the bound, rounded down to whole ns */
	double exact_ns; /* the dynamic program's optimum as computed */
};

/*
 * Cut points 0 < x_1 < ... < x_(m-1) < K (kernel starts; 0 is time 0, K
 * the end of the run). A segment [a, b) (kernels a..b-1) costs
 *
 *   max(compute(a..b-1),
 *       (F(a, b) - room_in(a)) / h2d bandwidth,
 *       (W(a, b) + operands(b) - budget) / d2h bandwidth)
 *
 * F(a, b): bytes of the buffers whose first access in a..b-1 reads (r or
 * rw) data that exists before a (a write before a, or the host's initial
 * contents); room_in(0) = 0, room_in(a) = budget - bytes of kernel a's `w`
 * operands. W(a, b): bytes of the buffers not named by kernel b whose data
 * at b's start was last written in a..b-1 and is read (r or rw) by their
 * next access after b; operands(K) = 0 and W(a, K) = 0. The bound is the
 * maximum over the cut points of the sum of the segments' costs.
 *
 * p is t's profile (kernel_bytes, kernel_flops as modeled). DAO_ERR_BUDGET
 * when a kernel's operands exceed budget (err says which), DAO_ERR_INVALID
 * when p is not t's profile, DAO_ERR_NOMEM; *out is written only on DAO_OK.
 */
dao_status segment_cut_bound(const struct dao_trace *t, const struct trace_profile *p,
			     const struct dao_sim_model *m, uint64_t budget, struct segment_cut *out,
			     char *err, size_t errlen);

/* Which term of its cost a segment of the maximum pays: the compute, the
 * fetches forced into it, the write-backs forced out of it. */
enum segment_term { SEGMENT_COMPUTE, SEGMENT_FETCH, SEGMENT_WRITE_BACK };

/* One segment of the cut set that attains the bound: kernels first..end-1,
 * its cost in ns (unrounded) and the term that costs it. */
struct segment_cut_segment {
	size_t first, end;
	double cost_ns;
	enum segment_term term;
};

/*
 * segment_cut_bound, and the cut set that attains it: *segs (malloc'd,
 * the caller frees it) gets its *nsegs segments in kernel order, tiling
 * kernels 0..K-1; their costs add up to out->exact_ns. By the bound's proof
 * every run spends at least a segment's cost between the starts of its
 * first kernel and of the kernel after it (time 0 for the first segment,
 * the run's end for the last), so a run's time per segment says where it
 * is slower than the bound. The same errors as segment_cut_bound, and
 * DAO_ERR_NOMEM; *segs and *nsegs are written only on DAO_OK (NULL and 0
 * for a trace of no kernels).
 */
dao_status segment_cut_segments(const struct dao_trace *t, const struct trace_profile *p,
				const struct dao_sim_model *m, uint64_t budget,
				struct segment_cut *out, struct segment_cut_segment **segs,
				size_t *nsegs, char *err, size_t errlen);

/* "compute", "h2d" or "d2h". */
const char *segment_term_name(enum segment_term term);

#endif /* DAOSIM_SEGMENT_CUT_H */
