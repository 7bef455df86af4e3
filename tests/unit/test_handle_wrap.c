/* SPDX-License-Identifier: MIT */
/*
 * test_handle_wrap.c - "a released handle stays invalid forever" (dao.h),
 * also once a slot has been reused as often as its generation field can
 * count (2^28 times).
 *
 * Cycling one slot 2^28 times takes minutes under the sanitizers, so the test
 * reaches that state directly: after one real release it advances the free
 * slot's generation by 2^28 - 2, which is exactly the state 2^28 - 2 further
 * create/release cycles of that slot leave behind (a free slot holds nothing
 * else that the cycles change), then runs the last cycles for real through
 * the API. Only the generation is written; everything checked goes through
 * dao.h.
 */
#include "common.h"
#include "core/handles.h"

#define GEN_SPAN (1u << 28)

/* Advance the generation of free slot idx by n, as n create/release cycles
 * of that slot would. */
static void age_free_slot(dao_ctx h, uint32_t idx, uint32_t n)
{
	struct ctx *c;

	TEST_TRY(ctx_enter(h, &c));
	if (idx >= c->nslots || c->slots[idx].refs)
		tap_bail("slot %u is not a free slot", idx);
	c->slots[idx].gen += n;
	ctx_leave(c);
}

static void test_wrap(void)
{
	dao_ctx ctx = test_open(1 << 20, DAO_POLICY_DAO, 8, 0);
	dao_buf first, last, next, other;
	uint64_t size;
	uint32_t idx;
	unsigned stale_ok = 0;

	first = test_buffer(ctx, 111);
	idx = slot_index(first);
	TEST_TRY(dao_release(ctx, first));
	age_free_slot(ctx, idx, GEN_SPAN - 2);

	/* The slot's last fresh generation. */
	last = test_buffer(ctx, 222);
	TAP_IS_U64(slot_index(last), idx, "the aged slot is reused");
	tap_ok(last.id != first.id, "its handle differs from the first one released");
	TAP_IS_STATUS(dao_buffer_size(ctx, first, &size), DAO_ERR_HANDLE,
		      "the first handle is still HANDLE");
	TEST_TRY(dao_release(ctx, last));

	/* A slot at the end of its generations must not hand out the first
	 * generation again. */
	for (int i = 0; i < 4; i++) {
		dao_status st;

		next = test_buffer(ctx, 333);
		if (next.id == first.id || next.id == last.id)
			stale_ok++;
		st = dao_buffer_size(ctx, first, &size);
		if (st != DAO_ERR_HANDLE)
			stale_ok++;
		st = dao_buffer_size(ctx, last, &size);
		if (st != DAO_ERR_HANDLE)
			stale_ok++;
		TEST_TRY(dao_release(ctx, next));
	}
	if (!tap_ok(!stale_ok, "after 2^28 uses of a slot no released handle names a buffer again"))
		tap_diag("  %u stale handles were accepted or reissued", stale_ok);
	TAP_IS_STATUS(dao_buffer_size(ctx, first, &size), DAO_ERR_HANDLE,
		      "the first handle is HANDLE");
	TAP_IS_STATUS(dao_release(ctx, first), DAO_ERR_HANDLE, "and releasing it is HANDLE");

	/* The context keeps working. */
	other = test_buffer(ctx, 444);
	TAP_IS_STATUS(dao_buffer_size(ctx, other, &size), DAO_OK, "new buffers still work");
	TAP_IS_U64(size, 444, "with their size");
	TEST_TRY(dao_release(ctx, other));
	TEST_TRY(dao_close(ctx, NULL));
}

int main(void)
{
	test_clear_env();
	test_wrap();
	tap_plan_done();
	return tap_exit();
}
