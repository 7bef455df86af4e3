// SPDX-License-Identifier: GPL-2.0
/*
 * test_fuzz.c - a randomized ioctl storm against /dev/dao: valid and
 * invalid structs of random sizes from racing threads, mappings that come
 * and go under them, forked children, workers killed in the middle and
 * exiting owners. Afterwards the node must hold nothing: no pins, no
 * processes, FOLL_PIN counters balanced (the suite then checks a clean
 * rmmod and a console without a splat).
 *
 * DAO_FUZZ_SECONDS (default 10) and DAO_FUZZ_SEED (default: the time) steer
 * it; the seed is printed so a failure can be replayed.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util.h"

#define WORKERS 4   /* processes with /dev/dao open */
#define THREADS 3   /* ioctl threads per worker, plus one remapping */
#define SLOTS 8     /* mappings per worker that come and go */
#define SLOT_PAGES 64

/* xorshift64*: per-thread, seeded from the run's seed. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

struct worker {
	int dev;
	uint64_t seed;
	char *slot[SLOTS];
	_Atomic uint64_t handles[16];
	atomic_int stop;
	atomic_long bad; /* an errno the interface does not document */
};

static const unsigned long cmds[] = {
	DAO_IOC_VERSION, DAO_IOC_PIN, DAO_IOC_UNPIN, DAO_IOC_STATS,
	_IO(DAO_IOC_MAGIC, 0x04), _IOWR(DAO_IOC_MAGIC, 0x01, struct dao_ioc_pin), 0,
};

static int errno_documented(int e)
{
	switch (e) {
	case 0: case EINVAL: case E2BIG: case EFAULT: case ENOENT: case ENOMEM:
	case EDQUOT: case EOPNOTSUPP: case ENOTTY: case EACCES: case EINTR:
		return 1;
	}
	return 0;
}

static void *random_addr(struct worker *w, uint64_t *s)
{
	size_t pg = page_size();
	char *base = w->slot[rnd(s) % SLOTS];

	switch (rnd(s) % 8) {
	case 0:
		return NULL;
	case 1:
		return (void *)(uintptr_t)rnd(s);
	case 2:
		return (void *)(uintptr_t)(~0ULL - pg + 1);
	default:
		return base + (rnd(s) % SLOT_PAGES) * pg + (rnd(s) % 16 ? 0 : rnd(s) % pg);
	}
}

static uint64_t random_length(uint64_t *s)
{
	size_t pg = page_size();

	switch (rnd(s) % 8) {
	case 0:
		return rnd(s);
	case 1:
		return 0;
	case 2:
		return rnd(s) % (1ULL << 40) * pg;
	default:
		return (1 + rnd(s) % (SLOT_PAGES * 2)) * pg;
	}
}

/* One ioctl with an argument that is sometimes right and often not. */
static void one_call(struct worker *w, uint64_t *s, char *argbuf)
{
	size_t pg = page_size();
	unsigned long cmd = cmds[rnd(s) % (sizeof(cmds) / sizeof(cmds[0]))];
	union {
		struct dao_ioc_pin pin;
		struct dao_ioc_unpin unpin;
		struct dao_ioc_stats stats;
		struct dao_ioc_version version;
		unsigned char raw[128];
	} *u = (void *)(argbuf + pg - 128);
	void *arg = u;
	int ret;

	memset(u, 0, sizeof(*u));
	if (cmd == DAO_IOC_PIN) {
		u->pin.flags = rnd(s) % 4 ? (rnd(s) & 1) : (uint32_t)rnd(s);
		u->pin.addr = (uintptr_t)random_addr(w, s);
		u->pin.length = random_length(s);
		u->pin.argsz = sizeof(u->pin);
	} else if (cmd == DAO_IOC_UNPIN) {
		u->unpin.handle = rnd(s) % 4 ? w->handles[rnd(s) % 16] : rnd(s) % 64;
		u->unpin.flags = rnd(s) % 8 ? 0 : (uint32_t)rnd(s);
		u->unpin.argsz = sizeof(u->unpin);
	} else {
		u->stats.argsz = sizeof(u->stats);
	}
	/* Sizes: right, older, newer with zero or junk tail, absurd. */
	switch (rnd(s) % 8) {
	case 0:
		u->pin.argsz = rnd(s) % 129;
		break;
	case 1:
		u->pin.argsz = (uint32_t)rnd(s);
		break;
	case 2:
		u->raw[100 + rnd(s) % 28] = (unsigned char)rnd(s);
		u->pin.argsz = 128;
		break;
	case 3:
		u->pin.argsz = 128;
		break;
	}
	/* Arguments where there is no memory, or where it ends. */
	switch (rnd(s) % 16) {
	case 0:
		arg = NULL;
		break;
	case 1:
		arg = (void *)(uintptr_t)rnd(s);
		break;
	case 2:
		/* The last bytes of the page before an unmapped one. */
		arg = argbuf + pg - 4;
		*(uint32_t *)arg = 64;
		break;
	}
	ret = ioctl(w->dev, cmd, arg) ? errno : 0;
	if (!errno_documented(ret)) {
		fprintf(stderr, "# cmd %#lx: unexpected errno %d\n", cmd, ret);
		atomic_fetch_add(&w->bad, 1);
	}
	if (!ret && cmd == DAO_IOC_PIN && arg == u)
		w->handles[rnd(s) % 16] = u->pin.handle;
}

