/* SPDX-License-Identifier: MIT */
/*
 * test_fault.c - failing libdao's calls to the world on purpose
 * (base/fault.h, DAO_FAULT): a spec arms exactly the call it names, N+
 * every later one too, count nothing; a malformed one arms nothing; and an
 * armed failure reaches the job as the status dao.h gives it, changing
 * nothing else (the context opens afterwards, the buffer's bytes are
 * intact).
 */
#include "base/fault.h"
#include "common.h"

static void test_parse(void)
{
	tap_ok(fault_arm("alloc:3"), "alloc:3 arms");
	tap_ok(!fault_hit(FAULT_ALLOC) && !fault_hit(FAULT_ALLOC), "calls 1 and 2 go through");
	tap_ok(fault_hit(FAULT_ALLOC), "call 3 fails");
	tap_ok(!fault_hit(FAULT_ALLOC), "call 4 goes through");
	tap_ok(!fault_hit(FAULT_MMAP), "another kind is not armed");
	TAP_IS_U64(fault_count(FAULT_ALLOC), 4, "the calls are counted");

	tap_ok(fault_arm("thread:2+,shm:1"), "thread:2+,shm:1 arms");
	tap_ok(!fault_hit(FAULT_THREAD) && fault_hit(FAULT_THREAD) && fault_hit(FAULT_THREAD),
	       "N+: the second call and every later one fail");
	tap_ok(fault_hit(FAULT_SHM) && !fault_hit(FAULT_SHM), "both parts of a list are armed");

	tap_ok(fault_arm("count"), "count arms");
	tap_ok(!fault_hit(FAULT_OPEN) && !fault_hit(FAULT_OPEN), "count fails nothing");
	TAP_IS_U64(fault_count(FAULT_OPEN), 2, "and counts");

	static const char *const bad[] = { "alloc",   "alloc:",	"alloc:0", "alloc:x", "alloc:3x",
					   "nosuch:1", "alloc:-1", "alloc:1,", ",alloc:1", "alloc:1++" };
	for (size_t i = 0; i < TEST_ARRAY_SIZE(bad); i++) {
		bool ok = fault_arm(bad[i]);

		tap_ok(!ok && !fault_armed && !fault_hit(FAULT_ALLOC), "'%s' is refused, nothing armed",
		       bad[i]);
	}
	tap_ok(fault_arm(NULL) && !fault_armed, "NULL disarms");
}

/* The context's first allocation refused: dao_open says so, and the next
 * one opens. */
static void test_open_refused(void)
{
	dao_config cfg = test_config(1 << 20, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
	dao_ctx ctx;

	fault_arm("alloc:1");
	TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_ERR_NOMEM, "dao_open without memory: NOMEM");
	fault_arm("thread:1");
	TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_ERR_NOMEM,
		      "dao_open without a thread: NOMEM");
	fault_arm(NULL);
	TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_OK, "then it opens");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "and closes");
}

/* The host short of memory for good in the middle of a job: the first
 * write of a new buffer (its host copy) says so and changes nothing else;
 * once memory is back the job goes on. */
static void test_short_for_good(void)
{
	dao_ctx ctx = test_open(1 << 20, DAO_POLICY_DAO, 8, 0);
	dao_buf b = test_buffer(ctx, 4096), fresh = test_buffer(ctx, 4096);
	unsigned char in[4096], out[4096];

	test_fill(in, sizeof(in), 5);
	TEST_TRY(dao_write(ctx, b, 0, in, sizeof(in)));
	fault_arm("alloc:1+");
	TAP_IS_STATUS(dao_write(ctx, fresh, 0, in, sizeof(in)), DAO_ERR_NOMEM,
		      "a new buffer's first write while memory is short: NOMEM");
	TAP_IS_STATUS(dao_write(ctx, fresh, 0, in, sizeof(in)), DAO_ERR_NOMEM, "and again");
	TAP_IS_U64(fault_count(FAULT_ALLOC) >= 2, 1, "both asked for memory");
	fault_arm(NULL);
	TAP_IS_STATUS(dao_sync(ctx), DAO_OK, "the context did not fail");
	TAP_IS_STATUS(dao_read(ctx, b, 0, out, sizeof(out)), DAO_OK, "the other buffer reads back");
	tap_ok(!memcmp(in, out, sizeof(in)), "with its bytes");
	TAP_IS_STATUS(dao_write(ctx, fresh, 0, in, sizeof(in)), DAO_OK, "memory back: the write goes");
	TAP_IS_STATUS(dao_read(ctx, fresh, 0, out, sizeof(out)), DAO_OK, "and reads back");
	tap_ok(!memcmp(in, out, sizeof(in)), "with its bytes");
	TEST_TRY(dao_release(ctx, b));
	TEST_TRY(dao_release(ctx, fresh));
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

int main(void)
{
	test_clear_env();
	test_parse();
	test_open_refused();
	test_short_for_good();
	fault_arm(NULL);
	tap_plan_done();
	return tap_exit();
}
