/* SPDX-License-Identifier: MIT */
/*
 * test_api_ctx.c - context lifetime: dao_open and dao_close arguments, leak
 * counts, info and statistics queries, and every call on a context that is
 * closed, null or was never issued.
 */
#include "common.h"

static int kernel_calls;

static int count_kernel(const dao_kernel_args *a)
{
	(void)a;
	kernel_calls++;
	return 0;
}

static void test_open_arguments(void)
{
	dao_config cfg = test_config(1 << 20, DAO_POLICY_BELADY, 8, DAO_CONFIG_PRIVATE);

	TAP_IS_STATUS(dao_open(NULL, NULL), DAO_ERR_NULL, "dao_open(NULL, NULL): NULL");
	TAP_IS_STATUS(dao_open(&cfg, NULL), DAO_ERR_NULL, "dao_open(cfg, NULL): NULL");
}

static void test_info(void)
{
	dao_ctx ctx = test_open(1 << 20, DAO_POLICY_BELADY, 8, 0);
	dao_info info, before;
	dao_stats stats;

	TAP_IS_STATUS(dao_info_get(ctx, NULL), DAO_ERR_NULL, "dao_info_get(ctx, NULL): NULL");
	TAP_IS_STATUS(dao_stats_get(ctx, NULL), DAO_ERR_NULL, "dao_stats_get(ctx, NULL): NULL");
	TAP_IS_STATUS(dao_info_get(ctx, &info), DAO_OK, "dao_info_get");
	TAP_IS_U64(info.backend, DAO_BACKEND_HOST, "info.backend is the host backend asked for");
	TAP_IS_U64(info.policy, DAO_POLICY_BELADY, "info.policy as configured");
	TAP_IS_U64(info.lookahead, 8, "info.lookahead as configured");
	tap_ok(info.flags & DAO_CONFIG_PRIVATE, "info.flags keeps DAO_CONFIG_PRIVATE");
	TAP_IS_U64(info.device_budget, 1 << 20, "info.device_budget as configured");
	tap_ok(info.backend_name && !strcmp(info.backend_name, dao_backend_name(DAO_BACKEND_HOST)),
	       "info.backend_name is dao_backend_name(host)");
	tap_ok(info.policy_name && !strcmp(info.policy_name, dao_policy_name(DAO_POLICY_BELADY)),
	       "info.policy_name is dao_policy_name(belady)");
	tap_ok(info.device_memory >= info.device_budget, "device memory %" PRIu64 " >= budget",
	       info.device_memory);

	TAP_IS_STATUS(dao_stats_get(ctx, &stats), DAO_OK, "dao_stats_get");
	TAP_IS_U64(stats.budget_bytes, 1 << 20, "stats.budget_bytes is the device budget");
	TAP_IS_U64(stats.host_budget_bytes, info.host_budget, "stats and info agree on host budget");
	TAP_IS_U64(stats.live_buffers, 0, "a new context has no buffers");
	TAP_IS_U64(stats.device_bytes + stats.h2d_bytes + stats.d2h_bytes + stats.kernels, 0,
		   "a new context moved and ran nothing");

	/* A failed query leaves the caller's struct alone. */
	memset(&before, 0xa5, sizeof(before));
	info = before;
	TAP_IS_STATUS(dao_info_get(DAO_CTX_NULL, &info), DAO_ERR_CLOSED,
		      "dao_info_get(DAO_CTX_NULL): CLOSED");
	tap_ok(!memcmp(&info, &before, sizeof(info)), "failed dao_info_get wrote nothing");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "dao_close with leaked NULL");
}

static void test_leak_count(void)
{
	dao_ctx ctx = test_open(1 << 20, DAO_POLICY_DAO, 4, 0);
	dao_buf a = test_buffer(ctx, 100), b = test_buffer(ctx, 0), c = test_buffer(ctx, 4096);
	dao_buf v1, v2;
	uint64_t leaked = 12345;

	TEST_TRY(dao_view_create(ctx, a, 10, 20, &v1));
	TEST_TRY(dao_view_create(ctx, v1, 5, 5, &v2));
	TEST_TRY(dao_release(ctx, b));
	TEST_TRY(dao_retain(ctx, c));
	TEST_TRY(dao_release(ctx, c));
	/* a, c, v1, v2 are still held: four handles. */
	TAP_IS_STATUS(dao_close(ctx, &leaked), DAO_OK, "dao_close with unreleased handles");
	TAP_IS_U64(leaked, 4, "dao_close counts unreleased buffers and views");

	ctx = test_open(1 << 20, DAO_POLICY_DAO, 4, 0);
	a = test_buffer(ctx, 100);
	TEST_TRY(dao_release(ctx, a));
	leaked = 12345;
	TAP_IS_STATUS(dao_close(ctx, &leaked), DAO_OK, "dao_close after releasing everything");
	TAP_IS_U64(leaked, 0, "nothing leaked");

	ctx = test_open(1 << 20, DAO_POLICY_DAO, 4, 0);
	a = test_buffer(ctx, 100);
	TEST_TRY(dao_retain(ctx, a));
	leaked = 12345;
	TAP_IS_STATUS(dao_close(ctx, &leaked), DAO_OK, "dao_close with a retained handle");
	TAP_IS_U64(leaked, 1, "a handle retained twice is one leaked handle");
}

