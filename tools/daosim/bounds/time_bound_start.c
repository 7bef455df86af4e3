/* SPDX-License-Identifier: MIT */
/*
 * time_bound_start.c - where CLP's simplex starts on the time-indexed LP
 * (time_bound_lp.h, ti_warm_start and ti_best_start): a vertex built from
 * the byte LP's greedy with the write-backs placed in idle d2h time. From
 * CLP's own start the solve grew about quadratically (minutes at 10,000
 * kernels); from this one the deep-learning and tiled traces of 50,000
 * kernels take 0-10 iterations, the stencil sweeps 13,000-40,000.
 *
 * The vertex (Documentation/daosim.md, "How the time-indexed LP is
 * solved"), in the steps of ti_warm_start: keep what the greedy keeps
 * within budget - reserve (reserve bytes stay free for fetching ahead);
 * write the dropped written data back from the window right after its
 * write on, as much per window as the d2h engine moves within the
 * window's kernel time, the rest carried to later windows (L > 0; the
 * last window takes what is left); fetch the missing bytes from the last
 * window back, each window as much as its copy engine moves within the
 * window's own length (its kernel or its write-backs), the rest earlier
 * while the device has room at the kernel start in between, else in this
 * window, made longer (W0 takes whatever is left); then write back again,
 * now within the windows' lengths so far (the fetches made some longer),
 * so less is left for the last window.
 *
 * Its basis: H_t with the fetch row t, E_t with the E row t, D_m with the
 * write-back row m, wb_v with the row of the interval of v that drops the
 * most; L_m where positive, with the d2h row of window m (its engine is
 * full); w where longer than its kernel, with the copy row that sets it;
 * Q where positive, with the capacity row it fills or else the h2d row of
 * the window it overflowed; each interval the greedy keeps in part with
 * the capacity row of the kernel it filled (distinct kernels, lp_bound.h)
 * when reserve is 0, else superbasic (that kernel is not full in the LP);
 * every other row's slack. One basic variable per row; where the matrix
 * were singular CLP would replace columns by slacks itself.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lp_bound.h"
#include "time_bound_lp.h"

/* What one warm start works out on the way. */
struct warm {
	uint64_t *kept;   /* per interval: the bytes kept */
	size_t *full;     /* per interval: the kernel it filled (lp_bound_kept) */
	size_t *pick;     /* per version: its row's interval */
	double *opened;   /* E as a difference array */
	double *released; /* write-back data per window */
};

static void warm_free(struct warm *w)
{
	free(w->kept);
	free(w->full);
	free(w->pick);
	free(w->opened);
	free(w->released);
}

/*
 * The start's write-backs: released[m] bytes become dirty-and-dropped in
 * window m; each window m < T writes back as much of the backlog as its
 * d2h engine moves within the window's length (its kernel time, or with
 * use_w the length the start already gave it), the rest is carried on
 * (L_m > 0, basic, with window m's d2h row, which it fills); the last
 * window takes what is left (L_T = 0) and its length is set after.
 */
static void write_back(const struct ti_lp *t, const double *released, int use_w,
		       struct start *s)
{
	const struct layout *L = &t->L;
	size_t T = t->p->nkernels;
	double backlog = 0.0;

	for (size_t mm = 1; mm <= T; mm++) {
		double len = use_w ? s->x[L->cW + mm] : t->lp.collb[L->cW + mm];
		double cap = t->bout * len, d;

		backlog += released[mm];
		d = mm < T && backlog > cap ? cap : backlog;
		s->x[L->cD + mm - 1] = d;
		backlog -= d;
		s->x[L->cL + mm - 1] = mm < T ? backlog : 0.0;
		if (mm < T && backlog > 0) {
			s->colstat[L->cL + mm - 1] = CLP_BASIC;
			s->rowstat[L->rOUT + mm - 1] = CLP_AT_LOWER;
		} else {
			s->colstat[L->cL + mm - 1] = CLP_AT_LOWER;
			s->rowstat[L->rOUT + mm - 1] = CLP_BASIC;
		}
	}
}

/* The bytes kept of each interval: what the hint does not drop, else
 * the greedy's within budget - reserve. */
static dao_status keep(const struct ti_lp *t, uint64_t reserve, const double *hint,
		       struct warm *w, char *err, size_t errlen)
{
	const struct trace_profile *p = t->p;

	if (!hint)
		return lp_bound_kept(p, t->budget - reserve, w->kept, w->full, err, errlen);
	for (size_t j = 0; j < p->nintervals; j++) {
		uint64_t b = p->intervals[j].bytes;
		double h = ceil(hint[j] - 1e-6);

		w->kept[j] = h <= 0 ? b : h >= (double)b ? 0 : b - (uint64_t)h;
		w->full[j] = SIZE_MAX;
	}
	return DAO_OK;
}

/* What is not kept is dropped: each interval's e_j, fetched for its use
 * (H), and the running E; their statuses, and per version the interval
 * that drops the most. */
