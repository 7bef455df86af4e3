/* SPDX-License-Identifier: MIT */
/*
 * test_api_launch.c - dao_launch and dao_launch_named: argument errors,
 * kernels that cannot fit the device budget (refused at once, with the
 * kernel's name in the log), what a kernel function receives, mode merging
 * for repeated operands and partial views, and a failing kernel poisoning
 * its context.
 */
#include "common.h"

#define GRANULE 256u

struct calls {
	int n;
	uint32_t count;
	uint64_t sizes[8];
	unsigned char *ptrs[8];
	void *stream;
};

static int record_kernel(const dao_kernel_args *a)
{
	struct calls *c = a->user;

	c->n++;
	c->count = a->count;
	c->stream = a->stream;
	for (uint32_t i = 0; i < a->count && i < 8; i++) {
		c->sizes[i] = a->sizes[i];
		c->ptrs[i] = a->ptrs[i];
	}
	return 0;
}

static int count_kernel(const dao_kernel_args *a)
{
	(*(int *)a->user)++;
	return 0;
}

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

/* Fills operand 0 with the byte given as user data. */
static int fill_kernel(const dao_kernel_args *a)
{
	memset(a->ptrs[0], (int)(uintptr_t)a->user, a->sizes[0]);
	return 0;
}

/* Copies operand 0 into operand 1 (same size). */
static int copy_kernel(const dao_kernel_args *a)
{
	if (a->count != 2 || a->sizes[0] != a->sizes[1])
		return 1;
	memmove(a->ptrs[1], a->ptrs[0], a->sizes[0]); /* may alias */
	return 0;
}

static int fail_kernel(const dao_kernel_args *a)
{
	(void)a;
	return 1;
}

