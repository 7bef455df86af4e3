/* SPDX-License-Identifier: MIT */
/*
 * test_config.c - dao_parse_size, dao_config_init, configuration errors in
 * the struct and in the environment, what the environment and the defaults
 * resolve to, conflicts between contexts sharing the device, backends that
 * are unavailable, and DAO_TRACE.
 */
#include "common.h"
#include "base/node_memory.h"

#define MiB (1ull << 20)

static void test_parse_size(void)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} good[] = {
		{ "0", 0 },
		{ "1", 1 },
		{ "1048576", 1048576 },
		{ "512k", 512ull << 10 },
		{ "512K", 512ull << 10 },
		{ "64M", 64ull << 20 },
		{ "64m", 64ull << 20 },
		{ "2G", 2ull << 30 },
		{ "2g", 2ull << 30 },
		{ "3T", 3ull << 40 },
		{ "18446744073709551615", UINT64_MAX },
		{ "16777215T", 16777215ull << 40 },
	};
	static const char *const malformed[] = {
		"", "abc", "12Q", "-1", "1.5G", "G", "0x10", "12 34", "64MQ", "1e6",
	};
	static const char *const too_big[] = {
		"18446744073709551616", "99999999999999999999999", "16777216T", "17179869184G",
	};
	uint64_t v;
	int bad = 0;

	for (size_t i = 0; i < TEST_ARRAY_SIZE(good); i++) {
		dao_status st;

		v = 12345;
		st = dao_parse_size(good[i].text, &v);
		if (st != DAO_OK || v != good[i].bytes) {
			bad++;
			tap_diag("  \"%s\": %s, %" PRIu64 ", want %" PRIu64, good[i].text,
				 dao_strerror(st), v, good[i].bytes);
		}
	}
	tap_ok(bad == 0, "dao_parse_size: plain numbers and K/M/G/T suffixes");
	bad = 0;
	for (size_t i = 0; i < TEST_ARRAY_SIZE(malformed); i++) {
		dao_status st;

		v = 12345;
		st = dao_parse_size(malformed[i], &v);
		if (st != DAO_ERR_FORMAT || v != 12345) {
			bad++;
			tap_diag("  \"%s\": %s, value %" PRIu64, malformed[i], dao_strerror(st), v);
		}
	}
	tap_ok(bad == 0, "dao_parse_size: malformed text is FORMAT and writes nothing");
	bad = 0;
	for (size_t i = 0; i < TEST_ARRAY_SIZE(too_big); i++) {
		dao_status st;

		v = 12345;
		st = dao_parse_size(too_big[i], &v);
		if (st != DAO_ERR_OVERFLOW || v != 12345) {
			bad++;
			tap_diag("  \"%s\": %s, value %" PRIu64, too_big[i], dao_strerror(st), v);
		}
	}
	tap_ok(bad == 0, "dao_parse_size: more than 2^64-1 bytes is OVERFLOW and writes nothing");
	TAP_IS_STATUS(dao_parse_size(NULL, &v), DAO_ERR_NULL, "dao_parse_size(NULL, out): NULL");
	TAP_IS_STATUS(dao_parse_size("1", NULL), DAO_ERR_NULL, "dao_parse_size(text, NULL): NULL");
}

static void test_config_init(void)
{
	dao_config cfg;

	memset(&cfg, 0xff, sizeof(cfg));
	dao_config_init(&cfg);
	TAP_IS_U64(cfg.size, sizeof(dao_config), "dao_config_init sets size");
	/* Zero means "environment, else default": init must leave them so. */
	tap_ok(cfg.flags == 0 && cfg.backend == DAO_BACKEND_DEFAULT &&
		       cfg.policy == DAO_POLICY_DEFAULT && cfg.log_level == DAO_LOG_DEFAULT &&
		       cfg.lookahead == 0 && cfg.device_budget == 0 &&
		       cfg.device_budget_percent == 0 && cfg.host_budget == 0 && !cfg.trace_path &&
		       !cfg.job_name,
	       "dao_config_init leaves every setting to the environment");
}

/* dao_open must refuse cfg with CONFIG and leave *out alone. */
static void expect_config_error(const dao_config *cfg, const char *what)
{
	dao_ctx ctx = { 4242 };
	dao_status st = dao_open(cfg, &ctx);

	TAP_IS_STATUS(st, DAO_ERR_CONFIG, what);
	if (st == DAO_OK)
		(void)dao_close(ctx, NULL);
	else if (ctx.id != 4242)
		tap_diag("  %s: *out was written", what);
}

