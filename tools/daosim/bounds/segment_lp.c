/* SPDX-License-Identifier: MIT */
/*
 * segment_lp.c - the segment LP bound (Documentation/daosim.md, "Segment
 * LP bound"): the segment cut's cut set, with what it grants at each cut
 * charged. The segment cut gives each segment the whole budget as room at
 * each of its ends, for free: data held at a cut must have been fetched
 * or kept before it, and the room one device has at a cut is shared by
 * everything held there. Here, for the cut set that attains the segment
 * cut, an LP chooses for every stretch between two accesses of a buffer
 * that crosses a cut whether it is held there (r), every fetch's and
 * write-back's share of each segment it may lie in (f, d), and each
 * segment's length (t), least total length, under:
 *
 *   t_j >= compute_j, t_j >= fetched_j / h2d, t_j >= written_j / d2h;
 *   at each cut the data held there and the kernel's operands fit the
 *   budget;
 *   a stretch (p, q) not held at a cut c inside it is fetched between c
 *   and q: in the segments from c to the one q starts in (or before,
 *   when q starts one);
 *   data written at kernel w not held at a cut c is written back between
 *   w's start and c: in the segments from w's to the one c ends (one
 *   write-back per write serves all its stretches);
 *   data the host starts with is held at no cut before it was fetched.
 *
 * Every run of the device model is one such choice (r in {0, 1}), so its
 * time is at least the LP's optimum, for any cut set: the proof is in
 * daosim.md. CLP solves it; the value is rounded up from the optimum less
 * more than the solver's noise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "segment_cut.h"
#include "segment_lp.h"
#include "time_bound_lp.h"

/* Columns and rows grown as they are added; is_r flags the residency
 * columns. */
struct grow {
	struct lp lp;
	unsigned char *is_r;
	size_t ccap, rcap;
};

static size_t add_col(struct grow *g, double lb, double ub, double obj)
{
	struct lp *lp = &g->lp;

	if (lp->ncols == g->ccap) {
		size_t n = g->ccap ? 2 * g->ccap : 1024;
		double *a = realloc(lp->collb, n * sizeof(*a));
		double *b = a ? realloc(lp->colub, n * sizeof(*b)) : NULL;
		double *c = b ? realloc(lp->obj, n * sizeof(*c)) : NULL;
		unsigned char *r = c ? realloc(g->is_r, n) : NULL;

		if (a)
			lp->collb = a;
		if (b)
			lp->colub = b;
		if (c)
			lp->obj = c;
		if (!r) {
			lp->nomem = 1;
			return SIZE_MAX;
		}
		g->is_r = r;
		g->ccap = n;
	}
	g->is_r[lp->ncols] = 0;
	lp->collb[lp->ncols] = lb;
	lp->colub[lp->ncols] = ub;
	lp->obj[lp->ncols] = obj;
	return lp->ncols++;
}

static size_t add_row(struct grow *g, double lb, double ub)
{
	struct lp *lp = &g->lp;

	if (lp->nrows == g->rcap) {
		size_t n = g->rcap ? 2 * g->rcap : 1024;
		double *a = realloc(lp->rowlb, n * sizeof(*a));
		double *b = a ? realloc(lp->rowub, n * sizeof(*b)) : NULL;

		if (a)
			lp->rowlb = a;
		if (!b) {
			lp->nomem = 1;
			return SIZE_MAX;
		}
		lp->rowub = b;
		g->rcap = n;
	}
	lp->rowlb[lp->nrows] = lb;
	lp->rowub[lp->nrows] = ub;
	return lp->nrows++;
}

/* The cut set: m segments, cut[0] = 0 < ... < cut[m] = K, seg_of[k] the
 * segment of kernel k; rows: per segment its h2d and d2h rows, per cut
 * 1..m-1 its room row. */
struct cuts {
	size_t m, *cut, *seg_of;
	size_t *row_h2d, *row_d2h, *row_room;
};

/* The segment a copy that must end by kernel q's start lies in last: the
 * one before q's when q starts a segment (but q = 0, which segment 0's
 * time 0 precedes), else q's. */
static size_t fetch_end(const struct cuts *c, size_t q)
{
	size_t j = c->seg_of[q];

	return q > 0 && c->cut[j] == q ? j - 1 : j;
}

