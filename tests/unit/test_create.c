/* SPDX-License-Identifier: MIT */
/*
 * test_create.c - dao_buffer_create without the device's lock
 * (Documentation/design.md, Locking): creates on several threads and two
 * contexts of one device racing each other, releases whose records the
 * executor frees and the next creates reuse, lookups of other handles
 * while the slot table grows, stale handles, the host budget's last bytes,
 * statistics and close. Every race has one outcome (the create succeeded
 * and its buffer is whole and counted, or it reported an error and changed
 * nothing), and no test waits with a sleep. Under TSan every access of the
 * records, the slots and the counts is checked; under ASan a lookup that
 * kept a pointer into a moved slot table would be caught.
 * Also: labels, now kept out of line, reach traces as before, and contexts
 * that close without a create (dao_open took their first memory).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "common.h"
#include "dao_trace.h"

#ifdef __SANITIZE_THREAD__
#define SCALE 1
#else
#define SCALE 4
#endif

#define THREADS 4

static int touch_kernel(const dao_kernel_args *a)
{
	/* The first operand is the one written. */
	((unsigned char *)a->ptrs[0])[0]++;
	return 0;
}

/* ---- threads creating, using and releasing on two contexts at once ---- */

struct churn_job {
	dao_ctx ctx;
	uint64_t seed;
	uint64_t created;
	uint64_t wrong; /* a create, size, write, read or release that misbehaved */
	atomic_int *start;
};

/* Create a batch, check each (its size, its contents after a write), use
 * some in kernels (their records are then freed by the executor, and the
 * next batch reuses them), release all. */
static void *churn(void *arg)
{
	struct churn_job *j = arg;
	enum { BATCH = 97 };
	dao_buf b[BATCH];
	uint64_t rng = j->seed;

	while (!atomic_load(j->start))
		sched_yield();
	for (int round = 0; round < 20 * SCALE; round++) {
		int n = 0;

		for (int i = 0; i < BATCH; i++) {
			uint64_t bytes = 8 + test_rng_range(&rng, 0, 200), got = 0, v = (uint64_t)i;

			if (dao_buffer_create(j->ctx, bytes, &b[n]) != DAO_OK) {
				j->wrong++;
				continue;
			}
			j->created++;
			j->wrong += dao_buffer_size(j->ctx, b[n], &got) != DAO_OK || got != bytes;
			j->wrong += dao_write(j->ctx, b[n], 0, &v, sizeof(v)) != DAO_OK;
			n++;
		}
		for (int i = 0; i + 1 < n; i += 3) {
			dao_operand ops[2] = { { b[i], DAO_RW }, { b[i + 1], DAO_R } };

			j->wrong += dao_launch(j->ctx, touch_kernel, NULL, ops, 2) != DAO_OK;
		}
		for (int i = 0; i < n; i++) {
			uint64_t v = 0, want = (uint64_t)i + (i % 3 == 0 && i + 1 < n);

			/* A kernel bumped the first byte of the buffers it wrote. */
			j->wrong += dao_read(j->ctx, b[i], 0, &v, sizeof(v)) != DAO_OK || v != want;
			j->wrong += dao_release(j->ctx, b[i]) != DAO_OK;
		}
	}
	return NULL;
}

static void test_threads_create(uint64_t *rng)
{
	dao_config cfg = test_config(1u << 20, DAO_POLICY_DAO, 16, 0);
	struct churn_job jobs[THREADS];
	pthread_t t[THREADS];
	atomic_int start = 0;
	dao_ctx ctx[2];
	uint64_t created = 0, wrong = 0;
	dao_stats s;

	/* Two contexts of one (shared) device: one record cache, one count. */
	TEST_TRY(dao_open(&cfg, &ctx[0]));
	TEST_TRY(dao_open(&cfg, &ctx[1]));
	for (int i = 0; i < THREADS; i++) {
		jobs[i] = (struct churn_job){ .ctx = ctx[i % 2], .seed = test_rng_next(rng),
					      .start = &start };
		if (pthread_create(&t[i], NULL, churn, &jobs[i]))
			tap_bail("pthread_create failed");
	}
	atomic_store(&start, 1);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		created += jobs[i].created;
		wrong += jobs[i].wrong;
	}
	TEST_TRY(dao_sync(ctx[0]));
	TEST_TRY(dao_sync(ctx[1]));
	s = test_stats(ctx[0]);
	tap_ok(wrong == 0 && created == (uint64_t)THREADS * 20 * SCALE * 97,
	       "%d threads on 2 contexts: every create gave a whole buffer of its size, "
	       "contents kept (%llu created, %llu wrong)",
	       THREADS, (unsigned long long)created, (unsigned long long)wrong);
	TAP_IS_U64(s.live_buffers, 0, "every buffer they created was freed and counted out");
	TAP_IS_U64(s.host_bytes, 0, "and no host copy is left");
	TEST_TRY(dao_close(ctx[1], NULL));
	TEST_TRY(dao_close(ctx[0], NULL));
}

