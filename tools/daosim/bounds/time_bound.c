/* SPDX-License-Identifier: MIT */
/*
 * time_bound.c - the time-indexed LP (time_bound.h): its entry points,
 * the coarse-to-fine method, and its row of daosim's bound table. The LP
 * itself is built in time_bound_build.c, started from the byte LP's
 * greedy in time_bound_start.c (a vertex with the write-backs placed in
 * idle d2h time: from it the deep-learning and tiled traces of 50,000
 * kernels take 0-10 iterations, the stencil sweeps 13,000-40,000) and
 * solved in time_bound_solve.c (time_bound_lp.h has the map).
 *
 * So on traces of 3,000 kernels or more, when CLP is not done within 100
 * iterations from ti_best_start, the start comes from coarser LPs
 * (time_bound_solve_coarse): the trace in blocks of 2 kernels (ti_coarsen:
 * a block's window is the sum of its kernels', its operands the most its
 * kernels hold at once with the intervals opening or closing in it held
 * whole), again and again down to under 3,000 kernels. Every coarser
 * level's intervals of one span and one write are merged into one column
 * (ti_solve_merged: 239,616 become 23,459 on a 49,152-kernel stencil; a
 * start, not that level's LP), the coarsest solved from ti_best_start,
 * each finer one from a start that drops, whole, every interval the next
 * coarser solution drops any of (ti_warm_start with a hint), and the
 * trace's own LP last, from such a start. Every level is solved by
 * sifting (time_bound_sift.c): CLP pivots on the intervals the start
 * drops and those pricing takes in (10,000-65,000 of the 220,000
 * intervals of a 49,152-kernel stencil2d), each pivot cheaper for it. A
 * coarsened block that does not fit the budget falls back on the plain
 * solve. Either way the start changes the path, not the LP: CLP proves the
 * trace's own LP's optimum, whole, last.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "bound.h"
#include "lp_bound.h"
#include "time_bound.h"
#include "time_bound_lp.h"

/* Coarse-to-fine (time_bound_solve's): blocks of COARSEN kernels per
 * level, down to the first level with fewer than COARSE_MIN * COARSEN
 * kernels; the plain solve first, for at most PLAIN_PIVOTS iterations.
 * Blocks of 2 rather than 4 (2026-11-25): each level's start is closer,
 * and the extra levels are merged, hence cheap (benchmarks.md). */
enum { COARSEN = 2, COARSE_MIN = 1500, PLAIN_PIVOTS = 100 };

/* Blocks of k kernels, down to under k * kmin; the CPU time (cpu_s) the
 * method started at, and its limit (> 0; else none). */
struct coarse_plan {
	size_t k, kmin;
	double t0, max_seconds;
};

/*
 * a->p's LP (a: p, m, kns, budget) from a start that drops, whole, every
 * interval of which the solution of the coarsened LP (ti_coarsen) drops
 * anything; the coarsened LP solved the same way, down to the coarsest
 * level. Every coarser level is solved merged (ti_solve_merged: a start,
 * not that level's LP; from ti_best_start at the coarsest), p's own LP
 * (eout NULL: the trace's) by sifting to CLP's proven optimum, the one
 * returned. Stops with DAO_ERR_RANGE when the levels together take more
 * than c->max_seconds (> 0) of CPU time.
 */
static dao_status solve_ml(const struct solve_args *a, const struct coarse_plan *c,
			   struct time_bound *out, double *eout, char *err, size_t errlen)
{
	const struct trace_profile *p = a->p;
	struct trace_profile cp;
	double *ckns = NULL, *ce = NULL, *hint = NULL, left;
	size_t *cmap = NULL;
	struct time_bound cb = { 0 };
	struct solve_args level = *a;
	dao_status st;

	if (!time_left(c->t0, c->max_seconds, &left, err, errlen))
		return DAO_ERR_RANGE;
	level.max_seconds = left;
	if (p->nkernels / c->k < c->kmin)
		return ti_solve_merged(&level, out, eout, err, errlen);
	st = ti_coarsen(p, a->m, a->kns, c->k, &cp, &ckns, &cmap);
	if (!st && cp.max_kernel_bytes > a->budget) {
		snprintf(err, errlen, "coarsened operands exceed the budget");
		st = DAO_ERR_BUDGET;
	}
	if (!st) {
		ce = malloc((cp.nintervals + 1) * sizeof(*ce));
		hint = malloc((p->nintervals + 1) * sizeof(*hint));
		st = ce && hint ? DAO_OK : DAO_ERR_NOMEM;
	}
	if (!st)
		st = solve_ml(&(struct solve_args){ .p = &cp, .m = a->m, .kns = ckns,
						    .budget = a->budget },
			      c, &cb, ce, err, errlen);
	if (!st && !time_left(c->t0, c->max_seconds, &left, err, errlen))
		st = DAO_ERR_RANGE;
	if (!st) {
		for (size_t j = 0; j < p->nintervals; j++) {
			double e = cmap[j] == SIZE_MAX ? 0.0 : ce[cmap[j]];

			hint[j] = e > 0.5 ? (double)p->intervals[j].bytes : 0.0;
		}
		level = (struct solve_args){ .p = p, .m = a->m, .kns = a->kns, .budget = a->budget,
					     .start = TIME_BOUND_START_GREEDY, .hint = hint,
					     .way = SIFT_PROVE, .max_seconds = left };
		/* a coarser level, a start only: merged; the trace's own LP
		 * (no eout): proven */
		st = eout ? ti_solve_merged(&level, out, eout, err, errlen) :
			    ti_solve(&level, out, NULL, err, errlen);
		out->iterations += cb.iterations;
		out->levels = cb.levels + 1;
		out->priced_in += cb.priced_in;
	}
	trace_profile_free(&cp);
	free(ckns);
	free(cmap);
	free(ce);
	free(hint);
	return st;
}

