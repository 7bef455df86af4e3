/* SPDX-License-Identifier: MIT */
/*
 * families_linalg.c - tiled dense linear algebra: Cholesky, LU, GEMM.
 *
 * Square tiles of `tile` x `tile` elements; every tile of the input matrices
 * starts on the host and stays live to the end (the result is the matrix).
 * Flops are the LAPACK counts of each tile kernel, leading term: potrf b^3/3,
 * getrf 2b^3/3, trsm b^3, syrk b^3, gemm 2b^3, so the totals are the
 * factorisations' n^3/3, 2n^3/3 and 2mnk. Kernel names carry the BLAS type
 * prefix (s for float32, d for float64).
 */
#include <stdlib.h>
#include <string.h>

#include "family.h"

static const char *kname(const struct tg_settings *s, const char *base)
{
	static const char *const table[][3] = {
		{ "potrf", "spotrf", "dpotrf" }, { "getrf", "sgetrf", "dgetrf" },
		{ "trsm", "strsm", "dtrsm" },	 { "syrk", "ssyrk", "dsyrk" },
		{ "gemm", "sgemm", "dgemm" },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(base, table[i][0]))
			return table[i][s->elem_bytes == 8 ? 2 : 1];
	abort();
}

/* Tile bytes and the b^3 unit of flops; 0 after an overflow. */
static void tile_sizes(struct tg_builder *b, const struct tg_settings *s, uint64_t *bytes,
		       uint64_t *cube)
{
	uint64_t t = tg_get(s, "tile");

	*bytes = tg_mul(b, tg_mul(b, t, t), s->elem_bytes);
	*cube = tg_mul(b, tg_mul(b, t, t), t);
}

/* Right-looking tiled Cholesky of the lower triangle, the order of the
 * sample trace: for each panel k, potrf, the trsm column, then for each row
 * i below, syrk on the diagonal tile and gemm on the tiles left of it. */
static void gen_cholesky(struct tg_builder *b, const struct tg_settings *s)
{
	uint64_t nt = tg_get(s, "tiles"), bytes, cube;
	uint32_t *a;

	tile_sizes(b, s, &bytes, &cube);
	a = calloc(nt * nt, sizeof(*a));
	if (!a) {
		tg_fail(b, "out of memory");
		return;
	}
	for (uint64_t i = 0; i < nt; i++)
		for (uint64_t j = 0; j <= i; j++)
			a[i * nt + j] = tg_buffer(b, bytes, TG_HOST | TG_KEEP, "input", "A%llu,%llu",
						  (unsigned long long)i, (unsigned long long)j);
#define A(i, j) a[(i) * nt + (j)]
	for (uint64_t k = 0; k < nt; k++) {
		tg_kernel(b, kname(s, "potrf"), cube / 3, NULL, NULL, TG_L(A(k, k)));
		for (uint64_t i = k + 1; i < nt; i++)
			tg_kernel(b, kname(s, "trsm"), cube, TG_L(A(k, k)), NULL, TG_L(A(i, k)));
		for (uint64_t i = k + 1; i < nt; i++) {
			tg_kernel(b, kname(s, "syrk"), cube, TG_L(A(i, k)), NULL, TG_L(A(i, i)));
			for (uint64_t j = k + 1; j < i; j++)
				tg_kernel(b, kname(s, "gemm"), tg_mul(b, 2, cube), TG_L(A(i, k), A(j, k)),
					  NULL, TG_L(A(i, j)));
		}
	}
#undef A
	free(a);
}

/* Right-looking tiled LU without pivoting (diagonally dominant matrices):
 * getrf on the diagonal tile, trsm along its row (U) and column (L), then
 * the gemm update of the trailing matrix, row by row. */
