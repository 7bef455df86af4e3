/* SPDX-License-Identifier: MIT */
/*
 * test_matrix.c - dao-cholesky's checks of a factor (matrix.h): the sampled
 * residual agrees with the full one on a correct factor and sees what the
 * full one sees on a wrong one (a single entry, a whole tile); the factor
 * hash tells factors apart by one bit and nothing else.
 */
#include <float.h>
#include <lapacke.h>
#include <math.h>

#include "tap.h"

#include "matrix.h"

#define BOUND(p) (30.0 * (double)(p)->n * DBL_EPSILON)

/* L of p->a by LAPACK in plain memory, its strict upper triangle zero. */
static double *factor_of(const struct chol_problem *p)
{
	double *l = chol_matrix_alloc(p);

	if (!l)
		tap_bail("out of memory");
	memcpy(l, p->a, p->npad * p->npad * sizeof(double));
	if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (int)p->npad, l, (int)p->npad))
		tap_bail("dpotrf failed");
	for (uint64_t j = 1; j < p->npad; j++)
		memset(l + j * p->npad, 0, j * sizeof(double));
	return l;
}

static double sampled(const struct chol_problem *p, const double *l, uint64_t seed)
{
	double r;

	if (chol_residual_sample(p, l, seed, &r))
		tap_bail("out of memory");
	return r;
}

/* Both checks on l: the full ratio and the sampled one. */
static void both(const struct chol_problem *p, const double *l, double *scratch, double *full,
		 double *sample)
{
	*full = chol_residual(p, l, scratch);
	*sample = sampled(p, l, 7);
}

int main(void)
{
	struct chol_problem p;
	double *l, *wrong, *scratch, full, sample;
	uint64_t state = 42, h;
	int missed = 0, far = 0, seen = 0;

	/* 250 in tiles of 100: padded to 300, as dao-cholesky pads. */
	if (chol_problem_init(&p, 250, 100, 1) || !(scratch = chol_matrix_alloc(&p)) ||
	    !(wrong = chol_matrix_alloc(&p)))
		tap_bail("out of memory");
	l = factor_of(&p);

	both(&p, l, scratch, &full, &sample);
	tap_ok(full < BOUND(&p) && sample < BOUND(&p) && sample > 0,
	       "a correct factor passes both checks (full %.3e, sampled %.3e, bound %.3e)", full,
	       sample, BOUND(&p));
	tap_ok(sample < 100 * full && full < 100 * sample,
	       "the sampled residual is within two orders of the full one");
	tap_ok(sampled(&p, l, 7) == sample, "the same seed, the same sampled residual");

	/* One wrong entry of L's n x n part, anywhere in the lower triangle:
	 * 1e-9 of the diagonal, far above the bound, far below anything a
	 * glance at the numbers would show. */
	for (int t = 0; t < 40; t++) {
		uint64_t i = state % p.n, k;

		state = state * 6364136223846793005ull + 1442695040888963407ull;
		k = (state >> 33) % (i + 1);
		memcpy(wrong, l, p.npad * p.npad * sizeof(double));
		wrong[k * p.npad + i] += 1e-9 * l[k * p.npad + k];
		both(&p, wrong, scratch, &full, &sample);
		seen += full > BOUND(&p);
		missed += full > BOUND(&p) && sample < BOUND(&p);
		far += full > BOUND(&p) && (sample > 100 * full || full > 100 * sample);
	}
	tap_ok(seen == 40 && !missed,
	       "a single wrong entry: the full check fails (%d of 40), the sampled one with it "
	       "(%d missed)",
	       seen, missed);
	tap_ok(!far, "a single wrong entry: the two residuals within two orders (%d of 40 not)",
	       far);

	/* A whole tile off by tiny noise, as a lost or stale copy of a tile
	 * whose values are close would be. */
	memcpy(wrong, l, p.npad * p.npad * sizeof(double));
	for (uint64_t c = 100; c < 200; c++)
		for (uint64_t r = 200; r < 250; r++)
			wrong[c * p.npad + r] *= 1.0 + 1e-9 * ((double)((r * 31 + c) % 7) - 3.0);
	both(&p, wrong, scratch, &full, &sample);
	tap_ok(full > BOUND(&p) && sample > BOUND(&p),
	       "a slightly wrong tile fails both checks (full %.3e, sampled %.3e)", full, sample);

	/* The hash: equal for a copy, different for one bit of one entry. */
	h = chol_factor_hash(&p, l);
	memcpy(wrong, l, p.npad * p.npad * sizeof(double));
	tap_ok(chol_factor_hash(&p, wrong) == h, "a copy of the factor has its hash");
	missed = 0;
	for (uint64_t j = 0; j < p.npad; j += 37)
		for (uint64_t i = j; i < p.npad; i += 53) {
			uint64_t w;

			memcpy(&w, &wrong[j * p.npad + i], sizeof(w));
			w ^= 1ull << ((i + j) % 64);
			memcpy(&wrong[j * p.npad + i], &w, sizeof(w));
			missed += chol_factor_hash(&p, wrong) == h;
			w ^= 1ull << ((i + j) % 64);
			memcpy(&wrong[j * p.npad + i], &w, sizeof(w));
		}
	tap_ok(!missed, "one flipped bit anywhere in the lower triangle changes the hash "
			"(%d unchanged)",
	       missed);

	free(l);
	free(wrong);
	free(scratch);
	chol_problem_free(&p);
	tap_plan_done();
	return tap_exit();
}
