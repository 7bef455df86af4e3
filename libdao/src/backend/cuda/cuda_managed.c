/* SPDX-License-Identifier: MIT */
/*
 * cuda_managed.c - the cuda-managed backend: host copies are managed memory,
 * and libdao, not the driver's fault handler, decides what is on the
 * device. Making a buffer resident is a prefetch to the device on the
 * host-to-device stream; evicting it is a prefetch to the host on the
 * device-to-host stream, or a discard when its contents are dead. The
 * arena only counts the budget (backend.h: DAO_UNIFIED_MEMORY_OPS).
 *
 * Every chunk prefers the host and is mapped for the device: a page the
 * device touches without a prefetch is read over the bus, never pulled over
 * by the driver on its own, so that residency changes only when libdao says
 * so. (On an H100 the device never faulted, but the driver still reported
 * migrations libdao had not asked for: Documentation/cuda.md, "On a real
 * GPU".)
 * Chunks are aligned to the driver's 2 MiB blocks; buffers of 2 MiB or more
 * own whole blocks, smaller ones share blocks in 64 KiB granules (the
 * device's large page), so migrating one buffer never moves a neighbour.
 *
 * Safety on shared cards: managed memory is never allocated beyond what the
 * device had free when the backend opened, so the driver's own eviction is
 * never needed and oversubscription is only ever emulated by the budget.
 */
#include <stdlib.h>

#include "base/fault.h"
#include "mem/chunk_heap.h"
#include "backend/cuda/cuda_engines.h"
#include "backend/cuda/split_prefetch.h"
#include "backend/cuda/switches.h"
#include "base/log.h"

#define CM_GRANULE CU_MANAGED_UNIT
#define CM_BLOCK (2ull << 20)
#define CM_MIN_CHUNK (64ull << 20)
#define CM_MAX_CHUNK (4ull << 30)

struct cm_backend {
	struct cu_backend cb; /* first */
	struct chunk_heap small; /* buffers under CM_BLOCK */
	struct chunk_heap big;   /* whole blocks */
	struct heap_budget managed; /* the safety cap, both heaps together */
	struct cudaMemLocation dev_loc, host_loc;
	bool discard_ok; /* the driver discards (and no-discard is off); else dead data migrates */
	unsigned switches; /* DAO_CUDA_MANAGED (switches.h) */
	struct split_prefetch split; /* split-to-host */
	bool said_cap;
};

static struct cm_backend *cm(struct dao_backend *be)
{
	return (struct cm_backend *)be;
}

static uint64_t granules(uint64_t len)
{
	return (len + CM_GRANULE - 1) & ~(CM_GRANULE - 1);
}

static dao_status cm_obtain(void *ctx, uint64_t bytes, uint64_t align, struct heap_chunk *c)
{
	struct cm_backend *x = ctx;
	uintptr_t base;
	void *p = NULL;

	/* Over-allocate to align: the runtime promises less than a block. */
	if (!cu_ok(cudaMallocManaged(&p, bytes + align, cudaMemAttachGlobal), "cudaMallocManaged"))
		return DAO_ERR_NOMEM;
	base = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
	if ((!(x->switches & CU_NO_PREFERRED_HOST) &&
	     !cu_ok(cudaMemAdvise((void *)base, bytes, cudaMemAdviseSetPreferredLocation,
				  x->host_loc),
		    "cudaMemAdvise (preferred location: host)")) ||
	    (!(x->switches & CU_NO_ACCESSED_BY) &&
	     !cu_ok(cudaMemAdvise((void *)base, bytes, cudaMemAdviseSetAccessedBy, x->dev_loc),
		    "cudaMemAdvise (accessed by the device)"))) {
		cu_ok(cudaFree(p), "cudaFree");
		return DAO_ERR_BACKEND;
	}
	if (x->cb.eng.log)
		cu_log_chunk(x->cb.eng.log, "managed", (void *)base, bytes);
	c->raw = p;
	c->base = (char *)base;
	c->kind = 0;
	return DAO_OK;
}

static void cm_release(void *ctx, struct heap_chunk *c)
{
	cu_ok(cudaFree(c->raw), "cudaFree");
}

static void *cm_kernel_ptr(struct dao_backend *be, void *host, uint64_t dev_off,
			   uint64_t view_off)
{
	return (char *)host + view_off; /* unified: the host copy's pages are the device's */
}

