/* SPDX-License-Identifier: MIT */
/*
 * test_api_io.c - dao_write and dao_read: argument errors (which change
 * nothing), ranges relative to views, ordering against kernels submitted
 * before, and contents surviving evictions.
 */
#include "common.h"

/* Adds one to every byte of every operand. */
static int inc_kernel(const dao_kernel_args *a)
{
	for (uint32_t i = 0; i < a->count; i++) {
		unsigned char *p = a->ptrs[i];

		for (uint64_t j = 0; j < a->sizes[i]; j++)
			p[j]++;
	}
	return 0;
}

static void test_errors(void)
{
	dao_ctx ctx = test_open(1 << 16, DAO_POLICY_DAO, 8, 0);
	dao_buf b = test_buffer(ctx, 100), z = test_buffer(ctx, 0), v;
	unsigned char init[100], junk[200], got[100];
	dao_stats s0, s1;

	test_fill(init, sizeof(init), 5);
	memset(junk, 0xee, sizeof(junk));
	TEST_TRY(dao_write(ctx, b, 0, init, sizeof(init)));
	TEST_TRY(dao_view_create(ctx, b, 40, 50, &v));
	s0 = test_stats(ctx);

	TAP_IS_STATUS(dao_write(ctx, b, 0, NULL, 0), DAO_OK, "write len 0, src NULL: OK");
	TAP_IS_STATUS(dao_read(ctx, b, 0, NULL, 0), DAO_OK, "read len 0, dst NULL: OK");
	TAP_IS_STATUS(dao_write(ctx, b, 100, junk, 0), DAO_OK, "write len 0 at the end: OK");
	TAP_IS_STATUS(dao_read(ctx, b, 100, got, 0), DAO_OK, "read len 0 at the end: OK");
	TAP_IS_STATUS(dao_write(ctx, b, 0, NULL, 1), DAO_ERR_NULL, "write src NULL: NULL");
	TAP_IS_STATUS(dao_read(ctx, b, 0, NULL, 1), DAO_ERR_NULL, "read dst NULL: NULL");
	TAP_IS_STATUS(dao_write(ctx, b, UINT64_MAX, junk, 2), DAO_ERR_OVERFLOW,
		      "write offset+len wraps: OVERFLOW");
	TAP_IS_STATUS(dao_read(ctx, b, 2, got, UINT64_MAX), DAO_ERR_OVERFLOW,
		      "read offset+len wraps: OVERFLOW");
	TAP_IS_STATUS(dao_write(ctx, b, 50, junk, 51), DAO_ERR_RANGE,
		      "write one byte past the end: RANGE");
	TAP_IS_STATUS(dao_read(ctx, b, 100, got, 1), DAO_ERR_RANGE, "read past the end: RANGE");
	TAP_IS_STATUS(dao_write(ctx, b, 0, junk, 200), DAO_ERR_RANGE,
		      "write longer than the buffer: RANGE");
	TAP_IS_STATUS(dao_write(ctx, v, 0, junk, 51), DAO_ERR_RANGE,
		      "write past a view's end (inside its owner): RANGE");
	TAP_IS_STATUS(dao_read(ctx, v, 10, got, 41), DAO_ERR_RANGE,
		      "read past a view's end (inside its owner): RANGE");
	TAP_IS_STATUS(dao_write(ctx, z, 0, junk, 1), DAO_ERR_RANGE,
		      "write into a 0-byte buffer: RANGE");
	TAP_IS_STATUS(dao_write(ctx, z, 0, junk, 0), DAO_OK, "write 0 bytes into a 0-byte buffer");
	TAP_IS_STATUS(dao_read(ctx, z, 0, got, 0), DAO_OK, "read 0 bytes from a 0-byte buffer");

	memset(got, 0, sizeof(got));
	TAP_IS_STATUS(dao_read(ctx, b, 0, got, sizeof(got)), DAO_OK, "read everything");
	tap_ok(!memcmp(got, init, sizeof(init)), "refused writes changed no byte");
	s1 = test_stats(ctx);
	TAP_IS_U64(s1.live_buffers, s0.live_buffers, "refused calls created no buffer");
	TAP_IS_U64(s1.kernels, s0.kernels, "and ran no kernel");

	/* Offsets are relative to the view. */
	memset(junk, 0x77, 10);
	TAP_IS_STATUS(dao_write(ctx, v, 45, junk, 5), DAO_OK, "write the last 5 bytes of the view");
	memcpy(init + 85, junk, 5);
	TAP_IS_STATUS(dao_read(ctx, b, 0, got, sizeof(got)), DAO_OK, "read the owner");
	tap_ok(!memcmp(got, init, sizeof(init)), "the write landed at owner offset 85");
	TAP_IS_STATUS(dao_read(ctx, v, 0, got, 50), DAO_OK, "read the whole view");
	tap_ok(!memcmp(got, init + 40, 50), "the view reads owner bytes [40, 90)");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/* Reads and writes are ordered after every kernel submitted before them. */
static void test_ordering(void)
{
	dao_ctx ctx = test_open(1 << 16, DAO_POLICY_DAO, 64, 0);
	dao_buf b = test_buffer(ctx, 4096);
	dao_operand op = { b, DAO_RW };
	unsigned char data[4096], got[4096];
	int bad = 0;

	memset(data, 0, sizeof(data));
	TEST_TRY(dao_write(ctx, b, 0, data, sizeof(data)));
	for (int round = 1; round <= 20; round++) {
		/* Kernels queued behind each other, then a host access. */
		for (int k = 0; k < round; k++)
			TEST_TRY(dao_launch(ctx, inc_kernel, NULL, &op, 1));
		TEST_TRY(dao_read(ctx, b, 0, got, sizeof(got)));
		for (size_t i = 0; i < sizeof(got); i++)
			if (got[i] != (unsigned char)(data[i] + round))
				bad++;
		/* A write after queued kernels replaces what they produced. */
		TEST_TRY(dao_launch(ctx, inc_kernel, NULL, &op, 1));
		test_fill(data, sizeof(data), (uint64_t)round);
		TEST_TRY(dao_write(ctx, b, 0, data, sizeof(data)));
	}
	TAP_IS_U64(bad, 0, "every read saw all kernels before it and the write after them");
	TEST_TRY(dao_read(ctx, b, 0, got, sizeof(got)));
	tap_ok(!memcmp(got, data, sizeof(data)), "the last write is what remains");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/* Contents survive eviction: a budget holding two of eight buffers. */
static void test_eviction_roundtrip(void)
{
	enum { N = 8, SIZE = 1024 };
	dao_ctx ctx = test_open(2 * SIZE, DAO_POLICY_LRU, 4, 0);
	unsigned char want[N][SIZE], got[SIZE];
	dao_buf b[N];
	int bad = 0;

	for (int i = 0; i < N; i++) {
		b[i] = test_buffer(ctx, SIZE);
		test_fill(want[i], SIZE, 100 + (uint64_t)i);
		TEST_TRY(dao_write(ctx, b[i], 0, want[i], SIZE));
	}
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++) {
			dao_operand op = { b[(i * 3 + round) % N], DAO_RW };

			TEST_TRY(dao_launch(ctx, inc_kernel, NULL, &op, 1));
			for (int j = 0; j < SIZE; j++)
				want[(i * 3 + round) % N][j]++;
		}
		/* A partial write into a buffer that is likely evicted. */
		memset(got, 0x5a, 16);
		TEST_TRY(dao_write(ctx, b[round], 100, got, 16));
		memset(want[round] + 100, 0x5a, 16);
	}
	for (int i = 0; i < N; i++) {
		TEST_TRY(dao_read(ctx, b[i], 0, got, SIZE));
		bad += memcmp(got, want[i], SIZE) != 0;
	}
	TAP_IS_U64(bad, 0, "eight buffers through a two-buffer budget read back intact");
	tap_ok(test_stats(ctx).evictions > 0, "evictions happened");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

int main(void)
{
	test_clear_env();
	test_errors();
	test_ordering();
	test_eviction_roundtrip();
	tap_plan_done();
	return tap_exit();
}
