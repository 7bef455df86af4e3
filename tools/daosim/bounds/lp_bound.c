/* SPDX-License-Identifier: MIT */
/*
 * lp_bound.c - the byte LP bounds, solved exactly by a greedy in
 * O((kernels + intervals) log kernels) integer operations.
 *
 * The LP: maximise the bytes kept, sum y_j with 0 <= y_j <= bytes_j, such
 * that at every kernel t the intervals kept strictly across it fit in
 * c_t = budget - operand_bytes(t). Every kept byte is worth the same, and
 * the rows are intervals of kernels, so taking the intervals in order of
 * their end and keeping of each as much as still fits everywhere it spans
 * is optimal:
 *
 *   Let j end first and y* be an optimum with y*_j as large as possible.
 *   If y*_j were below min(bytes_j, min c_t over j's span), j's span would
 *   hold a kernel where the capacity is used up (else y*_j could grow);
 *   take the first such kernel t1 and an interval k != j kept across it.
 *   k ends no sooner than j, so it spans everything of j's span from t1 on:
 *   moving a little of k's kept bytes to j leaves every kernel from t1 on
 *   as full as before, only fills kernels before t1 that had room, and
 *   keeps the total: an optimum with more of j, a contradiction. So some
 *   optimum keeps j greedily; fix it, lower the capacities, repeat.
 *
 * The result is exact in bytes (integers throughout). lp_bound_glpk.c
 * solves the same LP as a min-cost flow with GLPK, the independent check.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bound.h"
#include "lp_bound.h"

/*
 * Range add, range min over n leaves: a segment tree stored bottom up
 * (leaves at size..2 size-1, node p's children at 2p and 2p+1), walked
 * in loops rather than recursion. t[p] is the least leaf under p with the
 * adds of p and its subtree, d[p] the add pending on p's whole subtree:
 * the true minimum under p is t[p] plus the d of p's ancestors.
 */
struct mintree {
	size_t size;   /* leaves, a power of two >= n */
	unsigned levels; /* log2(size) */
	int64_t *t, *d;
};

/* leaves past n hold this: never the minimum, never overflowed by adds */
#define TREE_PAD (INT64_MAX / 2)

static int tree_init(struct mintree *m, size_t n, const int64_t *v)
{
	m->size = 1;
	m->levels = 0;
	while (m->size < n) {
		m->size *= 2;
		m->levels++;
	}
	m->t = malloc(2 * m->size * sizeof(*m->t));
	m->d = calloc(m->size, sizeof(*m->d));
	if (!m->t || !m->d)
		return -1;
	for (size_t i = 0; i < m->size; i++)
		m->t[m->size + i] = i < n ? v[i] : TREE_PAD;
	for (size_t p = m->size; --p > 0;)
		m->t[p] = m->t[2 * p] < m->t[2 * p + 1] ? m->t[2 * p] : m->t[2 * p + 1];
	return 0;
}

static void tree_free(struct mintree *m)
{
	free(m->t);
	free(m->d);
}

static void tree_apply(struct mintree *m, size_t p, int64_t x)
{
	m->t[p] += x;
	if (p < m->size)
		m->d[p] += x;
}

/* t of p's ancestors again from their children */
static void tree_pull(struct mintree *m, size_t p)
{
	while (p > 1) {
		p /= 2;
		m->t[p] = (m->t[2 * p] < m->t[2 * p + 1] ? m->t[2 * p] : m->t[2 * p + 1]) +
			  m->d[p];
	}
}

/* the adds pending on leaf p's ancestors, down onto their children */
static void tree_push(struct mintree *m, size_t p)
{
	for (unsigned s = m->levels; s > 0; s--) {
		size_t i = p >> s;

		if (m->d[i]) {
			tree_apply(m, 2 * i, m->d[i]);
			tree_apply(m, 2 * i + 1, m->d[i]);
			m->d[i] = 0;
		}
	}
}

/* the least leaf in a..b (inclusive) */
static int64_t tree_min(struct mintree *m, size_t a, size_t b)
{
	size_t l = a + m->size, r = b + m->size + 1;
	int64_t x = INT64_MAX;

	tree_push(m, l);
	tree_push(m, r - 1);
	for (; l < r; l /= 2, r /= 2) {
		if (l & 1) {
			x = m->t[l] < x ? m->t[l] : x;
			l++;
		}
		if (r & 1) {
			r--;
			x = m->t[r] < x ? m->t[r] : x;
		}
	}
	return x;
}

/* add x to the leaves a..b (inclusive) */
static void tree_add(struct mintree *m, size_t a, size_t b, int64_t x)
{
	size_t l = a + m->size, r = b + m->size + 1, l0 = l, r0 = r - 1;

	for (; l < r; l /= 2, r /= 2) {
		if (l & 1)
			tree_apply(m, l++, x);
		if (r & 1)
			tree_apply(m, --r, x);
	}
	tree_pull(m, l0);
	tree_pull(m, r0);
}

/* The first leaf in a..b whose value is at most target (SIZE_MAX if none),
 * under node p (leaves lo..hi); above is the sum of the d of p's strict
 * ancestors. */
static size_t tree_first_at_most(const struct mintree *m, size_t p, size_t lo, size_t hi,
				 size_t a, size_t b, int64_t target, int64_t above)
{
	if (b < lo || hi < a || m->t[p] + above > target)
		return SIZE_MAX;
	if (p >= m->size)
		return lo;
	size_t mid = lo + (hi - lo) / 2;
	size_t r = tree_first_at_most(m, 2 * p, lo, mid, a, b, target, above + m->d[p]);

	return r != SIZE_MAX ? r :
			       tree_first_at_most(m, 2 * p + 1, mid + 1, hi, a, b, target,
						  above + m->d[p]);
}