static void *caller(void *arg)
{
	struct worker *w = arg;
	uint64_t s = rnd(&w->seed) | 1;
	size_t pg = page_size();
	/* Two pages: the argument lives at the end of the first. */
	char *argbuf = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (argbuf == MAP_FAILED)
		return NULL;
	munmap(argbuf + pg, pg);
	while (!atomic_load(&w->stop))
		one_call(w, &s, argbuf);
	return NULL;
}

/* Mappings come and go, change protection, are hole-punched, under pins. */
static void *remapper(void *arg)
{
	struct worker *w = arg;
	uint64_t s = rnd(&w->seed) | 1;
	size_t len = SLOT_PAGES * page_size();

	while (!atomic_load(&w->stop)) {
		char *p = w->slot[rnd(&s) % SLOTS];

		switch (rnd(&s) % 4) {
		case 0:
			mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			     -1, 0);
			break;
		case 1:
			mprotect(p, len, rnd(&s) & 1 ? PROT_NONE : PROT_READ);
			break;
		case 2:
			madvise(p, len, MADV_DONTNEED);
			break;
		case 3:
			mprotect(p, len, PROT_READ | PROT_WRITE);
			memset(p, 1, len / 2);
			break;
		}
	}
	return NULL;
}

static void worker_main(uint64_t seed, int seconds)
{
	static struct worker w;
	pthread_t th[THREADS + 1];
	size_t len = SLOT_PAGES * page_size();
	int status;

	w.seed = seed | 1;
	w.dev = dev_open();
	if (w.dev < 0)
		_exit(2);
	for (int i = 0; i < SLOTS; i++) {
		w.slot[i] = map_pages(len, PROT_READ | PROT_WRITE);
		if (!w.slot[i])
			_exit(3);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, caller, &w);
	pthread_create(&th[THREADS], NULL, remapper, &w);
	/*
	 * A forked child, made while the pinners run, may not use its
	 * parent's file. It exits at once; if the worker is killed first,
	 * the test (a subreaper) waits for it before counting.
	 */
	if (!(seed % 3)) {
		pid_t kid = fork();

		if (!kid) {
			struct dao_ioc_stats st;

			_exit(dev_stats(w.dev, &st) == -EACCES ? 0 : 4);
		}
		if (kid > 0 && (waitpid(kid, &status, 0) != kid || !WIFEXITED(status) ||
				WEXITSTATUS(status)))
			atomic_fetch_add(&w.bad, 1);
	}
	sleep(seconds);
	atomic_store(&w.stop, 1);
	for (int i = 0; i <= THREADS; i++)
		pthread_join(th[i], NULL);
	/* Some leave their pins for close or exit to release. */
	if (seed & 1)
		close(w.dev);
	_exit(atomic_load(&w.bad) ? 1 : 0);
}

FIXTURE(fuzz) {};
FIXTURE_SETUP(fuzz) {}
FIXTURE_TEARDOWN(fuzz) {}

/* The harness's default of 30 s is shorter than a debug run. */
TEST_F_TIMEOUT(fuzz, random_ioctls, 900)
{
	const char *env_s = getenv("DAO_FUZZ_SECONDS"), *env_seed = getenv("DAO_FUZZ_SEED");
	int seconds = env_s ? atoi(env_s) : 10;
	uint64_t seed = env_seed ? strtoull(env_seed, NULL, 0) : (uint64_t)time(NULL);
	long long limit0 = param_get("max_pinned_mb");
	pid_t kids[WORKERS];
	struct node_state st;
	struct nl_sock *sk;
	time_t end;
	int killed = 0, spawned = 0, bad = 0, status;
	uint64_t s;

	printf("# seed %llu, %d s (DAO_FUZZ_SEED, DAO_FUZZ_SECONDS)\n",
	       (unsigned long long)seed, seconds);
	fflush(stdout);
	s = seed | 1;
	ASSERT_EQ(0, limit_set_mb(64));
	/* Workers' children orphaned by a kill come back to us. */
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	end = time(NULL) + seconds;
	for (int i = 0; i < WORKERS; i++)
		kids[i] = -1;
	while (time(NULL) < end) {
		int i = rnd(&s) % WORKERS;

		if (kids[i] > 0) {
			/* Killed in the middle of whatever it was doing. */
			kill(kids[i], SIGKILL);
			ASSERT_EQ(kids[i], waitpid(kids[i], &status, 0));
			killed++;
		}
		fflush(stdout);
		kids[i] = fork();
		ASSERT_LE(0, kids[i]);
		if (!kids[i])
			worker_main(rnd(&s), 1 + rnd(&s) % 3);
		spawned++;
		usleep(200000 + rnd(&s) % 800000);
		/* Those that finished on their own report their errnos. */
		for (int j = 0; j < WORKERS; j++) {
			if (kids[j] > 0 && waitpid(kids[j], &status, WNOHANG) == kids[j]) {
				if (!WIFEXITED(status) || WEXITSTATUS(status))
					bad++;
				kids[j] = -1;
			}
		}
	}
	for (int i = 0; i < WORKERS; i++) {
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
	}
	/* Every descendant is gone, and with it every reference to a file. */
	while (waitpid(-1, &status, 0) > 0)
		if (WIFEXITED(status) && WEXITSTATUS(status))
			bad++;
	EXPECT_EQ(ECHILD, errno);
	printf("# %d workers, %d killed\n", spawned, killed);
	EXPECT_EQ(0, bad);

	/* Nothing is left behind. */
	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(0, st.pinned);
	EXPECT_EQ(0, st.procs);
	EXPECT_EQ(vmstat_get("nr_foll_pin_acquired"), vmstat_get("nr_foll_pin_released"));
	dnl_close(sk);
	ASSERT_EQ(0, limit_set_mb(limit0));
}

TEST_HARNESS_MAIN
