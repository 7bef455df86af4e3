/* SPDX-License-Identifier: MIT */
/*
 * dao.c - the default policy: Belady's order (belady.c), with a little
 * traffic spent on time where the copy engines would otherwise idle or a
 * kernel wait (Documentation/design.md, "Policy" and "Modeled time"):
 *
 *  - dirty records rank apart: a dirty victim costs a write-back now on
 *    top of the fetch later, so it goes only when its next use is more
 *    than 1.25 times as far as the best clean victim's;
 *  - a prefetch that is due in modeled time (put off to the next decision
 *    it would arrive late) skips rule 2 when waiting for the better victim
 *    would make it late too, so that it overlaps the kernels before its
 *    own; belady waits everywhere;
 *  - dirty records are written back ahead of their eviction while the d2h
 *    engine has time, so that their eviction is a drop.
 */
#include "policy/policy.h"

/* A dirty victim must be needed this much farther away than the best clean
 * one (in distance from now) to be chosen. */
#define DIRTY_NUM 5
#define DIRTY_DEN 4

struct policy_rank policy_rank_dirty_apart(void *state, const struct policy_rec *r)
{
	return policy_rank_dirty_apart_inline(r);
}

static uint64_t distance(uint64_t key, uint64_t now)
{
	return key > now ? key - now : 0;
}

static bool dao_pick_apart(void *state, uint64_t dirty_key, uint64_t clean_key, uint64_t now)
{
	if (clean_key >= POLICY_KEY_UNKNOWN)
		return false;
	if (dirty_key >= POLICY_KEY_UNKNOWN)
		return true;
	return distance(dirty_key, now) / DIRTY_NUM > distance(clean_key, now) / DIRTY_DEN;
}

static uint64_t dao_fetch_room(void *state, struct policy_fetch_room *q)
{
	uint64_t better = q->better_key(q);

	if (q->due(q) && q->late_waiting(q))
		return 0;
	return better;
}

/* policy.h */
bool policy_clean_in_time(struct policy_clean *c, uint64_t at_least_ns)
{
	uint64_t ahead_ns;

	if (c->key <= c->frontier)
		return false;
	if (!c->queue_ns)
		return true;
	ahead_ns = c->compute_ns(c);
	if (at_least_ns > ahead_ns)
		ahead_ns = at_least_ns;
	return c->queue_ns + c->d2h_ns(c, c->bytes) <= ahead_ns;
}

/*
 * Write back ahead only while some live record does not fit and the
 * window's placements will need more room at once, before the
 * candidate's next use, than is free and cleaned
 * already (so that some record will be evicted before the candidate is
 * used again: cleaning one that stays resident until it is rewritten is
 * d2h time thrown away), only records needed after the prefetch frontier,
 * and only as far ahead as the d2h engine works while the kernels up to
 * that frontier compute. How far ahead is the write-backs the engine has
 * still to do, not the bytes cleaned so far: a record cleaned long ago
 * that stays resident holds no engine time, and counting it would stop
 * cleaning for as long as it stays, d2h engine idle or not. One record
 * always goes when none is queued.
 */
static bool dao_clean(void *state, struct policy_clean *c)
{
	if (c->live_fits || c->free_bytes + c->cleaned_bytes >= c->peak_room(c))
		return false;
	return policy_clean_in_time(c, 0);
}

const struct dao_policy_ops policy_dao = {
	.rank = policy_rank_dirty_apart,
	.pick_apart = dao_pick_apart,
	.fetch_now = policy_fetch_bounded,
	.fetch_room = dao_fetch_room,
	.clean = dao_clean,
};
