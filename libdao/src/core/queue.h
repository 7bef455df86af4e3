/* SPDX-License-Identifier: MIT */
/*
 * queue.h - the device's queue of ops, between the job's threads and the
 * executor (queue.c). All with dev->mu held.
 */
#ifndef DAO_CORE_QUEUE_H
#define DAO_CORE_QUEUE_H

#include "core/objects.h"

void queue_push(struct device *d, struct op *op);
/* Deterministic mode: wait until a non-blocking op may be queued. */
void queue_wait_turn(struct device *d);
/* Sleep on done_cv (signalled after every op the executor finishes). */
void wait_done(struct device *d);
static inline bool queue_window_full(const struct device *d)
{
	return d->q.head && d->q.tail->seq - d->q.head->seq >= d->lookahead;
}
dao_status op_wait(struct device *d, struct op *op);
/* The executor marks its thread as d's consumer when it starts. True on that
 * thread only: there the job's code runs inside one of d's kernel functions,
 * and waiting for d's queue would wait for that kernel itself. */
void queue_consumer_set(const struct device *d);
bool queue_consumer_is_current(const struct device *d);

#endif /* DAO_CORE_QUEUE_H */
