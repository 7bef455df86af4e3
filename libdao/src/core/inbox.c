/* SPDX-License-Identifier: MIT */
/*
 * inbox.c - kernels launched without dev->mu.
 *
 * When the job's thread and the executor run on different CPUs, taking
 * dev->mu once per kernel on both sides makes their sections run one after
 * the other. A launch instead validates its operands under its context's
 * slot_mu (which every writer of the handle slots also holds, so no handle
 * it looked up can be released before its cell is claimed), claims a
 * cell of this ring, writes what it resolved into it and publishes it. The
 * executor, every entry point that takes dev->mu and every op queued under
 * it first turn the published cells into ops and move those into the
 * queue and the table, in the order of the claims. Documentation/design.md
 * (Locking) lists the races and their outcomes.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/inbox.h"
#include "core/lock.h"
#include "core/queue.h"

/* Enough for the default window (64 ops) of a few contexts; a deeper
 * window than the ring holds takes dev->mu once the ring is full. */
#define INBOX_CELLS 256u


bool inbox_init(struct device *d)
{
	struct dev_inbox *ib = &d->inbox;
	size_t bytes = op_bytes(INBOX_OPERANDS, INBOX_NAME_MAX - 1);

	if (d->flags & DAO_CONFIG_DETERMINISTIC || d->trace.out)
		return true; /* every launch takes dev->mu: its turn, its trace line */
	ib->op_bytes = (bytes + 63) & ~(size_t)63;
	ib->seq = aligned_alloc(64, INBOX_CELLS * INBOX_SEQ_STRIDE * sizeof(*ib->seq));
	/* Not zeroed: a claim and a drain fill in what they use, and pages
	 * are touched only as their cells are. */
	ib->cell = aligned_alloc(64, INBOX_CELLS * sizeof(*ib->cell));
	ib->ops = aligned_alloc(64, INBOX_CELLS * ib->op_bytes);
	if (!ib->seq || !ib->cell || !ib->ops) {
		inbox_destroy(d);
		return false;
	}
	for (uint32_t i = 0; i < INBOX_CELLS; i++)
		ib->seq[i * INBOX_SEQ_STRIDE] = i;
	ib->cells = INBOX_CELLS;
	return true;
}

void inbox_destroy(struct device *d)
{
	free(d->inbox.seq);
	free(d->inbox.cell);
	free(d->inbox.ops);
	d->inbox.seq = NULL;
	d->inbox.cell = NULL;
	d->inbox.ops = NULL;
	d->inbox.cells = 0;
}

static struct op *op_of(const struct dev_inbox *ib, uint64_t pos)
{
	return (struct op *)(void *)(ib->ops + (size_t)(pos & (ib->cells - 1)) * ib->op_bytes);
}

/*
 * Cell p is free when its sequence number is p, published when p + 1, and
 * still holds the op of p - cells (not finished yet) when below p. The
 * acquire load pairs with inbox_retire's release: the executor is done
 * with the cell's old op before this thread writes the new one.
 */
static struct inbox_cell *inbox_claim(struct device *d, uint64_t *out)
{
	struct dev_inbox *ib = &d->inbox;
	uint64_t pos = __atomic_load_n(&ib->tail, __ATOMIC_RELAXED);

