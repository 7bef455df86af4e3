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
#include "core/registry.h"
#include "trace/trace_writer.h"

/* A cell's operands are resolved without dev->mu: by looking, not stamping. */
_Static_assert(INBOX_OPERANDS <= LAUNCH_SCAN_MAX, "inbox operands are resolved by a scan");

static dao_status over_budget(const struct device *d, const struct launch *l, uint64_t need)
{
	dao_err("kernel %s needs %llu bytes of operands, more than the device budget of %llu",
		l->name ? l->name : "(unnamed)", (unsigned long long)need,
		(unsigned long long)d->budget);
	return DAO_ERR_BUDGET;
}

/* Index of r among opnd[0..*nopnd), added with no mode when new. A few
 * owners are compared one by one; more are stamped with the launch's
 * number (d->stamp, moved on by the caller), which needs dev->mu. */
static uint32_t owner_index(struct device *d, bool stamped, struct rec *r, struct opnd *opnd,
			    uint32_t *nopnd, uint64_t *need)
{
	uint32_t j;

	if (stamped) {
		if (r->stamp == d->stamp)
			return r->stamp_idx;
		r->stamp = d->stamp;
		r->stamp_idx = j = *nopnd;
	} else {
		for (j = 0; j < *nopnd; j++)
			if (opnd[j].rec == r)
				return j;
	}
	opnd[j] = (struct opnd){ .rec = r };
	(*nopnd)++;
	*need += r->asize;
	return j;
}

dao_status launch_resolve(struct ctx *c, const struct launch *l, struct karg *args,
			  struct opnd *opnd, uint32_t *nopnd)
{
	struct device *d = c->dev;
	bool stamped = l->count > LAUNCH_SCAN_MAX;
	uint64_t need = 0;
	dao_status st;

	*nopnd = 0;
	if (stamped)
		d->stamp++;
	for (size_t i = 0; i < l->count; i++) {
		uint8_t m = (uint8_t)l->ops[i].mode;
		struct slot *s;
		struct rec *r;

		st = slot_lookup(c, l->ops[i].buf, &s);
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
		opnd[owner_index(d, stamped, r, opnd, nopnd, &need)].mode |= m;
		args[i] = (struct karg){ .rec = r, .off = s->off, .len = s->len };
	}
	return need > d->budget ? over_budget(d, l, need) : DAO_OK;
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
	dao_trace_writer_kernel(d->trace, op->name, op->flops, ids, n[MODE_R],
				ids + op->nopnd, n[MODE_W], ids + 2 * op->nopnd, n[MODE_RW]);
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
	st = launch_resolve(c, l, op->args, op->opnd, &op->nopnd);
	if (st != DAO_OK) {
		op_release(d, op);
		return st;
	}
	op->kind = OP_KERNEL;
	op->ctx = c;
	op->fn = l->fn;
	op->user = l->user;
	op->flops = l->flops;
	op->nargs = (uint32_t)l->count;
	inbox_push(d, op);
	table_append(d, op);
	if (d->trace)
		trace_kernel(d, op);
	return DAO_OK;
}
