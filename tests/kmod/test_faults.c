// SPDX-License-Identifier: GPL-2.0
/*
 * test_faults.c - the module under the kernel's own fault injection
 * (Documentation/fault-injection/fault-injection.rst in the kernel tree).
 *
 * every_failure_point: each call the module serves (open, pins of every
 * kind, unpin, stats, version, a pin refused with an events listener, a
 * close that releases pins, netlink requests and dumps) is run once per
 * failure point it reaches, with that point failing: the N-th slab
 * allocation, page allocation (user pages GUP faults in included) or user
 * copy of the calling thread (fail-nth), N = 1, 2, ... until the call
 * reaches no N-th point. A failed call must return a documented errno, a
 * call whose failure the kernel absorbed must work, and after each one
 * nothing may be pinned or charged.
 *
 * killed_at_random_points: workers pin, unpin and reopen through /dev/dao
 * with failslab, fail_page_alloc and fail_usercopy failing 1 in 20 of
 * their own allocations and copies (make-it-fail, task-filter: the rest of
 * the VM sees no failure), while one of them at a time is killed by
 * SIGKILL at a random point up to 20 ms into its calls and replaced, for
 * DAO_FAULT_SECONDS (default 10) and at least MIN_KILLS kills.
 * Afterwards the node holds nothing, no process record is left, every page
 * pinned was unpinned; the suite checks the console (no WARN, BUG, KASAN,
 * lockdep or kmemleak report) and a clean rmmod.
 *
 * Kernels without CONFIG_FAULT_INJECTION (Debian's) skip both: their kills
 * without injection are test_kill's and test_fuzz's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util.h"

#define DEBUGFS "/sys/kernel/debug"
#define MAX_POINTS 4000 /* more would mean the loop never ends */

static const char *const injectors[] = { "failslab", "fail_page_alloc", "fail_usercopy" };

static int put(const char *dir, const char *name, const char *value)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s/%s", DEBUGFS, dir, name);
	return file_write(path, value);
}

static bool injection_available(void)
{
	for (size_t i = 0; i < sizeof(injectors) / sizeof(injectors[0]); i++) {
		char path[128];

		snprintf(path, sizeof(path), "%s/%s/probability", DEBUGFS, injectors[i]);
		if (access(path, W_OK))
			return false;
	}
	return access("/proc/self/fail-nth", W_OK) == 0 && access("/proc/self/make-it-fail", W_OK) == 0;
}

/*
 * Every injector counts (and fails) the calls we want: allocations that
 * may sleep, of any order, user pages too when user_pages. probability
 * percent of them fail in tasks with make-it-fail set; 0 leaves only
 * fail-nth, which is per thread anyway. The probability is set last: until
 * task-filter is on, it would fail any task's calls (this test's own
 * writes here included), and loudly until verbose is 0.
 */
static int injection_set(int probability, bool user_pages)
{
	char p[16];
	int ret = 0;

	snprintf(p, sizeof(p), "%d", probability);
	for (size_t i = 0; i < sizeof(injectors) / sizeof(injectors[0]); i++) {
		ret |= put(injectors[i], "task-filter", "Y");
		ret |= put(injectors[i], "verbose", "0");
		ret |= put(injectors[i], "interval", "1");
		ret |= put(injectors[i], "times", "-1");
		ret |= put(injectors[i], "space", "0");
	}
	ret |= put("failslab", "ignore-gfp-wait", "N");
	ret |= put("fail_page_alloc", "ignore-gfp-wait", "N");
	ret |= put("fail_page_alloc", "ignore-gfp-highmem", user_pages ? "N" : "Y");
	ret |= put("fail_page_alloc", "min-order", "0");
	for (size_t i = 0; i < sizeof(injectors) / sizeof(injectors[0]); i++)
		ret |= put(injectors[i], "probability", p);
	return ret;
}

/* The kernel's defaults: nothing fails (the probability first, for the
 * reason above). */
