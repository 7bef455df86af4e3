/* SPDX-License-Identifier: MIT */
/*
 * ops.c - the stream operations on memory: copies, memsets, prefetches and
 * discards. Arguments are checked and every range checked for races when
 * the call enqueues; the page table changes and the bytes move when the
 * stream's worker runs the operation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define POISON_BYTE 0xdb

/* Where the worker reaches [p, p + len) and which managed allocation
 * holds it; false when the range runs past its allocation. */
static bool resolve(const void *p, uint64_t len, struct cm_alloc **a, char **worker,
		    uint64_t *off)
{
	*a = cm_find(p);
	*off = 0;
	*worker = (char *)p;
	if (!*a)
		return true; /* pageable host memory */
	*off = (uint64_t)((const char *)p - (*a)->base);
	if (*off + len > (*a)->size || *off + len < *off)
		return false;
	if ((*a)->kind == CM_DEVICE || (*a)->kind == CM_MANAGED)
		*worker = (*a)->alias + *off;
	return true;
}

static bool on_device(const struct cm_alloc *a)
{
	return a && (a->kind == CM_DEVICE || a->kind == CM_MANAGED);
}

static bool on_host(const struct cm_alloc *a)
{
	return !a || a->kind != CM_DEVICE;
}

/* A copy or a memset: the worker's addresses, and the managed ranges to
 * fault in before the bytes move (device accesses). */
struct copy_op {
	struct cm_op op;
	bool set; /* a memset of byte, else a copy from src */
	char *dst;
	const char *src;
	uint64_t len;
	int byte;
	struct cm_alloc *dst_m, *src_m;
	uint64_t dst_off, src_off;
};

/* A prefetch, or a discard (moved without contents, then poisoned). */
struct pages_op {
	struct cm_op op;
	bool discard;
	struct cm_alloc *m;
	uint64_t off, len;
	bool to_device;
};

static void *op_new(size_t size, void (*run)(struct cm_op *op))
{
	struct cm_op *op = calloc(1, size);

	if (!op)
		cm_fail("out of memory");
	op->run = run;
	return op;
}

static void copy_run(struct cm_op *op_)
{
	struct copy_op *op = (struct copy_op *)op_;

	if (op->src_m) {
		cm_poison_check(op->src_m, op->src_off, op->len, &op->op.site, "device read");
		cm_device_access(op->src_m, op->src_off, op->len);
	}
	if (op->dst_m) {
		cm_device_access(op->dst_m, op->dst_off, op->len);
		cm_poison_clear(op->dst_m, op->dst_off, op->len);
	}
	pthread_mutex_unlock(&model.lock);
	if (op->set)
		memset(op->dst, op->byte, op->len);
	else
		memmove(op->dst, op->src, op->len);
	pthread_mutex_lock(&model.lock);
	if (op->src_m)
		cm_pages_pending(op->src_m, op->src_off, op->len, -1);
	if (op->dst_m)
		cm_pages_pending(op->dst_m, op->dst_off, op->len, -1);
}

static void pages_run(struct cm_op *op_)
{
	struct pages_op *op = (struct pages_op *)op_;
	uint32_t first = (uint32_t)(op->off / CM_PAGE);
	uint32_t n = (uint32_t)((op->len + CM_PAGE - 1) / CM_PAGE), moved = 0;

	if (op->to_device) {
		uint64_t need = 0;

		for (uint32_t i = first; i < first + n; i++)
			need += !(op->m->page[i] & PG_DEVICE) ? CM_PAGE : 0;
		cm_card_make_room(need, op->m);
	}
	/* Pages move in order while the card has room: one mprotect. */
	uint32_t upto = first + n;

	if (op->to_device) {
		uint64_t room = model.card - model.dev_alloc_bytes - model.managed_dev_bytes;

		for (uint32_t i = first; i < first + n; i++) {
			if (op->m->page[i] & PG_DEVICE)
				continue;
			if (room < CM_PAGE) {
				upto = i; /* the card is full of device memory */
				break;
			}
			room -= CM_PAGE;
			moved++;
		}
	} else {
		for (uint32_t i = first; i < first + n; i++)
			moved += !!(op->m->page[i] & PG_DEVICE);
	}
	if (upto > first)
		cm_pages_move(op->m, first, upto - first, op->to_device,
			      op->discard ? CM_CAUSE_NONE : CM_CAUSE_USER);
	if (!op->discard) {
		model.n.prefetch_migrations += moved;
	} else {
		/* Populated where they go, as a prefetch's are
		 * (cudaMemDiscardAndPrefetchBatchAsync is documented
		 * as a discard and a prefetch): whether the driver
		 * does is for dao-umprobe to find out. */
		model.n.discards += n;
		memset(op->m->alias + op->off, POISON_BYTE, op->len);
		cm_poison_set(op->m, op->off, op->len, &op->op.site);
	}
	cm_pages_pending(op->m, op->off, op->len, -1);
}

