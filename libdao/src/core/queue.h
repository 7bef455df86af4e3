/* SPDX-License-Identifier: MIT */
/*
 * queue.h - the device's queue of ops, between the job's threads and the
 * executor (queue.c). All with dev->mu held.
 */
#ifndef DAO_CORE_QUEUE_H
#define DAO_CORE_QUEUE_H

#include "core/objects.h"

/* Ops pushed with dev->mu held go through inbox_push (inbox.h), which
 * first moves the launches claimed before them into the queue. */
void queue_push(struct device *d, struct op *op);
/* Append op's uses to its operands' lists of upcoming uses (the table). */
void table_append(struct device *d, struct op *op);
/* Deterministic mode: wait until a non-blocking op may be queued. */
void queue_wait_turn(struct device *d);
/* Sleep on done_cv (signalled after every op the executor finishes). */
void wait_done(struct device *d);
static inline bool queue_window_full(const struct device *d)
{
	return d->q.head && d->q.tail->seq - d->q.head->seq >= d->lookahead;
}
dao_status op_wait(struct device *d, struct op *op);
/* Launch side: sleep until c's queue has drained to the low watermark
 * (half the window; empty when the sleeper shares the executor's CPU:
 * queue_op_finished), or c or the device failed. */
void queue_wait_window(struct device *d, struct ctx *c);
/* Executor side, after finishing an op of c (NULL: none): true when the
 * threads sleeping on done_cv must be woken (the caller broadcasts after
 * letting dev->mu go). */
bool queue_op_finished(struct device *d, struct ctx *c, bool blocking);
/* A zeroed op of at least bytes bytes, from the device's cache when small;
 * NULL when out of memory. op_release gives one back (any op the job's
 * side allocated with calloc, too). */
struct op *op_alloc(struct device *d, size_t bytes);
void op_release(struct device *d, struct op *op);
/* A kernel op, its arrays and its name in one block of op_bytes(count,
 * namelen) bytes; op_layout points the arrays into it and copies the name
 * (NULL: none). */
size_t op_bytes(size_t count, size_t namelen);
void op_layout(struct op *op, size_t count, const char *name, size_t namelen);
void op_cache_destroy(struct device *d);
/* The executor marks its thread as d's consumer when it starts. True on that
 * thread only: there the job's code runs inside one of d's kernel functions,
 * and waiting for d's queue would wait for that kernel itself. */
void queue_consumer_set(const struct device *d);
bool queue_consumer_is_current(const struct device *d);

#endif /* DAO_CORE_QUEUE_H */
