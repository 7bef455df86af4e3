/* SPDX-License-Identifier: MIT */
/*
 * memory.c - device memory and managed memory: cudaMalloc, which takes the
 * card in 2 MiB blocks (after the driver's eviction of managed pages) and
 * whose caller mapping the host may never touch; cudaMallocManaged, whose
 * pages start on the host without a physical page; cudaFree, which
 * synchronises the device first; cudaMemGetInfo; and cudaMemAdvise, kept
 * per page and honoured by the card's accesses (state/pages.c).
 */
#include <stdio.h>
#include <sys/mman.h>

#include "api/device.h"
#include "api/init.h"
#include "base/errors.h"
#include "base/lock.h"
#include "base/report.h"
#include "base/site.h"
#include "state/allocs.h"
#include "state/card.h"
#include "state/pages.h"
#include "state/streams.h"

cudaError_t cudaMalloc(void **p, size_t size)
{
	uint64_t need;
	struct cm_alloc *a;

	if (!p)
		return cm_misuse("cudaMalloc", cudaErrorInvalidValue, "NULL result pointer");
	if (!size) {
		*p = NULL;
		return cudaSuccess;
	}
	need = cm_round_up(size, CM_DEV_ROUND);
	cm_enter();
	cm_pages_evict(need, NULL);
	if (!cm_card_fits(need)) {
		cm_unlock();
		fprintf(stderr, "cudamodel: cudaMalloc of %zu bytes: the card (%llu bytes) is full\n",
			size, (unsigned long long)cm_card.size);
		return cm_ret(cudaErrorMemoryAllocation);
	}
	a = cm_alloc_map(CM_DEVICE, size, PROT_NONE);
	if (!a) {
		cm_unlock();
		return cm_ret(cudaErrorMemoryAllocation);
	}
	cm_site_here(&a->site);
	cm_alloc_link(a);
	a->npages = (uint32_t)(need / CM_PAGE); /* what it holds of the card */
	cm_card.dev_alloc_bytes += need;
	cm_card_update();
	*p = a->base;
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaMallocManaged(void **p, size_t size, unsigned int flags)
{
	struct cm_alloc *a;

	if (!p || !size || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
		return cm_misuse("cudaMallocManaged", cudaErrorInvalidValue,
				 "pointer %p, size %zu, flags 0x%x", (void *)p, size, flags);
	cm_enter();
	/* Nothing populated yet: every page's first host touch faults. */
	a = cm_alloc_map(CM_MANAGED, size, PROT_NONE);
	if (a) {
		cm_pages_init(a);
		cm_site_here(&a->site);
		cm_alloc_link(a);
		*p = a->base;
	}
	cm_unlock();
	return a ? cudaSuccess : cm_ret(cudaErrorMemoryAllocation);
}

cudaError_t cudaFree(void *p)
{
	struct cm_alloc *a;

	if (!p)
		return cudaSuccess;
	cm_enter();
	a = cm_find(p);
	if (!a || a->base != p || (a->kind != CM_DEVICE && a->kind != CM_MANAGED)) {
		cm_unlock();
		return cm_misuse("cudaFree", cudaErrorInvalidValue,
				 "%p is not a live device or managed allocation", p);
	}
	cm_streams_sync_all();
	if (a->kind == CM_DEVICE)
		cm_card.dev_alloc_bytes -= (uint64_t)a->npages * CM_PAGE;
	else
		for (uint32_t i = 0; i < a->npages; i++)
			if (a->page[i] & PG_DEVICE)
				cm_card.managed_dev_bytes -= CM_PAGE;
	cm_alloc_unmap(a);
	cm_card_update();
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
	int n = 0;
	cudaError_t err = cudaGetDeviceCount(&n);

	if (err != cudaSuccess)
		return err;
	if (!free_bytes || !total)
		return cm_misuse("cudaMemGetInfo", cudaErrorInvalidValue, "NULL");
	cm_enter();
	*total = cm_card.size;
	*free_bytes = cm_card_free();
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaMemAdvise(const void *p, size_t count, enum cudaMemoryAdvise advice,
			  struct cudaMemLocation loc)
{
	struct cm_alloc *a;
	uint64_t off;
	uint32_t first, last;
	bool dev = loc.type == cudaMemLocationTypeDevice;

	cm_enter();
	a = cm_find(p);
	if (!a || a->kind != CM_MANAGED || !count || (uint64_t)((const char *)p - a->base) + count > a->size) {
		cm_unlock();
		return cm_misuse("cudaMemAdvise", cudaErrorInvalidValue,
				 "[%p, +%zu) is not inside one managed allocation", p, count);
	}
	if ((advice == cudaMemAdviseSetPreferredLocation && !cm_location_valid(loc, true)) ||
	    ((advice == cudaMemAdviseSetAccessedBy || advice == cudaMemAdviseUnsetAccessedBy) &&
	     !(dev && cm_location_valid(loc, false))) ||
	    advice < cudaMemAdviseSetReadMostly || advice > cudaMemAdviseUnsetAccessedBy) {
		cm_unlock();
		return cm_misuse("cudaMemAdvise", cudaErrorInvalidValue,
				 "advice %d with location type %d id %d", (int)advice, (int)loc.type,
				 loc.id);
	}
	off = (uint64_t)((const char *)p - a->base);
	first = (uint32_t)(off / CM_PAGE);
	last = (uint32_t)((off + count - 1) / CM_PAGE);
	for (uint32_t i = first; i <= last; i++) {
		uint8_t *f = &a->page[i];

		switch (advice) {
		case cudaMemAdviseSetPreferredLocation:
			*f = (uint8_t)((*f & ~(PG_PREF_HOST | PG_PREF_DEV)) |
				       (dev ? PG_PREF_DEV : PG_PREF_HOST));
			break;
		case cudaMemAdviseUnsetPreferredLocation:
			*f &= (uint8_t)~(PG_PREF_HOST | PG_PREF_DEV);
			break;
		case cudaMemAdviseSetAccessedBy:
			*f |= PG_ACCESSED;
			break;
		case cudaMemAdviseUnsetAccessedBy:
			*f &= (uint8_t)~PG_ACCESSED;
			break;
		default:
			break; /* read-mostly: duplicates would change no count here */
		}
	}
	cm_unlock();
	return cudaSuccess;
}
