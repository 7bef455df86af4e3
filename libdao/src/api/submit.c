/* SPDX-License-Identifier: MIT */
/*
 * submit.c - the job's side: queueing kernels and host accesses, appending
 * each one's uses to the access-pattern table, waiting where the API blocks.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/log.h"
#include "core/inbox.h"
#include "core/lock.h"
#include "core/queue.h"
#include "core/record.h"
#include "api/enter.h"
#include "trace/trace_writer.h"

static void trace_kernel(struct device *d, const struct op *op)
{
	uint64_t stackbuf[3 * 16], *ids = stackbuf;
	size_t n[4] = { 0 };

	if (op->nopnd > 16 && !(ids = malloc(3 * op->nopnd * sizeof(*ids)))) {
		dao_err("out of memory writing the trace");
		return;
	}
	for (uint32_t i = 0; i < op->nopnd; i++) {
		struct rec *r = op->opnd[i].rec;
		unsigned m = op->opnd[i].mode;

		trace_buffer_once(d, r);
		ids[(m - 1) * op->nopnd + n[m]++] = r->id;
	}
	/* A host kernel is a host access, which a trace does not replay:
	 * a comment (Documentation/trace-format.md). */
	(op->on_host ? dao_trace_writer_host_kernel : dao_trace_writer_kernel)(
		d->trace, op->name, op->flops, ids, n[MODE_R], ids + op->nopnd, n[MODE_W],
		ids + 2 * op->nopnd, n[MODE_RW]);
	if (ids != stackbuf)
		free(ids);
}

static dao_status context_usable(struct ctx *c)
{
	if (c->failure || c->dev->failure)
		return DAO_ERR_FAILED;
	return DAO_OK;
}

dao_status dao_launch(dao_ctx ctx, dao_kernel_fn fn, void *user, const dao_operand *ops,
		      size_t count)
{
	return dao_launch_named(ctx, NULL, 0, fn, user, ops, count);
}

static dao_status over_budget(const struct device *d, const char *name, uint64_t need)
{
	dao_err("kernel %s needs %llu bytes of operands, more than the device budget of %llu",
		name ? name : "(unnamed)", (unsigned long long)need,
		(unsigned long long)d->budget);
	return DAO_ERR_BUDGET;
}

/*
 * A full window, seen without dev->mu: while the executor runs on another
 * CPU, watch it finish ops until c's queue is down to half the window (the
 * hysteresis of queue_wait_window), without taking dev->mu, which the
 * executor needs after every op. false when the executor shares this CPU
 * or stops finishing ops for DEV_SPIN_NS: then the launch waits with
 * dev->mu, asleep.
 */
static bool window_spin(struct ctx *c)
{
	struct device *d = c->dev;
	int exec = __atomic_load_n(&d->exec_cpu, __ATOMIC_RELAXED), me = sched_getcpu();

	if (exec < 0 || me < 0 || exec == me)
		return false;
	for (;;) {
		uint64_t seen = __atomic_load_n(&d->q.finished, __ATOMIC_RELAXED);

		if (ctx_queued(c) <= d->lookahead / 2)
			return true;
		if (__atomic_load_n(&c->failure, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&d->failure, __ATOMIC_RELAXED) ||
		    !dev_spin_until_changed(&d->q.finished, seen, NULL, 0))
			return false;
	}
}

/*
 * A launch through the inbox (core/inbox.c), without dev->mu: the handles
 * are looked up under c->slot_mu, which every writer of them holds too,
 * and the cell is claimed and published before slot_mu is let go, so a
 * release that follows finds the op (inbox_drain_all). *locked is set when
 * the launch must take dev->mu instead: a failed context or device (the
 * locked path says so), a full window (it waits there) or a full ring
 * (then also *uncount: the op was counted into the window already).
 * Errors of the job's own (handles, budget) are reported here, nothing
 * queued.
 */
