// SPDX-License-Identifier: GPL-2.0
/*
 * libdao_job.c - a libdao job on the host backend whose staging memory is
 * larger than the node limit dao.ko enforces: libdao pins what the module
 * grants, falls back to unpinned memory for the rest, and the results are
 * exactly those of a plain C computation of the same job.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dao.h>

#include "kselftest_harness.h"
#include "util.h"

#define BUFS 8
#define BUF_BYTES (256 * 1024)
#define WORDS (BUF_BYTES / sizeof(uint32_t))
#define ROUNDS 3

struct step {
	uint32_t add;
};

/* b[i] = b[i] * 3 + add + i: order-sensitive, so a lost or repeated step shows. */
static int bump(const dao_kernel_args *a)
{
	const struct step *s = a->user;
	uint32_t *w = a->ptrs[0];

	for (uint64_t i = 0; i < a->sizes[0] / sizeof(uint32_t); i++)
		w[i] = w[i] * 3 + s->add + (uint32_t)i;
	return 0;
}

/* dst = src ^ a constant: dst is overwritten whole (DAO_W). */
static int copy_xor(const dao_kernel_args *a)
{
	const uint32_t *src = a->ptrs[0];
	uint32_t *dst = a->ptrs[1];

	for (uint64_t i = 0; i < a->sizes[0] / sizeof(uint32_t); i++)
		dst[i] = src[i] ^ 0x5a5a5a5au;
	return 0;
}

static void reference(uint32_t (*m)[WORDS], const struct step (*steps)[BUFS])
{
	for (int r = 0; r < ROUNDS; r++) {
		for (int b = 0; b < BUFS; b++)
			for (size_t i = 0; i < WORDS; i++)
				m[b][i] = m[b][i] * 3 + steps[r][b].add + (uint32_t)i;
		for (size_t i = 0; i < WORDS; i++)
			m[(r + 1) % BUFS][i] = m[r % BUFS][i] ^ 0x5a5a5a5au;
	}
}

TEST(job_larger_than_node_limit_completes)
{
	static uint32_t want[BUFS][WORDS], got[WORDS];
	static struct step steps[ROUNDS][BUFS];
	struct node_state st0, st;
	long long limit0 = param_get("max_pinned_mb");
	struct nl_sock *sk;
	dao_config cfg;
	dao_ctx ctx;
	dao_buf buf[BUFS];
	int r, b;

	ASSERT_EQ(0, dnl_open(&sk));
	/* One MiB for the whole node; the job stages two. */
	ASSERT_EQ(0, limit_set_mb(1));
	ASSERT_EQ(0, dnl_get_node(sk, &st0));

	for (b = 0; b < BUFS; b++)
		for (size_t i = 0; i < WORDS; i++)
			want[b][i] = (uint32_t)(b * 1000003u + i);
	for (r = 0; r < ROUNDS; r++)
		for (b = 0; b < BUFS; b++)
			steps[r][b].add = (uint32_t)(r * 31 + b * 7 + 1);

	dao_config_init(&cfg);
	cfg.backend = DAO_BACKEND_HOST;
	cfg.flags = DAO_CONFIG_PRIVATE;
	cfg.device_budget = 3 * BUF_BYTES;
	cfg.log_level = DAO_LOG_INFO;
	ASSERT_EQ(DAO_OK, dao_open(&cfg, &ctx));
	for (b = 0; b < BUFS; b++) {
		ASSERT_EQ(DAO_OK, dao_buffer_create(ctx, BUF_BYTES, &buf[b]));
		ASSERT_EQ(DAO_OK, dao_write(ctx, buf[b], 0, want[b], BUF_BYTES));
	}
	for (r = 0; r < ROUNDS; r++) {
		for (b = 0; b < BUFS; b++) {
			dao_operand op = { buf[b], DAO_RW };

			ASSERT_EQ(DAO_OK, dao_launch(ctx, bump, &steps[r][b], &op, 1));
		}
		dao_operand ops[2] = { { buf[r % BUFS], DAO_R }, { buf[(r + 1) % BUFS], DAO_W } };

		ASSERT_EQ(DAO_OK, dao_launch(ctx, copy_xor, NULL, ops, 2));
	}
	ASSERT_EQ(DAO_OK, dao_sync(ctx));
	reference(want, steps);
	for (b = 0; b < BUFS; b++) {
		ASSERT_EQ(DAO_OK, dao_read(ctx, buf[b], 0, got, BUF_BYTES));
		EXPECT_EQ(0, memcmp(got, want[b], BUF_BYTES));
		ASSERT_EQ(DAO_OK, dao_release(ctx, buf[b]));
	}

	/* While the context is open libdao holds what it pinned, within the limit. */
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_LE(st.pinned, MiB);
	ASSERT_EQ(DAO_OK, dao_close(ctx, NULL));
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(0, st.pinned);
	EXPECT_EQ(0, limit_set_mb(limit0));
	dnl_close(sk);
	if (st.refused == st0.refused && st.peak == st0.peak)
		SKIP(return, "libdao did not pin through /dev/dao (not wired in this build)");
	/* The job asked for more than the node allows: some pins were refused. */
	EXPECT_LT(st0.refused, st.refused);
}

TEST_HARNESS_MAIN
