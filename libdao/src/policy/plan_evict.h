/* SPDX-License-Identifier: MIT */
/*
 * plan_evict.h - which buffers a plan foresees leaving the device between
 * two of their uses: the iteration replayed on a device of the budget's
 * size in the policy's order of eviction (plan_evict.c; Documentation/
 * design.md, "The plan policy").
 */
#ifndef DAO_POLICY_PLAN_EVICT_H
#define DAO_POLICY_PLAN_EVICT_H

#include "policy/plan_build.h"

/* Fill p->evicted for a device of `budget` bytes in one order: dao's (a
 * dirty buffer when it is used a quarter farther ahead than the clean
 * one), or clean first (a dirty buffer only when no clean one can make
 * room); p->clean_first says which. DAO_ERR_NOMEM (p unchanged).
 * O(uses log uses). */
dao_status plan_build_evictions(struct plan *p, uint64_t budget, bool clean_first);

/* Replay in dao's order and in the order that passes over dirty buffers
 * while a clean one can make room (clean first), and keep the one whose
 * busier copy engine (the bytes each moves in the marked pass over its
 * rate, in bytes per second) is busy for less, dao's on a tie
 * (p->clean_first says which); DAO_ERR_NOMEM (p unchanged). Twice
 * plan_build_evictions. */
dao_status plan_choose_evictions(struct plan *p, uint64_t budget, double h2d_bytes_per_s,
				 double d2h_bytes_per_s);

/* What the replay did with buffer b in the gap that ends at its use of
 * offset next_off (>= len: its first use in the next iteration, at
 * next_off - len): PLAN_GAP_NONE when b has no use there (the plan
 * cannot judge that gap), or before the replay has run. */
enum plan_gap { PLAN_GAP_NONE, PLAN_GAP_STAYS, PLAN_GAP_LEAVES };
enum plan_gap plan_gap(const struct plan *p, uint32_t b, uint64_t next_off);
/* The same, and where it is not PLAN_GAP_NONE, *gap gets the gap's
 * index: one of the plan's uses (the one that opens it), below
 * use_start[nbufs]. */
enum plan_gap plan_gap_at(const struct plan *p, uint32_t b, uint64_t next_off, uint32_t *gap);

/* Whether the replay evicts b in that gap (plan_gap's PLAN_GAP_LEAVES). */
bool plan_evicted(const struct plan *p, uint32_t b, uint64_t next_off);

#endif /* DAO_POLICY_PLAN_EVICT_H */