/* A stretch as the LP sees it: the first cut inside it (0: the host's
 * data, which time 0 finds nowhere), the last segment its fetch may lie
 * in, the segment of the write whose data it holds (SIZE_MAX: nothing to
 * write back) and its bytes. */
struct shape {
	size_t lo, last, wseg;
	double bytes;
};

static struct shape shape_of(const struct cuts *c, size_t p, size_t q, size_t w, double bytes)
{
	return (struct shape){ .lo = p == SIZE_MAX ? 0 : c->seg_of[p] + 1,
			       .last = fetch_end(c, q),
			       .wseg = w == SIZE_MAX ? SIZE_MAX : c->seg_of[w],
			       .bytes = bytes };
}

/*
 * Columns r (per cut inside) and g (per segment of its window: g_j, the
 * share of its fetch in segments j..last, so that the share in segment j
 * is g_j - g_(j+1), kept >= 0 by a row, and a cover row needs two entries
 * however many segments the window spans), and the cover rows; wb[i]: the
 * column of the share of its data's write-back before cut i.
 */
static void add_stretch(struct grow *g, const struct cuts *c, const struct shape *s,
			double h2d_coef, double room_coef, const size_t *wb)
{
	size_t g0 = g->lp.ncols;
	double cost = s->bytes * h2d_coef;

	for (size_t j = s->lo; j <= s->last; j++) {
		/* at time 0 nothing is held: the host's data is fetched */
		if (add_col(g, j == 0 ? 1 : 0, 1, 0) == SIZE_MAX)
			return;
	}
	for (size_t j = s->lo; j <= s->last; j++) {
		size_t col = g0 + (j - s->lo);

		lp_entry(&g->lp, c->row_h2d[j], col, -cost);
		if (j > s->lo) {
			size_t row = add_row(g, 0, INFINITY);

			lp_entry(&g->lp, c->row_h2d[j - 1], col, cost);
			lp_entry(&g->lp, row, col - 1, 1);
			lp_entry(&g->lp, row, col, -1);
		}
	}
	for (size_t i = s->lo ? s->lo : 1; i <= s->last; i++) {
		size_t col = add_col(g, 0, 1, 0), row;

		if (col == SIZE_MAX)
			return;
		g->is_r[col] = 1;
		lp_entry(&g->lp, c->row_room[i], col, s->bytes * room_coef);
		row = add_row(g, 1, INFINITY);
		lp_entry(&g->lp, row, col, 1);
		lp_entry(&g->lp, row, g0 + (i - s->lo), 1);
		if (s->wseg != SIZE_MAX) {
			row = add_row(g, 1, INFINITY);
			lp_entry(&g->lp, row, col, 1);
			lp_entry(&g->lp, row, wb[i], 1);
		}
	}
}

/*
 * The write-back columns of data written in segment first, moving bytes:
 * wb[i] for the cuts i = first+1..end, the share of the write-back done
 * before cut i (so the share in segment j is wb[j+1] - wb[j], kept >= 0
 * by a row; wb[first] is 0).
 */
static void add_write_back(struct grow *g, const struct cuts *c, size_t first, size_t end,
			   double bytes, double d2h_coef, size_t *wb)
{
	double cost = bytes * d2h_coef;

	for (size_t i = first + 1; i <= end; i++) {
		wb[i] = add_col(g, 0, 1, 0);
		if (wb[i] == SIZE_MAX)
			return;
		lp_entry(&g->lp, c->row_d2h[i - 1], wb[i], -cost);
		if (i > first + 1) {
			size_t row = add_row(g, 0, INFINITY);

			lp_entry(&g->lp, c->row_d2h[i - 1], wb[i - 1], cost);
			lp_entry(&g->lp, row, wb[i], 1);
			lp_entry(&g->lp, row, wb[i - 1], -1);
		}
	}
}

static int shape_cmp(const void *a, const void *b)
{
	const struct shape *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->last != y->last)
		return x->last < y->last ? -1 : 1;
	if (x->wseg != y->wseg)
		return x->wseg < y->wseg ? -1 : 1;
	return 0;
}

