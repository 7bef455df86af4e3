/* SPDX-License-Identifier: MIT */
/*
 * memory.c - device memory, managed memory with its page table, pinned and
 * registered host memory, and the card's size.
 *
 * Device and managed memory are a memfd mapped twice: the address the
 * caller gets, and an alias only the model's stream workers use. Device
 * memory's caller mapping is PROT_NONE for good, so any host touch faults
 * and the model stops the process naming the address. Managed pages are
 * PROT_NONE there while resident on the card (or holding discarded bytes):
 * a host touch is a fault that migrates the page back, counted, as the
 * driver would; a host read of discarded bytes stops the process. They are
 * PROT_NONE too while a stream operation on them (copy, memset, prefetch,
 * discard) is enqueued and has not run, so that a host touch racing with
 * it is seen whether or not the stream got to it first (the checker
 * decides; a touch that conflicts with nothing opens the page until the
 * operations are done).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "model.h"

static struct sigaction old_segv;

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

struct cm_alloc *cm_find(const void *p)
{
	const char *c = p;

	for (struct cm_alloc *a = model.allocs; a; a = a->next)
		if (c >= a->base && c < a->base + (a->kind == CM_DEVICE || a->kind == CM_MANAGED
							   ? a->span
							   : a->size))
			return a;
	return NULL;
}

void cm_card_update(void)
{
	struct dao_cudamodel_counters *n = &model.n;

	n->managed_device_bytes = model.managed_dev_bytes;
	n->device_bytes = model.dev_alloc_bytes + model.managed_dev_bytes;
	if (n->device_bytes > n->device_bytes_peak)
		n->device_bytes_peak = n->device_bytes;
	if (n->managed_device_bytes > n->managed_device_peak)
		n->managed_device_peak = n->managed_device_bytes;
	if (n->device_bytes > model.card)
		cm_fail("the card holds %llu bytes, more than its %llu",
			(unsigned long long)n->device_bytes, (unsigned long long)model.card);
}

static bool page_closed(const struct cm_alloc *m, uint32_t i)
{
	return (m->page[i] & PG_CLOSED) || (m->pending[i] && !(m->page[i] & PG_OPEN));
}

void cm_protect(struct cm_alloc *m, uint32_t first, uint32_t n)
{
	uint32_t i = first, end = first + n;

	while (i < end) {
		bool closed = page_closed(m, i);
		uint32_t j = i + 1;

		while (j < end && page_closed(m, j) == closed)
			j++;
		if (mprotect(m->base + (uint64_t)i * CM_PAGE, (uint64_t)(j - i) * CM_PAGE,
			     closed ? PROT_NONE : PROT_READ | PROT_WRITE))
			cm_fail("mprotect of managed memory failed");
		i = j;
	}
}

void cm_pages_pending(struct cm_alloc *m, uint64_t off, uint64_t len, int delta)
{
	uint32_t first = (uint32_t)(off / CM_PAGE), n = (uint32_t)((off + len - 1) / CM_PAGE) - first + 1;

	for (uint32_t i = first; i < first + n; i++) {
		m->pending[i] += (uint32_t)delta;
		/* A new operation closes the page again; the last one done
		 * ends what a host touch opened. */
		if (delta > 0 || !m->pending[i])
			m->page[i] &= (uint8_t)~PG_OPEN;
	}
	cm_protect(m, first, n);
}

/* Runs of pages of [first, first + n) not yet where they are going. */
static void record_moves(struct cm_alloc *m, uint32_t first, uint32_t n, bool to_device,
			 int cause)
{
	uint32_t run = 0;

	for (uint32_t i = first; i <= first + n; i++) {
		if (i < first + n && !!(m->page[i] & PG_DEVICE) != to_device) {
			run++;
			continue;
		}
		if (run)
			cm_um_record(to_device ? CM_UM_HTOD : CM_UM_DTOH,
				     m->base + (uint64_t)(i - run) * CM_PAGE, (uint64_t)run * CM_PAGE,
				     cause);
		run = 0;
	}
}

void cm_pages_move(struct cm_alloc *m, uint32_t first, uint32_t n, bool to_device, int cause)
{
	if (cause != CM_CAUSE_NONE)
		record_moves(m, first, n, to_device, cause);
	for (uint32_t i = first; i < first + n; i++) {
		m->page[i] &= (uint8_t)~PG_EMPTY; /* populated where it goes */
		if (!!(m->page[i] & PG_DEVICE) == to_device)
			continue;
		if (to_device) {
			m->page[i] |= PG_DEVICE;
			model.managed_dev_bytes += CM_PAGE;
		} else {
			m->page[i] &= (uint8_t)~PG_DEVICE;
			model.managed_dev_bytes -= CM_PAGE;
		}
	}
	cm_protect(m, first, n);
	cm_card_update();
}