/* ---- lookups of other handles while the slot table grows ---- */

struct grower {
	dao_ctx ctx;
	uint64_t n;
	dao_buf *b;
	uint64_t failed;
	atomic_int done;
};

static void *grow(void *arg)
{
	struct grower *g = arg;

	for (uint64_t i = 0; i < g->n; i++)
		g->failed += dao_buffer_create(g->ctx, 16, &g->b[i]) != DAO_OK;
	atomic_store(&g->done, 1);
	return NULL;
}

static int cmp_handle(const void *a, const void *b)
{
	uint64_t x = ((const dao_buf *)a)->id, y = ((const dao_buf *)b)->id;

	return x < y ? -1 : x > y;
}

static void test_lookup_vs_growth(void)
{
	dao_ctx ctx = test_open(64u << 20, DAO_POLICY_DAO, 8, 0);
	/* Past the first table's 43,690 slots (64 under ASan). */
	struct grower g = { .ctx = ctx, .n = 50000 * SCALE };
	dao_buf mine = test_buffer(ctx, 256), stale = test_buffer(ctx, 64), v;
	uint64_t wrong = 0, looks = 0, stale_ok = 0, size;
	pthread_t t;

	TEST_TRY(dao_release(ctx, stale));
	g.b = calloc(g.n, sizeof(*g.b));
	if (!g.b)
		tap_bail("out of memory");
	if (pthread_create(&t, NULL, grow, &g))
		tap_bail("pthread_create failed");
	/* Each of these holds dev->mu and a pointer into the table while the
	 * other thread's creates fill it and make it grow (and move). */
	do {
		wrong += dao_buffer_size(ctx, mine, &size) != DAO_OK || size != 256;
		wrong += dao_view_create(ctx, mine, 8, 16, &v) != DAO_OK;
		wrong += dao_buffer_size(ctx, v, &size) != DAO_OK || size != 16;
		wrong += dao_release(ctx, v) != DAO_OK;
		/* The stale handle's slot is handed out again meanwhile. */
		stale_ok += dao_buffer_size(ctx, stale, &size) != DAO_ERR_HANDLE;
		looks++;
	} while (!atomic_load(&g.done));
	pthread_join(t, NULL);
	tap_ok(g.failed == 0 && wrong == 0,
	       "table growth: %llu creates and %llu rounds of lookups, views and releases "
	       "on another thread all succeeded",
	       (unsigned long long)g.n, (unsigned long long)looks);
	tap_ok(stale_ok == 0, "a released handle stayed released while its slot was reused");
	TAP_IS_U64(test_stats(ctx).live_buffers, g.n + 1, "every create counted once");
	{
		uint64_t distinct = 1;

		qsort(g.b, g.n, sizeof(*g.b), cmp_handle);
		for (uint64_t i = 1; i < g.n; i++)
			distinct += g.b[i].id != g.b[i - 1].id;
		TAP_IS_U64(distinct, g.n, "every handle distinct");
	}
	free(g.b);
	TEST_TRY(dao_close(ctx, NULL));
}

/* ---- contexts that never create, and the memory dao_open takes ---- */

/*
 * dao_open takes a context's first slot table and its device's first chunk
 * of records (api/open.c, open_prime). Contexts and devices that close
 * without a create give them back: more than the 8 chunks kept (the rest
 * unmapped), then the next contexts start from kept chunks, one of them a
 * shared device's second context, and grow past the first table.
 */
