/* SPDX-License-Identifier: MIT */
/*
 * prefetch.c - prefetch answers that several policies share.
 *
 * How far ahead of execution they fetch (rule 3 of Documentation/design.md,
 * "Policy"), in bytes: at most max(budget / 64, 3 x the buffer) fetched
 * ahead of their kernels at a time. Fetching earlier than needed to hide
 * the copy only makes the policy decide with staler next-use information
 * (and so move more); a few of the largest buffers keep the copy engine
 * busy. (A cap in modeled time, the h2d time of the bytes ahead against
 * the compute before their kernel, was measured and left far more copy
 * time exposed: Documentation/daosim.md.)
 */
#include "policy/policy.h"

bool policy_fetch_bounded(void *state, const struct policy_fetch *f)
{
	uint64_t cap = f->budget / 64;

	if (cap < 3 * f->bytes)
		cap = 3 * f->bytes;
	return !f->ahead_bytes || f->ahead_bytes + f->bytes <= cap;
}

/* A policy that knows no future cannot tell what a prefetch's victim is
 * needed for: it fetches ahead into free space only. */
uint64_t policy_room_free_only(void *state, struct policy_fetch_room *q)
{
	return POLICY_EVICT_NONE;
}
