/* SPDX-License-Identifier: MIT */
/*
 * backend_host.c - the host backend: the "device" is a host arena of exactly
 * the budget, kernels are CPU functions run on the executor thread, and
 * copies are memcpy on a copy thread, so they overlap the kernels.
 *
 * The copy thread executes both copy engines' work in submission order;
 * that order already satisfies every copy-to-copy fence, and compute fences
 * are met before submission because kernels run synchronously.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/fault.h"
#include "backend/backend.h"
#include "base/log.h"
#include "backend/pin.h"

struct copy_req {
	enum dao_engine engine;
	uint64_t seq;
	char *dev;
	char *host;
	uint64_t len;
};

struct host_backend {
	struct dao_backend base;
	char *arena;
	size_t arena_map;

	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool stop;
	struct copy_req *ring;
	uint32_t ring_cap, head, count;
	uint64_t submitted[DAO_ENGINES];
	_Atomic uint64_t completed[DAO_ENGINES];
	bool copier_waiting;
	uint32_t waiters;
	uint64_t last_stall; /* executor thread only */
	struct dao_pin *pin;
	uint64_t page;
};

/* Smaller host copies are not worth a pin (and a page each). */
#define PIN_MIN_BYTES (64u << 10)
/* The allocation unit (dao.h): any offset of it suits every type. */
#define HOST_UNIT 256u

static uint64_t page_round(const struct host_backend *h, uint64_t bytes)
{
	return (bytes + h->page - 1) & ~(h->page - 1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t dao_host_memory_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || size <= 0)
		return 1ull << 30;
	return (uint64_t)pages * (uint64_t)size;
}

static struct host_backend *hb(struct dao_backend *be)
{
	return (struct host_backend *)be;
}

