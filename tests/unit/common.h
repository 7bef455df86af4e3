/* SPDX-License-Identifier: MIT */
/*
 * common.h - helpers shared by the libdao unit tests: a clean environment,
 * contexts on the host backend, a seeded random generator, checked setup
 * calls and stderr capture.
 */
#ifndef DAO_TEST_COMMON_H
#define DAO_TEST_COMMON_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dao.h"
#include "tap.h"

#define TEST_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Clear the variables libdao reads so the caller's shell cannot change what a
 * test checks; test_config sets them on purpose. */
static inline void test_clear_env(void)
{
	static const char *const vars[] = {
		"DAO_BACKEND",   "DAO_DEVICE_BUDGET", "DAO_HOST_BUDGET", "DAO_POLICY",
		"DAO_LOOKAHEAD", "DAO_TRACE",         "DAO_LOG",         "DAO_JOB",
	};

	for (size_t i = 0; i < TEST_ARRAY_SIZE(vars); i++)
		unsetenv(vars[i]);
}

/* Library diagnostics are off unless DAO_TEST_VERBOSE is set: the tests
 * provoke errors on purpose and libdao logs each one. */
static inline dao_log_level test_log_level(void)
{
	return getenv("DAO_TEST_VERBOSE") ? DAO_LOG_DEBUG : DAO_LOG_SILENT;
}

static inline uint64_t test_env_u64(const char *name, uint64_t fallback)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return fallback;
	v = strtoull(s, &end, 0);
	if (*end)
		tap_bail("%s=%s is not a number", name, s);
	return v;
}

/* Seed from DAO_TEST_SEED, else from the clock; printed (and again on
 * stderr at the first failure, tap.h) so a failure can be replayed. */
static inline uint64_t test_seed(void)
{
	struct timespec ts;
	uint64_t seed;

	if (getenv("DAO_TEST_SEED")) {
		seed = test_env_u64("DAO_TEST_SEED", 0);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^
		       ((uint64_t)getpid() << 32);
	}
	snprintf(tap_replay, sizeof(tap_replay),
		 "seed %" PRIu64 " (replay with DAO_TEST_SEED=%" PRIu64 ")", seed, seed);
	tap_diag("%s", tap_replay);
	return seed;
}

/* splitmix64: small, fast, and good enough to drive test programs. */
static inline uint64_t test_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline uint64_t test_rng_range(uint64_t *state, uint64_t lo, uint64_t hi)
{
	uint64_t span = hi - lo + 1;

	if (span == 0)
		return test_rng_next(state);
	return lo + test_rng_next(state) % span;
}

/* True with probability num/den. */
static inline bool test_rng_chance(uint64_t *state, unsigned num, unsigned den)
{
	return test_rng_next(state) % den < num;
}

/* Deterministic bytes: the same (seed, len) always gives the same contents. */
static inline void test_fill(void *dst, uint64_t len, uint64_t seed)
{
	unsigned char *p = dst;
	uint64_t st = seed, word = 0;

	for (uint64_t i = 0; i < len; i++) {
		if (i % 8 == 0)
			word = test_rng_next(&st);
		p[i] = (unsigned char)(word >> (8 * (i % 8)));
	}
}

/* Setup steps that must work for the test to mean anything. */
#define TEST_TRY(expr)                                                                    \
	do {                                                                              \
		dao_status st_ = (expr);                                                  \
		if (st_ != DAO_OK)                                                        \
			tap_bail("%s failed: %s (%s:%d)", #expr, dao_strerror(st_), __FILE__, \
				 __LINE__);                                               \
	} while (0)

/* A host-backend configuration with every field explicit, so neither the
 * environment nor the defaults leak into what a test measures. */
static inline dao_config test_config(uint64_t device_budget, dao_policy policy, uint32_t lookahead,
				     uint32_t flags)
{
	dao_config cfg;

	dao_config_init(&cfg);
	cfg.backend = DAO_BACKEND_HOST;
	cfg.policy = policy;
	cfg.lookahead = lookahead;
	cfg.device_budget = device_budget;
	cfg.flags = flags;
	cfg.log_level = test_log_level();
	return cfg;
}

/* A private host context; bails out when it cannot be opened. */
static inline dao_ctx test_open(uint64_t device_budget, dao_policy policy, uint32_t lookahead,
				uint32_t flags)
{
	dao_config cfg = test_config(device_budget, policy, lookahead, flags | DAO_CONFIG_PRIVATE);
	dao_ctx ctx;

	TEST_TRY(dao_open(&cfg, &ctx));
	return ctx;
}

static inline dao_stats test_stats(dao_ctx ctx)
{
	dao_stats s;

	TEST_TRY(dao_stats_get(ctx, &s));
	return s;
}

static inline dao_buf test_buffer(dao_ctx ctx, uint64_t bytes)
{
	dao_buf b;

	TEST_TRY(dao_buffer_create(ctx, bytes, &b));
	return b;
}

/* Capture what libdao logs on stderr (fd 2) between start and stop. */
struct test_capture {
	int saved_fd;
	FILE *tmp;
};

static inline void test_capture_start(struct test_capture *c)
{
	fflush(stderr);
	c->tmp = tmpfile();
	if (!c->tmp)
		tap_bail("tmpfile failed");
	c->saved_fd = dup(2);
	if (c->saved_fd < 0 || dup2(fileno(c->tmp), 2) < 0)
		tap_bail("cannot redirect stderr");
}

/* Returns what was written, NUL-terminated, truncated to cap - 1 bytes. */
static inline void test_capture_stop(struct test_capture *c, char *out, size_t cap)
{
	size_t n;

	fflush(stderr);
	if (dup2(c->saved_fd, 2) < 0)
		tap_bail("cannot restore stderr");
	close(c->saved_fd);
	rewind(c->tmp);
	n = fread(out, 1, cap - 1, c->tmp);
	out[n] = '\0';
	fclose(c->tmp);
}

/* Ids no context issued: the null id, all ones, and ids built from a live
 * handle by flipping high bits (another generation or slot). Callers skip
 * any that happens to equal a handle they hold. */
static inline dao_buf test_garbage_handle(dao_buf live, int which)
{
	switch (which) {
	case 0:
		return (dao_buf){ UINT64_MAX };
	case 1:
		return (dao_buf){ live.id ^ (1ull << 63) };
	case 2:
		return (dao_buf){ live.id ^ (1ull << 40) };
	case 3:
		return (dao_buf){ live.id ^ (1ull << 20) };
	default:
		return (dao_buf){ live.id + 0x10000000ull };
	}
}
#define TEST_GARBAGE_HANDLES 5

/* A kernel that adds one to the 64-bit counter in operand 0; any other
 * operands are only named (they are made resident, not touched). */
static inline int test_bump_kernel(const dao_kernel_args *a)
{
	uint64_t v;

	memcpy(&v, a->ptrs[0], sizeof(v));
	v++;
	memcpy(a->ptrs[0], &v, sizeof(v));
	return 0;
}

#endif /* DAO_TEST_COMMON_H */
