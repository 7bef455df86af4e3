/* SPDX-License-Identifier: MIT */
/*
 * victim.h - the eviction order (victim.c): heaps of resident records
 * ranked by the device's policy (policy/policy.h).
 */
#ifndef DAO_CORE_VICTIM_H
#define DAO_CORE_VICTIM_H

#include "core/objects.h"

void victim_init(struct device *d);
void victim_destroy(struct device *d);
void victim_update(struct device *d, struct rec *r); /* (re)insert a resident, unpinned record */
void victim_remove(struct device *d, struct rec *r);
/* The next victim, or NULL. With limit_seq != 0 only records keyed after
 * limit_seq qualify (a key is when the policy reckons the record is needed
 * next: a prefetch must not evict what is needed sooner). */
struct rec *victim_pick(struct device *d, uint64_t limit_seq);
/* Eviction key u's record will have once use u is done. */
uint64_t victim_key_after(struct device *d, const struct opnd *u);
/* Rank every record in the heaps again (the policy's order changed). */
void victim_rerank(struct device *d);

#endif /* DAO_CORE_VICTIM_H */
