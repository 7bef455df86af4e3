/* SPDX-License-Identifier: MIT */
/*
 * time_bound.c - the time-indexed LP (time_bound.h), built in an aggregated
 * form with O(kernels + intervals) nonzeros and solved by CLP.
 *
 * Windows m = 0..T: 0 runs before the first kernel, m = t + 1 is kernel
 * t's. Checkpoint t is the start of kernel t; it sees the copies of
 * windows 0..t. Per window and checkpoint there are running totals instead
 * of one variable per (use, window) pair:
 *
 *   Q_t  bytes fetched in windows <= t for uses after t (fetched ahead):
 *        Q_t = Q_(t-1) + H_t - (bytes that kernel t's uses needed fetched)
 *   E_t  bytes of the reuse intervals spanning t that are not kept:
 *        E_t = E_(t-1) + (e of intervals opened at t-1) - (e of those ending at t)
 *   L_m  bytes of dropped written data not yet written back after window m:
 *        L_m = L_(m-1) + (wb of writes in window m) - D_m, L_T = 0
 *
 * and space at checkpoint t is operands(t) + kept + Q_t =
 * operands(t) + B_t - E_t + Q_t <= budget, B_t being the bytes of all
 * intervals spanning t. Q_t >= 0 is "every use fetched before it", L_m >= 0
 * "nothing written back before it was written". Documentation/daosim.md
 * shows why these running totals lose nothing against one variable per
 * (use, window): an optimum never needs a fetch before the buffer's
 * previous use.
 *
 * CLP's primal simplex starts from a vertex built from the byte LP's
 * greedy with the write-backs placed in idle d2h time (warm_start, the
 * best of a few reserves for fetching ahead: best_start): from CLP's own
 * start the solve grew about quadratically (minutes at 10,000 kernels);
 * from this one the deep-learning and tiled traces of 50,000 kernels take
 * 0-10 iterations, the stencil sweeps 13,000-40,000.
 *
 * So on traces of 3,000 kernels or more, when CLP is not done within 100
 * iterations from best_start, the start comes from coarser LPs
 * (time_bound_solve_coarse): the trace in blocks of 2 kernels (coarsen:
 * a block's window is the sum of its kernels', its operands the most its
 * kernels hold at once with the intervals opening or closing in it held
 * whole), again and again down to under 3,000 kernels. Every coarser
 * level's intervals of one span and one write are merged into one column
 * (solve_merged: 239,616 become 23,459 on a 49,152-kernel stencil; a
 * start, not that level's LP), the coarsest solved from best_start, each
 * finer one from a start that drops, whole, every interval the next
 * coarser solution drops any of (warm_start with a hint), and the trace's
 * own LP last, from such a start. Every level is solved by sifting
 * (time_bound_sift.c): CLP pivots on the intervals the start drops and
 * those pricing takes in (10,000-65,000 of the 220,000 intervals of a
 * 49,152-kernel stencil2d), each pivot cheaper for it. A coarsened block that does not fit the budget falls
 * back on the plain solve. Either way the start changes the path, not the
 * LP: CLP proves the trace's own LP's optimum, whole, last.
 */
#include <malloc.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "lp_bound.h"
#include "time_bound.h"
#include "time_bound_lp.h"

/*
 * The start's write-backs: released[m] bytes become dirty-and-dropped in
 * window m; each window m < T writes back as much of the backlog as its
 * d2h engine moves within the window's length (its kernel time, or with
 * use_w the length the start already gave it), the rest is carried on
 * (L_m > 0, basic, with window m's d2h row, which it fills); the last
 * window takes what is left (L_T = 0) and its length is set after.
 */