static void injection_off(void)
{
	for (size_t i = 0; i < sizeof(injectors) / sizeof(injectors[0]); i++)
		put(injectors[i], "probability", "0");
	for (size_t i = 0; i < sizeof(injectors) / sizeof(injectors[0]); i++) {
		put(injectors[i], "task-filter", "N");
		put(injectors[i], "times", "1");
		put(injectors[i], "verbose", "2");
	}
	put("failslab", "ignore-gfp-wait", "Y");
	put("fail_page_alloc", "ignore-gfp-wait", "Y");
	put("fail_page_alloc", "ignore-gfp-highmem", "Y");
	put("fail_page_alloc", "min-order", "1");
}

/* ------------------------------------------------------ every failure point */

/*
 * The calls run on a thread of their own, driven through memory only: its
 * fail-nth is set and read by the test's thread, so no syscall of the
 * driver's (whose user copies would count) lies between the two.
 */
struct victim {
	pthread_t th;
	atomic_int tid;
	atomic_uint seq, done;
	int (*call)(void *);
	void *arg;
	int result;
};

static void *victim_main(void *arg)
{
	struct victim *v = arg;
	unsigned int seen = 0;

	atomic_store(&v->tid, (int)syscall(SYS_gettid));
	for (;;) {
		unsigned int s;

		while ((s = atomic_load(&v->seq)) == seen)
			sched_yield();
		seen = s;
		if (!v->call)
			return NULL;
		v->result = v->call(v->arg);
		atomic_store(&v->done, s);
	}
}

static int victim_run(struct victim *v, int (*call)(void *), void *arg)
{
	unsigned int s;

	v->call = call;
	v->arg = arg;
	s = atomic_fetch_add(&v->seq, 1) + 1;
	while (atomic_load(&v->done) != s)
		sched_yield();
	return v->result;
}

/* Tells the victim to leave, and waits for it. */
static void victim_stop(struct victim *v)
{
	v->call = NULL;
	atomic_fetch_add(&v->seq, 1);
	pthread_join(v->th, NULL);
}

/* What one kind of call shares with its setup and cleanup. */
struct world {
	int fd;           /* the test's file, used by most calls */
	int other;        /* a second file: opened, or closed holding pins */
	char *small, *large, *shm;
	char *fresh;      /* untouched memory: GUP must fault it in */
	uint64_t handle, handle2;
	struct nl_sock *sk;
	struct nl_sock *events;
	int nprocs;
};

#define LARGE_PAGES 600 /* two GUP chunks, a page array larger than a page */
#define FRESH_PAGES 16
#define SHM_PAGES 8

static int call_open(void *arg)
{
	struct world *w = arg;

	w->other = dev_open();
	return w->other < 0 ? -errno : 0;
}

static int call_pin_small(void *arg)
{
	struct world *w = arg;

	return dev_pin(w->fd, w->small, page_size(), DAO_PIN_WRITE, &w->handle);
}

static int call_pin_fresh(void *arg)
{
	struct world *w = arg;

	return dev_pin(w->fd, w->fresh, FRESH_PAGES * page_size(), DAO_PIN_WRITE, &w->handle);
}

static int call_pin_large_ro(void *arg)
{
	struct world *w = arg;

	return dev_pin(w->fd, w->large, LARGE_PAGES * page_size(), 0, &w->handle);
}

static int call_pin_shmem(void *arg)
{
	struct world *w = arg;

	return dev_pin(w->fd, w->shm, SHM_PAGES * page_size(), DAO_PIN_WRITE, &w->handle);
}

static int call_unpin(void *arg)
{
	struct world *w = arg;
	int ret = dev_unpin(w->fd, w->handle);

	if (!ret)
		w->handle = 0;
	return ret;
}

static int call_stats(void *arg)
{
	struct dao_ioc_stats s;

	return dev_stats(((struct world *)arg)->fd, &s);
}

static int call_version(void *arg)
{
	struct dao_ioc_version v = { .argsz = sizeof(v) };

	return dev_ioctl(((struct world *)arg)->fd, DAO_IOC_VERSION, &v);
}

static int call_close_held(void *arg)
{
	struct world *w = arg;

	close(w->other);
	w->other = -1;
	return 0;
}

static int call_nl_node(void *arg)
{
	struct node_state st;

	return dnl_get_node(((struct world *)arg)->sk, &st);
}

