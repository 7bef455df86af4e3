/* SPDX-License-Identifier: MIT */
/*
 * launch.c - a kernel launch: its operands resolved once, for both ways an
 * op reaches the queue (this file's locked path and the inbox's, inbox.c),
 * and the locked path itself.
 */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "core/inbox.h"
#include "core/launch.h"
#include "core/queue.h"
#include "core/record.h"
#include "core/handles.h"
#include "trace/trace_writer.h"

static dao_status over_budget(const struct device *d, const struct launch *l, uint64_t need)
{
	dao_err("kernel %s needs %llu bytes of operands, more than the device budget of %llu",
		l->name ? l->name : "(unnamed)", (unsigned long long)need,
		(unsigned long long)d->budget);
	return DAO_ERR_BUDGET;
}

/*
 * The one resolver of a launch's operands, for both ways to the queue
 * (inlined into each, as the launch path was before it was shared):
 * args[i] is operand i's owner record and view (rec NULL for zero bytes),
 * opnd[0..*nopnd) the distinct owners in first-use order with their modes
 * or'ed (a write of part of a buffer updates its owner). c->slot_mu or
 * dev->mu is held, dev_locked says which: with dev->mu duplicates are
 * found by stamping the records with the launch's number (d->recs.stamp), else
 * (at most INBOX_OPERANDS) by comparing with the owners found so far,
 * which writes nothing the executor reads. A bad handle's status, or
 * DAO_ERR_BUDGET (logged) when the owners do not fit in the budget
 * together; args and opnd are then meaningless.
 */
static inline __attribute__((always_inline)) dao_status
resolve(struct ctx *c, const struct launch *l, bool dev_locked, struct karg *args,
	struct opnd *opnd, uint32_t *nopnd)
{
	struct device *d = c->dev;
	const dao_operand *ops = l->ops;
	size_t count = l->count;
	uint64_t need = 0;
	uint32_t n = 0;

	if (dev_locked)
		d->recs.stamp++;
	for (size_t i = 0; i < count; i++) {
		uint8_t m = (uint8_t)ops[i].mode;
		struct slot *s;
		struct rec *r;
		uint32_t j;
		dao_status st = slot_lookup(c, ops[i].buf, &s);

		if (st != DAO_OK)
			return st;
		r = s->rec;
		if (!s->len) {
			/* Zero bytes name no memory: no pointer, no use of
			 * the owner, nothing to fetch or to keep. */
			args[i] = (struct karg){ .rec = NULL };
			continue;
		}
		/* Overwriting part of a buffer preserves the rest: for the
		 * owner that is an update. */
		if (m == MODE_W && (s->off != 0 || s->len != r->size))
			m = MODE_RW;
		if (dev_locked) {
			j = r->stamp.idx;
			if (r->stamp.seq != d->recs.stamp) {
				r->stamp.seq = d->recs.stamp;
				r->stamp.idx = j = n;
			}
		} else {
			for (j = 0; j < n && opnd[j].rec != r; j++)
				;
		}
		if (j == n) {
			opnd[n++] = (struct opnd){ .rec = r };
			need += r->asize;
		}
		opnd[j].mode |= m;
		args[i] = (struct karg){ .rec = r, .off = s->off, .len = s->len };
	}
	*nopnd = n;
	/* A host kernel's operands take no room on the device. */
	return need > d->budget && !(l->flags & DAO_LAUNCH_HOST) ? over_budget(d, l, need)
								  : DAO_OK;
}

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
		d->trace.out, op->name, op->flops, ids, n[MODE_R], ids + op->nopnd, n[MODE_W],
		ids + 2 * op->nopnd, n[MODE_RW]);
	if (ids != stackbuf)
		free(ids);
}

dao_status launch_locked(struct ctx *c, const struct launch *l)
{
	struct device *d = c->dev;
	struct op *op;
	dao_status st;

	/* Bounded run-ahead: the lookahead window. */
	while ((st = ctx_usable(c)) == DAO_OK && ctx_queued(c) > d->lookahead)
		queue_wait_window(d, c);
	if (st != DAO_OK)
		return st;
	queue_wait_turn(d);
	op = op_alloc(d, op_bytes(l->count, l->namelen));
	if (!op)
		return DAO_ERR_NOMEM;
	op_layout(op, l->count, l->name, l->namelen);
	st = resolve(c, l, true, op->args, op->opnd, &op->nopnd);
	if (st != DAO_OK) {
		op_release(d, op);
		return st;
	}
	op->kind = OP_KERNEL;
	op->on_host = l->flags & DAO_LAUNCH_HOST;
	op->ctx = c;
	op->fn = l->fn;
	op->user = l->user;
	op->flops = l->flops;
	op->nargs = (uint32_t)l->count;
	inbox_push(d, op);
	table_append(d, op);
	if (d->trace.out)
		trace_kernel(d, op);
	return DAO_OK;
}

enum inbox_result launch_through_inbox(struct ctx *c, const struct launch *l, dao_status *st)
{
	struct karg args[INBOX_OPERANDS];
	struct opnd opnd[INBOX_OPERANDS];
	enum inbox_result how = inbox_launch_begin(c);
	uint32_t nopnd;

	*st = DAO_OK;
	if (how != INBOX_OPEN)
		return how;
	*st = resolve(c, l, false, args, opnd, &nopnd);
	if (*st != DAO_OK) {
		inbox_launch_abort(c); /* the job's error: nothing queued */
		return INBOX_QUEUED;
	}
	return inbox_launch_commit(c, l, args, opnd, nopnd);
}