/* Every call that takes a context, on a context that cannot be used. */
static void check_dead_ctx(dao_ctx dead, dao_ctx live, dao_buf live_buf, const char *what)
{
	dao_operand op = { live_buf, DAO_R };
	dao_buf out = { 777 };
	uint64_t size = 777, leaked = 777;
	dao_stats stats;
	dao_info info;
	char byte = 0;
	char name[128];
	int before = kernel_calls;
	dao_status st;
	int bad = 0;

#define DEAD(call)                                                                        \
	do {                                                                              \
		st = (call);                                                              \
		if (st != DAO_ERR_CLOSED) {                                               \
			bad++;                                                            \
			tap_diag("  %s: %s returned %s", what, #call, dao_strerror(st)); \
		}                                                                         \
	} while (0)

	DEAD(dao_buffer_create(dead, 16, &out));
	DEAD(dao_view_create(dead, live_buf, 0, 1, &out));
	DEAD(dao_retain(dead, live_buf));
	DEAD(dao_release(dead, live_buf));
	DEAD(dao_set_label(dead, live_buf, "x"));
	DEAD(dao_buffer_size(dead, live_buf, &size));
	DEAD(dao_launch(dead, count_kernel, NULL, &op, 1));
	DEAD(dao_launch_named(dead, "k", 1, count_kernel, NULL, &op, 1));
	DEAD(dao_write(dead, live_buf, 0, &byte, 1));
	DEAD(dao_read(dead, live_buf, 0, &byte, 1));
	DEAD(dao_sync(dead));
	DEAD(dao_iteration(dead));
	DEAD(dao_stats_get(dead, &stats));
	DEAD(dao_info_get(dead, &info));
	DEAD(dao_close(dead, &leaked));
#undef DEAD
	snprintf(name, sizeof(name), "every call on a %s context returns CLOSED", what);
	tap_ok(bad == 0, "%s", name);
	tap_ok(out.id == 777 && size == 777 && leaked == 777,
	       "calls on a %s context write no output", what);
	TEST_TRY(dao_sync(live));
	tap_ok(kernel_calls == before, "no kernel ran for a %s context", what);
	TAP_IS_STATUS(dao_buffer_size(live, live_buf, &size), DAO_OK,
		      "the live context's buffer survived");
	TAP_IS_U64(size, 64, "and kept its size");
}

static void test_dead_contexts(void)
{
	dao_ctx live = test_open(1 << 20, DAO_POLICY_DAO, 4, 0);
	dao_buf buf = test_buffer(live, 64);
	dao_ctx closed = test_open(1 << 20, DAO_POLICY_DAO, 4, 0);
	dao_ctx reopened;

	TAP_IS_STATUS(dao_close(closed, NULL), DAO_OK, "close a context");
	check_dead_ctx(closed, live, buf, "closed");
	check_dead_ctx(DAO_CTX_NULL, live, buf, "DAO_CTX_NULL");
	check_dead_ctx((dao_ctx){ UINT64_MAX }, live, buf, "never issued (all ones)");
	check_dead_ctx((dao_ctx){ live.id ^ (1ull << 62) }, live, buf, "never issued (flipped bit)");

	/* A new context may reuse the closed one's slot; the old id stays dead. */
	reopened = test_open(1 << 20, DAO_POLICY_DAO, 4, 0);
	tap_ok(reopened.id != closed.id, "a reopened context gets a new id");
	check_dead_ctx(closed, reopened, test_buffer(reopened, 64), "closed then slot reused");
	TAP_IS_STATUS(dao_close(reopened, NULL), DAO_OK, "close the reopened context");
	TAP_IS_STATUS(dao_close(live, NULL), DAO_OK, "close the live context");
}

static void test_sync_iteration(void)
{
	dao_ctx ctx = test_open(1 << 20, DAO_POLICY_DAO, 4, 0);

	TAP_IS_STATUS(dao_sync(ctx), DAO_OK, "dao_sync on an idle context");
	TAP_IS_STATUS(dao_iteration(ctx), DAO_OK, "dao_iteration on an idle context");
	TAP_IS_STATUS(dao_iteration(ctx), DAO_OK, "an empty iteration");
	TAP_IS_STATUS(dao_close(ctx, NULL), DAO_OK, "close");
}

/* Opening and closing many contexts leaks nothing (ASan checks memory). */
static void test_many_contexts(void)
{
	dao_ctx ctx[16];
	int bad = 0;

	for (int round = 0; round < 8; round++) {
		for (int i = 0; i < 16; i++) {
			ctx[i] = test_open((uint64_t)(i + 1) << 12, DAO_POLICY_LRU, 2, 0);
			(void)test_buffer(ctx[i], (uint64_t)i * 100);
		}
		for (int i = 0; i < 16; i++) {
			uint64_t leaked = 0;

			if (dao_close(ctx[i], &leaked) != DAO_OK || leaked != 1)
				bad++;
		}
	}
	tap_ok(bad == 0, "128 private contexts opened and closed with one leak each");
}

static void test_strings(void)
{
	const char *seen[DAO_STATUS_LAST + 1];
	int bad = 0;

	for (int s = DAO_OK; s <= DAO_STATUS_LAST; s++) {
		seen[s] = dao_strerror((dao_status)s);
		if (!seen[s] || !*seen[s])
			bad++;
		for (int t = 0; t < s && seen[s]; t++)
			if (seen[t] && !strcmp(seen[s], seen[t]))
				bad++;
	}
	tap_ok(bad == 0, "dao_strerror: distinct non-empty text for every status");
	tap_ok(dao_strerror((dao_status)999) != NULL, "dao_strerror of an unknown status is not NULL");
}

int main(void)
{
	test_clear_env();
	test_open_arguments();
	test_info();
	test_leak_count();
	test_dead_contexts();
	test_sync_iteration();
	test_many_contexts();
	test_strings();
	tap_plan_done();
	return tap_exit();
}
