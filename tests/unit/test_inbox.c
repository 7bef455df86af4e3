/* SPDX-License-Identifier: MIT */
/*
 * test_inbox.c - launches that do not take the device's lock (core/inbox.c)
 * racing everything that may happen to them at once: a release of one of
 * their buffers on another thread, the slot table growing under them,
 * other threads launching on the same and on another context of the same
 * device (some through the locked path: more than 8 operands or a long
 * name), a full window, and dao_close. Each race has one defined outcome
 * per launch (it ran, or it reported an error and queued nothing), and the
 * kernels check that what they touch is alive and in submission order.
 * Under TSan every access of the ring and the slot table is checked.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "common.h"

#define SIZE 64u
#define PATTERN 0x5a

#ifdef __SANITIZE_THREAD__
#define SCALE 1
#else
#define SCALE 4
#endif

/* What the kernels report back through their user pointer. */
struct seen {
	atomic_ulong ran;
	atomic_ulong bad_bytes; /* a read operand did not hold the pattern */
	atomic_ulong out_of_order;
};

/* Operand 0: a 64-bit counter, incremented; the others must hold PATTERN. */
static int check_kernel(const dao_kernel_args *a)
{
	struct seen *s = a->user;
	uint64_t v;

	memcpy(&v, a->ptrs[0], sizeof(v));
	v++;
	memcpy(a->ptrs[0], &v, sizeof(v));
	for (size_t i = 1; i < a->count; i++)
		for (uint64_t b = 0; b < a->sizes[i]; b++)
			if (((const unsigned char *)a->ptrs[i])[b] != PATTERN) {
				atomic_fetch_add(&s->bad_bytes, 1);
				break;
			}
	atomic_fetch_add(&s->ran, 1);
	return 0;
}

static dao_buf pattern_buffer(dao_ctx ctx)
{
	unsigned char bytes[SIZE];
	dao_buf b = test_buffer(ctx, SIZE);

	memset(bytes, PATTERN, sizeof(bytes));
	TEST_TRY(dao_write(ctx, b, 0, bytes, sizeof(bytes)));
	return b;
}

static uint64_t read_counter(dao_ctx ctx, dao_buf b)
{
	uint64_t v = 0;

	TEST_TRY(dao_read(ctx, b, 0, &v, sizeof(v)));
	return v;
}

/* ---- a launch racing the release of one of its operands ---- */

struct release_race {
	dao_ctx ctx;
	dao_operand ops[2];
	struct seen *seen;
	atomic_ulong ok;
	dao_status last; /* the status that ended the loop */
	uint64_t other; /* statuses neither DAO_OK nor DAO_ERR_HANDLE */
	uint64_t ok_after_handle;
};

static void *release_race_launcher(void *arg)
{
	struct release_race *r = arg;

	for (;;) {
		dao_status st = dao_launch(r->ctx, check_kernel, r->seen, r->ops, 2);

		if (st == DAO_OK) {
			atomic_fetch_add(&r->ok, 1);
			continue;
		}
		r->last = st;
		if (st != DAO_ERR_HANDLE)
			r->other++;
		break;
	}
	/* Once gone, the handle stays gone. */
	for (int i = 0; i < 8; i++)
		r->ok_after_handle += dao_launch(r->ctx, check_kernel, r->seen, r->ops, 2) == DAO_OK;
	return NULL;
}

