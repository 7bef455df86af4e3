/* SPDX-License-Identifier: MIT */
/* ptr_set.c - a set of pointers (ptr_set.h). */
#include <stdlib.h>

#include "base/ptr_set.h"
#include "base/report.h"

#define TOMB ((void *)1)

static uint32_t slot_of(const void *p, uint32_t cap)
{
	return (uint32_t)(((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

bool cm_set_has(const struct cm_ptr_set *s, const void *p)
{
	if (!s->cap || !p || p == TOMB)
		return false;
	for (uint32_t i = slot_of(p, s->cap);; i = (i + 1) & (s->cap - 1)) {
		if (!s->slot[i])
			return false;
		if (s->slot[i] == p)
			return true;
	}
}

void cm_set_add(struct cm_ptr_set *s, void *p)
{
	if ((s->used + 1) * 2 > s->cap) {
		struct cm_ptr_set n = { calloc(s->cap ? s->cap * 2 : 64, sizeof(void *)),
					s->cap ? s->cap * 2 : 64, 0 };

		if (!n.slot)
			cm_fail("out of memory");
		for (uint32_t i = 0; i < s->cap; i++)
			if (s->slot[i] && s->slot[i] != TOMB)
				cm_set_add(&n, s->slot[i]);
		free(s->slot);
		*s = n;
	}
	for (uint32_t i = slot_of(p, s->cap);; i = (i + 1) & (s->cap - 1))
		if (!s->slot[i]) {
			s->slot[i] = p;
			s->used++;
			return;
		}
}

void cm_set_del(struct cm_ptr_set *s, const void *p)
{
	for (uint32_t i = slot_of(p, s->cap);; i = (i + 1) & (s->cap - 1))
		if (s->slot[i] == p) {
			s->slot[i] = TOMB;
			return;
		}
}
