/* SPDX-License-Identifier: MIT */
/*
 * belady.c - Belady's order: the record needed farthest in the future goes
 * first (dead data first of all, unknown futures after every known use,
 * least recently used first), from the access-pattern table. A prefetch
 * evicts only what Belady's order would evict at its kernel's turn: it
 * waits while a record used before that kernel will be a better victim
 * once that use is done (rule 2), so it moves the bytes Belady's order
 * moves.
 */
#include "policy/policy.h"

static struct policy_rank belady_rank(void *state, const struct policy_rec *r)
{
	return (struct policy_rank){ .key = policy_key_next_use(r) };
}

static uint64_t belady_fetch_room(void *state, struct policy_fetch_room *q)
{
	return q->better_key(q);
}

const struct dao_policy_ops policy_belady = {
	.rank = belady_rank,
	.fetch_now = policy_fetch_bounded,
	.fetch_room = belady_fetch_room,
};
