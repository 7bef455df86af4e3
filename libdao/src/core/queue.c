/* SPDX-License-Identifier: MIT */
/*
 * queue.c - the device's queue of ops: the job's threads push, the executor
 * pops (executor.c); blocking calls sleep until their op is done.
 */
#include "core/queue.h"

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
	if (!(d->flags & DAO_CONFIG_DETERMINISTIC))
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
