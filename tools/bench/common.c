/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "bench.h"

int bench_fail(const char *what, dao_status st)
{
	fprintf(stderr, "dao-bench: %s: %s\n", what, dao_strerror(st));
	return 1;
}

dao_status bench_open(uint64_t budget, dao_policy policy, dao_ctx *ctx)
{
	dao_config cfg;

	dao_config_init(&cfg);
	/* Our own device: what we measure is not shared with anyone. */
	cfg.flags = DAO_CONFIG_PRIVATE;
	cfg.backend = DAO_BACKEND_HOST;
	cfg.device_budget = budget;
	cfg.policy = policy;
	cfg.job_name = "dao-bench";
	return dao_open(&cfg, ctx);
}
