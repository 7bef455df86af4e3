/* SPDX-License-Identifier: MIT */
/*
 * time_bound_coarse.c - the coarser levels of the time-indexed LP
 * (time_bound_lp.h): the trace in blocks of kernels (ti_coarsen), and a
 * level's LP with the intervals of one span and one write merged into one
 * column (ti_solve_merged), solved for a start of the finer level.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "time_bound_lp.h"

/*
 * The trace in blocks of k kernels (one coarse kernel each, its window
 * the sum of theirs): intervals between blocks stay, those within a block
 * go (kept); a block's operands are the most its kernels hold at once of
 * their operands and of the intervals that open or close in the block.
 * cmap[j]: the coarse interval of p's interval j, SIZE_MAX if gone.
 */
dao_status ti_coarsen(const struct trace_profile *p, const struct dao_sim_model *m,
		      const double *kns, size_t k, struct trace_profile *cp, double **ckns,
		      size_t **cmap)
{
	size_t T = p->nkernels, n = p->nintervals, CT = (T + k - 1) / k, cn = 0, cv = 0;
	double *live = calloc(T + 1, sizeof(*live));
	size_t *vmap = malloc((p->nversions + 1) * sizeof(*vmap));

	memset(cp, 0, sizeof(*cp));
	*ckns = calloc(CT, sizeof(**ckns));
	*cmap = malloc((n + 1) * sizeof(**cmap));
	cp->nkernels = CT;
	cp->kernel_bytes = calloc(CT, sizeof(*cp->kernel_bytes));
	cp->kernel_flops = calloc(CT, sizeof(*cp->kernel_flops));
	cp->first_read_bytes = calloc(CT, sizeof(*cp->first_read_bytes));
	cp->intervals = malloc((n + 1) * sizeof(*cp->intervals));
	if (!live || !vmap || !*ckns || !*cmap || !cp->kernel_bytes || !cp->kernel_flops ||
	    !cp->first_read_bytes || !cp->intervals) {
		free(live);
		free(vmap);
		return DAO_ERR_NOMEM;
	}
	for (size_t v = 0; v < p->nversions; v++)
		vmap[v] = SIZE_MAX;
	for (size_t j = 0; j < n; j++) {
		const struct reuse_interval *iv = &p->intervals[j];
		size_t bs = iv->start / k, be = iv->end / k;
		double b = (double)iv->bytes;

		if (bs == be) {
			live[iv->start + 1] += b;
			live[iv->end] -= b;
			(*cmap)[j] = SIZE_MAX;
			continue;
		}
		live[iv->start + 1] += b;
		live[(bs + 1) * k] -= b;
		live[be * k] += b;
		live[iv->end] -= b;
		(*cmap)[j] = cn;
		cp->intervals[cn] = *iv;
		cp->intervals[cn].start = bs;
		cp->intervals[cn].end = be;
		if (iv->version != SIZE_MAX) {
			if (vmap[iv->version] == SIZE_MAX)
				vmap[iv->version] = cv++;
			cp->intervals[cn].version = vmap[iv->version];
			cp->intervals[cn].written_at = iv->written_at / k;
		}
		cn++;
	}
	for (size_t t = 0; t < T; t++) {
		size_t b = t / k;
		double ops;

		if (t)
			live[t] += live[t - 1];
		ops = (double)p->kernel_bytes[t] + live[t] + 0.5;
		if ((uint64_t)ops > cp->kernel_bytes[b])
			cp->kernel_bytes[b] = (uint64_t)ops;
		cp->first_read_bytes[b] += p->first_read_bytes[t];
		(*ckns)[b] += kns ? kns[t] :
				    (double)model_kernel_ns(m, p->kernel_flops[t], p->kernel_bytes[t]);
	}
	for (size_t b = 0; b < CT; b++)
		if (cp->kernel_bytes[b] > cp->max_kernel_bytes)
			cp->max_kernel_bytes = cp->kernel_bytes[b];
	cp->nintervals = cn;
	cp->nversions = cv;
	cp->flops_scale = p->flops_scale;
	free(live);
	free(vmap);
	return DAO_OK;
}

