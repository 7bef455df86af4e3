/* SPDX-License-Identifier: MIT */
/*
 * test_executor.c - what the executor does under tiny budgets, seen through
 * dao_stats: evictions happen and dirty data survives them, w operands are
 * never fetched (exact h2d bytes for hand-built programs whose transfers are
 * forced), prefetches happen when the lookahead allows, buffers are freed
 * after their last use, and zero-byte buffers never move.
 */
#include "common.h"

#define KB 1024u

/* Adds one to every byte of every rw operand (and reads the others). */
static int inc_kernel(const dao_kernel_args *a)
{
	const uint64_t *modes = a->user;

	for (uint32_t i = 0; i < a->count; i++) {
		unsigned char *p = a->ptrs[i];

		if (modes && modes[i] != DAO_RW)
			continue;
		for (uint64_t j = 0; j < a->sizes[i]; j++)
			p[j]++;
	}
	return 0;
}

/* Fills every operand with the byte given as user data. A zero-byte operand
 * may come with a NULL pointer: nothing was allocated for it. */
static int fill_kernel(const dao_kernel_args *a)
{
	for (uint32_t i = 0; i < a->count; i++)
		if (a->sizes[i])
			memset(a->ptrs[i], (int)(uintptr_t)a->user, a->sizes[i]);
	return 0;
}

/* Sums operands 0..n-2 byte-wise into the last operand (all the same size). */
static int sum_kernel(const dao_kernel_args *a)
{
	unsigned char *out = a->ptrs[a->count - 1];

	for (uint64_t j = 0; j < a->sizes[a->count - 1]; j++) {
		unsigned v = 0;

		for (uint32_t i = 0; i + 1 < a->count; i++)
			v += ((unsigned char *)a->ptrs[i])[j];
		out[j] = (unsigned char)v;
	}
	return 0;
}

/* Adds operands 0..n-2 byte-wise into the last operand. */
static int add_kernel(const dao_kernel_args *a)
{
	unsigned char *out = a->ptrs[a->count - 1];

	for (uint64_t j = 0; j < a->sizes[a->count - 1]; j++)
		for (uint32_t i = 0; i + 1 < a->count; i++)
			out[j] = (unsigned char)(out[j] + ((unsigned char *)a->ptrs[i])[j]);
	return 0;
}

static const uint64_t modes_rw_r[2] = { DAO_RW, DAO_R };

static void launch1(dao_ctx ctx, dao_kernel_fn fn, void *user, dao_buf b, dao_mode m)
{
	dao_operand op = { b, m };

	TEST_TRY(dao_launch(ctx, fn, user, &op, 1));
}

/* Eight 1 KiB buffers updated in place through a 2 KiB budget. */
static void test_dirty_writeback(void)
{
	enum { N = 8 };
	dao_ctx ctx = test_open(2 * KB, DAO_POLICY_BELADY, 4, DAO_CONFIG_DETERMINISTIC);
	unsigned char want[N][KB], got[KB];
	dao_buf b[N];
	dao_stats s;
	int bad = 0;

	for (int i = 0; i < N; i++) {
		b[i] = test_buffer(ctx, KB);
		test_fill(want[i], KB, (uint64_t)i);
		TEST_TRY(dao_write(ctx, b[i], 0, want[i], KB));
	}
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < N; i++) {
			launch1(ctx, inc_kernel, NULL, b[i], DAO_RW);
			for (int j = 0; j < (int)KB; j++)
				want[i][j]++;
		}
	}
	TEST_TRY(dao_sync(ctx));
	s = test_stats(ctx);
	tap_ok(s.evictions > 0, "evictions happen (%" PRIu64 ")", s.evictions);
	tap_ok(s.writebacks > 0 && s.d2h_bytes >= KB,
	       "dirty buffers are written back (%" PRIu64 " copies, %" PRIu64 " bytes)",
	       s.writebacks, s.d2h_bytes);
	tap_ok(s.peak_device_bytes <= 2 * KB, "the device never held more than the budget (%" PRIu64
	       ")", s.peak_device_bytes);
	for (int i = 0; i < N; i++) {
		TEST_TRY(dao_read(ctx, b[i], 0, got, KB));
		bad += memcmp(got, want[i], KB) != 0;
	}
	TAP_IS_U64(bad, 0, "every buffer reads back with all its updates");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/*
 * Budget 2 KiB; A, B inputs of 1 KiB, T a 1 KiB temporary each kernel
 * overwrites:
 *   k1: r A, w T     A fetched (1 KiB)
 *   k2: r B, w T     only A can make room for B: B fetched (1 KiB)
 *   k3: r A, w T     only B can make room for A: A fetched again (1 KiB)
 * Every transfer is forced, so any policy moves exactly 3 KiB to the device;
 * T is never fetched and, dead before each overwrite, never written back.
 * (How many evictions depends on whether the policy drops the dead T early,
 * but each one is a drop.)
 */