static dao_status cm_host_alloc(struct dao_backend *be, uint64_t bytes, void **ptr,
				uint64_t *pinned)
{
	struct cm_backend *x = cm(be);
	uint32_t kind;
	dao_status st;

	*pinned = 0;
	if (!cu_bind(&x->cb.eng))
		return DAO_ERR_BACKEND;
	st = chunk_heap_alloc(bytes >= CM_BLOCK ? &x->big : &x->small, bytes, ptr, &kind);
	if (st == DAO_ERR_NOMEM && x->managed.used + bytes > x->managed.limit && !x->said_cap) {
		dao_err("cuda-managed: %llu bytes of managed memory held; more would exceed the "
			"%llu bytes the device had free, which only the driver's own eviction "
			"could back",
			(unsigned long long)x->managed.used, (unsigned long long)x->managed.limit);
		x->said_cap = true;
	}
	return st;
}

static void cm_host_free(struct dao_backend *be, void *ptr, uint64_t bytes, uint64_t pinned)
{
	struct cm_backend *x = cm(be);

	if (chunk_heap_free(bytes >= CM_BLOCK ? &x->big : &x->small, ptr))
		dao_err("cuda-managed: freeing memory it never handed out (%p)", ptr);
}

/* A prefetch of [host, host + n) on engine e, to the device (H2D) or the
 * host (D2H). */
static void prefetch(struct cm_backend *x, enum dao_engine e, void *host, size_t n,
		     enum dao_move_why why, const char *what)
{
	struct cu_engines *g = &x->cb.eng;
	bool in = e == DAO_ENGINE_H2D;

	if (!in && x->split.ready && n >= 2 * CM_BLOCK) {
		split_prefetch(&x->split, g, e, host, n, x->host_loc, CM_BLOCK, "prefetch-host", why);
		return;
	}
	if (g->log)
		cu_log_move(g->log, e, cu_next_seq(g, e), in ? "prefetch-device" : "prefetch-host",
			    why, host, n);
	cu_note(g, cudaMemPrefetchAsync(host, n, in ? x->dev_loc : x->host_loc, 0, g->e[e].stream),
		what);
}

static uint64_t cm_copy(struct dao_backend *be, enum dao_engine e, uint64_t dev_off, void *host,
			uint64_t len, const dao_fence *after, enum dao_move_why why)
{
	struct cm_backend *x = cm(be);
	struct cu_engines *g = &x->cb.eng;

	if (cu_bind(g))
		cu_order(g, e, after);
	if (g->failure == DAO_OK)
		prefetch(x, e, host, granules(len), why,
			 e == DAO_ENGINE_H2D ? "cudaMemPrefetchAsync (to the device)"
					     : "cudaMemPrefetchAsync (to the host)");
	return cu_record(g, e);
}

static uint64_t cm_discard(struct dao_backend *be, enum dao_engine e, void *host, uint64_t len,
			   const dao_fence *after, enum dao_move_why why)
{
	struct cm_backend *x = cm(be);
	struct cu_engines *g = &x->cb.eng;
	struct cudaMemLocation loc = e == DAO_ENGINE_H2D ? x->dev_loc : x->host_loc;
	size_t n = granules(len), first = 0;
	void *p = host;

	if (cu_bind(g))
		cu_order(g, e, after);
	if (g->failure == DAO_OK && x->discard_ok) {
		uint64_t t = g->log ? cu_log_now() : 0;
		cudaError_t err = cudaMemDiscardAndPrefetchBatchAsync(&p, &n, 1, &loc, &first, 1, 0,
								      g->e[e].stream);

		if (err == cudaErrorNotSupported || err == cudaErrorCallRequiresNewerDriver) {
			dao_info("cuda-managed: the driver cannot discard (%s): dead data migrates",
				 cudaGetErrorString(err));
			(void)cudaGetLastError();
			x->discard_ok = false;
		} else {
			/* Logged once issued: a refused discard asked for nothing. */
			if (g->log)
				cu_log_move_at(g->log, t, e, cu_next_seq(g, e),
					       e == DAO_ENGINE_H2D ? "discard-device" : "discard-host",
					       why, host, n);
			cu_note(g, err, "cudaMemDiscardAndPrefetchBatchAsync");
		}
	}
	if (g->failure == DAO_OK && !x->discard_ok)
		prefetch(x, e, host, n, why, "cudaMemPrefetchAsync (of dead data)");
	return cu_record(g, e);
}