static void gen_lu(struct tg_builder *b, const struct tg_settings *s)
{
	uint64_t nt = tg_get(s, "tiles"), bytes, cube;
	uint32_t *a;

	tile_sizes(b, s, &bytes, &cube);
	a = calloc(nt * nt, sizeof(*a));
	if (!a) {
		tg_fail(b, "out of memory");
		return;
	}
	for (uint64_t i = 0; i < nt; i++)
		for (uint64_t j = 0; j < nt; j++)
			a[i * nt + j] = tg_buffer(b, bytes, TG_HOST | TG_KEEP, "input", "A%llu,%llu",
						  (unsigned long long)i, (unsigned long long)j);
#define A(i, j) a[(i) * nt + (j)]
	for (uint64_t k = 0; k < nt; k++) {
		tg_kernel(b, kname(s, "getrf"), tg_mul(b, 2, cube) / 3, NULL, NULL, TG_L(A(k, k)));
		for (uint64_t j = k + 1; j < nt; j++)
			tg_kernel(b, kname(s, "trsm"), cube, TG_L(A(k, k)), NULL, TG_L(A(k, j)));
		for (uint64_t i = k + 1; i < nt; i++)
			tg_kernel(b, kname(s, "trsm"), cube, TG_L(A(k, k)), NULL, TG_L(A(i, k)));
		for (uint64_t i = k + 1; i < nt; i++)
			for (uint64_t j = k + 1; j < nt; j++)
				tg_kernel(b, kname(s, "gemm"), tg_mul(b, 2, cube), TG_L(A(i, k), A(k, j)),
					  NULL, TG_L(A(i, j)));
	}
#undef A
	free(a);
}

/* C = A B in tiles, C-stationary: for each C tile, the k tiles of A's row
 * and B's column; the first product overwrites C (beta = 0). */
static void gen_gemm(struct tg_builder *b, const struct tg_settings *s)
{
	uint64_t mt = tg_get(s, "mt"), nt = tg_get(s, "nt"), kt = tg_get(s, "kt"), bytes, cube;
	uint32_t *a, *bb;

	tile_sizes(b, s, &bytes, &cube);
	a = calloc(mt * kt, sizeof(*a));
	bb = calloc(kt * nt, sizeof(*bb));
	if (!a || !bb) {
		tg_fail(b, "out of memory");
		goto out;
	}
	for (uint64_t i = 0; i < mt; i++)
		for (uint64_t l = 0; l < kt; l++)
			a[i * kt + l] = tg_buffer(b, bytes, TG_HOST | TG_KEEP, "input", "A%llu,%llu",
						  (unsigned long long)i, (unsigned long long)l);
	for (uint64_t l = 0; l < kt; l++)
		for (uint64_t j = 0; j < nt; j++)
			bb[l * nt + j] = tg_buffer(b, bytes, TG_HOST | TG_KEEP, "input", "B%llu,%llu",
						   (unsigned long long)l, (unsigned long long)j);
	for (uint64_t i = 0; i < mt; i++) {
		for (uint64_t j = 0; j < nt; j++) {
			uint32_t c = tg_buffer(b, bytes, TG_KEEP, "output", "C%llu,%llu",
					       (unsigned long long)i, (unsigned long long)j);

			for (uint64_t l = 0; l < kt; l++)
				tg_kernel(b, kname(s, "gemm"), tg_mul(b, 2, cube),
					  TG_L(a[i * kt + l], bb[l * nt + j]), l ? NULL : TG_L(c),
					  l ? TG_L(c) : NULL);
		}
	}
out:
	free(a);
	free(bb);
}

static const struct tg_param p_square[] = {
	{ "tiles", 16, 1, 1000, "tiles per side of the n x n matrix" },
	{ "tile", 4096, 1, 1u << 20, "elements per tile side" },
};

static const struct tg_param p_gemm[] = {
	{ "mt", 16, 1, 1000, "tiles of C per column (rows of tiles of A)" },
	{ "nt", 16, 1, 1000, "tiles of C per row (columns of tiles of B)" },
	{ "kt", 16, 1, 1000, "tiles along the inner dimension" },
	{ "tile", 4096, 1, 1u << 20, "elements per tile side" },
};

const struct tg_family tg_family_cholesky = {
	.name = "cholesky",
	.model = "tiled-cholesky",
	.summary = "right-looking tiled Cholesky of the lower triangle (potrf, trsm, syrk, gemm)",
	.default_elem_bytes = 8,
	.params = p_square,
	.nparams = 2,
	.generate = gen_cholesky,
};

const struct tg_family tg_family_lu = {
	.name = "lu",
	.model = "tiled-lu",
	.summary = "right-looking tiled LU without pivoting (getrf, trsm, gemm)",
	.default_elem_bytes = 8,
	.params = p_square,
	.nparams = 2,
	.generate = gen_lu,
};

const struct tg_family tg_family_gemm = {
	.name = "gemm",
	.model = "tiled-gemm",
	.summary = "C = A B in tiles, each C tile accumulated over the inner dimension",
	.default_elem_bytes = 8,
	.params = p_gemm,
	.nparams = 4,
	.generate = gen_gemm,
};
