/* SPDX-License-Identifier: MIT */
/*
 * test_policy_default.c - the default for iterative jobs: a device whose
 * policy no context chose takes `plan` when the job queues its first
 * iteration mark after the device first had to evict (core/ask.c), keeps
 * dao while the job's data fits, and keeps its policy where a context chose
 * one (dao_config or DAO_POLICY, on its own device or a shared one) and
 * where `plan` cannot start (its memory or its thread refused), saying
 * so; a deterministic device switches as the program says, run after run.
 * The job's results are the same throughout.
 */
#include "base/fault.h"
#include "common.h"

#define NBUF 4
#define ITERS 5

static dao_policy policy_of(dao_ctx ctx)
{
	dao_info info;

	TEST_TRY(dao_info_get(ctx, &info));
	return info.policy;
}

/* ITERS iterations over NBUF counters, each bumped once per iteration;
 * every counter must read ITERS at the end. */
static bool run_iterations(dao_ctx ctx, int iters)
{
	dao_buf b[NBUF];
	bool right = true;

	for (int i = 0; i < NBUF; i++) {
		uint64_t zero = 0;

		b[i] = test_buffer(ctx, 4096);
		TEST_TRY(dao_write(ctx, b[i], 0, &zero, sizeof(zero)));
	}
	for (int it = 0; it < iters; it++) {
		for (int i = 0; i < NBUF; i++) {
			dao_operand op = { b[i], DAO_RW };

			TEST_TRY(dao_launch(ctx, test_bump_kernel, NULL, &op, 1));
		}
		TEST_TRY(dao_iteration(ctx));
	}
	for (int i = 0; i < NBUF; i++) {
		uint64_t v = 0;

		TEST_TRY(dao_read(ctx, b[i], 0, &v, sizeof(v)));
		right = right && v == (uint64_t)iters;
		TEST_TRY(dao_release(ctx, b[i]));
	}
	return right;
}

static void test_default_takes_plan(void)
{
	dao_ctx ctx = test_open(8192, DAO_POLICY_DEFAULT, 8, 0);
	dao_buf more[NBUF];
	bool right = true;
	dao_info info;

	TAP_IS_U64(policy_of(ctx), DAO_POLICY_DAO, "a job that marks nothing yet runs dao");
	tap_ok(run_iterations(ctx, ITERS), "its results are right");
	TEST_TRY(dao_info_get(ctx, &info));
	TAP_IS_U64(info.policy, DAO_POLICY_PLAN, "from a mark after its first eviction on, it runs plan");
	tap_ok(info.policy_name && !strcmp(info.policy_name, "plan"), "and says so by name");
	TEST_TRY(dao_close(ctx, NULL));

	ctx = test_open(8192, DAO_POLICY_DEFAULT, 8, 0);
	TEST_TRY(dao_sync(ctx));
	TAP_IS_U64(policy_of(ctx), DAO_POLICY_DAO, "a job that never marks keeps dao");
	TEST_TRY(dao_close(ctx, NULL));

	/* Its data fits: nothing to decide, dao costs least. */
	ctx = test_open(NBUF * 4096, DAO_POLICY_DEFAULT, 8, 0);
	tap_ok(run_iterations(ctx, ITERS), "a job whose data fits: results right");
	TAP_IS_U64(test_stats(ctx).evictions, 0, "nothing was evicted");
	TAP_IS_U64(policy_of(ctx), DAO_POLICY_DAO, "and it keeps dao at every mark");
	/* Then it grows past the budget: plan from the next mark after an
	 * eviction. */
	for (int i = 0; i < NBUF; i++) {
		dao_operand op;
		uint64_t zero = 0;

		more[i] = test_buffer(ctx, 4096);
		op = (dao_operand){ more[i], DAO_RW };
		TEST_TRY(dao_write(ctx, more[i], 0, &zero, sizeof(zero)));
		TEST_TRY(dao_launch(ctx, test_bump_kernel, NULL, &op, 1));
	}
	tap_ok(run_iterations(ctx, ITERS) && test_stats(ctx).evictions > 0,
	       "the job grows to twice the budget: results right, evictions");
	TAP_IS_U64(policy_of(ctx), DAO_POLICY_PLAN, "plan from a mark after the first eviction");
	for (int i = 0; i < NBUF; i++) {
		uint64_t v = 0;

		TEST_TRY(dao_read(ctx, more[i], 0, &v, sizeof(v)));
		right = right && v == 1;
		TEST_TRY(dao_release(ctx, more[i]));
	}
	tap_ok(right, "and the buffers it grew by hold their data");
	TEST_TRY(dao_close(ctx, NULL));
}