static void cm_destroy(struct dao_backend *be)
{
	struct cm_backend *x = cm(be);
	int prev;

	/* Torn down even where the device will not be bound (it failed):
	 * what the host holds is freed whatever the device answers. */
	(void)cu_bind_for_teardown(&x->cb.eng, &prev);
	cu_engines_fini(&x->cb.eng);
	split_prefetch_fini(&x->split);
	chunk_heap_fini(&x->small);
	chunk_heap_fini(&x->big);
	cu_unbind(&x->cb.eng, prev);
	cu_log_close(x->cb.eng.log);
	free(x);
}

static const struct dao_backend_ops cm_ops = {
	.kernel_ptr = cm_kernel_ptr,
	.host_alloc = cm_host_alloc,
	.host_free = cm_host_free,
	.copy = cm_copy,
	.kernel = cu_kernel,
	.wait = cu_backend_wait,
	.last_stall_ns = cu_last_stall_ns,
	.destroy = cm_destroy,
	.discard = cm_discard,
	.host_access = cu_host_access,
	DAO_UNIFIED_MEMORY_OPS,
};

dao_status cu_managed_create(int device, uint64_t total, uint64_t budget, uint64_t free_bytes,
			     unsigned switches, struct cu_log *log, struct dao_backend **out)
{
	struct chunk_source src = { cm_obtain, cm_release, NULL };
	struct cm_backend *x;
	int concurrent = 0;
	dao_status st;

	if (!cu_ok(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device),
		   "cudaDeviceGetAttribute"))
		return DAO_ERR_BACKEND;
	if (!concurrent) {
		/* Without it the host may not touch managed memory while
		 * kernels run, and prefetches are not asynchronous. */
		dao_err("cuda-managed: CUDA device %d has no concurrent managed access; "
			"use cuda-explicit",
			device);
		return DAO_ERR_BACKEND;
	}
	x = fault_calloc(1, sizeof(*x));
	if (!x)
		return DAO_ERR_NOMEM;
	x->cb.base.ops = &cm_ops;
	x->cb.base.kind = DAO_BACKEND_CUDA_MANAGED;
	x->cb.base.holds_data = true;
	/* Migrations by prefetch on an H100 (Documentation/cuda.md): about
	 * 47 GB/s onto the device, 10 GB/s back; compute as cuda-explicit. */
	x->cb.base.rates = (struct dao_rates){
		.h2d_bytes_per_s = 45e9,
		.d2h_bytes_per_s = 10e9,
		.flops_per_s = 100e12,
		.mem_bytes_per_s = 3000e9,
	};
	x->cb.base.device_memory = total;
	x->cb.base.align = CM_GRANULE;
	/* Pages, not ranges: the budget only counts bytes. */
	x->cb.base.contiguous = false;
	x->cb.base.arena_bytes = dao_budget_round(budget, x->cb.base.align);
	x->dev_loc = (struct cudaMemLocation){ .type = cudaMemLocationTypeDevice, .id = device };
	x->host_loc = (struct cudaMemLocation){ .type = cudaMemLocationTypeHost, .id = 0 };
	x->switches = switches;
	x->discard_ok = !(switches & CU_NO_DISCARD);
	/* A sixteenth stays free for chunk alignment and for the job's own
	 * allocations (cuBLAS workspaces and the like). */
	x->managed.limit = free_bytes - free_bytes / 16;
	st = cu_engines_init(&x->cb.eng, device);
	if (st == DAO_OK && (switches & CU_SPLIT_TO_HOST)) {
		st = split_prefetch_init(&x->split);
		if (st != DAO_OK)
			cu_engines_fini(&x->cb.eng);
	}
	if (st != DAO_OK) {
		free(x);
		return st;
	}
	x->cb.eng.log = log;
	src.ctx = x;
	chunk_heap_init(&x->small, &src, CM_GRANULE, CM_MIN_CHUNK, CM_MAX_CHUNK, &x->managed);
	chunk_heap_init(&x->big, &src, CM_BLOCK, CM_MIN_CHUNK, CM_MAX_CHUNK, &x->managed);
	*out = &x->cb.base;
	return DAO_OK;
}