/* The segments, their rows and the room rows. */
static void add_segments(struct grow *g, struct cuts *c, const struct trace_profile *p,
			 const struct dao_sim_model *m, uint64_t budget, double room_coef)
{
	for (size_t j = 0; j < c->m; j++) {
		double compute = 0;
		size_t col;

		for (size_t k = c->cut[j]; k < c->cut[j + 1]; k++)
			compute += (double)model_kernel_ns(m, p->kernel_flops[k],
							   p->kernel_bytes[k]);
		col = add_col(g, compute / 1e3, INFINITY, 1);
		c->row_h2d[j] = add_row(g, 0, INFINITY);
		c->row_d2h[j] = add_row(g, 0, INFINITY);
		lp_entry(&g->lp, c->row_h2d[j], col, 1);
		lp_entry(&g->lp, c->row_d2h[j], col, 1);
	}
	c->row_room[0] = SIZE_MAX;
	for (size_t i = 1; i < c->m; i++)
		c->row_room[i] = add_row(g, -INFINITY,
					 ((double)budget - (double)p->kernel_bytes[c->cut[i]]) *
						 room_coef);
}

/*
 * The LP. Stretches of one shape whose written data no other stretch
 * with a cut inside shares are merged into one, their bytes added (with
 * one set of write-back columns): any solution of the LP with them apart
 * gives one of the merged LP by averaging each column weighted by bytes,
 * and one of the merged LP gives one apart by copying, at the same value,
 * so the optimum is the same. The rest (data written once and read over
 * several cuts) keep a write-back per write.
 */
static dao_status build(struct grow *g, struct cuts *c, const struct trace_profile *p,
			const struct dao_sim_model *m, uint64_t budget)
{
	const double us_h2d = 1e6 / m->h2d_bytes_per_s, us_d2h = 1e6 / m->d2h_bytes_per_s;
	double room_coef = 1.0;
	size_t K = p->nkernels, nv = p->nversions, ns = 0, *nin = NULL, *vend = NULL, **wb = NULL;
	size_t *col = NULL;
	struct shape *sh = NULL;
	dao_status st = DAO_ERR_NOMEM;

	/* bytes in units that put the budget near 2^10 (exact: a power of 2) */
	while ((double)budget * room_coef > 2048.0)
		room_coef /= 2;
	c->row_h2d = malloc(c->m * sizeof(size_t));
	c->row_d2h = malloc(c->m * sizeof(size_t));
	c->row_room = malloc((c->m + 1) * sizeof(size_t));
	nin = calloc(nv + 1, sizeof(*nin));
	vend = calloc(nv + 1, sizeof(*vend));
	wb = calloc(nv + 1, sizeof(*wb));
	col = malloc(c->m * sizeof(*col));
	sh = malloc((p->nintervals + K + 1) * sizeof(*sh));
	if (!c->row_h2d || !c->row_d2h || !c->row_room || !nin || !vend || !wb || !col || !sh)
		goto out;
	add_segments(g, c, p, m, budget, room_coef);
	/* per write: its stretches with a cut inside (nin) and the last
	 * segment one of them may be fetched in (vend) */
	for (size_t s = 0; s < p->nintervals; s++) {
		const struct reuse_interval *iv = &p->intervals[s];
		struct shape x = shape_of(c, iv->start, iv->end, iv->written_at, (double)iv->bytes);

		if (x.lo <= x.last && iv->version != SIZE_MAX) {
			if (!nin[iv->version]++ || x.last > vend[iv->version])
				vend[iv->version] = x.last;
		}
	}
	for (size_t s = 0; s < p->nintervals; s++) {
		const struct reuse_interval *iv = &p->intervals[s];
		size_t v = iv->version;
		struct shape x = shape_of(c, iv->start, iv->end, iv->written_at, (double)iv->bytes);

		if (x.lo > x.last)
			continue; /* no cut inside: its segment keeps it */
		if (v == SIZE_MAX || nin[v] == 1) {
			sh[ns++] = x;
			continue;
		}
		if (!wb[v]) {
			wb[v] = malloc(c->m * sizeof(**wb));
			if (!wb[v])
				goto out;
			add_write_back(g, c, x.wseg, vend[v], x.bytes, us_d2h, wb[v]);
		}
		add_stretch(g, c, &x, us_h2d, room_coef, wb[v]);
	}
	for (size_t k = 0; k < K; k++)
		if (p->first_read_bytes[k]) {
			struct shape x = shape_of(c, SIZE_MAX, k, SIZE_MAX,
						  (double)p->first_read_bytes[k]);

			if (x.lo <= x.last)
				sh[ns++] = x;
		}
	qsort(sh, ns, sizeof(*sh), shape_cmp);
	for (size_t s = 0, e; s < ns; s = e) {
		struct shape x = sh[s];

		for (e = s + 1; e < ns && !shape_cmp(&sh[e], &x); e++)
			x.bytes += sh[e].bytes;
		if (x.wseg != SIZE_MAX)
			add_write_back(g, c, x.wseg, x.last, x.bytes, us_d2h, col);
		add_stretch(g, c, &x, us_h2d, room_coef, col);
	}
	st = g->lp.nomem ? DAO_ERR_NOMEM : DAO_OK;
out:
	if (wb)
		for (size_t v = 0; v < nv; v++)
			free(wb[v]);
	free(wb);
	free(nin);
	free(vend);
	free(col);
	free(sh);
	return st;
}

