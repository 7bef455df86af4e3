/* SPDX-License-Identifier: MIT */
/*
 * queue.c - the device's queue of ops: the job's threads push, the executor
 * pops (executor.c); blocking calls sleep until their op is done.
 */
#include "core/queue.h"

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
	if (op->ctx)
		op->ctx->queued++;
	if (op->blocking)
		d->q.flush++;
	if (!d->res.pf_op) {
		d->res.pf_op = op;
		d->res.pf_idx = 0;
	}
	if (d->exec_waiting)
		pthread_cond_signal(&d->work_cv);
}

void wait_done(struct device *d)
{
	d->done_waiters++;
	pthread_cond_wait(&d->done_cv, &d->mu);
	d->done_waiters--;
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
