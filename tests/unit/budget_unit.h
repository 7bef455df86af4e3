/* SPDX-License-Identifier: MIT */
/*
 * budget_unit.h - the device budget against a backend's allocation unit
 * (dao.h), the same checks on every backend: test_budget_unit (host) and
 * tests/gpu/test_gpu_units (the CUDA backends, against the model or a GPU).
 *
 * A budget below one unit is refused by dao_open (DAO_ERR_CONFIG, a log
 * line naming the backend and the unit), given in the config or in
 * DAO_DEVICE_BUDGET; one unit is accepted; a budget is rounded down to
 * whole units; a buffer costs its size rounded up to whole units, so a
 * create or a kernel succeeds under a budget that holds exactly that and is
 * refused (DAO_ERR_BUDGET) one unit short.
 */
#ifndef DAO_TEST_BUDGET_UNIT_H
#define DAO_TEST_BUDGET_UNIT_H

#include "common.h"

static inline dao_status unit_open(dao_backend_kind kind, uint64_t budget, dao_log_level level,
				   dao_ctx *ctx)
{
	dao_config cfg = test_config(budget, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);

	cfg.backend = kind;
	cfg.log_level = level;
	return dao_open(&cfg, ctx);
}

static inline uint64_t unit_round(uint64_t bytes, uint64_t unit)
{
	return (bytes + unit - 1) / unit * unit;
}

/* dao_open with a budget below a unit, given as bytes or (bytes 0) in
 * DAO_DEVICE_BUDGET: DAO_ERR_CONFIG, and the log names the unit. */
static inline void unit_refused(dao_backend_kind kind, uint64_t unit, uint64_t bytes,
				const char *env)
{
	char log[1024], want[128];
	struct test_capture cap;
	dao_ctx ctx;
	dao_status st;

	if (env)
		setenv("DAO_DEVICE_BUDGET", env, 1);
	test_capture_start(&cap);
	st = unit_open(kind, bytes, DAO_LOG_ERROR, &ctx);
	test_capture_stop(&cap, log, sizeof(log));
	unsetenv("DAO_DEVICE_BUDGET");
	if (st == DAO_OK)
		dao_close(ctx, NULL);
	snprintf(want, sizeof(want), "backend %s: a device budget of %llu bytes is below its "
		 "allocation unit of %llu bytes", dao_backend_name(kind),
		 (unsigned long long)(env ? strtoull(env, NULL, 10) : bytes),
		 (unsigned long long)unit);
	if (!tap_ok(st == DAO_ERR_CONFIG && strstr(log, want),
		    "%s: a budget of %llu bytes%s is refused by dao_open, naming the unit",
		    dao_backend_name(kind),
		    (unsigned long long)(env ? strtoull(env, NULL, 10) : bytes),
		    env ? " (DAO_DEVICE_BUDGET)" : ""))
		tap_diag("  %s; logged: %s", dao_strerror(st), log);
}

/* A second context asking the process's shared device for a budget below
 * a unit: refused as the first would be, not a conflict. */
static inline void unit_refused_shared(dao_backend_kind kind, uint64_t unit)
{
	dao_config cfg = test_config(4 * unit, DAO_POLICY_DAO, 8, 0);
	dao_ctx first, second;
	dao_status st;

	cfg.backend = kind;
	if (dao_open(&cfg, &first) != DAO_OK)
		tap_bail("cannot open a shared %s context", dao_backend_name(kind));
	cfg.device_budget = unit - 1;
	st = dao_open(&cfg, &second);
	if (st == DAO_OK)
		dao_close(second, NULL);
	dao_close(first, NULL);
	TAP_IS_STATUS(st, DAO_ERR_CONFIG, "joining the shared device with a budget below a unit");
}

/* Opens under budget and creates a and b: DAO_OK with ctx open, or what
 * failed first with nothing open. */
static inline dao_status unit_pair(dao_backend_kind kind, uint64_t budget, uint64_t a_bytes,
				   uint64_t b_bytes, dao_ctx *ctx, dao_buf *a, dao_buf *b)
{
	dao_status st = unit_open(kind, budget, test_log_level(), ctx);

	if (st != DAO_OK)
		return st;
	st = dao_buffer_create(*ctx, a_bytes, a);
	if (st == DAO_OK)
		st = dao_buffer_create(*ctx, b_bytes, b);
	if (st != DAO_OK)
		dao_close(*ctx, NULL);
	return st;
}

/* A kernel of a and b (rw) under budget: the launch's status, then what
 * dao_sync says (DAO_OK when it ran). */
static inline dao_status unit_kernel(dao_backend_kind kind, uint64_t budget, uint64_t a_bytes,
				     uint64_t b_bytes, dao_status *synced)
{
	dao_ctx ctx;
	dao_buf a, b;
	dao_status st = unit_pair(kind, budget, a_bytes, b_bytes, &ctx, &a, &b);

	*synced = st;
	if (st == DAO_OK) {
		dao_operand ops[] = { { a, DAO_RW }, { b, DAO_RW } };

		st = dao_launch(ctx, NULL, NULL, ops, 2);
		*synced = dao_sync(ctx);
		dao_close(ctx, NULL);
	}
	return st;
}