static void *copy_main(void *arg)
{
	struct host_backend *h = arg;

	pthread_mutex_lock(&h->mu);
	for (;;) {
		struct copy_req q;

		while (!h->count && !h->stop) {
			h->copier_waiting = true;
			pthread_cond_wait(&h->cv, &h->mu);
			h->copier_waiting = false;
		}
		if (!h->count)
			break;
		q = h->ring[h->head];
		pthread_mutex_unlock(&h->mu);
		if (q.engine == DAO_ENGINE_H2D)
			memcpy(q.dev, q.host, q.len);
		else
			memcpy(q.host, q.dev, q.len);
		pthread_mutex_lock(&h->mu);
		h->head = (h->head + 1) % h->ring_cap;
		h->count--;
		atomic_store(&h->completed[q.engine], q.seq);
		if (h->waiters)
			pthread_cond_broadcast(&h->cv);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static bool reached(struct host_backend *h, const dao_fence *f)
{
	return atomic_load(&h->completed[DAO_ENGINE_H2D]) >= f->seq[DAO_ENGINE_H2D] &&
	       atomic_load(&h->completed[DAO_ENGINE_D2H]) >= f->seq[DAO_ENGINE_D2H];
}

/* Sleep until the copy thread has reached f. */
static void wait_reached(struct host_backend *h, const dao_fence *f)
{
	pthread_mutex_lock(&h->mu);
	h->waiters++;
	while (!reached(h, f))
		pthread_cond_wait(&h->cv, &h->mu);
	h->waiters--;
	pthread_mutex_unlock(&h->mu);
}

static void *host_kernel_ptr(struct dao_backend *be, void *host, uint64_t dev_off,
			     uint64_t view_off)
{
	return hb(be)->arena + dev_off + view_off;
}

static dao_status host_alloc(struct dao_backend *be, uint64_t bytes, void **ptr,
			     uint64_t *pinned)
{
	struct host_backend *h = hb(be);
	void *p = NULL;

	*pinned = 0;
	if (bytes < PIN_MIN_BYTES || !dao_pin_available(h->pin)) {
		if (fault_posix_memalign(&p, 64, bytes ? bytes : 1))
			return DAO_ERR_NOMEM;
		*ptr = p;
		return DAO_OK;
	}
	/* Staging memory: whole pages, pinned through dao.ko so the node
	 * accounts for it. A refusal (node limit, memlock) leaves it
	 * unpinned, which costs speed on a GPU, never correctness. */
	if (fault_posix_memalign(&p, (size_t)h->page, page_round(h, bytes)))
		return DAO_ERR_NOMEM;
	if (dao_pin_range(h->pin, p, page_round(h, bytes), 1, pinned) != DAO_OK)
		*pinned = 0;
	*ptr = p;
	return DAO_OK;
}

static void host_free(struct dao_backend *be, void *ptr, uint64_t bytes, uint64_t pinned)
{
	if (pinned)
		dao_pin_unpin(hb(be)->pin, pinned);
	free(ptr);
}

static uint64_t host_copy(struct dao_backend *be, enum dao_engine e, uint64_t dev_off, void *host,
			  uint64_t len, const dao_fence *after, enum dao_move_why why)
{
	struct host_backend *h = hb(be);
	uint64_t seq;

	pthread_mutex_lock(&h->mu);
	if (h->count == h->ring_cap) {
		/* Grow: copies already queued keep their order. */
		uint32_t cap = h->ring_cap * 2;
		struct copy_req *n = fault_malloc(cap * sizeof(*n));

		if (!n) {
			h->waiters++;
			while (h->count == h->ring_cap)
				pthread_cond_wait(&h->cv, &h->mu);
			h->waiters--;
		} else {
			for (uint32_t i = 0; i < h->count; i++)
				n[i] = h->ring[(h->head + i) % h->ring_cap];
			free(h->ring);
			h->ring = n;
			h->head = 0;
			h->ring_cap = cap;
		}
	}
	seq = ++h->submitted[e];
	h->ring[(h->head + h->count) % h->ring_cap] = (struct copy_req){
		.engine = e, .seq = seq, .dev = h->arena + dev_off, .host = host, .len = len
	};
	h->count++;
	if (h->copier_waiting)
		pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	return seq;
}

static dao_status host_kernel(struct dao_backend *be, const struct dao_kernel_run *k,
			      const dao_fence *after, uint64_t *seq)
{
	struct host_backend *h = hb(be);
	dao_kernel_args args;
	uint64_t t0 = 0;
	int rc = 0;

	h->last_stall = 0;
	if (!reached(h, after)) {
		t0 = now_ns();
		wait_reached(h, after);
		h->last_stall = now_ns() - t0;
		if (!h->last_stall)
			h->last_stall = 1;
	}
	/* Kernels run here, on the executor: compute numbers are its own. */
	*seq = ++h->submitted[DAO_ENGINE_COMPUTE];
	if (k->fn) {
		args = (dao_kernel_args){ .user = k->user, .ptrs = k->ptrs, .sizes = k->sizes,
					  .count = k->count };
		rc = k->fn(&args);
	}
	atomic_store(&h->completed[DAO_ENGINE_COMPUTE], *seq);
	return rc ? DAO_ERR_KERNEL : DAO_OK;
}

static dao_status host_wait(struct dao_backend *be, const dao_fence *f)
{
	struct host_backend *h = hb(be);

	if (!reached(h, f))
		wait_reached(h, f);
	return DAO_OK;
}

static uint64_t host_last_stall(struct dao_backend *be)
{
	return hb(be)->last_stall;
}

static void host_destroy(struct dao_backend *be)
{
	struct host_backend *h = hb(be);

	pthread_mutex_lock(&h->mu);
	h->stop = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->thread, NULL);
	if (h->arena)
		munmap(h->arena, h->arena_map);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	free(h->ring);
	dao_pin_close(h->pin);
	free(h);
}

static const struct dao_backend_ops host_ops = {
	.kernel_ptr = host_kernel_ptr,
	.host_alloc = host_alloc,
	.host_free = host_free,
	.copy = host_copy,
	.kernel = host_kernel,
	.wait = host_wait,
	.last_stall_ns = host_last_stall,
	.destroy = host_destroy,
	DAO_SEPARATE_MEMORY_OPS,
};

dao_status dao_backend_host_create(const char *name, uint64_t budget, struct dao_backend **out)
{
	struct host_backend *h;
	long page = sysconf(_SC_PAGESIZE);
	dao_status st = dao_budget_check(name, budget, HOST_UNIT);

	if (st != DAO_OK)
		return st;
	h = fault_calloc(1, sizeof(*h));
	if (!h)
		return DAO_ERR_NOMEM;
	h->base.ops = &host_ops;
	h->base.kind = DAO_BACKEND_HOST;
	h->base.holds_data = true;
	/* Copies are memcpy and kernels run on one host thread each: one
	 * core's nominal rates (the ratios are what the policy reads). */
	h->base.rates = (struct dao_rates){
		.h2d_bytes_per_s = 8e9,
		.d2h_bytes_per_s = 8e9,
		.flops_per_s = 20e9,
		.mem_bytes_per_s = 8e9,
	};
	h->base.device_memory = dao_host_memory_bytes();
	h->base.align = HOST_UNIT;
	h->base.contiguous = true;
	h->base.arena_bytes = dao_budget_round(budget, h->base.align);
	h->arena_map = (h->base.arena_bytes + (uint64_t)page - 1) & ~((uint64_t)page - 1);
	if (h->arena_map) {
		/* Untouched pages cost nothing: a generous budget is free
		 * until it is used. */
		h->arena = fault_mmap(NULL, h->arena_map, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (h->arena == MAP_FAILED) {
			dao_err("cannot map a host arena of %llu bytes",
				(unsigned long long)h->arena_map);
			free(h);
			return DAO_ERR_NOMEM;
		}
	}
	h->page = (uint64_t)page;
	if (dao_pin_open(&h->pin) != DAO_OK)
		h->pin = NULL;
	h->ring_cap = 256;
	h->ring = fault_malloc(h->ring_cap * sizeof(*h->ring));
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	if (!h->ring || fault_pthread_create(&h->thread, NULL, copy_main, h)) {
		if (h->arena)
			munmap(h->arena, h->arena_map);
		free(h->ring);
		dao_pin_close(h->pin);
		free(h);
		return DAO_ERR_NOMEM;
	}
	*out = &h->base;
	return DAO_OK;
}
