/* SPDX-License-Identifier: MIT */
/*
 * segment_cut.c - the segment-cut bound (segment_cut.h), by an exact
 * dynamic program over every kernel start.
 *
 * best[b] = max over a < b of best[a] + cost(a, b), cost the largest of
 * three terms; a maximum of maxima, so
 *
 *   best[b] = max(max_a best[a] + compute(a, b),
 *                 max_a best[a] + F-term(a, b),
 *                 max_a best[a] + W-term(a, b)),
 *
 * each kept by its own structure as b advances:
 *   - compute(a, b) = P[b] - P[a] (prefix sums): the running maximum of
 *     best[a] - P[a];
 *   - F-term: a buffer whose read at q has its previous access at p (or
 *     none: p = -1) counts in F(a, b) exactly for p < a <= q < b: from
 *     b = q + 1 on, add its bytes over a in [p + 1, q];
 *   - W-term: a buffer whose consecutive accesses p < q have q a read and
 *     whose last write at or before p was at kernel lw counts in W(a, b)
 *     exactly for a <= lw and p < b < q: add its bytes over a in [0, lw]
 *     while b is in p + 1 .. q - 1.
 * Each is a range-add, maximum tree over a (leaves not yet reached are
 * -inf, so the whole tree's maximum is the maximum over a < b). The terms
 * are real-valued ns; the optimum is rounded at the end (see round_ns).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bound.h"
#include "lp_bound.h"
#include "segment_cut.h"

/* Range add, whole-tree maximum and the leaf that holds it, point
 * assignment over n leaves. */
struct maxtree {
	size_t n;
	double *max, *add; /* per node; add applies to the whole subtree */
	size_t *arg;       /* per node: a leaf of its subtree holding max */
};

static int tree_init(struct maxtree *t, size_t n)
{
	t->n = n;
	t->max = malloc(4 * n * sizeof(*t->max));
	t->add = calloc(4 * n, sizeof(*t->add));
	t->arg = malloc(4 * n * sizeof(*t->arg));
	if (!t->max || !t->add || !t->arg)
		return -1;
	for (size_t i = 0; i < 4 * n; i++) {
		t->max[i] = -INFINITY;
		t->arg[i] = SIZE_MAX;
	}
	return 0;
}

static void tree_free(struct maxtree *t)
{
	free(t->max);
	free(t->add);
	free(t->arg);
}

static void tree_pull(struct maxtree *t, size_t node)
{
	size_t l = 2 * node, r = l + 1, c = t->max[r] > t->max[l] ? r : l;

	t->max[node] = t->max[c] + t->add[node];
	t->arg[node] = t->arg[c];
}

static void tree_add(struct maxtree *t, size_t node, size_t lo, size_t hi, size_t a, size_t b,
		     double d)
{
	if (a <= lo && hi <= b) {
		t->max[node] += d; /* -inf stays -inf: a leaf not reached yet */
		t->add[node] += d;
		return;
	}
	size_t mid = lo + (hi - lo) / 2;

	if (a <= mid)
		tree_add(t, 2 * node, lo, mid, a, b, d);
	if (b > mid)
		tree_add(t, 2 * node + 1, mid + 1, hi, a, b, d);
	tree_pull(t, node);
}

/* Leaf i takes the value v; above is the sum of node's strict ancestors' adds. */
static void tree_set(struct maxtree *t, size_t node, size_t lo, size_t hi, size_t i, double v,
		     double above)
{
	if (lo == hi) {
		t->add[node] = 0;
		t->max[node] = v - above;
		t->arg[node] = i;
		return;
	}
	size_t mid = lo + (hi - lo) / 2;

	if (i <= mid)
		tree_set(t, 2 * node, lo, mid, i, v, above + t->add[node]);
	else
		tree_set(t, 2 * node + 1, mid + 1, hi, i, v, above + t->add[node]);
	tree_pull(t, node);
}

/* A buffer's bytes that count in F (fetch) or W (write-back) over the
 * segment starts a in lo..hi, while the segment end b is in from..to. */
struct span {
	size_t lo, hi, from, to;
	uint64_t bytes;
};

static int push(struct span **v, size_t *n, size_t *cap, struct span s)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 1024;
		struct span *nv = realloc(*v, ncap * sizeof(*nv));

		if (!nv)
			return -1;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = s;
	return 0;
}

