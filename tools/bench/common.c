/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

int bench_empty_kernel(const dao_kernel_args *args)
{
	(void)args;
	return 0;
}

int bench_fail(const char *what, dao_status st)
{
	fprintf(stderr, "dao-bench: %s: %s\n", what, dao_strerror(st));
	return 1;
}

dao_backend_kind bench_env_backend(void)
{
	/* DAO_BACKEND when set (a batch system sets it for every task; libdao
	 * reads it and refuses a bad one), else host: the figures are libdao's
	 * own cost. */
	return getenv("DAO_BACKEND") && *getenv("DAO_BACKEND") ? DAO_BACKEND_DEFAULT
							       : DAO_BACKEND_HOST;
}

dao_status bench_open(dao_backend_kind backend, uint64_t budget, dao_policy policy,
		      dao_ctx *ctx)
{
	dao_config cfg;

	dao_config_init(&cfg);
	/* Our own device: what we measure is not shared with anyone. */
	cfg.flags = DAO_CONFIG_PRIVATE;
	cfg.backend = backend;
	cfg.device_budget = budget;
	cfg.policy = policy;
	cfg.job_name = "dao-bench";
	return dao_open(&cfg, ctx);
}

void bench_close(dao_ctx ctx, const dao_buf *bufs, uint64_t n, dao_status *st, const char **what)
{
	dao_status st2;

	for (uint64_t i = 0; i < n; i++) {
		st2 = dao_release(ctx, bufs[i]);
		if (st2 != DAO_OK && *st == DAO_OK) {
			*st = st2;
			*what = "dao_release";
		}
	}
	st2 = dao_close(ctx, NULL);
	if (st2 != DAO_OK && *st == DAO_OK) {
		*st = st2;
		*what = "dao_close";
	}
}
