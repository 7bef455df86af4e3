/* SPDX-License-Identifier: MIT */
/*
 * simple.h - the simple time bound (simple.c): every copy overlaps every
 * kernel, so the run takes at least the longest of the compute and the
 * two copy engines' shares of the byte bounds.
 */
#ifndef DAOSIM_BOUNDS_SIMPLE_H
#define DAOSIM_BOUNDS_SIMPLE_H

#include <stdint.h>

#include "dao_sim.h"

/* max(compute, h2d bytes / h2d bandwidth, d2h bytes / d2h bandwidth) */
uint64_t simple_time_bound_ns(const struct dao_sim_model *m, uint64_t compute_ns,
			      uint64_t h2d_bytes, uint64_t d2h_bytes);

#endif /* DAOSIM_BOUNDS_SIMPLE_H */
