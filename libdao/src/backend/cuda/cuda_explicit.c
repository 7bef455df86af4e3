/* SPDX-License-Identifier: MIT */
/*
 * cuda_explicit.c - the cuda-explicit backend: the arena is one device pool
 * of exactly the budget (cudaMalloc), host copies live in pinned staging
 * memory, and copies are cudaMemcpyAsync on a host-to-device and a
 * device-to-host stream of their own, so both directions run at once and
 * under the kernels of the compute stream. Ordering is by events only.
 *
 * Staging comes, in order of preference, from memory pinned through dao.ko
 * (the node accounts for it) and registered with cudaHostRegister, from
 * cudaHostAlloc, or, when both refuse, from plain pageable memory: slower
 * copies, never wrong ones (decision 9).
 */
#include <stdlib.h>
#include <unistd.h>

#include "base/fault.h"
#include "mem/chunk_heap.h"
#include "backend/cuda/cuda_engines.h"
#include "base/log.h"
#include "backend/pin.h"

/* One pinned chunk serves many buffers: pinning is a system call per
 * chunk and cudaFreeHost would synchronise the device on every free. */
#define STAGE_MIN_CHUNK (16ull << 20)
#define STAGE_MAX_CHUNK (1ull << 30)

enum stage_kind { STAGE_PAGEABLE = 0, STAGE_CUDA = 1, STAGE_MODULE = 2 };

struct cx_backend {
	struct cu_backend cb; /* first */
	char *pool;
	struct chunk_heap staging;
	struct dao_pin *pin;
	bool said_pageable;
};

static struct cx_backend *cx(struct dao_backend *be)
{
	return (struct cx_backend *)be;
}

/* Pinned through dao.ko, then registered with CUDA; false if either refuses. */
static bool stage_module(struct cx_backend *x, struct heap_chunk *c, uint64_t align)
{
	uint64_t handle = 0;
	void *p = NULL;
	cudaError_t err;

	if (fault_posix_memalign(&p, align, c->bytes))
		return false;
	if (dao_pin_range(x->pin, p, c->bytes, 1, &handle) != DAO_OK) {
		free(p);
		return false;
	}
	err = cudaHostRegister(p, c->bytes, cudaHostRegisterDefault);
	if (err != cudaSuccess) {
		dao_warn("CUDA: cudaHostRegister of %llu bytes pinned through dao.ko failed: %s",
			 (unsigned long long)c->bytes, cudaGetErrorString(err));
		dao_pin_unpin(x->pin, handle);
		free(p);
		return false;
	}
	c->raw = c->base = p;
	c->kind = STAGE_MODULE;
	c->cookie = handle;
	if (x->cb.eng.log)
		cu_log_chunk(x->cb.eng.log, "module-pinned", p, c->bytes);
	return true;
}

static dao_status stage_obtain(void *ctx, uint64_t bytes, uint64_t align, struct heap_chunk *c)
{
	struct cx_backend *x = ctx;
	cudaError_t err;
	void *p = NULL;

	if (dao_pin_available(x->pin) && stage_module(x, c, align))
		return DAO_OK;
	/* Without the module (or over its limit) CUDA pins on its own;
	 * cudaHostAlloc returns page-aligned memory. */
	err = cudaHostAlloc(&p, bytes, cudaHostAllocDefault);
	if (err == cudaSuccess) {
		c->raw = c->base = p;
		c->kind = STAGE_CUDA;
		if (x->cb.eng.log)
			cu_log_chunk(x->cb.eng.log, "pinned", p, bytes);
		return DAO_OK;
	}
	if (!x->said_pageable) {
		dao_warn("CUDA: cannot pin %llu bytes of staging memory (%s): using pageable "
			 "memory, copies will be slower",
			 (unsigned long long)bytes, cudaGetErrorString(err));
		x->said_pageable = true;
	}
	if (fault_posix_memalign(&p, align, bytes))
		return DAO_ERR_NOMEM;
	c->raw = c->base = p;
	c->kind = STAGE_PAGEABLE;
	if (x->cb.eng.log)
		cu_log_chunk(x->cb.eng.log, "pageable", p, bytes);
	return DAO_OK;
}

static void stage_release(void *ctx, struct heap_chunk *c)
{
	struct cx_backend *x = ctx;

	switch (c->kind) {
	case STAGE_MODULE:
		cu_ok(cudaHostUnregister(c->raw), "cudaHostUnregister");
		dao_pin_unpin(x->pin, c->cookie);
		free(c->raw);
		break;
	case STAGE_CUDA:
		cu_ok(cudaFreeHost(c->raw), "cudaFreeHost");
		break;
	default:
		free(c->raw);
		break;
	}
}

static void *cx_kernel_ptr(struct dao_backend *be, void *host, uint64_t dev_off,
			   uint64_t view_off)
{
	return cx(be)->pool + dev_off + view_off;
}