static void write_back(const struct lp *lp, const struct layout *L, size_t T, double bout,
		       const double *released, int use_w, struct start *s)
{
	double backlog = 0.0;

	for (size_t mm = 1; mm <= T; mm++) {
		double len = use_w ? s->x[L->cW + mm] : lp->collb[L->cW + mm];
		double cap = bout * len, d;

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

/*
 * A vertex built from the byte LP's greedy (Documentation/daosim.md, "How
 * the time-indexed LP is solved"): keep what the greedy keeps within
 * budget - reserve (reserve bytes stay free for fetching ahead); write the
 * dropped written data back from the window right after its write on, as
 * much per window as the d2h engine moves within the window's kernel time,
 * the rest carried to later windows (L > 0; the last window takes what is
 * left); fetch the missing bytes from the last window back, each window
 * as much as its copy engine moves within the window's own length (its
 * kernel or its write-backs), the rest earlier while the device has room
 * at the kernel start in between, else in this window, made longer (W0
 * takes whatever is left); then write back again, now within the windows'
 * lengths so far (the fetches made some longer), so less is left for the
 * last window. Its basis: H_t with the fetch row t, E_t with the E row t,
 * D_m with the write-back row m, wb_v with the row of the interval of v
 * that drops the most; L_m where positive, with the d2h row of window m
 * (its engine is full); w where longer than its kernel, with the copy row
 * that sets it; Q where positive, with the capacity row it fills or else
 * the h2d row of the window it overflowed; each interval the greedy keeps
 * in part with the capacity row of the kernel it filled (distinct kernels,
 * lp_bound.h) when reserve is 0, else superbasic (that kernel is not full
 * in the LP); every other row's slack. One basic variable per row; where
 * the matrix were singular CLP would replace columns by slacks itself.
 */
static dao_status warm_start(const struct trace_profile *p, const struct lp *lp,
			     const struct layout *L, uint64_t budget, uint64_t reserve,
			     double scale, double bin, double bout, const double *comp,
			     const double *hint, struct start *s, char *err, size_t errlen)
{
	size_t T = p->nkernels, n = p->nintervals, nv = p->nversions;
	uint64_t *kept = malloc((n + 1) * sizeof(*kept));
	size_t *full = malloc((n + 1) * sizeof(*full));
	size_t *pick = malloc((nv + 1) * sizeof(*pick)); /* per version: its row's interval */
	double *opened = calloc(T + 1, sizeof(*opened));  /* E as a difference array */
	double *released = malloc((T + 1) * sizeof(*released)); /* write-back data per window */
	dao_status st = DAO_ERR_NOMEM;
	double R = 0.0;

	s->x = calloc(L->ncols, sizeof(*s->x));
	s->stat = malloc(L->ncols + L->nrows);
	s->colstat = s->stat;
	s->rowstat = s->stat ? s->stat + L->ncols : NULL;
	if (!kept || !full || !pick || !opened || !released || !s->x || !s->colstat || !s->rowstat)
		goto out;
	if (hint) {
		for (size_t j = 0; j < n; j++) {
			uint64_t b = p->intervals[j].bytes;
			double h = ceil(hint[j] - 1e-6);

			kept[j] = h <= 0 ? b : h >= (double)b ? 0 : b - (uint64_t)h;
			full[j] = SIZE_MAX;
		}
	} else {
		st = lp_bound_kept(p, budget - reserve, kept, full, err, errlen);
		if (st)
			goto out;
	}
	memset(s->colstat, CLP_AT_LOWER, L->ncols);
	memset(s->rowstat, CLP_BASIC, L->nrows);
	for (size_t v = 0; v < nv; v++)
		pick[v] = SIZE_MAX;
	for (size_t t = 0; t < T; t++)
		s->x[L->cH + t] = comp[t];
	for (size_t j = 0; j < n; j++) {
		const struct reuse_interval *iv = &p->intervals[j];
		double e = (double)(iv->bytes - kept[j]) / scale;
		size_t c = L->cE_j + j;

		s->x[c] = e;
		s->x[L->cH + iv->end] += e;
		opened[iv->start + 1] += e;
		opened[iv->end] -= e;
		if (kept[j] == 0) {
			s->colstat[c] = CLP_AT_UPPER;
		} else if (hint && kept[j] < iv->bytes) {
			s->colstat[c] = CLP_SUPERBASIC;
		} else if (kept[j] < iv->bytes && full[j] < T && reserve) {
			/* its kernel is not full in the LP (reserve is free) */
			s->colstat[c] = CLP_SUPERBASIC;
		} else if (kept[j] < iv->bytes && full[j] < T) {
			s->colstat[c] = CLP_BASIC;
			s->rowstat[L->rC + full[j]] = CLP_AT_UPPER;
		}
		if (iv->version != SIZE_MAX &&
		    (pick[iv->version] == SIZE_MAX || e > s->x[L->cE_j + pick[iv->version]]))
			pick[iv->version] = j;
	}
	for (size_t t = 0; t < T; t++) {
		s->x[L->cE + t] = opened[t] + (t ? s->x[L->cE + t - 1] : 0.0);
		s->colstat[L->cH + t] = CLP_BASIC;
		s->colstat[L->cE + t] = CLP_BASIC;
		s->colstat[L->cD + t] = CLP_BASIC;
		s->rowstat[L->rQ + t] = CLP_AT_LOWER;
		s->rowstat[L->rE + t] = CLP_AT_LOWER;
		s->rowstat[L->rL + t] = CLP_AT_LOWER;
	}
	/* the rV rows in the order time_bound_solve made them */
	for (size_t j = 0, r = L->rV; j < n; j++) {
		const struct reuse_interval *iv = &p->intervals[j];

		if (iv->version == SIZE_MAX)
			continue;
		if (pick[iv->version] == j) {
			double wb = s->x[L->cE_j + j];

			s->x[L->cWB + iv->version] = wb;
			s->colstat[L->cWB + iv->version] = CLP_BASIC;
			s->rowstat[r] = CLP_AT_LOWER;
			s->x[L->cD + iv->written_at] += wb; /* window written_at + 1 */
		}
		r++;
	}
	for (size_t mm = 1; mm <= T; mm++)
		released[mm] = s->x[L->cD + mm - 1];
	write_back(lp, L, T, bout, released, 0, s);
	/* Fetch as late as the copy engine allows within each window's own
	 * length (its kernel or its write-backs), earlier where there is room,
	 * from the last window back: R is what later kernels still need. */
	for (size_t mm = T; mm-- > 0;) {
		double c = lp->collb[L->cW + mm];
		double out = mm >= 1 ? s->x[L->cD + mm - 1] / bout : 0.0;
		double w0 = c > out ? c : out, lim = mm ? bin * w0 : 0.0, carry, h, w;
		int cap_tight = 0;

		R += s->x[L->cH + mm]; /* what kernel mm needs fetched */
		carry = mm && R > lim ? R - lim : 0.0; /* W0 fetches all the rest */
		if (mm >= 1) {
			double room = s->rowstat[L->rC + mm - 1] == CLP_AT_UPPER ?
					      0.0 :
					      lp->rowub[L->rC + mm - 1] + s->x[L->cE + mm - 1];

			if ((reserve || hint) && room > 0) /* round-off of the kept bytes */
				room -= 1e-9 * (double)budget / scale;

			room = room > 0 ? room : 0.0;
			if (carry > room) {
				carry = room;
				cap_tight = carry > 0;
			}
		}
		h = R - carry;
		R = carry;
		s->x[L->cH + mm] = h;
		if (mm >= 1) {
			s->x[L->cQ + mm - 1] = carry;
			if (carry > 0)
				s->colstat[L->cQ + mm - 1] = CLP_BASIC;
			if (cap_tight)
				s->rowstat[L->rC + mm - 1] = CLP_AT_UPPER;
		}
		if (h > lim) { /* the fetches set the window's length */
			w = h / bin;
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
	write_back(lp, L, T, bout, released, 1, s);
	{ /* the last window runs the last kernel and write-backs only */
		double c = lp->collb[L->cW + T], out = s->x[L->cD + T - 1] / bout;

		s->x[L->cW + T] = c > out ? c : out;
		if (out > c) {
			s->colstat[L->cW + T] = CLP_BASIC;
			s->rowstat[L->rOUT + T - 1] = CLP_AT_LOWER;
		}
	}
	s->value = 0.0;
	for (size_t mm = 0; mm <= T; mm++)
		s->value += s->x[L->cW + mm];
	st = DAO_OK;
out:
	free(kept);
	free(full);
	free(pick);
	free(opened);
	free(released);
	return st;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The start the simplex gets: warm_start's vertex for the reserve (device
 * bytes the greedy leaves free at every kernel, for fetching ahead) that
 * gives the smallest objective among 0 and r0 * 2^k, k = -2, -1, 0, 1, ...,
 * r0 being the bytes the h2d engine moves during the median kernel; tried
 * in increasing order until the objective has grown twice in a row or the
 * reserve leaves less than the largest kernel's operands.
 */
static dao_status best_start(const struct trace_profile *p, const struct lp *lp,
			     const struct layout *L, uint64_t budget, double scale, double bin,
			     double bout, const double *comp, struct start *best, char *err,
			     size_t errlen)
{
	size_t T = p->nkernels;
	double *c = malloc(T * sizeof(*c)), r0;
	dao_status st;
	int worse = 0;

	if (!c)
		return DAO_ERR_NOMEM;
	for (size_t t = 0; t < T; t++)
		c[t] = lp->collb[L->cW + t + 1];
	qsort(c, T, sizeof(*c), cmp_double);
	r0 = bin * c[T / 2] * scale; /* bytes */
	free(c);
	st = warm_start(p, lp, L, budget, 0, scale, bin, bout, comp, NULL, best, err, errlen);
	if (st || !(r0 >= 1.0))
		return st;
	for (double r = r0 / 4; worse < 2 && r < (double)budget; r *= 2) {
		struct start s = { 0 };
		uint64_t reserve = (uint64_t)r;

		if (budget - reserve < p->max_kernel_bytes)
			break;
		st = warm_start(p, lp, L, budget, reserve, scale, bin, bout, comp, NULL, &s, err,
				errlen);
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

dao_status time_bound_solve(const struct trace_profile *p, const struct dao_sim_model *m,
			    uint64_t budget, double max_seconds, struct time_bound *out, char *err,
			    size_t errlen)
{
	return time_bound_solve_from(p, m, budget, TIME_BOUND_START_GREEDY, max_seconds, out, err,
				     errlen);
}

/* How solve hands the LP to CLP: whole, or by sifting (time_bound_sift.c)
 * to CLP's proven optimum, or to a start for a finer LP. */
enum solve_way { WHOLE, SIFT_PROVE, SIFT_HINT };

/* Sifting takes in a column left out when its reduced cost is below 0.1%
 * of the time to fetch a byte: near-degenerate columns, most of which the
 * next pivots would make attractive (without them, more rounds). */
#define SIFT_MARGIN 1e-3

/*
 * The LP of p solved from the given start. kns: the windows' kernel times
 * (NULL: the model's); hint: bytes dropped per interval to start from
 * (warm_start keeps the rest; NULL: best_start); max_iters > 0: CLP stops
 * after that many iterations (DAO_ERR_LIMIT); eout: the optimum's dropped
 * bytes per interval (or NULL). out->iterations is set either way.
 */
static dao_status solve(const struct trace_profile *p, const struct dao_sim_model *m,
			const double *kns, uint64_t budget, enum time_bound_start start,
			const double *hint, int max_iters, enum solve_way way, double max_seconds,
			struct time_bound *out, double *eout, char *err, size_t errlen)
{
	double *xout = NULL;
	size_t T = p->nkernels, n = p->nintervals, nv = p->nversions;
	/* columns */
	size_t cW = 0, cH, cD, cQ, cE, cL, cE_j, cWB, ncols;
	/* rows */
	size_t rIN, rOUT, rQ, rE, rC, rL, rV, nrows;
	double scale = 1.0, bin, bout, objval;
	double *span = NULL, *comp = NULL;
	struct start ws = { 0 };
	struct lp lp = { 0 };
	dao_status st;
	char dummy[128];
	int warm = start == TIME_BOUND_START_GREEDY, ret;

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	st = lp_check_budget(p, budget, err, errlen);
	if (st)
		return st;
	memset(out, 0, sizeof(*out));
	if (T == 0)
		return DAO_OK;
	/* Bytes in units of a power of two (exact) so that the budget is
	 * near 2^20: moderate numbers keep the simplex's tolerances
	 * meaningful. Time stays in ns. */
	while ((double)budget / scale > 1048576.0)
		scale *= 2.0;
	bin = m->h2d_bytes_per_s / 1e9 / scale; /* scaled bytes per ns */
	bout = m->d2h_bytes_per_s / 1e9 / scale;

	cH = cW + T + 1;     /* w_m, m = 0..T */
	cD = cH + T;         /* H_m, m = 0..T-1 */
	cQ = cD + T;         /* D_m at cD + m - 1, m = 1..T */
	cE = cQ + T;         /* Q_t */
	cL = cE + T;         /* E_t */
	cE_j = cL + T;       /* L_m at cL + m - 1, m = 1..T */
	cWB = cE_j + n;      /* e_j */
	ncols = cWB + nv;    /* wb_v */
	rIN = 0;             /* w_m - H_m / bin >= 0, m = 0..T-1 */
	rOUT = rIN + T;      /* w_m - D_m / bout >= 0 at rOUT + m - 1, m = 1..T */
	rQ = rOUT + T;       /* Q_t recurrence */
	rE = rQ + T;         /* E_t recurrence */
	rC = rE + T;         /* capacity */
	rL = rC + T;         /* L_m recurrence at rL + m - 1 */
	rV = rL + T;         /* wb_v - e_j >= 0 per interval holding written data */
	nrows = rV;
	for (size_t j = 0; j < n; j++)
		nrows += p->intervals[j].version != SIZE_MAX;
	if (nrows > INT32_MAX / 2 || ncols > INT32_MAX / 2) {
		snprintf(err, errlen, "trace too large for the time-indexed LP");
		return DAO_ERR_INVALID;
	}

	lp.nrows = nrows;
	lp.ncols = ncols;
	lp.collb = calloc(ncols, sizeof(double));
	lp.colub = malloc(ncols * sizeof(double));
	lp.obj = calloc(ncols, sizeof(double));
	lp.rowlb = calloc(nrows, sizeof(double));
	lp.rowub = calloc(nrows, sizeof(double));
	span = calloc(T + 1, sizeof(*span));
	comp = calloc(T + 1, sizeof(*comp));
	if (!lp.collb || !lp.colub || !lp.obj || !lp.rowlb || !lp.rowub || !span || !comp) {
		st = DAO_ERR_NOMEM;
		goto out;
	}
	for (size_t c = 0; c < ncols; c++)
		lp.colub[c] = INFINITY;

	/* B_t (as a difference array, then summed) and the compulsory bytes
	 * each kernel needs fetched (first reads). */
	for (size_t j = 0; j < n; j++) {
		const struct reuse_interval *iv = &p->intervals[j];

		span[iv->start + 1] += (double)iv->bytes / scale;
		span[iv->end] -= (double)iv->bytes / scale;
	}
	for (size_t t = 1; t <= T; t++)
		span[t] += span[t - 1];
	for (size_t k = 0; k < T; k++)
		comp[k] = (double)p->first_read_bytes[k] / scale;

	/* windows: w_m >= kernel time; copies within w_m */
	for (size_t mm = 0; mm <= T; mm++) {
		lp.obj[cW + mm] = 1.0;
		lp.collb[cW + mm] =
			!mm ? 0.0 :
			kns ? kns[mm - 1] :
			      (double)model_kernel_ns(m, p->kernel_flops[mm - 1], p->kernel_bytes[mm - 1]);
		if (mm < T) {
			lp_entry(&lp, rIN + mm, cW + mm, 1.0);
			lp_entry(&lp, rIN + mm, cH + mm, -1.0 / bin);
			lp.rowub[rIN + mm] = INFINITY;
		}
		if (mm >= 1) {
			lp_entry(&lp, rOUT + mm - 1, cW + mm, 1.0);
			lp_entry(&lp, rOUT + mm - 1, cD + mm - 1, -1.0 / bout);
			lp.rowub[rOUT + mm - 1] = INFINITY;
		}
	}
	for (size_t t = 0; t < T; t++) {
		/* Q_t - Q_(t-1) - H_t + (e of uses at t) = -comp_t */
		lp_entry(&lp, rQ + t, cQ + t, 1.0);
		if (t)
			lp_entry(&lp, rQ + t, cQ + t - 1, -1.0);
		lp_entry(&lp, rQ + t, cH + t, -1.0);
		lp.rowlb[rQ + t] = lp.rowub[rQ + t] = -comp[t];
		/* E_t - E_(t-1) - (opened at t-1) + (ending at t) = 0 */
		lp_entry(&lp, rE + t, cE + t, 1.0);
		if (t)
			lp_entry(&lp, rE + t, cE + t - 1, -1.0);
		/* Q_t - E_t <= budget - operands(t) - B_t */
		lp_entry(&lp, rC + t, cQ + t, 1.0);
		lp_entry(&lp, rC + t, cE + t, -1.0);
		lp.rowlb[rC + t] = -INFINITY;
		lp.rowub[rC + t] = (double)(budget - p->kernel_bytes[t]) / scale - span[t];
	}
	for (size_t mm = 1; mm <= T; mm++) {
		/* L_m - L_(m-1) + D_m - (wb of writes in window m) = 0 */
		lp_entry(&lp, rL + mm - 1, cL + mm - 1, 1.0);
		if (mm > 1)
			lp_entry(&lp, rL + mm - 1, cL + mm - 2, -1.0);
		lp_entry(&lp, rL + mm - 1, cD + mm - 1, 1.0);
	}
	lp.colub[cL + T - 1] = 0.0; /* everything dropped is written back */
	{
		size_t r = rV;
		size_t *release = malloc((nv + 1) * sizeof(*release));

		if (!release) {
			st = DAO_ERR_NOMEM;
			goto out;
		}
		for (size_t j = 0; j < n; j++) {
			const struct reuse_interval *iv = &p->intervals[j];
			double b = (double)iv->bytes / scale;
			size_t c = cE_j + j;

			lp.colub[c] = b;
			lp_entry(&lp, rQ + iv->end, c, 1.0);
			lp_entry(&lp, rE + iv->start + 1, c, -1.0);
			lp_entry(&lp, rE + iv->end, c, 1.0);
			if (iv->version != SIZE_MAX) {
				lp_entry(&lp, r, cWB + iv->version, 1.0);
				lp_entry(&lp, r, c, -1.0);
				lp.rowub[r] = INFINITY;
				r++;
				release[iv->version] = iv->written_at;
			}
		}
		/* a write at kernel a is released in window a + 1 */
		for (size_t v = 0; v < nv; v++)
			lp_entry(&lp, rL + release[v], cWB + v, -1.0);
		free(release);
	}
	if (lp.nomem) {
		st = DAO_ERR_NOMEM;
		goto out;
	}
	if (warm) {
		struct layout lay = { cW, cH, cD, cQ, cE, cL, cE_j, cWB, ncols,
				      rIN, rOUT, rQ, rE, rC, rL, rV, nrows };

		if (hint)
			st = warm_start(p, &lp, &lay, budget, 0, scale, bin, bout, comp, hint, &ws,
					err, errlen);
		else
			st = best_start(p, &lp, &lay, budget, scale, bin, bout, comp, &ws, err,
					errlen);
		if (st)
			goto out;
	}
	if (eout && !(xout = malloc(ncols * sizeof(*xout)))) {
		st = DAO_ERR_NOMEM;
		goto out;
	}
	if (warm && way != WHOLE) {
		struct layout lay = { cW, cH, cD, cQ, cE, cL, cE_j, cWB, ncols,
				      rIN, rOUT, rQ, rE, rC, rL, rV, nrows };

		ret = sift_solve(&lp, &lay, p, &ws, way == SIFT_PROVE, SIFT_MARGIN / bin,
				 max_seconds, &objval, xout, &out->iterations, &out->priced_in,
				 err, errlen);
	} else {
		ret = clp_solve(&lp, warm ? &ws : NULL, max_iters, max_seconds, &objval,
				&(struct clp_result){ .x = xout }, &out->iterations, err, errlen);
	}
	if (ret) {
		st = ret == -2		      ? DAO_ERR_LIMIT :
		     strstr(err, "memory") ? DAO_ERR_NOMEM :
		     strstr(err, "within") ? DAO_ERR_RANGE : DAO_ERR_FAILED;
		goto out;
	}
	out->lp_ns = objval;
	/* Real schedules take whole ns: round up what is above an integer by
	 * more than the solver's noise. */
	out->ns = (uint64_t)ceil(objval * (1.0 - 1e-9) - 1e-6);
	out->rows = nrows;
	out->cols = ncols;
	if (eout)
		for (size_t j = 0; j < n; j++)
			eout[j] = xout[cE_j + j] * scale;
out:
	free(xout);
	free(span);
	free(comp);
	start_free(&ws);
	lp_free(&lp);
	return st;
}

/*
 * The trace in blocks of k kernels (one coarse kernel each, its window
 * the sum of theirs): intervals between blocks stay, those within a block
 * go (kept); a block's operands are the most its kernels hold at once of
 * their operands and of the intervals that open or close in the block.
 * cmap[j]: the coarse interval of p's interval j, SIZE_MAX if gone.
 */
static dao_status coarsen(const struct trace_profile *p, const struct dao_sim_model *m,
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
 * Dropped bytes per interval of p (eout), from an LP like p's in which
 * the intervals of one span that hold the write of one kernel (or none)
 * are one column, and the writes of one kernel one write-back variable:
 * at the 3,072-kernel level of a 49,152-kernel stencil 239,616 intervals
 * become 23,459 columns. Not p's LP (one write-back per kernel instead of
 * per write): a start for a finer LP only. Solved by sifting from the
 * start hint gives (each merged column drops what its intervals drop
 * there), or from best_start without one. Each merged column's dropped
 * bytes go to its intervals whole, in order.
 */
static dao_status solve_merged(const struct trace_profile *p, const struct dao_sim_model *m,
			       const double *kns, uint64_t budget, const double *hint, double max_seconds,
			       struct time_bound *out, double *eout, char *err, size_t errlen)
{
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
	if (hint) {
		gh = calloc(ng + 1, sizeof(*gh));
		if (!gh)
			goto out;
		for (size_t i = 0; i < n; i++)
			gh[grp[i]] += hint[idx[i]];
	}
	st = solve(&mp, m, kns, budget, TIME_BOUND_START_GREEDY, gh, 0, SIFT_HINT, max_seconds,
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

/* Coarse-to-fine (time_bound_solve's): blocks of COARSEN kernels per
 * level, down to the first level with fewer than COARSE_MIN * COARSEN
 * kernels; the plain solve first, for at most PLAIN_PIVOTS iterations.
 * Blocks of 2 rather than 4 (2026-11-25): each level's start is closer,
 * and the extra levels are merged, hence cheap (benchmarks.md). */
enum { COARSEN = 2, COARSE_MIN = 1500, PLAIN_PIVOTS = 100 };

/*
 * p's LP from a start that drops, whole, every interval of which the
 * solution of the coarsened LP (coarsen) drops anything; the coarsened
 * LP solved the same way, down to the coarsest level. Every coarser
 * level is solved merged (solve_merged: a start, not that level's LP;
 * from best_start at the coarsest), p's own LP (eout NULL: the trace's)
 * by sifting to CLP's proven optimum, the one returned. Stops with
 * DAO_ERR_RANGE when the levels together take more than max_seconds
 * (> 0) of CPU time.
 */
static dao_status solve_ml(const struct trace_profile *p, const struct dao_sim_model *m,
			   const double *kns, uint64_t budget, size_t k, size_t kmin, double t0,
			   double max_seconds, struct time_bound *out, double *eout, char *err,
			   size_t errlen)
{
	struct trace_profile cp;
	double *ckns = NULL, *ce = NULL, *hint = NULL, left;
	size_t *cmap = NULL;
	struct time_bound cb = { 0 };
	dao_status st;

	if (!time_left(t0, max_seconds, &left, err, errlen))
		return DAO_ERR_RANGE;
	if (p->nkernels / k < kmin)
		return solve_merged(p, m, kns, budget, NULL, left, out, eout, err, errlen);
	st = coarsen(p, m, kns, k, &cp, &ckns, &cmap);
	if (!st && cp.max_kernel_bytes > budget) {
		snprintf(err, errlen, "coarsened operands exceed the budget");
		st = DAO_ERR_BUDGET;
	}
	if (!st) {
		ce = malloc((cp.nintervals + 1) * sizeof(*ce));
		hint = malloc((p->nintervals + 1) * sizeof(*hint));
		st = ce && hint ? DAO_OK : DAO_ERR_NOMEM;
	}
	if (!st)
		st = solve_ml(&cp, m, ckns, budget, k, kmin, t0, max_seconds, &cb, ce, err,
			      errlen);
	if (!st && !time_left(t0, max_seconds, &left, err, errlen))
		st = DAO_ERR_RANGE;
	if (!st) {
		for (size_t j = 0; j < p->nintervals; j++) {
			double e = cmap[j] == SIZE_MAX ? 0.0 : ce[cmap[j]];

			hint[j] = e > 0.5 ? (double)p->intervals[j].bytes : 0.0;
		}
		/* the trace's own LP (no eout) proven, a coarser one a start */
		/* a coarser level, a start only: merged; the trace's own LP
		 * (no eout): proven */
		if (eout)
			st = solve_merged(p, m, kns, budget, hint, left, out, eout, err, errlen);
		else
			st = solve(p, m, kns, budget, TIME_BOUND_START_GREEDY, hint, 0, SIFT_PROVE,
				   left, out, NULL, err, errlen);
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
	size_t plain_iters = 0;
	double t0 = cpu_s();
	dao_status st;
	char dummy[128];

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	if (k < 2 || kmin < 1 || p->nkernels / k < kmin)
		return solve(p, m, NULL, budget, TIME_BOUND_START_GREEDY, NULL, 0, WHOLE, max_seconds,
			     out, NULL, err, errlen);
	if (plain_pivots > 0) {
		/* most long traces are a few pivots from best_start */
		st = solve(p, m, NULL, budget, TIME_BOUND_START_GREEDY, NULL, plain_pivots, WHOLE,
			   max_seconds, out, NULL, err, errlen);
		if (st != DAO_ERR_LIMIT)
			return st;
		plain_iters = out->iterations;
	} else {
		st = lp_check_budget(p, budget, err, errlen);
		if (st)
			return st;
	}
	st = solve_ml(p, m, NULL, budget, k, kmin, t0, max_seconds, out, NULL, err, errlen);
	if (st == DAO_ERR_BUDGET || st == DAO_ERR_FAILED) {
		/* a coarsened level did not fit or failed: the plain solve */
		double left;

		if (!time_left(t0, max_seconds, &left, err, errlen))
			return DAO_ERR_RANGE;
		st = solve(p, m, NULL, budget, TIME_BOUND_START_GREEDY, NULL, 0, WHOLE, left, out, NULL,
			   err, errlen);
	}
	out->iterations += plain_iters;
	return st;
}

dao_status time_bound_solve_from(const struct trace_profile *p, const struct dao_sim_model *m,
				 uint64_t budget, enum time_bound_start start, double max_seconds,
				 struct time_bound *out, char *err, size_t errlen)
{
	if (start != TIME_BOUND_START_GREEDY)
		return solve(p, m, NULL, budget, start, NULL, 0, WHOLE, max_seconds, out, NULL,
			     err && errlen ? err : NULL, err && errlen ? errlen : 0);
	return time_bound_solve_coarse(p, m, budget, COARSEN, COARSE_MIN, PLAIN_PIVOTS,
				       max_seconds, out, err, errlen);
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