static dao_status launch_inbox(struct ctx *c, const char *name, size_t namelen, uint64_t flops,
			       dao_kernel_fn fn, void *user, const dao_operand *ops,
			       size_t count, bool *locked, bool *uncount)
{
	struct device *d = c->dev;
	struct karg args[INBOX_OPERANDS];
	struct inbox_opnd opnd[INBOX_OPERANDS];
	uint64_t need = 0, pos;
	uint32_t nopnd = 0;
	dao_status st = DAO_OK;
	struct inbox_cell *cell;

	if (ctx_window_full(c, d->lookahead) && !window_spin(c)) {
		*locked = true;
		return DAO_OK;
	}
	if (__atomic_load_n(&c->failure, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&d->failure, __ATOMIC_RELAXED)) {
		*locked = true;
		return DAO_OK;
	}
	pthread_mutex_lock(&c->slot_mu);
	for (size_t i = 0; i < count; i++) {
		uint8_t m = (uint8_t)ops[i].mode;
		struct slot *s;
		struct rec *r;
		uint32_t j;

		st = slot_lookup(c, ops[i].buf, &s);
		if (st != DAO_OK)
			goto out;
		r = s->rec;
		if (!s->len) {
			args[i] = (struct karg){ .rec = NULL };
			continue;
		}
		if (m == MODE_W && (s->off != 0 || s->len != r->size))
			m = MODE_RW;
		/* At most INBOX_OPERANDS: a look at each is cheaper than
		 * stamping the records, and writes no line the executor uses. */
		for (j = 0; j < nopnd && opnd[j].rec != r; j++)
			;
		if (j == nopnd) {
			opnd[nopnd++] = (struct inbox_opnd){ .rec = r, .mode = 0 };
			need += r->asize;
		}
		opnd[j].mode |= m;
		args[i] = (struct karg){ .rec = r, .off = s->off, .len = s->len };
	}
	if (need > d->budget) {
		st = over_budget(d, name, need);
		goto out;
	}
	/* Again under slot_mu, which the context's other launches take
	 * too: the window holds exactly as it does on the locked path. */
	if (ctx_window_full(c, d->lookahead)) {
		*locked = true;
		goto out;
	}
	/* Counted before the cell is written: a locked add after those
	 * writes would wait for all of them to reach the cache. */
	__atomic_fetch_add(&c->launched, 1, __ATOMIC_RELAXED);
	cell = inbox_claim(d, &pos);
	if (!cell) {
		*locked = *uncount = true;
		goto out;
	}
	/* What the op needs and no more: the side that holds dev->mu
	 * builds the op from it (inbox.c). */
	cell->fn = fn;
	cell->user = user;
	cell->ctx = c;
	cell->flops = flops;
	cell->nargs = (uint32_t)count;
	cell->nopnd = nopnd;
	cell->named = name != NULL;
	memcpy(cell->args, args, count * sizeof(*args));
	memcpy(cell->opnd, opnd, nopnd * sizeof(*opnd));
	if (name) {
		memcpy(cell->name, name, namelen);
		cell->name[namelen] = 0;
	}
	inbox_publish(d, pos);
out:
	pthread_mutex_unlock(&c->slot_mu);
	if (st == DAO_OK && !*locked)
		inbox_kick(d);
	return st;
}

