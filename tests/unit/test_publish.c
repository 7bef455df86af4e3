/* SPDX-License-Identifier: MIT */
/*
 * test_publish.c - the shared-memory residency libdao publishes for daoctl:
 * the seqlock protocol (deterministically, then a reader racing a writer that
 * hammers the area: no torn copy is ever accepted), and the segment of a real
 * context: its name, mode and header, the summary equal to dao_stats_get,
 * the table equal to the buffers the test made, removal at close and at exit.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "common.h"
#include "dao_publish.h"
#include "core/publish.h"

#define HAMMER_WORDS 61 /* odd, and more than one cache line */

/* ------------------------------------------------------------ seqlock */

static void test_protocol(void)
{
	struct {
		struct dao_pub_area a;
		_Atomic uint64_t w[4];
	} s;
	uint64_t in[4] = { 1, 2, 3, 4 }, out[4], seq;

	memset(&s, 0, sizeof(s));
	tap_ok(dao_pub_read_begin(&s.a, &seq), "an idle area can be read");
	dao_pub_write_begin(&s.a);
	tap_ok(!dao_pub_read_begin(&s.a, &seq), "a read cannot start while a write is open");
	dao_pub_write_words(&s.a, 0, in, 4);
	dao_pub_write_end(&s.a);
	tap_ok(dao_pub_read_begin(&s.a, &seq), "a read starts once the write closed");
	dao_pub_read_words(&s.a, 0, out, 4);
	tap_ok(dao_pub_read_end(&s.a, seq) && !memcmp(in, out, sizeof(in)),
	       "an undisturbed read returns what was written");
	dao_pub_read_begin(&s.a, &seq);
	dao_pub_write_begin(&s.a);
	dao_pub_write_end(&s.a);
	tap_ok(!dao_pub_read_end(&s.a, seq), "a write during the read invalidates it");
}

struct hammer {
	struct dao_pub_area *a;
	uint64_t writes;
	atomic_bool done;
	_Atomic uint64_t attempts; /* read attempts finished, accepted or not */
};

/* Every write stores one value in every word: a copy mixing two writes has
 * two different words. */
static void *hammer_writer(void *arg)
{
	struct hammer *h = arg;
	uint64_t v[HAMMER_WORDS];

	for (uint64_t i = 1; i <= h->writes; i++) {
		for (int k = 0; k < HAMMER_WORDS; k++)
			v[k] = i;
		dao_pub_write_begin(h->a);
		dao_pub_write_words(h->a, 0, v, HAMMER_WORDS);
		dao_pub_write_end(h->a);
		/* Let the reader try once before the next write: on a loaded
		 * machine a writer that never pauses leaves it no whole copy. */
		uint64_t seen = atomic_load(&h->attempts);

		while (atomic_load(&h->attempts) == seen && !atomic_load(&h->done))
			sched_yield();
	}
	atomic_store(&h->done, true);
	return NULL;
}

static void test_hammer(void)
{
	size_t bytes = sizeof(struct dao_pub_area) + HAMMER_WORDS * sizeof(uint64_t);
	struct hammer h = { .writes = test_env_u64("DAO_TEST_HAMMER_WRITES", 30000) };
	uint64_t accepted = 0, torn = 0, retries = 0, changes = 0, last = 0, backwards = 0;
	pthread_t t;

	/* Shared memory, as between a job and daoctl. */
	h.a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (h.a == MAP_FAILED)
		tap_bail("mmap failed");
	if (pthread_create(&t, NULL, hammer_writer, &h))
		tap_bail("pthread_create failed");
	while (!atomic_load(&h.done)) {
		uint64_t v[HAMMER_WORDS], seq;
		bool same = true;

		if (!dao_pub_read_begin(h.a, &seq)) {
			retries++;
			atomic_fetch_add(&h.attempts, 1);
			continue;
		}
		dao_pub_read_words(h.a, 0, v, HAMMER_WORDS);
		atomic_fetch_add(&h.attempts, 1);
		if (!dao_pub_read_end(h.a, seq)) {
			retries++;
			continue;
		}
		accepted++;
		for (int k = 1; k < HAMMER_WORDS; k++)
			same &= v[k] == v[0];
		torn += !same;
		backwards += v[0] < last;
		changes += v[0] != last;
		/* Nothing new: give the writer the CPU rather than spin. */
		if (v[0] == last)
			sched_yield();
		last = v[0];
	}
	pthread_join(t, NULL);
	tap_diag("%" PRIu64 " writes, %" PRIu64 " reads accepted (%" PRIu64
		 " distinct values), %" PRIu64 " retried",
		 h.writes, accepted, changes, retries);
	tap_ok(changes > 1, "the reader got whole copies of many writes while the writer ran");
	TAP_IS_U64(torn, 0, "no accepted copy mixes two writes");
	TAP_IS_U64(backwards, 0, "accepted copies never go back in time");
	munmap(h.a, bytes);
}