static void test_chosen_stays(void)
{
	dao_ctx ctx = test_open(8192, DAO_POLICY_DAO, 8, 0);

	tap_ok(run_iterations(ctx, ITERS), "dao chosen in dao_config: results right");
	TAP_IS_U64(policy_of(ctx), DAO_POLICY_DAO, "and dao it stays");
	TEST_TRY(dao_close(ctx, NULL));

	setenv("DAO_POLICY", "dao", 1);
	ctx = test_open(8192, DAO_POLICY_DEFAULT, 8, 0);
	unsetenv("DAO_POLICY");
	tap_ok(run_iterations(ctx, ITERS), "dao chosen by DAO_POLICY: results right");
	TAP_IS_U64(policy_of(ctx), DAO_POLICY_DAO, "and dao it stays");
	TEST_TRY(dao_close(ctx, NULL));

	ctx = test_open(8192, DAO_POLICY_LRU, 8, 0);
	tap_ok(run_iterations(ctx, ITERS) && policy_of(ctx) == DAO_POLICY_LRU,
	       "lru chosen: results right, and lru it stays");
	TEST_TRY(dao_close(ctx, NULL));


}

static void test_deterministic(void)
{
	char path[] = "/tmp/dao-test-policy-default-XXXXXX", line[1024] = "";
	unsigned long long followed = 0, departures = 0;
	dao_stats det[2];
	dao_ctx ctx;
	FILE *f;
	int fd;

	/* Deterministic: plan builds at the mark there, so the switch and
	 * what follows are the program's; two runs move the same bytes. */
	for (int run = 0; run < 2; run++) {
		if (!run) {
			if ((fd = mkstemp(path)) < 0)
				tap_bail("mkstemp failed");
			close(fd);
			setenv("DAO_SUMMARY", path, 1);
		}
		ctx = test_open(8192, DAO_POLICY_DEFAULT, 8, DAO_CONFIG_DETERMINISTIC);
		unsetenv("DAO_SUMMARY");
		tap_ok(run_iterations(ctx, ITERS), "a deterministic device (run %d): results right",
		       run + 1);
		TAP_IS_U64(policy_of(ctx), DAO_POLICY_PLAN, "it takes plan too");
		det[run] = test_stats(ctx);
		TEST_TRY(dao_close(ctx, NULL));
	}
	/* Deterministic: kernels run once the window of 8 fills, so nothing
	 * has run (or been evicted) when the first mark is queued; plan takes
	 * over as the second is. The first, queued before, is no mark to plan
	 * from. The window of 8 holds an iteration (NBUF kernels) and the mark
	 * that ends it, so from the second mark on each iteration is queued
	 * whole at its mark and planned there from its own ops: plans built
	 * at the second, third and fourth marks, each followed to its end (the
	 * buffers made before it started are the same records every time).
	 * The reads after the last mark have no mark after them: the last
	 * plan stays in force, and they depart from it: one departure. */
	f = fopen(path, "r");
	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
	}
	unlink(path);
	{
		const char *at = strstr(line, " iterations_followed=");

		if (at)
			sscanf(at, " iterations_followed=%llu plan_departures=%llu", &followed,
			       &departures);
	}
	tap_ok(strstr(line, " policy=plan ") && strstr(line, " plans_built=3 ") && followed == 3 &&
		       departures == 1,
	       "the summary line: policy plan, three iterations planned from their own ops and "
	       "followed, the reads after the last mark its one departure (%s)",
	       line);
	tap_ok(det[0].h2d_bytes == det[1].h2d_bytes && det[0].d2h_bytes == det[1].d2h_bytes &&
		       det[0].evictions == det[1].evictions && det[0].fetches == det[1].fetches,
	       "two deterministic runs move the same bytes (%" PRIu64 " and %" PRIu64 " fetched)",
	       det[0].h2d_bytes, det[1].h2d_bytes);
}

