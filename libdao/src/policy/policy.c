/* SPDX-License-Identifier: MIT */
/*
 * policy.c - the policies' tables (policy.h). dao and belady share the
 * eviction order (Belady's, from the access-pattern table); dao also spends
 * a little traffic on time: eager fetches for the kernels due in modeled
 * time, and dirty data cleaned ahead (core/horizon.c). lru and fifo are
 * the baselines they are named for.
 */
#include <stddef.h>

#include "policy/policy.h"

static const struct dao_policy_ops policies[] = {
	[DAO_POLICY_DAO] = {
		.id = DAO_POLICY_DAO,
		.victim_key = POLICY_KEY_NEXT_USE,
		.eager_when_due = true,
		.prefetch_evicts = true,
		.clean_ahead = true,
	},
	[DAO_POLICY_BELADY] = {
		.id = DAO_POLICY_BELADY,
		.victim_key = POLICY_KEY_NEXT_USE,
		.eager_when_due = false,
		.prefetch_evicts = true,
		.clean_ahead = false,
	},
	[DAO_POLICY_LRU] = {
		.id = DAO_POLICY_LRU,
		.victim_key = POLICY_KEY_LAST_USE,
		.eager_when_due = false,
		.prefetch_evicts = false,
		.clean_ahead = false,
	},
	[DAO_POLICY_FIFO] = {
		.id = DAO_POLICY_FIFO,
		.victim_key = POLICY_KEY_LOAD_SEQ,
		.eager_when_due = false,
		.prefetch_evicts = false,
		.clean_ahead = false,
	},
};

const struct dao_policy_ops *policy_ops(dao_policy p)
{
	if (p == DAO_POLICY_DEFAULT || (unsigned)p >= sizeof(policies) / sizeof(policies[0]))
		return NULL;
	return &policies[p];
}

dao_policy policy_default(void)
{
	return DAO_POLICY_DAO;
}

bool policy_valid(dao_policy p)
{
	return p == DAO_POLICY_DEFAULT || policy_ops(p) != NULL;
}