static void test_arguments(void)
{
	dao_ctx ctx = test_open(1 << 20, DAO_POLICY_DAO, 8, 0);
	dao_buf b = test_buffer(ctx, 64);
	dao_operand *many = calloc(4097, sizeof(*many));
	dao_operand ops[3];
	int calls = 0;
	dao_stats s0, s1;

	if (!many)
		tap_bail("out of memory");
	for (int i = 0; i < 4097; i++)
		many[i] = (dao_operand){ b, DAO_R };
	TEST_TRY(dao_write(ctx, b, 0, (unsigned char[64]){ 0 }, 64));
	s0 = test_stats(ctx);
	TAP_IS_STATUS(dao_launch(ctx, count_kernel, &calls, NULL, 1), DAO_ERR_NULL,
		      "ops NULL with count 1: NULL");
	TAP_IS_STATUS(dao_launch_named(ctx, "k", 0, count_kernel, &calls, NULL, 2), DAO_ERR_NULL,
		      "launch_named ops NULL with count 2: NULL");
	TAP_IS_STATUS(dao_launch(ctx, count_kernel, &calls, many, 4097), DAO_ERR_INVALID,
		      "4097 operands: INVALID");
	TAP_IS_STATUS(dao_launch(ctx, count_kernel, &calls, many, SIZE_MAX), DAO_ERR_INVALID,
		      "SIZE_MAX operands: INVALID");
	for (int mode = -1; mode <= 8; mode++) {
		if (mode == DAO_R || mode == DAO_W || mode == DAO_RW)
			continue;
		ops[0] = (dao_operand){ b, (dao_mode)mode };
		TAP_IS_STATUS(dao_launch(ctx, count_kernel, &calls, ops, 1), DAO_ERR_INVALID,
			      "an unknown mode: INVALID");
	}
	/* A bad operand after good ones queues nothing either. */
	ops[0] = (dao_operand){ b, DAO_RW };
	ops[1] = (dao_operand){ b, DAO_R };
	ops[2] = (dao_operand){ b, (dao_mode)0 };
	TAP_IS_STATUS(dao_launch(ctx, count_kernel, &calls, ops, 3), DAO_ERR_INVALID,
		      "bad mode in the last operand: INVALID");
	ops[2] = (dao_operand){ DAO_BUF_NULL, DAO_R };
	TAP_IS_STATUS(dao_launch(ctx, count_kernel, &calls, ops, 3), DAO_ERR_HANDLE,
		      "DAO_BUF_NULL in the last operand: HANDLE");
	TEST_TRY(dao_sync(ctx));
	s1 = test_stats(ctx);
	TAP_IS_U64(calls, 0, "no refused kernel ran");
	TAP_IS_U64(s1.kernels, s0.kernels, "stats count no refused kernel");
	TAP_IS_U64(s1.h2d_bytes, s0.h2d_bytes, "and no refused kernel moved data");

	TAP_IS_STATUS(dao_launch(ctx, count_kernel, &calls, many, 4096), DAO_OK,
		      "4096 operands (one buffer repeated) are accepted");
	TAP_IS_STATUS(dao_launch(ctx, count_kernel, &calls, NULL, 0), DAO_OK,
		      "count 0 with ops NULL is legal");
	TAP_IS_STATUS(dao_launch(ctx, NULL, NULL, ops, 2), DAO_OK, "fn NULL is legal");
	TAP_IS_STATUS(dao_launch_named(ctx, NULL, 0, count_kernel, &calls, ops, 2), DAO_OK,
		      "name NULL is legal");
	{
		char long_name[5000];

		memset(long_name, 'n', sizeof(long_name) - 1);
		long_name[sizeof(long_name) - 1] = '\0';
		TAP_IS_STATUS(dao_launch_named(ctx, long_name, UINT64_MAX, count_kernel, &calls,
					       ops, 2),
			      DAO_OK, "a 4999-byte name and UINT64_MAX flops are accepted");
	}
	TEST_TRY(dao_sync(ctx));
	TAP_IS_U64(calls, 4, "the four accepted kernels with a function ran");
	TAP_IS_U64(test_stats(ctx).kernels, s0.kernels + 5, "five kernels ran");
	free(many);
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/* Operands that cannot fit: refused at launch, not hung on. */
static void test_budget(void)
{
	dao_config cfg = test_config(4096, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
	dao_buf big, other, view, tiny[17], zero[8];
	dao_operand ops[32];
	struct test_capture cap;
	char log[4096];
	int calls = 0;
	dao_status st;
	dao_ctx ctx;

	cfg.log_level = DAO_LOG_ERROR; /* the refusal must be logged */
	TEST_TRY(dao_open(&cfg, &ctx));
	big = test_buffer(ctx, 3000);
	other = test_buffer(ctx, 2000);
	TEST_TRY(dao_view_create(ctx, big, 0, 100, &view));
	ops[0] = (dao_operand){ big, DAO_RW };
	ops[1] = (dao_operand){ other, DAO_W };

	/* Keep the refusals below out of the test's output, too. */
	test_capture_start(&cap);
	st = dao_launch_named(ctx, "too_big_for_budget", 0, count_kernel, &calls, ops, 2);
	TAP_IS_STATUS(st, DAO_ERR_BUDGET, "3000 + 2000 bytes in a 4096-byte budget: BUDGET");

	/* A view counts as its whole owner. */
	ops[0] = (dao_operand){ view, DAO_R };
	TAP_IS_STATUS(dao_launch(ctx, count_kernel, &calls, ops, 2), DAO_ERR_BUDGET,
		      "a 100-byte view of 3000 bytes + 2000 bytes: BUDGET");
	/* One owner counts once, however many times it appears. */
	ops[0] = (dao_operand){ big, DAO_W };
	ops[1] = (dao_operand){ view, DAO_R };
	ops[2] = (dao_operand){ big, DAO_R };
	TAP_IS_STATUS(dao_launch(ctx, count_kernel, &calls, ops, 3), DAO_OK,
		      "one owner named three times fits");
	/* Sizes are rounded to the 256-byte granularity: 16 one-byte buffers
	 * fill 4096 bytes, a 17th does not fit. */
	for (int i = 0; i < 17; i++) {
		tiny[i] = test_buffer(ctx, 1);
		ops[i] = (dao_operand){ tiny[i], DAO_W };
	}
	TAP_IS_STATUS(dao_launch(ctx, NULL, NULL, ops, 16), DAO_OK,
		      "16 one-byte buffers fit 16 granules");
	TAP_IS_STATUS(dao_launch(ctx, NULL, NULL, ops, 17), DAO_ERR_BUDGET,
		      "17 one-byte buffers need 17 granules: BUDGET");
	test_capture_stop(&cap, log, sizeof(log));
	tap_ok(strstr(log, "too_big_for_budget") != NULL, "the log names the kernel");
	if (!strstr(log, "too_big_for_budget"))
		tap_diag("  log was: %s", log);
	/* Zero-byte buffers take no room. */
	ops[0] = (dao_operand){ big, DAO_RW };
	for (int i = 0; i < 8; i++) {
		zero[i] = test_buffer(ctx, 0);
		ops[1 + i] = (dao_operand){ zero[i], (dao_mode)(DAO_R + i % 3) };
	}
	ops[9] = (dao_operand){ tiny[0], DAO_RW };
	TAP_IS_STATUS(dao_launch(ctx, count_kernel, &calls, ops, 10), DAO_OK,
		      "3000 + 256 bytes plus eight 0-byte buffers fit");
	TAP_IS_STATUS(dao_sync(ctx), DAO_OK, "the context is not poisoned by refusals");
	TAP_IS_U64(calls, 2, "exactly the accepted kernels ran");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

static void test_kernel_args(void)
{
	dao_ctx ctx = test_open(1 << 20, DAO_POLICY_DAO, 8, 0);
	dao_buf a = test_buffer(ctx, 1000), z = test_buffer(ctx, 0), v, vv;
	dao_operand ops[4];
	struct calls c = { 0 };

	TEST_TRY(dao_view_create(ctx, a, 100, 500, &v));
	TEST_TRY(dao_view_create(ctx, v, 7, 13, &vv));
	TEST_TRY(dao_write(ctx, a, 0, (unsigned char[1000]){ 0 }, 1000));
	ops[0] = (dao_operand){ a, DAO_R };
	ops[1] = (dao_operand){ v, DAO_R };
	ops[2] = (dao_operand){ z, DAO_RW };
	ops[3] = (dao_operand){ vv, DAO_R };
	TEST_TRY(dao_launch(ctx, record_kernel, &c, ops, 4));
	TEST_TRY(dao_sync(ctx));
	TAP_IS_U64(c.n, 1, "the kernel ran once");
	TAP_IS_U64(c.count, 4, "args.count is the operand count");
	tap_ok(c.sizes[0] == 1000 && c.sizes[1] == 500 && c.sizes[2] == 0 && c.sizes[3] == 13,
	       "args.sizes are the operands' sizes");
	tap_ok(c.ptrs[1] == c.ptrs[0] + 100, "a view's pointer is its owner's plus the offset");
	tap_ok(c.ptrs[3] == c.ptrs[0] + 107, "offsets of a view of a view compose");
	tap_ok(c.stream == NULL, "args.stream is NULL on the host backend");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/*
 * A w operand on a view that does not cover its owner preserves the bytes
 * outside the view, even when the owner was evicted in between (it must be
 * fetched, as for rw).
 */
static void test_partial_write(void)
{
	/* Room for two 1024-byte buffers: using b and c evicts a. */
	dao_ctx ctx = test_open(2048, DAO_POLICY_BELADY, 4, 0);
	dao_buf a = test_buffer(ctx, 1024), b = test_buffer(ctx, 1024), c = test_buffer(ctx, 1024);
	dao_buf mid;
	unsigned char init[1024], want[1024], got[1024];
	dao_operand op;
	uint64_t evictions;

	test_fill(init, sizeof(init), 11);
	TEST_TRY(dao_write(ctx, a, 0, init, sizeof(init)));
	TEST_TRY(dao_view_create(ctx, a, 256, 512, &mid));
	op = (dao_operand){ a, DAO_RW };
	TEST_TRY(dao_launch(ctx, inc_kernel, NULL, &op, 1));
	op = (dao_operand){ b, DAO_W };
	TEST_TRY(dao_launch(ctx, fill_kernel, (void *)(uintptr_t)1, &op, 1));
	op = (dao_operand){ c, DAO_W };
	TEST_TRY(dao_launch(ctx, fill_kernel, (void *)(uintptr_t)2, &op, 1));
	op = (dao_operand){ mid, DAO_W };
	TEST_TRY(dao_launch(ctx, fill_kernel, (void *)(uintptr_t)0xab, &op, 1));
	TEST_TRY(dao_sync(ctx));
	evictions = test_stats(ctx).evictions;
	tap_ok(evictions > 0, "the budget forced evictions (%" PRIu64 ")", evictions);
	for (int i = 0; i < 1024; i++)
		want[i] = (unsigned char)(i >= 256 && i < 768 ? 0xab : init[i] + 1);
	TAP_IS_STATUS(dao_read(ctx, a, 0, got, sizeof(got)), DAO_OK, "read the owner");
	tap_ok(!memcmp(got, want, sizeof(want)),
	       "w on a partial view wrote the view and kept the rest");

	/* The same buffer as r and w in one kernel is read: copy a -> a. */
	{
		dao_operand two[2] = { { b, DAO_R }, { b, DAO_W } };
		unsigned char ones[1024];

		memset(ones, 1, sizeof(ones));
		TEST_TRY(dao_launch(ctx, copy_kernel, NULL, two, 2));
		TAP_IS_STATUS(dao_read(ctx, b, 0, got, sizeof(got)), DAO_OK, "read b");
		tap_ok(!memcmp(got, ones, sizeof(ones)),
		       "r and w of one buffer merge: its contents were fetched");
	}
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

static void test_kernel_failure(void)
{
	/* Deterministic: nothing starts before the sync, so the launches after
	 * the failing kernel are accepted whatever the thread timing. */
	dao_ctx ctx = test_open(1 << 20, DAO_POLICY_DAO, 8, DAO_CONFIG_DETERMINISTIC);
	dao_buf b = test_buffer(ctx, 64);
	dao_operand op = { b, DAO_RW };
	unsigned char byte = 0;
	int before = 0, after = 0;
	dao_buf extra = { 5 };
	dao_buf keep = test_buffer(ctx, 64);
	unsigned char kept[64], got[64];
	uint64_t leaked = 99;

	test_fill(kept, sizeof(kept), 3);
	TEST_TRY(dao_write(ctx, keep, 0, kept, sizeof(kept)));
	TEST_TRY(dao_write(ctx, b, 0, (unsigned char[64]){ 0 }, 64));
	TEST_TRY(dao_launch(ctx, count_kernel, &before, &op, 1));
	TEST_TRY(dao_launch_named(ctx, "fails", 0, fail_kernel, NULL, &op, 1));
	TEST_TRY(dao_launch(ctx, count_kernel, &after, &op, 1));
	TEST_TRY(dao_launch(ctx, count_kernel, &after, &op, 1));
	TAP_IS_STATUS(dao_sync(ctx), DAO_ERR_KERNEL, "dao_sync reports the failed kernel: KERNEL");
	TAP_IS_U64(before, 1, "the kernel before the failure ran");
	TAP_IS_U64(after, 0, "the kernels after the failure were skipped");
	TAP_IS_STATUS(dao_launch(ctx, count_kernel, &after, &op, 1), DAO_ERR_FAILED,
		      "dao_launch on a failed context: FAILED");
	TAP_IS_STATUS(dao_write(ctx, b, 0, &byte, 1), DAO_ERR_FAILED,
		      "dao_write on a failed context: FAILED");
	/* dao.h: what a failed context still gives. */
	TAP_IS_STATUS(dao_read(ctx, b, 0, &byte, 1), DAO_ERR_LOST,
		      "dao_read of what the failed kernel wrote: LOST");
	TAP_IS_STATUS(dao_read(ctx, keep, 0, got, sizeof(got)), DAO_OK,
		      "dao_read of a buffer the failure did not touch: OK");
	tap_ok(!memcmp(got, kept, sizeof(got)), "and it returns what was last written");
	/* Whether creating still works after a failure is not specified. */
	if (dao_buffer_create(ctx, 16, &extra) == DAO_OK)
		tap_diag("dao_buffer_create still works after a kernel failure");
	TAP_IS_U64(after, 0, "nothing ran after the failure");
	TAP_IS_STATUS(dao_close(ctx, &leaked), DAO_ERR_KERNEL,
		      "dao_close still reports the failure: KERNEL");
	tap_ok(leaked == 2 || leaked == 3, "and still counts the handles (%" PRIu64 ")", leaked);
	TAP_IS_STATUS(dao_sync(ctx), DAO_ERR_CLOSED, "and it did close");

	/* Other contexts are unaffected. */
	ctx = test_open(1 << 20, DAO_POLICY_DAO, 8, 0);
	b = test_buffer(ctx, 64);
	op = (dao_operand){ b, DAO_RW };
	TEST_TRY(dao_launch(ctx, count_kernel, &after, &op, 1));
	TAP_IS_STATUS(dao_sync(ctx), DAO_OK, "a new context works");
	TAP_IS_U64(after, 1, "and runs its kernel");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

int main(void)
{
	test_clear_env();
	test_arguments();
	test_budget();
	test_kernel_args();
	test_partial_write();
	test_kernel_failure();
	tap_plan_done();
	return tap_exit();
}
