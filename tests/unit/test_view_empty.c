/* SPDX-License-Identifier: MIT */
/*
 * test_view_empty.c - an operand of zero bytes names no memory: a kernel gets
 * NULL and size 0 for it (dao.h), whatever its owner's residency, and as any
 * mode, DAO_W included, it moves none of its owner's bytes and changes none.
 */
#include "common.h"

#define SIZE 4096u

struct seen {
	unsigned calls;
	void *ptr[4];
	uint64_t size[4];
	uint32_t count;
};

static int record(const dao_kernel_args *a)
{
	struct seen *s = a->user;

	s->calls++;
	s->count = a->count;
	for (uint32_t i = 0; i < a->count && i < 4; i++) {
		s->ptr[i] = a->ptrs[i];
		s->size[i] = a->sizes[i];
	}
	return 0;
}

static void test_empty_view_moves_nothing(dao_mode mode, const char *name)
{
	dao_ctx ctx = test_open(1 << 20, DAO_POLICY_DAO, 8, 0);
	dao_buf owner = test_buffer(ctx, SIZE), empty;
	unsigned char in[SIZE], out[SIZE];
	struct seen seen = { 0 };
	dao_operand op;
	dao_stats before, after;

	test_fill(in, SIZE, 7);
	TEST_TRY(dao_write(ctx, owner, 0, in, SIZE));
	TEST_TRY(dao_view_create(ctx, owner, 1000, 0, &empty));
	TEST_TRY(dao_sync(ctx));
	before = test_stats(ctx);
	op = (dao_operand){ empty, mode };
	TEST_TRY(dao_launch(ctx, record, &seen, &op, 1));
	TEST_TRY(dao_sync(ctx));
	after = test_stats(ctx);
	TAP_IS_U64(seen.calls, 1, "the kernel ran");
	tap_ok(seen.ptr[0] == NULL, "%s of an empty view of a host-only owner: NULL pointer", name);
	TAP_IS_U64(seen.size[0], 0, "and size 0");
	if (!tap_ok(after.fetches == before.fetches && after.h2d_bytes == before.h2d_bytes,
		    "%s of an empty view fetches nothing of its owner", name))
		tap_diag("  %" PRIu64 " fetches, %" PRIu64 " bytes to the device",
			 after.fetches - before.fetches, after.h2d_bytes - before.h2d_bytes);
	TEST_TRY(dao_read(ctx, owner, 0, out, SIZE));
	tap_ok(!memcmp(in, out, SIZE), "%s of an empty view leaves the owner's bytes", name);
	TEST_TRY(dao_release(ctx, empty));
	TEST_TRY(dao_release(ctx, owner));
	TEST_TRY(dao_close(ctx, NULL));
}

static void test_empty_view_of_resident_owner(void)
{
	dao_ctx ctx = test_open(1 << 20, DAO_POLICY_DAO, 8, 0);
	dao_buf owner = test_buffer(ctx, SIZE), mid, end;
	struct seen seen = { 0 };
	dao_operand ops[3];

	TEST_TRY(dao_view_create(ctx, owner, 100, 0, &mid));
	TEST_TRY(dao_view_create(ctx, owner, SIZE, 0, &end));
	/* The owner itself is an operand too: it is resident while the
	 * kernel runs, and the empty views still get NULL. */
	ops[0] = (dao_operand){ owner, DAO_W };
	ops[1] = (dao_operand){ mid, DAO_R };
	ops[2] = (dao_operand){ end, DAO_W };
	TEST_TRY(dao_launch(ctx, record, &seen, ops, 3));
	TEST_TRY(dao_sync(ctx));
	TAP_IS_U64(seen.count, 3, "three operands");
	tap_ok(seen.ptr[0] != NULL, "the owner gets its pointer");
	tap_ok(seen.ptr[1] == NULL, "an empty view in the middle of a resident owner: NULL");
	tap_ok(seen.ptr[2] == NULL, "an empty view at its end: NULL");
	TAP_IS_U64(seen.size[1] + seen.size[2], 0, "both of size 0");
	TEST_TRY(dao_release(ctx, mid));
	TEST_TRY(dao_release(ctx, end));
	TEST_TRY(dao_release(ctx, owner));
	TEST_TRY(dao_close(ctx, NULL));
}

/* The empty view's owner may go while a kernel naming the view is queued:
 * the view kept it alive, and the kernel still gets NULL. */
static void test_empty_view_owner_released(void)
{
	dao_ctx ctx = test_open(1 << 20, DAO_POLICY_DAO, 8, DAO_CONFIG_DETERMINISTIC);
	dao_buf owner = test_buffer(ctx, SIZE), empty;
	struct seen seen = { 0 };
	dao_operand op;
	dao_stats s;

	TEST_TRY(dao_view_create(ctx, owner, 0, 0, &empty));
	op = (dao_operand){ empty, DAO_W };
	TEST_TRY(dao_launch(ctx, record, &seen, &op, 1));
	TEST_TRY(dao_release(ctx, empty));
	TEST_TRY(dao_release(ctx, owner));
	TEST_TRY(dao_sync(ctx));
	s = test_stats(ctx);
	TAP_IS_U64(seen.calls, 1, "a kernel on an empty view of a released owner ran");
	tap_ok(seen.ptr[0] == NULL, "with a NULL pointer");
	TAP_IS_U64(s.live_buffers, 0, "and the owner is gone");
	TAP_IS_U64(s.h2d_bytes, 0, "having never been fetched");
	TEST_TRY(dao_close(ctx, NULL));
}

int main(void)
{
	test_clear_env();
	test_empty_view_moves_nothing(DAO_W, "DAO_W");
	test_empty_view_moves_nothing(DAO_R, "DAO_R");
	test_empty_view_moves_nothing(DAO_RW, "DAO_RW");
	test_empty_view_of_resident_owner();
	test_empty_view_owner_released();
	tap_plan_done();
	return tap_exit();
}
