/* SPDX-License-Identifier: MIT */
/*
 * bounds.c - the table of daosim's bounds (bound.h): the order they are
 * solved and reported in. A row may use the ones above it (the simple
 * time bound the byte bounds and compute; the largest so far all lower
 * bounds on time above it), and --json prints their fields in this order.
 */
#include "bound.h"

const struct bound *const bound_table[] = {
	&bound_compulsory,
	&bound_lp_h2d,
	&bound_lp_d2h,
	&bound_compute,
	&bound_time_simple,
	&bound_time_indexed,
	&bound_larger,
	&bound_segment_cut,
	&bound_segment_lp,
	&bound_largest,
	&bound_plan,
};

const size_t bound_count = sizeof(bound_table) / sizeof(bound_table[0]);

_Static_assert(sizeof(bound_table) / sizeof(bound_table[0]) <= BOUND_TABLE_MAX,
	       "more bounds than BOUND_TABLE_MAX (bound.h)");

size_t bound_index(const struct bound *b)
{
	size_t i = 0;

	while (i < bound_count && bound_table[i] != b)
		i++;
	return i;
}

uint64_t bound_best_lower(const struct bound_input *in, enum bound_of of)
{
	uint64_t best = 0;

	for (size_t i = 0; i < in->nbefore; i++) {
		const struct bound *b = bound_table[i];

		if (b->of == of && b->side == BOUND_LOWER && in->before[i].known &&
		    in->before[i].value > best)
			best = in->before[i].value;
	}
	return best;
}
