/* SPDX-License-Identifier: MIT */
/*
 * profile.h - what a trace asks of any schedule, independent of policy:
 * live bytes, kernel footprints, compulsory traffic, compute time, and the
 * reuse intervals the LP bounds are built on.
 */
#ifndef DAOSIM_PROFILE_H
#define DAOSIM_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "dao_sim.h"
#include "dao_trace.h"

/* A stretch between two consecutive kernel accesses of one buffer: keeping
 * the buffer on the device across it saves a copy. */
struct reuse_interval {
	size_t start; /* kernel index of the access that opens it */
	size_t end;   /* kernel index of the next access, > start */
	uint64_t bytes;
	int dirty; /* opened by a write (w or rw): dropping it costs a write-back */
	/* The write (w or rw) whose data the interval holds: intervals of one
	 * buffer between two writes share it, and dropping any of them needs
	 * that data written back once. written_at is its kernel, version its
	 * number (0..nversions-1); SIZE_MAX for both when the buffer was never
	 * written before start (the host copy is current). */
	size_t written_at;
	size_t version;
};

struct trace_profile {
	size_t nkernels;
	uint64_t *kernel_bytes;   /* per kernel: bytes of its operands */
	uint64_t *kernel_flops;   /* per kernel, as modeled (see flops_scale) */
	uint64_t *first_read_bytes; /* per kernel: its compulsory bytes (first accesses r/rw) */
	size_t *last_access;      /* per buffer: last kernel naming it, SIZE_MAX if none */
	uint64_t peak_live_bytes; /* a buffer is live from first to last access */
	uint64_t max_kernel_bytes;
	uint64_t compulsory_bytes; /* buffers whose first access is r or rw */
	uint64_t total_flops;
	/* Intervals that end in a read (r or rw): the h2d LP's variables; the
	 * dirty ones among them are the d2h LP's. Zero-byte buffers and
	 * back-to-back accesses (nothing in between) are left out. */
	struct reuse_interval *intervals;
	size_t nintervals;
	size_t nversions; /* distinct written_at among the intervals */
	/* Multiplier on trace flops (2 for float64 traces: see daosim.md). */
	unsigned flops_scale;
};

/* Build the profile; DAO_ERR_NOMEM or DAO_OK. */
dao_status trace_profile_build(const struct dao_trace *t, unsigned flops_scale,
			       struct trace_profile *p);
void trace_profile_free(struct trace_profile *p);

/* Modeled duration of a kernel: max(flops / rate, bytes / memory bandwidth)
 * + launch cost, rounded up to whole nanoseconds (as the sim backend). */
uint64_t model_kernel_ns(const struct dao_sim_model *m, uint64_t flops, uint64_t bytes);
uint64_t model_copy_ns(double bytes_per_s, uint64_t bytes);

/* Sum of kernel durations: the run time with nothing to copy. */
uint64_t profile_compute_ns(const struct trace_profile *p, const struct dao_sim_model *m);

/* 2 when the trace preamble says dtype=float64, else 1. */
unsigned trace_flops_scale(const struct dao_trace *t);

#endif /* DAOSIM_PROFILE_H */