static void test_open_without_creates(void)
{
	enum { N = 12 };
	dao_config shared = test_config(64u << 20, DAO_POLICY_DAO, 8, 0);
	dao_ctx idle[N], a, b;
	uint64_t n = 90000 * SCALE, wrong = 0, size; /* per context past 43,690 */
	dao_buf *bufs = calloc(n, sizeof(*bufs));

	if (!bufs)
		tap_bail("out of memory");
	for (int i = 0; i < N; i++)
		idle[i] = test_open(64u << 20, DAO_POLICY_DAO, 8, 0);
	for (int i = 0; i < N; i++)
		TEST_TRY(dao_close(idle[i], NULL));
	TEST_TRY(dao_open(&shared, &a));
	TEST_TRY(dao_open(&shared, &b));
	TAP_IS_U64(test_stats(a).live_buffers, 0, "an opened context has no buffers");
	for (uint64_t i = 0; i < n; i++) {
		dao_ctx c = i & 1 ? b : a;

		bufs[i] = test_buffer(c, 64 + (i & 63));
	}
	for (uint64_t i = 0; i < n; i++)
		wrong += dao_buffer_size(i & 1 ? b : a, bufs[i], &size) != DAO_OK ||
			 size != 64 + (i & 63);
	tap_ok(wrong == 0,
	       "after %d contexts closed without a create, two contexts of one device "
	       "created %llu buffers past their first tables, every size right",
	       N, (unsigned long long)n);
	TAP_IS_U64(test_stats(a).live_buffers, n, "every create counted once on the device");
	for (uint64_t i = 0; i < n; i++)
		TEST_TRY(dao_release(i & 1 ? b : a, bufs[i]));
	TEST_TRY(dao_close(b, NULL));
	TEST_TRY(dao_close(a, NULL));
	free(bufs);
}

/* ---- the host budget's last bytes, taken by racing creates ---- */

struct budget_job {
	dao_ctx ctx;
	atomic_int *start;
	uint64_t ok, refused, other;
};

static void *budget_create(void *arg)
{
	struct budget_job *j = arg;

	while (!atomic_load(j->start))
		sched_yield();
	for (;;) {
		dao_buf b;
		dao_status st = dao_buffer_create(j->ctx, 1000, &b);

		if (st == DAO_OK) {
			j->ok++;
			continue;
		}
		if (st == DAO_ERR_HOST_BUDGET)
			j->refused++;
		else
			j->other++;
		break;
	}
	return NULL;
}

static void test_host_budget_race(void)
{
	const uint64_t fit = 500 * SCALE;
	dao_config cfg = test_config(64u << 20, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
	struct budget_job jobs[THREADS];
	pthread_t t[THREADS];
	atomic_int start = 0;
	uint64_t ok = 0, refused = 0, other = 0;
	struct test_capture cap;
	char log[4096];
	dao_ctx ctx;
	dao_buf b;

	cfg.host_budget = fit * 1000 + 999; /* room for `fit` creates, and 999 bytes */
	cfg.log_level = DAO_LOG_ERROR;
	TEST_TRY(dao_open(&cfg, &ctx));
	test_capture_start(&cap);
	for (int i = 0; i < THREADS; i++) {
		jobs[i] = (struct budget_job){ .ctx = ctx, .start = &start };
		if (pthread_create(&t[i], NULL, budget_create, &jobs[i]))
			tap_bail("pthread_create failed");
	}
	atomic_store(&start, 1);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		ok += jobs[i].ok;
		refused += jobs[i].refused;
		other += jobs[i].other;
	}
	TAP_IS_U64(test_stats(ctx).live_buffers, fit, "refused creates added no buffer");
	TAP_IS_STATUS(dao_buffer_create(ctx, 999, &b), DAO_OK, "the last 999 bytes still fit");
	TAP_IS_STATUS(dao_buffer_create(ctx, 1, &b), DAO_ERR_HOST_BUDGET, "and nothing more");
	test_capture_stop(&cap, log, sizeof(log));
	tap_ok(ok == fit && refused == THREADS && other == 0,
	       "host budget race: exactly the %llu creates that fit succeeded, each thread then "
	       "got DAO_ERR_HOST_BUDGET (%llu ok, %llu refused, %llu other)",
	       (unsigned long long)fit, (unsigned long long)ok, (unsigned long long)refused,
	       (unsigned long long)other);
	tap_ok(strstr(log, "host budget of") != NULL, "and each refusal said why");
	TEST_TRY(dao_close(ctx, NULL));
}

/* ---- creates racing dao_close ---- */

struct close_job {
	dao_ctx ctx;
	atomic_ulong ok;
	dao_status last;
};