/* Enqueue op on s after checking its ranges; a pageable host operand
 * makes the call return only once the op is done, as the runtime's
 * staging does. */
static cudaError_t submit(struct cm_stream *s, struct cm_op *op, const void *rd, uint64_t rlen,
			  const void *wr, uint64_t wlen, bool wait, const char *what)
{
	struct cm_vc *host;
	int actor;

	cm_site_here(&op->site);
	host = cm_host_vc(&actor);
	cm_enqueue(s, op, actor, host);
	if (rd)
		cm_check(rd, rlen, false, s->actor, &s->vc, &op->site, what);
	if (wr)
		cm_check(wr, wlen, true, s->actor, &s->vc, &op->site, what);
	if (wait) {
		struct cm_vc vc = s->vc;

		cm_host_wait(s, op->index, &vc);
	}
	return cudaSuccess;
}

static cudaError_t copy(const char *call, void *dst, const void *src, size_t count,
			enum cudaMemcpyKind kind, cudaStream_t sh, bool sync)
{
	struct cm_alloc *da, *sa;
	struct cm_stream *s;
	struct copy_op *op;
	char *dw, *sw;
	uint64_t doff, soff;
	cudaError_t err;
	bool ok;

	cm_lock();
	s = cm_stream_of(sh, call, &err);
	if (!s) {
		cm_unlock();
		return cm_misuse(call, err, "stream %p is not a live stream", (void *)sh);
	}
	if (!count) {
		cm_unlock();
		return cudaSuccess;
	}
	if (!dst || !src) {
		cm_unlock();
		return cm_misuse(call, cudaErrorInvalidValue, "NULL pointer");
	}
	if (!resolve(dst, count, &da, &dw, &doff) || !resolve(src, count, &sa, &sw, &soff)) {
		cm_unlock();
		return cm_misuse(call, cudaErrorInvalidValue,
				 "%zu bytes from %p to %p run past an allocation", count, src, dst);
	}
	switch (kind) {
	case cudaMemcpyHostToHost: ok = on_host(da) && on_host(sa); break;
	case cudaMemcpyHostToDevice: ok = on_device(da) && on_host(sa); break;
	case cudaMemcpyDeviceToHost: ok = on_host(da) && on_device(sa); break;
	case cudaMemcpyDeviceToDevice: ok = on_device(da) && on_device(sa); break;
	case cudaMemcpyDefault: ok = true; break;
	default:
		cm_unlock();
		return cm_misuse(call, cudaErrorInvalidMemcpyDirection, "kind %d", (int)kind);
	}
	if (!ok) {
		cm_unlock();
		return cm_misuse(call, cudaErrorInvalidValue,
				 "kind %d does not match the pointers (%p to %p)", (int)kind, src, dst);
	}
	op = op_new(sizeof(*op), copy_run);
	op->dst = dw;
	op->src = sw;
	op->len = count;
	if (da && da->kind == CM_MANAGED) {
		op->dst_m = da;
		op->dst_off = doff;
	}
	if (sa && sa->kind == CM_MANAGED) {
		op->src_m = sa;
		op->src_off = soff;
		cm_pages_pending(sa, soff, count, 1);
	}
	if (op->dst_m)
		cm_pages_pending(da, doff, count, 1);
	submit(s, &op->op, src, count, dst, count, sync || !da || !sa, call);
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
			    cudaStream_t stream)
{
	return copy("cudaMemcpyAsync", dst, src, count, kind, stream, false);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	return copy("cudaMemcpy", dst, src, count, kind, NULL, true);
}