/* Indices of v sorted by key (counting sort over 0..nkeys-1). */
static size_t *by_key(const struct span *v, size_t n, size_t nkeys, int use_to)
{
	size_t *start = calloc(nkeys + 1, sizeof(*start));
	size_t *order = malloc((n ? n : 1) * sizeof(*order));

	if (!start || !order) {
		free(start);
		free(order);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		start[(use_to ? v[i].to + 1 : v[i].from)]++;
	for (size_t k = 1; k <= nkeys; k++)
		start[k] += start[k - 1];
	for (size_t i = n; i-- > 0;)
		order[--start[use_to ? v[i].to + 1 : v[i].from]] = i;
	free(start);
	return order;
}

/*
 * The pairs of consecutive accesses that count (see the top of the file).
 * W spans run while b is in p + 1 .. q - 1 (none when q = p + 1: kernel q
 * names the buffer, its bytes count in operands(q) instead).
 */
static dao_status collect(const struct dao_trace *t, struct span **fv, size_t *nf,
			  struct span **wv, size_t *nw, uint64_t *wbytes)
{
	size_t *prev = malloc((t->nbufs + 1) * sizeof(*prev));
	size_t *lw = malloc((t->nbufs + 1) * sizeof(*lw));
	size_t fcap = 0, wcap = 0, k = 0;

	if (!prev || !lw)
		goto nomem;
	for (size_t b = 0; b < t->nbufs; b++)
		prev[b] = lw[b] = SIZE_MAX;
	for (size_t e = 0; e < t->nevents; e++) {
		const struct dao_trace_event *ev = &t->events[e];
		const struct dao_trace_operand *ops;

		if (ev->type != DAO_TRACE_KERNEL)
			continue;
		ops = dao_trace_kernel_ops(t, ev);
		for (uint32_t i = 0; i < ev->u.kernel.nops; i++) {
			uint32_t b = ops[i].buf;
			uint64_t bytes = t->bufs[b].bytes;

			if (ops[i].mode == DAO_W) {
				wbytes[k] += bytes;
			} else if (bytes) {
				/* a read of data that exists before this access */
				struct span f = { .lo = prev[b] == SIZE_MAX ? 0 : prev[b] + 1,
						  .hi = k,
						  .from = k + 1,
						  .bytes = bytes };

				if (push(fv, nf, &fcap, f))
					goto nomem;
				if (lw[b] != SIZE_MAX && prev[b] + 1 < k) {
					struct span w = { .lo = 0,
							  .hi = lw[b],
							  .from = prev[b] + 1,
							  .to = k - 1,
							  .bytes = bytes };

					if (push(wv, nw, &wcap, w))
						goto nomem;
				}
			}
			prev[b] = k;
			if (ops[i].mode != DAO_R)
				lw[b] = k;
		}
		k++;
	}
	free(prev);
	free(lw);
	return DAO_OK;
nomem:
	free(prev);
	free(lw);
	return DAO_ERR_NOMEM;
}

/*
 * Whole ns from the real optimum v: a run lasts whole ns, so at least
 * ceil(v); v carries the rounding of some 10^5 double additions (relative
 * error far below 1e-10), so ceil(v less 1e-10 of itself) never rounds past
 * the true optimum's ceiling.
 */
static uint64_t round_ns(double v)
{
	double x = ceil(v - v * 1e-10 - 1e-6);

	if (!(x > 0))
		return 0;
	return x >= 1.8e19 ? UINT64_MAX / 4 : (uint64_t)x;
}

/* The dynamic program's data: the F and W spans, in the orders the
 * sweep takes them in, and the two trees. */
struct cut_dp {
	size_t K, nf, nw;
	struct span *fv, *wv;
	size_t *f_at, *w_in, *w_out; /* fv by from, wv by from, wv by to */
	uint64_t *wbytes;            /* per kernel: its w operands' bytes */
	double *prefix;              /* prefix sums of the kernel times */
	struct maxtree tf, tw;
};

static void dp_free(struct cut_dp *d)
{
	tree_free(&d->tf);
	tree_free(&d->tw);
	free(d->fv);
	free(d->wv);
	free(d->f_at);
	free(d->w_in);
	free(d->w_out);
	free(d->wbytes);
	free(d->prefix);
}

static dao_status dp_init(struct cut_dp *d, const struct dao_trace *t,
			  const struct trace_profile *p, const struct dao_sim_model *m)
{
	size_t K = d->K;
	dao_status st;

	d->wbytes = calloc(K, sizeof(*d->wbytes));
	d->prefix = malloc((K + 1) * sizeof(*d->prefix));
	if (!d->wbytes || !d->prefix || tree_init(&d->tf, K) || tree_init(&d->tw, K))
		return DAO_ERR_NOMEM;
	st = collect(t, &d->fv, &d->nf, &d->wv, &d->nw, d->wbytes);
	if (st)
		return st;
	d->f_at = by_key(d->fv, d->nf, K + 1, 0);
	d->w_in = by_key(d->wv, d->nw, K + 1, 0);
	d->w_out = by_key(d->wv, d->nw, K + 1, 1);
	if (!d->f_at || !d->w_in || !d->w_out)
		return DAO_ERR_NOMEM;
	d->prefix[0] = 0;
	for (size_t k = 0; k < K; k++)
		d->prefix[k + 1] = d->prefix[k] +
				   (double)model_kernel_ns(m, p->kernel_flops[k], p->kernel_bytes[k]);
	return DAO_OK;
}

/* Where the maximum's last segment before b starts, and which term it
 * costs; kept for segment_cut_segments only. */
struct cut_choice {
	size_t from;
	enum segment_term term;
};

static void choose(double *best, struct cut_choice *c, double v, size_t from,
		   enum segment_term term)
{
	if (v > *best) {
		*best = v;
		if (c)
			*c = (struct cut_choice){ .from = from, .term = term };
	}
}

/* best[K]: the cut points b = 1..K in turn, each segment's F and W terms
 * entering the trees where they start to count and the W ones leaving
 * where they stop. With choice (K + 1 entries) and best_at (K + 1), each
 * b's last segment and the maximum up to b are kept too. */
static double dp_sweep(struct cut_dp *d, const struct trace_profile *p,
		       const struct dao_sim_model *m, uint64_t budget, struct cut_choice *choice,
		       double *best_at)
{
	size_t K = d->K, fi = 0, wi = 0, wo = 0, carg = 0;
	const double sh = 1e9 / m->h2d_bytes_per_s, sd = 1e9 / m->d2h_bytes_per_s;
	const double M = (double)budget;
	double best = 0, cmax = 0;

	/* a = 0 is time 0: nothing is on the device then, so the first
	 * segment fetches all it reads, with no room subtracted */
	tree_set(&d->tf, 1, 0, K - 1, 0, 0, 0);
	tree_set(&d->tw, 1, 0, K - 1, 0, 0, 0);
	if (best_at)
		best_at[0] = 0;
	for (size_t b = 1; b <= K; b++) {
		struct cut_choice *c = choice ? &choice[b] : NULL;

		for (; fi < d->nf && d->fv[d->f_at[fi]].from == b; fi++) {
			const struct span *s = &d->fv[d->f_at[fi]];

			tree_add(&d->tf, 1, 0, K - 1, s->lo, s->hi, (double)s->bytes * sh);
		}
		for (; wi < d->nw && d->wv[d->w_in[wi]].from == b; wi++) {
			const struct span *s = &d->wv[d->w_in[wi]];

			tree_add(&d->tw, 1, 0, K - 1, s->lo, s->hi, (double)s->bytes * sd);
		}
		for (; wo < d->nw && d->wv[d->w_out[wo]].to + 1 == b; wo++) {
			const struct span *s = &d->wv[d->w_out[wo]];

			tree_add(&d->tw, 1, 0, K - 1, s->lo, s->hi, -(double)s->bytes * sd);
		}
		best = -INFINITY;
		choose(&best, c, cmax + d->prefix[b], carg, SEGMENT_COMPUTE);
		choose(&best, c, d->tf.max[1], d->tf.arg[1], SEGMENT_FETCH);
		if (b < K)
			choose(&best, c, d->tw.max[1] + ((double)p->kernel_bytes[b] - M) * sd,
			       d->tw.arg[1], SEGMENT_WRITE_BACK);
		if (best_at)
			best_at[b] = best;
		if (b == K)
			break;
		tree_set(&d->tf, 1, 0, K - 1, b, best - (M - (double)d->wbytes[b]) * sh, 0);
		tree_set(&d->tw, 1, 0, K - 1, b, best, 0);
		if (best - d->prefix[b] > cmax) {
			cmax = best - d->prefix[b];
			carg = b;
		}
	}
	return best;
}

/* The segments of the maximum, in kernel order: from K back along each
 * b's last segment to 0. */
static dao_status trace_back(const struct cut_choice *choice, const double *best_at, size_t K,
			     struct segment_cut_segment **segs, size_t *nsegs)
{
	struct segment_cut_segment *v;
	size_t n = 0, i;

	for (size_t b = K; b > 0; b = choice[b].from)
		n++;
	v = malloc(n * sizeof(*v));
	if (!v)
		return DAO_ERR_NOMEM;
	i = n;
	for (size_t b = K; b > 0; b = choice[b].from)
		v[--i] = (struct segment_cut_segment){
			.first = choice[b].from,
			.end = b,
			.cost_ns = best_at[b] - best_at[choice[b].from],
			.term = choice[b].term,
		};
	*segs = v;
	*nsegs = n;
	return DAO_OK;
}

/* The bound, and when segs is not NULL the segments of its maximum. */
static dao_status solve(const struct dao_trace *t, const struct trace_profile *p,
			const struct dao_sim_model *m, uint64_t budget, struct segment_cut *out,
			struct segment_cut_segment **segs, size_t *nsegs, char *err, size_t errlen)
{
	struct cut_dp d = { .K = p->nkernels };
	struct cut_choice *choice = NULL;
	double best, *best_at = NULL;
	dao_status st;

	st = lp_check_budget(p, budget, err, errlen);
	if (st)
		return st;
	if (d.K != t->nkernels) {
		if (err && errlen)
			snprintf(err, errlen, "the profile has %zu kernels, the trace %zu", d.K,
				 t->nkernels);
		return DAO_ERR_INVALID;
	}
	if (d.K == 0) {
		out->ns = 0;
		out->exact_ns = 0;
		if (segs) {
			*segs = NULL;
			*nsegs = 0;
		}
		return DAO_OK;
	}
	st = dp_init(&d, t, p, m);
	if (!st && segs) {
		choice = malloc((d.K + 1) * sizeof(*choice));
		best_at = malloc((d.K + 1) * sizeof(*best_at));
		if (!choice || !best_at)
			st = DAO_ERR_NOMEM;
	}
	if (!st) {
		best = dp_sweep(&d, p, m, budget, choice, best_at);
		out->exact_ns = best;
		out->ns = round_ns(best);
	}
	if (!st && segs)
		st = trace_back(choice, best_at, d.K, segs, nsegs);
	free(choice);
	free(best_at);
	dp_free(&d);
	return st;
}

dao_status segment_cut_bound(const struct dao_trace *t, const struct trace_profile *p,
			     const struct dao_sim_model *m, uint64_t budget, struct segment_cut *out,
			     char *err, size_t errlen)
{
	return solve(t, p, m, budget, out, NULL, NULL, err, errlen);
}

dao_status segment_cut_segments(const struct dao_trace *t, const struct trace_profile *p,
				const struct dao_sim_model *m, uint64_t budget,
				struct segment_cut *out, struct segment_cut_segment **segs,
				size_t *nsegs, char *err, size_t errlen)
{
	return solve(t, p, m, budget, out, segs, nsegs, err, errlen);
}

const char *segment_term_name(enum segment_term term)
{
	switch (term) {
	case SEGMENT_COMPUTE:
		return "compute";
	case SEGMENT_FETCH:
		return "h2d";
	default:
		return "d2h";
	}
}

static dao_status cut(const struct bound_input *in, uint64_t *value, char *err, size_t errlen)
{
	struct segment_cut sc;
	dao_status st = segment_cut_bound(in->trace, in->profile, in->model, in->budget, &sc, err,
					  errlen);

	if (!st)
		*value = sc.ns;
	return st;
}

const struct bound bound_segment_cut = {
	.name = "segment-cut bound",
	.of = BOUND_TIME_NS,
	.side = BOUND_LOWER,
	.solve = cut,
	.json = "segment_cut_bound_ns",
	.json_ratio = "time_ratio_to_segment_cut",
	.text_line = "",
	.column = "time/cut",
};
