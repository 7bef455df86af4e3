/* SPDX-License-Identifier: MIT */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"

/* splitmix64: tiny, fast, and the same sequence on every platform, so a
 * seed names one matrix everywhere. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static double next_unit(uint64_t *state)
{
	return (double)(next_random(state) >> 11) * 0x1.0p-52 - 1.0;
}

double *chol_matrix_alloc(const struct chol_problem *p)
{
	return calloc(p->npad * p->npad, sizeof(double));
}

int chol_problem_init(struct chol_problem *p, uint64_t n, uint64_t tile, uint64_t seed)
{
	uint64_t state = seed;

	p->n = n;
	p->tile = tile;
	p->nt = (n + tile - 1) / tile;
	p->npad = p->nt * tile;
	p->a = chol_matrix_alloc(p);
	if (!p->a)
		return -1;
	/*
	 * Off-diagonal entries in [-1, 1) and n + 1 on the diagonal: strictly
	 * diagonally dominant, hence positive definite, whatever the seed.
	 */
	for (uint64_t j = 0; j < n; j++) {
		double *col = p->a + j * p->npad;

		col[j] = (double)n + 1.0;
		for (uint64_t i = j + 1; i < n; i++)
			col[i] = next_unit(&state);
	}
	/* The identity in the padding keeps every tile the same size and
	 * leaves the factor of the n x n part unchanged. */
	for (uint64_t j = n; j < p->npad; j++)
		p->a[j * p->npad + j] = 1.0;
	return 0;
}

void chol_problem_free(struct chol_problem *p)
{
	free(p->a);
	p->a = NULL;
}

void chol_tile_get(const struct chol_problem *p, const double *m, uint64_t i, uint64_t j,
		   double *t)
{
	const double *src = m + j * p->tile * p->npad + i * p->tile;

	for (uint64_t c = 0; c < p->tile; c++)
		memcpy(t + c * p->tile, src + c * p->npad, p->tile * sizeof(double));
}

void chol_tile_put(const struct chol_problem *p, double *m, uint64_t i, uint64_t j,
		   const double *t)
{
	double *dst = m + j * p->tile * p->npad + i * p->tile;

	for (uint64_t c = 0; c < p->tile; c++)
		memcpy(dst + c * p->npad, t + c * p->tile, p->tile * sizeof(double));
}

/* Frobenius norm of a symmetric matrix from its lower triangle. */
static double sym_norm(const double *m, uint64_t n, uint64_t ld)
{
	double diag = 0.0, off = 0.0;

	for (uint64_t j = 0; j < n; j++) {
		const double *col = m + j * ld;

		diag += col[j] * col[j];
		for (uint64_t i = j + 1; i < n; i++)
			off += col[i] * col[i];
	}
	return sqrt(diag + 2.0 * off);
}

double chol_residual(const struct chol_problem *p, const double *l, double *scratch)
{
	memcpy(scratch, p->a, p->npad * p->npad * sizeof(double));
	/* scratch (lower) = A - L L^T; rows and columns past n are padding. */
	cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int)p->n, (int)p->n, -1.0, l,
		    (int)p->npad, 1.0, scratch, (int)p->npad);
	return sym_norm(scratch, p->n, p->npad) / sym_norm(p->a, p->n, p->npad);
}

int chol_residual_sample(const struct chol_problem *p, const double *l, uint64_t seed,
			 double *ratio)
{
	int n = (int)p->n, ld = (int)p->npad;
	double *x = malloc(3 * p->n * sizeof(double));
	double *ax, *llx, sum = 0.0;
	uint64_t state = seed ^ 0x5a3ce1c4a11e9f21ull; /* not the matrix's sequence */

	if (!x)
		return -1;
	ax = x + p->n;
	llx = ax + p->n;
	for (uint64_t i = 0; i < p->n; i++)
		x[i] = (next_random(&state) >> 63) ? 1.0 : -1.0;
	/* A x from A's lower triangle; L (L^T x) by two triangular products. */
	cblas_dsymv(CblasColMajor, CblasLower, n, 1.0, p->a, ld, x, 1, 0.0, ax, 1);
	memcpy(llx, x, p->n * sizeof(double));
	cblas_dtrmv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, n, l, ld, llx, 1);
	cblas_dtrmv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, l, ld, llx, 1);
	for (uint64_t i = 0; i < p->n; i++)
		sum += (ax[i] - llx[i]) * (ax[i] - llx[i]);
	*ratio = sqrt(sum) / sym_norm(p->a, p->n, p->npad);
	free(x);
	return 0;
}

uint64_t chol_factor_hash(const struct chol_problem *p, const double *l)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint64_t j = 0; j < p->npad; j++) {
		const double *col = l + j * p->npad;

		for (uint64_t i = j; i < p->npad; i++) {
			uint64_t w;

			memcpy(&w, &col[i], sizeof(w));
			h = (h ^ w) * 0x100000001b3ull;
		}
	}
	return h;
}