static void test_launch_vs_release(uint64_t *rng)
{
	const int rounds = 60 * SCALE;
	dao_ctx ctx = test_open(1u << 20, DAO_POLICY_DAO, 16, 0);
	struct seen seen = { 0 };
	dao_buf counter = test_buffer(ctx, SIZE);
	uint64_t zero = 0, launched = 0, other = 0, ok_after = 0, live_wrong = 0;
	uint64_t live_before;

	TEST_TRY(dao_write(ctx, counter, 0, &zero, sizeof(zero)));
	TEST_TRY(dao_sync(ctx));
	live_before = test_stats(ctx).live_buffers;
	for (int round = 0; round < rounds; round++) {
		struct release_race r = { .ctx = ctx, .seen = &seen };
		uint64_t wait_for = test_rng_range(rng, 0, 40);
		pthread_t t;

		r.ops[0] = (dao_operand){ .buf = counter, .mode = DAO_RW };
		r.ops[1] = (dao_operand){ .buf = pattern_buffer(ctx), .mode = DAO_R };
		if (pthread_create(&t, NULL, release_race_launcher, &r))
			tap_bail("pthread_create failed");
		/* Release once the launcher is under way (or at once). */
		while (atomic_load(&r.ok) < wait_for && !r.last)
			sched_yield();
		TEST_TRY(dao_release(ctx, r.ops[1].buf));
		pthread_join(t, NULL);
		TEST_TRY(dao_sync(ctx));
		launched += atomic_load(&r.ok);
		other += r.other;
		ok_after += r.ok_after_handle;
		live_wrong += test_stats(ctx).live_buffers != live_before;
	}
	tap_ok(other == 0, "release race: every launch either ran or said DAO_ERR_HANDLE (%llu other)",
	       (unsigned long long)other);
	tap_ok(ok_after == 0, "release race: no launch succeeded after DAO_ERR_HANDLE (%llu did)",
	       (unsigned long long)ok_after);
	tap_ok(read_counter(ctx, counter) == launched && atomic_load(&seen.ran) == launched,
	       "release race: exactly the launches that said DAO_OK ran (%llu launched, %lu ran)",
	       (unsigned long long)launched, atomic_load(&seen.ran));
	tap_ok(atomic_load(&seen.bad_bytes) == 0,
	       "release race: every kernel found its released operand's contents intact (%lu bad)",
	       atomic_load(&seen.bad_bytes));
	tap_ok(live_wrong == 0, "release race: every released buffer was freed after its last use "
				"(%llu rounds left one)",
	       (unsigned long long)live_wrong);
	TEST_TRY(dao_close(ctx, NULL));
}

/* ---- launches while another thread grows and shrinks the slot table ---- */

struct churn {
	dao_ctx ctx;
	uint64_t failed;
	uint64_t created;
};

static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	enum { N = 3000 };
	dao_buf *b = calloc(N * SCALE, sizeof(*b));

	if (!b)
		tap_bail("out of memory");
	for (int i = 0; i < N * SCALE; i++) {
		dao_buf v;

		if (dao_buffer_create(c->ctx, SIZE, &b[i]) != DAO_OK) {
			c->failed++;
			b[i].id = 0;
			continue;
		}
		c->created++;
		/* A view and a retain: the other writers of the table. */
		if (i % 7 == 0 && dao_view_create(c->ctx, b[i], 8, 8, &v) == DAO_OK)
			c->failed += dao_release(c->ctx, v) != DAO_OK;
		if (i % 11 == 0) {
			c->failed += dao_retain(c->ctx, b[i]) != DAO_OK;
			c->failed += dao_release(c->ctx, b[i]) != DAO_OK;
		}
	}
	for (int i = 0; i < N * SCALE; i++)
		if (b[i].id)
			c->failed += dao_release(c->ctx, b[i]) != DAO_OK;
	free(b);
	return NULL;
}

