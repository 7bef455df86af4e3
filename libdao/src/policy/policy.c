/* SPDX-License-Identifier: MIT */
/*
 * policy.c - the table of policies and their ops (policy.h). dao and
 * belady share the eviction order (Belady's, from the access-pattern
 * table); dao also spends a little traffic on time: eager fetches for the
 * kernels due in modeled time, and dirty data cleaned ahead
 * (core/horizon.c). lru and fifo are the baselines they are named for.
 */
#include <stddef.h>
#include <string.h>

#include "policy/policy.h"

static const struct dao_policy_ops dao_ops = {
	.victim_key = POLICY_KEY_NEXT_USE,
	.eager_when_due = true,
	.prefetch_evicts = true,
	.clean_ahead = true,
};

static const struct dao_policy_ops belady_ops = {
	.victim_key = POLICY_KEY_NEXT_USE,
	.eager_when_due = false,
	.prefetch_evicts = true,
	.clean_ahead = false,
};

static const struct dao_policy_ops lru_ops = {
	.victim_key = POLICY_KEY_LAST_USE,
	.eager_when_due = false,
	.prefetch_evicts = false,
	.clean_ahead = false,
};

static const struct dao_policy_ops fifo_ops = {
	.victim_key = POLICY_KEY_LOAD_SEQ,
	.eager_when_due = false,
	.prefetch_evicts = false,
	.clean_ahead = false,
};

/* In the order of their ids: dao.h numbers them from 1 without a gap, and
 * the tools list them by asking dao_policy_name for 1, 2, ... until it
 * says "unknown" (tools/kinds/kinds.h). */
static const struct dao_policy_entry policies[] = {
	{ DAO_POLICY_DAO, "dao", &dao_ops },
	{ DAO_POLICY_BELADY, "belady", &belady_ops },
	{ DAO_POLICY_LRU, "lru", &lru_ops },
	{ DAO_POLICY_FIFO, "fifo", &fifo_ops },
};

const struct dao_policy_entry *policy_entry(dao_policy p)
{
	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
		if (policies[i].id == p)
			return &policies[i];
	return NULL;
}

const struct dao_policy_entry *policy_named(const char *name)
{
	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
		if (!strcmp(policies[i].name, name))
			return &policies[i];
	return NULL;
}

const struct dao_policy_ops *policy_ops(dao_policy p)
{
	const struct dao_policy_entry *e = policy_entry(p);

	return e ? e->ops : NULL;
}

const char *dao_policy_name(dao_policy p)
{
	const struct dao_policy_entry *e = policy_entry(p);

	if (p == DAO_POLICY_DEFAULT)
		return "default";
	return e ? e->name : "unknown";
}

dao_policy policy_default(void)
{
	return DAO_POLICY_DAO;
}

bool policy_valid(dao_policy p)
{
	return p == DAO_POLICY_DEFAULT || policy_entry(p) != NULL;
}
