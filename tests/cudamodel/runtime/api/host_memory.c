/* SPDX-License-Identifier: MIT */
/*
 * host_memory.c - pinned and registered host memory: cudaHostAlloc (and
 * cudaMallocHost), cudaFreeHost (which synchronises the device first),
 * cudaHostRegister of a range that overlaps no registered or pinned one,
 * and cudaHostUnregister, a write as far as the checker is concerned (a
 * copy still in flight from or to the range is a race). DAO_CUDAMODEL_PIN=0
 * refuses all pinning.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "api/init.h"
#include "base/errors.h"
#include "base/lock.h"
#include "base/report.h"
#include "base/site.h"
#include "check/clocks.h"
#include "check/races.h"
#include "state/allocs.h"
#include "state/card.h"
#include "state/streams.h"

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
	struct cm_alloc *a;
	void *m;

	if (!p || !size || (flags & ~0xfu))
		return cm_misuse("cudaHostAlloc", cudaErrorInvalidValue,
				 "pointer %p, size %zu, flags 0x%x", (void *)p, size, flags);
	cm_init();
	if (cm_config.no_pin)
		return cm_ret(cudaErrorMemoryAllocation);
	m = mmap(NULL, cm_round_up(size, 4096), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	a = calloc(1, sizeof(*a));
	if (m == MAP_FAILED || !a) {
		if (m != MAP_FAILED)
			munmap(m, cm_round_up(size, 4096));
		free(a);
		return cm_ret(cudaErrorMemoryAllocation);
	}
	a->kind = CM_HOSTALLOC;
	a->base = m;
	a->size = size;
	cm_enter();
	cm_site_here(&a->site);
	cm_alloc_link(a);
	cm_unlock();
	*p = m;
	return cudaSuccess;
}

cudaError_t cudaMallocHost(void **p, size_t size)
{
	return cudaHostAlloc(p, size, cudaHostAllocDefault);
}

cudaError_t cudaFreeHost(void *p)
{
	struct cm_alloc *a;

	if (!p)
		return cudaSuccess;
	cm_enter();
	a = cm_find(p);
	if (!a || a->base != p || a->kind != CM_HOSTALLOC) {
		cm_unlock();
		return cm_misuse("cudaFreeHost", cudaErrorInvalidValue,
				 "%p is not from cudaHostAlloc", p);
	}
	cm_streams_sync_all();
	cm_alloc_unmap(a);
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaHostRegister(void *p, size_t size, unsigned int flags)
{
	struct cm_alloc *a;

	if (!p || !size || (flags & ~0xfu))
		return cm_misuse("cudaHostRegister", cudaErrorInvalidValue,
				 "pointer %p, size %zu, flags 0x%x", p, size, flags);
	cm_init();
	if (cm_config.no_pin)
		return cm_ret(cudaErrorMemoryAllocation);
	cm_enter();
	if (cm_find(p) && cm_find(p)->kind != CM_REGISTERED && cm_find(p)->kind != CM_HOSTALLOC) {
		cm_unlock();
		return cm_misuse("cudaHostRegister", cudaErrorInvalidValue,
				 "%p is device or managed memory", p);
	}
	if (cm_host_overlaps(p, size)) {
		cm_unlock();
		return cm_misuse("cudaHostRegister", cudaErrorHostMemoryAlreadyRegistered,
				 "[%p, +%zu) overlaps a registered or pinned range", p, size);
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		cm_fail("out of memory");
	a->kind = CM_REGISTERED;
	a->base = p;
	a->size = size;
	cm_site_here(&a->site);
	cm_alloc_link(a);
	cm_card.n.host_registered_bytes += size;
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *p)
{
	struct cm_alloc *a;
	struct cm_site site;
	int actor;

	cm_enter();
	a = cm_find(p);
	if (!a || a->base != p || a->kind != CM_REGISTERED) {
		cm_unlock();
		return cm_misuse("cudaHostUnregister", cudaErrorHostMemoryNotRegistered,
				 "%p does not start a registered range", p);
	}
	/* Unregistering under a copy in flight is a race like a write. */
	cm_site_here(&site);
	{
		struct cm_vc *host = cm_host_vc(&actor);

		cm_check(a->base, a->size, true, actor, host, &site, "cudaHostUnregister");
	}
	cm_alloc_unmap(a);
	cm_unlock();
	return cudaSuccess;
}
