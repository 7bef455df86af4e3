/* SPDX-License-Identifier: MIT */
/*
 * allocs.h - the allocations the model knows: device and managed memory
 * (a memfd mapped twice: the address the caller gets, and an alias only
 * the stream workers use), pinned host memory (cudaHostAlloc) and
 * registered host ranges. The lock held.
 */
#ifndef DAO_CUDAMODEL_STATE_ALLOCS_H
#define DAO_CUDAMODEL_STATE_ALLOCS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/site.h"

#define CM_PAGE (64ull << 10)     /* the device's large page: libdao's granule */
#define CM_DEV_ROUND (2ull << 20) /* cudaMalloc takes the card in 2 MiB blocks */

enum cm_kind { CM_DEVICE, CM_MANAGED, CM_HOSTALLOC, CM_REGISTERED };

struct cm_alloc {
	enum cm_kind kind;
	char *base;    /* what the caller got */
	char *alias;   /* the model's own mapping (device, managed) */
	uint64_t size; /* asked for */
	uint64_t span; /* mapped (rounded) */
	int fd;
	uint32_t npages;
	uint8_t *page;     /* managed: PG_* per CM_PAGE (state/pages.h) */
	uint32_t *pending; /* managed: per page, stream operations on it enqueued, not yet run */
	uint64_t **poison; /* managed: per page, a bitmap of discarded bytes or NULL */
	struct cm_site site, discard_site;
	struct cm_alloc *next;
};

/* Every live allocation, the newest first. */
extern struct cm_alloc *cm_allocs;

static inline uint64_t cm_round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

/* The allocation holding p, or NULL (pageable host memory). */
struct cm_alloc *cm_find(const void *p);
/* A memfd mapped for the caller (prot) and for the workers, 2 MiB aligned;
 * NULL when the system refuses. Not yet linked. */
struct cm_alloc *cm_alloc_map(enum cm_kind kind, uint64_t size, int prot);
/* Links a (its site set by the entry point) among the live ones. */
void cm_alloc_link(struct cm_alloc *a);
/* Unlinks and unmaps a, forgetting the accesses to it. */
void cm_alloc_unmap(struct cm_alloc *a);
/* Whether [p, p + size) overlaps pinned or registered host memory. */
bool cm_host_overlaps(const char *p, uint64_t size);

#endif /* DAO_CUDAMODEL_STATE_ALLOCS_H */
