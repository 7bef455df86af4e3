/* SPDX-License-Identifier: MIT */
/*
 * simple.c - the bounds that need no solver (Documentation/daosim.md,
 * "Lower bounds"): the compulsory bytes (the buffers whose first access
 * reads data that starts on the host), the compute time (every kernel's
 * modeled time, one after the other), and the simple time bound from the
 * best byte bounds above it in the table.
 */
#include "bound.h"
#include "simple.h"

uint64_t simple_time_bound_ns(const struct dao_sim_model *m, uint64_t compute_ns,
			      uint64_t h2d_bytes, uint64_t d2h_bytes)
{
	uint64_t t = compute_ns;
	uint64_t h = model_copy_ns(m->h2d_bytes_per_s, h2d_bytes);
	uint64_t d = model_copy_ns(m->d2h_bytes_per_s, d2h_bytes);

	if (h > t)
		t = h;
	if (d > t)
		t = d;
	return t;
}

static dao_status compulsory(const struct bound_input *in, uint64_t *value, char *err,
			     size_t errlen)
{
	*value = in->profile->compulsory_bytes;
	return DAO_OK;
}

static dao_status compute(const struct bound_input *in, uint64_t *value, char *err,
			  size_t errlen)
{
	*value = profile_compute_ns(in->profile, in->model);
	return DAO_OK;
}

/* The compute time is the best time bound above it, the byte LPs the best
 * byte bounds (the h2d LP counts the compulsory bytes too). */
static dao_status time_simple(const struct bound_input *in, uint64_t *value, char *err,
			      size_t errlen)
{
	*value = simple_time_bound_ns(in->model, bound_best_lower(in, BOUND_TIME_NS),
				      bound_best_lower(in, BOUND_H2D_BYTES),
				      bound_best_lower(in, BOUND_D2H_BYTES));
	return DAO_OK;
}

const struct bound bound_compulsory = {
	.name = "compulsory",
	.of = BOUND_H2D_BYTES,
	.side = BOUND_LOWER,
	.solve = compulsory,
	.json = "compulsory_bytes",
	.text_line = "bounds: ",
};

const struct bound bound_compute = {
	.name = "compute",
	.of = BOUND_TIME_NS,
	.side = BOUND_LOWER,
	.solve = compute,
	.json = "compute_ns",
};

const struct bound bound_time_simple = {
	.name = "time bound",
	.of = BOUND_TIME_NS,
	.side = BOUND_LOWER,
	.solve = time_simple,
	.json = "time_bound_ns",
	.json_ratio = "time_ratio_to_bound",
	.column = "time/bnd",
};
