/* SPDX-License-Identifier: MIT */
/*
 * inbox.h - kernels launched without dev->mu (inbox.c; the ring itself is
 * struct dev_inbox in objects.h, the rules in Documentation/design.md,
 * Locking).
 */
#ifndef DAO_CORE_INBOX_H
#define DAO_CORE_INBOX_H

#include <sched.h>

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

/* Whether a launch of count operands named with namelen characters may go
 * through the inbox: the launch fits a cell and the executor runs on
 * another CPU (on this one the two never run at once and nothing is gained,
 * while turning a cell into an op costs the executor about 200
 * instructions per kernel: Documentation/benchmarks.md). The CPU is asked
 * last, only of a launch that could go. */
static inline bool inbox_takes(const struct device *d, size_t count, size_t namelen)
{
	return inbox_enabled(d) && count <= INBOX_OPERANDS && namelen < INBOX_NAME_MAX &&
	       __atomic_load_n(&d->wake.exec_cpu, __ATOMIC_RELAXED) != sched_getcpu();
}

enum inbox_result {
	INBOX_OPEN,   /* begun: c->slot_mu is held, resolve and commit (or abort) */
	INBOX_QUEUED, /* committed: published, nothing held */
	INBOX_LOCKED, /* take dev->mu and launch there: a full window (it waits
			 there) or a failed context or device (it says so) */
	INBOX_FULL,   /* the same, and the op was counted into c's window
			 already: the locked side takes it out again */
};

/*
 * The job's side of the inbox, c entered without dev->mu, in three steps:
 * begin takes c->slot_mu (which every writer of the handle slots holds
 * too, so no handle looked up under it can be released before its cell is
 * claimed) unless the window is full or c failed; the caller then
 * resolves the operands (launch_resolve, core/launch.h) and, if they are
 * good, commits: the cell is claimed, filled in with the resolved arrays
 * and published before slot_mu is let go, so that a release that follows
 * finds the op (inbox_drain_all); else it aborts. Operands of at most
 * INBOX_OPERANDS, so that they resolve without dev->mu.
 */
enum inbox_result inbox_launch_begin(struct ctx *c);
enum inbox_result inbox_launch_commit(struct ctx *c, const struct launch *l,
				      const struct karg *args, const struct opnd *opnd,
				      uint32_t nopnd);
void inbox_launch_abort(struct ctx *c);
/* After INBOX_FULL, with dev->mu held: the op the commit counted into c's
 * window is not in it. */
void inbox_launch_uncount(struct ctx *c);

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
