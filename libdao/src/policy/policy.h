/* SPDX-License-Identifier: MIT */
/*
 * policy.h - what varies between the policies (dao, belady, lru, fifo): one
 * small table each (policy.c). The core's victim heaps and residency read
 * the device's table; nothing outside policy/ tests a DAO_POLICY_* value.
 *
 * The tables are data, not functions: the core reads a field where it used
 * to test the policy, so the per-kernel path costs what it did.
 */
#ifndef DAO_POLICY_H
#define DAO_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "dao.h"

/* What ranks a resident record as a victim. */
enum policy_key {
	POLICY_KEY_NEXT_USE, /* farthest next use first (Belady), from the access-pattern table */
	POLICY_KEY_LAST_USE, /* least recently used first */
	POLICY_KEY_LOAD_SEQ, /* first loaded first */
};

struct dao_policy_ops {
	dao_policy id;
	/* victim key */
	enum policy_key victim_key;
	/* prefetch horizon: the fetches of kernels that are due in modeled
	 * time (core/horizon.c) are issued as soon as they evict nothing
	 * needed sooner; others also wait until no record used before them
	 * would be a better victim. Without it, all wait so. */
	bool eager_when_due;
	/* whether a prefetch may evict at all (lru and fifo know no future:
	 * they fetch ahead into free space only) */
	bool prefetch_evicts;
	/* clean-ahead: dirty records rank apart (a write-back costs) and are
	 * written back ahead of their eviction while copy engines idle */
	bool clean_ahead;
};

/* The table of a policy, NULL for a value outside the enum or DEFAULT. */
const struct dao_policy_ops *policy_ops(dao_policy p);
/* What DAO_POLICY_DEFAULT resolves to. */
dao_policy policy_default(void);
/* Whether p may appear in a dao_config (a policy, or DEFAULT). */
bool policy_valid(dao_policy p);

#endif /* DAO_POLICY_H */
