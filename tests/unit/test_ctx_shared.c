/* SPDX-License-Identifier: MIT */
/*
 * test_ctx_shared.c - contexts that share the process-wide device: two opened
 * with the identical configuration never conflict, whatever the budget's
 * rounding (explicit bytes, percentages, the environment); a second context
 * that asks for a device setting the device does not have (determinism,
 * lookahead, host budget, trace file) is refused with DAO_ERR_CONFLICT and
 * changes nothing.
 */
#include "common.h"

#define MiB (1024ull * 1024)

/* Open two shared contexts with cfg; both must open, see one device, and
 * close. */
static void same_twice(const dao_config *cfg, const char *what)
{
	dao_ctx a, b = { 4242 };
	dao_info ia, ib;
	dao_status st;

	st = dao_open(cfg, &a);
	if (!tap_ok(st == DAO_OK, "%s: the first shared context opens", what)) {
		tap_diag("  got %s", dao_strerror(st));
		return;
	}
	st = dao_open(cfg, &b);
	if (!tap_ok(st == DAO_OK, "%s: a second with the identical config opens", what)) {
		tap_diag("  got %s", dao_strerror(st));
		TEST_TRY(dao_close(a, NULL));
		return;
	}
	TEST_TRY(dao_info_get(a, &ia));
	TEST_TRY(dao_info_get(b, &ib));
	tap_ok(ia.device_budget == ib.device_budget && ia.device_budget % 256 == 0,
	       "%s: one device budget, %" PRIu64 " bytes", what, ia.device_budget);
	TEST_TRY(dao_close(b, NULL));
	TEST_TRY(dao_close(a, NULL));
}

static void test_same_budget(void)
{
	static const uint64_t bytes[] = { 1000, 4097, 300000, 256 * 1000 + 1, 4 * MiB };
	static const uint32_t percents[] = { 1, 3, 7, 30, 33 };
	char what[96];

	for (size_t i = 0; i < TEST_ARRAY_SIZE(bytes); i++) {
		dao_config cfg = test_config(bytes[i], DAO_POLICY_DAO, 8, 0);

		snprintf(what, sizeof(what), "budget %" PRIu64 " bytes", bytes[i]);
		same_twice(&cfg, what);
	}
	for (size_t i = 0; i < TEST_ARRAY_SIZE(percents); i++) {
		dao_config cfg = test_config(0, DAO_POLICY_DAO, 8, 0);

		cfg.device_budget_percent = percents[i];
		snprintf(what, sizeof(what), "budget %u%% in the config", percents[i]);
		same_twice(&cfg, what);
	}
	{
		dao_config cfg = test_config(0, DAO_POLICY_DAO, 8, 0);

		setenv("DAO_DEVICE_BUDGET", "1000", 1);
		same_twice(&cfg, "DAO_DEVICE_BUDGET=1000");
		setenv("DAO_DEVICE_BUDGET", "30%", 1);
		same_twice(&cfg, "DAO_DEVICE_BUDGET=30%");
		unsetenv("DAO_DEVICE_BUDGET");
	}
	{
		/* One context gives the bytes, the other the percentage that
		 * resolves to them: the same budget. */
		dao_config pct = test_config(0, DAO_POLICY_DAO, 8, 0), bytes_cfg;
		dao_ctx a, b;
		dao_info ia;

		pct.device_budget_percent = 30;
		TEST_TRY(dao_open(&pct, &a));
		TEST_TRY(dao_info_get(a, &ia));
		bytes_cfg = test_config(ia.device_budget, DAO_POLICY_DAO, 8, 0);
		TAP_IS_STATUS(dao_open(&bytes_cfg, &b), DAO_OK,
			      "30% then the bytes it resolved to: the same budget");
		dao_close(b, NULL);
		bytes_cfg = test_config(ia.device_budget + 256, DAO_POLICY_DAO, 8, 0);
		TAP_IS_STATUS(dao_open(&bytes_cfg, &b), DAO_ERR_CONFLICT,
			      "30% then 256 bytes more: CONFLICT");
		TEST_TRY(dao_close(a, NULL));
	}
}

