/* SPDX-License-Identifier: MIT */
/*
 * test_stress.c - 10^5 live buffers and 10^6 kernels on one context.
 *
 * Buffers are added in steps (10^3, 10^4, 10^5 live); at each step a third
 * of the kernels run on random buffers, each updating a counter and a
 * checksum that depend on the order of the kernels and on what they read.
 * The same arithmetic is done here, and every buffer is read back at the end.
 * Nanoseconds per kernel at each live-buffer count are printed as
 * diagnostics only: performance is never asserted.
 *
 * Environment: DAO_TEST_SEED, DAO_TEST_STRESS_BUFFERS (default 100000),
 * DAO_TEST_STRESS_KERNELS (default 1000000; 200000 under
 * sanitizers).
 */
#include "common.h"

#define BUF_BYTES 64u
#define INIT_BATCH 1024u
#define BUDGET (8u << 20)

struct cell {
	uint64_t count;
	uint64_t check;
};

/* Operand 0 (rw): count += 1, check = check * 31 + id + count of each other
 * operand (r). */
static int step_kernel(const dao_kernel_args *a)
{
	struct cell c, other;

	memcpy(&c, a->ptrs[0], sizeof(c));
	c.count++;
	c.check = c.check * 31 + (uint64_t)(uintptr_t)a->user;
	for (uint32_t i = 1; i < a->count; i++) {
		memcpy(&other, a->ptrs[i], sizeof(other));
		c.check += other.count;
	}
	memcpy(a->ptrs[0], &c, sizeof(c));
	return 0;
}

static int zero_kernel(const dao_kernel_args *a)
{
	for (uint32_t i = 0; i < a->count; i++)
		memset(a->ptrs[i], 0, a->sizes[i]);
	return 0;
}