	for (;;) {
		uint64_t s = __atomic_load_n(inbox_seq(ib, pos), __ATOMIC_ACQUIRE);

		if (s == pos) {
			if (__atomic_compare_exchange_n(&ib->tail, &pos, pos + 1, true,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
				break;
		} else if (s < pos) {
			return NULL; /* full */
		} else {
			pos = __atomic_load_n(&ib->tail, __ATOMIC_RELAXED);
		}
	}
	*out = pos;
	return &ib->cell[pos & (ib->cells - 1)];
}

/* Sequentially consistent, like the executor's exec_waiting store and its
 * look at the cells before it sleeps (executor.c): of the two, at least
 * one sees the other's store, so a published op never waits for a sleeping
 * executor. */
static void inbox_publish(struct device *d, uint64_t pos)
{
	struct dev_inbox *ib = &d->inbox;
	const char *next = (const char *)&ib->cell[(pos + 1) & (ib->cells - 1)];

	__atomic_store_n(inbox_seq(ib, pos), pos + 1, __ATOMIC_SEQ_CST);
	/* The next launch writes the next cell, which the other side last
	 * read: ask for its lines now, so that the launch's writes need not
	 * wait for them (a prefetch: no effect on what anyone sees). */
	for (size_t off = 0; off < sizeof(struct inbox_cell); off += 64)
		prefetch_for_write(next + off);
}

static void inbox_kick(struct device *d)
{
	int me = sched_getcpu();

	/* Where the executor looks for the next push (executor.c). */
	if (__atomic_load_n(&d->wake.push_cpu, __ATOMIC_RELAXED) != me)
		__atomic_store_n(&d->wake.push_cpu, me, __ATOMIC_RELAXED);
	if (__atomic_load_n(&d->wake.exec_waiting, __ATOMIC_SEQ_CST)) {
		/* The push wakes the executor (queue_push); while this
		 * thread holds the lock, the executor is either asleep
		 * already or has yet to look at the cells again. */
		dev_lock(d);
		inbox_drain(d);
		dev_unlock(d);
	}
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
	int exec = __atomic_load_n(&d->wake.exec_cpu, __ATOMIC_RELAXED), me = sched_getcpu();

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

static bool failed(const struct ctx *c)
{
	return __atomic_load_n(&c->failure, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&c->dev->failure, __ATOMIC_RELAXED);
}

enum inbox_result inbox_launch_begin(struct ctx *c)
{
	if ((ctx_window_full(c, c->dev->lookahead) && !window_spin(c)) || failed(c))
		return INBOX_LOCKED;
	pthread_mutex_lock(&c->slot_mu);
	return INBOX_OPEN;
}

void inbox_launch_abort(struct ctx *c)
{
	pthread_mutex_unlock(&c->slot_mu);
}

enum inbox_result inbox_launch_commit(struct ctx *c, const struct launch *l,
				      const struct karg *args, const struct opnd *opnd,
				      uint32_t nopnd)
{
	struct device *d = c->dev;
	struct inbox_cell *cell;
	uint64_t pos;

	/* Again under slot_mu, which the context's other launches take
	 * too: the window holds exactly as it does on the locked path. */
	if (ctx_window_full(c, d->lookahead)) {
		pthread_mutex_unlock(&c->slot_mu);
		return INBOX_LOCKED;
	}
	/* Counted before the cell is written: a locked add after those
	 * writes would wait for all of them to reach the cache. */
	__atomic_fetch_add(&c->launched, 1, __ATOMIC_RELAXED);
	cell = inbox_claim(d, &pos);
	if (!cell) {
		pthread_mutex_unlock(&c->slot_mu);
		return INBOX_FULL;
	}
	/* What the op needs and no more: the side that holds dev->mu
	 * builds the op from it (op_from_cell). */
	cell->fn = l->fn;
	cell->user = l->user;
	cell->ctx = c;
	cell->flops = l->flops;
	cell->nargs = (uint32_t)l->count;
	cell->nopnd = nopnd;
	cell->named = l->name != NULL;
	memcpy(cell->args, args, l->count * sizeof(*args));
	memcpy(cell->opnd, opnd, nopnd * sizeof(*opnd));
	if (l->name) {
		memcpy(cell->name, l->name, l->namelen);
		cell->name[l->namelen] = 0;
	}
	inbox_publish(d, pos);
	pthread_mutex_unlock(&c->slot_mu);
	inbox_kick(d);
	return INBOX_QUEUED;
}

void inbox_launch_uncount(struct ctx *c)
{
	/* Under dev->mu, where the executor decides whom to wake: a launch
	 * asleep on this window may have missed its turn. */
	__atomic_fetch_sub(&c->launched, 1, __ATOMIC_RELAXED);
	if (c->dev->waiters.done)
		pthread_cond_broadcast(&c->dev->done_cv);
}

/* The op of a published cell, in the memory only this side writes: the
 * cell holds the op's own arrays (launch_resolve's form), copied as they
 * are. */
static struct op *op_from_cell(struct dev_inbox *ib, uint64_t pos)
{
	const struct inbox_cell *cl = &ib->cell[pos & (ib->cells - 1)];
	struct op *op = op_of(ib, pos);

	memset(op, 0, sizeof(*op));
	op_layout(op, cl->nargs, cl->named ? cl->name : NULL,
		  cl->named ? strnlen(cl->name, INBOX_NAME_MAX - 1) : 0);
	op->kind = OP_KERNEL;
	op->ctx = cl->ctx;
	op->fn = cl->fn;
	op->user = cl->user;
	op->flops = cl->flops;
	op->nargs = cl->nargs;
	op->nopnd = cl->nopnd;
	op->in_inbox = true;
	op->ticket = pos;
	memcpy(op->args, cl->args, cl->nargs * sizeof(*op->args));
	memcpy(op->opnd, cl->opnd, cl->nopnd * sizeof(*op->opnd));
	return op;
}

void inbox_drain_slow(struct device *d)
{
	struct dev_inbox *ib = &d->inbox;

	for (;;) {
		uint64_t pos = ib->head;
		struct op *op;

		if (__atomic_load_n(inbox_seq(ib, pos), __ATOMIC_SEQ_CST) != pos + 1)
			return;
		op = op_from_cell(ib, pos);
		ib->head = pos + 1;
		queue_push(d, op);
		table_append(d, op);
	}
}

/* A claim is a few hundred instructions that wait for nothing, so this
 * waits only for threads that are running, or preempted: then yield, and
 * after a while sleep, which also lets a claimer of lower priority than
 * this thread run on its CPU (a yield would not). */
void inbox_drain_all(struct device *d)
{
	struct dev_inbox *ib = &d->inbox;
	uint64_t until;

	if (!ib->cells)
		return;
	until = __atomic_load_n(&ib->tail, __ATOMIC_SEQ_CST);
	for (unsigned i = 1;; i++) {
		inbox_drain(d);
		if (ib->head >= until)
			return;
		if (i >= 4096) {
			struct timespec pause = { .tv_nsec = 50000 };

			nanosleep(&pause, NULL);
		} else if (i % 64 == 0) {
			sched_yield();
		} else {
			cpu_relax();
		}
	}
}

void inbox_push(struct device *d, struct op *op)
{
	inbox_drain_all(d);
	queue_push(d, op);
}

void inbox_retire(struct device *d, struct op *op)
{
	struct dev_inbox *ib = &d->inbox;

	__atomic_store_n(inbox_seq(ib, op->ticket), op->ticket + ib->cells,
			 __ATOMIC_RELEASE);
}