static int call_nl_dump(void *arg)
{
	struct proc_state p[8];
	struct world *w = arg;

	return dnl_dump_procs(w->sk, p, 8, &w->nprocs);
}

struct kind {
	const char *name;
	int (*call)(void *);
	int plain; /* what the call returns when nothing fails */
	/* Errnos a failure may give besides ENOMEM (always allowed). */
	int allowed[3];
	int (*setup)(struct world *w);
	void (*cleanup)(struct world *w);
};

static int setup_none(struct world *w)
{
	return 0;
}

static void cleanup_pin(struct world *w)
{
	if (w->handle)
		dev_unpin(w->fd, w->handle);
	w->handle = 0;
}

static void cleanup_other(struct world *w)
{
	if (w->other >= 0)
		close(w->other);
	w->other = -1;
}

static int setup_fresh(struct world *w)
{
	w->fresh = mmap(NULL, FRESH_PAGES * page_size(), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return w->fresh == MAP_FAILED ? -errno : 0;
}

static void cleanup_fresh(struct world *w)
{
	cleanup_pin(w);
	munmap(w->fresh, FRESH_PAGES * page_size());
}

static int setup_unpin(struct world *w)
{
	return dev_pin(w->fd, w->small, page_size(), DAO_PIN_WRITE, &w->handle);
}

static int setup_close_held(struct world *w)
{
	w->other = dev_open();
	if (w->other < 0)
		return -errno;
	if (dev_pin(w->other, w->small, page_size(), DAO_PIN_WRITE, NULL) ||
	    dev_pin(w->other, w->large, LARGE_PAGES * page_size(), 0, NULL))
		return -EIO;
	return 0;
}

static int setup_refused(struct world *w)
{
	return limit_set_mb(0);
}

static void cleanup_refused(struct world *w)
{
	struct dao_event ev;

	cleanup_pin(w);
	limit_set_mb(64);
	while (dnl_event_next(w->events, &ev) == 0)
		;
}

/* A socket per request: a failed one may leave messages behind. */
static int setup_sock(struct world *w)
{
	return dnl_open(&w->sk);
}

static void cleanup_sock(struct world *w)
{
	dnl_close(w->sk);
	w->sk = NULL;
}

static const struct kind kinds[] = {
	{ "open", call_open, 0, { EFAULT }, setup_none, cleanup_other },
	{ "pin one page", call_pin_small, 0, { EFAULT }, setup_none, cleanup_pin },
	{ "pin pages GUP faults in", call_pin_fresh, 0, { EFAULT }, setup_fresh, cleanup_fresh },
	{ "pin 600 pages read-only", call_pin_large_ro, 0, { EFAULT }, setup_none, cleanup_pin },
	{ "pin shmem", call_pin_shmem, 0, { EFAULT }, setup_none, cleanup_pin },
	{ "unpin", call_unpin, 0, { EFAULT }, setup_unpin, cleanup_pin },
	{ "stats", call_stats, 0, { EFAULT }, setup_none, NULL },
	{ "version", call_version, 0, { EFAULT }, setup_none, NULL },
	{ "pin refused, events listened to", call_pin_small, -EDQUOT, { EFAULT }, setup_refused,
	  cleanup_refused },
	{ "close holding pins", call_close_held, 0, { 0 }, setup_close_held, cleanup_other },
	/* libnl says -EIO for a request it could not complete. */
	{ "netlink node", call_nl_node, 0, { EIO, ENOBUFS, EFAULT }, setup_sock, cleanup_sock },
	{ "netlink dump", call_nl_dump, 0, { EIO, ENOBUFS, EFAULT }, setup_sock, cleanup_sock },
};

static int nth_set(int fd, unsigned int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%u", n);

	return pwrite(fd, b, len, 0) == len ? 0 : -errno;
}

static long nth_get(int fd)
{
	char b[16] = { 0 };

	if (pread(fd, b, sizeof(b) - 1, 0) <= 0)
		return -1;
	return strtol(b, NULL, 10);
}

static bool allowed(const struct kind *k, int ret)
{
	if (ret == k->plain || ret == -ENOMEM)
		return true;
	for (size_t i = 0; i < sizeof(k->allowed) / sizeof(k->allowed[0]); i++)
		if (k->allowed[i] && ret == -k->allowed[i])
			return true;
	return false;
}

FIXTURE(faults)
{
	bool available;
};

FIXTURE_SETUP(faults)
{
	self->available = injection_available();
	if (self->available)
		ASSERT_EQ(0, limit_set_mb(64));
}

FIXTURE_TEARDOWN(faults)
{
	if (self->available)
		injection_off();
}

TEST_F_TIMEOUT(faults, every_failure_point, 600)
{
	long long acquired0, released0;
	struct world w = { .other = -1 };
	struct victim v = { 0 };
	struct node_state st;
	struct nl_sock *sk;
	char path[64];
	int nth, total = 0;

	if (!self->available)
		SKIP(return, "no fault injection in this kernel (CONFIG_FAULT_INJECTION_DEBUG_FS, "
			     "FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_USERCOPY)");
	ASSERT_EQ(0, injection_set(0, true));
	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, dnl_events_open(&w.events));
	acquired0 = vmstat_get("nr_foll_pin_acquired");
	released0 = vmstat_get("nr_foll_pin_released");
	w.fd = dev_open();
	ASSERT_LE(0, w.fd);
	w.small = map_pages(page_size(), PROT_READ | PROT_WRITE);
	w.large = map_pages(LARGE_PAGES * page_size(), PROT_READ | PROT_WRITE);
	w.shm = mmap(NULL, SHM_PAGES * page_size(), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(NULL, w.small);
	ASSERT_NE(NULL, w.large);
	ASSERT_NE(MAP_FAILED, w.shm);
	memset(w.shm, 1, SHM_PAGES * page_size());
	ASSERT_EQ(0, pthread_create(&v.th, NULL, victim_main, &v));
	while (!atomic_load(&v.tid))
		sched_yield();
	snprintf(path, sizeof(path), "/proc/self/task/%d/fail-nth", atomic_load(&v.tid));
	nth = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nth);

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		const struct kind *kd = &kinds[k];
		int failed = 0, absorbed = 0, n;

		/* Once without a failure: what the later runs are held to, and
		 * the victim's memory (stack, libnl's buffers) faulted in. */
		ASSERT_EQ(0, kd->setup(&w));
		ASSERT_EQ(kd->plain, victim_run(&v, kd->call, &w));
		if (kd->cleanup)
			kd->cleanup(&w);
		for (n = 1; n <= MAX_POINTS; n++) {
			struct dao_ioc_stats s;
			long left;
			int ret;

			ASSERT_EQ(0, kd->setup(&w));
			ASSERT_EQ(0, nth_set(nth, n));
			ret = victim_run(&v, kd->call, &w);
			left = nth_get(nth);
			ASSERT_EQ(0, nth_set(nth, 0));
			if (kd->cleanup)
				kd->cleanup(&w);
			ASSERT_LE(0, left);
			/* Nothing held, nothing charged, whatever happened. */
			ASSERT_EQ(0, dev_stats(w.fd, &s));
			EXPECT_EQ(0, s.pinned_bytes);
			EXPECT_EQ(0, s.regions);
			EXPECT_EQ(0, vmpin_kb(getpid()));
			ASSERT_EQ(0, dnl_get_node(sk, &st));
			EXPECT_EQ(0, st.pinned);
			if (left > 0) {
				/* The call reached fewer than n points: all were tried. */
				EXPECT_EQ(kd->plain, ret)
					TH_LOG("%s gave %d without an injected fault", kd->name, ret);
				break;
			}
			EXPECT_TRUE(allowed(kd, ret))
				TH_LOG("%s: failure point %d gave %d (%s)", kd->name, n, ret,
				       strerror(-ret));
			if (ret != kd->plain)
				failed++;
			else
				absorbed++;
		}
		EXPECT_GE(MAX_POINTS, n);
		TH_LOG("%-32s %3d failure points: %3d failed cleanly, %3d absorbed by the kernel",
		       kd->name, n - 1, failed, absorbed);
		total += n - 1;
	}
	TH_LOG("%d failure points in all", total);
	/* Something was injected at all, or the test proved nothing. */
	EXPECT_LT(0, total);

	victim_stop(&v);
	close(nth);
	close(w.fd);
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(0, st.pinned);
	EXPECT_EQ(0, st.procs);
	EXPECT_EQ(vmstat_get("nr_foll_pin_acquired") - acquired0,
		  vmstat_get("nr_foll_pin_released") - released0);
	dnl_close(w.events);
	dnl_close(sk);
}

