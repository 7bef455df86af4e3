/* SPDX-License-Identifier: MIT */
/*
 * largest.c - the largest of the lower bounds on time above a row in the
 * table: a lower bound itself, reported where the table puts it. Two
 * rows, for the fields daosim has always had: after the time-indexed
 * bound the larger of it and the simple one; last, the largest of all.
 */
#include "bound.h"

static dao_status largest_so_far(const struct bound_input *in, uint64_t *value, char *err,
				 size_t errlen)
{
	*value = bound_best_lower(in, BOUND_TIME_NS);
	return DAO_OK;
}

const struct bound bound_larger = {
	.name = "larger bound",
	.of = BOUND_TIME_NS,
	.side = BOUND_LOWER,
	.solve = largest_so_far,
	.json = "max_time_bound_ns",
	.json_ratio = "time_ratio_to_max_bound",
	.column = "time/max",
};

const struct bound bound_largest = {
	.name = "largest of all bounds",
	.of = BOUND_TIME_NS,
	.side = BOUND_LOWER,
	.solve = largest_so_far,
	.json = "largest_time_bound_ns",
	.json_ratio = "time_ratio_to_largest_bound",
	.column = "time/all",
};
