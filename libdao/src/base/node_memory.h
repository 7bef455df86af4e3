/* SPDX-License-Identifier: MIT */
/*
 * node_memory.h - how much host memory the node can give this process
 * (node_memory.c): the rule behind the host budget (dao.h).
 */
#ifndef DAO_NODE_MEMORY_H
#define DAO_NODE_MEMORY_H

#include <stdint.h>

struct node_memory {
	/* The most the node could ever give the process: physical memory,
	 * capped by its memory cgroup's limit and, under strict overcommit
	 * (vm.overcommit_memory = 2), by the commit limit. */
	uint64_t capacity;
	/* What it can give now without the OOM killer: MemAvailable less
	 * what it counts of the kernel's own (the largest watermark boost,
	 * reclaimable slab: node_memory.c), capped by the cgroup's headroom
	 * (its limit less what it uses, its page cache counted as free, less
	 * the reserve the kernel keeps on a node of the limit's size) and
	 * the commit limit less what is committed. UINT64_MAX when nothing
	 * could be read. */
	uint64_t available;
	/* Which bound each is: "physical memory", "memory cgroup" ... */
	const char *capacity_by;
	const char *available_by;
};

/*
 * The most bytes of live buffers, `buffers` of them, that `memory` bytes of
 * host memory back: each costs the node, beyond its bytes, up to a page for
 * the allocator's header and alignment, and the page-table entries that map
 * its host copy (8 bytes a page, 1/512).
 */
uint64_t node_memory_backs(uint64_t memory, uint64_t buffers);

/* Reads /proc and the process's memory cgroup (v2, or v1's memory
 * controller). Never fails: what cannot be read bounds nothing. */
void node_memory_read(struct node_memory *out);
/* The same under another root directory (tests give a tree of files). */
void node_memory_read_at(const char *root, struct node_memory *out);

#endif /* DAO_NODE_MEMORY_H */