static void drop(const struct ti_lp *t, uint64_t reserve, const double *hint, struct warm *w,
		 struct start *s)
{
	const struct trace_profile *p = t->p;
	const struct layout *L = &t->L;
	size_t T = p->nkernels;

	memset(s->colstat, CLP_AT_LOWER, L->ncols);
	memset(s->rowstat, CLP_BASIC, L->nrows);
	for (size_t v = 0; v < p->nversions; v++)
		w->pick[v] = SIZE_MAX;
	for (size_t k = 0; k < T; k++)
		s->x[L->cH + k] = t->comp[k];
	for (size_t j = 0; j < p->nintervals; j++) {
		const struct reuse_interval *iv = &p->intervals[j];
		uint64_t kept = w->kept[j];
		double e = (double)(iv->bytes - kept) / t->scale;
		size_t c = L->cE_j + j;

		s->x[c] = e;
		s->x[L->cH + iv->end] += e;
		w->opened[iv->start + 1] += e;
		w->opened[iv->end] -= e;
		if (kept == 0) {
			s->colstat[c] = CLP_AT_UPPER;
		} else if (hint && kept < iv->bytes) {
			s->colstat[c] = CLP_SUPERBASIC;
		} else if (kept < iv->bytes && w->full[j] < T && reserve) {
			/* its kernel is not full in the LP (reserve is free) */
			s->colstat[c] = CLP_SUPERBASIC;
		} else if (kept < iv->bytes && w->full[j] < T) {
			s->colstat[c] = CLP_BASIC;
			s->rowstat[L->rC + w->full[j]] = CLP_AT_UPPER;
		}
		if (iv->version != SIZE_MAX &&
		    (w->pick[iv->version] == SIZE_MAX || e > s->x[L->cE_j + w->pick[iv->version]]))
			w->pick[iv->version] = j;
	}
	for (size_t k = 0; k < T; k++) {
		s->x[L->cE + k] = w->opened[k] + (k ? s->x[L->cE + k - 1] : 0.0);
		s->colstat[L->cH + k] = CLP_BASIC;
		s->colstat[L->cE + k] = CLP_BASIC;
		s->colstat[L->cD + k] = CLP_BASIC;
		s->rowstat[L->rQ + k] = CLP_AT_LOWER;
		s->rowstat[L->rE + k] = CLP_AT_LOWER;
		s->rowstat[L->rL + k] = CLP_AT_LOWER;
	}
}

/* Each version's wb, basic with the row of the interval that drops the
 * most, released in the window after its write; the first write-backs
 * within the kernels' times. */
static void release(const struct ti_lp *t, struct warm *w, struct start *s)
{
	const struct trace_profile *p = t->p;
	const struct layout *L = &t->L;

	/* the rV rows in the order ti_lp_build made them */
	for (size_t j = 0, r = L->rV; j < p->nintervals; j++) {
		const struct reuse_interval *iv = &p->intervals[j];

		if (iv->version == SIZE_MAX)
			continue;
		if (w->pick[iv->version] == j) {
			double wb = s->x[L->cE_j + j];

			s->x[L->cWB + iv->version] = wb;
			s->colstat[L->cWB + iv->version] = CLP_BASIC;
			s->rowstat[r] = CLP_AT_LOWER;
			s->x[L->cD + iv->written_at] += wb; /* window written_at + 1 */
		}
		r++;
	}
	for (size_t mm = 1; mm <= p->nkernels; mm++)
		w->released[mm] = s->x[L->cD + mm - 1];
	write_back(t, w->released, 0, s);
}

/* Window mm's fetches, h of them, and with carry > 0 the engine full. */
static void fetch_window(const struct ti_lp *t, size_t mm, double h, double lim, double w0,
			 double carry, struct start *s)
{
	const struct layout *L = &t->L;
	double c = t->lp.collb[L->cW + mm], w;

	s->x[L->cH + mm] = h;
	if (h > lim) { /* the fetches set the window's length */
		w = h / t->bin;
		s->colstat[L->cW + mm] = CLP_BASIC;
		s->rowstat[L->rIN + mm] = CLP_AT_LOWER;
	} else {
		w = w0;
		if (carry > 0) /* the engine is full for the window's length */
			s->rowstat[L->rIN + mm] = CLP_AT_LOWER;
		if (w0 > c) { /* the write-backs set it */
			s->colstat[L->cW + mm] = CLP_BASIC;
			s->rowstat[L->rOUT + mm - 1] = CLP_AT_LOWER;
		}
	}
	s->x[L->cW + mm] = w;
}

/* Fetch as late as the copy engine allows within each window's own
 * length (its kernel or its write-backs), earlier where there is room,
 * from the last window back: R is what later kernels still need. */
