/* SPDX-License-Identifier: MIT */
/*
 * policy.h - what a policy decides, and the facts core hands it to decide.
 *
 * A policy is an ops table (struct dao_policy_ops) in a file of its own
 * (dao.c, belady.c, lru.c, fifo.c) and a row { id, name, ops } of the table
 * of policies (policy.c). Core keeps the mechanics (the access-pattern
 * table, the victim heaps) and asks the device's policy for its order; it
 * never tests which policy runs. This layer sees none of core's objects: a
 * record reaches a policy as the facts below, and a policy answers with a
 * key. (The prefetch and clean-ahead decisions are still flags core reads.)
 *
 * Times are logical: an op's seq, its position in the device's stream.
 * The victim order is called for every re-ranked record, several times a
 * kernel: its facts are plain fields, filled without a walk.
 */
#ifndef DAO_POLICY_H
#define DAO_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "dao.h"

/* Next-use facts (struct policy_rec's next_use) besides a seq: host (its
 * next use is a host kernel's, which takes it off the device: keeping it
 * until then saves nothing, and what evicting it copies back is owed
 * anyway), dead (its next access overwrites it whole, or it awaits its
 * free), unknown (no queued use, none predicted). */
#define POLICY_USE_HOST (UINT64_MAX - 2)
#define POLICY_USE_DEAD (UINT64_MAX - 1)
#define POLICY_USE_UNKNOWN UINT64_MAX

/*
 * Victim keys: the largest is evicted first. A key is the logical time the
 * policy reckons the record is needed next, for core compares keys with
 * seqs: a prefetch for kernel k evicts only records keyed after k (rule 1,
 * do no harm), and cleaning ahead asks about the dirty records in key
 * order. So a policy that knows no future keys every record at
 * POLICY_KEY_UNKNOWN or above (after every known use), and dead data,
 * which costs nothing to drop, at POLICY_KEY_DEAD.
 */
#define POLICY_KEY_DEAD POLICY_USE_DEAD
#define POLICY_KEY_UNKNOWN (UINT64_C(1) << 62)
#define POLICY_KEY_SPAN (UINT64_C(1) << 61) /* of policy_key_oldest_first's keys */

/* A key after every known use that ranks the smaller seq first (the least
 * recently used, the first loaded). */
static inline uint64_t policy_key_oldest_first(uint64_t seq)
{
	return POLICY_KEY_UNKNOWN + (POLICY_KEY_SPAN - (seq & (POLICY_KEY_SPAN - 1)));
}

/* What core knows of a resident, unpinned record when it ranks it. */
struct policy_rec {
	uint64_t id;    /* the record's serial on its device, never reused (the trace's id) */
	uint64_t bytes; /* the device space it takes */
	/* Its next use as the access-pattern table knows it: the seq of its
	 * next queued use, else of the use predicted at the same offset of
	 * the next iteration (predicted), else POLICY_USE_UNKNOWN; or
	 * POLICY_USE_DEAD when its data is dead, POLICY_USE_HOST when a host
	 * kernel is next. */
	uint64_t next_use;
	uint64_t last_use; /* seq of its last executed use (0: none) */
	uint64_t load_seq; /* seq at which it became resident */
	bool predicted;
	/* Evicting it copies it back to the host, where evicting a clean
	 * record copies nothing: valid on the device only, its data not dead
	 * and no host kernel next, on a backend that drops clean data without
	 * a copy. */
	bool dirty;
};

/* Belady's key, which dao and belady share: the next use, dead data
 * first, unknown futures after every known use, least recently used
 * first. */
static inline uint64_t policy_key_next_use(const struct policy_rec *r)
{
	return r->next_use != POLICY_USE_UNKNOWN ? r->next_use : policy_key_oldest_first(r->last_use);
}

/* A policy's rank for a record. apart: the record ranks apart from the
 * others, in a heap of its own (dirty data, whose eviction costs a
 * write-back now); when both heaps hold a victim, pick_apart chooses. */
struct policy_rank {
	uint64_t key;
	bool apart;
};

struct dao_policy_ops {
	/* The victim order: a resident, unpinned record's rank, called
	 * whenever its facts may have changed. Required. (state: NULL, no
	 * policy keeps state yet.) */
	struct policy_rank (*rank)(void *state, const struct policy_rec *r);
	/* Both heaps have a victim: whether the one ranked apart goes first
	 * (now: the seq being executed). NULL: the larger key. */
	bool (*pick_apart)(void *state, uint64_t apart_key, uint64_t key, uint64_t now);

	/* prefetch horizon: the fetches of kernels that are due in modeled
	 * time (core/horizon.c) are issued as soon as they evict nothing
	 * needed sooner; others also wait until no record used before them
	 * would be a better victim. Without it, all wait so. */
	bool eager_when_due;
	/* whether a prefetch may evict at all (lru and fifo know no future:
	 * they fetch ahead into free space only) */
	bool prefetch_evicts;
	/* clean-ahead: dirty records are written back ahead of their
	 * eviction while copy engines idle */
	bool clean_ahead;
};

/* The policies, one file each. */
extern const struct dao_policy_ops policy_dao, policy_belady, policy_lru, policy_fifo;

/* A row of the table of policies (policy.c), one per dao_policy but
 * DEFAULT: the one list of their names (dao_policy_name, DAO_POLICY and
 * every tool's and the Slurm plugin's list come from it: tools/kinds). */
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