static void test_struct_errors(void)
{
	dao_config cfg;

	cfg = test_config(MiB, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
	cfg.size = 0;
	expect_config_error(&cfg, "size 0: CONFIG");
	cfg.size = sizeof(dao_config) - 8;
	expect_config_error(&cfg, "size too small: CONFIG");
	cfg.size = sizeof(dao_config) + 8;
	expect_config_error(&cfg, "size too large: CONFIG");

	cfg = test_config(MiB, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE | (1u << 5));
	expect_config_error(&cfg, "unknown flag bit 5: CONFIG");
	cfg = test_config(MiB, DAO_POLICY_PLAN, 8,
			  DAO_CONFIG_PRIVATE | DAO_CONFIG_PLAN_DAO_ORDER | DAO_CONFIG_PLAN_CLEAN_FIRST);
	expect_config_error(&cfg, "both plan orders at once: CONFIG");
	cfg = test_config(MiB, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE | (1u << 31));
	expect_config_error(&cfg, "unknown flag bit 31: CONFIG");
	cfg = test_config(0, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
	cfg.device_budget_percent = 101;
	expect_config_error(&cfg, "device_budget_percent 101: CONFIG");
	cfg = test_config(MiB, DAO_POLICY_DAO, 65537, DAO_CONFIG_PRIVATE);
	expect_config_error(&cfg, "lookahead 65537: CONFIG");
	cfg = test_config(MiB, DAO_POLICY_DAO, UINT32_MAX, DAO_CONFIG_PRIVATE);
	expect_config_error(&cfg, "lookahead 2^32-1: CONFIG");
	cfg = test_config(MiB, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
	cfg.backend = (dao_backend_kind)99;
	expect_config_error(&cfg, "unknown backend: CONFIG");
	cfg = test_config(MiB, (dao_policy)99, 8, DAO_CONFIG_PRIVATE);
	expect_config_error(&cfg, "unknown policy: CONFIG");
	cfg = test_config(MiB, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
	cfg.log_level = (dao_log_level)99;
	expect_config_error(&cfg, "unknown log level: CONFIG");

	/* The limits themselves are accepted. */
	{
		dao_ctx ctx;
		dao_info info;

		cfg = test_config(0, DAO_POLICY_DAO, 65536, DAO_CONFIG_PRIVATE);
		cfg.device_budget_percent = 100;
		TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_OK,
			      "lookahead 65536 and 100% of device memory are accepted");
		TEST_TRY(dao_info_get(ctx, &info));
		TAP_IS_U64(info.lookahead, 65536, "lookahead in force");
		TAP_IS_U64(info.device_budget, info.device_memory, "budget is all device memory");
		TEST_TRY(dao_close(ctx, NULL));
	}
}

/* Open a private host context configured by the environment alone. */
static dao_status open_env(dao_ctx *ctx)
{
	dao_config cfg;

	dao_config_init(&cfg);
	cfg.flags = DAO_CONFIG_PRIVATE;
	cfg.backend = DAO_BACKEND_HOST;
	cfg.log_level = test_log_level();
	return dao_open(&cfg, ctx);
}

static void test_env_errors(void)
{
	static const struct {
		const char *var, *value;
	} bad[] = {
		{ "DAO_DEVICE_BUDGET", "abc" },  { "DAO_DEVICE_BUDGET", "101%" },
		{ "DAO_DEVICE_BUDGET", "0%" },   { "DAO_DEVICE_BUDGET", "12Q" },
		{ "DAO_DEVICE_BUDGET", "-5M" },  { "DAO_HOST_BUDGET", "abc" },
		{ "DAO_HOST_BUDGET", "200%" },   { "DAO_POLICY", "nope" },
		{ "DAO_POLICY", "BELADY!" },     { "DAO_LOOKAHEAD", "0" },
		{ "DAO_LOOKAHEAD", "junk" },     { "DAO_LOOKAHEAD", "65537" },
		{ "DAO_LOOKAHEAD", "-1" },       { "DAO_LOG", "nope" },
		{ "DAO_LOG", "loud" },           { "DAO_BACKEND", "nope" },
	};

	for (size_t i = 0; i < TEST_ARRAY_SIZE(bad); i++) {
		char what[128];
		dao_ctx ctx = { 4242 };
		dao_status st;

		test_clear_env();
		setenv(bad[i].var, bad[i].value, 1);
		snprintf(what, sizeof(what), "%s=%s: CONFIG", bad[i].var, bad[i].value);
		/* A variable is only read when the struct leaves its field unset. */
		if (!strcmp(bad[i].var, "DAO_BACKEND") || !strcmp(bad[i].var, "DAO_LOG")) {
			dao_config cfg;

			dao_config_init(&cfg);
			cfg.flags = DAO_CONFIG_PRIVATE;
			if (strcmp(bad[i].var, "DAO_LOG"))
				cfg.log_level = test_log_level();
			else
				cfg.backend = DAO_BACKEND_HOST;
			st = dao_open(&cfg, &ctx);
		} else {
			st = open_env(&ctx);
		}
		TAP_IS_STATUS(st, DAO_ERR_CONFIG, what);
		if (st == DAO_OK)
			(void)dao_close(ctx, NULL);
		/* cfg == NULL reads the same environment. */
		ctx = (dao_ctx){ 4242 };
		snprintf(what, sizeof(what), "%s=%s with cfg NULL: CONFIG", bad[i].var,
			 bad[i].value);
		setenv("DAO_LOG", strcmp(bad[i].var, "DAO_LOG") ? "silent" : bad[i].value, 1);
		st = dao_open(NULL, &ctx);
		TAP_IS_STATUS(st, DAO_ERR_CONFIG, what);
		if (st == DAO_OK)
			(void)dao_close(ctx, NULL);
		else
			TAP_IS_U64(ctx.id, 4242, "and *out is untouched");
	}
	test_clear_env();
}

static void test_env_values(void)
{
	dao_ctx ctx;
	dao_info info;
	dao_stats stats;

	test_clear_env();
	for (int p = DAO_POLICY_DAO; p <= DAO_POLICY_PLAN; p++) {
		char what[64];

		setenv("DAO_POLICY", dao_policy_name((dao_policy)p), 1);
		snprintf(what, sizeof(what), "DAO_POLICY=%s", dao_policy_name((dao_policy)p));
		TAP_IS_STATUS(open_env(&ctx), DAO_OK, what);
		TEST_TRY(dao_info_get(ctx, &info));
		TAP_IS_U64(info.policy, p, "selects that policy");
		TEST_TRY(dao_close(ctx, NULL));
	}
	test_clear_env();

	setenv("DAO_DEVICE_BUDGET", "3M", 1);
	setenv("DAO_HOST_BUDGET", "5M", 1);
	setenv("DAO_LOOKAHEAD", "7", 1);
	setenv("DAO_LOG", "debug", 1);
	setenv("DAO_JOB", "test job", 1);
	TAP_IS_STATUS(open_env(&ctx), DAO_OK, "DAO_DEVICE_BUDGET=3M DAO_HOST_BUDGET=5M ...");
	TEST_TRY(dao_info_get(ctx, &info));
	TEST_TRY(dao_stats_get(ctx, &stats));
	TAP_IS_U64(info.device_budget, 3 * MiB, "device budget from the environment");
	TAP_IS_U64(stats.budget_bytes, 3 * MiB, "and in the statistics");
	TAP_IS_U64(info.host_budget, 5 * MiB, "host budget from the environment");
	TAP_IS_U64(info.lookahead, 7, "lookahead from the environment");
	TEST_TRY(dao_close(ctx, NULL));

	setenv("DAO_DEVICE_BUDGET", "10%", 1);
	TAP_IS_STATUS(open_env(&ctx), DAO_OK, "DAO_DEVICE_BUDGET=10%");
	TEST_TRY(dao_info_get(ctx, &info));
	tap_ok(info.device_budget <= info.device_memory / 10 &&
		       info.device_budget + 4096 > info.device_memory / 10,
	       "a tenth of device memory (%" PRIu64 " of %" PRIu64 ")", info.device_budget,
	       info.device_memory);
	TEST_TRY(dao_close(ctx, NULL));

	/* Struct fields win over the environment. */
	{
		dao_config cfg = test_config(2 * MiB, DAO_POLICY_LRU, 3, DAO_CONFIG_PRIVATE);

		setenv("DAO_POLICY", "fifo", 1);
		setenv("DAO_DEVICE_BUDGET", "9M", 1);
		setenv("DAO_LOOKAHEAD", "9", 1);
		TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_OK, "struct and environment both set");
		TEST_TRY(dao_info_get(ctx, &info));
		tap_ok(info.policy == DAO_POLICY_LRU && info.device_budget == 2 * MiB &&
			       info.lookahead == 3,
		       "the struct's fields win");
		TEST_TRY(dao_close(ctx, NULL));
	}
	test_clear_env();
}

static uint64_t physical_memory(void)
{
	return (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
}

static bool have_gpu(void)
{
	return access("/dev/nvidiactl", F_OK) == 0;
}

static void test_defaults(void)
{
	dao_ctx ctx;
	dao_info info;
	uint64_t ram = physical_memory();

	test_clear_env();
	setenv("DAO_LOG", "silent", 1);
	TAP_IS_STATUS(dao_open(NULL, &ctx), DAO_OK, "dao_open(NULL) with a clean environment");
	TEST_TRY(dao_info_get(ctx, &info));
	tap_ok(info.backend != DAO_BACKEND_DEFAULT && info.backend != DAO_BACKEND_AUTO,
	       "info names the backend chosen (%s)", info.backend_name);
	if (have_gpu()) {
		tap_ok(1, "backend is host without a GPU # SKIP a GPU is present");
	} else {
		TAP_IS_U64(info.backend, DAO_BACKEND_HOST, "no GPU: the host backend");
	}
	TAP_IS_U64(info.policy, DAO_POLICY_DAO, "default policy: dao");
	TAP_IS_U64(info.lookahead, 64, "default lookahead: 64");
	tap_ok(!(info.flags & DAO_CONFIG_PRIVATE), "not private");
	if (info.backend == DAO_BACKEND_HOST) {
		struct node_memory nm;

		TAP_IS_U64(info.device_memory, ram, "host backend: device memory is physical RAM");
		tap_ok(info.device_budget <= ram / 2 && info.device_budget + 4096 > ram / 2,
		       "default device budget: half of it (%" PRIu64 ")", info.device_budget);
		node_memory_read(&nm);
		TAP_IS_U64(info.host_budget, nm.capacity,
			   "default host budget: what the node could give (physical RAM, or the "
			   "memory cgroup's limit)");
	}
	TEST_TRY(dao_close(ctx, NULL));
	test_clear_env();
}

static void test_backends(void)
{
	dao_config cfg = test_config(MiB, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
	dao_ctx ctx = { 4242 };
	dao_info info;

	cfg.backend = DAO_BACKEND_AUTO;
	TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_OK, "backend auto opens");
	TEST_TRY(dao_info_get(ctx, &info));
	if (have_gpu())
		tap_ok(1, "auto picks host without a GPU # SKIP a GPU is present");
	else
		TAP_IS_U64(info.backend, DAO_BACKEND_HOST, "auto picks host without a GPU");
	TEST_TRY(dao_close(ctx, NULL));

	if (have_gpu()) {
		tap_ok(1, "CUDA backends refused without a GPU # SKIP a GPU is present");
		return;
	}
	for (int b = DAO_BACKEND_CUDA_MANAGED; b <= DAO_BACKEND_CUDA_EXPLICIT; b++) {
		char what[80];

		cfg.backend = (dao_backend_kind)b;
		ctx = (dao_ctx){ 4242 };
		snprintf(what, sizeof(what), "backend %s without a GPU: BACKEND",
			 dao_backend_name((dao_backend_kind)b));
		TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_ERR_BACKEND, what);
		TAP_IS_U64(ctx.id, 4242, "and *out is untouched");
		cfg.backend = DAO_BACKEND_DEFAULT;
		setenv("DAO_BACKEND", dao_backend_name((dao_backend_kind)b), 1);
		snprintf(what, sizeof(what), "DAO_BACKEND=%s without a GPU: BACKEND",
			 dao_backend_name((dao_backend_kind)b));
		TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_ERR_BACKEND, what);
		test_clear_env();
	}
	setenv("DAO_BACKEND", "host", 1);
	cfg.backend = DAO_BACKEND_DEFAULT;
	TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_OK, "DAO_BACKEND=host");
	TEST_TRY(dao_info_get(ctx, &info));
	TAP_IS_U64(info.backend, DAO_BACKEND_HOST, "selects the host backend");
	tap_ok(!strcmp(info.backend_name, "host"), "named \"host\"");
	TEST_TRY(dao_close(ctx, NULL));
	test_clear_env();
}