static void fetch(const struct ti_lp *t, uint64_t reserve, const double *hint, struct start *s)
{
	const struct layout *L = &t->L;
	double R = 0.0;

	for (size_t mm = t->p->nkernels; mm-- > 0;) {
		double c = t->lp.collb[L->cW + mm];
		double out = mm >= 1 ? s->x[L->cD + mm - 1] / t->bout : 0.0;
		double w0 = c > out ? c : out, lim = mm ? t->bin * w0 : 0.0, carry, h;
		int cap_tight = 0;

		R += s->x[L->cH + mm]; /* what kernel mm needs fetched */
		carry = mm && R > lim ? R - lim : 0.0; /* W0 fetches all the rest */
		if (mm >= 1) {
			double room = s->rowstat[L->rC + mm - 1] == CLP_AT_UPPER ?
					      0.0 :
					      t->lp.rowub[L->rC + mm - 1] + s->x[L->cE + mm - 1];

			if ((reserve || hint) && room > 0) /* round-off of the kept bytes */
				room -= 1e-9 * (double)t->budget / t->scale;

			room = room > 0 ? room : 0.0;
			if (carry > room) {
				carry = room;
				cap_tight = carry > 0;
			}
		}
		h = R - carry;
		R = carry;
		if (mm >= 1) {
			s->x[L->cQ + mm - 1] = carry;
			if (carry > 0)
				s->colstat[L->cQ + mm - 1] = CLP_BASIC;
			if (cap_tight)
				s->rowstat[L->rC + mm - 1] = CLP_AT_UPPER;
		}
		fetch_window(t, mm, h, lim, w0, carry, s);
	}
}

/* The write-backs again within the windows' lengths so far; the last
 * window runs the last kernel and the write-backs left; the value. */
static void finish(const struct ti_lp *t, const struct warm *w, struct start *s)
{
	const struct layout *L = &t->L;
	size_t T = t->p->nkernels;
	double c = t->lp.collb[L->cW + T], out;

	write_back(t, w->released, 1, s);
	out = s->x[L->cD + T - 1] / t->bout;
	s->x[L->cW + T] = c > out ? c : out;
	if (out > c) {
		s->colstat[L->cW + T] = CLP_BASIC;
		s->rowstat[L->rOUT + T - 1] = CLP_AT_LOWER;
	}
	s->value = 0.0;
	for (size_t mm = 0; mm <= T; mm++)
		s->value += s->x[L->cW + mm];
}

dao_status ti_warm_start(const struct ti_lp *t, uint64_t reserve, const double *hint,
			 struct start *s, char *err, size_t errlen)
{
	const struct layout *L = &t->L;
	size_t T = t->p->nkernels, n = t->p->nintervals;
	struct warm w = {
		.kept = malloc((n + 1) * sizeof(*w.kept)),
		.full = malloc((n + 1) * sizeof(*w.full)),
		.pick = malloc((t->p->nversions + 1) * sizeof(*w.pick)),
		.opened = calloc(T + 1, sizeof(*w.opened)),
		.released = malloc((T + 1) * sizeof(*w.released)),
	};
	dao_status st = DAO_ERR_NOMEM;

	s->x = calloc(L->ncols, sizeof(*s->x));
	s->stat = malloc(L->ncols + L->nrows);
	s->colstat = s->stat;
	s->rowstat = s->stat ? s->stat + L->ncols : NULL;
	if (!w.kept || !w.full || !w.pick || !w.opened || !w.released || !s->x || !s->colstat ||
	    !s->rowstat)
		goto out;
	st = keep(t, reserve, hint, &w, err, errlen);
	if (st)
		goto out;
	drop(t, reserve, hint, &w, s);
	release(t, &w, s);
	fetch(t, reserve, hint, s);
	finish(t, &w, s);
out:
	warm_free(&w);
	return st;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The start the simplex gets: ti_warm_start's vertex for the reserve
 * (device bytes the greedy leaves free at every kernel, for fetching
 * ahead) that gives the smallest objective among 0 and r0 * 2^k, k = -2,
 * -1, 0, 1, ..., r0 being the bytes the h2d engine moves during the
 * median kernel; tried in increasing order until the objective has grown
 * twice in a row or the reserve leaves less than the largest kernel's
 * operands.
 */
dao_status ti_best_start(const struct ti_lp *t, struct start *best, char *err, size_t errlen)
{
	size_t T = t->p->nkernels;
	double *c = malloc(T * sizeof(*c)), r0;
	dao_status st;
	int worse = 0;

	if (!c)
		return DAO_ERR_NOMEM;
	for (size_t k = 0; k < T; k++)
		c[k] = t->lp.collb[t->L.cW + k + 1];
	qsort(c, T, sizeof(*c), cmp_double);
	r0 = t->bin * c[T / 2] * t->scale; /* bytes */
	free(c);
	st = ti_warm_start(t, 0, NULL, best, err, errlen);
	if (st || !(r0 >= 1.0))
		return st;
	for (double r = r0 / 4; worse < 2 && r < (double)t->budget; r *= 2) {
		struct start s = { 0 };
		uint64_t reserve = (uint64_t)r;

		if (t->budget - reserve < t->p->max_kernel_bytes)
			break;
		st = ti_warm_start(t, reserve, NULL, &s, err, errlen);
		if (st) {
			start_free(&s);
			return st;
		}
		if (s.value < best->value) {
			start_free(best);
			*best = s;
			worse = 0;
		} else {
			start_free(&s);
			worse++;
		}
	}
	return DAO_OK;
}