/* ------------------------------------------------------- real segment */

/* Path of one segment of process pid; the number found. */
static int find_for(pid_t pid, char *path, size_t cap)
{
	char prefix[64];
	struct dirent *e;
	int n = 0;
	DIR *d = opendir(DAO_PUB_DIR);

	if (!d)
		return 0;
	snprintf(prefix, sizeof(prefix), DAO_PUB_PREFIX "%u.%d.", (unsigned)getuid(), (int)pid);
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, cap, DAO_PUB_DIR "/%s", e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static int find_own(char *path, size_t cap)
{
	return find_for(getpid(), path, cap);
}

static int count_for(pid_t pid)
{
	char path[300];

	return find_for(pid, path, sizeof(path));
}

struct view {
	void *map;
	size_t len;
	struct dao_pub_header h;
};

static bool view_open(struct view *v, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st)) {
		close(fd);
		return false;
	}
	v->len = (size_t)st.st_size;
	v->map = mmap(NULL, v->len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (v->map == MAP_FAILED)
		return false;
	memcpy(&v->h, v->map, sizeof(v->h));
	return true;
}

static const struct dao_pub_area *view_area(const struct view *v, uint64_t off)
{
	return (const void *)((const char *)v->map + off);
}

static void read_summary(const struct view *v, struct dao_pub_summary *s)
{
	const struct dao_pub_area *a = view_area(v, v->h.summary_off);
	uint64_t seq;

	for (;;) {
		if (!dao_pub_read_begin(a, &seq))
			continue;
		dao_pub_read_words(a, 0, s, DAO_PUB_WORDS(*s));
		if (dao_pub_read_end(a, seq))
			return;
	}
}

static void read_table(const struct view *v, struct dao_pub_table *t, struct dao_pub_buf *b)
{
	const struct dao_pub_area *a = view_area(v, v->h.table_off);
	const size_t hw = DAO_PUB_WORDS(*t);
	uint64_t seq;

	for (;;) {
		if (!dao_pub_read_begin(a, &seq))
			continue;
		dao_pub_read_words(a, 0, t, hw);
		if (t->count > v->h.buf_cap)
			continue;
		dao_pub_read_words(a, hw, b, t->count * DAO_PUB_WORDS(*b));
		if (dao_pub_read_end(a, seq))
			return;
	}
}

static int noop(const dao_kernel_args *a)
{
	(void)a;
	return 0;
}

#define NBUF 6
#define UNIT 4096u

static dao_ctx open_job(uint64_t budget)
{
	dao_config cfg;
	dao_ctx ctx;

	dao_config_init(&cfg);
	cfg.backend = DAO_BACKEND_HOST;
	cfg.device_budget = budget;
	cfg.log_level = test_log_level();
	cfg.job_name = "publish-test";
	cfg.flags = DAO_CONFIG_PRIVATE;
	TEST_TRY(dao_open(&cfg, &ctx));
	return ctx;
}