dao_status lp_check_budget(const struct trace_profile *p, uint64_t budget, char *err,
			   size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	for (size_t k = 0; k < p->nkernels; k++) {
		if (p->kernel_bytes[k] > budget) {
			if (err && errlen)
				snprintf(err, errlen,
					 "kernel %zu needs %llu bytes, more than the budget of %llu",
					 k, (unsigned long long)p->kernel_bytes[k],
					 (unsigned long long)budget);
			return DAO_ERR_BUDGET;
		}
	}
	return DAO_OK;
}

static int by_end(const void *a, const void *b)
{
	const struct reuse_interval *x = *(const struct reuse_interval *const *)a;
	const struct reuse_interval *y = *(const struct reuse_interval *const *)b;

	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The greedy; with kept, also the bytes it keeps of each interval (by
 * index in p->intervals; 0 for those the direction leaves out). */
static dao_status greedy(const struct trace_profile *p, uint64_t budget, enum lp_direction dir,
			 uint64_t *bytes, uint64_t *kept, size_t *full, char *err, size_t errlen)
{
	size_t T = p->nkernels, n = 0;
	uint64_t base = dir == LP_H2D ? p->compulsory_bytes : 0, missed = 0;
	const struct reuse_interval **order = NULL;
	int64_t *room = NULL;
	struct mintree m = { 0 };
	dao_status st;

	st = lp_check_budget(p, budget, err, errlen);
	if (st)
		return st;
	if (budget > INT64_MAX) {
		if (err && errlen)
			snprintf(err, errlen, "a budget of %llu bytes is too large",
				 (unsigned long long)budget);
		return DAO_ERR_INVALID;
	}
	for (size_t j = 0; j < p->nintervals; j++)
		if (dir == LP_H2D || p->intervals[j].dirty)
			n++;
	if (n == 0) {
		*bytes = base;
		return DAO_OK;
	}
	order = malloc(n * sizeof(*order));
	room = malloc(T * sizeof(*room));
	if (!order || !room) {
		st = DAO_ERR_NOMEM;
		goto out;
	}
	n = 0;
	for (size_t j = 0; j < p->nintervals; j++) {
		if (kept)
			kept[j] = 0;
		if (full)
			full[j] = SIZE_MAX;
		if (dir == LP_H2D || p->intervals[j].dirty)
			order[n++] = &p->intervals[j];
	}
	qsort(order, n, sizeof(*order), by_end);
	for (size_t t = 0; t < T; t++)
		room[t] = (int64_t)(budget - p->kernel_bytes[t]);
	if (tree_init(&m, T, room)) {
		st = DAO_ERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct reuse_interval *iv = order[i];
		int64_t fit;
		uint64_t keep;

		if (iv->end <= iv->start + 1)
			continue; /* spans no kernel: kept for free (the profile omits these) */
		/* kept strictly across: kernels start+1 .. end-1 */
		fit = tree_min(&m, iv->start + 1, iv->end - 1);
		keep = fit <= 0 ? 0 : (uint64_t)fit < iv->bytes ? (uint64_t)fit : iv->bytes;
		if (keep)
			tree_add(&m, iv->start + 1, iv->end - 1, -(int64_t)keep);
		missed += iv->bytes - keep;
		if (kept)
			kept[iv - p->intervals] = keep;
		if (full && keep && keep < iv->bytes)
			full[iv - p->intervals] =
				tree_first_at_most(&m, 1, 0, m.size - 1, iv->start + 1,
						   iv->end - 1, 0, 0);
	}
	*bytes = base + missed;
out:
	free(order);
	free(room);
	tree_free(&m);
	return st;
}

dao_status lp_bound_bytes(const struct trace_profile *p, uint64_t budget, enum lp_direction dir,
			  uint64_t *bytes, char *err, size_t errlen)
{
	return greedy(p, budget, dir, bytes, NULL, NULL, err, errlen);
}

dao_status lp_bound_kept(const struct trace_profile *p, uint64_t budget, uint64_t *kept,
			 size_t *full, char *err, size_t errlen)
{
	uint64_t bytes;

	return greedy(p, budget, LP_H2D, &bytes, kept, full, err, errlen);
}

static dao_status lp_h2d(const struct bound_input *in, uint64_t *value, char *err, size_t errlen)
{
	return lp_bound_bytes(in->profile, in->budget, LP_H2D, value, err, errlen);
}

static dao_status lp_d2h(const struct bound_input *in, uint64_t *value, char *err, size_t errlen)
{
	return lp_bound_bytes(in->profile, in->budget, LP_D2H, value, err, errlen);
}

const struct bound bound_lp_h2d = {
	.name = "LP h2d",
	.of = BOUND_H2D_BYTES,
	.side = BOUND_LOWER,
	.solve = lp_h2d,
	.json = "lp_bound_h2d_bytes",
	.json_ratio = "h2d_ratio_to_lp",
	.column = "h2d/LP",
};

const struct bound bound_lp_d2h = {
	.name = "LP d2h",
	.of = BOUND_D2H_BYTES,
	.side = BOUND_LOWER,
	.solve = lp_d2h,
	.json = "lp_bound_d2h_bytes",
	.json_ratio = "d2h_ratio_to_lp",
	.column = "d2h/LP",
};
