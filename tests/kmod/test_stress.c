// SPDX-License-Identifier: GPL-2.0
/*
 * test_stress.c - 16 processes of several threads pin and unpin at random
 * under a node limit they overrun, for a bounded time. Every counter the
 * module keeps must agree with what the processes did, during and after.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util.h"

#define PROCS 16
#define THREADS 4
#define HELD 4          /* regions a thread holds at most */
#define BUF_PAGES 256
#define LIMIT_MB 1
#define RUN_SECONDS 4
#define MAX_OPS 4000    /* per thread, for slow machines */

struct tally {          /* one per process, in shared memory */
	long long pinned_bytes, regions, refused, ops, errors;
};

struct worker {
	int fd;
	char *buf;
	unsigned int seed;
	struct timespec deadline;
	long long pinned_bytes, regions, refused, ops, errors;
};

static int before(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec < deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec && now.tv_nsec < deadline->tv_nsec);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	size_t pg = page_size();
	uint64_t h[HELD] = { 0 }, len[HELD] = { 0 };
	int i;

	while (w->ops < MAX_OPS && before(&w->deadline)) {
		int slot = rand_r(&w->seed) % HELD;

		w->ops++;
		if (h[slot]) {
			if (dev_unpin(w->fd, h[slot]))
				w->errors++;
			w->pinned_bytes -= len[slot];
			w->regions--;
			h[slot] = 0;
		} else {
			size_t pages = 1 + rand_r(&w->seed) % 16;
			size_t off = rand_r(&w->seed) % (BUF_PAGES - pages);
			int ret = dev_pin(w->fd, w->buf + off * pg, pages * pg,
					  rand_r(&w->seed) & 1 ? DAO_PIN_WRITE : 0, &h[slot]);

			if (ret == -EDQUOT) {
				w->refused++;
			} else if (ret) {
				w->errors++;
			} else {
				len[slot] = pages * pg;
				w->pinned_bytes += len[slot];
				w->regions++;
			}
		}
	}
	/* Leave half the regions pinned: close must release them. */
	for (i = 0; i < HELD; i += 2) {
		if (h[i]) {
			if (dev_unpin(w->fd, h[i]))
				w->errors++;
			w->pinned_bytes -= len[i];
			w->regions--;
		}
	}
	return NULL;
}

static int one_process(int index, struct tally *t, int go)
{
	struct worker w[THREADS];
	pthread_t th[THREADS];
	struct dao_ioc_stats s;
	char *buf = map_pages(BUF_PAGES * page_size(), PROT_READ | PROT_WRITE);
	int fd = dev_open(), i;
	char c;

	if (!buf || fd < 0)
		return 1;
	/* All processes start together. */
	if (read(go, &c, 1) != 0)
		return 2;
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .fd = fd, .buf = buf, .seed = index * 131 + i };
		clock_gettime(CLOCK_MONOTONIC, &w[i].deadline);
		w[i].deadline.tv_sec += RUN_SECONDS;
		if (pthread_create(&th[i], NULL, work, &w[i]))
			return 3;
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		t->pinned_bytes += w[i].pinned_bytes;
		t->regions += w[i].regions;
		t->refused += w[i].refused;
		t->ops += w[i].ops;
		t->errors += w[i].errors;
	}
	if (dev_stats(fd, &s))
		return 4;
	/* The file's counters are what the threads did. */
	if (s.pinned_bytes != (uint64_t)t->pinned_bytes || s.regions != (uint64_t)t->regions ||
	    s.refused != (uint64_t)t->refused || s.peak_bytes > LIMIT_MB * MiB)
		return 5;
	if (vmpin_kb(getpid()) != (long)(s.pinned_bytes / 1024))
		return 6;
	return t->errors ? 7 : 0;
}

FIXTURE(stress)
{
	int unused;
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

TEST_F_TIMEOUT(stress, random_pins_keep_counters_consistent, 120)
{
	struct tally *t = mmap(NULL, PROCS * sizeof(*t), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long long acquired0 = vmstat_get("nr_foll_pin_acquired");
	long long released0 = vmstat_get("nr_foll_pin_released");
	long long refused = 0, ops = 0;
	struct node_state st0, st;
	struct nl_sock *sk;
	pid_t kids[PROCS];
	int go[2], i, polls = 0, running;

	ASSERT_NE(MAP_FAILED, t);
	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, limit_set_mb(LIMIT_MB));
	ASSERT_EQ(0, dnl_get_node(sk, &st0));
	ASSERT_EQ(0, pipe(go));
	for (i = 0; i < PROCS; i++) {
		kids[i] = fork();
		ASSERT_LE(0, kids[i]);
		if (!kids[i]) {
			close(go[1]);
			_exit(one_process(i, &t[i], go[0]));
		}
	}
	close(go[0]);
	close(go[1]);

	/* While they run, the node never holds more than its limit. */
	do {
		int status;

		ASSERT_EQ(0, dnl_get_node(sk, &st));
		EXPECT_LE(st.pinned, LIMIT_MB * MiB);
		EXPECT_LE(st.procs, PROCS);
		polls++;
		running = 0;
		for (i = 0; i < PROCS; i++) {
			if (!kids[i])
				continue;
			if (waitpid(kids[i], &status, WNOHANG) == kids[i]) {
				EXPECT_TRUE(WIFEXITED(status));
				EXPECT_EQ(0, WEXITSTATUS(status));
				kids[i] = 0;
			} else {
				running++;
			}
		}
	} while (running);

	for (i = 0; i < PROCS; i++) {
		refused += t[i].refused;
		ops += t[i].ops;
	}
	TH_LOG("%lld operations, %lld refused, %d polls", ops, refused, polls);
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(0, st.pinned);
	EXPECT_EQ(0, st.procs);
	EXPECT_EQ(refused, st.refused - st0.refused);
	/* The limit was overrun, or the test did not test it. */
	EXPECT_LT(0, refused);
	EXPECT_EQ(vmstat_get("nr_foll_pin_acquired") - acquired0,
		  vmstat_get("nr_foll_pin_released") - released0);
	dnl_close(sk);
}

TEST_HARNESS_MAIN