static void test_launch_vs_table_growth(void)
{
	const uint64_t kernels = 3000 * SCALE;
	dao_ctx ctx = test_open(64u << 20, DAO_POLICY_DAO, 8, 0);
	struct seen seen = { 0 };
	struct churn c = { .ctx = ctx };
	dao_operand ops[4];
	uint64_t zero = 0, bad = 0, live_before;
	pthread_t t;

	ops[0] = (dao_operand){ .buf = test_buffer(ctx, SIZE), .mode = DAO_RW };
	TEST_TRY(dao_write(ctx, ops[0].buf, 0, &zero, sizeof(zero)));
	for (int i = 1; i < 4; i++)
		ops[i] = (dao_operand){ .buf = pattern_buffer(ctx), .mode = DAO_R };
	TEST_TRY(dao_sync(ctx));
	live_before = test_stats(ctx).live_buffers;
	if (pthread_create(&t, NULL, churn_thread, &c))
		tap_bail("pthread_create failed");
	for (uint64_t k = 0; k < kernels; k++)
		bad += dao_launch(ctx, check_kernel, &seen, ops, 4) != DAO_OK;
	pthread_join(t, NULL);
	TEST_TRY(dao_sync(ctx));
	tap_ok(bad == 0 && c.failed == 0,
	       "table growth: every launch, create, view, retain and release succeeded "
	       "(%llu launches, %llu others failed)",
	       (unsigned long long)bad, (unsigned long long)c.failed);
	tap_ok(read_counter(ctx, ops[0].buf) == kernels && atomic_load(&seen.bad_bytes) == 0,
	       "table growth: every kernel ran on intact operands while %llu buffers came and went",
	       (unsigned long long)c.created);
	tap_ok(test_stats(ctx).live_buffers == live_before,
	       "table growth: every churned buffer was freed");
	TEST_TRY(dao_close(ctx, NULL));
}

/* ---- several threads, two contexts of one device, both paths ---- */

#define THREADS 4
#define WIDE 10 /* operands of a launch that takes the locked path */

struct order_job {
	dao_ctx ctx;
	dao_buf counter; /* this thread's */
	dao_buf shared;  /* read by every thread of its context */
	uint64_t kernels;
	struct seen *seen;
	uint64_t failed;
};

/* Operand 0 is this job's counter: it must hold the launch's index. */
struct order_user {
	struct seen *seen;
	uint64_t expect;
};

static int order_kernel(const dao_kernel_args *a)
{
	struct order_user *u = a->user;
	uint64_t v;

	memcpy(&v, a->ptrs[0], sizeof(v));
	if (v != u->expect)
		atomic_fetch_add(&u->seen->out_of_order, 1);
	v++;
	memcpy(a->ptrs[0], &v, sizeof(v));
	atomic_fetch_add(&u->seen->ran, 1);
	return 0;
}

static void *order_thread(void *arg)
{
	struct order_job *j = arg;
	struct order_user *u = calloc(j->kernels, sizeof(*u));
	static const char long_name[] = "a-kernel-name-longer-than-the-inbox-keeps-"
					"so-this-launch-takes-the-device-lock";

	if (!u)
		tap_bail("out of memory");
	for (uint64_t k = 0; k < j->kernels; k++) {
		dao_operand ops[WIDE];
		size_t n = 2;
		const char *name = NULL;
		dao_status st;

		u[k] = (struct order_user){ .seen = j->seen, .expect = k };
		ops[0] = (dao_operand){ .buf = j->counter, .mode = DAO_RW };
		ops[1] = (dao_operand){ .buf = j->shared, .mode = DAO_R };
		if (k % 5 == 3) { /* more operands than a cell holds */
			for (size_t i = 2; i < WIDE; i++)
				ops[i] = ops[1];
			n = WIDE;
		} else if (k % 7 == 5) {
			name = long_name;
		}
		st = dao_launch_named(j->ctx, name, 0, order_kernel, &u[k], ops, n);
		j->failed += st != DAO_OK;
		if (k % 97 == 96) /* a blocking call between launches */
			j->failed += dao_sync(j->ctx) != DAO_OK;
	}
	j->failed += dao_sync(j->ctx) != DAO_OK;
	free(u);
	return NULL;
}