/* Copies the cells of operands 0..n-2 into the last operand, in order. */
static int gather_kernel(const dao_kernel_args *a)
{
	unsigned char *out = a->ptrs[a->count - 1];

	for (uint32_t i = 0; i + 1 < a->count; i++)
		memcpy(out + i * sizeof(struct cell), a->ptrs[i], sizeof(struct cell));
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Create buffers [from, to) and zero them with w kernels. */
static void add_buffers(dao_ctx ctx, dao_buf *bufs, struct cell *ref, size_t from, size_t to,
			uint64_t *kernels)
{
	static dao_operand ops[INIT_BATCH];

	for (size_t i = from; i < to; i += INIT_BATCH) {
		size_t n = to - i < INIT_BATCH ? to - i : INIT_BATCH;

		for (size_t j = 0; j < n; j++) {
			bufs[i + j] = test_buffer(ctx, BUF_BYTES);
			ops[j] = (dao_operand){ bufs[i + j], DAO_W };
			ref[i + j] = (struct cell){ 0, 0 };
		}
		TEST_TRY(dao_launch(ctx, zero_kernel, NULL, ops, n));
		(*kernels)++;
	}
}

int main(void)
{
	uint64_t seed, rng, nbuf, nkern, kernels = 0;
	size_t levels[3], live = 0;
	dao_buf *bufs;
	struct cell *ref, got;
	dao_stats s, prev;
	dao_ctx ctx;
	int bad = 0;

	test_clear_env();
	seed = test_seed();
	rng = seed;
	nbuf = test_env_u64("DAO_TEST_STRESS_BUFFERS", 100000);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	nkern = test_env_u64("DAO_TEST_STRESS_KERNELS", 200000);
#else
	nkern = test_env_u64("DAO_TEST_STRESS_KERNELS", 1000000);
#endif
	if (nbuf < 1000)
		tap_bail("DAO_TEST_STRESS_BUFFERS must be at least 1000");
	levels[0] = nbuf / 100;
	levels[1] = nbuf / 10;
	levels[2] = nbuf;
	bufs = calloc(nbuf, sizeof(*bufs));
	ref = calloc(nbuf, sizeof(*ref));
	if (!bufs || !ref)
		tap_bail("out of memory");

	ctx = test_open(BUDGET, DAO_POLICY_DAO, 64, 0);
	prev = test_stats(ctx);
	for (int l = 0; l < 3; l++) {
		uint64_t per_level = nkern / 3 + (l == 2 ? nkern % 3 : 0);
		uint64_t t0, t1;

		add_buffers(ctx, bufs, ref, live, levels[l], &kernels);
		live = levels[l];
		TEST_TRY(dao_sync(ctx));
		t0 = now_ns();
		for (uint64_t k = 0; k < per_level; k++) {
			size_t x = (size_t)(test_rng_next(&rng) % live);
			size_t n = 1 + (size_t)(test_rng_next(&rng) % 3);
			dao_operand ops[3] = { { bufs[x], DAO_RW } };
			uint64_t id = kernels + 1;

			ref[x].count++;
			ref[x].check = ref[x].check * 31 + id;
			for (size_t j = 1; j < n; j++) {
				size_t y = (size_t)(test_rng_next(&rng) % live);

				if (y == x)
					y = (y + 1) % live;
				ops[j] = (dao_operand){ bufs[y], DAO_R };
				ref[x].check += ref[y].count;
			}
			TEST_TRY(dao_launch(ctx, step_kernel, (void *)(uintptr_t)id, ops, n));
			kernels++;
		}
		TEST_TRY(dao_sync(ctx));
		t1 = now_ns();
		s = test_stats(ctx);
		tap_diag("%7zu live buffers: %" PRIu64 " kernels, %.0f ns per kernel; "
			 "%" PRIu64 " fetches (%" PRIu64 " prefetched), %" PRIu64
			 " evictions, %" PRIu64 " write-backs, %.0f stall ms",
			 live, per_level, per_level ? (double)(t1 - t0) / (double)per_level : 0.0,
			 s.fetches - prev.fetches, s.prefetches - prev.prefetches,
			 s.evictions - prev.evictions, s.writebacks - prev.writebacks,
			 (double)(s.stall_ns - prev.stall_ns) / 1e6);
		TAP_IS_U64(s.live_buffers, live, "live buffers as created");
		tap_ok(s.peak_device_bytes <= BUDGET, "device bytes within the budget (peak %" PRIu64
		       ")", s.peak_device_bytes);
		prev = s;
	}
	TAP_IS_U64(s.kernels, kernels, "every kernel ran");

	/* Every buffer, gathered by kernels a batch at a time. */
	{
		static dao_operand ops[INIT_BATCH];
		static struct cell cells[INIT_BATCH - 1];
		dao_buf out = test_buffer(ctx, sizeof(cells));

		for (size_t i = 0; i < live; i += INIT_BATCH - 1) {
			size_t n = live - i < INIT_BATCH - 1 ? live - i : INIT_BATCH - 1;

			for (size_t j = 0; j < n; j++)
				ops[j] = (dao_operand){ bufs[i + j], DAO_R };
			ops[n] = (dao_operand){ out, DAO_RW };
			TEST_TRY(dao_launch(ctx, gather_kernel, NULL, ops, n + 1));
			TEST_TRY(dao_read(ctx, out, 0, cells, n * sizeof(struct cell)));
			for (size_t j = 0; j < n; j++) {
				if (cells[j].count == ref[i + j].count &&
				    cells[j].check == ref[i + j].check)
					continue;
				if (bad++ < 5)
					tap_diag("  buffer %zu: count %" PRIu64 " check %#" PRIx64
						 ", want %" PRIu64 " %#" PRIx64,
						 i + j, cells[j].count, cells[j].check, ref[i + j].count,
						 ref[i + j].check);
			}
		}
		TEST_TRY(dao_release(ctx, out));
	}
	TAP_IS_U64(bad, 0, "every buffer holds its kernels' results in order");

	/* A sample read directly, timed: host access with many live buffers. */
	{
		uint64_t t0 = now_ns(), t1;
		size_t samples = live < 100 ? live : 100;

		bad = 0;
		for (size_t k = 0; k < samples; k++) {
			size_t i = (size_t)(test_rng_next(&rng) % live);

			TEST_TRY(dao_read(ctx, bufs[i], 0, &got, sizeof(got)));
			bad += got.count != ref[i].count || got.check != ref[i].check;
		}
		t1 = now_ns();
		tap_diag("%7zu live buffers: %.0f ns per dao_read of %zu bytes", live,
			 (double)(t1 - t0) / (double)samples, sizeof(got));
	}
	TAP_IS_U64(bad, 0, "and so does a sample read with dao_read");

	for (size_t i = 0; i < live; i++)
		TEST_TRY(dao_release(ctx, bufs[i]));
	TEST_TRY(dao_sync(ctx));
	s = test_stats(ctx);
	TAP_IS_U64(s.live_buffers, 0, "all buffers freed after release");
	TAP_IS_U64(s.device_bytes, 0, "no device bytes left");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
	free(bufs);
	free(ref);
	tap_plan_done();
	return tap_exit();
}