/* dao_open of cfg at log level `level`, what it logs captured into said. */
static dao_status open_logged(dao_config cfg, dao_log_level level, dao_ctx *out, char *said,
			      size_t len)
{
	struct test_capture cap;
	dao_status st;

	cfg.log_level = level;
	test_capture_start(&cap);
	st = dao_open(&cfg, out);
	test_capture_stop(&cap, said, len);
	return st;
}

/* The flags of ctx's device (dao_info.flags). */
static uint32_t device_flags(dao_ctx ctx)
{
	dao_info info;

	TEST_TRY(dao_info_get(ctx, &info));
	return info.flags;
}

/* Contexts without DAO_CONFIG_PRIVATE share one device per backend. */
static void test_conflicts(void)
{
	dao_config a = test_config(4 * MiB, DAO_POLICY_BELADY, 8, 0);
	dao_config b;
	dao_ctx first, second, third = { 4242 };
	dao_stats s1, s2;
	dao_buf buf;
	char said[1024];
	dao_status st;

	TAP_IS_STATUS(dao_open(&a, &first), DAO_OK, "open a shared context: 4 MiB, belady");
	b = test_config(2 * MiB, DAO_POLICY_BELADY, 8, 0);
	TAP_IS_STATUS(dao_open(&b, &third), DAO_ERR_CONFLICT,
		      "a second with another explicit budget: CONFLICT");
	TAP_IS_U64(third.id, 4242, "and *out is untouched");
	b = test_config(4 * MiB, DAO_POLICY_LRU, 8, 0);
	TAP_IS_STATUS(dao_open(&b, &third), DAO_ERR_CONFLICT,
		      "a second with another explicit policy: CONFLICT");
	b = test_config(4 * MiB, DAO_POLICY_BELADY, 8, 0);
	TAP_IS_STATUS(dao_open(&b, &second), DAO_OK, "the same settings: OK");
	b = test_config(0, DAO_POLICY_DEFAULT, 8, 0);
	TAP_IS_STATUS(dao_open(&b, &third), DAO_OK, "budget and policy left unset: OK");
	TEST_TRY(dao_close(third, NULL));
	b = test_config(2 * MiB, DAO_POLICY_FIFO, 8, DAO_CONFIG_PRIVATE);
	TAP_IS_STATUS(dao_open(&b, &third), DAO_OK, "a private context may differ");
	TEST_TRY(dao_close(third, NULL));

	/* The two shared contexts see one device. */
	buf = test_buffer(first, 1000);
	s1 = test_stats(second);
	TAP_IS_U64(s1.live_buffers, 1, "a buffer of one shared context counts on the other");
	TAP_IS_U64(s1.budget_bytes, 4 * MiB, "one budget");
	{
		uint64_t size;

		TAP_IS_STATUS(dao_buffer_size(second, buf, &size), DAO_ERR_FOREIGN,
			      "but its handle is foreign to the other context");
	}
	TEST_TRY(dao_close(first, NULL));
	s2 = test_stats(second);
	TAP_IS_U64(s2.live_buffers, 0, "closing a context frees its buffers on the device");
	TEST_TRY(dao_close(second, NULL));

	a = test_config(2 * MiB, DAO_POLICY_LRU, 8, 0);
	TAP_IS_STATUS(dao_open(&a, &first), DAO_OK,
		      "once all are closed, other settings are accepted");
	b = test_config(0, DAO_POLICY_DEFAULT, 8, DAO_CONFIG_PLAN_CLEAN_FIRST);
	TAP_IS_STATUS(dao_open(&b, &third), DAO_ERR_CONFLICT,
		      "a second that fixes the plan order where the device does not: CONFLICT");
	TEST_TRY(dao_close(first, NULL));

	a = test_config(2 * MiB, DAO_POLICY_PLAN, 8, DAO_CONFIG_PLAN_DAO_ORDER);
	st = open_logged(a, DAO_LOG_INFO, &first, said, sizeof(said));
	TAP_IS_STATUS(st, DAO_OK, "a shared context with dao's plan order");
	tap_ok(strstr(said, "policy plan, lookahead 8, plan order dao's") != NULL,
	       "the log says the order it fixes");
	b = test_config(0, DAO_POLICY_DEFAULT, 8, DAO_CONFIG_PLAN_CLEAN_FIRST);
	st = open_logged(b, DAO_LOG_ERROR, &third, said, sizeof(said));
	TAP_IS_STATUS(st, DAO_ERR_CONFLICT, "a second asking for clean first: CONFLICT");
	tap_ok(strstr(said, "with another plan order") && strstr(said, "plan order dao's)"),
	       "the log names the setting and the device's order");
	b = test_config(0, DAO_POLICY_DEFAULT, 8, DAO_CONFIG_PLAN_DAO_ORDER);
	TAP_IS_STATUS(dao_open(&b, &second), DAO_OK, "a second asking for dao's order: OK");
	b = test_config(0, DAO_POLICY_DEFAULT, 8, 0);
	TAP_IS_STATUS(dao_open(&b, &third), DAO_OK, "a second leaving it unset: OK");
	TAP_IS_U64(device_flags(third) & DAO_CONFIG_PLAN_ORDER, DAO_CONFIG_PLAN_DAO_ORDER,
		   "and its device's flags say dao's order");
	TEST_TRY(dao_close(third, NULL));
	TEST_TRY(dao_close(second, NULL));
	TEST_TRY(dao_close(first, NULL));

	/* Eager plan prefetches: given to a context that does not ask,
	 * never taken from one that does. */
	a = test_config(2 * MiB, DAO_POLICY_PLAN, 8, DAO_CONFIG_PLAN_EAGER);
	st = open_logged(a, DAO_LOG_INFO, &first, said, sizeof(said));
	TAP_IS_STATUS(st, DAO_OK, "a shared context with eager plan prefetches");
	tap_ok(strstr(said, "policy plan, lookahead 8, plan prefetches eager") != NULL,
	       "the log says its prefetches are eager");
	b = test_config(0, DAO_POLICY_DEFAULT, 8, 0);
	TAP_IS_STATUS(dao_open(&b, &second), DAO_OK, "a second leaving it unset: OK");
	TAP_IS_U64(device_flags(second) & DAO_CONFIG_PLAN_EAGER, DAO_CONFIG_PLAN_EAGER,
		   "and its device's flags say eager");
	TEST_TRY(dao_close(second, NULL));
	TEST_TRY(dao_close(first, NULL));
	a = test_config(2 * MiB, DAO_POLICY_PLAN, 8, 0);
	TAP_IS_STATUS(dao_open(&a, &first), DAO_OK, "a device whose plan prefetches wait");
	b = test_config(0, DAO_POLICY_DEFAULT, 8, DAO_CONFIG_PLAN_EAGER);
	st = open_logged(b, DAO_LOG_ERROR, &second, said, sizeof(said));
	TAP_IS_STATUS(st, DAO_ERR_CONFLICT, "a second asking for eager prefetches: CONFLICT");
	tap_ok(strstr(said, "with another plan prefetch") != NULL, "the log names the setting");
	TEST_TRY(dao_close(first, NULL));
}

