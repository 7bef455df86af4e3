/* SPDX-License-Identifier: MIT */
/*
 * test_gpu_threads.c - several host threads, each with its own context on
 * the process-wide device of one CUDA backend (decision 11: one budget, one
 * table, one executor), submit their own random programs at once; each
 * reads back exactly what the plain-memory interpreter computes. The budget
 * is twice what the largest kernel of any program needs, so the threads
 * evict each other's buffers.
 */
#include <pthread.h>

#include "gpu_common.h"

#define THREADS 4

struct worker {
	pthread_t thread;
	struct program p;
	struct prog_result want, got;
	dao_config cfg;
	dao_status st;
	int bad;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	dao_ctx ctx;

	w->bad = -2;
	w->st = dao_open(&w->cfg, &ctx);
	if (w->st != DAO_OK)
		return NULL;
	w->st = prog_run(&w->p, ctx, &gpu_exec, w->got.out, w->got.reads, w->got.tmp);
	if (dao_close(ctx, NULL) != DAO_OK && w->st == DAO_OK)
		w->st = DAO_ERR_FAILED;
	if (w->st == DAO_OK)
		w->bad = prog_compare(&w->p, w->got.out, w->want.out, w->got.reads, w->want.reads);
	return NULL;
}

int main(void)
{
	static struct worker w[THREADS];
	uint64_t rng;

	test_clear_env();
	gpu_require_device();
	rng = test_seed();
	for (size_t b = 0; b < TEST_ARRAY_SIZE(gpu_backends); b++) {
		uint64_t need = 0;

		for (int t = 0; t < THREADS; t++) {
			prog_generate(&w[t].p, &rng, (uint32_t)test_rng_range(&rng, 2, 24),
				      PROG_MAX_KERNELS, 1, 2u << 20, 64u << 10);
			if (w[t].p.min_budget > need)
				need = w[t].p.min_budget;
			prog_result_alloc(&w[t].p, &w[t].want);
			prog_result_alloc(&w[t].p, &w[t].got);
			prog_reference(&w[t].p, w[t].want.out, w[t].want.reads);
		}
		for (int t = 0; t < THREADS; t++) {
			/* Shared, not private: every thread joins one device. */
			w[t].cfg = gpu_config(gpu_backends[b], 2 * need, DAO_POLICY_DAO, 0);
			if (pthread_create(&w[t].thread, NULL, worker_main, &w[t]))
				tap_bail("pthread_create failed");
		}
		for (int t = 0; t < THREADS; t++) {
			pthread_join(w[t].thread, NULL);
			if (!tap_ok(w[t].st == DAO_OK && w[t].bad == -1,
				    "%s, thread %d of %d: exact results",
				    dao_backend_name(gpu_backends[b]), t, THREADS))
				tap_diag("  status %s, first wrong result %d",
					 dao_strerror(w[t].st), w[t].bad);
			prog_result_free(&w[t].p, &w[t].want);
			prog_result_free(&w[t].p, &w[t].got);
		}
	}
	tap_plan_done();
	return tap_exit();
}
