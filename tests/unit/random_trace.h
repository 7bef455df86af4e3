/* SPDX-License-Identifier: MIT */
/*
 * random_trace.h - random dao-traces for daosim's bound tests
 * (test_lp_bound, test_segment_cut): nb buffers, nk kernels of 1..3
 * distinct operands, at most one operand per mode list.
 */
#ifndef DAO_TEST_RANDOM_TRACE_H
#define DAO_TEST_RANDOM_TRACE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

/* What varies between the tests' traces. A buffer's size is unit * (1 +
 * rand % sizes). With flops, each kernel gets 0..39,999 flops, else 0; with
 * frees, about one kernel in 16 is followed by the free of a buffer while
 * more than four are live (freed buffers are never named again). */
struct random_trace_shape {
	int unit, sizes;
	bool flops, frees;
};

static inline char *random_trace_shaped(unsigned *seed, int nb, int nk,
					const struct random_trace_shape *shape)
{
	size_t cap = 64 + (size_t)nb * 32 + (size_t)nk * 128, n = 0;
	char *s = malloc(cap);
	int *freed = calloc((size_t)nb + 1, sizeof(int));

	if (!s || !freed)
		tap_bail("random trace: out of memory");
	n += (size_t)snprintf(s + n, cap - n, "dao-trace 1\n");
	for (int b = 1; b <= nb; b++)
		n += (size_t)snprintf(s + n, cap - n, "b %d %d\n", b,
				      shape->unit * (1 + rand_r(seed) % shape->sizes));
	for (int k = 0; k < nk; k++) {
		int nops = 1 + rand_r(seed) % 3, ids[3];
		const char *lists[3] = { "-", "-", "-" };
		char buf[3][16];

		for (int i = 0; i < nops; i++) {
			int dup, tries = 0;

			do {
				ids[i] = 1 + rand_r(seed) % nb;
				dup = freed[ids[i]];
				for (int j = 0; j < i; j++)
					dup |= ids[j] == ids[i];
			} while (dup && ++tries < 100);
			if (dup)
				tap_bail("random trace: no buffer left");
		}
		for (int i = 0; i < nops; i++) {
			int mo = rand_r(seed) % 3;

			while (strcmp(lists[mo], "-") != 0)
				mo = (mo + 1) % 3;
			snprintf(buf[mo], sizeof(buf[mo]), "%d", ids[i]);
			lists[mo] = buf[mo];
		}
		n += (size_t)snprintf(s + n, cap - n, "k k%d %d r=%s w=%s rw=%s\n", k,
				      shape->flops ? rand_r(seed) % 40000 : 0, lists[0], lists[1],
				      lists[2]);
		if (shape->frees && rand_r(seed) % 16 == 0 && nb > 4) {
			int id = 1 + rand_r(seed) % nb, live = 0;

			for (int b = 1; b <= nb; b++)
				live += !freed[b];
			if (!freed[id] && live > 4) {
				freed[id] = 1;
				n += (size_t)snprintf(s + n, cap - n, "f %d\n", id);
			}
		}
	}
	free(freed);
	return s;
}

#endif /* DAO_TEST_RANDOM_TRACE_H */
