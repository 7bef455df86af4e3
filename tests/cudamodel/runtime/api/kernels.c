/* SPDX-License-Identifier: MIT */
/*
 * kernels.c - library kernels as stream operations (cudamodel_lib.h): the
 * runtime model's side of the cuBLAS and cuSOLVER models, entry points
 * like the runtime's (the worker runs them through cm_op.run).
 */
#include <stdlib.h>
#include <string.h>

#include "api/init.h"
#include "base/lock.h"
#include "base/report.h"
#include "base/site.h"
#include "check/races.h"
#include "cudamodel_lib.h"
#include "state/allocs.h"
#include "state/pages.h"
#include "state/poison.h"
#include "state/streams.h"

struct kernel_operand {
	struct cm_alloc *a;
	uint64_t off, len;
	enum dao_cudamodel_access access;
};

struct kernel_op {
	struct cm_op op;
	dao_cudamodel_kernel_fn fn;
	void *arg;
	unsigned count;
	struct kernel_operand ops[DAO_CUDAMODEL_KERNEL_OPERANDS];
};

/* On the stream's worker, lock held: the operands' pages as a copy's,
 * then the function on the worker's view of them, lock dropped. */
static void kernel_run(struct cm_op *op)
{
	struct kernel_op *k = (struct kernel_op *)op;
	void *ptrs[DAO_CUDAMODEL_KERNEL_OPERANDS];

	for (unsigned i = 0; i < k->count; i++) {
		struct kernel_operand *o = &k->ops[i];

		ptrs[i] = o->a ? o->a->alias + o->off : NULL;
		if (!o->a || o->a->kind != CM_MANAGED)
			continue;
		if (o->access != DAO_CUDAMODEL_WRITE)
			cm_poison_check(o->a, o->off, o->len, &op->site, "device read");
		cm_device_access(o->a, o->off, o->len);
		if (o->access != DAO_CUDAMODEL_READ)
			cm_poison_clear(o->a, o->off, o->len);
	}
	cm_unlock();
	k->fn(k->arg, ptrs);
	cm_lock();
	free(k->arg);
}

/* The operand's allocation: device or managed memory holding all of it. */
static bool operand_of(const struct dao_cudamodel_operand *in, struct kernel_operand *out)
{
	struct cm_alloc *a;

	/* An empty operand is never touched (a NULL pointer for the kernel). */
	if (!in->bytes)
		return true;
	a = cm_find(in->ptr);
	if (!a || (a->kind != CM_DEVICE && a->kind != CM_MANAGED))
		return false;
	out->a = a;
	out->off = (uint64_t)((const char *)in->ptr - a->base);
	out->len = in->bytes;
	out->access = in->access;
	return out->off + out->len <= a->size && out->off + out->len >= out->off;
}

cudaError_t dao_cudamodel_kernel(cudaStream_t sh, const char *name, dao_cudamodel_kernel_fn fn,
				 const void *arg, size_t arg_bytes,
				 const struct dao_cudamodel_operand *ops, unsigned count)
{
	struct cm_stream *s;
	struct kernel_op *k;
	cudaError_t err;

	if (!fn || count > DAO_CUDAMODEL_KERNEL_OPERANDS || (count && !ops) ||
	    (arg_bytes && !arg))
		return cm_misuse(name, cudaErrorInvalidValue, "malformed kernel (%u operands)",
				 count);
	k = cm_op_new(sizeof(*k), kernel_run);
	if (!(k->arg = malloc(arg_bytes ? arg_bytes : 1)))
		cm_fail("out of memory");
	memcpy(k->arg, arg, arg_bytes);
	k->fn = fn;
	k->count = count;
	cm_enter();
	s = cm_stream_of(sh, &err);
	for (unsigned i = 0; s && i < count; i++) {
		if (operand_of(&ops[i], &k->ops[i]))
			continue;
		cm_unlock();
		free(k->arg);
		free(k);
		return cm_misuse(name, cudaErrorInvalidValue,
				 "operand %u, [%p, +%llu), is not inside one device or managed "
				 "allocation",
				 i, ops[i].ptr, (unsigned long long)ops[i].bytes);
	}
	if (!s) {
		cm_unlock();
		free(k->arg);
		free(k);
		return cm_misuse(name, err, "stream %p is not a live stream", (void *)sh);
	}
	cm_site_here(&k->op.site);
	cm_enqueue(s, &k->op);
	for (unsigned i = 0; i < count; i++)
		cm_check(ops[i].ptr, ops[i].bytes, ops[i].access != DAO_CUDAMODEL_READ, s->actor,
			 &s->vc, &k->op.site, name);
	cm_unlock();
	return cudaSuccess;
}

void dao_cudamodel_refuse(const char *call, const char *fmt, ...)
{
	struct cm_site site;
	va_list ap;

	cm_site_here(&site);
	va_start(ap, fmt);
	cm_vmisuse(call, cudaErrorInvalidValue, &site, fmt, ap);
	va_end(ap);
}
