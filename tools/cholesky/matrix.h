/* SPDX-License-Identifier: MIT */
/*
 * matrix.h - the test problem of dao-cholesky in plain memory: a random
 * symmetric positive definite matrix, its tiles, and the residual check.
 *
 * Matrices are column-major with leading dimension npad. Only the lower
 * triangle is meaningful; the rest is zero.
 */
#ifndef CHOL_MATRIX_H
#define CHOL_MATRIX_H

#include <stdint.h>

struct chol_problem {
	uint64_t n;    /* order asked for */
	uint64_t tile; /* tile order */
	uint64_t nt;   /* tiles per side */
	uint64_t npad; /* nt * tile: n rounded up; the padding is the identity */
	double *a;     /* the reference A, npad x npad */
};

/* 0, or -1 with errno set when memory runs out. */
int chol_problem_init(struct chol_problem *p, uint64_t n, uint64_t tile, uint64_t seed);
void chol_problem_free(struct chol_problem *p);

/* A zeroed npad x npad matrix for a factor read back; NULL when memory runs out. */
double *chol_matrix_alloc(const struct chol_problem *p);

static inline uint64_t chol_tile_bytes(const struct chol_problem *p)
{
	return p->tile * p->tile * sizeof(double);
}

/* Tiles of the lower triangle, the ones libdao holds. */
static inline uint64_t chol_tile_count(const struct chol_problem *p)
{
	return p->nt * (p->nt + 1) / 2;
}

/* Copy tile (i, j) of m into the contiguous column-major tile t, or back. */
void chol_tile_get(const struct chol_problem *p, const double *m, uint64_t i, uint64_t j,
		   double *t);
void chol_tile_put(const struct chol_problem *p, double *m, uint64_t i, uint64_t j,
		   const double *t);

/*
 * ||A - L L^T||_F / ||A||_F over the n x n matrix asked for, L the lower
 * triangle of l (its strict upper triangle must be zero). Needs a scratch
 * matrix from chol_matrix_alloc.
 */
double chol_residual(const struct chol_problem *p, const double *l, double *scratch);

/*
 * The same ratio in O(n^2) time and O(n) memory: ||(A - L L^T) x||_2 /
 * ||A||_F for a vector x of independent random signs drawn from seed. For
 * such x, E ||R x||_2^2 = ||R||_F^2 (E x x^T = I): it estimates the full
 * residual and is held to the same bound. Every entry of L takes part: a
 * single wrong entry always shows (its row of R x is that error, signed),
 * and a wrong row of R is missed only if its signed sum cancels exactly,
 * for at most half of all sign vectors and, for errors that are not exact
 * copies of each other, practically never. It cannot see errors below the
 * bound, nor say which entry is wrong. 0, or -1 when memory runs out.
 */
int chol_residual_sample(const struct chol_problem *p, const double *l, uint64_t seed,
			 double *ratio);

/*
 * FNV-1a over the 64-bit words of l's lower triangle (npad x npad, column
 * by column, the padding's identity included): equal factors have equal
 * hashes, so factors of different processes can be compared by it.
 */
uint64_t chol_factor_hash(const struct chol_problem *p, const double *l);

#endif /* CHOL_MATRIX_H */
