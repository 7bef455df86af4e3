/* SPDX-License-Identifier: MIT */
/*
 * queue.c - the device's queue of ops: the job's threads push, the executor
 * pops (executor.c); blocking calls sleep until their op is done.
 */
#include <stdlib.h>
#include <string.h>

#include "core/ask.h"
#include "core/lock.h"
#include "core/queue.h"
#include "core/victim.h"

/* Ops up to this size (a kernel of up to 8 distinct operands with a name
 * of up to 63 characters) are recycled; a device keeps at most OP_CACHE_MAX
 * of them, a window's worth at the default lookahead and then some. */
#define OP_CACHE_BYTES                                                                     \
	(sizeof(struct op) +                                                              \
	 8 * (sizeof(struct karg) + sizeof(struct opnd) + sizeof(void *) + sizeof(uint64_t)) + 64)
#define OP_CACHE_MAX 256u

struct op *op_alloc(struct device *d, size_t bytes)
{
	struct op *op;

	if (bytes > OP_CACHE_BYTES)
		return calloc(1, bytes);
	op = d->q.free_ops;
	if (op) {
		d->q.free_ops = op->next;
		d->q.nfree--;
		/* Only the header needs zeroes: the launch fills in every
		 * operand it uses. */
		memset(op, 0, sizeof(*op));
	} else {
		op = calloc(1, OP_CACHE_BYTES);
		if (!op)
			return NULL;
	}
	op->cached = true;
	return op;
}

void op_release(struct device *d, struct op *op)
{
	if (!op->cached || d->q.nfree >= OP_CACHE_MAX) {
		free(op);
		return;
	}
	op->next = d->q.free_ops;
	d->q.free_ops = op;
	d->q.nfree++;
}

size_t op_bytes(size_t count, size_t namelen)
{
	return sizeof(struct op) +
	       count * (sizeof(struct karg) + sizeof(struct opnd) + sizeof(void *) +
			sizeof(uint64_t)) +
	       namelen + 1;
}

void op_layout(struct op *op, size_t count, const char *name, size_t namelen)
{
	char *p;

	op->args = (struct karg *)(op + 1);
	op->opnd = (struct opnd *)(op->args + count);
	op->ptrs = (void **)(op->opnd + count);
	op->sizes = (uint64_t *)(op->ptrs + count);
	p = (char *)(op->sizes + count);
	if (name)
		memcpy(p, name, namelen);
	p[namelen] = 0;
	op->name = name ? p : NULL;
}

void op_cache_destroy(struct device *d)
{
	while (d->q.free_ops) {
		struct op *op = d->q.free_ops;

		d->q.free_ops = op->next;
		free(op);
	}
	d->q.nfree = 0;
}

/* The device whose executor this thread is; NULL on every other thread. */
static __thread const struct device *consumer_of;

void queue_consumer_set(const struct device *d)
{
	consumer_of = d;
}

bool queue_consumer_is_current(const struct device *d)
{
	return consumer_of == d;
}

