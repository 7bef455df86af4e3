/* SPDX-License-Identifier: MIT */
/*
 * test_cuda_fallback.c - without a usable CUDA device (no driver, as in CI,
 * or a libdao built without CUDA) a CUDA backend asked for by name fails
 * with DAO_ERR_BACKEND and a log line naming it, changes nothing, and auto
 * falls back to the host backend, saying so once. On a machine with a
 * device there is no fallback to observe: the test skips.
 */
#include "common.h"

#define LOG_CAP 8192

/* Occurrences of needle in haystack. */
static int count_of(const char *haystack, const char *needle)
{
	int n = 0;

	for (const char *p = haystack; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static dao_config config_for(dao_backend_kind kind, uint32_t flags)
{
	dao_config cfg;

	dao_config_init(&cfg);
	cfg.backend = kind;
	cfg.flags = flags;
	cfg.device_budget = 1 << 20;
	cfg.log_level = DAO_LOG_INFO;
	return cfg;
}

/* Open with backend `kind` (via the struct, or DAO_BACKEND when env is
 * set), expecting a refusal that leaves *out as it was and says why. */
static void check_refused(dao_backend_kind kind, const char *env, uint32_t flags)
{
	const char *name = dao_backend_name(kind);
	dao_config cfg = config_for(env ? DAO_BACKEND_DEFAULT : kind, flags);
	dao_ctx ctx = { 0x5eed };
	struct test_capture cap;
	char log[LOG_CAP];
	dao_status st;

	if (env)
		setenv("DAO_BACKEND", env, 1);
	test_capture_start(&cap);
	st = dao_open(&cfg, &ctx);
	test_capture_stop(&cap, log, sizeof(log));
	unsetenv("DAO_BACKEND");

	TAP_IS_STATUS(st, DAO_ERR_BACKEND, env ? "DAO_BACKEND names a CUDA backend: refused"
					       : "dao_config names a CUDA backend: refused");
	tap_ok(ctx.id == 0x5eed, "%s%s: the handle is left as it was", name,
	       flags & DAO_CONFIG_PRIVATE ? " (private)" : "");
	if (!tap_ok(strstr(log, name) && (strstr(log, "no usable CUDA device") ||
					  strstr(log, "without CUDA support")),
		    "%s: the log says which backend and why", name))
		tap_diag("  log: %s", log);
}

int main(void)
{
	static const dao_backend_kind cuda[] = { DAO_BACKEND_CUDA_MANAGED,
						 DAO_BACKEND_CUDA_EXPLICIT };
	dao_config cfg = config_for(DAO_BACKEND_AUTO, 0);
	struct test_capture cap;
	char log[LOG_CAP];
	dao_ctx a, b, h;
	dao_info info;
	dao_buf buf;
	double x = 2.5, y = 0;

	test_clear_env();
	test_capture_start(&cap);
	TEST_TRY(dao_open(&cfg, &a));
	TEST_TRY(dao_info_get(a, &info));
	if (info.backend != DAO_BACKEND_HOST) {
		test_capture_stop(&cap, log, sizeof(log));
		printf("1..0 # SKIP a CUDA device is usable (auto chose %s): no fallback to see\n",
		       info.backend_name);
		TEST_TRY(dao_close(a, NULL));
		return 0;
	}
	/* A second auto context, private so that it opens a device again. */
	cfg.flags = DAO_CONFIG_PRIVATE;
	TEST_TRY(dao_open(&cfg, &b));
	test_capture_stop(&cap, log, sizeof(log));

	TAP_IS_U64(info.backend, DAO_BACKEND_HOST, "auto without a CUDA device gives host");
	if (!tap_ok(count_of(log, "using the host backend") == 1,
		    "auto says once that it falls back to host"))
		tap_diag("  log: %s", log);
	TEST_TRY(dao_info_get(b, &info));
	TAP_IS_U64(info.backend, DAO_BACKEND_HOST, "a second auto context is on host too");

	/* The fallback context works. */
	TEST_TRY(dao_buffer_create(a, sizeof(x), &buf));
	TAP_IS_STATUS(dao_write(a, buf, 0, &x, sizeof(x)), DAO_OK, "auto context: write");
	TAP_IS_STATUS(dao_read(a, buf, 0, &y, sizeof(y)), DAO_OK, "auto context: read");
	tap_ok(y == x, "auto context: read back what was written");
	TEST_TRY(dao_release(a, buf));

	for (size_t i = 0; i < TEST_ARRAY_SIZE(cuda); i++) {
		check_refused(cuda[i], NULL, 0);
		check_refused(cuda[i], NULL, DAO_CONFIG_PRIVATE);
		check_refused(cuda[i], dao_backend_name(cuda[i]), 0);
	}

	/* Refusals changed nothing: the shared host device still serves. */
	cfg = config_for(DAO_BACKEND_HOST, 0);
	TAP_IS_STATUS(dao_open(&cfg, &h), DAO_OK, "host opens after the refusals");
	TEST_TRY(dao_info_get(h, &info));
	TAP_IS_U64(info.backend, DAO_BACKEND_HOST, "and it is the host backend");
	TAP_IS_STATUS(dao_close(h, NULL), DAO_OK, "host context closes");
	TAP_IS_STATUS(dao_close(b, NULL), DAO_OK, "second auto context closes");
	TAP_IS_STATUS(dao_close(a, NULL), DAO_OK, "first auto context closes");
	tap_plan_done();
	return tap_exit();
}