static void *create_until_closed(void *arg)
{
	struct close_job *j = arg;
	dao_buf b;
	dao_status st;

	while ((st = dao_buffer_create(j->ctx, 64, &b)) == DAO_OK)
		atomic_fetch_add(&j->ok, 1);
	j->last = st;
	return NULL;
}

static void test_create_vs_close(uint64_t *rng)
{
	uint64_t wrong = 0, leaked_wrong = 0;

	for (int round = 0; round < 20 * SCALE; round++) {
		struct close_job j = { .ctx = test_open(1u << 20, DAO_POLICY_DAO, 8, 0) };
		uint64_t wait_for = test_rng_range(rng, 0, 300), leaked = 0;
		pthread_t t;

		if (pthread_create(&t, NULL, create_until_closed, &j))
			tap_bail("pthread_create failed");
		while (atomic_load(&j.ok) < wait_for)
			sched_yield();
		TEST_TRY(dao_close(j.ctx, &leaked));
		pthread_join(t, NULL);
		wrong += j.last != DAO_ERR_CLOSED;
		/* Every create that said DAO_OK made a handle close found. */
		leaked_wrong += leaked != atomic_load(&j.ok);
	}
	tap_ok(wrong == 0, "create vs close: the first create after close said DAO_ERR_CLOSED");
	tap_ok(leaked_wrong == 0, "create vs close: close released exactly the buffers created");
}

/* ---- labels: out of line, in traces as before ---- */

static void test_labels_in_trace(void)
{
	char path[] = "/tmp/dao-test-create-trace-XXXXXX";
	char long_label[300], want_long[64], err[256];
	dao_config cfg = test_config(1u << 20, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
	const char *want[5] = { "with_spaces_and__tab_", NULL, NULL, want_long, "second" };
	struct dao_trace *t = NULL;
	dao_buf b[5];
	dao_ctx ctx;
	int fd = mkstemp(path), right = 0;

	if (fd < 0)
		tap_bail("mkstemp");
	close(fd);
	memset(long_label, 'x', sizeof(long_label) - 1);
	long_label[sizeof(long_label) - 1] = 0;
	memset(want_long, 'x', sizeof(want_long) - 1);
	want_long[sizeof(want_long) - 1] = 0;
	cfg.trace_path = path;
	TEST_TRY(dao_open(&cfg, &ctx));
	for (int i = 0; i < 5; i++)
		b[i] = test_buffer(ctx, 64 * (uint64_t)(i + 1));
	TEST_TRY(dao_set_label(ctx, b[0], "with spaces and\t tab "));
	/* b[1]: never labelled. */
	TEST_TRY(dao_set_label(ctx, b[2], "gone"));
	TEST_TRY(dao_set_label(ctx, b[2], ""));
	TEST_TRY(dao_set_label(ctx, b[3], long_label));
	TEST_TRY(dao_set_label(ctx, b[4], "first"));
	TEST_TRY(dao_set_label(ctx, b[4], "second"));
	for (int i = 0; i < 5; i++) {
		dao_operand op = { b[i], DAO_W };

		TEST_TRY(dao_launch(ctx, touch_kernel, NULL, &op, 1));
	}
	for (int i = 0; i < 5; i++)
		TEST_TRY(dao_release(ctx, b[i]));
	TEST_TRY(dao_close(ctx, NULL));
	if (dao_trace_read_file(path, &t, err, sizeof(err)) != DAO_OK)
		tap_bail("the trace does not parse: %s", err);
	unlink(path);
	for (size_t i = 0; i < t->nbufs; i++) {
		int k = (int)(t->bufs[i].bytes / 64) - 1;

		if (k < 0 || k >= 5)
			continue;
		right += want[k] ? t->bufs[i].label && !strcmp(t->bufs[i].label, want[k])
				 : !t->bufs[i].label;
	}
	TAP_IS_U64(t->nbufs, 5, "trace: five buffers");
	tap_ok(right == 5, "trace: labels sanitised, truncated to 63 bytes, replaced, cleared "
			   "and absent as set (%d of 5 right)",
	       right);
	dao_trace_free(t);
}

int main(void)
{
	uint64_t rng = test_seed();

	test_clear_env();
	test_threads_create(&rng);
	test_lookup_vs_growth();
	test_open_without_creates();
	test_host_budget_race();
	test_create_vs_close(&rng);
	test_labels_in_trace();
	tap_plan_done();
	return tap_exit();
}
