/* SPDX-License-Identifier: MIT */
/*
 * horizon.h - modeled time over the queued window (horizon.c): how long a
 * queued kernel computes and how long its missing inputs take to copy, at
 * the backend's rates, and from those which kernels are due for their
 * fetches now. Called by the executor with dev->mu held.
 */
#ifndef DAO_CORE_HORIZON_H
#define DAO_CORE_HORIZON_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/objects.h"

/* Whether the backend's rates can model time (all positive and finite). */
bool horizon_rates_valid(const struct dao_rates *r);

/* Modeled nanoseconds kernel op computes (0 for other ops). */
uint64_t horizon_kernel_ns(const struct device *d, const struct op *op);

/* Modeled nanoseconds the h2d engine needs for bytes. */
uint64_t horizon_h2d_ns(const struct device *d, uint64_t bytes);

/* Whether kernel target's fetches, put off until kernel `after` (queued or
 * running, before target) ends, would arrive after target could start. */
bool horizon_late(const struct device *d, const struct op *after, const struct op *target);

/* Modeled nanoseconds the d2h engine needs for bytes. */
uint64_t horizon_d2h_ns(const struct device *d, uint64_t bytes);

/* Cleaning ahead's share of the d2h engine in modeled time (struct
 * dev_residency: clean_queue_ns): a write-back of `bytes` it issued; the
 * kernel `op` issued, which spans its modeled time and the stall before
 * it (`stall_ns`, as the backend reports it; not on a deterministic
 * device whose stalls are measured, not modeled). */
void horizon_queue_clean(struct device *d, uint64_t bytes);
/* The same for the h2d engine (fetch_queue_ns): a fetch of `bytes`. */
void horizon_queue_fetch(struct device *d, uint64_t bytes);
void horizon_kernel_passed(struct device *d, const struct op *op, uint64_t stall_ns);

/* The seq of the first queued op the walks do not reach (the next seq
 * queued when they reach the whole window). */
uint64_t horizon_walk_end(const struct device *d);

/* Modeled nanoseconds the queued kernels before `end` compute (the whole
 * window, as far as the walk looks, for NULL). */
uint64_t horizon_compute_ns(const struct device *d, const struct op *end);

/* The most room the queued window's placements take at once before the
 * op of seq `before` (UINT64_MAX: the whole window): records not on the
 * device enter at their next use, released ones leave after their last
 * (as far as the walk looks). */
uint64_t horizon_peak_room(const struct device *d, uint64_t before);

/*
 * Whether kernel `target`'s fetches are due: put off to the next decision
 * (the next kernel's turn), they would arrive after target could start.
 * See horizon.c for the model.
 */
bool horizon_due(const struct device *d, const struct op *target);

#endif /* DAO_CORE_HORIZON_H */
