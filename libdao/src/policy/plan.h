/* SPDX-License-Identifier: MIT */
/*
 * plan.h - what the plan policy (plan.c) counts, for tests and tools that
 * hold its state.
 */
#ifndef DAO_POLICY_PLAN_H
#define DAO_POLICY_PLAN_H

#include <stdint.h>

struct plan_counts {
	uint64_t built;      /* plans built */
	uint64_t late;       /* builds stopped at their CPU-time limit (or out of memory) */
	uint64_t followed;   /* iterations that followed a plan to their end */
	uint64_t departures; /* iterations that departed from their plan (dao from there) */
};

/* The counts of the plan policy's state `state` (from its create). */
void policy_plan_counts(void *state, struct plan_counts *out);

#endif /* DAO_POLICY_PLAN_H */