/* Intervals in the order of their span, then of the write they hold. */
static const struct reuse_interval *sort_ivs;

static int by_span(const void *a, const void *b)
{
	const struct reuse_interval *x = &sort_ivs[*(const size_t *)a];
	const struct reuse_interval *y = &sort_ivs[*(const size_t *)b];

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->written_at != y->written_at)
		return x->written_at < y->written_at ? -1 : 1;
	return 0;
}

/*
 * Dropped bytes per interval of p = a->p (eout), from an LP like p's in which
 * the intervals of one span that hold the write of one kernel (or none)
 * are one column, and the writes of one kernel one write-back variable:
 * at the 3,072-kernel level of a 49,152-kernel stencil 239,616 intervals
 * become 23,459 columns. Not p's LP (one write-back per kernel instead of
 * per write): a start for a finer LP only. Solved by sifting from the
 * start a->hint gives (each merged column drops what its intervals drop
 * there), or from ti_best_start without one. Each merged column's dropped
 * bytes go to its intervals whole, in order.
 */
dao_status ti_solve_merged(const struct solve_args *a, struct time_bound *out, double *eout,
			   char *err, size_t errlen)
{
	const struct trace_profile *p = a->p;
	double *gh = NULL;
	size_t n = p->nintervals, ng = 0, nv = 0;
	size_t *idx = malloc((n + 1) * sizeof(*idx)), *grp = malloc((n + 1) * sizeof(*grp));
	size_t *vmap = malloc((p->nkernels + 1) * sizeof(*vmap));
	struct trace_profile mp = *p;
	double *eg = NULL;
	dao_status st = DAO_ERR_NOMEM;

	mp.intervals = malloc((n + 1) * sizeof(*mp.intervals));
	if (!idx || !grp || !vmap || !mp.intervals)
		goto out;
	for (size_t j = 0; j < n; j++)
		idx[j] = j;
	for (size_t t = 0; t < p->nkernels; t++)
		vmap[t] = SIZE_MAX;
	sort_ivs = p->intervals;
	qsort(idx, n, sizeof(*idx), by_span);
	for (size_t i = 0; i < n; i++) {
		const struct reuse_interval *iv = &p->intervals[idx[i]];

		if (!i || by_span(&idx[i], &idx[i - 1])) {
			mp.intervals[ng] = *iv;
			mp.intervals[ng].bytes = 0;
			if (iv->written_at != SIZE_MAX) {
				if (vmap[iv->written_at] == SIZE_MAX)
					vmap[iv->written_at] = nv++;
				mp.intervals[ng].version = vmap[iv->written_at];
			}
			ng++;
		}
		mp.intervals[ng - 1].bytes += iv->bytes;
		mp.intervals[ng - 1].dirty |= iv->dirty;
		grp[i] = ng - 1;
	}
	mp.nintervals = ng;
	mp.nversions = nv;
	eg = malloc((ng + 1) * sizeof(*eg));
	if (!eg)
		goto out;
	if (a->hint) {
		gh = calloc(ng + 1, sizeof(*gh));
		if (!gh)
			goto out;
		for (size_t i = 0; i < n; i++)
			gh[grp[i]] += a->hint[idx[i]];
	}
	st = ti_solve(&(struct solve_args){ .p = &mp, .m = a->m, .kns = a->kns, .budget = a->budget,
					    .start = TIME_BOUND_START_GREEDY, .hint = gh,
					    .way = SIFT_HINT, .max_seconds = a->max_seconds },
		      out, eg, err, errlen);
	if (st)
		goto out;
	for (size_t i = 0; i < n; i++) {
		double b = (double)p->intervals[idx[i]].bytes, e = eg[grp[i]] < b ? eg[grp[i]] : b;

		e = e > 0 ? e : 0.0;
		eout[idx[i]] = e;
		eg[grp[i]] -= e;
	}
out:
	free(idx);
	free(grp);
	free(vmap);
	free(mp.intervals);
	free(eg);
	free(gh);
	return st;
}
