/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "mem/arena.h"

static inline int msb64(uint64_t x)
{
	return 63 - __builtin_clzll(x);
}

/* Bin of a block of `size` bytes: first level by magnitude, second level by
 * the next ARENA_SL_BITS bits. */
static void bin_of(uint64_t size, unsigned *fl, unsigned *sl)
{
	int m = msb64(size);

	if (m < (int)ARENA_SL_BITS) {
		*fl = 0;
		*sl = (unsigned)size;
	} else {
		*fl = (unsigned)(m - ARENA_SL_BITS + 1);
		*sl = (unsigned)((size >> (m - ARENA_SL_BITS)) & (ARENA_SL - 1));
	}
}

static void bin_insert(struct dao_arena *a, struct dao_block *b)
{
	unsigned fl, sl;

	bin_of(b->size, &fl, &sl);
	b->free = true;
	b->prev_free = NULL;
	b->next_free = a->bins[fl][sl];
	if (b->next_free)
		b->next_free->prev_free = b;
	a->bins[fl][sl] = b;
	a->fl_map |= 1ull << fl;
	a->sl_map[fl] |= 1u << sl;
}

static void bin_remove(struct dao_arena *a, struct dao_block *b)
{
	unsigned fl, sl;

	bin_of(b->size, &fl, &sl);
	if (b->prev_free)
		b->prev_free->next_free = b->next_free;
	else
		a->bins[fl][sl] = b->next_free;
	if (b->next_free)
		b->next_free->prev_free = b->prev_free;
	if (!a->bins[fl][sl]) {
		a->sl_map[fl] &= ~(1u << sl);
		if (!a->sl_map[fl])
			a->fl_map &= ~(1ull << fl);
	}
	b->free = false;
	b->prev_free = b->next_free = NULL;
}

static struct dao_block *desc_new(struct dao_arena *a)
{
	struct dao_block *b = a->spare;

	if (b)
		a->spare = b->next_free;
	else
		b = fault_malloc(sizeof(*b));
	if (b)
		memset(b, 0, sizeof(*b));
	return b;
}

static void desc_put(struct dao_arena *a, struct dao_block *b)
{
	b->next_free = a->spare;
	a->spare = b;
}

uint64_t arena_round(const struct dao_arena *a, uint64_t size)
{
	return (size + a->align - 1) & ~(a->align - 1);
}

bool arena_init(struct dao_arena *a, uint64_t size, uint64_t align, bool contiguous)
{
	struct dao_block *b;

	memset(a, 0, sizeof(*a));
	a->align = align ? align : 1;
	a->size = size & ~(a->align - 1);
	a->paged = !contiguous;
	if (a->paged) {
		/* Never-used space is free at once. */
		a->freed_cap = 64;
		a->freed = fault_calloc(a->freed_cap, sizeof(*a->freed));
		if (!a->freed)
			return false;
		if (a->size) {
			a->freed[0].bytes = a->size;
			a->freed_n = 1;
		}
		return true;
	}
	if (!a->size)
		return true;
	b = desc_new(a);
	if (!b)
		return false;
	b->off = 0;
	b->size = a->size;
	bin_insert(a, b);
	return true;
}

void arena_destroy(struct dao_arena *a)
{
	struct dao_block *b, *n;
	unsigned fl, sl;

	for (fl = 0; fl < ARENA_FL; fl++)
		for (sl = 0; sl < ARENA_SL; sl++)
			for (b = a->bins[fl][sl]; b; b = n) {
				n = b->next_free;
				free(b);
			}
	for (b = a->spare; b; b = n) {
		n = b->next_free;
		free(b);
	}
	free(a->freed);
	memset(a, 0, sizeof(*a));
}

/* First block of a bin at or above (fl, sl), or NULL. */
static struct dao_block *search_from(struct dao_arena *a, unsigned fl, unsigned sl)
{
	uint32_t slm = sl < ARENA_SL ? a->sl_map[fl] & (~0u << sl) : 0;
	uint64_t flm;

	if (!slm) {
		flm = fl + 1 < ARENA_FL ? a->fl_map & (~0ull << (fl + 1)) : 0;
		if (!flm)
			return NULL;
		fl = (unsigned)__builtin_ctzll(flm);
		slm = a->sl_map[fl];
	}
	return a->bins[fl][__builtin_ctz(slm)];
}

