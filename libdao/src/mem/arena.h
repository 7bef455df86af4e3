/* SPDX-License-Identifier: MIT */
/*
 * arena.h - the device memory manager: a two-level segregated-fit allocator
 * (TLSF) over offsets into a budget-sized region. Its bookkeeping lives
 * outside the region, since device memory may not be addressable from the
 * host. Every operation is O(1) but for one bounded case (see arena.c).
 *
 * Each free block carries a fence: the point after which its bytes are no
 * longer read or written by work already queued (a kernel, a write-back).
 * Allocation hands that fence to the new owner, who must order its first
 * write after it; coalescing joins fences.
 */
#ifndef DAO_ARENA_H
#define DAO_ARENA_H

#include <stdbool.h>
#include <stdint.h>

#include "base/fence.h"

#define ARENA_FL 64
#define ARENA_SL_BITS 4
#define ARENA_SL (1u << ARENA_SL_BITS)

struct dao_block {
	uint64_t off;
	uint64_t size;
	struct dao_block *prev_phys, *next_phys;
	struct dao_block *prev_free, *next_free;
	bool free;
	dao_fence fence;
};

/* Paged mode: space given back, oldest first, with when it is free. */
struct dao_freed {
	uint64_t bytes;
	dao_fence fence;
};

struct dao_arena {
	bool paged; /* the backend maps pages: no placement, only a capacity */
	struct dao_freed *freed; /* ring */
	uint32_t freed_cap, freed_head, freed_n;
	uint64_t size;
	uint64_t align;
	uint64_t used;
	uint64_t peak;
	uint64_t fl_map;
	uint32_t sl_map[ARENA_FL];
	struct dao_block *bins[ARENA_FL][ARENA_SL];
	struct dao_block *spare; /* recycled block descriptors */
	/* The last arena_alloc failed for want of host memory (a block's
	 * descriptor), not of space: evicting would not help. */
	bool nomem;
};

/* contiguous: buffers need contiguous ranges (a real pool); otherwise the
 * arena only counts capacity, as for a device that maps pages. */
bool arena_init(struct dao_arena *a, uint64_t size, uint64_t align, bool contiguous);
void arena_destroy(struct dao_arena *a);
/* size must already be a multiple of align and > 0. NULL when no free block
 * fits, or when the host is out of memory (then a->nomem is set). */
struct dao_block *arena_alloc(struct dao_arena *a, uint64_t size);
/* Give a block back; its bytes are in use until `fence`. */
void arena_free(struct dao_arena *a, struct dao_block *b, const dao_fence *fence);
uint64_t arena_round(const struct dao_arena *a, uint64_t size);

#endif /* DAO_ARENA_H */
