/* SPDX-License-Identifier: MIT */
/*
 * inbox.h - kernels launched without dev->mu (inbox.c; the ring itself is
 * struct dev_inbox in objects.h, the rules in Documentation/design.md,
 * Locking).
 */
#ifndef DAO_CORE_INBOX_H
#define DAO_CORE_INBOX_H

#include "core/objects.h"

/* At device creation: an inbox unless the device is deterministic or
 * traced (there every launch takes dev->mu). false: out of memory. */
bool inbox_init(struct device *d);
void inbox_destroy(struct device *d);

static inline bool inbox_enabled(const struct device *d)
{
	return d->inbox.cells != 0;
}

/* Cell pos's sequence number, one to a cache line: the job's thread
 * publishes a cell while the executor gives back the one before. */
#define INBOX_SEQ_STRIDE 8u
static inline uint64_t *inbox_seq(const struct dev_inbox *ib, uint64_t pos)
{
	return &ib->seq[(pos & (ib->cells - 1)) * INBOX_SEQ_STRIDE];
}

/*
 * Job side, with c->slot_mu held and without dev->mu: claim the next cell,
 * or NULL when the ring is full (the caller takes dev->mu instead). The
 * cell is the caller's to fill in (every field but name, which only when
 * named) until inbox_publish hands it over; *pos is its position.
 */
struct inbox_cell *inbox_claim(struct device *d, uint64_t *pos);
void inbox_publish(struct device *d, uint64_t pos);
/* After inbox_publish and c->slot_mu: wake the executor if it sleeps. */
void inbox_kick(struct device *d);

/* With dev->mu held: move every published op, in position order, into
 * the queue and the table. inbox_drain stops at the first cell claimed but
 * not yet published; inbox_drain_all waits for every cell claimed before
 * the call (a claim finishes without waiting for anything). */
void inbox_drain_slow(struct device *d);
static inline void inbox_drain(struct device *d)
{
	if (d->inbox.cells &&
	    __atomic_load_n(inbox_seq(&d->inbox, d->inbox.head), __ATOMIC_SEQ_CST) ==
		    d->inbox.head + 1)
		inbox_drain_slow(d);
}
void inbox_drain_all(struct device *d);
/* With dev->mu held: queue op (not a cell of the inbox) behind every
 * launch claimed before it, also those of other threads still filling
 * their cells: the launches this thread made may wait behind one of them.
 * Every op queued with dev->mu held goes this way. */
void inbox_push(struct device *d, struct op *op);
/* The executor, with dev->mu held: op is finished, its cell free again. */
void inbox_retire(struct device *d, struct op *op);

#endif /* DAO_CORE_INBOX_H */
