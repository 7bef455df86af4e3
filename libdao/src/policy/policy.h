/* SPDX-License-Identifier: MIT */
/*
 * policy.h - the policies, behind one table (policy.c): { id, name, ops },
 * one row per dao_policy but DEFAULT. It is the one list of their names:
 * dao_policy_name, DAO_POLICY and every tool's and the Slurm plugin's list
 * come from it (tools/kinds). What varies between the policies is each
 * one's ops, a small table the row points at. The core's victim heaps and
 * residency read the device's ops; nothing outside policy/ tests a
 * DAO_POLICY_* value.
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

struct dao_policy_entry {
	dao_policy id;
	const char *name;
	const struct dao_policy_ops *ops;
};

/* The row of p, NULL for DEFAULT or a value no row has. */
const struct dao_policy_entry *policy_entry(dao_policy p);
/* The row named name, NULL when none is. */
const struct dao_policy_entry *policy_named(const char *name);
/* The ops of p, NULL for DEFAULT or a value no row has. */
const struct dao_policy_ops *policy_ops(dao_policy p);
/* What DAO_POLICY_DEFAULT resolves to. */
dao_policy policy_default(void);
/* Whether p may appear in a dao_config (a policy, or DEFAULT). */
bool policy_valid(dao_policy p);

#endif /* DAO_POLICY_H */
