/* SPDX-License-Identifier: MIT */
/*
 * families_stencil.c - time-stepped stencil sweeps over a 2-D or 3-D grid
 * cut into tiles, with several coupled fields.
 *
 * Each of `arrays` fields is double-buffered (Jacobi style: step s reads
 * one copy and overwrites the other), and a read-only coefficient array
 * (material properties) shares the tiling. Per step, tile by tile in
 * row-major order, one kernel per field updates that field's tile from the
 * tile and its face neighbours (5-point in 2-D, 7-point in 3-D), the other
 * fields' values at the same tile, and the coefficients: per point one
 * multiply-add per stencil or coupling term, 2 (points + arrays - 1) flops.
 * The first copy and the coefficients start on the host; the second copy
 * (kind field) starts nowhere: first written in step 0. Everything stays live.
 */
#include <stdlib.h>

#include "family.h"

#define MAX_ARRAYS 8

static void gen_stencil(struct tg_builder *b, const struct tg_settings *s, unsigned dims)
{
	uint64_t n = tg_get(s, "n"), tile = tg_get(s, "tile"), na = tg_get(s, "arrays");
	uint64_t steps = tg_get(s, "steps");
	uint64_t per_side, ntiles, points, bytes, flops;
	unsigned stencil_points = 2 * dims + 1;
	uint32_t *field[2][MAX_ARRAYS] = { { 0 } }, *coef;

	if (n % tile) {
		tg_fail(b, "--n %llu is not a multiple of --tile %llu", (unsigned long long)n,
			(unsigned long long)tile);
		return;
	}
	per_side = n / tile;
	ntiles = per_side * per_side * (dims == 3 ? per_side : 1);
	points = tg_mul(b, tg_mul(b, tile, tile), dims == 3 ? tile : 1);
	bytes = tg_mul(b, points, s->elem_bytes);
	flops = tg_mul(b, points, 2 * (stencil_points + na - 1));
	if (ntiles > 1000000) {
		tg_fail(b, "%llu tiles: at most 1000000", (unsigned long long)ntiles);
		return;
	}
	if (ntiles * na * steps > TG_MAX_KERNELS) {
		tg_fail(b, "more than %u kernels", TG_MAX_KERNELS);
		return;
	}
	coef = calloc(ntiles, sizeof(*coef));
	for (unsigned c = 0; c < 2; c++)
		for (uint64_t f = 0; f < na; f++)
			field[c][f] = calloc(ntiles, sizeof(uint32_t));
	for (uint64_t t = 0; coef && t < ntiles; t++)
		coef[t] = tg_buffer(b, bytes, TG_HOST | TG_KEEP, "input", "coef%llu",
				    (unsigned long long)t);
	for (unsigned c = 0; c < 2; c++)
		for (uint64_t f = 0; f < na; f++)
			for (uint64_t t = 0; field[c][f] && t < ntiles; t++)
				field[c][f][t] = tg_buffer(b, bytes,
							   TG_KEEP | (c == 0 ? TG_HOST : 0),
							   c == 0 ? "input" : "field", "u%llu.%u.%llu",
							   (unsigned long long)f, c,
							   (unsigned long long)t);
	for (unsigned c = 0; c < 2; c++)
		for (uint64_t f = 0; f < na; f++)
			if (!field[c][f])
				tg_fail(b, "out of memory");
	if (!coef)
		tg_fail(b, "out of memory");

	for (uint64_t step = 0; step < steps && !b->failed; step++) {
		unsigned cur = step % 2, next = 1 - cur;

		tg_iteration(b, step);
		for (uint64_t t = 0; t < ntiles; t++) {
			uint64_t x = t % per_side, y = (t / per_side) % per_side;
			uint64_t z = dims == 3 ? t / (per_side * per_side) : 0;
			uint64_t plane = per_side * per_side;

			for (uint64_t f = 0; f < na; f++) {
				struct tg_list r;
				uint32_t *u = field[cur][f];

				tg_list_clear(&r);
				tg_list_add(b, &r, u[t]);
				if (x > 0)
					tg_list_add(b, &r, u[t - 1]);
				if (x + 1 < per_side)
					tg_list_add(b, &r, u[t + 1]);
				if (y > 0)
					tg_list_add(b, &r, u[t - per_side]);
				if (y + 1 < per_side)
					tg_list_add(b, &r, u[t + per_side]);
				if (dims == 3 && z > 0)
					tg_list_add(b, &r, u[t - plane]);
				if (dims == 3 && z + 1 < per_side)
					tg_list_add(b, &r, u[t + plane]);
				for (uint64_t g = 0; g < na; g++)
					if (g != f)
						tg_list_add(b, &r, field[cur][g][t]);
				tg_list_add(b, &r, coef[t]);
				tg_kernel(b, dims == 3 ? "stencil3d" : "stencil2d", flops, &r,
					  TG_L(field[next][f][t]), NULL);
			}
		}
	}
	free(coef);
	for (unsigned c = 0; c < 2; c++)
		for (uint64_t f = 0; f < na; f++)
			free(field[c][f]);
}

static void gen_stencil2d(struct tg_builder *b, const struct tg_settings *s)
{
	gen_stencil(b, s, 2);
}

static void gen_stencil3d(struct tg_builder *b, const struct tg_settings *s)
{
	gen_stencil(b, s, 3);
}

static const struct tg_param p_2d[] = {
	{ "n", 16384, 1, 1u << 24, "grid points per side" },
	{ "tile", 1024, 1, 1u << 24, "points per tile side (divides n)" },
	{ "arrays", 3, 1, MAX_ARRAYS, "coupled fields, each double-buffered" },
	{ "steps", 4, 1, 100000, "time steps (sweeps)" },
};

static const struct tg_param p_3d[] = {
	{ "n", 1024, 1, 1u << 16, "grid points per side" },
	{ "tile", 128, 1, 1u << 16, "points per tile side (divides n)" },
	{ "arrays", 3, 1, MAX_ARRAYS, "coupled fields, each double-buffered" },
	{ "steps", 4, 1, 100000, "time steps (sweeps)" },
};

const struct tg_family tg_family_stencil2d = {
	.name = "stencil2d",
	.model = "stencil2d",
	.summary = "5-point sweeps over an n x n grid of tiles, several coupled fields",
	.default_elem_bytes = 8,
	.params = p_2d,
	.nparams = 4,
	.generate = gen_stencil2d,
};

const struct tg_family tg_family_stencil3d = {
	.name = "stencil3d",
	.model = "stencil3d",
	.summary = "7-point sweeps over an n^3 grid of tiles, several coupled fields",
	.default_elem_bytes = 8,
	.params = p_3d,
	.nparams = 4,
	.generate = gen_stencil3d,
};
