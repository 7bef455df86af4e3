/* SPDX-License-Identifier: MIT */
/*
 * policy.c - the table of policies { id, name, ops } (policy.h): the one
 * list of them and their names. Each policy's ops are in its own file.
 */
#include <stddef.h>
#include <string.h>

#include "policy/policy.h"

/* In the order of their ids: dao.h numbers them from 1 without a gap, and
 * the tools list them by asking dao_policy_name for 1, 2, ... until it
 * says "unknown" (tools/kinds/kinds.h). */
static const struct dao_policy_entry policies[] = {
	{ DAO_POLICY_DAO, "dao", &policy_dao },
	{ DAO_POLICY_BELADY, "belady", &policy_belady },
	{ DAO_POLICY_LRU, "lru", &policy_lru },
	{ DAO_POLICY_FIFO, "fifo", &policy_fifo },
	{ DAO_POLICY_PLAN, "plan", &policy_plan },
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

/* plan is dao until it has a plan to follow, and dao again from any op
 * that departs from it; step by step it is never slower than dao in
 * modeled time, and up to 18% faster at libdao's window
 * (Documentation/daosim.md, "The plan policy step by step"). */
dao_policy policy_default_iterative(void)
{
	return DAO_POLICY_PLAN;
}

bool policy_valid(dao_policy p)
{
	return p == DAO_POLICY_DEFAULT || policy_entry(p) != NULL;
}