/* The driver evicts managed pages to make room; pages of keep stay. */
void cm_card_make_room(uint64_t bytes, const struct cm_alloc *keep)
{
	for (struct cm_alloc *a = model.allocs; a; a = a->next) {
		if (a == keep || a->kind != CM_MANAGED)
			continue;
		for (uint32_t i = 0; i < a->npages; i++) {
			if (model.dev_alloc_bytes + model.managed_dev_bytes + bytes <= model.card)
				return;
			if (a->page[i] & PG_DEVICE) {
				cm_pages_move(a, i, 1, false, CM_CAUSE_EVICTION);
				model.n.evictions++;
			}
		}
	}
}

void cm_device_access(struct cm_alloc *m, uint64_t off, uint64_t len)
{
	uint32_t first = (uint32_t)(off / CM_PAGE), last = (uint32_t)((off + len - 1) / CM_PAGE);

	for (uint32_t i = first; i <= last; i++) {
		uint8_t f = m->page[i];

		if (f & PG_DEVICE)
			continue;
		char *at = m->base + (uint64_t)i * CM_PAGE;

		if (f & PG_ACCESSED) {
			model.n.remote_accesses++; /* mapped: read over the bus */
			cm_um_record(CM_UM_REMOTE_MAP, at, CM_PAGE, CM_REMOTE_POLICY);
			continue;
		}
		model.n.device_faults++;
		cm_um_record(CM_UM_GPU_FAULT, at, 1, 0);
		if (f & PG_PREF_HOST) {
			model.n.remote_accesses++; /* the fault maps it, no move */
			cm_um_record(CM_UM_REMOTE_MAP, at, CM_PAGE, CM_REMOTE_POLICY);
			continue;
		}
		cm_card_make_room(CM_PAGE, m);
		if (model.dev_alloc_bytes + model.managed_dev_bytes + CM_PAGE > model.card) {
			model.n.remote_accesses++; /* no room at all: stays remote */
			cm_um_record(CM_UM_REMOTE_MAP, at, CM_PAGE, CM_REMOTE_OUT_OF_MEMORY);
			continue;
		}
		model.n.fault_migrations++;
		cm_pages_move(m, i, 1, true, CM_CAUSE_COHERENCE);
	}
}

static void on_segv(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	char *addr = si->si_addr;
	struct cm_alloc *a;
	struct cm_site site = { { 0 }, 1 };
	bool write = false;

#if defined(__x86_64__)
	site.pc[0] = (void *)uc->uc_mcontext.gregs[REG_RIP];
	write = uc->uc_mcontext.gregs[REG_ERR] & 2;
#else
	(void)uc;
	site.n = 0;
#endif
	pthread_mutex_lock(&model.lock);
	a = cm_find(addr);
	if (!a || (a->kind != CM_DEVICE && a->kind != CM_MANAGED)) {
		pthread_mutex_unlock(&model.lock);
		/* Not ours: whoever handled it before us. */
		if (old_segv.sa_flags & SA_SIGINFO && old_segv.sa_sigaction) {
			old_segv.sa_sigaction(sig, si, uc_);
		} else if (old_segv.sa_handler != SIG_IGN && old_segv.sa_handler != SIG_DFL) {
			old_segv.sa_handler(sig);
		} else {
			signal(SIGSEGV, SIG_DFL);
		}
		return;
	}
	if (a->kind == CM_DEVICE) {
		fprintf(stderr,
			"cudamodel: ERROR: host %s of device memory at %p (cudaMalloc'd %p, %llu "
			"bytes): the host must not touch device memory\n",
			write ? "write" : "read", (void *)addr, (void *)a->base,
			(unsigned long long)a->size);
		cm_site_print("host access at", &site);
		cm_site_print("allocated at", &a->site);
		_exit(CM_EXIT);
	}
	{
		uint64_t off = (uint64_t)(addr - a->base);
		uint32_t pg = (uint32_t)(off / CM_PAGE);

		if ((a->page[pg] & PG_POISON) && !write)
			cm_poison_check(a, off, 1, &site, "host read");
		/* No clock given: the host's, checked but not recorded (no
		 * allocation in a signal handler). */
		cm_check(addr, 1, write, -1, NULL, &site, write ? "host write" : "host read");
		/* A CPU page fault on a real driver: a migration back, or the
		 * driver populating a page without one. (A page closed only to
		 * catch reads of discarded bytes has its page: no fault.) */
		if (a->page[pg] & (PG_DEVICE | PG_EMPTY))
			cm_um_record(CM_UM_CPU_FAULT, addr, (uint64_t)(uintptr_t)site.pc[0], 0);
		if ((a->page[pg] & (PG_DEVICE | PG_EMPTY)) == PG_EMPTY)
			model.n.host_populations++;
		/* It conflicts with nothing pending: let it through. */
		if (a->pending[pg])
			a->page[pg] |= PG_OPEN;
		if (a->page[pg] & PG_POISON)
			cm_poison_drop_page(a, pg);
		a->page[pg] &= (uint8_t)~PG_EMPTY;
		if (a->page[pg] & PG_DEVICE) {
			model.n.host_faults++;
			model.n.fault_migrations++;
			cm_pages_move(a, pg, 1, false, CM_CAUSE_COHERENCE);
		} else {
			cm_protect(a, pg, 1);
		}
	}
	pthread_mutex_unlock(&model.lock);
}

