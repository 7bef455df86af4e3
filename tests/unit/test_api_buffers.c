/* SPDX-License-Identifier: MIT */
/*
 * test_api_buffers.c - buffers and views: creation limits, sizes, views of
 * views, references, labels, and every bad handle (null, garbage, released,
 * of another context). A failed call must leave outputs, contents, handle
 * validity and statistics as they were.
 */
#include "common.h"

#define BUDGET (64u << 10)

/* The whole contents of a buffer, or bail. */
static void read_all(dao_ctx ctx, dao_buf b, void *dst, uint64_t len)
{
	TEST_TRY(dao_read(ctx, b, 0, dst, len));
}

static void test_create(void)
{
	dao_ctx ctx = test_open(BUDGET, DAO_POLICY_DAO, 4, 0);
	dao_buf b = { 4242 }, zero;
	dao_stats s0, s1;
	uint64_t size = 1;

	s0 = test_stats(ctx);
	TAP_IS_STATUS(dao_buffer_create(ctx, 16, NULL), DAO_ERR_NULL, "create with out NULL: NULL");
	TAP_IS_STATUS(dao_buffer_create(ctx, 1ull << 63, &b), DAO_ERR_OVERFLOW,
		      "create 2^63 bytes: OVERFLOW");
	TAP_IS_STATUS(dao_buffer_create(ctx, UINT64_MAX, &b), DAO_ERR_OVERFLOW,
		      "create 2^64-1 bytes: OVERFLOW");
	TAP_IS_STATUS(dao_buffer_create(ctx, BUDGET + 1ull, &b), DAO_ERR_BUDGET,
		      "create one byte more than the device budget: BUDGET");
	TAP_IS_STATUS(dao_buffer_create(ctx, (1ull << 63) - 1, &b), DAO_ERR_BUDGET,
		      "create 2^63-1 bytes: BUDGET");
	TAP_IS_U64(b.id, 4242, "failed creates leave *out alone");
	s1 = test_stats(ctx);
	TAP_IS_U64(s1.live_buffers, s0.live_buffers, "failed creates add no buffer");

	TAP_IS_STATUS(dao_buffer_create(ctx, 0, &zero), DAO_OK, "create 0 bytes");
	TAP_IS_STATUS(dao_buffer_size(ctx, zero, &size), DAO_OK, "size of a 0-byte buffer");
	TAP_IS_U64(size, 0, "it is 0");
	TAP_IS_STATUS(dao_buffer_create(ctx, BUDGET, &b), DAO_OK, "create exactly the budget");
	TAP_IS_STATUS(dao_buffer_size(ctx, b, &size), DAO_OK, "dao_buffer_size");
	TAP_IS_U64(size, BUDGET, "size as created");
	TAP_IS_STATUS(dao_buffer_size(ctx, b, NULL), DAO_ERR_NULL, "dao_buffer_size out NULL: NULL");
	s1 = test_stats(ctx);
	TAP_IS_U64(s1.live_buffers, s0.live_buffers + 2, "two live buffers");
	TAP_IS_U64(s1.device_bytes, 0, "nothing is allocated on the device before first use");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

static void test_host_budget(void)
{
	dao_config cfg = test_config(8192, DAO_POLICY_DAO, 4, DAO_CONFIG_PRIVATE);
	dao_ctx ctx;
	dao_buf a, b, c = { 99 }, z;
	dao_info info;
	dao_stats s0, s1;

	cfg.host_budget = 10240;
	TEST_TRY(dao_open(&cfg, &ctx));
	TEST_TRY(dao_info_get(ctx, &info));
	TAP_IS_U64(info.host_budget, 10240, "host budget as configured");
	TAP_IS_STATUS(dao_buffer_create(ctx, 6144, &a), DAO_OK, "first buffer within host budget");
	TAP_IS_STATUS(dao_buffer_create(ctx, 4096, &b), DAO_OK, "second fills the host budget");
	s0 = test_stats(ctx);
	TAP_IS_STATUS(dao_buffer_create(ctx, 256, &c), DAO_ERR_HOST_BUDGET,
		      "one more: HOST_BUDGET");
	TAP_IS_U64(c.id, 99, "failed create leaves *out alone");
	TAP_IS_STATUS(dao_buffer_create(ctx, 0, &z), DAO_OK, "a 0-byte buffer still fits");
	s1 = test_stats(ctx);
	TAP_IS_U64(s1.live_buffers, s0.live_buffers + 1, "only the 0-byte buffer was added");
	/* Nothing queued uses a: releasing it returns its bytes. */
	TEST_TRY(dao_release(ctx, a));
	TEST_TRY(dao_sync(ctx));
	TAP_IS_STATUS(dao_buffer_create(ctx, 6144, &c), DAO_OK,
		      "after a release the host budget has room again");
	TAP_IS_STATUS(dao_buffer_create(ctx, 1, &a), DAO_ERR_HOST_BUDGET,
		      "and is full again after that");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

static void test_views(void)
{
	dao_ctx ctx = test_open(BUDGET, DAO_POLICY_DAO, 4, 0);
	dao_buf owner = test_buffer(ctx, 1000), v, vv, out = { 55 };
	unsigned char src[1000], got[1000], want[1000];
	uint64_t size;

	test_fill(src, sizeof(src), 1);
	TEST_TRY(dao_write(ctx, owner, 0, src, sizeof(src)));
	TAP_IS_STATUS(dao_view_create(ctx, owner, 0, 1, NULL), DAO_ERR_NULL, "view out NULL: NULL");
	TAP_IS_STATUS(dao_view_create(ctx, owner, UINT64_MAX, 2, &out), DAO_ERR_OVERFLOW,
		      "view offset+length wraps: OVERFLOW");
	TAP_IS_STATUS(dao_view_create(ctx, owner, 1, UINT64_MAX, &out), DAO_ERR_OVERFLOW,
		      "view length wraps: OVERFLOW");
	TAP_IS_STATUS(dao_view_create(ctx, owner, 999, 2, &out), DAO_ERR_RANGE,
		      "view one byte past the end: RANGE");
	TAP_IS_STATUS(dao_view_create(ctx, owner, 1001, 0, &out), DAO_ERR_RANGE,
		      "empty view past the end: RANGE");
	TAP_IS_STATUS(dao_view_create(ctx, owner, 0, 1001, &out), DAO_ERR_RANGE,
		      "view longer than the buffer: RANGE");
	TAP_IS_STATUS(dao_view_create(ctx, DAO_BUF_NULL, 0, 0, &out), DAO_ERR_HANDLE,
		      "view of DAO_BUF_NULL: HANDLE");
	TAP_IS_U64(out.id, 55, "failed view creates leave *out alone");

	TAP_IS_STATUS(dao_view_create(ctx, owner, 1000, 0, &v), DAO_OK, "empty view at the end");
	TAP_IS_STATUS(dao_buffer_size(ctx, v, &size), DAO_OK, "size of the empty view");
	TAP_IS_U64(size, 0, "it is 0");
	TEST_TRY(dao_release(ctx, v));

	TAP_IS_STATUS(dao_view_create(ctx, owner, 100, 800, &v), DAO_OK, "view [100, 900)");
	TAP_IS_STATUS(dao_view_create(ctx, v, 50, 700, &vv), DAO_OK, "view [50, 750) of that view");
	TAP_IS_STATUS(dao_view_create(ctx, v, 50, 751, &out), DAO_ERR_RANGE,
		      "a view of a view is bounded by the inner view: RANGE");
	TAP_IS_STATUS(dao_buffer_size(ctx, vv, &size), DAO_OK, "size of the view of a view");
	TAP_IS_U64(size, 700, "it is its length");
	TAP_IS_STATUS(dao_read(ctx, vv, 0, got, 700), DAO_OK, "read through the inner view");
	tap_ok(!memcmp(got, src + 150, 700), "offsets compose: the view of a view starts at 150");

	/* Views keep their owner alive. */
	TAP_IS_STATUS(dao_release(ctx, owner), DAO_OK, "release the owner's handle");
	TAP_IS_STATUS(dao_buffer_size(ctx, owner, &size), DAO_ERR_HANDLE,
		      "the owner's handle is dead");
	TAP_IS_STATUS(dao_release(ctx, v), DAO_OK, "release the outer view");
	memset(got, 0, sizeof(got));
	TAP_IS_STATUS(dao_read(ctx, vv, 0, got, 700), DAO_OK,
		      "the inner view still reads after owner and outer view are released");
	tap_ok(!memcmp(got, src + 150, 700), "and sees the owner's bytes");
	test_fill(want, 700, 2);
	TAP_IS_STATUS(dao_write(ctx, vv, 0, want, 700), DAO_OK, "and still writes");
	TAP_IS_STATUS(dao_read(ctx, vv, 0, got, 700), DAO_OK, "read back");
	tap_ok(!memcmp(got, want, 700), "what was written");
	TAP_IS_U64(test_stats(ctx).live_buffers, 1, "the owner is still live");
	TAP_IS_STATUS(dao_release(ctx, vv), DAO_OK, "release the last view");
	TEST_TRY(dao_sync(ctx));
	TAP_IS_U64(test_stats(ctx).live_buffers, 0, "the owner goes with its last view");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

static void test_references(void)
{
	dao_ctx ctx = test_open(BUDGET, DAO_POLICY_DAO, 4, 0);
	dao_buf b = test_buffer(ctx, 64), v;
	uint64_t size;

	TAP_IS_STATUS(dao_retain(ctx, b), DAO_OK, "retain");
	TAP_IS_STATUS(dao_retain(ctx, b), DAO_OK, "retain again");
	TAP_IS_STATUS(dao_release(ctx, b), DAO_OK, "release 1 of 3");
	TAP_IS_STATUS(dao_release(ctx, b), DAO_OK, "release 2 of 3");
	TAP_IS_STATUS(dao_buffer_size(ctx, b, &size), DAO_OK, "one reference left: still valid");
	TAP_IS_STATUS(dao_release(ctx, b), DAO_OK, "release 3 of 3");
	TAP_IS_STATUS(dao_release(ctx, b), DAO_ERR_HANDLE, "a fourth release: HANDLE");
	TAP_IS_STATUS(dao_retain(ctx, b), DAO_ERR_HANDLE, "retain a dead handle: HANDLE");
	TAP_IS_STATUS(dao_retain(ctx, DAO_BUF_NULL), DAO_ERR_HANDLE, "retain DAO_BUF_NULL: HANDLE");
	TAP_IS_STATUS(dao_release(ctx, DAO_BUF_NULL), DAO_ERR_HANDLE,
		      "release DAO_BUF_NULL: HANDLE");

	/* A view has references of its own. */
	b = test_buffer(ctx, 64);
	TEST_TRY(dao_view_create(ctx, b, 0, 32, &v));
	TAP_IS_STATUS(dao_retain(ctx, v), DAO_OK, "retain a view");
	TAP_IS_STATUS(dao_release(ctx, v), DAO_OK, "release it once");
	TAP_IS_STATUS(dao_buffer_size(ctx, v, &size), DAO_OK, "the view is still valid");
	TAP_IS_STATUS(dao_release(ctx, v), DAO_OK, "release it again");
	TAP_IS_STATUS(dao_buffer_size(ctx, v, &size), DAO_ERR_HANDLE, "now the view is dead");
	TAP_IS_STATUS(dao_buffer_size(ctx, b, &size), DAO_OK, "its owner is not");
	TEST_TRY(dao_release(ctx, b));
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/* A released handle stays invalid when its slot is reused. */
static void test_generations(void)
{
	dao_ctx ctx = test_open(BUDGET, DAO_POLICY_DAO, 4, 0);
	dao_buf old[32], fresh[32];
	uint64_t size;
	int bad = 0, stale_ok = 0;

	for (int i = 0; i < 32; i++)
		old[i] = test_buffer(ctx, 8);
	for (int i = 0; i < 32; i++)
		TEST_TRY(dao_release(ctx, old[i]));
	for (int i = 0; i < 32; i++)
		fresh[i] = test_buffer(ctx, 16);
	for (int i = 0; i < 32; i++) {
		for (int j = 0; j < 32; j++)
			if (old[i].id == fresh[j].id)
				bad++;
		if (dao_buffer_size(ctx, old[i], &size) == DAO_OK)
			stale_ok++;
		if (dao_buffer_size(ctx, fresh[i], &size) != DAO_OK || size != 16)
			bad++;
	}
	tap_ok(bad == 0, "handles issued after releases differ from the released ones");
	TAP_IS_U64(stale_ok, 0, "no released handle resolves after its slot is reused");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/* Every call taking a buffer, with a handle that must be refused. */
static void check_bad_handle(dao_ctx ctx, dao_buf bad, dao_status want, const char *what,
			     dao_buf witness)
{
	unsigned char byte = 7, before[64], after[64];
	dao_operand op = { bad, DAO_R };
	dao_buf out = { 31 };
	uint64_t size = 31;
	dao_stats s0, s1;
	dao_status st;
	int wrong = 0;

	read_all(ctx, witness, before, sizeof(before));
	s0 = test_stats(ctx);
#define BAD(call)                                                                            \
	do {                                                                                 \
		st = (call);                                                                 \
		if (st != want) {                                                            \
			wrong++;                                                             \
			tap_diag("  %s: %s returned %s, want %s", what, #call, dao_strerror(st), \
				 dao_strerror(want));                                        \
		}                                                                            \
	} while (0)
	BAD(dao_view_create(ctx, bad, 0, 0, &out));
	BAD(dao_retain(ctx, bad));
	BAD(dao_release(ctx, bad));
	BAD(dao_set_label(ctx, bad, "x"));
	BAD(dao_buffer_size(ctx, bad, &size));
	BAD(dao_launch(ctx, NULL, NULL, &op, 1));
	BAD(dao_launch_named(ctx, "bad", 0, NULL, NULL, &op, 1));
	BAD(dao_write(ctx, bad, 0, &byte, 1));
	BAD(dao_read(ctx, bad, 0, &byte, 1));
#undef BAD
	tap_ok(wrong == 0, "every buffer call with a %s handle returns %s", what,
	       dao_strerror(want));
	tap_ok(out.id == 31 && size == 31 && byte == 7, "and writes no output");
	TEST_TRY(dao_sync(ctx));
	s1 = test_stats(ctx);
	tap_ok(s1.kernels == s0.kernels && s1.live_buffers == s0.live_buffers,
	       "and queues no kernel and adds no buffer");
	read_all(ctx, witness, after, sizeof(after));
	tap_ok(!memcmp(before, after, sizeof(before)), "and leaves other buffers' contents alone");
}

static void test_bad_handles(void)
{
	dao_ctx ctx = test_open(BUDGET, DAO_POLICY_DAO, 4, 0);
	dao_ctx other = test_open(BUDGET, DAO_POLICY_DAO, 4, 0);
	dao_buf witness = test_buffer(ctx, 64), dead = test_buffer(ctx, 64), dead_view;
	dao_buf foreign = test_buffer(other, 64), foreign_view;
	unsigned char init[64];

	test_fill(init, sizeof(init), 3);
	TEST_TRY(dao_write(ctx, witness, 0, init, sizeof(init)));
	TEST_TRY(dao_view_create(ctx, witness, 0, 8, &dead_view));
	TEST_TRY(dao_release(ctx, dead_view));
	TEST_TRY(dao_release(ctx, dead));
	TEST_TRY(dao_view_create(other, foreign, 8, 8, &foreign_view));

	check_bad_handle(ctx, DAO_BUF_NULL, DAO_ERR_HANDLE, "DAO_BUF_NULL", witness);
	check_bad_handle(ctx, dead, DAO_ERR_HANDLE, "released", witness);
	check_bad_handle(ctx, dead_view, DAO_ERR_HANDLE, "released view", witness);
	for (int i = 0; i < TEST_GARBAGE_HANDLES; i++) {
		dao_buf g = test_garbage_handle(witness, i);
		char what[64];

		if (g.id == witness.id || g.id == foreign.id || g.id == foreign_view.id)
			continue;
		snprintf(what, sizeof(what), "garbage (%#" PRIx64 ")", g.id);
		check_bad_handle(ctx, g, DAO_ERR_HANDLE, what, witness);
	}
	check_bad_handle(ctx, foreign, DAO_ERR_FOREIGN, "foreign", witness);
	check_bad_handle(ctx, foreign_view, DAO_ERR_FOREIGN, "foreign view", witness);

	/* The foreign buffer itself is untouched by all that. */
	TAP_IS_STATUS(dao_release(other, foreign_view), DAO_OK,
		      "the foreign view is still valid in its own context");
	TAP_IS_STATUS(dao_release(other, foreign), DAO_OK, "so is the foreign buffer");
	TEST_TRY(dao_release(ctx, witness));
	TAP_IS_STATUS(dao_close(other, NULL), DAO_OK, "close the other context");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/* A handle of a closed context is foreign to nobody: it simply does not
 * resolve in the context that is still open. */
static void test_handle_of_closed_context(void)
{
	dao_ctx a = test_open(BUDGET, DAO_POLICY_DAO, 4, 0);
	dao_ctx b = test_open(BUDGET, DAO_POLICY_DAO, 4, 0);
	dao_buf stale = test_buffer(a, 16);
	dao_status st;
	uint64_t size;

	TEST_TRY(dao_close(a, NULL));
	st = dao_buffer_size(b, stale, &size);
	tap_ok(st == DAO_ERR_HANDLE || st == DAO_ERR_FOREIGN,
	       "a buffer of a closed context is refused (%s)", dao_strerror(st));
	TAP_IS_STATUS(dao_close(b, NULL), DAO_OK, "close");
}

static void test_labels(void)
{
	dao_ctx ctx = test_open(BUDGET, DAO_POLICY_DAO, 4, 0);
	dao_buf b = test_buffer(ctx, 64), v;
	char long_label[300];
	uint64_t size;

	memset(long_label, 'x', sizeof(long_label) - 1);
	long_label[sizeof(long_label) - 1] = '\0';
	TEST_TRY(dao_view_create(ctx, b, 0, 8, &v));
	TAP_IS_STATUS(dao_set_label(ctx, b, NULL), DAO_ERR_NULL, "label NULL: NULL");
	TAP_IS_STATUS(dao_set_label(ctx, b, "weights"), DAO_OK, "a label");
	TAP_IS_STATUS(dao_set_label(ctx, b, "with spaces in it"), DAO_OK, "a label with spaces");
	TAP_IS_STATUS(dao_set_label(ctx, b, ""), DAO_OK, "an empty label");
	TAP_IS_STATUS(dao_set_label(ctx, b, long_label), DAO_OK, "a 299-byte label is truncated");
	TAP_IS_STATUS(dao_set_label(ctx, v, "view"), DAO_OK, "a view's label");
	TAP_IS_STATUS(dao_buffer_size(ctx, b, &size), DAO_OK, "labelled buffer still valid");
	TAP_IS_U64(size, 64, "and keeps its size");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

int main(void)
{
	test_clear_env();
	test_create();
	test_host_budget();
	test_views();
	test_references();
	test_generations();
	test_bad_handles();
	test_handle_of_closed_context();
	test_labels();
	tap_plan_done();
	return tap_exit();
}