struct dao_block *arena_alloc(struct dao_arena *a, uint64_t size)
{
	struct dao_block *b = NULL, *rest;
	unsigned fl, sl;
	int m;

	a->nomem = false;
	if (!size || size > a->size - a->used)
		return NULL;
	if (a->paged) {
		uint64_t need = size;

		b = desc_new(a);
		if (!b) {
			a->nomem = true;
			return NULL;
		}
		b->size = size;
		/* Take the space given back longest ago: its previous users
		 * are the most likely to be done with it. */
		while (need) {
			struct dao_freed *f = &a->freed[a->freed_head];
			uint64_t take = f->bytes < need ? f->bytes : need;

			dao_fence_join(&b->fence, &f->fence);
			f->bytes -= take;
			need -= take;
			if (!f->bytes) {
				a->freed_head = (a->freed_head + 1) % a->freed_cap;
				a->freed_n--;
			}
		}
		a->used += size;
		if (a->used > a->peak)
			a->peak = a->used;
		return b;
	}
	/* Every block of the next bin up is large enough: O(1). Rounding
	 * size up to its bin's width (one byte from 16 to 31, where the
	 * round-up adds nothing) may only fail by overflowing. */
	m = msb64(size);
	if (m >= (int)ARENA_SL_BITS && size + (1ull << (m - ARENA_SL_BITS)) - 1 >= size) {
		bin_of(size + (1ull << (m - ARENA_SL_BITS)) - 1, &fl, &sl);
		b = search_from(a, fl, sl);
	} else if (m < (int)ARENA_SL_BITS) {
		bin_of(size, &fl, &sl);
		b = search_from(a, fl, sl);
	}
	if (!b) {
		/* The bin of `size` itself may hold a block that fits exactly:
		 * under a tight budget that block is often the only one left,
		 * so look through that one bin. */
		bin_of(size, &fl, &sl);
		for (b = a->bins[fl][sl]; b && b->size < size; b = b->next_free)
			;
	}
	if (!b)
		return NULL;
	bin_remove(a, b);
	if (b->size - size >= a->align) {
		rest = desc_new(a);
		if (rest) {
			rest->off = b->off + size;
			rest->size = b->size - size;
			rest->fence = b->fence;
			rest->prev_phys = b;
			rest->next_phys = b->next_phys;
			if (rest->next_phys)
				rest->next_phys->prev_phys = rest;
			b->next_phys = rest;
			b->size = size;
			bin_insert(a, rest);
		}
	}
	a->used += b->size;
	if (a->used > a->peak)
		a->peak = a->used;
	return b;
}

void arena_free(struct dao_arena *a, struct dao_block *b, const dao_fence *fence)
{
	struct dao_block *n;

	a->used -= b->size;
	if (a->paged) {
		if (a->freed_n == a->freed_cap) {
			uint32_t cap = a->freed_cap * 2;
			struct dao_freed *ring = fault_malloc(cap * sizeof(*ring));

			if (!ring) {
				/* Merge into the newest entry: later, never wrong. */
				struct dao_freed *last =
					&a->freed[(a->freed_head + a->freed_n - 1) % a->freed_cap];

				last->bytes += b->size;
				dao_fence_join(&last->fence, fence);
				desc_put(a, b);
				return;
			}
			for (uint32_t i = 0; i < a->freed_n; i++)
				ring[i] = a->freed[(a->freed_head + i) % a->freed_cap];
			free(a->freed);
			a->freed = ring;
			a->freed_head = 0;
			a->freed_cap = cap;
		}
		a->freed[(a->freed_head + a->freed_n) % a->freed_cap] =
			(struct dao_freed){ .bytes = b->size, .fence = *fence };
		a->freed_n++;
		desc_put(a, b);
		return;
	}
	b->fence = *fence;
	n = b->prev_phys;
	if (n && n->free) {
		bin_remove(a, n);
		n->size += b->size;
		dao_fence_join(&n->fence, &b->fence);
		n->next_phys = b->next_phys;
		if (n->next_phys)
			n->next_phys->prev_phys = n;
		desc_put(a, b);
		b = n;
	}
	n = b->next_phys;
	if (n && n->free) {
		bin_remove(a, n);
		b->size += n->size;
		dao_fence_join(&b->fence, &n->fence);
		b->next_phys = n->next_phys;
		if (b->next_phys)
			b->next_phys->prev_phys = b;
		desc_put(a, n);
	}
	bin_insert(a, b);
}