static void test_threads_two_contexts(void)
{
	/* Shared (not private) contexts of one host device; a window of 2
	 * keeps the launches waiting for it. */
	dao_config cfg = test_config(1u << 20, DAO_POLICY_DAO, 2, 0);
	dao_ctx ctx[2];
	dao_buf shared[2];
	struct seen seen = { 0 };
	struct order_job jobs[THREADS];
	pthread_t t[THREADS];
	uint64_t failed = 0, wrong = 0, total = 0;

	for (int c = 0; c < 2; c++) {
		TEST_TRY(dao_open(&cfg, &ctx[c]));
		shared[c] = pattern_buffer(ctx[c]);
	}
	for (int i = 0; i < THREADS; i++) {
		uint64_t zero = 0;

		jobs[i] = (struct order_job){ .ctx = ctx[i % 2], .shared = shared[i % 2],
					      .kernels = 1500 * SCALE, .seen = &seen };
		jobs[i].counter = test_buffer(ctx[i % 2], SIZE);
		TEST_TRY(dao_write(ctx[i % 2], jobs[i].counter, 0, &zero, sizeof(zero)));
		total += jobs[i].kernels;
	}
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, order_thread, &jobs[i]))
			tap_bail("pthread_create failed");
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		failed += jobs[i].failed;
		wrong += read_counter(jobs[i].ctx, jobs[i].counter) != jobs[i].kernels;
	}
	tap_ok(failed == 0, "%d threads on 2 contexts: every call succeeded (%llu failed)", THREADS,
	       (unsigned long long)failed);
	tap_ok(wrong == 0 && atomic_load(&seen.ran) == total,
	       "%d threads on 2 contexts: every thread's counter saw each of its kernels "
	       "(%lu of %llu ran)",
	       THREADS, atomic_load(&seen.ran), (unsigned long long)total);
	tap_ok(atomic_load(&seen.out_of_order) == 0,
	       "%d threads on 2 contexts: each thread's kernels ran in its order, through the "
	       "inbox and the locked path alike (%lu out of order)",
	       THREADS, atomic_load(&seen.out_of_order));
	for (int c = 0; c < 2; c++)
		TEST_TRY(dao_close(ctx[c], NULL));
}

/* ---- launches racing dao_close ---- */

struct close_race {
	dao_ctx ctx;
	dao_operand op;
	struct seen *seen;
	atomic_ulong ok;
	uint64_t other;
	uint64_t ok_after_closed;
};

static void *close_race_launcher(void *arg)
{
	struct close_race *r = arg;
	dao_status st;

	while ((st = dao_launch(r->ctx, check_kernel, r->seen, &r->op, 1)) == DAO_OK)
		atomic_fetch_add(&r->ok, 1);
	r->other += st != DAO_ERR_CLOSED;
	for (int i = 0; i < 8; i++)
		r->ok_after_closed += dao_launch(r->ctx, check_kernel, r->seen, &r->op, 1) == DAO_OK;
	return NULL;
}

static void test_launch_vs_close(uint64_t *rng)
{
	const int rounds = 40 * SCALE;
	uint64_t other = 0, ok_after = 0, mismatched = 0, close_failed = 0;

	for (int round = 0; round < rounds; round++) {
		struct seen seen = { 0 };
		struct close_race r = { .seen = &seen };
		uint64_t wait_for = test_rng_range(rng, 0, 40), zero = 0, leaked = 0;
		pthread_t t;

		r.ctx = test_open(1u << 20, DAO_POLICY_DAO, 8, 0);
		r.op = (dao_operand){ .buf = test_buffer(r.ctx, SIZE), .mode = DAO_RW };
		TEST_TRY(dao_write(r.ctx, r.op.buf, 0, &zero, sizeof(zero)));
		if (pthread_create(&t, NULL, close_race_launcher, &r))
			tap_bail("pthread_create failed");
		while (atomic_load(&r.ok) < wait_for)
			sched_yield();
		close_failed += dao_close(r.ctx, &leaked) != DAO_OK || leaked != 1;
		/* Close ran every op it took in; once the launcher has
		 * counted its last DAO_OK, the two counts are final. */
		pthread_join(t, NULL);
		mismatched += atomic_load(&seen.ran) != atomic_load(&r.ok);
		other += r.other;
		ok_after += r.ok_after_closed;
	}
	tap_ok(close_failed == 0, "close race: every close succeeded, reporting its one handle");
	tap_ok(other == 0 && ok_after == 0,
	       "close race: launches said DAO_OK until they said DAO_ERR_CLOSED, then only that "
	       "(%llu other, %llu after)",
	       (unsigned long long)other, (unsigned long long)ok_after);
	tap_ok(mismatched == 0,
	       "close race: the kernels close ran were exactly the launches that said DAO_OK "
	       "(%llu rounds differ)",
	       (unsigned long long)mismatched);
}

