/* SPDX-License-Identifier: MIT */
/*
 * test_gpu_budget.c - device residency never exceeds the budget, on both
 * CUDA backends, with a job of four times the budget, as the driver sees
 * it, not only as libdao counts it.
 *
 * The bounds are derived, not tuned. Each backend first runs the job once:
 * that maps the pinned staging into the device's address space (the
 * driver's page tables are device memory: 2 MiB more for 1 GiB pinned, on
 * the H100) and loads what the runtime loads lazily. The memory in use
 * after it is the baseline; the job then runs again under a thread that
 * samples cudaMemGetInfo all through it.
 *  - cuda-explicit allocates its pool at open and nothing after, so use
 *    never rises above the baseline.
 *  - cuda-managed: cudaMemGetInfo cannot show managed residency (the
 *    driver keeps the device pages that managed data leaves, for reuse,
 *    and returns them only when an allocation needs them; gpu_um.h). What
 *    the driver reports through CUPTI can: every migration must be one
 *    libdao's prefetches asked for, and no GPU page fault may occur, so the
 *    device holds exactly what libdao made resident, which its own peak
 *    keeps within the budget. Against the CUDA runtime model, the model's
 *    own account of the card is checked instead.
 * Buffers are whole 2 MiB blocks, the unit in which the driver places
 * managed memory, so no rounding hides in the bounds.
 *
 * Safety: 256 MiB budget, 1 GiB of buffers, far below any lent card.
 * Environment: DAO_TEST_GPU_BUF_MIB (default 32, even).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "cupti_um.h"
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

/* CUPTI's collection (tools/gpubench/cupti_um.h), started once the
 * device's context exists (main), or a preloaded collector's. */
static bool um_on;
static const char *um_why;
static char um_why_buf[512];

/* On a real device, cuda-managed: the driver moved only what libdao asked
 * for (see the top of this file); stats: libdao's counts over the same
 * run. What CUPTI calls the program's ("user") migrations are libdao's
 * prefetches; any other cause is residency libdao did not decide, unless
 * it is how the driver reports libdao's discards (the experiments of
 * tools/gpubench/um-experiments.sh tell which). */
static void check_driver_migrations(const dao_stats *stats, const struct cupti_um_counts *a,
				    const struct cupti_um_counts *b)
{
	enum { USER = 1 };
	struct cupti_um_counts d;
	uint64_t other = 0, other_bytes = 0, remote = 0;

	if (!a) {
		tap_ok(1, "cuda-managed: the driver migrated only what libdao prefetched # SKIP %s",
		       um_why);
		return;
	}
	cupti_um_diff(a, b, &d);
	for (int dir = 0; dir < CUPTI_UM_DIRS; dir++) {
		other += cupti_um_sum(d.migrations, dir, USER);
		other_bytes += cupti_um_sum(d.migration_bytes, dir, USER);
		for (int cause = 0; cause < CUPTI_UM_CAUSES; cause++)
			if (cause != USER && d.migration_bytes[dir][cause])
				tap_diag("cuda-managed, CUPTI: %llu bytes %s of cause %s, not a "
					 "prefetch of libdao's",
					 (unsigned long long)d.migration_bytes[dir][cause],
					 dir ? "out" : "in", cupti_um_migration_causes[cause]);
	}
	for (int cause = 0; cause < CUPTI_UM_CAUSES; cause++)
		remote += d.remote_maps[cause];
	tap_diag("cuda-managed, CUPTI: %llu bytes in and %llu out at libdao's request (libdao: "
		 "%llu in, %llu out); %llu CPU faults, %llu remote mappings",
		 (unsigned long long)d.migration_bytes[CUPTI_UM_HTOD][USER],
		 (unsigned long long)d.migration_bytes[CUPTI_UM_DTOH][USER],
		 (unsigned long long)stats->h2d_bytes, (unsigned long long)stats->d2h_bytes,
		 (unsigned long long)d.cpu_faults, (unsigned long long)remote);
	TAP_IS_U64(d.dropped, 0, "cuda-managed: CUPTI kept every record");
	/* Known defect, seen on the H100 (Documentation/cuda.md, "On a real
	 * GPU"): the driver migrates some managed pages on its own. */
	tap_todo = "the driver migrates on its own on a real GPU (Documentation/cuda.md)";
	tap_ok(!other && !d.gpu_faults,
	       "cuda-managed: the driver migrated only what libdao prefetched (%llu other "
	       "migrations of %llu bytes, %llu GPU faults)",
	       (unsigned long long)other, (unsigned long long)other_bytes,
	       (unsigned long long)d.gpu_faults);
	tap_todo = NULL;
	tap_ok(d.migration_bytes[CUPTI_UM_HTOD][USER] > 0,
	       "cuda-managed: CUPTI saw libdao's prefetches to the device");
}

static void check_backend(dao_backend_kind kind, const struct program *p,
			  const struct prog_result *want)
{
	struct cupti_um_counts um_before = { 0 }, um_after = { 0 };
	dao_config cfg = gpu_config(kind, BUDGET, DAO_POLICY_DAO, DAO_CONFIG_PRIVATE);
	struct sampler s = { 0 };
	struct prog_result got;
	uint64_t base;
	dao_stats stats, first;
	struct dao_cudamodel_counters before, after;
	bool model;
	dao_ctx ctx;
	int bad;
	dao_status st;

	prog_result_alloc(p, &got);
	TEST_TRY(dao_open(&cfg, &ctx));
	st = prog_run(p, ctx, &gpu_exec, got.out, got.reads, got.tmp);
	TAP_IS_STATUS(st, DAO_OK, "a first run of the job, for the baseline");
	TEST_TRY(dao_sync(ctx));
	TEST_TRY(dao_stats_get(ctx, &first));
	base = gpu_used_bytes();
	gpu_model_reset_peaks();
	model = gpu_model_counters(&before);
	if (um_on)
		cupti_um_snapshot(&um_before);

	if (pthread_create(&s.thread, NULL, sample_main, &s))
		tap_bail("pthread_create failed");
	st = prog_run(p, ctx, &gpu_exec, got.out, got.reads, got.tmp);
	atomic_store(&s.stop, true);
	pthread_join(s.thread, NULL);
	if (um_on)
		cupti_um_snapshot(&um_after);
	TEST_TRY(dao_stats_get(ctx, &stats));
	TEST_TRY(dao_close(ctx, NULL));
	/* The second run's own traffic. */
	stats.h2d_bytes -= first.h2d_bytes;
	stats.d2h_bytes -= first.d2h_bytes;
	stats.evictions -= first.evictions;

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
	else if (!model)
		check_driver_migrations(&stats, um_on ? &um_before : NULL, &um_after);
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
	/* The model keeps its own counters; CUPTI is for a real device. The
	 * context must exist before CUPTI's records can be enabled. */
	if (!gpu_model_counters(&(struct dao_cudamodel_counters){ 0 }) &&
	    cudaFree(NULL) == cudaSuccess)
		um_on = cupti_um_attach(&um_why, um_why_buf, sizeof(um_why_buf));
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