dao_status time_bound_solve_coarse(const struct trace_profile *p, const struct dao_sim_model *m,
				   uint64_t budget, size_t k, size_t kmin, int plain_pivots,
				   double max_seconds, struct time_bound *out, char *err,
				   size_t errlen)
{
	struct solve_args plain = { .p = p, .m = m, .budget = budget,
				    .start = TIME_BOUND_START_GREEDY, .way = WHOLE,
				    .max_seconds = max_seconds };
	struct coarse_plan c = { .k = k, .kmin = kmin, .t0 = cpu_s(), .max_seconds = max_seconds };
	size_t plain_iters = 0;
	dao_status st;
	char dummy[128];

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	if (k < 2 || kmin < 1 || p->nkernels / k < kmin)
		return ti_solve(&plain, out, NULL, err, errlen);
	if (plain_pivots > 0) {
		/* most long traces are a few pivots from ti_best_start */
		plain.max_iters = plain_pivots;
		st = ti_solve(&plain, out, NULL, err, errlen);
		if (st != DAO_ERR_LIMIT)
			return st;
		plain_iters = out->iterations;
		plain.max_iters = 0;
	} else {
		st = lp_check_budget(p, budget, err, errlen);
		if (st)
			return st;
	}
	st = solve_ml(&(struct solve_args){ .p = p, .m = m, .budget = budget }, &c, out, NULL, err,
		      errlen);
	if (st == DAO_ERR_BUDGET || st == DAO_ERR_FAILED) {
		/* a coarsened level did not fit or failed: the plain solve */
		if (!time_left(c.t0, max_seconds, &plain.max_seconds, err, errlen))
			return DAO_ERR_RANGE;
		st = ti_solve(&plain, out, NULL, err, errlen);
	}
	out->iterations += plain_iters;
	return st;
}

dao_status time_bound_solve_from(const struct trace_profile *p, const struct dao_sim_model *m,
				 uint64_t budget, enum time_bound_start start, double max_seconds,
				 struct time_bound *out, char *err, size_t errlen)
{
	if (start != TIME_BOUND_START_GREEDY)
		return ti_solve(&(struct solve_args){ .p = p, .m = m, .budget = budget,
						      .start = start, .way = WHOLE,
						      .max_seconds = max_seconds },
				out, NULL, err, errlen);
	return time_bound_solve_coarse(p, m, budget, COARSEN, COARSE_MIN, PLAIN_PIVOTS,
				       max_seconds, out, err, errlen);
}

dao_status time_bound_solve(const struct trace_profile *p, const struct dao_sim_model *m,
			    uint64_t budget, double max_seconds, struct time_bound *out, char *err,
			    size_t errlen)
{
	return time_bound_solve_from(p, m, budget, TIME_BOUND_START_GREEDY, max_seconds, out, err,
				     errlen);
}

int time_bound_keep_heap(void)
{
	/* glibc's largest mmap threshold (32 MiB on 64-bit), and heap tops
	 * up to 1 GiB kept: a 50,000-kernel LP's factorization is well within */
	int ok = mallopt(M_MMAP_THRESHOLD, 32 << 20);

	ok &= mallopt(M_TRIM_THRESHOLD, 1 << 30);
	return ok ? 0 : -1;
}

static dao_status time_indexed(const struct bound_input *in, uint64_t *value, char *err,
			       size_t errlen)
{
	struct time_bound tb;
	dao_status st = time_bound_solve(in->profile, in->model, in->budget, in->cpu_limit_s, &tb,
					 err, errlen);

	if (!st)
		*value = tb.ns;
	return st;
}

const struct bound bound_time_indexed = {
	.name = "time-indexed bound",
	.of = BOUND_TIME_NS,
	.side = BOUND_LOWER,
	.solve = time_indexed,
	.json = "time_indexed_bound_ns",
	.json_ratio = "time_ratio_to_time_indexed_bound",
	.text_line = "",
	.limit_option = "time-bound-limit",
	.limit_default_s = 10,
	.limit_help = "CPU seconds the time-indexed LP may take",
	.prepare = time_bound_keep_heap,
};