/* ---- errors a launch reports at once, through the inbox's path ---- */

static int failing_kernel(const dao_kernel_args *a)
{
	(void)a;
	return 1;
}

static void test_errors_at_launch(void)
{
	dao_ctx ctx = test_open(4096, DAO_POLICY_DAO, 8, 0);
	dao_ctx other = test_open(4096, DAO_POLICY_DAO, 8, 0);
	struct seen seen = { 0 };
	dao_buf a = pattern_buffer(ctx), big1 = test_buffer(ctx, 3000),
		big2 = test_buffer(ctx, 3000), gone = test_buffer(ctx, SIZE),
		foreign = test_buffer(other, SIZE);
	dao_operand ops[2] = { { .buf = a, .mode = DAO_RW }, { .buf = a, .mode = DAO_R } };
	uint64_t kernels;

	TEST_TRY(dao_sync(ctx));
	kernels = test_stats(ctx).kernels;
	TEST_TRY(dao_release(ctx, gone));
	ops[1].buf = gone;
	tap_ok(dao_launch(ctx, check_kernel, &seen, ops, 2) == DAO_ERR_HANDLE,
	       "a released handle: DAO_ERR_HANDLE");
	ops[1].buf = foreign;
	tap_ok(dao_launch(ctx, check_kernel, &seen, ops, 2) == DAO_ERR_FOREIGN,
	       "another context's handle: DAO_ERR_FOREIGN");
	ops[0].buf = big1;
	ops[1].buf = big2;
	tap_ok(dao_launch(ctx, check_kernel, &seen, ops, 2) == DAO_ERR_BUDGET,
	       "operands larger than the budget together: DAO_ERR_BUDGET");
	ops[0] = (dao_operand){ .buf = a, .mode = 7 };
	tap_ok(dao_launch(ctx, check_kernel, &seen, ops, 1) == DAO_ERR_INVALID,
	       "a bad mode: DAO_ERR_INVALID");
	TEST_TRY(dao_sync(ctx));
	tap_ok(test_stats(ctx).kernels == kernels && atomic_load(&seen.ran) == 0,
	       "none of them queued anything");
	ops[0] = (dao_operand){ .buf = a, .mode = DAO_RW };
	TEST_TRY(dao_launch(ctx, failing_kernel, NULL, ops, 1));
	tap_ok(dao_sync(ctx) == DAO_ERR_KERNEL, "a failing kernel: dao_sync says DAO_ERR_KERNEL");
	tap_ok(dao_launch(ctx, check_kernel, &seen, ops, 1) == DAO_ERR_FAILED,
	       "a launch after the failure: DAO_ERR_FAILED");
	dao_close(ctx, NULL);
	dao_close(other, NULL);
}

int main(void)
{
	uint64_t rng;

	test_clear_env();
	rng = test_seed();
	test_launch_vs_release(&rng);
	test_launch_vs_table_growth();
	test_threads_two_contexts();
	test_launch_vs_close(&rng);
	test_errors_at_launch();
	tap_plan_done();
	return tap_exit();
}
