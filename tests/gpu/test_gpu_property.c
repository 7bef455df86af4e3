/* SPDX-License-Identifier: MIT */
/*
 * test_gpu_property.c - the core's property on both CUDA backends and the
 * host backend: random programs (program.h) whose device kernels move
 * bytes with cudaMemsetAsync and cudaMemcpyAsync on the launch's stream
 * (with the CPU on host) and whose host kernels (DAO_LAUNCH_HOST) move
 * them with the CPU on every backend read back exactly what a plain-memory
 * interpreter computes, so the results are bit-identical across the three
 * backends, under every budget, from what the largest device kernel needs
 * to everything, and every policy. Run by `make check-gpu` on a lent GPU
 * and against the CUDA runtime model by `make check`.
 *
 * Environment: DAO_TEST_SEED (replay), DAO_TEST_PROGRAMS (default 4).
 */
#include "gpu_common.h"

static const dao_backend_kind backends[] = { DAO_BACKEND_HOST, DAO_BACKEND_CUDA_EXPLICIT,
					     DAO_BACKEND_CUDA_MANAGED };

static void run_one(const struct program *p, const struct prog_result *want,
		    dao_backend_kind kind, dao_policy policy, uint64_t budget, const char *name)
{
	dao_config cfg = gpu_config(kind, budget, policy, DAO_CONFIG_PRIVATE);
	struct prog_result got;
	dao_stats stats = { 0 };
	struct dao_cudamodel_counters before, after;
	bool model = gpu_model_counters(&before);
	uint64_t unplanned = 0;
	dao_status st;
	dao_ctx ctx;
	int bad = -2;

	prog_result_alloc(p, &got);
	st = dao_open(&cfg, &ctx);
	if (st == DAO_OK) {
		st = prog_run(p, ctx, kind == DAO_BACKEND_HOST ? &prog_host_exec : &gpu_exec,
			      got.out, got.reads, got.tmp);
		if (dao_stats_get(ctx, &stats) != DAO_OK)
			st = st ? st : DAO_ERR_FAILED;
		if (dao_close(ctx, NULL) != DAO_OK && st == DAO_OK)
			st = DAO_ERR_FAILED;
	}
	if (st == DAO_OK)
		bad = prog_compare(p, got.out, want->out, got.reads, want->reads);
	/* Against the model: residency changed only when libdao said so. */
	if (model && gpu_model_counters(&after))
		unplanned = gpu_unplanned(&before, &after);
	if (!tap_ok(bad == -1 && stats.peak_device_bytes <= budget && !unplanned,
		    "program %s on %s, %s, budget %llu: exact results, peak within budget", name,
		    dao_backend_name(kind), dao_policy_name(policy), (unsigned long long)budget))
		tap_diag("  status %s, first wrong result %d, peak %llu, %llu unplanned page "
			 "events (model)",
			 dao_strerror(st), bad, (unsigned long long)stats.peak_device_bytes,
			 (unsigned long long)unplanned);
	else
		tap_diag("  moved %llu bytes in, %llu out, %llu evictions",
			 (unsigned long long)stats.h2d_bytes, (unsigned long long)stats.d2h_bytes,
			 (unsigned long long)stats.evictions);
	prog_result_free(p, &got);
}

/* Every backend, policy and budget, from the tightest up, against the
 * interpreter's results. */
static void check_program(const struct program *p, const char *name)
{
	static const dao_policy policies[] = { DAO_POLICY_DAO, DAO_POLICY_LRU };
	struct prog_result want;

	prog_result_alloc(p, &want);
	prog_reference(p, want.out, want.reads);
	for (size_t b = 0; b < TEST_ARRAY_SIZE(backends); b++) {
		uint64_t g = gpu_granule(backends[b]);
		uint64_t lo = p->min_budget, all = prog_round(p->total, g) + g * p->nbufs;

		/* min_budget counts 64 KiB granules: with small buffers
		 * on cuda-explicit (256-byte ones) it can exceed
		 * everything, and the middle budget would wrap. */
		if (all < lo)
			all = lo;
		uint64_t budgets[] = { lo, lo + (all - lo) / 3, all };

		for (size_t q = 0; q < TEST_ARRAY_SIZE(policies); q++)
			for (size_t k = 0; k < TEST_ARRAY_SIZE(budgets); k++)
				run_one(p, &want, backends[b], policies[q], budgets[k], name);
	}
	prog_result_free(p, &want);
}

/* Buffers up to 3 MiB: some share the driver's 2 MiB blocks, some own
 * several. */
static void generate(struct program *p, uint64_t *rng)
{
	prog_generate(p, rng, (uint32_t)test_rng_range(rng, 2, 32),
		      (uint32_t)test_rng_range(rng, 1, PROG_MAX_KERNELS), 1, 3u << 20, 64u << 10);
}

/* A program seen to fail: 22 buffers, 2 kernels whose operands take
 * 832 KiB, and buffers no kernel uses of up to 3 MiB, which no budget
 * below them can hold. */
#define REGRESSION_SEED 112662

int main(void)
{
	static struct program p;
	uint64_t programs, rng, fixed = REGRESSION_SEED;

	test_clear_env();
	gpu_require_device();
	rng = test_seed();
	programs = test_env_u64("DAO_TEST_PROGRAMS", 4);
	generate(&p, &fixed);
	check_program(&p, "regression");
	for (uint64_t i = 0; i < programs; i++) {
		char name[24];

		snprintf(name, sizeof(name), "%llu", (unsigned long long)i);
		generate(&p, &rng);
		check_program(&p, name);
	}
	tap_plan_done();
	return tap_exit();
}
