/* SPDX-License-Identifier: MIT */
/*
 * ask.h - how core asks the device's policy (policy/policy.h), beyond the
 * victim order (victim.c): its state, a prefetch's room, cleaning ahead,
 * the hooks at iteration marks and queued ops (ask.c). With dev->mu held.
 */
#ifndef DAO_CORE_ASK_H
#define DAO_CORE_ASK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/objects.h"
#include "policy/policy.h"

/* Make pol the device's policy, with its state (d's budget, lookahead and
 * backend set); on failure d is as before. */
dao_status ask_start(struct device *d, const struct dao_policy_ops *pol);
/* The job queues an iteration mark: the default for iterative jobs takes
 * over, once the device has evicted, where no context chose the policy
 * (ask.c). */
void ask_iterations_begin(struct device *d);
/* Destroy the policy's state (none: nothing). */
void ask_stop(struct device *d);
/* The policy's own figures for the summary line ("" when it has none). */
void ask_summary(const struct device *d, char *buf, size_t len);

/* A prefetch for kernel target found no free space: the least key a
 * victim may have (0: any rule 1 allows; POLICY_EVICT_NONE: none). */
uint64_t ask_fetch_room(struct device *d, const struct op *target);

/* One turn of cleaning ahead: the policy is asked about one candidate
 * after another (the top of the heap of records ranked apart); the
 * kernels' time to the frontier is worked out once for the turn, the room
 * before a candidate's next use once for that candidate. */
struct clean_turn {
	struct policy_clean c; /* first: the policy's questions get it back */
	struct device *d;
	const struct op *frontier_op;
	uint64_t next_use; /* seq of the candidate's next use (UINT64_MAX: none queued) */
	bool room_known, compute_known;
	uint64_t room, compute_ns;
};

/* False when the policy never cleans ahead. */
bool ask_clean_begin(struct clean_turn *t, struct device *d);
/* Whether to write back the candidate r (its id, key and space, and the
 * op of its next use queued, if any), now. */
bool ask_clean(struct clean_turn *t, const struct rec *r);

/* The hooks: iteration mark `mark` executed; op entered the table (a
 * test of the policy's ops where it has none: every launch passes here). */
void ask_iteration(struct device *d, const struct op *mark);
void ask_queued_slow(struct device *d, const struct op *op);

static inline void ask_queued(struct device *d, const struct op *op)
{
	if (d->policy.ops->queued)
		ask_queued_slow(d, op);
}

#endif /* DAO_CORE_ASK_H */
