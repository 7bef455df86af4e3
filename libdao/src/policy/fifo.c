/* SPDX-License-Identifier: MIT */
/*
 * fifo.c - the baseline: the record that became resident first goes first.
 * Like lru, it fetches ahead into free space only.
 */
#include "policy/policy.h"

static struct policy_rank fifo_rank(void *state, const struct policy_rec *r)
{
	return (struct policy_rank){ .key = policy_key_oldest_first(r->load_seq) };
}

const struct dao_policy_ops policy_fifo = {
	.rank = fifo_rank,
	.fetch_now = policy_fetch_bounded,
	.fetch_room = policy_room_free_only,
};
