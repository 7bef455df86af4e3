/* SPDX-License-Identifier: MIT */
/*
 * test_arena.c - the device memory manager on its own: TLSF placement,
 * splitting, coalescing, the exact-fit path under a full arena, a fit
 * found whenever a free range holds it (random, at three alignments), fences
 * carried by free space, and the paged mode's oldest-first reuse.
 */
#include <stdlib.h>
#include <string.h>

#include "mem/arena.h"
#include "tap.h"

static dao_fence fence_of(uint64_t compute, uint64_t h2d, uint64_t d2h)
{
	return (dao_fence){ { compute, h2d, d2h } };
}

static void test_contiguous(void)
{
	struct dao_arena a;
	struct dao_block *b[4];
	dao_fence f;

	tap_ok(arena_init(&a, 4096, 256, true), "contiguous arena of 4096 bytes");
	for (int i = 0; i < 4; i++)
		b[i] = arena_alloc(&a, 1024);
	tap_ok(b[0] && b[1] && b[2] && b[3], "four quarters fit exactly");
	tap_ok(b[0]->off != b[1]->off && b[1]->off != b[2]->off && b[2]->off != b[3]->off,
	       "at distinct offsets");
	TAP_IS_U64(a.used, 4096, "the whole arena is used");
	tap_ok(arena_alloc(&a, 256) == NULL, "nothing more fits");

	f = fence_of(3, 0, 7);
	arena_free(&a, b[1], &f);
	f = fence_of(0, 5, 2);
	arena_free(&a, b[2], &f);
	b[1] = arena_alloc(&a, 2048);
	tap_ok(b[1] != NULL, "two freed neighbours coalesce into room for 2048");
	tap_ok(b[1] && b[1]->fence.seq[0] == 3 && b[1]->fence.seq[1] == 5 &&
		       b[1]->fence.seq[2] == 7,
	       "and the new owner waits for both previous occupants");

	f = fence_of(0, 0, 0);
	arena_free(&a, b[0], &f);
	b[0] = arena_alloc(&a, 768);
	tap_ok(b[0] != NULL, "a smaller block splits a freed one");
	b[2] = arena_alloc(&a, 256);
	tap_ok(b[2] != NULL, "and its remainder is usable");
	TAP_IS_U64(a.used, 4096, "full again");
	TAP_IS_U64(a.peak, 4096, "peak is the whole arena");
	f = fence_of(0, 0, 0);
	for (int i = 0; i < 4; i++)
		if (b[i])
			arena_free(&a, b[i], &f);
	TAP_IS_U64(a.used, 0, "everything given back");
	b[0] = arena_alloc(&a, 4096);
	tap_ok(b[0] != NULL, "and coalesced into one block again");
	if (b[0])
		arena_free(&a, b[0], &f);
	arena_destroy(&a);
}

/* Equal blocks under a tight budget: the block that fits exactly must be
 * found although the O(1) search only looks in larger classes. */
static void test_exact_fit(void)
{
	struct dao_arena a;
	struct dao_block *b[3];
	dao_fence z = { { 0 } };
	uint64_t tile = 3 * 1000 * 256; /* not a power of two */

	tap_ok(arena_init(&a, 3 * tile, 256, true), "arena of exactly three tiles");
	for (int i = 0; i < 3; i++)
		b[i] = arena_alloc(&a, tile);
	tap_ok(b[0] && b[1] && b[2], "three tiles fit");
	for (int round = 0; round < 100; round++) {
		int i = round % 3;

		arena_free(&a, b[i], &z);
		b[i] = arena_alloc(&a, tile);
		if (!b[i])
			break;
	}
	tap_ok(b[0] && b[1] && b[2], "a freed tile's place is always found again");
	for (int i = 0; i < 3; i++)
		if (b[i])
			arena_free(&a, b[i], &z);
	arena_destroy(&a);
}

/* The largest gap between the blocks in use (n of them, in an arena of
 * `size` bytes): the largest block a contiguous arena must find. */
