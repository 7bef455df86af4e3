/* SPDX-License-Identifier: MIT */
/*
 * test_threads.c - libdao from several threads at once: job threads sharing
 * one context (each with buffers of its own plus one counter they all bump),
 * and threads with a context each on the process-wide shared device, all
 * under a budget small enough to evict. Every result is checked.
 */
#include <pthread.h>

#include "common.h"

#define THREADS 4
#define BUFS 6
#define SIZE 512u
#define ROUNDS 200

/* x = x * 3 + 1 on every byte of every rw operand; r operands are read. */
static int step_kernel(const dao_kernel_args *a)
{
	const dao_mode *modes = a->user;

	for (uint32_t i = 0; i < a->count; i++) {
		unsigned char *p = a->ptrs[i];

		if (modes[i] != DAO_RW)
			continue;
		for (uint64_t j = 0; j < a->sizes[i]; j++)
			p[j] = (unsigned char)(p[j] * 3u + 1u);
	}
	return 0;
}

static const dao_mode mode_rw_r[2] = { DAO_RW, DAO_R };
static const dao_mode mode_all_r[BUFS] = { DAO_R, DAO_R, DAO_R, DAO_R, DAO_R, DAO_R };

struct job {
	dao_ctx ctx; /* shared context, or 0 to open one of its own */
	dao_buf counter;
	uint64_t budget;
	/* Contexts sharing one device: all jobs meet here before any lets its
	 * buffers go (run_job), so that they share the budget whatever the
	 * scheduling. */
	pthread_barrier_t *all_ran;
	int id;
	int errors;
	int mismatches;
	uint64_t bumps;
	char what[160];
};

static void job_error(struct job *j, const char *call, dao_status st)
{
	if (j->errors++ == 0)
		snprintf(j->what, sizeof(j->what), "thread %d: %s: %s", j->id, call,
			 dao_strerror(st));
}

#define JOB_CALL(j, expr)                                 \
	do {                                              \
		dao_status st_ = (expr);                  \
		if (st_ != DAO_OK)                        \
			job_error((j), #expr, st_);       \
	} while (0)

/* One job: its buffers go through ROUNDS of kernels, with reads checked
 * along the way against the same arithmetic done here. */
static void run_job(struct job *j, dao_ctx ctx)
{
	unsigned char want[BUFS][SIZE], got[SIZE];
	dao_buf b[BUFS];
	uint64_t rng = 1000 + (uint64_t)j->id;

	for (int i = 0; i < BUFS; i++) {
		b[i] = DAO_BUF_NULL;
		JOB_CALL(j, dao_buffer_create(ctx, SIZE, &b[i]));
		test_fill(want[i], SIZE, rng + (uint64_t)i);
		JOB_CALL(j, dao_write(ctx, b[i], 0, want[i], SIZE));
	}
	for (int r = 0; r < ROUNDS; r++) {
		int x = (int)(test_rng_next(&rng) % BUFS), y = (x + 1) % BUFS;
		dao_operand ops[2] = { { b[x], DAO_RW }, { b[y], DAO_R } };

		JOB_CALL(j, dao_launch(ctx, step_kernel, (void *)mode_rw_r, ops, 2));
		for (unsigned k = 0; k < SIZE; k++)
			want[x][k] = (unsigned char)(want[x][k] * 3u + 1u);
		if (j->counter.id) {
			dao_operand c = { j->counter, DAO_RW };

			JOB_CALL(j, dao_launch(ctx, test_bump_kernel, NULL, &c, 1));
			j->bumps++;
		}
		if (r % 8 == 7) {
			int z = (int)(test_rng_next(&rng) % BUFS);

			JOB_CALL(j, dao_read(ctx, b[z], 0, got, SIZE));
			j->mismatches += memcmp(got, want[z], SIZE) != 0;
		}
		if (r % 10 == 9) {
			/* Replace a buffer: release it, make a new one. */
			JOB_CALL(j, dao_release(ctx, b[y]));
			JOB_CALL(j, dao_buffer_create(ctx, SIZE, &b[y]));
			test_fill(want[y], SIZE, test_rng_next(&rng));
			JOB_CALL(j, dao_write(ctx, b[y], 0, want[y], SIZE));
		}
	}
	if (j->all_ran) {
		/*
		 * Every job's rounds have run (the read in the last round
		 * waited for them) and none has released its last buffers:
		 * each holds at least one on the device unless evicted. The
		 * first of these kernels to run needs all of the budget for its
		 * own six, so the shared budget must evict, on any schedule.
		 */
		dao_operand all[BUFS];

		pthread_barrier_wait(j->all_ran);
		for (int i = 0; i < BUFS; i++)
			all[i] = (dao_operand){ b[i], DAO_R };
		JOB_CALL(j, dao_launch(ctx, step_kernel, (void *)mode_all_r, all, BUFS));
	}
	for (int i = 0; i < BUFS; i++) {
		JOB_CALL(j, dao_read(ctx, b[i], 0, got, SIZE));
		j->mismatches += memcmp(got, want[i], SIZE) != 0;
		JOB_CALL(j, dao_release(ctx, b[i]));
	}
}

static void *shared_ctx_thread(void *arg)
{
	struct job *j = arg;

	run_job(j, j->ctx);
	JOB_CALL(j, dao_sync(j->ctx));
	return NULL;
}

/* Several job threads on one context, all bumping one counter. */
static void test_one_context(void)
{
	dao_ctx ctx = test_open(4 * SIZE, DAO_POLICY_DAO, 8, 0);
	dao_buf counter = test_buffer(ctx, sizeof(uint64_t));
	struct job jobs[THREADS];
	pthread_t t[THREADS];
	uint64_t zero = 0, total = 0, bumps = 0, leaked = 1;
	int errors = 0, mismatches = 0;

	TEST_TRY(dao_write(ctx, counter, 0, &zero, sizeof(zero)));
	for (int i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){ .ctx = ctx, .counter = counter, .id = i };
		if (pthread_create(&t[i], NULL, shared_ctx_thread, &jobs[i]))
			tap_bail("pthread_create");
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		errors += jobs[i].errors;
		mismatches += jobs[i].mismatches;
		bumps += jobs[i].bumps;
		if (jobs[i].errors)
			tap_diag("%s", jobs[i].what);
	}
	TAP_IS_U64(errors, 0, "four threads on one context: every call succeeded");
	TAP_IS_U64(mismatches, 0, "every read saw its own thread's results");
	TEST_TRY(dao_read(ctx, counter, 0, &total, sizeof(total)));
	TAP_IS_U64(total, bumps, "the shared counter saw every thread's kernels");
	tap_ok(test_stats(ctx).evictions > 0, "the budget forced evictions");
	TEST_TRY(dao_release(ctx, counter));
	TAP_IS_STATUS(dao_close(ctx, &leaked), DAO_OK, "close");
	TAP_IS_U64(leaked, 0, "nothing leaked");
}