static void test_segment(void)
{
	char path[300];
	struct view v;
	struct stat st;
	struct dao_pub_summary s;
	struct dao_pub_table t;
	struct dao_pub_buf *b;
	dao_stats ds;
	dao_buf bufs[NBUF];
	uint64_t sorted = 1, labels = 1, dist = 1;
	dao_ctx ctx;

	/* As slurmstepd sets it for every task. */
	setenv("SLURM_JOB_ID", "4242", 1);
	/* Room for the two largest operands of one kernel, not for all six. */
	ctx = open_job(11 * UNIT);
	unsetenv("SLURM_JOB_ID");

	tap_ok(find_own(path, sizeof(path)) == 1, "opening a context publishes one segment");
	tap_ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_uid == getuid(),
	       "the segment is readable by its owner only");
	if (!view_open(&v, path))
		tap_bail("cannot map %s", path);
	tap_ok(v.h.magic == DAO_PUB_MAGIC && v.h.version == DAO_PUB_VERSION &&
		       v.h.total_bytes == v.len,
	       "the header names the layout and the segment's size");
	tap_ok(v.h.pid == (uint32_t)getpid() && v.h.uid == getuid(), "pid and uid are the job's");
	{
		char stat_text[1024] = "";
		uint64_t start = 0;
		FILE *f = fopen("/proc/self/stat", "r");

		if (f) {
			if (!fgets(stat_text, sizeof(stat_text), f))
				stat_text[0] = 0;
			fclose(f);
		}
		tap_ok(dao_pub_stat_start_time(stat_text, &start) && start == v.h.start_time,
		       "the start time is the process's");
	}
	tap_ok(!strcmp(v.h.job, "publish-test") && !strcmp(v.h.backend, "host") &&
		       v.h.budget == 11 * UNIT,
	       "job name, backend and budget are the configured ones");
	tap_ok(v.h.slurm_job_id == 4242, "the header carries SLURM_JOB_ID (layout 2)");

	for (int i = 0; i < NBUF; i++) {
		char label[16];

		TEST_TRY(dao_buffer_create(ctx, (uint64_t)(i + 1) * UNIT, &bufs[i]));
		snprintf(label, sizeof(label), "b%d", i);
		TEST_TRY(dao_set_label(ctx, bufs[i], label));
	}
	for (int k = 0; k < 4 * NBUF; k++) {
		dao_operand ops[2] = { { bufs[k % NBUF], k < NBUF ? DAO_W : DAO_RW },
				       { bufs[(k + 1) % NBUF], DAO_R } };

		TEST_TRY(dao_launch(ctx, noop, NULL, ops, k < NBUF ? 1 : 2));
	}
	TEST_TRY(dao_sync(ctx));
	TEST_TRY(dao_stats_get(ctx, &ds));
	read_summary(&v, &s);
	TAP_IS_U64(s.kernels, ds.kernels, "summary: kernels as dao_stats_get");
	TAP_IS_U64(s.h2d_bytes, ds.h2d_bytes, "summary: h2d bytes as dao_stats_get");
	TAP_IS_U64(s.d2h_bytes, ds.d2h_bytes, "summary: d2h bytes as dao_stats_get");
	TAP_IS_U64(s.evictions, ds.evictions, "summary: evictions as dao_stats_get");
	TAP_IS_U64(s.fetches, ds.fetches, "summary: fetches as dao_stats_get");
	TAP_IS_U64(s.device_bytes, ds.device_bytes, "summary: device bytes as dao_stats_get");
	TAP_IS_U64(s.host_bytes, ds.host_bytes, "summary: host bytes as dao_stats_get");
	TAP_IS_U64(s.live_buffers, ds.live_buffers, "summary: live buffers as dao_stats_get");
	tap_ok(ds.evictions > 0, "the budget forced evictions (the check above means something)");
	TAP_IS_U64(s.policy, DAO_POLICY_DAO, "summary: the policy in force, dao (layout 3)");
	/* No policy chosen, an iteration marked after an eviction: plan. */
	TEST_TRY(dao_iteration(ctx));
	TEST_TRY(dao_sync(ctx));
	read_summary(&v, &s);
	tap_ok(s.policy == DAO_POLICY_PLAN &&
		       !strcmp(((const struct dao_pub_header *)v.map)->policy, "dao"),
	       "summary: plan in force after a mark; the header keeps the policy it opened with");

	b = calloc(v.h.buf_cap, sizeof(*b));
	if (!b)
		tap_bail("calloc failed");
	read_table(&v, &t, b);
	TAP_IS_U64(t.count, NBUF, "table: one entry per live buffer");
	for (uint64_t i = 0; i < t.count; i++) {
		char want[16];
		/* Largest first: buffer i has (i + 1) units, so entry i is buffer NBUF-1-i. */
		int idx = NBUF - 1 - (int)i;

		snprintf(want, sizeof(want), "b%d", idx);
		sorted &= b[i].size == (uint64_t)(idx + 1) * UNIT;
		labels &= !strcmp(b[i].label, want);
		/* Nothing is queued after the sync; every buffer was used. */
		dist &= b[i].next_use == DAO_PUB_NONE && b[i].since_last != DAO_PUB_NONE;
	}
	tap_ok(sorted, "table: largest first, with the sizes created");
	tap_ok(labels, "table: the labels set");
	tap_ok(dist, "table: no next use after the sync, a last use for each");
	{
		uint64_t on_dev = 0;

		for (uint64_t i = 0; i < t.count; i++)
			if (b[i].flags & DAO_PUB_LOC_DEVICE)
				on_dev += b[i].size;
		tap_ok(on_dev <= s.device_bytes,
		       "table: bytes shown on the device fit in the device bytes");
	}
	free(b);

	for (int i = 0; i < NBUF; i++)
		TEST_TRY(dao_release(ctx, bufs[i]));
	TEST_TRY(dao_close(ctx, NULL));
	tap_ok(access(path, F_OK) != 0, "closing the context removes its segment");
	munmap(v.map, v.len);
}

