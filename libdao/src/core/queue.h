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

#endif /* DAO_CORE_QUEUE_H */
