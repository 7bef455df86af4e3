/* SPDX-License-Identifier: MIT */
/*
 * chunk_heap.h - host-addressable memory handed out from a few large
 * chunks: pinned staging for cuda-explicit, managed memory for
 * cuda-managed. Both are costly to allocate, and to free (cudaFreeHost and
 * cudaFree synchronise the device), so chunks are kept until the heap goes
 * and buffers are carved out of them with libdao's TLSF arena.
 *
 * Nothing is ever written into the memory itself: the bookkeeping lives
 * outside, since touching a managed page from the CPU would migrate it.
 * Not thread-safe: one heap belongs to one backend, used by its executor.
 */
#ifndef DAO_MEM_CHUNK_HEAP_H
#define DAO_MEM_CHUNK_HEAP_H

#include <stdint.h>

#include "mem/arena.h"
#include "dao.h"

struct heap_chunk {
	void *raw;
	char *base;
	uint64_t bytes;
	uint32_t kind;
	uint64_t cookie;
	struct dao_arena arena;
};

/* Where chunks come from. */
struct chunk_source {
	/* A chunk of `bytes` whose usable start c->base is aligned to
	 * `align`; c->raw, c->kind and c->cookie are the source's own, handed
	 * back to release. DAO_ERR_NOMEM (or another status, logged by the
	 * source) when it cannot. */
	dao_status (*obtain)(void *ctx, uint64_t bytes, uint64_t align, struct heap_chunk *c);
	void (*release)(void *ctx, struct heap_chunk *c);
	void *ctx;
};

/* A cap on the chunk bytes of one or more heaps together. */
struct heap_budget {
	uint64_t limit; /* 0: none */
	uint64_t used;
};


struct heap_entry {
	char *p; /* NULL: empty */
	struct dao_block *blk;
	uint32_t chunk;
};

struct chunk_heap {
	struct chunk_source src;
	uint64_t align;     /* placement granularity, a power of two */
	uint64_t min_chunk; /* the first chunk; each next one doubles, up to max_chunk */
	uint64_t max_chunk;
	uint64_t obtained;  /* chunk bytes held */
	struct heap_budget *budget; /* NULL: no cap */
	struct heap_chunk *chunks;
	uint32_t nchunks, chunks_cap;
	struct heap_entry *map; /* live allocations by address, open addressing */
	uint32_t map_cap, map_n;
};

/* align, min_chunk and max_chunk: powers of two, align <= min_chunk <=
 * max_chunk. budget may be NULL or shared with other heaps. */
void chunk_heap_init(struct chunk_heap *h, const struct chunk_source *src, uint64_t align,
		     uint64_t min_chunk, uint64_t max_chunk, struct heap_budget *budget);
/* Gives every chunk back; allocations still live are gone with them. */
void chunk_heap_fini(struct chunk_heap *h);

/*
 * bytes > 0, at an address aligned to the heap's align. *kind gets the
 * kind of the chunk it lies in. DAO_ERR_NOMEM when the limit or the source
 * refuses, DAO_ERR_OVERFLOW for a size that cannot be rounded.
 */
dao_status chunk_heap_alloc(struct chunk_heap *h, uint64_t bytes, void **p, uint32_t *kind);
/* p from chunk_heap_alloc; anything else is ignored and returns -1. */
int chunk_heap_free(struct chunk_heap *h, void *p);

#endif /* DAO_MEM_CHUNK_HEAP_H */