/* ------------------------------------------------- killed at random points */

#define WORKERS 4
#define HELD 8
#define WORKER_PAGES 256
#define PERCENT 5 /* of the workers' allocations and copies that fail */
/* Kills however slow the host: a worker's start (fork, its memory faulted
 * in and locked) takes seconds under KASAN on a loaded TCG host. */
#define MIN_KILLS 8

struct tally { /* per worker slot, in shared memory */
	atomic_long calls, pins, enomem, efault, opens_failed, unexpected;
	atomic_int last_unexpected; /* errno, and which call: kind * 1000 + errno */
	atomic_int running; /* pid of the worker that has begun its calls */
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static void count(struct tally *t, int kind, int ret)
{
	if (!ret)
		return;
	if (ret == -ENOMEM) {
		atomic_fetch_add(&t->enomem, 1);
	} else if (ret == -EFAULT) {
		atomic_fetch_add(&t->efault, 1);
	} else {
		atomic_fetch_add(&t->unexpected, 1);
		atomic_store(&t->last_unexpected, kind * 1000 - ret);
	}
}

/* Pins and unpins until killed, its own allocations failing at random. */
static void worker(struct tally *t, uint64_t seed)
{
	char *buf = map_pages(WORKER_PAGES * page_size(), PROT_READ | PROT_WRITE);
	uint64_t h[HELD] = { 0 };
	size_t pg = page_size();
	int fd = -1, mif;

	if (!buf)
		_exit(2);
	/* No page faults from here: a failed one would be retried, noisily. */
	mlockall(MCL_CURRENT | MCL_FUTURE);
	mif = open("/proc/self/make-it-fail", O_WRONLY | O_CLOEXEC);
	if (mif < 0 || write(mif, "1", 1) != 1)
		_exit(3);
	close(mif);
	atomic_store(&t->running, getpid());
	for (;;) {
		unsigned int r = rnd(&seed) % 100, slot = rnd(&seed) % HELD;
		int ret;

		atomic_fetch_add(&t->calls, 1);
		if (fd < 0) {
			fd = dev_open();
			if (fd < 0) {
				atomic_fetch_add(&t->opens_failed, 1);
				count(t, 1, errno == ENOMEM ? 0 : -errno);
			}
			continue;
		}
		if (r < 60 && !h[slot]) {
			size_t pages = 1 + rnd(&seed) % (WORKER_PAGES / 2);
			size_t off = rnd(&seed) % (WORKER_PAGES - pages);

			ret = dev_pin(fd, buf + off * pg, pages * pg,
				      rnd(&seed) & 1 ? DAO_PIN_WRITE : 0, &h[slot]);
			if (!ret)
				atomic_fetch_add(&t->pins, 1);
			count(t, 2, ret);
		} else if (r < 90 && h[slot]) {
			/* Only the copy of the argument can fail. */
			ret = dev_unpin(fd, h[slot]);
			if (!ret)
				h[slot] = 0;
			count(t, 3, ret == -ENOMEM ? -ENOTRECOVERABLE : ret);
		} else if (r < 97) {
			struct dao_ioc_stats s;

			count(t, 4, dev_stats(fd, &s));
		} else {
			close(fd); /* releases what is still pinned */
			fd = -1;
			memset(h, 0, sizeof(h));
		}
	}
}

static pid_t start_worker(struct tally *t, uint64_t seed)
{
	pid_t pid = fork();

	if (!pid) {
		worker(t, seed);
		_exit(0);
	}
	return pid;
}

TEST_F_TIMEOUT(faults, killed_at_random_points, 600)
{
	const char *env = getenv("DAO_FAULT_SECONDS");
	int seconds = env ? atoi(env) : 10;
	uint64_t seed = (uint64_t)time(NULL) * 2654435761u | 1;
	struct tally *t = mmap(NULL, WORKERS * sizeof(*t), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long long acquired0, released0, kills = 0, calls = 0, pins = 0, enomem = 0, efault = 0;
	long long opens_failed = 0, unexpected = 0;
	struct proc_state procs[4];
	struct timespec end, now;
	struct node_state st;
	struct nl_sock *sk;
	pid_t kids[WORKERS];
	int nprocs, i;

	if (!self->available)
		SKIP(return, "no fault injection in this kernel");
	ASSERT_NE(MAP_FAILED, t);
	/* Room for every pin: a refusal here would not be the injection's. */
	ASSERT_EQ(0, limit_set_mb(1024));
	ASSERT_EQ(0, injection_set(PERCENT, false));
	ASSERT_EQ(0, dnl_open(&sk));
	acquired0 = vmstat_get("nr_foll_pin_acquired");
	released0 = vmstat_get("nr_foll_pin_released");
	TH_LOG("seed %llu, %d s (DAO_FAULT_SECONDS), %d%% of the workers' allocations and "
	       "copies failing", (unsigned long long)seed, seconds, PERCENT);
	for (i = 0; i < WORKERS; i++) {
		kids[i] = start_worker(&t[i], rnd(&seed));
		ASSERT_LT(0, kids[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += seconds;
	do {
		/* A random point in a worker's calls: up to 20 ms after they
		 * began. A worker's start (its memory faulted in and locked)
		 * takes seconds on a loaded TCG host, so the kill waits for
		 * it, or every kill would land before the first call. */
		struct timespec pause = { 0, (long)(rnd(&seed) % 20000000) };
		struct timespec tick = { 0, 1000000 };
		int status, k = rnd(&seed) % WORKERS;

		while (atomic_load(&t[k].running) != kids[k] && !waitpid(kids[k], &status, WNOHANG))
			nanosleep(&tick, NULL);
		ASSERT_EQ(kids[k], atomic_load(&t[k].running))
			TH_LOG("worker ended before its first call, status %#x", status);
		nanosleep(&pause, NULL);
		ASSERT_EQ(0, kill(kids[k], SIGKILL));
		ASSERT_EQ(kids[k], waitpid(kids[k], &status, 0));
		/* Killed, not crashed nor exited on a failed setup. */
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			TH_LOG("worker ended with status %#x", status);
		kills++;
		kids[k] = start_worker(&t[k], rnd(&seed));
		ASSERT_LT(0, kids[k]);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (kills < MIN_KILLS || now.tv_sec < end.tv_sec ||
		 (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	for (i = 0; i < WORKERS; i++) {
		int status;

		kill(kids[i], SIGKILL);
		waitpid(kids[i], &status, 0);
	}
	injection_off();

	for (i = 0; i < WORKERS; i++) {
		calls += t[i].calls;
		pins += t[i].pins;
		enomem += t[i].enomem;
		efault += t[i].efault;
		opens_failed += t[i].opens_failed;
		unexpected += t[i].unexpected;
		EXPECT_EQ(0, t[i].unexpected)
			TH_LOG("worker slot %d: call kind %d gave errno %d", i,
			       t[i].last_unexpected / 1000, t[i].last_unexpected % 1000);
	}
	TH_LOG("%lld kills, %lld calls, %lld pins; failed cleanly: %lld ENOMEM, %lld EFAULT, "
	       "%lld opens; %lld undocumented", kills, calls, pins, enomem, efault, opens_failed,
	       unexpected);
	/* The module pinned, and the injection reached it, or nothing was shown. */
	EXPECT_LT(0, pins);
	EXPECT_LT(0, enomem);
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(0, st.pinned);
	EXPECT_EQ(0, st.procs);
	ASSERT_EQ(0, dnl_dump_procs(sk, procs, 4, &nprocs));
	EXPECT_EQ(0, nprocs);
	EXPECT_EQ(vmstat_get("nr_foll_pin_acquired") - acquired0,
		  vmstat_get("nr_foll_pin_released") - released0);
	dnl_close(sk);
}

TEST_HARNESS_MAIN
