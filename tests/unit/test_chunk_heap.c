/* SPDX-License-Identifier: MIT */
/*
 * test_chunk_heap.c - the chunk heap the CUDA backends carve staging and
 * managed memory from, on its own: chunks are mapped PROT_NONE, so any
 * byte the heap wrote into them (its bookkeeping must live outside: a CPU
 * touch of a managed page would migrate it) would stop the test. Chunks
 * grow by doubling up to the largest; a shared cap refuses what would pass
 * it; a refusing source changes nothing; random allocations stay aligned,
 * inside their chunks and apart, and free exactly once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "mem/chunk_heap.h"
#include "tap.h"

struct source {
	uint32_t obtained, released, refuse_from; /* refuse obtain number >= refuse_from (1-based) */
	uint64_t last_bytes;
};

static dao_status obtain(void *ctx, uint64_t bytes, uint64_t align, struct heap_chunk *c)
{
	struct source *s = ctx;
	void *p;

	if (s->refuse_from && s->obtained + 1 >= s->refuse_from)
		return DAO_ERR_NOMEM;
	p = mmap(NULL, bytes + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return DAO_ERR_NOMEM;
	c->raw = p;
	c->base = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	c->kind = ++s->obtained;
	c->cookie = bytes + align;
	s->last_bytes = bytes;
	return DAO_OK;
}

static void release(void *ctx, struct heap_chunk *c)
{
	struct source *s = ctx;

	munmap(c->raw, c->cookie);
	s->released++;
}

static void test_growth_and_cap(void)
{
	struct source s = { 0 };
	struct chunk_source src = { obtain, release, &s };
	struct heap_budget cap = { .limit = 7 << 20 };
	struct chunk_heap h;
	void *p[8];
	uint32_t kind;

	chunk_heap_init(&h, &src, 64 << 10, 1 << 20, 4 << 20, &cap);
	tap_ok(chunk_heap_alloc(&h, 1, &p[0], &kind) == DAO_OK && kind == 1,
	       "the first allocation takes the first chunk");
	TAP_IS_U64(s.last_bytes, 1 << 20, "of the smallest size");
	tap_ok(((uintptr_t)p[0] & ((64 << 10) - 1)) == 0, "aligned to the heap's unit");
	tap_ok(chunk_heap_alloc(&h, (1 << 20) - (64 << 10), &p[1], &kind) == DAO_OK && kind == 1,
	       "what is left of it fits in it");
	tap_ok(chunk_heap_alloc(&h, 64 << 10, &p[2], &kind) == DAO_OK && kind == 2,
	       "one unit more takes a second chunk");
	TAP_IS_U64(s.last_bytes, 1 << 20, "as large as all chunks so far (doubling)");
	tap_ok(chunk_heap_alloc(&h, 2 << 20, &p[3], &kind) == DAO_OK && kind == 3,
	       "a larger buffer, a third");
	TAP_IS_U64(s.last_bytes, 2 << 20, "doubling again");
	TAP_IS_U64(cap.used, 4 << 20, "the cap counts every chunk");
	tap_ok(chunk_heap_alloc(&h, 4 << 20, &p[4], &kind) == DAO_ERR_NOMEM,
	       "a chunk that would pass the cap is refused");
	TAP_IS_U64(s.obtained, 3, "without asking the source");
	tap_ok(chunk_heap_alloc(&h, 3 << 20, &p[4], &kind) == DAO_OK && kind == 4,
	       "what the cap still holds is given, in a chunk cut to it");
	TAP_IS_U64(s.last_bytes, 3 << 20, "of exactly what was left");
	tap_ok(chunk_heap_free(&h, p[1]) == 0, "a free of an allocation");
	tap_ok(chunk_heap_free(&h, p[1]) == -1, "a second free of it is refused");
	tap_ok(chunk_heap_free(&h, (char *)p[0] + 1) == -1, "and so is a pointer it never gave");
	tap_ok(chunk_heap_alloc(&h, 512 << 10, &p[1], &kind) == DAO_OK && kind == 1,
	       "freed space is given again, from the chunk it is in");
	chunk_heap_fini(&h);
	TAP_IS_U64(s.released, 4, "every chunk goes back at the end");
	TAP_IS_U64(cap.used, 0, "and the cap is free again");
}

static void test_refusals(void)
{
	struct source s = { .refuse_from = 2 };
	struct chunk_source src = { obtain, release, &s };
	struct chunk_heap h;
	void *p = NULL, *q = (void *)1;
	uint32_t kind;

	chunk_heap_init(&h, &src, 4096, 1 << 20, 1 << 20, NULL);
	tap_ok(chunk_heap_alloc(&h, 0, &q, &kind) == DAO_ERR_INVALID && q == (void *)1,
	       "zero bytes are refused, the result left alone");
	tap_ok(chunk_heap_alloc(&h, UINT64_MAX, &q, &kind) == DAO_ERR_OVERFLOW,
	       "a size that cannot be rounded is refused");
	tap_ok(chunk_heap_alloc(&h, 1 << 20, &p, &kind) == DAO_OK, "the first chunk, filled");
	tap_ok(chunk_heap_alloc(&h, 4096, &q, &kind) == DAO_ERR_NOMEM && q == (void *)1,
	       "the source refuses the second: out of memory, nothing given");
	TAP_IS_U64(h.nchunks, 1, "the heap is as it was");
	tap_ok(chunk_heap_free(&h, p) == 0 && chunk_heap_alloc(&h, 4096, &q, &kind) == DAO_OK,
	       "and goes on from there");
	chunk_heap_fini(&h);
	TAP_IS_U64(s.released, 1, "the one chunk goes back");
}

/* Random allocations and frees against a list of what is live: every
 * allocation aligned, inside a chunk, apart from every other live one. */
static void test_random(void)
{
	enum { LIVE = 64, ROUNDS = 4000 };
	struct source s = { 0 };
	struct chunk_source src = { obtain, release, &s };
	struct chunk_heap h;
	struct { char *p; uint64_t n; } live[LIVE] = { { 0 } };
	unsigned seed = 12345;
	int bad_align = 0, overlap = 0, outside = 0, failed = 0;

	chunk_heap_init(&h, &src, 256, 64 << 10, 1 << 20, NULL);
	for (int r = 0; r < ROUNDS; r++) {
		int i = rand_r(&seed) % LIVE;

		if (live[i].p) {
			failed += chunk_heap_free(&h, live[i].p) != 0;
			live[i].p = NULL;
			continue;
		}
		{
			uint64_t n = 1 + (uint64_t)(rand_r(&seed) % (200 << 10));
			uint32_t kind;
			void *p;

			if (chunk_heap_alloc(&h, n, &p, &kind) != DAO_OK) {
				failed++;
				continue;
			}
			live[i].p = p;
			live[i].n = n;
			bad_align += ((uintptr_t)p & 255) != 0;
			outside += kind < 1 || kind > h.nchunks ||
				   (char *)p < h.chunks[kind - 1].base ||
				   (char *)p + n > h.chunks[kind - 1].base + h.chunks[kind - 1].bytes;
			for (int j = 0; j < LIVE; j++)
				if (j != i && live[j].p && live[j].p < (char *)p + n &&
				    (char *)p < live[j].p + live[j].n)
					overlap++;
		}
	}
	tap_ok(!failed, "%d random allocations and frees all succeed", ROUNDS);
	tap_ok(!bad_align, "every allocation aligned");
	tap_ok(!outside, "every allocation inside the chunk it names");
	tap_ok(!overlap, "no two live allocations overlap");
	chunk_heap_fini(&h);
	TAP_IS_U64(s.released, s.obtained, "every chunk obtained is released");
}

int main(void)
{
	test_growth_and_cap();
	test_refusals();
	test_random();
	tap_plan_done();
	return tap_failed != 0;
}