/* The segment cut's cut set, with a cut added at every every-th kernel
 * (0: none). */
static dao_status cut_set(const struct bound_input *in, size_t every, struct cuts *c,
			  char *err, size_t errlen)
{
	const struct trace_profile *p = in->profile;
	struct segment_cut sc;
	struct segment_cut_segment *segs = NULL;
	size_t n = 0, j = 0;
	dao_status st;

	st = segment_cut_segments(in->trace, p, in->model, in->budget, &sc, &segs, &n, err,
				  errlen);
	if (st || n == 0)
		return st;
	c->cut = malloc((p->nkernels + 1) * sizeof(*c->cut));
	c->seg_of = malloc(p->nkernels * sizeof(*c->seg_of));
	if (!c->cut || !c->seg_of) {
		free(segs);
		return DAO_ERR_NOMEM;
	}
	for (size_t k = 0; k < p->nkernels; k++) {
		bool first = j < n && segs[j].first == k;

		if (first)
			j++;
		if (first || (every && k % every == 0))
			c->cut[c->m++] = k;
		c->seg_of[k] = c->m - 1;
	}
	c->cut[c->m] = p->nkernels;
	free(segs);
	return DAO_OK;
}

dao_status segment_lp_build(const struct bound_input *in, size_t every, struct segment_lp *out,
			    char *err, size_t errlen)
{
	struct cuts c = { 0 };
	struct grow g = { 0 };
	dao_status st;

	memset(out, 0, sizeof(*out));
	st = cut_set(in, every, &c, err, errlen);
	if (!st && c.m)
		st = build(&g, &c, in->profile, in->model, in->budget);
	out->lp = g.lp;
	out->is_r = g.is_r;
	out->nsegs = c.m;
	free(c.cut);
	free(c.seg_of);
	free(c.row_h2d);
	free(c.row_d2h);
	free(c.row_room);
	return st;
}

void segment_lp_free(struct segment_lp *s)
{
	lp_free(&s->lp);
	free(s->is_r);
	memset(s, 0, sizeof(*s));
}

uint64_t segment_lp_ns(double obj)
{
	/* The solvers hold rows to about 1e-7 of their bounds: 1e-6 of the
	 * optimum is more than that noise, and a run lasts whole ns. */
	double x = ceil(obj * 1e3 * (1.0 - 1e-6));

	return !(x > 0) ? 0 : x >= 1.8e19 ? UINT64_MAX / 4 : (uint64_t)x;
}

static dao_status segment_lp(const struct bound_input *in, uint64_t *value, char *err,
			     size_t errlen)
{
	struct segment_lp s;
	size_t iters = 0;
	double obj;
	dao_status st;
	char dummy[128] = "";

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	st = segment_lp_build(in, 0, &s, err, errlen);
	if (!st && s.nsegs == 0)
		*value = 0;
	else if (!st && clp_solve(&s.lp, NULL, 0, in->cpu_limit_s, &obj, NULL, &iters, err,
				  errlen))
		/* stopped at its limit: the row is left out; else a failure */
		st = strstr(err, "within") ? DAO_ERR_RANGE :
		     strstr(err, "memory") ? DAO_ERR_NOMEM : DAO_ERR_FAILED;
	else if (!st)
		*value = segment_lp_ns(obj);
	segment_lp_free(&s);
	return st;
}

const struct bound bound_segment_lp = {
	.name = "segment LP bound",
	.of = BOUND_TIME_NS,
	.side = BOUND_LOWER,
	.solve = segment_lp,
	.json = "segment_lp_bound_ns",
	.limit_option = "segment-lp-limit",
	.limit_default_s = 10,
	.limit_help = "CPU seconds the segment LP may take",
};