static void test_w_not_fetched(void)
{
	dao_ctx ctx = test_open(2 * KB, DAO_POLICY_BELADY, 8, DAO_CONFIG_DETERMINISTIC);
	dao_buf a = test_buffer(ctx, KB), b = test_buffer(ctx, KB), t = test_buffer(ctx, KB);
	unsigned char in_a[KB], in_b[KB], got[KB], want[KB];
	dao_operand ops[2];
	dao_stats s;

	test_fill(in_a, KB, 21);
	test_fill(in_b, KB, 22);
	TEST_TRY(dao_write(ctx, a, 0, in_a, KB));
	TEST_TRY(dao_write(ctx, b, 0, in_b, KB));
	ops[1] = (dao_operand){ t, DAO_W };
	ops[0] = (dao_operand){ a, DAO_R };
	TEST_TRY(dao_launch_named(ctx, "k1", 0, sum_kernel, NULL, ops, 2));
	ops[0] = (dao_operand){ b, DAO_R };
	TEST_TRY(dao_launch_named(ctx, "k2", 0, sum_kernel, NULL, ops, 2));
	ops[0] = (dao_operand){ a, DAO_R };
	TEST_TRY(dao_launch_named(ctx, "k3", 0, sum_kernel, NULL, ops, 2));
	TEST_TRY(dao_sync(ctx));
	s = test_stats(ctx);
	TAP_IS_U64(s.h2d_bytes, 3 * KB, "h2d bytes: A, B, A again; T never fetched");
	TAP_IS_U64(s.fetches, 3, "three fetches");
	TAP_IS_U64(s.d2h_bytes, 0, "nothing written back: A and B are clean, T dead");
	tap_ok(s.evictions >= 2, "at least two evictions (%" PRIu64 ")", s.evictions);
	TAP_IS_U64(s.drops, s.evictions, "all of them drops");
	TEST_TRY(dao_read(ctx, t, 0, got, KB));
	memcpy(want, in_a, KB);
	tap_ok(!memcmp(got, want, KB), "T holds k3's result (a copy of A)");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/*
 * Two inputs and no room to keep them both with the output:
 *   write X, Y (1 KiB each); O: 1 KiB; budget 2 KiB
 *   k1: r X, w O (O = X);  k2: r Y, rw O (O += Y);  read O
 * X fetched, then Y fetched in X's place (X is clean: dropped), O is never
 * fetched (its first use is w) and stays for k2, so h2d is exactly 2 KiB.
 */
static void test_w_then_rw(void)
{
	dao_ctx ctx = test_open(2 * KB, DAO_POLICY_BELADY, 8, DAO_CONFIG_DETERMINISTIC);
	dao_buf x = test_buffer(ctx, KB), y = test_buffer(ctx, KB), o = test_buffer(ctx, KB);
	unsigned char in_x[KB], in_y[KB], got[KB], want[KB];
	dao_operand ops[2];
	dao_stats s;

	test_fill(in_x, KB, 31);
	test_fill(in_y, KB, 32);
	TEST_TRY(dao_write(ctx, x, 0, in_x, KB));
	TEST_TRY(dao_write(ctx, y, 0, in_y, KB));
	ops[0] = (dao_operand){ x, DAO_R };
	ops[1] = (dao_operand){ o, DAO_W };
	TEST_TRY(dao_launch(ctx, sum_kernel, NULL, ops, 2));
	ops[0] = (dao_operand){ y, DAO_R };
	ops[1] = (dao_operand){ o, DAO_RW };
	TEST_TRY(dao_launch(ctx, add_kernel, NULL, ops, 2));
	TEST_TRY(dao_sync(ctx));
	s = test_stats(ctx);
	TAP_IS_U64(s.h2d_bytes, 2 * KB, "h2d bytes: X and Y once each, O never");
	TAP_IS_U64(s.d2h_bytes, 0, "no write-back: X is clean");
	TEST_TRY(dao_read(ctx, o, 0, got, KB));
	for (int j = 0; j < (int)KB; j++)
		want[j] = (unsigned char)(in_x[j] + in_y[j]);
	tap_ok(!memcmp(got, want, KB), "O = X + Y");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/* Eight inputs read one per kernel: with a window of 64 and room for all,
 * inputs of later kernels are fetched ahead of their turn. */
static void test_prefetch(void)
{
	enum { N = 8 };
	dao_ctx ctx = test_open(64 * KB, DAO_POLICY_DAO, 64, DAO_CONFIG_DETERMINISTIC);
	dao_buf in[N], acc = test_buffer(ctx, KB);
	unsigned char data[KB], got[KB], want[KB];
	dao_operand ops[2];
	dao_stats s;

	memset(want, 0, sizeof(want));
	TEST_TRY(dao_write(ctx, acc, 0, want, KB));
	for (int i = 0; i < N; i++) {
		in[i] = test_buffer(ctx, KB);
		test_fill(data, KB, 40 + (uint64_t)i);
		TEST_TRY(dao_write(ctx, in[i], 0, data, KB));
		for (int j = 0; j < (int)KB; j++)
			want[j] = (unsigned char)(want[j] + data[j]);
	}
	for (int i = 0; i < N; i++) {
		ops[0] = (dao_operand){ in[i], DAO_R };
		ops[1] = (dao_operand){ acc, DAO_RW };
		TEST_TRY(dao_launch(ctx, add_kernel, NULL, ops, 2));
	}
	TEST_TRY(dao_sync(ctx));
	s = test_stats(ctx);
	tap_ok(s.prefetches > 0, "prefetches happen with a lookahead of 64 (%" PRIu64 " of %" PRIu64
	       " fetches)", s.prefetches, s.fetches);
	TAP_IS_U64(s.h2d_bytes, (N + 1) * KB, "each input and the accumulator fetched once");
	TAP_IS_U64(s.evictions, 0, "no evictions with room for everything");
	TEST_TRY(dao_read(ctx, acc, 0, got, KB));
	tap_ok(!memcmp(got, want, KB), "the accumulator holds the sum of the inputs");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/* A buffer is freed once released and past its last queued use. */
static void test_free_after_last_use(void)
{
	dao_ctx ctx = test_open(64 * KB, DAO_POLICY_BELADY, 8, DAO_CONFIG_DETERMINISTIC);
	dao_buf a = test_buffer(ctx, 4 * KB), b = test_buffer(ctx, 4 * KB);
	unsigned char data[4 * KB], got[4 * KB];
	dao_operand ops[2] = { { a, DAO_R }, { b, DAO_W } };
	dao_stats s0, s1, s2;

	test_fill(data, sizeof(data), 50);
	TEST_TRY(dao_write(ctx, a, 0, data, sizeof(data)));
	TEST_TRY(dao_launch(ctx, sum_kernel, NULL, ops, 2));
	TEST_TRY(dao_sync(ctx));
	s0 = test_stats(ctx);
	TAP_IS_U64(s0.live_buffers, 2, "two live buffers");
	TAP_IS_U64(s0.device_bytes, 8 * KB, "both resident after the kernel");

	TEST_TRY(dao_release(ctx, a));
	TEST_TRY(dao_sync(ctx));
	s1 = test_stats(ctx);
	TAP_IS_U64(s1.live_buffers, 1, "released with no queued use: freed");
	TAP_IS_U64(s1.device_bytes, 4 * KB, "its device bytes are back");
	tap_ok(s1.host_bytes <= s0.host_bytes, "host bytes did not grow (%" PRIu64 " -> %" PRIu64 ")",
	       s0.host_bytes, s1.host_bytes);

	/* Released while a queued kernel still needs it: the kernel still sees
	 * its contents; the memory goes after. */
	a = test_buffer(ctx, 4 * KB);
	TEST_TRY(dao_write(ctx, a, 0, data, sizeof(data)));
	ops[0] = (dao_operand){ a, DAO_R };
	TEST_TRY(dao_launch(ctx, sum_kernel, NULL, ops, 2));
	TEST_TRY(dao_release(ctx, a));
	TEST_TRY(dao_read(ctx, b, 0, got, sizeof(got)));
	tap_ok(!memcmp(got, data, sizeof(data)),
	       "a kernel queued before the release read the released buffer");
	TEST_TRY(dao_sync(ctx));
	s2 = test_stats(ctx);
	TAP_IS_U64(s2.live_buffers, 1, "after its last use the released buffer is gone");
	TAP_IS_U64(s2.device_bytes, 4 * KB, "and so are its device bytes");

	/* A view holds its owner; the owner goes with the view. */
	a = test_buffer(ctx, 4 * KB);
	{
		dao_buf v;

		TEST_TRY(dao_view_create(ctx, a, 0, KB, &v));
		TEST_TRY(dao_release(ctx, a));
		launch1(ctx, fill_kernel, (void *)(uintptr_t)1, v, DAO_RW);
		TEST_TRY(dao_sync(ctx));
		TAP_IS_U64(test_stats(ctx).live_buffers, 2, "an owner held by a view stays");
		TEST_TRY(dao_release(ctx, v));
		TEST_TRY(dao_sync(ctx));
		s2 = test_stats(ctx);
		TAP_IS_U64(s2.live_buffers, 1, "released view: its owner is freed");
		TAP_IS_U64(s2.device_bytes, 4 * KB, "with its device bytes");
	}
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/*
 * Adding zero-byte operands to every kernel of a program under a tiny budget
 * changes no transfer and no eviction: they allocate nothing, never move.
 */
static dao_stats run_with_zeros(int zeros, unsigned char *result)
{
	enum { N = 6 };
	dao_ctx ctx = test_open(2 * KB, DAO_POLICY_BELADY, 4, DAO_CONFIG_DETERMINISTIC);
	dao_buf b[N], z[4];
	dao_operand ops[6];
	unsigned char data[KB];
	dao_stats s;

	for (int i = 0; i < N; i++) {
		b[i] = test_buffer(ctx, KB);
		test_fill(data, KB, 60 + (uint64_t)i);
		TEST_TRY(dao_write(ctx, b[i], 0, data, KB));
	}
	for (int i = 0; i < 4; i++)
		z[i] = test_buffer(ctx, 0);
	for (int k = 0; k < 3 * N; k++) {
		int n = 0;

		/* inc_kernel has nothing to change in a zero-byte operand. */
		ops[n++] = (dao_operand){ b[(k * 5) % N], DAO_RW };
		for (int i = 0; i < zeros; i++)
			ops[n++] = (dao_operand){ z[i], (dao_mode)(DAO_R + (k + i) % 3) };
		TEST_TRY(dao_launch(ctx, inc_kernel, NULL, ops, (size_t)n));
	}
	TEST_TRY(dao_sync(ctx));
	s = test_stats(ctx);
	for (int i = 0; i < N; i++)
		TEST_TRY(dao_read(ctx, b[i], 0, result + (size_t)i * KB, KB));
	TEST_TRY(dao_close(ctx, NULL));
	return s;
}

static void test_zero_byte(void)
{
	unsigned char with[6 * KB], without[6 * KB];
	dao_stats s0 = run_with_zeros(0, without), s4 = run_with_zeros(4, with);
	dao_ctx ctx = test_open(2 * KB, DAO_POLICY_DAO, 4, 0);
	dao_buf z = test_buffer(ctx, 0);
	dao_stats s;

	tap_ok(s0.evictions > 0, "the program evicts (%" PRIu64 ")", s0.evictions);
	TAP_IS_U64(s4.h2d_bytes, s0.h2d_bytes, "zero-byte operands add no h2d bytes");
	TAP_IS_U64(s4.d2h_bytes, s0.d2h_bytes, "nor d2h bytes");
	TAP_IS_U64(s4.fetches, s0.fetches, "nor fetches");
	TAP_IS_U64(s4.writebacks, s0.writebacks, "nor write-backs");
	TAP_IS_U64(s4.evictions, s0.evictions, "nor evictions");
	tap_ok(!memcmp(with, without, sizeof(with)), "and the results are the same");

	for (int i = 0; i < 10; i++)
		launch1(ctx, fill_kernel, (void *)(uintptr_t)7, z, (dao_mode)(DAO_R + i % 3));
	TEST_TRY(dao_write(ctx, z, 0, NULL, 0));
	TEST_TRY(dao_sync(ctx));
	s = test_stats(ctx);
	TAP_IS_U64(s.h2d_bytes + s.d2h_bytes + s.fetches + s.writebacks + s.evictions, 0,
		   "kernels on a zero-byte buffer alone move nothing");
	TAP_IS_U64(s.device_bytes + s.peak_device_bytes, 0, "and occupy no device bytes");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/* The budget exactly equal to the largest kernel: everything else must go
 * for it, and every result is still right. */
static void test_exact_budget(void)
{
	enum { N = 5 };
	/* Operands of 3 KiB + 1 KiB: the budget is exactly 4 KiB. */
	dao_ctx ctx = test_open(4 * KB, DAO_POLICY_LRU, 2, 0);
	dao_buf big[N], small[N];
	unsigned char want_big[N][3 * KB], want_small[N][KB], got[3 * KB];
	dao_operand ops[2];
	int bad = 0;

	for (int i = 0; i < N; i++) {
		big[i] = test_buffer(ctx, 3 * KB);
		small[i] = test_buffer(ctx, KB);
		test_fill(want_big[i], 3 * KB, 70 + (uint64_t)i);
		memset(want_small[i], 0, KB);
		TEST_TRY(dao_write(ctx, big[i], 0, want_big[i], 3 * KB));
		TEST_TRY(dao_write(ctx, small[i], 0, want_small[i], KB));
	}
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++) {
			int j = (i + round) % N;

			ops[0] = (dao_operand){ big[i], DAO_RW };
			ops[1] = (dao_operand){ small[j], DAO_RW };
			TEST_TRY(dao_launch(ctx, inc_kernel, NULL, ops, 2));
			for (int x = 0; x < (int)(3 * KB); x++)
				want_big[i][x]++;
			for (int x = 0; x < (int)KB; x++)
				want_small[j][x]++;
		}
	}
	for (int i = 0; i < N; i++) {
		TEST_TRY(dao_read(ctx, big[i], 0, got, 3 * KB));
		bad += memcmp(got, want_big[i], 3 * KB) != 0;
		TEST_TRY(dao_read(ctx, small[i], 0, got, KB));
		bad += memcmp(got, want_small[i], KB) != 0;
	}
	TAP_IS_U64(bad, 0, "kernels needing the whole budget all ran right");
	tap_ok(test_stats(ctx).peak_device_bytes <= 4 * KB, "within the budget");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/* n buffers of 1 KB, buffer i filled with the byte i. */
static void numbered_buffers(dao_ctx ctx, dao_buf *b, int n)
{
	for (int i = 0; i < n; i++) {
		unsigned char init[KB];

		memset(init, i, sizeof(init));
		b[i] = test_buffer(ctx, KB);
		TEST_TRY(dao_write(ctx, b[i], 0, init, KB));
	}
}

/* The same pattern repeated as iterations gives the same results as without
 * iteration marks. */
static void test_iterations(void)
{
	enum { N = 6, ITERS = 5 };
	unsigned char got[2][N][KB];

	for (int marked = 0; marked < 2; marked++) {
		dao_ctx ctx = test_open(2 * KB, DAO_POLICY_DAO, 2, 0);
		dao_buf b[N];

		numbered_buffers(ctx, b, N);
		for (int it = 0; it < ITERS; it++) {
			for (int i = 0; i < N; i++) {
				dao_operand ops[2] = { { b[i], DAO_RW }, { b[(i + 1) % N], DAO_R } };

				TEST_TRY(dao_launch(ctx, inc_kernel, (void *)modes_rw_r, ops, 2));
			}
			if (marked)
				TEST_TRY(dao_iteration(ctx));
		}
		for (int i = 0; i < N; i++)
			TEST_TRY(dao_read(ctx, b[i], 0, got[marked][i], KB));
		TEST_TRY(dao_close(ctx, NULL));
	}
	tap_ok(!memcmp(got[0], got[1], sizeof(got[0])), "iteration marks change no result");
	tap_ok(got[1][0][0] == ITERS && got[1][1][0] == 1 + ITERS,
	       "and the results are the expected counts");
}

/*
 * The iteration predictor (a record is next used at the offset it was
 * first used at in the last iteration) is trusted only after an iteration
 * in which it was right for at least half the records it could be checked
 * on: a job that repeats itself keeps it, one whose iterations rotate
 * their buffers (each takes the next buffer's place) drops it, and the
 * results are the same either way. Seen in its debug line.
 */
static void predictor_job(int rotate, char *log, size_t cap, unsigned char got[6][KB])
{
	enum { N = 6, ITERS = 4 };
	dao_config cfg = test_config(2 * KB, DAO_POLICY_DAO, 2, DAO_CONFIG_PRIVATE);
	struct test_capture cap_err;
	dao_ctx ctx;
	dao_buf b[N];

	cfg.log_level = DAO_LOG_DEBUG;
	test_capture_start(&cap_err);
	TEST_TRY(dao_open(&cfg, &ctx));
	numbered_buffers(ctx, b, N);
	for (int it = 0; it < ITERS; it++) {
		for (int i = 0; i < N; i++) {
			dao_operand op = { b[(i + rotate * it) % N], DAO_RW };

			TEST_TRY(dao_launch(ctx, inc_kernel, NULL, &op, 1));
		}
		TEST_TRY(dao_iteration(ctx));
	}
	for (int i = 0; i < N; i++)
		TEST_TRY(dao_read(ctx, b[i], 0, got[i], KB));
	TEST_TRY(dao_close(ctx, NULL));
	test_capture_stop(&cap_err, log, cap);
}

static void test_predictor_verdict(void)
{
	static char log[2][16384];
	unsigned char got[2][6][KB];
	bool counts = true;

	predictor_job(0, log[0], sizeof(log[0]), got[0]);
	predictor_job(1, log[1], sizeof(log[1]), got[1]);
	tap_ok(strstr(log[0], "the iteration predictor was right for 6 of 6 records: trusted") &&
		       !strstr(log[0], "not trusted"),
	       "a job that repeats itself: the predictor is right and trusted");
	tap_ok(strstr(log[1], "the iteration predictor was right for 0 of 6 records: not trusted") &&
		       !strstr(log[1], ": trusted"),
	       "a job whose iterations rotate their buffers: wrong, and not trusted");
	for (int i = 0; i < 6; i++)
		counts &= got[0][i][0] == i + 4 && got[1][i][KB - 1] == i + 4;
	tap_ok(counts && !memcmp(got[0], got[1], sizeof(got[0])), "the results are the same either way");
}

int main(void)
{
	test_clear_env();
	test_dirty_writeback();
	test_w_not_fetched();
	test_w_then_rw();
	test_prefetch();
	test_free_after_last_use();
	test_zero_byte();
	test_exact_budget();
	test_iterations();
	test_predictor_verdict();
	tap_plan_done();
	return tap_exit();
}