void cm_mem_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
}

/* A memfd mapped for the caller (prot) and for the workers. */
static struct cm_alloc *map_twice(enum cm_kind kind, uint64_t size, int prot)
{
	struct cm_alloc *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->kind = kind;
	a->size = size;
	a->span = round_up(size, CM_PAGE);
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
		at = (char *)round_up((uint64_t)(uintptr_t)r, CM_DEV_ROUND);
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

static void unmap(struct cm_alloc *a)
{
	struct cm_alloc **pp = &model.allocs;

	while (*pp != a)
		pp = &(*pp)->next;
	*pp = a->next;
	cm_check_forget(a->base, a->kind == CM_REGISTERED || a->kind == CM_HOSTALLOC ? a->size
										       : a->span);
	if (a->kind == CM_REGISTERED)
		model.n.host_registered_bytes -= a->size;
	if (a->kind == CM_DEVICE || a->kind == CM_MANAGED) {
		munmap(a->base, a->span);
		munmap(a->alias, a->span);
		close(a->fd);
	} else if (a->kind == CM_HOSTALLOC) {
		munmap(a->base, round_up(a->size, 4096));
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

static void link_alloc(struct cm_alloc *a)
{
	cm_site_here(&a->site);
	a->next = model.allocs;
	model.allocs = a;
}

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
	need = round_up(size, CM_DEV_ROUND);
	cm_lock();
	cm_card_make_room(need, NULL);
	if (model.dev_alloc_bytes + model.managed_dev_bytes + need > model.card) {
		cm_unlock();
		fprintf(stderr, "cudamodel: cudaMalloc of %zu bytes: the card (%llu bytes) is full\n",
			size, (unsigned long long)model.card);
		return cm_ret(cudaErrorMemoryAllocation);
	}
	a = map_twice(CM_DEVICE, size, PROT_NONE);
	if (!a) {
		cm_unlock();
		return cm_ret(cudaErrorMemoryAllocation);
	}
	link_alloc(a);
	a->npages = (uint32_t)(need / CM_PAGE); /* what it holds of the card */
	model.dev_alloc_bytes += need;
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
	cm_lock();
	/* Nothing populated yet: every page's first host touch faults. */
	a = map_twice(CM_MANAGED, size, PROT_NONE);
	if (a) {
		a->npages = (uint32_t)(a->span / CM_PAGE);
		a->page = malloc(a->npages);
		a->poison = calloc(a->npages, sizeof(*a->poison));
		a->pending = calloc(a->npages, sizeof(*a->pending));
		if (!a->page || !a->poison || !a->pending)
			cm_fail("out of memory");
		memset(a->page, PG_EMPTY, a->npages);
		link_alloc(a);
		*p = a->base;
	}
	cm_unlock();
	return a ? cudaSuccess : cm_ret(cudaErrorMemoryAllocation);
}

/* cudaFree and cudaFreeHost synchronise the device first. */
static void sync_all(void)
{
	for (struct cm_stream *s = model.streams; s; s = s->next_all) {
		struct cm_vc vc = s->vc;

		cm_host_wait(s, s->enqueued, &vc);
	}
}

cudaError_t cudaFree(void *p)
{
	struct cm_alloc *a;

	if (!p)
		return cudaSuccess;
	cm_lock();
	a = cm_find(p);
	if (!a || a->base != p || (a->kind != CM_DEVICE && a->kind != CM_MANAGED)) {
		cm_unlock();
		return cm_misuse("cudaFree", cudaErrorInvalidValue,
				 "%p is not a live device or managed allocation", p);
	}
	sync_all();
	if (a->kind == CM_DEVICE)
		model.dev_alloc_bytes -= (uint64_t)a->npages * CM_PAGE;
	else
		for (uint32_t i = 0; i < a->npages; i++)
			if (a->page[i] & PG_DEVICE)
				model.managed_dev_bytes -= CM_PAGE;
	unmap(a);
	cm_card_update();
	cm_unlock();
	return cudaSuccess;
}

static bool overlaps_host(const char *p, uint64_t size)
{
	for (struct cm_alloc *a = model.allocs; a; a = a->next)
		if ((a->kind == CM_HOSTALLOC || a->kind == CM_REGISTERED) && p < a->base + a->size &&
		    a->base < p + size)
			return true;
	return false;
}

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
	struct cm_alloc *a;
	void *m;

	if (!p || !size || (flags & ~0xfu))
		return cm_misuse("cudaHostAlloc", cudaErrorInvalidValue,
				 "pointer %p, size %zu, flags 0x%x", (void *)p, size, flags);
	cm_init();
	if (model.no_pin)
		return cm_ret(cudaErrorMemoryAllocation);
	m = mmap(NULL, round_up(size, 4096), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	a = calloc(1, sizeof(*a));
	if (m == MAP_FAILED || !a) {
		if (m != MAP_FAILED)
			munmap(m, round_up(size, 4096));
		free(a);
		return cm_ret(cudaErrorMemoryAllocation);
	}
	a->kind = CM_HOSTALLOC;
	a->base = m;
	a->size = size;
	cm_lock();
	link_alloc(a);
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
	cm_lock();
	a = cm_find(p);
	if (!a || a->base != p || a->kind != CM_HOSTALLOC) {
		cm_unlock();
		return cm_misuse("cudaFreeHost", cudaErrorInvalidValue,
				 "%p is not from cudaHostAlloc", p);
	}
	sync_all();
	unmap(a);
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
	if (model.no_pin)
		return cm_ret(cudaErrorMemoryAllocation);
	cm_lock();
	if (cm_find(p) && cm_find(p)->kind != CM_REGISTERED && cm_find(p)->kind != CM_HOSTALLOC) {
		cm_unlock();
		return cm_misuse("cudaHostRegister", cudaErrorInvalidValue,
				 "%p is device or managed memory", p);
	}
	if (overlaps_host(p, size)) {
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
	link_alloc(a);
	model.n.host_registered_bytes += size;
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *p)
{
	struct cm_alloc *a;
	struct cm_site site;
	int actor;

	cm_lock();
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
	unmap(a);
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
	cm_lock();
	*total = model.card;
	*free_bytes = model.card - model.dev_alloc_bytes - model.managed_dev_bytes;
	cm_unlock();
	return cudaSuccess;
}

static bool location_ok(struct cudaMemLocation loc, bool host_allowed)
{
	switch (loc.type) {
	case cudaMemLocationTypeDevice:
		return loc.id >= 0 && loc.id < model.devices;
	case cudaMemLocationTypeHost:
	case cudaMemLocationTypeHostNumaCurrent:
		return host_allowed;
	case cudaMemLocationTypeHostNuma:
		return host_allowed && loc.id == 0;
	default:
		return false;
	}
}

cudaError_t cudaMemAdvise(const void *p, size_t count, enum cudaMemoryAdvise advice,
			  struct cudaMemLocation loc)
{
	struct cm_alloc *a;
	uint64_t off;
	uint32_t first, last;
	bool dev = loc.type == cudaMemLocationTypeDevice;

	cm_lock();
	a = cm_find(p);
	if (!a || a->kind != CM_MANAGED || !count || (uint64_t)((const char *)p - a->base) + count > a->size) {
		cm_unlock();
		return cm_misuse("cudaMemAdvise", cudaErrorInvalidValue,
				 "[%p, +%zu) is not inside one managed allocation", p, count);
	}
	if ((advice == cudaMemAdviseSetPreferredLocation && !location_ok(loc, true)) ||
	    ((advice == cudaMemAdviseSetAccessedBy || advice == cudaMemAdviseUnsetAccessedBy) &&
	     !(dev && location_ok(loc, false))) ||
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
