/* SPDX-License-Identifier: MIT */
/*
 * test_ctx_tags.c - every buffer handle carries the tag of its context, so a
 * handle given to the wrong context is DAO_ERR_FOREIGN. Tags are a small
 * space (4095 values): a tag must never be given to a context while another
 * open context holds it, whatever was opened and closed before, and opening
 * more contexts at once than there are tags is a clear error.
 */
#include "common.h"

#define NTAGS 4095u

static dao_config shared_config(void)
{
	return test_config(1 << 20, DAO_POLICY_DAO, 8, 0);
}

/* One context stays open while others open and close, more times than there
 * are tags: each newcomer must see the old context's handle as foreign and
 * its own handle must be foreign to the old context. */
static void test_reuse_while_open(void)
{
	dao_config cfg = shared_config();
	dao_ctx keep, ctx;
	dao_buf kept, mine;
	uint64_t size;
	unsigned bad_foreign = 0, bad_back = 0, first_bad = 0;

	TEST_TRY(dao_open(&cfg, &keep));
	kept = test_buffer(keep, 100);
	for (unsigned i = 1; i <= 2 * NTAGS + 10; i++) {
		dao_status st;

		TEST_TRY(dao_open(&cfg, &ctx));
		mine = test_buffer(ctx, 100);
		st = dao_buffer_size(ctx, kept, &size);
		if (st != DAO_ERR_FOREIGN) {
			if (!bad_foreign && !bad_back)
				first_bad = i;
			bad_foreign++;
		}
		st = dao_buffer_size(keep, mine, &size);
		if (st != DAO_ERR_FOREIGN) {
			if (!bad_foreign && !bad_back)
				first_bad = i;
			bad_back++;
		}
		TEST_TRY(dao_release(ctx, mine));
		TEST_TRY(dao_close(ctx, NULL));
	}
	if (!tap_ok(!bad_foreign, "%u contexts opened and closed beside an open one: the open "
				  "one's handle is FOREIGN in each",
		    2 * NTAGS + 10))
		tap_diag("  %u were not, the first at open %u", bad_foreign, first_bad);
	if (!tap_ok(!bad_back, "and each one's handle is FOREIGN in the open one"))
		tap_diag("  %u were not, the first at open %u", bad_back, first_bad);

	/* Closing the others left the open one's tag marked open. */
	TEST_TRY(dao_open(&cfg, &ctx));
	TAP_IS_STATUS(dao_buffer_size(ctx, kept, &size), DAO_ERR_FOREIGN,
		      "a context opened afterwards still sees the handle as FOREIGN");
	TEST_TRY(dao_close(ctx, NULL));
	TAP_IS_STATUS(dao_buffer_size(keep, kept, &size), DAO_OK, "the handle still works at home");
	TEST_TRY(dao_release(keep, kept));
	TEST_TRY(dao_close(keep, NULL));
}

/* As many contexts open at once as there are tags, then one more. */
static void test_all_tags_open(void)
{
	dao_config cfg = shared_config();
	dao_ctx *open = calloc(NTAGS + 1, sizeof(*open));
	dao_ctx extra = { 4242 };
	dao_buf b0, bl;
	uint64_t size;
	unsigned n = 0;
	dao_status st = DAO_OK;

	if (!open)
		tap_bail("out of memory");
	while (n < NTAGS && (st = dao_open(&cfg, &open[n])) == DAO_OK)
		n++;
	if (!tap_ok(n == NTAGS, "%u contexts open at once", NTAGS))
		tap_diag("  only %u opened: %s", n, dao_strerror(st));
	st = dao_open(&cfg, &extra);
	if (st == DAO_OK)
		open[n++] = extra;
	TAP_IS_STATUS(st, DAO_ERR_LIMIT, "one more: LIMIT");
	tap_ok(st == DAO_OK || extra.id == 4242, "and *out is untouched");

	/* Every pair still tells its handles apart: first and last. */
	b0 = test_buffer(open[0], 10);
	bl = test_buffer(open[n - 1], 10);
	TAP_IS_STATUS(dao_buffer_size(open[n - 1], b0, &size), DAO_ERR_FOREIGN,
		      "the first context's handle is FOREIGN in the last");
	TAP_IS_STATUS(dao_buffer_size(open[0], bl, &size), DAO_ERR_FOREIGN,
		      "the last context's handle is FOREIGN in the first");
	TEST_TRY(dao_release(open[0], b0));
	TEST_TRY(dao_release(open[n - 1], bl));

	/* One closes: its tag is free again. */
	TEST_TRY(dao_close(open[n / 2], NULL));
	TAP_IS_STATUS(dao_open(&cfg, &open[n / 2]), DAO_OK, "after one closes, one more opens");
	for (unsigned i = 0; i < n; i++)
		TEST_TRY(dao_close(open[i], NULL));
	free(open);
}

int main(void)
{
	test_clear_env();
	test_reuse_while_open();
	test_all_tags_open();
	tap_plan_done();
	return tap_exit();
}