/* The checks at small sizes: refusal, one unit, rounding, the boundary of
 * a create and of a kernel. */
static inline void budget_unit_checks(dao_backend_kind kind, uint64_t unit)
{
	const char *name = dao_backend_name(kind);
	/* 15,621 bytes under 64 KiB units, a quarter of a unit elsewhere. */
	uint64_t small = unit * 15621 / 65536;
	char env[32];
	dao_status st, synced;
	dao_info info = { 0 };
	dao_ctx ctx;
	dao_buf a, b;

	unit_refused(kind, unit, unit - 1, NULL);
	unit_refused(kind, unit, 1, NULL);
	snprintf(env, sizeof(env), "%llu", (unsigned long long)(unit - 1));
	unit_refused(kind, unit, 0, env);
	if (kind == DAO_BACKEND_CUDA_MANAGED)
		unit_refused(kind, unit, 58112, NULL); /* as reported */
	unit_refused_shared(kind, unit);

	st = unit_pair(kind, unit, small, unit, &ctx, &a, &b);
	if (st == DAO_OK) {
		uint8_t in[65536], out[65536];
		dao_operand op = { a, DAO_RW };

		test_fill(in, small, 3);
		st = dao_write(ctx, a, 0, in, small);
		if (st == DAO_OK)
			st = dao_launch(ctx, NULL, NULL, &op, 1);
		if (st == DAO_OK)
			st = dao_read(ctx, a, 0, out, small);
		if (st == DAO_OK && memcmp(in, out, small))
			st = DAO_ERR_FAILED;
		if (st == DAO_OK)
			st = dao_info_get(ctx, &info);
		TAP_IS_STATUS(dao_buffer_create(ctx, unit + 1, &b), DAO_ERR_BUDGET,
			      "under one unit, a buffer of a unit and a byte is refused");
		dao_close(ctx, NULL);
	}
	if (!tap_ok(st == DAO_OK && info.device_budget == unit,
		    "%s: a budget of one unit (%llu bytes) holds a buffer of %llu bytes and one "
		    "of a whole unit; a kernel on the first runs, its bytes come back",
		    name, (unsigned long long)unit, (unsigned long long)small))
		tap_diag("  %s, budget in force %llu", dao_strerror(st),
			 (unsigned long long)info.device_budget);

	st = unit_open(kind, 3 * unit + unit / 2, test_log_level(), &ctx);
	if (st == DAO_OK) {
		st = dao_info_get(ctx, &info);
		dao_close(ctx, NULL);
	}
	if (!tap_ok(st == DAO_OK && info.device_budget == 3 * unit,
		    "%s: 3.5 units of budget are 3 in force", name))
		tap_diag("  %s, %llu", dao_strerror(st), (unsigned long long)info.device_budget);

	/* A kernel of 1 + 2 units (the second buffer one byte over a unit). */
	st = unit_kernel(kind, 3 * unit, unit, unit + 1, &synced);
	if (!tap_ok(st == DAO_OK && synced == DAO_OK,
		    "%s: a kernel whose buffers cost exactly the budget (3 units) runs", name))
		tap_diag("  launch %s, sync %s", dao_strerror(st), dao_strerror(synced));
	st = unit_kernel(kind, 3 * unit - 1, unit, unit + 1, &synced);
	TAP_IS_STATUS(st, DAO_ERR_BUDGET, "the same kernel one unit short: DAO_ERR_BUDGET at launch");
}

/*
 * A buffer of 2 MiB and a byte under a budget of exactly its cost (2 MiB
 * and one unit): created, used by a kernel, and the device's peak is that
 * cost; one unit short it is refused at create.
 */
static inline void budget_unit_big(dao_backend_kind kind, uint64_t unit)
{
	const uint64_t bytes = (2u << 20) + 1, cost = unit_round(bytes, unit);
	dao_stats s = { 0 };
	dao_status st;
	dao_ctx ctx;
	dao_buf a, b;

	st = unit_pair(kind, cost, bytes, 0, &ctx, &a, &b);
	if (st == DAO_OK) {
		dao_operand op = { a, DAO_W };

		st = dao_launch(ctx, NULL, NULL, &op, 1);
		if (st == DAO_OK)
			st = dao_sync(ctx);
		if (st == DAO_OK)
			st = dao_stats_get(ctx, &s);
		dao_close(ctx, NULL);
	}
	if (!tap_ok(st == DAO_OK && s.peak_device_bytes == cost,
		    "%s: a buffer of 2 MiB + 1 byte costs %llu bytes: it is created and used "
		    "under exactly that budget",
		    dao_backend_name(kind), (unsigned long long)cost))
		tap_diag("  %s, peak %llu", dao_strerror(st), (unsigned long long)s.peak_device_bytes);
	st = unit_pair(kind, cost - unit, bytes, 0, &ctx, &a, &b);
	if (st == DAO_OK)
		dao_close(ctx, NULL);
	TAP_IS_STATUS(st, DAO_ERR_BUDGET, "one unit short, its create is DAO_ERR_BUDGET");
}

#endif /* DAO_TEST_BUDGET_UNIT_H */