void queue_push(struct device *d, struct op *op)
{
	op->seq = d->q.next_seq++;
	op->next = NULL;
	if (d->q.tail)
		d->q.tail->next = op;
	else
		d->q.head = op;
	d->q.tail = op;
	d->q.queued++;
	/* A launch through the inbox counted its op before publishing it. */
	if (op->ctx && !op->in_inbox)
		__atomic_fetch_add(&op->ctx->launched, 1, __ATOMIC_RELAXED);
	if (op->blocking)
		d->q.flush++;
	/* Relaxed: the executor's poll only needs to see it change. */
	__atomic_store_n(&d->q.pushed, d->q.pushed + 1, __ATOMIC_RELAXED);
	if (!op->in_inbox)
		__atomic_store_n(&d->wake.push_cpu, __atomic_load_n(&d->mu_cpu, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
	if (!d->res.pf_op) {
		d->res.pf_op = op;
		d->res.pf_idx = 0;
	}
	if (__atomic_load_n(&d->wake.exec_waiting, __ATOMIC_SEQ_CST))
		pthread_cond_signal(&d->work_cv);
}

/* Append op's uses to each record's list of upcoming uses. */
void table_append(struct device *d, struct op *op)
{
	for (uint32_t i = 0; i < op->nopnd; i++) {
		struct opnd *u = &op->opnd[i];
		struct rec *r = u->rec;

		u->op = op;
		u->next_use = NULL;
		if (r->uses.tail) {
			r->uses.tail->next_use = u;
		} else {
			r->uses.head = u;
			/* Its next use just became known: re-rank it. */
			if (r->blk && !r->pin)
				victim_update(d, r);
		}
		r->uses.tail = u;
	}
	ask_queued(d, op);
}

/* Every caller waits for an op to finish and looks again after this
 * returns, so returning after any op finished is enough. A waiter whose
 * ops run on another CPU watches the count of finished ops for a while
 * before it sleeps: ops take a microsecond or less, and being woken across
 * CPUs costs several. */
void wait_done(struct device *d)
{
	uint64_t seen = d->q.finished;
	int exec = __atomic_load_n(&d->wake.exec_cpu, __ATOMIC_RELAXED);
	int me = sched_getcpu();

	if (d->q.queued && exec >= 0 && me >= 0 && exec != me) {
		dev_unlock(d);
		dev_spin_until_changed(&d->q.finished, seen, NULL, 0);
		dev_lock(d);
		if (d->q.finished != seen)
			return;
	}
	d->waiters.done++;
	dev_cond_wait(d, &d->done_cv);
	d->waiters.done--;
}

void queue_wait_turn(struct device *d)
{
	/* A kernel function's own calls run at a fixed point of the op stream
	 * already, and waiting for the executor there would wait for itself. */
	if (!(d->flags & DAO_CONFIG_DETERMINISTIC) || queue_consumer_is_current(d))
		return;
	/* The executor runs whenever the window is full or someone waits:
	 * let it reach that point before the job changes anything. */
	while (d->q.executing || queue_window_full(d) || (d->q.head && d->q.flush))
		wait_done(d);
}

dao_status op_wait(struct device *d, struct op *op)
{
	while (!op->done)
		wait_done(d);
	return op->result;
}

void queue_wait_window(struct device *d, struct ctx *c)
{
	int me = sched_getcpu();

	/* Where the window's sleepers are, for queue_op_finished: one CPU,
	 * or -1 when they are on several (or it is not known). */
	if (!c->window_waiters)
		c->window_cpu = me;
	else if (c->window_cpu != me)
		c->window_cpu = -1;
	c->window_waiters++;
	d->waiters.window++;
	wait_done(d);
	d->waiters.window--;
	c->window_waiters--;
}

/*
 * Waking a sleeping thread costs microseconds when it sleeps on another
 * CPU: a launch waiting for a full window is woken once its queue is down
 * to half the window (then it can queue many kernels before it waits
 * again), not after every op. When it sleeps on the executor's own CPU,
 * the two never run at once: waking it before its queue is empty would
 * only cut the executor's work into more slices, two context switches
 * each (the woken launch preempts the executor, fills the window, sleeps
 * again), so it is woken when its queue is empty. Everyone else waits for
 * a particular op or turn and is woken after every op.
 *
 * True when the caller must wake the sleepers (pthread_cond_broadcast on
 * done_cv): it does so after letting dev->mu go, so that a woken thread
 * neither preempts a holder of dev->mu on its CPU nor sleeps again at once
 * waiting for it.
 */
bool queue_op_finished(struct device *d, struct ctx *c, bool blocking)
{
	/* The executor holds dev->mu: the holder's CPU is its own. */
	int me = __atomic_load_n(&d->mu_cpu, __ATOMIC_RELAXED);

	/* Relaxed: spinning waiters (wait_done) only need to see it change. */
	__atomic_store_n(&d->q.finished, d->q.finished + 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&d->wake.exec_cpu, __ATOMIC_RELAXED) != me)
		__atomic_store_n(&d->wake.exec_cpu, me, __ATOMIC_RELAXED);
	if (!d->waiters.done)
		return false;
	if (blocking || d->waiters.done > d->waiters.window)
		return true;
	if (!c || !c->window_waiters)
		return false;
	if (c->failure || d->failure)
		return true;
	return ctx_queued(c) <= (me >= 0 && c->window_cpu == me ? 0 : d->lookahead / 2);
}
