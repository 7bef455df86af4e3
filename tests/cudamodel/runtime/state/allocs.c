/* SPDX-License-Identifier: MIT */
/* allocs.c - the allocations the model knows (allocs.h). */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check/races.h"
#include "state/allocs.h"
#include "state/card.h"

struct cm_alloc *cm_allocs;

struct cm_alloc *cm_find(const void *p)
{
	const char *c = p;

	for (struct cm_alloc *a = cm_allocs; a; a = a->next)
		if (c >= a->base && c < a->base + (a->kind == CM_DEVICE || a->kind == CM_MANAGED
							   ? a->span
							   : a->size))
			return a;
	return NULL;
}

struct cm_alloc *cm_alloc_map(enum cm_kind kind, uint64_t size, int prot)
{
	struct cm_alloc *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->kind = kind;
	a->size = size;
	a->span = cm_round_up(size, CM_PAGE);
	a->fd = memfd_create("cudamodel", MFD_CLOEXEC);
	if (a->fd < 0 || ftruncate(a->fd, (off_t)a->span))
		goto fail;
	/* 2 MiB aligned, as the driver places both kinds: libdao's granules
	 * are then the model's pages. */
	{
		char *r = mmap(NULL, a->span + CM_DEV_ROUND, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		char *at;

		if (r == MAP_FAILED)
			goto fail;
		at = (char *)cm_round_up((uint64_t)(uintptr_t)r, CM_DEV_ROUND);
		if (at > r)
			munmap(r, (uint64_t)(at - r));
		munmap(at + a->span, (uint64_t)(r + a->span + CM_DEV_ROUND - (at + a->span)));
		a->base = mmap(at, a->span, prot, MAP_SHARED | MAP_FIXED, a->fd, 0);
		if (a->base == MAP_FAILED) {
			munmap(at, a->span);
			goto fail;
		}
	}
	a->alias = mmap(NULL, a->span, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
	if (a->alias == MAP_FAILED) {
		munmap(a->base, a->span);
		goto fail;
	}
	return a;
fail:
	if (a->fd >= 0)
		close(a->fd);
	free(a);
	return NULL;
}

void cm_alloc_link(struct cm_alloc *a)
{
	a->next = cm_allocs;
	cm_allocs = a;
}

void cm_alloc_unmap(struct cm_alloc *a)
{
	struct cm_alloc **pp = &cm_allocs;

	while (*pp != a)
		pp = &(*pp)->next;
	*pp = a->next;
	cm_check_forget(a->base, a->kind == CM_REGISTERED || a->kind == CM_HOSTALLOC ? a->size
										       : a->span);
	if (a->kind == CM_REGISTERED)
		cm_card.n.host_registered_bytes -= a->size;
	if (a->kind == CM_DEVICE || a->kind == CM_MANAGED) {
		munmap(a->base, a->span);
		munmap(a->alias, a->span);
		close(a->fd);
	} else if (a->kind == CM_HOSTALLOC) {
		munmap(a->base, cm_round_up(a->size, 4096));
	}
	if (a->poison) {
		for (uint32_t i = 0; i < a->npages; i++)
			free(a->poison[i]);
		free(a->poison);
	}
	free(a->page);
	free(a->pending);
	free(a);
}

bool cm_host_overlaps(const char *p, uint64_t size)
{
	for (struct cm_alloc *a = cm_allocs; a; a = a->next)
		if ((a->kind == CM_HOSTALLOC || a->kind == CM_REGISTERED) && p < a->base + a->size &&
		    a->base < p + size)
			return true;
	return false;
}
