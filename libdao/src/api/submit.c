/* SPDX-License-Identifier: MIT */
/*
 * submit.c - the job's side: kernel launches (checked here, queued by
 * core/launch.c, through the inbox where it can), host accesses, syncs and
 * iteration marks, waiting where the API blocks.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "backend/backend.h"
#include "core/ask.h"
#include "core/inbox.h"
#include "core/launch.h"
#include "core/queue.h"
#include "api/enter.h"
#include "trace/trace_writer.h"

/* The three launch calls, inlined into each: a job's every kernel comes
 * through here. */
static inline __attribute__((always_inline)) dao_status
launch(dao_ctx h, const char *name, uint64_t flops, uint32_t flags, dao_kernel_fn fn, void *user,
       const dao_operand *ops, size_t count)
{
	const struct launch l = {
		.name = name,
		.namelen = name ? strnlen(name, LAUNCH_NAME_MAX) : 0,
		.flops = flops,
		.flags = flags,
		.fn = fn,
		.user = user,
		.ops = ops,
		.count = count,
	};
	enum inbox_result how = INBOX_LOCKED;
	struct ctx *c;
	dao_status st;

	if (flags & ~DAO_LAUNCH_FLAGS_ALL)
		return DAO_ERR_INVALID;
	if (count && !ops)
		return DAO_ERR_NULL;
	if (count > DAO_MAX_OPERANDS)
		return DAO_ERR_INVALID;
	for (size_t i = 0; i < count; i++)
		if (ops[i].mode != DAO_R && ops[i].mode != DAO_W && ops[i].mode != DAO_RW)
			return DAO_ERR_INVALID;
	st = ctx_enter_to_launch(h, &c);
	if (st != DAO_OK)
		return st;
	/* Host kernels, whose CPU work dwarfs a launch, take the locked
	 * path. */
	if (!flags && inbox_takes(c->dev, count, l.namelen)) {
		how = launch_through_inbox(c, &l, &st);
		if (how == INBOX_QUEUED) {
			ctx_leave_unlocked(c);
			return st;
		}
	}
	ctx_lock_device(c);
	if (how == INBOX_FULL)
		inbox_launch_uncount(c);
	st = launch_locked(c, &l);
	ctx_leave(c);
	return st;
}

dao_status dao_launch(dao_ctx ctx, dao_kernel_fn fn, void *user, const dao_operand *ops,
		      size_t count)
{
	return launch(ctx, NULL, 0, 0, fn, user, ops, count);
}

dao_status dao_launch_named(dao_ctx ctx, const char *name, uint64_t flops, dao_kernel_fn fn,
			    void *user, const dao_operand *ops, size_t count)
{
	return launch(ctx, name, flops, 0, fn, user, ops, count);
}

dao_status dao_launch_flags(dao_ctx ctx, const char *name, uint64_t flops, uint32_t flags,
			    dao_kernel_fn fn, void *user, const dao_operand *ops, size_t count)
{
	return launch(ctx, name, flops, flags, fn, user, ops, count);
}

/* A blocking host access to [off, off + len) of a buffer or view. */
static dao_status host_access(dao_ctx h, enum op_kind kind, dao_buf buf, uint64_t off, void *mem,
			      uint64_t len)
{
	struct opnd one = { 0 };
	struct op op = { .kind = kind, .blocking = true, .opnd = &one, .nopnd = 1 };
	struct ctx *c;
	struct slot *s;
	uint64_t end;
	dao_status st;

	if (len && !mem)
		return DAO_ERR_NULL;
	st = api_enter(h, API_QUEUE, NULL, &c, NULL);
	if (st != DAO_OK)
		return st;
	/* A failed context says so before the buffer is looked up; it
	 * still reads what is intact (dao.h). */
	st = kind == OP_READ ? DAO_OK : ctx_usable(c);
	if (st == DAO_OK)
		st = slot_lookup(c, buf, &s);
	if (st == DAO_OK && __builtin_add_overflow(off, len, &end))
		st = DAO_ERR_OVERFLOW;
	if (st == DAO_OK && end > s->len)
		st = DAO_ERR_RANGE;
	if (st != DAO_OK || !len) {
		api_leave(c);
		return st;
	}
	one.rec = s->rec;
	one.mode = kind == OP_READ ? MODE_R
		   : (s->off + off == 0 && len == s->rec->size) ? MODE_W
								   : MODE_RW;
	op.ctx = c;
	op.off = s->off + off;
	op.len = len;
	op.mem = mem;
	inbox_push(c->dev, &op);
	table_append(c->dev, &op);
	st = op_wait(c->dev, &op);
	api_leave(c);
	return st;
}

dao_status dao_write(dao_ctx ctx, dao_buf buf, uint64_t offset, const void *src, uint64_t len)
{
	return host_access(ctx, OP_WRITE, buf, offset, (void *)src, len);
}

dao_status dao_read(dao_ctx ctx, dao_buf buf, uint64_t offset, void *dst, uint64_t len)
{
	return host_access(ctx, OP_READ, buf, offset, dst, len);
}

dao_status dao_sync(dao_ctx h)
{
	struct op op = { .kind = OP_SYNC, .blocking = true };
	struct ctx *c;
	dao_status st = api_enter(h, API_QUEUE, NULL, &c, NULL);

	if (st != DAO_OK)
		return st;
	op.ctx = c;
	inbox_push(c->dev, &op);
	op_wait(c->dev, &op);
	st = c->failure ? c->failure : c->dev->failure;
	api_leave(c);
	return st;
}

dao_status dao_iteration(dao_ctx h)
{
	struct ctx *c;
	struct op *op = fault_calloc(1, sizeof(*op));
	dao_status st;

	if (!op)
		return DAO_ERR_NOMEM;
	st = api_enter(h, API_QUEUE, NULL, &c, NULL);
	if (st != DAO_OK) {
		free(op);
		return st;
	}
	op->kind = OP_ITER;
	op->ctx = c;
	queue_wait_turn(c->dev);
	ask_iterations_begin(c->dev);
	inbox_push(c->dev, op);
	if (c->dev->trace.out)
		dao_trace_writer_iteration(c->dev->trace.out, c->dev->trace.iter++);
	api_leave(c);
	return DAO_OK;
}

dao_status dao_stats_get(dao_ctx h, dao_stats *out)
{
	struct ctx *c;
	dao_status st;

	if (!out)
		return DAO_ERR_NULL;
	st = api_enter(h, API_LOOK, NULL, &c, NULL);
	if (st != DAO_OK)
		return st;
	*out = c->dev->stats;
	out->device_bytes = c->dev->res.arena.used;
	out->peak_device_bytes = c->dev->res.arena.peak;
	api_leave(c);
	return DAO_OK;
}

dao_status dao_info_get(dao_ctx h, dao_info *out)
{
	struct ctx *c;
	struct device *d;
	dao_status st;

	if (!out)
		return DAO_ERR_NULL;
	st = api_enter(h, API_LOOK, NULL, &c, NULL);
	if (st != DAO_OK)
		return st;
	d = c->dev;
	*out = (dao_info){
		.backend = d->kind,
		.policy = d->policy.id,
		.lookahead = d->lookahead,
		.flags = d->flags,
		.device_budget = d->budget,
		.host_budget = d->host.budget,
		.device_memory = d->be->device_memory,
		.backend_name = dao_backend_name_of(d->be),
		.policy_name = dao_policy_name(d->policy.id),
	};
	api_leave(c);
	return DAO_OK;
}
