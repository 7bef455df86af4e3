/* SPDX-License-Identifier: MIT */
/*
 * test_gpu_budget.c - device residency never exceeds the budget, measured
 * by the driver (cudaMemGetInfo, sampled by a thread all through the run)
 * and by libdao's own peak, on both CUDA backends, with a job of four times
 * the budget.
 *
 * The bound is derived, not tuned: the memory in use once the context is
 * open and warm (one kernel has run, so the runtime's own allocations are
 * made) is the baseline. cuda-explicit allocates its pool at open and
 * nothing after, so use must never rise above that baseline; cuda-managed
 * may add at most the budget to it. Buffers are whole 2 MiB blocks, the
 * unit in which the driver places managed memory, so no rounding hides in
 * the bound.
 *
 * Safety: 256 MiB budget, 1 GiB of buffers, far below any lent card.
 * Environment: DAO_TEST_GPU_BUF_MIB (default 32, even).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "gpu_common.h"

/* DAO_TEST_GPU_BUF_MIB scales the job down (the CUDA runtime model moves
 * bytes with the CPU): buffers of that many MiB, the budget eight of them. */
static uint64_t buf_bytes = 32ull << 20;
#define BUF_BYTES buf_bytes
#define BUDGET (8 * buf_bytes)
#define NBUFS 32 /* four times the budget */

struct sampler {
	pthread_t thread;
	atomic_bool stop;
	uint64_t max_used;
	uint64_t samples;
};

static void *sample_main(void *arg)
{
	struct sampler *s = arg;
	struct dao_cudamodel_counters c;
	bool model = gpu_model_counters(&c);

	/* The sampler's own context must be the job's device's: device 0,
	 * the one dao_open picks for a thread that chose none. */
	while (!atomic_load(&s->stop)) {
		uint64_t u = gpu_used_bytes();

		if (u > s->max_used)
			s->max_used = u;
		s->samples++;
		/* The model counts the card's peak itself: sampling need not
		 * take a core from the job's CPU-run streams. */
		if (model)
			sched_yield();
	}
	return NULL;
}

static int warm_kernel(const dao_kernel_args *a)
{
	return cudaMemsetAsync(a->ptrs[0], 0, a->sizes[0], (cudaStream_t)a->stream) != cudaSuccess;
}

static void check_backend(dao_backend_kind kind, const struct program *p,
			  const struct prog_result *want)
{
	dao_config cfg = gpu_config(kind, BUDGET, DAO_POLICY_DAO, DAO_CONFIG_PRIVATE);
	struct sampler s = { 0 };
	struct prog_result got;
	dao_operand op;
	uint64_t base;
	dao_stats stats;
	struct dao_cudamodel_counters before, after;
	bool model;
	dao_ctx ctx;
	dao_buf w;
	int bad;
	dao_status st;

	prog_result_alloc(p, &got);
	TEST_TRY(dao_open(&cfg, &ctx));
	TEST_TRY(dao_buffer_create(ctx, BUF_BYTES, &w));
	op = (dao_operand){ w, DAO_W };
	TEST_TRY(dao_launch(ctx, warm_kernel, NULL, &op, 1));
	TEST_TRY(dao_sync(ctx));
	TEST_TRY(dao_release(ctx, w));
	TEST_TRY(dao_sync(ctx));
	base = gpu_used_bytes();
	gpu_model_reset_peaks();
	model = gpu_model_counters(&before);

	if (pthread_create(&s.thread, NULL, sample_main, &s))
		tap_bail("pthread_create failed");
	st = prog_run(p, ctx, &gpu_exec, got.out, got.reads, got.tmp);
	atomic_store(&s.stop, true);
	pthread_join(s.thread, NULL);
	TEST_TRY(dao_stats_get(ctx, &stats));
	TEST_TRY(dao_close(ctx, NULL));

	bad = st == DAO_OK ? prog_compare(p, got.out, want->out, got.reads, want->reads) : -2;
	TAP_IS_STATUS(st, DAO_OK, "the job runs");
	tap_ok(bad == -1, "%s: results exact", dao_backend_name(kind));
	tap_ok(stats.evictions > 0 && stats.h2d_bytes > p->total,
	       "%s: the job was oversubscribed (%llu evictions, %llu bytes in)",
	       dao_backend_name(kind), (unsigned long long)stats.evictions,
	       (unsigned long long)stats.h2d_bytes);
	TAP_IS_U64(stats.peak_device_bytes <= BUDGET, 1, "libdao's peak is within the budget");
	tap_diag("%s: baseline %llu, max in use %llu over %llu samples", dao_backend_name(kind),
		 (unsigned long long)base, (unsigned long long)s.max_used,
		 (unsigned long long)s.samples);
	if (kind == DAO_BACKEND_CUDA_EXPLICIT)
		tap_ok(s.max_used <= base, "cuda-explicit: nothing allocated beyond the pool");
	else
		tap_ok(s.max_used <= base + BUDGET,
		       "cuda-managed: the driver never holds more than the budget above the baseline");
	/* Against the model: its own account of the card, not a sampling. */
	if (model && gpu_model_counters(&after)) {
		tap_ok(after.device_bytes_peak <= base +
			       (kind == DAO_BACKEND_CUDA_MANAGED ? BUDGET : 0),
		       "%s: the model's card never held more than %s (peak %llu, baseline %llu)",
		       dao_backend_name(kind),
		       kind == DAO_BACKEND_CUDA_MANAGED ? "the budget above the baseline"
							: "the baseline",
		       (unsigned long long)after.device_bytes_peak, (unsigned long long)base);
		tap_ok(after.managed_device_peak <= BUDGET,
		       "%s: device-resident managed pages never above the budget (peak %llu)",
		       dao_backend_name(kind), (unsigned long long)after.managed_device_peak);
		tap_ok(gpu_unplanned(&before, &after) == 0,
		       "%s: no fault, remote access or eviction libdao did not ask for (%llu)",
		       dao_backend_name(kind), (unsigned long long)gpu_unplanned(&before, &after));
	}
	prog_result_free(p, &got);
}

int main(void)
{
	static struct program p;
	struct prog_result want;
	uint64_t rng;

	test_clear_env();
	gpu_require_device();
	rng = test_seed();
	buf_bytes = test_env_u64("DAO_TEST_GPU_BUF_MIB", 32) << 20;
	if (!buf_bytes || buf_bytes % (2u << 20))
		tap_bail("DAO_TEST_GPU_BUF_MIB: a positive even number of MiB");
	prog_generate(&p, &rng, NBUFS, 200, BUF_BYTES, BUF_BYTES, 2u << 20);
	prog_result_alloc(&p, &want);
	prog_reference(&p, want.out, want.reads);
	for (size_t b = 0; b < TEST_ARRAY_SIZE(gpu_backends); b++)
		check_backend(gpu_backends[b], &p, &want);
	prog_result_free(&p, &want);
	tap_plan_done();
	return tap_exit();
}