/* A launching thread while the test reads: counters only ever grow. */
struct runner {
	dao_ctx ctx;
	dao_buf bufs[NBUF];
	int kernels;
};

static void *run_kernels(void *arg)
{
	struct runner *r = arg;

	for (int k = 0; k < r->kernels; k++) {
		dao_operand ops[2] = { { r->bufs[k % NBUF], k < NBUF ? DAO_W : DAO_RW },
				       { r->bufs[(k + 1) % NBUF], DAO_R } };

		if (dao_launch(r->ctx, noop, NULL, ops, k < NBUF ? 1 : 2) != DAO_OK)
			break;
	}
	return NULL;
}

static void test_live(void)
{
	struct runner r = { .kernels = (int)test_env_u64("DAO_TEST_PUBLISH_KERNELS", 5000) };
	struct dao_pub_summary prev = { 0 }, s;
	uint64_t reads = 0, backwards = 0, over = 0;
	char path[300];
	struct view v;
	pthread_t t;

	r.ctx = open_job(11 * UNIT);
	for (int i = 0; i < NBUF; i++)
		TEST_TRY(dao_buffer_create(r.ctx, (uint64_t)(i + 1) * UNIT, &r.bufs[i]));
	if (find_own(path, sizeof(path)) != 1 || !view_open(&v, path))
		tap_bail("no segment for the live test");
	if (pthread_create(&t, NULL, run_kernels, &r))
		tap_bail("pthread_create failed");
	do {
		read_summary(&v, &s);
		reads++;
		backwards += s.kernels < prev.kernels || s.h2d_bytes < prev.h2d_bytes ||
			     s.evictions < prev.evictions || s.updates < prev.updates ||
			     s.ops < prev.ops;
		over += s.device_bytes > s.budget_bytes;
		prev = s;
		sched_yield(); /* the job needs the CPU more than the reader */
	} while (s.kernels < (uint64_t)r.kernels);
	pthread_join(t, NULL);
	tap_diag("%" PRIu64 " summaries read while %d kernels ran", reads, r.kernels);
	TAP_IS_U64(backwards, 0, "while the job runs, no counter ever goes back");
	TAP_IS_U64(over, 0, "while the job runs, device bytes stay within the budget");
	for (int i = 0; i < NBUF; i++)
		TEST_TRY(dao_release(r.ctx, r.bufs[i]));
	TEST_TRY(dao_close(r.ctx, NULL));
	munmap(v.map, v.len);
}

