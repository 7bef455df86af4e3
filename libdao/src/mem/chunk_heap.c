/* SPDX-License-Identifier: MIT */
/* chunk_heap.c - chunks kept until the heap goes, carved with the arena
 * (chunk_heap.h says why). */
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "mem/chunk_heap.h"

void chunk_heap_init(struct chunk_heap *h, const struct chunk_source *src, uint64_t align,
		     uint64_t min_chunk, uint64_t max_chunk, struct heap_budget *budget)
{
	memset(h, 0, sizeof(*h));
	h->src = *src;
	h->align = align;
	h->min_chunk = min_chunk;
	h->max_chunk = max_chunk;
	h->budget = budget;
}

void chunk_heap_fini(struct chunk_heap *h)
{
	static const dao_fence none;

	/* Allocations still live go with their chunks: their blocks back
	 * into the arenas, so that arena_destroy frees every descriptor. */
	for (uint32_t i = 0; i < h->map_cap; i++)
		if (h->map[i].p)
			arena_free(&h->chunks[h->map[i].chunk].arena, h->map[i].blk, &none);
	for (uint32_t i = 0; i < h->nchunks; i++) {
		struct heap_chunk *c = &h->chunks[i];

		arena_destroy(&c->arena);
		h->src.release(h->src.ctx, c);
		if (h->budget)
			h->budget->used -= c->bytes;
	}
	free(h->chunks);
	free(h->map);
	memset(h, 0, sizeof(*h));
}

/* Home slot of address p in a map of cap (a power of two) entries. */
static uint32_t home_of(const char *p, uint32_t cap)
{
	uint64_t k = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(k >> 32) & (cap - 1);
}

static struct heap_entry *lookup(struct chunk_heap *h, const char *p)
{
	if (!h->map_cap || !p)
		return NULL;
	for (uint32_t i = home_of(p, h->map_cap);; i = (i + 1) & (h->map_cap - 1)) {
		if (!h->map[i].p)
			return NULL;
		if (h->map[i].p == p)
			return &h->map[i];
	}
}

static void put(struct heap_entry *map, uint32_t cap, const struct heap_entry *e)
{
	uint32_t i = home_of(e->p, cap);

	while (map[i].p)
		i = (i + 1) & (cap - 1);
	map[i] = *e;
}

/* Keep the load at most one half: probes stay short. */
static int map_reserve(struct chunk_heap *h)
{
	struct heap_entry *map;
	uint32_t cap;

	if ((h->map_n + 1) * 2 <= h->map_cap)
		return 0;
	cap = h->map_cap ? h->map_cap * 2 : 64;
	map = fault_calloc(cap, sizeof(*map));
	if (!map)
		return -1;
	for (uint32_t i = 0; i < h->map_cap; i++)
		if (h->map[i].p)
			put(map, cap, &h->map[i]);
	free(h->map);
	h->map = map;
	h->map_cap = cap;
	return 0;
}

/* Linear probing without tombstones: shift later entries of the run back. */
static void map_remove(struct chunk_heap *h, struct heap_entry *e)
{
	uint32_t mask = h->map_cap - 1, hole = (uint32_t)(e - h->map);

	for (uint32_t i = (hole + 1) & mask; h->map[i].p; i = (i + 1) & mask) {
		uint32_t home = home_of(h->map[i].p, h->map_cap);

		/* Move it into the hole unless its home lies after the hole
		 * (cyclically, up to i): then it is reachable as it is. */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			h->map[hole] = h->map[i];
			hole = i;
		}
	}
	h->map[hole].p = NULL;
	h->map_n--;
}

static dao_status add_chunk(struct chunk_heap *h, uint64_t need)
{
	uint64_t want = h->obtained ? h->obtained : h->min_chunk;
	struct heap_chunk c = { 0 };
	dao_status st;

	if (want > h->max_chunk)
		want = h->max_chunk;
	if (want < need)
		want = need;
	if (h->budget && h->budget->limit) {
		uint64_t left = h->budget->limit > h->budget->used
					? h->budget->limit - h->budget->used
					: 0;

		left &= ~(h->align - 1);
		if (want > left)
			want = left;
		if (want < need)
			return DAO_ERR_NOMEM;
	}
	if (h->nchunks == h->chunks_cap) {
		uint32_t cap = h->chunks_cap ? h->chunks_cap * 2 : 8;
		struct heap_chunk *n = fault_realloc(h->chunks, cap * sizeof(*n));

		if (!n)
			return DAO_ERR_NOMEM;
		h->chunks = n;
		h->chunks_cap = cap;
	}
	c.bytes = want;
	st = h->src.obtain(h->src.ctx, want, h->align, &c);
	if (st != DAO_OK)
		return st;
	if (!arena_init(&c.arena, want, h->align, true)) {
		h->src.release(h->src.ctx, &c);
		return DAO_ERR_NOMEM;
	}
	h->chunks[h->nchunks++] = c;
	h->obtained += want;
	if (h->budget)
		h->budget->used += want;
	return DAO_OK;
}

dao_status chunk_heap_alloc(struct chunk_heap *h, uint64_t bytes, void **p, uint32_t *kind)
{
	struct heap_entry e = { 0 };
	uint64_t size;
	dao_status st;

	if (!bytes)
		return DAO_ERR_INVALID;
	if (bytes > UINT64_MAX - (h->align - 1))
		return DAO_ERR_OVERFLOW;
	size = (bytes + h->align - 1) & ~(h->align - 1);
	if (map_reserve(h))
		return DAO_ERR_NOMEM;
	for (uint32_t i = 0; i < h->nchunks && !e.blk; i++) {
		e.blk = arena_alloc(&h->chunks[i].arena, size);
		e.chunk = i;
		/* Another chunk would not help. */
		if (!e.blk && h->chunks[i].arena.nomem)
			return DAO_ERR_NOMEM;
	}
	if (!e.blk) {
		st = add_chunk(h, size);
		if (st != DAO_OK)
			return st;
		e.chunk = h->nchunks - 1;
		e.blk = arena_alloc(&h->chunks[e.chunk].arena, size);
		if (!e.blk)
			return DAO_ERR_NOMEM;
	}
	e.p = h->chunks[e.chunk].base + e.blk->off;
	put(h->map, h->map_cap, &e);
	h->map_n++;
	*p = e.p;
	*kind = h->chunks[e.chunk].kind;
	return DAO_OK;
}

int chunk_heap_free(struct chunk_heap *h, void *p)
{
	static const dao_fence none;
	struct heap_entry *e = lookup(h, p);

	if (!e)
		return -1;
	arena_free(&h->chunks[e->chunk].arena, e->blk, &none);
	map_remove(h, e);
	return 0;
}
