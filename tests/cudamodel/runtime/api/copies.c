/* SPDX-License-Identifier: MIT */
/*
 * copies.c - cudaMemcpy(Async) and cudaMemset(Async). The call checks the
 * arguments (live stream, pointers inside their allocations, a copy kind
 * that matches them) and every byte range for races, and enqueues; the
 * stream's worker moves the bytes, a managed operand's pages faulted in
 * first as device accesses (a read of discarded bytes stops the process).
 * A pageable host operand makes the call return only once the copy is
 * done, as the runtime's staging does.
 */
#include <string.h>

#include "api/init.h"
#include "base/lock.h"
#include "base/report.h"
#include "state/allocs.h"
#include "state/pages.h"
#include "state/poison.h"
#include "state/streams.h"

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
	cm_unlock();
	if (op->set)
		memset(op->dst, op->byte, op->len);
	else
		memmove(op->dst, op->src, op->len);
	cm_lock();
	if (op->src_m)
		cm_pages_pending(op->src_m, op->src_off, op->len, -1);
	if (op->dst_m)
		cm_pages_pending(op->dst_m, op->dst_off, op->len, -1);
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

	cm_enter();
	s = cm_stream_of(sh, &err);
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
	op = cm_op_new(sizeof(*op), copy_run);
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
	cm_submit(s, &op->op, src, count, dst, count, sync || !da || !sa, call);
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

	cm_enter();
	s = cm_stream_of(sh, &err);
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
	op = cm_op_new(sizeof(*op), copy_run);
	op->set = true;
	op->dst = dw;
	op->len = count;
	op->byte = value & 0xff;
	if (da->kind == CM_MANAGED) {
		op->dst_m = da;
		op->dst_off = doff;
		cm_pages_pending(da, doff, count, 1);
	}
	cm_submit(s, &op->op, NULL, 0, dst, count, sync, call);
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