static void test_trace(void)
{
	char path[] = "/tmp/dao-test-trace-XXXXXX";
	int fd = mkstemp(path);
	dao_config cfg = test_config(MiB, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
	dao_ctx ctx;
	dao_buf b;
	dao_operand op;
	char text[4096];
	size_t n;
	FILE *f;

	if (fd < 0)
		tap_bail("mkstemp");
	close(fd);
	setenv("DAO_TRACE", path, 1);
	TEST_TRY(dao_open(&cfg, &ctx));
	b = test_buffer(ctx, 100);
	TEST_TRY(dao_write(ctx, b, 0, (unsigned char[100]){ 0 }, 100));
	op = (dao_operand){ b, DAO_R };
	TEST_TRY(dao_launch_named(ctx, "traced_kernel", 42, NULL, NULL, &op, 1));
	TEST_TRY(dao_release(ctx, b));
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "a context with DAO_TRACE set closes");
	test_clear_env();
	f = fopen(path, "r");
	n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	text[n] = '\0';
	if (f)
		fclose(f);
	unlink(path);
	tap_ok(!strncmp(text, "dao-trace 1\n", 12), "the trace starts with its header");
	tap_ok(strstr(text, "\nb ") && strstr(text, " 100"), "it declares the 100-byte buffer");
	tap_ok(strstr(text, "\nk traced_kernel 42 r=") != NULL, "it records the named kernel");
	tap_ok(strstr(text, "\nf ") != NULL, "and the release");
}

int main(void)
{
	test_clear_env();
	test_parse_size();
	test_config_init();
	test_struct_errors();
	test_env_errors();
	test_env_values();
	test_defaults();
	test_backends();
	test_conflicts();
	test_trace();
	tap_plan_done();
	return tap_exit();
}