static dao_status cx_host_alloc(struct dao_backend *be, uint64_t bytes, void **ptr,
				uint64_t *pinned)
{
	struct cx_backend *x = cx(be);
	uint32_t kind;
	dao_status st;

	if (!cu_bind(&x->cb.eng))
		return DAO_ERR_BACKEND;
	st = chunk_heap_alloc(&x->staging, bytes, ptr, &kind);
	/* Only what dao.ko pinned counts as pinned in the statistics; the
	 * chunk holds the pin itself, so any non-zero value will do. */
	*pinned = st == DAO_OK && kind == STAGE_MODULE;
	return st;
}

static void cx_host_free(struct dao_backend *be, void *ptr, uint64_t bytes, uint64_t pinned)
{
	if (chunk_heap_free(&cx(be)->staging, ptr))
		dao_err("cuda-explicit: freeing host memory it never handed out (%p)", ptr);
}

static uint64_t cx_copy(struct dao_backend *be, enum dao_engine e, uint64_t dev_off, void *host,
			uint64_t len, const dao_fence *after, enum dao_move_why why)
{
	struct cx_backend *x = cx(be);
	struct cu_engines *g = &x->cb.eng;

	if (cu_bind(g))
		cu_order(g, e, after);
	if (g->failure == DAO_OK) {
		/* The host copy's address names the buffer, as on cuda-managed. */
		if (g->log)
			cu_log_move(g->log, e, cu_next_seq(g, e),
				    e == DAO_ENGINE_H2D ? "memcpy-h2d" : "memcpy-d2h", why, host, len);
		if (e == DAO_ENGINE_H2D)
			cu_note(g, cudaMemcpyAsync(x->pool + dev_off, host, len,
						   cudaMemcpyHostToDevice, g->e[e].stream),
				"cudaMemcpyAsync (host to device)");
		else
			cu_note(g, cudaMemcpyAsync(host, x->pool + dev_off, len,
						   cudaMemcpyDeviceToHost, g->e[e].stream),
				"cudaMemcpyAsync (device to host)");
	}
	return cu_record(g, e);
}

static void cx_destroy(struct dao_backend *be)
{
	struct cx_backend *x = cx(be);
	int prev;

	/* Torn down even where the device will not be bound (it failed):
	 * what the host holds is freed whatever the device answers. */
	(void)cu_bind_for_teardown(&x->cb.eng, &prev);
	cu_engines_fini(&x->cb.eng);
	if (x->pool)
		cu_ok(cudaFree(x->pool), "cudaFree");
	chunk_heap_fini(&x->staging);
	cu_unbind(&x->cb.eng, prev);
	dao_pin_close(x->pin);
	cu_log_close(x->cb.eng.log);
	free(x);
}

static const struct dao_backend_ops cx_ops = {
	.kernel_ptr = cx_kernel_ptr,
	.host_alloc = cx_host_alloc,
	.host_free = cx_host_free,
	.copy = cx_copy,
	.kernel = cu_kernel,
	.wait = cu_backend_wait,
	.last_stall_ns = cu_last_stall_ns,
	.destroy = cx_destroy,
	.host_access = cu_host_access,
	DAO_SEPARATE_MEMORY_OPS,
};

dao_status cu_explicit_create(int device, uint64_t total, uint64_t budget, struct cu_log *log,
			      struct dao_backend **out)
{
	struct cx_backend *x = fault_calloc(1, sizeof(*x));
	struct chunk_source src = { stage_obtain, stage_release, NULL };
	long page = sysconf(_SC_PAGESIZE);
	dao_status st;

	if (!x)
		return DAO_ERR_NOMEM;
	x->cb.base.ops = &cx_ops;
	x->cb.base.kind = DAO_BACKEND_CUDA_EXPLICIT;
	x->cb.base.holds_data = true;
	/* Pinned copies each way at PCIe Gen5 x16 (dao-gpubw: 53-55 GB/s on
	 * an H100); compute at the daosim h100 preset's sustained rate. */
	x->cb.base.rates = (struct dao_rates){
		.h2d_bytes_per_s = 50e9,
		.d2h_bytes_per_s = 50e9,
		.flops_per_s = 100e12,
		.mem_bytes_per_s = 3000e9,
	};
	x->cb.base.device_memory = total;
	x->cb.base.align = CU_EXPLICIT_UNIT;
	x->cb.base.contiguous = true;
	x->cb.base.arena_bytes = dao_budget_round(budget, x->cb.base.align);
	st = cu_engines_init(&x->cb.eng, device);
	if (st != DAO_OK) {
		free(x);
		return st;
	}
	if (x->cb.base.arena_bytes &&
	    !cu_ok(cudaMalloc((void **)&x->pool, x->cb.base.arena_bytes),
		   "cudaMalloc of the device pool")) {
		cu_engines_fini(&x->cb.eng);
		free(x);
		return DAO_ERR_BACKEND;
	}
	if (dao_pin_open(&x->pin) != DAO_OK)
		x->pin = NULL;
	x->cb.eng.log = log;
	if (log && x->pool)
		cu_log_chunk(log, "device", x->pool, x->cb.base.arena_bytes);
	src.ctx = x;
	chunk_heap_init(&x->staging, &src, page > 0 ? (uint64_t)page : 4096, STAGE_MIN_CHUNK,
			STAGE_MAX_CHUNK, NULL);
	*out = &x->cb.base;
	return DAO_OK;
}
