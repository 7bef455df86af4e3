/* SPDX-License-Identifier: MIT */
/*
 * test_log_level.c - a configuration's log_level governs what libdao logs for
 * that context, and only for it: DAO_LOG_SILENT silences its errors, those
 * raised while opening it included; another context's level, opened before
 * or after, changes nothing.
 */
#include "common.h"

#define MiB (1024ull * 1024)

static char logged[4096];

static dao_config level_config(dao_log_level level, uint32_t flags)
{
	dao_config cfg = test_config(MiB, DAO_POLICY_DAO, 8, flags);

	cfg.log_level = level;
	return cfg;
}

static int fail_kernel(const dao_kernel_args *a)
{
	(void)a;
	return 1;
}

/* Errors while opening a silent context. */
static void test_silent_open(void)
{
	struct test_capture cap;
	dao_config cfg = level_config(DAO_LOG_SILENT, DAO_CONFIG_PRIVATE), shared;
	dao_ctx ctx = { 4242 }, first;

	cfg.policy = DAO_POLICY_DEFAULT;
	setenv("DAO_POLICY", "no-such-policy", 1);
	test_capture_start(&cap);
	TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_ERR_CONFIG, "silent, bad DAO_POLICY: CONFIG");
	test_capture_stop(&cap, logged, sizeof(logged));
	if (!tap_ok(!logged[0], "and nothing logged"))
		tap_diag("  logged: %s", logged);
	unsetenv("DAO_POLICY");

	/* The control: the same error at level error is logged. */
	cfg = level_config(DAO_LOG_ERROR, DAO_CONFIG_PRIVATE);
	cfg.policy = DAO_POLICY_DEFAULT;
	setenv("DAO_POLICY", "no-such-policy", 1);
	test_capture_start(&cap);
	TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_ERR_CONFIG, "level error, bad DAO_POLICY: CONFIG");
	test_capture_stop(&cap, logged, sizeof(logged));
	tap_ok(strstr(logged, "DAO_POLICY") != NULL, "and the error is logged");
	unsetenv("DAO_POLICY");

	cfg = level_config(DAO_LOG_SILENT, DAO_CONFIG_PRIVATE);
	cfg.trace_path = "/nonexistent-dao-dir/trace";
	test_capture_start(&cap);
	TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_ERR_IO, "silent, unwritable trace: IO");
	test_capture_stop(&cap, logged, sizeof(logged));
	if (!tap_ok(!logged[0], "and nothing logged"))
		tap_diag("  logged: %s", logged);

	shared = level_config(DAO_LOG_ERROR, 0);
	TEST_TRY(dao_open(&shared, &first));
	cfg = level_config(DAO_LOG_SILENT, 0);
	cfg.device_budget = 2 * MiB;
	test_capture_start(&cap);
	TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_ERR_CONFLICT, "silent, conflicting budget: CONFLICT");
	test_capture_stop(&cap, logged, sizeof(logged));
	if (!tap_ok(!logged[0], "and nothing logged"))
		tap_diag("  logged: %s", logged);
	TEST_TRY(dao_close(first, NULL));
	TAP_IS_U64(ctx.id, 4242, "no context was opened");
}

/* Provoke one API error and one kernel error on ctx; returns what was logged. */
static void provoke(dao_ctx ctx)
{
	struct test_capture cap;
	dao_buf b;
	dao_status st;

	test_capture_start(&cap);
	st = dao_buffer_create(ctx, 64 * MiB, &b); /* more than the device budget */
	if (st != DAO_ERR_BUDGET)
		tap_bail("an oversize buffer gave %s", dao_strerror(st));
	TEST_TRY(dao_launch(ctx, fail_kernel, NULL, NULL, 0));
	st = dao_sync(ctx);
	if (st != DAO_ERR_KERNEL)
		tap_bail("a failing kernel gave %s", dao_strerror(st));
	test_capture_stop(&cap, logged, sizeof(logged));
}

static void test_per_context(bool silent_first)
{
	dao_config loud = level_config(DAO_LOG_ERROR, DAO_CONFIG_PRIVATE);
	dao_config quiet = level_config(DAO_LOG_SILENT, DAO_CONFIG_PRIVATE);
	const char *order = silent_first ? "silent opened first" : "silent opened second";
	dao_ctx a, b;

	if (silent_first) {
		TEST_TRY(dao_open(&quiet, &b));
		TEST_TRY(dao_open(&loud, &a));
	} else {
		TEST_TRY(dao_open(&loud, &a));
		TEST_TRY(dao_open(&quiet, &b));
	}
	provoke(a);
	tap_ok(strstr(logged, "device budget") != NULL,
	       "%s: the level-error context logs its API error", order);
	if (!tap_ok(strstr(logged, "kernel") != NULL,
		    "%s: and its kernel failure, logged by the executor", order))
		tap_diag("  logged: %s", logged);
	provoke(b);
	if (!tap_ok(!logged[0], "%s: the silent context logs nothing", order))
		tap_diag("  logged: %s", logged);
	dao_close(a, NULL);
	dao_close(b, NULL);
}

int main(void)
{
	test_clear_env();
	test_silent_open();
	test_per_context(false);
	test_per_context(true);
	tap_plan_done();
	return tap_exit();
}