static cudaError_t set(const char *call, void *dst, int value, size_t count, cudaStream_t sh,
		       bool sync)
{
	struct cm_alloc *da;
	struct cm_stream *s;
	struct copy_op *op;
	uint64_t doff;
	cudaError_t err;
	char *dw;

	cm_lock();
	s = cm_stream_of(sh, call, &err);
	if (!s) {
		cm_unlock();
		return cm_misuse(call, err, "stream %p is not a live stream", (void *)sh);
	}
	if (!count) {
		cm_unlock();
		return cudaSuccess;
	}
	if (!dst || !resolve(dst, count, &da, &dw, &doff) || !on_device(da)) {
		cm_unlock();
		return cm_misuse(call, cudaErrorInvalidValue,
				 "[%p, +%zu) is not inside device or managed memory", dst, count);
	}
	op = op_new(sizeof(*op), copy_run);
	op->set = true;
	op->dst = dw;
	op->len = count;
	op->byte = value & 0xff;
	if (da->kind == CM_MANAGED) {
		op->dst_m = da;
		op->dst_off = doff;
		cm_pages_pending(da, doff, count, 1);
	}
	submit(s, &op->op, NULL, 0, dst, count, sync, call);
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *dst, int value, size_t count, cudaStream_t stream)
{
	return set("cudaMemsetAsync", dst, value, count, stream, false);
}

cudaError_t cudaMemset(void *dst, int value, size_t count)
{
	return set("cudaMemset", dst, value, count, NULL, true);
}

/* A managed range of whole pages (the model is stricter than the runtime,
 * which rounds: libdao promises whole 64 KiB granules). */
static struct cm_alloc *managed_pages(const void *p, size_t count, uint64_t *off)
{
	struct cm_alloc *a = cm_find(p);

	if (!a || a->kind != CM_MANAGED || !count)
		return NULL;
	*off = (uint64_t)((const char *)p - a->base);
	if (*off % CM_PAGE || (count % CM_PAGE && *off + count != a->size) ||
	    *off + count > a->size)
		return NULL;
	return a;
}

static bool location_valid(struct cudaMemLocation loc)
{
	return (loc.type == cudaMemLocationTypeDevice && loc.id >= 0 && loc.id < model.devices) ||
	       loc.type == cudaMemLocationTypeHost || loc.type == cudaMemLocationTypeHostNumaCurrent ||
	       (loc.type == cudaMemLocationTypeHostNuma && loc.id == 0);
}

