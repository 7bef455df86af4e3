/* SPDX-License-Identifier: MIT */
/*
 * lru.c - the baseline: the least recently used record goes first. It
 * knows no future, so it cannot tell what a prefetch's victim is needed
 * for: it fetches ahead into free space only.
 */
#include "policy/policy.h"

static struct policy_rank lru_rank(void *state, const struct policy_rec *r)
{
	return (struct policy_rank){ .key = policy_key_oldest_first(r->last_use) };
}

const struct dao_policy_ops policy_lru = {
	.rank = lru_rank,
	.fetch_now = policy_fetch_bounded,
	.fetch_room = policy_room_free_only,
};
