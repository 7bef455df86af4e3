/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what the dao-bench measurements share.
 */
#ifndef DAO_BENCH_H
#define DAO_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "dao.h"

/* overhead: where the job thread and libdao's threads run. */
enum bench_placement {
	BENCH_SPLIT = 0,  /* on two different CPUs */
	BENCH_SHARED = 1, /* all on one CPU */
};

#define BENCH_MAX_LIVE 8

struct bench_options {
	bool json;
	uint64_t kernels;      /* overhead, iterations: kernels per measurement */
	uint64_t live[BENCH_MAX_LIVE]; /* overhead: live-buffer counts, one row each */
	size_t nlive;
	unsigned placements;   /* overhead: bit (1 << enum bench_placement) per placement */
	uint64_t buffer_bytes; /* copy: size of each cycled buffer */
	uint64_t buffers;      /* copy: how many are cycled */
	uint64_t rounds;       /* copy: passes over all of them */
	dao_backend_kind backend; /* host, a CUDA one, or DEFAULT (DAO_BACKEND) */
};

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A kernel that does nothing: what is measured is libdao's part. */
int bench_empty_kernel(const dao_kernel_args *args);

/* Print "dao-bench: what: reason" and return 1 (the exit status). */
int bench_fail(const char *what, dao_status st);

/* The backend when no --backend is given: DAO_BACKEND_DEFAULT where
 * DAO_BACKEND is set, else DAO_BACKEND_HOST. */
dao_backend_kind bench_env_backend(void);

/* Open a private context on a backend (DAO_BACKEND_DEFAULT: libdao reads
 * DAO_BACKEND) with the given budget (0: default) and policy
 * (DAO_POLICY_DEFAULT: libdao's). */
dao_status bench_open(dao_backend_kind backend, uint64_t budget, dao_policy policy,
		      dao_ctx *ctx);

/* Release bufs[0..n) and close ctx; the first failure, when *st holds none
 * yet, goes to *st and *what. */
void bench_close(dao_ctx ctx, const dao_buf *bufs, uint64_t n, dao_status *st, const char **what);

int bench_overhead(const struct bench_options *o);
int bench_copy(const struct bench_options *o);
int bench_iterations(const struct bench_options *o);

#endif /* DAO_BENCH_H */