static void *own_ctx_thread(void *arg)
{
	struct job *j = arg;
	dao_config cfg = test_config(j->budget, DAO_POLICY_DAO, 8, 0);
	dao_ctx ctx;
	dao_stats s;
	uint64_t leaked = 1;
	dao_status st;

	/* Shared device: same budget and policy in every thread, no conflict. */
	st = dao_open(&cfg, &ctx);
	if (st != DAO_OK) {
		job_error(j, "dao_open", st);
		pthread_barrier_wait(j->all_ran); /* the others wait for it */
		return NULL;
	}
	run_job(j, ctx);
	JOB_CALL(j, dao_stats_get(ctx, &s));
	if (s.budget_bytes != j->budget)
		job_error(j, "stats.budget_bytes", DAO_ERR_INVALID);
	JOB_CALL(j, dao_close(ctx, &leaked));
	if (leaked)
		job_error(j, "leaked", DAO_ERR_INVALID);
	return NULL;
}

/* Several contexts on the shared device, one per thread. */
static void test_many_contexts(void)
{
	struct job jobs[THREADS];
	pthread_t t[THREADS];
	dao_config cfg = test_config(6 * SIZE, DAO_POLICY_DAO, 8, 0);
	dao_ctx holder;
	dao_stats s;
	pthread_barrier_t all_ran;
	int errors = 0, mismatches = 0;

	/* A context held open across the threads keeps the device alive, so
	 * its statistics cover what all of them did. */
	TEST_TRY(dao_open(&cfg, &holder));
	if (pthread_barrier_init(&all_ran, NULL, THREADS))
		tap_bail("pthread_barrier_init");
	for (int i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){ .budget = 6 * SIZE, .all_ran = &all_ran, .id = i };
		if (pthread_create(&t[i], NULL, own_ctx_thread, &jobs[i]))
			tap_bail("pthread_create");
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		errors += jobs[i].errors;
		mismatches += jobs[i].mismatches;
		if (jobs[i].errors)
			tap_diag("%s", jobs[i].what);
	}
	pthread_barrier_destroy(&all_ran);
	TAP_IS_U64(errors, 0, "four contexts on the shared device: every call succeeded");
	TAP_IS_U64(mismatches, 0, "every read saw its own context's results");
	s = test_stats(holder);
	tap_ok(s.evictions > 0, "the contexts shared one budget: evictions (%" PRIu64 ")",
	       s.evictions);
	tap_ok(s.peak_device_bytes <= 6 * SIZE, "and never held more than it (%" PRIu64 ")",
	       s.peak_device_bytes);
	TAP_IS_U64(s.live_buffers, 0, "all their buffers are gone");
	TAP_IS_STATUS(dao_close(holder, NULL), DAO_OK, "close the holder");
}

/* Contexts opened and closed concurrently, on the shared device. */
static void *open_close_thread(void *arg)
{
	struct job *j = arg;
	dao_config cfg = test_config(0, DAO_POLICY_DEFAULT, 0, 0);

	for (int i = 0; i < 20; i++) {
		dao_ctx ctx;
		dao_buf b;
		dao_status st = dao_open(&cfg, &ctx);

		if (st != DAO_OK) {
			job_error(j, "dao_open", st);
			return NULL;
		}
		JOB_CALL(j, dao_buffer_create(ctx, 64, &b));
		JOB_CALL(j, dao_close(ctx, NULL));
	}
	return NULL;
}

static void test_open_close_race(void)
{
	struct job jobs[THREADS];
	pthread_t t[THREADS];
	int errors = 0;

	for (int i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){ .id = i };
		if (pthread_create(&t[i], NULL, open_close_thread, &jobs[i]))
			tap_bail("pthread_create");
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		errors += jobs[i].errors;
		if (jobs[i].errors)
			tap_diag("%s", jobs[i].what);
	}
	TAP_IS_U64(errors, 0, "threads opening and closing shared contexts concurrently");
}

int main(void)
{
	test_clear_env();
	test_one_context();
	test_many_contexts();
	test_open_close_race();
	tap_plan_done();
	return tap_exit();
}