/* A job that exits without dao_close still leaves nothing behind. */
static void test_exit(void)
{
	char path[300];
	int status;
	pid_t pid = fork();

	if (pid < 0)
		tap_bail("fork failed");
	if (pid == 0) {
		dao_config cfg;
		dao_ctx ctx;

		dao_config_init(&cfg);
		cfg.backend = DAO_BACKEND_HOST;
		cfg.log_level = DAO_LOG_SILENT;
		cfg.flags = DAO_CONFIG_PRIVATE;
		if (dao_open(&cfg, &ctx) != DAO_OK)
			_exit(3);
		/* Its segment exists; exit() without dao_close must remove it. */
		exit(find_own(path, sizeof(path)) == 1 ? 0 : 4);
	}
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child job had its segment");
	tap_ok(count_for(pid) == 0, "a job exiting without dao_close removes its segment");
}

/* ------------------------------------------------------------ rebuild cost */

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#define MANY 100000u

/*
 * A rebuild of the table walks every live buffer. A job with many buffers
 * that syncs after every kernel must not pay that walk at every sync (it
 * once made each dao_sync 30 ms at a million buffers); once its ops pay for
 * the walk, a sync shows the current table again. Rebuilds are counted by
 * the table's sequence counter (two per rebuild); besides those the ops pay
 * for, only the periodic ones (one per 100 ms while the job runs) may occur.
 */
static void test_rebuild_cost(void)
{
	const uint32_t cycles = 200, pay = MANY / TABLE_WALK_PER_OP + 1;
	static dao_buf bufs[MANY];
	const struct dao_pub_area *a;
	struct dao_pub_table t;
	struct dao_pub_buf *b = NULL;
	char path[300], byte = 1;
	uint64_t seq0, seq1, ms0, ms;
	dao_operand op;
	struct view v;
	dao_ctx ctx = open_job(0);

	for (uint32_t i = 0; i < MANY; i++)
		TEST_TRY(dao_buffer_create(ctx, 256, &bufs[i]));
	op = (dao_operand){ .buf = bufs[0], .mode = DAO_RW };
	TEST_TRY(dao_write(ctx, bufs[0], 0, &byte, 1));
	if (find_own(path, sizeof(path)) != 1 || !view_open(&v, path))
		tap_bail("cannot map the job's segment");
	a = view_area(&v, v.h.table_off);
	seq0 = atomic_load(&a->seq);
	ms0 = mono_ms();
	for (uint32_t k = 0; k < cycles; k++) {
		TEST_TRY(dao_launch(ctx, noop, NULL, &op, 1));
		TEST_TRY(dao_sync(ctx));
	}
	seq1 = atomic_load(&a->seq);
	ms = mono_ms() - ms0;
	tap_ok((seq1 - seq0) / 2 <= 1 + ms / 100,
	       "%u syncs with %u live buffers rebuilt the table %llu times in %llu ms "
	       "(at most one per 100 ms besides what the ops pay for)",
	       cycles, MANY, (unsigned long long)((seq1 - seq0) / 2), (unsigned long long)ms);

	for (uint32_t k = 0; k < pay; k++)
		TEST_TRY(dao_launch(ctx, noop, NULL, &op, 1));
	seq0 = atomic_load(&a->seq);
	TEST_TRY(dao_sync(ctx));
	b = calloc(v.h.buf_cap ? v.h.buf_cap : 1, sizeof(*b));
	if (!b)
		tap_bail("out of memory");
	read_table(&v, &t, b);
	tap_ok(atomic_load(&a->seq) > seq0 && t.live == MANY,
	       "once the ops since the last rebuild pay for the walk, a sync rebuilds the table "
	       "(%llu live)", (unsigned long long)t.live);
	free(b);
	munmap(v.map, v.len);
	for (uint32_t i = 0; i < MANY; i++)
		TEST_TRY(dao_release(ctx, bufs[i]));
	TEST_TRY(dao_close(ctx, NULL));
}

int main(void)
{
	test_clear_env();
	test_protocol();
	test_hammer();
	test_segment();
	test_live();
	test_rebuild_cost();
	test_exit();
	tap_plan_done();
	return tap_exit();
}