static uint64_t largest_gap(struct dao_block **in_use, int n, uint64_t size)
{
	uint64_t gap = 0, end = 0;

	for (;;) {
		struct dao_block *next = NULL;

		for (int i = 0; i < n; i++)
			if (in_use[i]->off >= end && (!next || in_use[i]->off < next->off))
				next = in_use[i];
		if (!next)
			return size - end > gap ? size - end : gap;
		if (next->off - end > gap)
			gap = next->off - end;
		end = next->off + next->size;
	}
}

/* Whenever a free range holds the size asked for, arena_alloc finds one,
 * at every size: with an alignment of 1 (daosim's device files) the
 * smallest classes are one byte wide, and 16-31 bytes were never searched
 * above their own class. Random allocations and frees, each checked
 * against the largest gap between the blocks in use. */
static void test_always_fits(void)
{
	static const uint64_t aligns[] = { 1, 8, 256 };
	unsigned seed = 2611;
	int small_ok = 1, found = 1, disjoint = 1;

	for (size_t k = 0; k < sizeof(aligns) / sizeof(aligns[0]); k++) {
		uint64_t al = aligns[k], size = 4096 * al;
		struct dao_block *in_use[64];
		dao_fence z = { { 0 } };
		struct dao_arena a;
		int n = 0;

		if (!arena_init(&a, size, al, true))
			tap_bail("arena_init");
		for (uint64_t s = al; s <= 300 * al; s += al) {
			struct dao_block *b = arena_alloc(&a, s);

			small_ok &= b != NULL;
			if (b)
				arena_free(&a, b, &z);
		}
		for (int step = 0; step < 20000; step++) {
			if (n == 64 || (n && rand_r(&seed) % 2)) {
				int i = rand_r(&seed) % n;

				arena_free(&a, in_use[i], &z);
				in_use[i] = in_use[--n];
			} else {
				/* Mostly small sizes, now and then a large one. */
				uint64_t s = al * (1 + (rand_r(&seed) % 4 ? rand_r(&seed) % 40
									  : rand_r(&seed) % 600));
				bool fits = largest_gap(in_use, n, size) >= s;
				struct dao_block *b = arena_alloc(&a, s);

				found &= !fits || b;
				if (b) {
					for (int i = 0; i < n; i++)
						disjoint &= b->off + b->size <= in_use[i]->off ||
							    in_use[i]->off + in_use[i]->size <= b->off;
					in_use[n++] = b;
				}
			}
		}
		while (n)
			arena_free(&a, in_use[--n], &z);
		arena_destroy(&a);
	}
	tap_ok(small_ok,
	       "an empty contiguous arena gives every size up to 300 units, at alignments 1, 8, "
	       "256");
	tap_ok(found, "random allocations: a free range that holds the size is always found");
	tap_ok(disjoint, "random allocations: blocks in use never overlap");
}

static void test_paged(void)
{
	struct dao_arena a;
	struct dao_block *x, *y, *z;
	dao_fence f;

	tap_ok(arena_init(&a, 1000, 1, false), "paged arena of 1000 bytes");
	x = arena_alloc(&a, 600);
	y = arena_alloc(&a, 400);
	tap_ok(x && y, "capacity is all that counts");
	tap_ok(x && x->fence.seq[0] == 0 && x->fence.seq[2] == 0, "never-used space is free at once");
	tap_ok(arena_alloc(&a, 1) == NULL, "and it is enforced");
	f = fence_of(0, 0, 4);
	arena_free(&a, x, &f);
	f = fence_of(0, 0, 9);
	arena_free(&a, y, &f);
	z = arena_alloc(&a, 500);
	tap_ok(z && z->fence.seq[2] == 4, "reuse takes the space given back first, and its fence");
	x = arena_alloc(&a, 300);
	tap_ok(x && x->fence.seq[2] == 9, "spanning two give-backs waits for both");
	TAP_IS_U64(a.used, 800, "used bytes add up");
	f = fence_of(0, 0, 0);
	if (z)
		arena_free(&a, z, &f);
	if (x)
		arena_free(&a, x, &f);
	TAP_IS_U64(a.used, 0, "everything given back");
	arena_destroy(&a);
}

int main(void)
{
	test_contiguous();
	test_exact_fit();
	test_always_fits();
	test_paged();
	tap_plan_done();
	return tap_exit();
}