/* Device settings other than budget and policy. */
static void test_other_settings(void)
{
	dao_config base = test_config(4 * MiB, DAO_POLICY_DAO, 8, 0), cfg;
	dao_ctx a, b = { 4242 };
	dao_info info;
	char path[] = "/tmp/dao-test-shared-XXXXXX";
	int fd;

	TEST_TRY(dao_open(&base, &a));

	cfg = base;
	cfg.flags |= DAO_CONFIG_DETERMINISTIC;
	TAP_IS_STATUS(dao_open(&cfg, &b), DAO_ERR_CONFLICT,
		      "determinism asked of a device that is not deterministic: CONFLICT");
	TAP_IS_U64(b.id, 4242, "and *out is untouched");
	if (b.id != 4242) {
		dao_info_get(b, &info);
		tap_diag("  it got flags %#x", info.flags);
		dao_close(b, NULL);
		b.id = 4242;
	}

	cfg = base;
	cfg.lookahead = 64;
	TAP_IS_STATUS(dao_open(&cfg, &b), DAO_ERR_CONFLICT,
		      "another explicit lookahead: CONFLICT");
	if (b.id != 4242) {
		dao_close(b, NULL);
		b.id = 4242;
	}
	cfg = base;
	cfg.lookahead = 0;
	setenv("DAO_LOOKAHEAD", "16", 1);
	TAP_IS_STATUS(dao_open(&cfg, &b), DAO_ERR_CONFLICT,
		      "another lookahead from DAO_LOOKAHEAD: CONFLICT");
	unsetenv("DAO_LOOKAHEAD");
	if (b.id != 4242) {
		dao_close(b, NULL);
		b.id = 4242;
	}

	cfg = base;
	cfg.host_budget = 64 * MiB;
	TAP_IS_STATUS(dao_open(&cfg, &b), DAO_ERR_CONFLICT,
		      "another explicit host budget: CONFLICT");
	if (b.id != 4242) {
		dao_close(b, NULL);
		b.id = 4242;
	}

	fd = mkstemp(path);
	if (fd < 0)
		tap_bail("mkstemp failed");
	close(fd);
	cfg = base;
	cfg.trace_path = path;
	TAP_IS_STATUS(dao_open(&cfg, &b), DAO_ERR_CONFLICT,
		      "a trace file the device does not write: CONFLICT");
	if (b.id != 4242) {
		dao_close(b, NULL);
		b.id = 4242;
	}
	unlink(path);

	/* What a second context leaves unset it takes from the device. */
	cfg = base;
	cfg.lookahead = 0;
	TAP_IS_STATUS(dao_open(&cfg, &b), DAO_OK, "lookahead left unset: OK");
	TEST_TRY(dao_info_get(b, &info));
	TAP_IS_U64(info.lookahead, 8, "and it runs with the device's lookahead");
	TEST_TRY(dao_close(b, NULL));
	TEST_TRY(dao_close(a, NULL));

	/* A deterministic device serves a context that did not ask for it:
	 * determinism only takes overlap away, never correctness. */
	cfg = base;
	cfg.flags |= DAO_CONFIG_DETERMINISTIC;
	TEST_TRY(dao_open(&cfg, &a));
	TAP_IS_STATUS(dao_open(&base, &b), DAO_OK,
		      "no determinism asked of a deterministic device: OK");
	TEST_TRY(dao_info_get(b, &info));
	tap_ok(info.flags & DAO_CONFIG_DETERMINISTIC, "and info says it is deterministic");
	TEST_TRY(dao_close(b, NULL));
	TAP_IS_STATUS(dao_open(&cfg, &b), DAO_OK, "determinism asked of a deterministic one: OK");
	TEST_TRY(dao_close(b, NULL));
	TEST_TRY(dao_close(a, NULL));
}

int main(void)
{
	test_clear_env();
	test_same_budget();
	test_other_settings();
	tap_plan_done();
	return tap_exit();
}