/* Contexts sharing a device: a choice made by any of them holds. */
static void test_shared(void)
{
	dao_config dflt = test_config(8192, DAO_POLICY_DEFAULT, 8, 0);
	dao_config dao = test_config(8192, DAO_POLICY_DAO, 8, 0);
	dao_config plan = test_config(8192, DAO_POLICY_PLAN, 8, 0);
	dao_ctx a, b;

	TEST_TRY(dao_open(&dflt, &a));
	TEST_TRY(dao_open(&dao, &b));
	tap_ok(run_iterations(a, ITERS), "shared, a second context chose dao: results right");
	TAP_IS_U64(policy_of(a), DAO_POLICY_DAO, "the device keeps dao at the first mark");
	TEST_TRY(dao_close(b, NULL));
	TEST_TRY(dao_close(a, NULL));

	TEST_TRY(dao_open(&dflt, &a));
	tap_ok(run_iterations(a, ITERS) && policy_of(a) == DAO_POLICY_PLAN,
	       "shared, no context chose: plan from the first mark");
	TAP_IS_STATUS(dao_open(&dao, &b), DAO_ERR_CONFLICT,
		      "a context that then asks for dao: CONFLICT, as for any other policy");
	TEST_TRY(dao_open(&plan, &b));
	TAP_IS_U64(policy_of(b), DAO_POLICY_PLAN, "one that asks for plan opens on it");
	TEST_TRY(dao_close(b, NULL));
	TEST_TRY(dao_close(a, NULL));
}

/* plan cannot start at the first mark after an eviction: the job goes on
 * with dao, told why. */
static void test_refused(const char *spec, const char *what)
{
	dao_config cfg = test_config(8192, DAO_POLICY_DEFAULT, 8, DAO_CONFIG_PRIVATE);
	struct test_capture cap;
	char said[1024];
	dao_ctx ctx;
	dao_buf b[NBUF];
	bool right = true;
	dao_status st;

	cfg.log_level = DAO_LOG_WARN;
	TEST_TRY(dao_open(&cfg, &ctx));
	for (int i = 0; i < NBUF; i++) {
		uint64_t zero = 0;

		b[i] = test_buffer(ctx, 4096);
		TEST_TRY(dao_write(ctx, b[i], 0, &zero, sizeof(zero)));
	}
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < NBUF; i++) {
			dao_operand op = { b[i], DAO_RW };

			TEST_TRY(dao_launch(ctx, test_bump_kernel, NULL, &op, 1));
		}
		TEST_TRY(dao_sync(ctx));
		if (round)
			break;
		if (!test_stats(ctx).evictions)
			tap_bail("four buffers in room for two: no eviction");
		test_capture_start(&cap);
		if (!fault_arm(spec))
			tap_bail("cannot arm %s", spec);
		st = dao_iteration(ctx);
		fault_arm(NULL);
		test_capture_stop(&cap, said, sizeof(said));
		tap_ok(st == DAO_OK, "%s refused at the mark: dao_iteration still OK (%s)", what,
		       dao_strerror(st));
		tap_ok(strstr(said, "policy plan could not start") && strstr(said, "it keeps dao"),
		       "%s refused: the job is told why it keeps dao", what);
		tap_ok(policy_of(ctx) == DAO_POLICY_DAO, "%s refused: the device keeps dao", what);
	}
	TEST_TRY(dao_iteration(ctx));
	for (int i = 0; i < NBUF; i++) {
		uint64_t v = 0;

		TEST_TRY(dao_read(ctx, b[i], 0, &v, sizeof(v)));
		right = right && v == 2;
		TEST_TRY(dao_release(ctx, b[i]));
	}
	tap_ok(right, "%s refused: the job's data is right", what);
	tap_ok(policy_of(ctx) == DAO_POLICY_DAO, "%s refused: no second try at a later mark", what);
	TEST_TRY(dao_close(ctx, NULL));
}

int main(void)
{
	test_clear_env();
	test_default_takes_plan();
	test_chosen_stays();
	test_deterministic();
	test_shared();
	/* dao_iteration's own op is the first allocation after arming; the
	 * plan's buffer of uses the second, its state the third. */
	test_refused("alloc:2", "the buffer of the plan's uses");
	test_refused("alloc:3", "the plan's state");
	test_refused("thread:1", "the planner's thread");
	tap_plan_done();
	return tap_exit();
}