cudaError_t cudaMemPrefetchAsync(const void *p, size_t count, struct cudaMemLocation loc,
				 unsigned int flags, cudaStream_t sh)
{
	struct cm_stream *s;
	struct cm_alloc *a;
	struct pages_op *op;
	cudaError_t err;
	uint64_t off;

	cm_lock();
	s = cm_stream_of(sh, "cudaMemPrefetchAsync", &err);
	if (!s) {
		cm_unlock();
		return cm_misuse("cudaMemPrefetchAsync", err, "stream %p", (void *)sh);
	}
	a = managed_pages(p, count, &off);
	if (!a || flags || !location_valid(loc)) {
		cm_unlock();
		return cm_misuse("cudaMemPrefetchAsync", cudaErrorInvalidValue,
				 "[%p, +%zu) to location type %d id %d, flags 0x%x: whole %llu-byte "
				 "pages of one managed allocation to a valid location wanted",
				 p, count, (int)loc.type, loc.id, flags,
				 (unsigned long long)CM_PAGE);
	}
	op = op_new(sizeof(*op), pages_run);
	op->m = a;
	op->off = off;
	op->len = count;
	op->to_device = loc.type == cudaMemLocationTypeDevice;
	/* A move keeps the bytes: it conflicts with writes only. */
	cm_pages_pending(a, off, count, 1);
	submit(s, &op->op, p, count, NULL, 0, false, "cudaMemPrefetchAsync");
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaMemDiscardAndPrefetchBatchAsync(void **dptrs, size_t *sizes, size_t count,
						struct cudaMemLocation *locs, size_t *loc_idx,
						size_t nlocs, unsigned long long flags,
						cudaStream_t sh)
{
	static const char call[] = "cudaMemDiscardAndPrefetchBatchAsync";
	struct cm_stream *s;
	cudaError_t err;
	size_t l = 0;

	cm_init();
	if (model.no_discard)
		return cm_ret(cudaErrorNotSupported);
	cm_lock();
	s = cm_stream_of(sh, call, &err);
	if (!s) {
		cm_unlock();
		return cm_misuse(call, err, "stream %p", (void *)sh);
	}
	if (!dptrs || !sizes || !count || !locs || !loc_idx || !nlocs || nlocs > count ||
	    loc_idx[0] != 0 || flags) {
		cm_unlock();
		return cm_misuse(call, cudaErrorInvalidValue, "malformed batch");
	}
	for (size_t i = 0; i < nlocs; i++)
		if (!location_valid(locs[i]) || (i && loc_idx[i] <= loc_idx[i - 1]) ||
		    loc_idx[i] >= count) {
			cm_unlock();
			return cm_misuse(call, cudaErrorInvalidValue, "bad location %zu", i);
		}
	for (size_t i = 0; i < count; i++) {
		uint64_t off;

		if (!managed_pages(dptrs[i], sizes[i], &off)) {
			cm_unlock();
			return cm_misuse(call, cudaErrorInvalidValue,
					 "range %zu, [%p, +%zu): whole pages of one managed "
					 "allocation wanted",
					 i, dptrs[i], sizes[i]);
		}
	}
	for (size_t i = 0; i < count; i++) {
		struct pages_op *op = op_new(sizeof(*op), pages_run);

		while (l + 1 < nlocs && loc_idx[l + 1] <= i)
			l++;
		op->m = managed_pages(dptrs[i], sizes[i], &op->off);
		op->discard = true;
		op->len = sizes[i];
		op->to_device = locs[l].type == cudaMemLocationTypeDevice;
		cm_pages_pending(op->m, op->off, op->len, 1);
		submit(s, &op->op, NULL, 0, dptrs[i], sizes[i], false, call);
	}
	cm_unlock();
	return cudaSuccess;
}

/* As many prefetches, each checked as cudaMemPrefetchAsync checks one. */
cudaError_t cudaMemPrefetchBatchAsync(void **dptrs, size_t *sizes, size_t count,
				      struct cudaMemLocation *locs, size_t *loc_idx, size_t nlocs,
				      unsigned long long flags, cudaStream_t sh)
{
	static const char call[] = "cudaMemPrefetchBatchAsync";
	size_t l = 0;

	if (!dptrs || !sizes || !count || !locs || !loc_idx || !nlocs || nlocs > count ||
	    loc_idx[0] != 0 || flags)
		return cm_misuse(call, cudaErrorInvalidValue, "malformed batch");
	for (size_t i = 1; i < nlocs; i++)
		if (loc_idx[i] <= loc_idx[i - 1] || loc_idx[i] >= count)
			return cm_misuse(call, cudaErrorInvalidValue, "bad location index %zu", i);
	for (size_t i = 0; i < count; i++) {
		cudaError_t err;

		while (l + 1 < nlocs && loc_idx[l + 1] <= i)
			l++;
		err = cudaMemPrefetchAsync(dptrs[i], sizes[i], locs[l], 0, sh);
		if (err != cudaSuccess)
			return err;
	}
	return cudaSuccess;
}