/* The launch with dev->mu held (c entered and locked). */
static dao_status launch_locked(struct ctx *c, const char *name, size_t namelen, uint64_t flops,
				uint32_t flags, dao_kernel_fn fn, void *user,
				const dao_operand *ops, size_t count)
{
	struct device *d = c->dev;
	struct op *op;
	struct slot *s;
	uint64_t need = 0;
	uint32_t nopnd = 0;
	dao_status st;

	/* Bounded run-ahead: the lookahead window. */
	while ((st = context_usable(c)) == DAO_OK &&
	       ctx_queued(c) > d->lookahead)
		queue_wait_window(d, c);
	if (st == DAO_OK)
		queue_wait_turn(d);
	if (st != DAO_OK)
		return st;
	op = op_alloc(d, op_bytes(count, namelen));
	if (!op)
		return DAO_ERR_NOMEM;
	op_layout(op, count, name, namelen);
	d->stamp++;
	for (size_t i = 0; st == DAO_OK && i < count; i++) {
		struct rec *r;
		uint8_t m = (uint8_t)ops[i].mode;

		st = slot_lookup(c, ops[i].buf, &s);
		if (st != DAO_OK)
			break;
		r = s->rec;
		op->sizes[i] = s->len;
		if (!s->len) {
			/* Zero bytes name no memory: no pointer, no use of
			 * the owner, nothing to fetch or to keep. */
			op->args[i] = (struct karg){ .rec = NULL };
			continue;
		}
		/* Overwriting part of a buffer preserves the rest: for the
		 * owner that is an update. */
		if (m == MODE_W && (s->off != 0 || s->len != r->size))
			m = MODE_RW;
		if (r->stamp != d->stamp) {
			r->stamp = d->stamp;
			r->stamp_idx = nopnd;
			op->opnd[nopnd++] = (struct opnd){ .rec = r, .mode = 0 };
			need += r->asize;
		}
		op->opnd[r->stamp_idx].mode |= m;
		op->args[i] = (struct karg){ .rec = r, .off = s->off, .len = s->len };
	}
	/* A host kernel's operands take no room on the device. */
	if (st == DAO_OK && !(flags & DAO_LAUNCH_HOST) && need > d->budget)
		st = over_budget(d, name, need);
	if (st != DAO_OK) {
		op_release(d, op);
		return st;
	}
	op->kind = OP_KERNEL;
	op->on_host = flags & DAO_LAUNCH_HOST;
	op->ctx = c;
	op->fn = fn;
	op->user = user;
	op->flops = flops;
	op->nargs = (uint32_t)count;
	op->nopnd = nopnd;
	inbox_push(d, op);
	table_append(d, op);
	if (d->trace)
		trace_kernel(d, op);
	return DAO_OK;
}

dao_status dao_launch_named(dao_ctx h, const char *name, uint64_t flops, dao_kernel_fn fn,
			    void *user, const dao_operand *ops, size_t count)
{
	return dao_launch_flags(h, name, flops, 0, fn, user, ops, count);
}

dao_status dao_launch_flags(dao_ctx h, const char *name, uint64_t flops, uint32_t flags,
			    dao_kernel_fn fn, void *user, const dao_operand *ops, size_t count)
{
	struct ctx *c;
	size_t namelen = name ? strnlen(name, 255) : 0;
	bool locked = false, uncount = false;
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
	/* Through the inbox when the executor runs on another CPU. On this
	 * one, the two never run at once and nothing is gained by it, while
	 * turning the cell into an op costs the executor about 200
	 * instructions per kernel (Documentation/benchmarks.md). Host
	 * kernels, whose CPU work dwarfs a launch, take the locked path. */
	if (!flags && inbox_enabled(c->dev) && count <= INBOX_OPERANDS && namelen < INBOX_NAME_MAX &&
	    __atomic_load_n(&c->dev->exec_cpu, __ATOMIC_RELAXED) != sched_getcpu()) {
		st = launch_inbox(c, name, namelen, flops, fn, user, ops, count, &locked,
				  &uncount);
		if (!locked) {
			ctx_leave_unlocked(c);
			return st;
		}
	}
	ctx_lock_device(c);
	if (uncount) {
		/* Under dev->mu, where the executor decides whom to wake: a
		 * launch asleep on this window may have missed its turn. */
		__atomic_fetch_sub(&c->launched, 1, __ATOMIC_RELAXED);
		if (c->dev->done_waiters)
			pthread_cond_broadcast(&c->dev->done_cv);
	}
	st = launch_locked(c, name, namelen, flops, flags, fn, user, ops, count);
	ctx_leave(c);
	return st;
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
	/* A failed context says so before the buffer is looked up. */
	st = context_usable(c);
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
	struct op *op = calloc(1, sizeof(*op));
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
	inbox_push(c->dev, op);
	if (c->dev->trace)
		dao_trace_writer_iteration(c->dev->trace, c->dev->trace_iter++);
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
		.policy = d->policy,
		.lookahead = d->lookahead,
		.flags = d->flags,
		.device_budget = d->budget,
		.host_budget = d->host_budget,
		.device_memory = d->be->device_memory,
		.backend_name = d->be->ops->name,
		.policy_name = dao_policy_name(d->policy),
	};
	api_leave(c);
	return DAO_OK;
}
