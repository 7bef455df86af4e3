// SPDX-License-Identifier: GPL-2.0
/*
 * test_fork.c - forks, exits and closes racing pins in flight: an opener
 * whose threads keep pinning forks children that exit at once or hold the
 * fd past the opener's death, then exits or is killed mid-pin; and closes
 * that release thousands of regions, longer than an SRCU grace period.
 * Afterwards the node holds nothing and the FOLL_PIN counters balance; the
 * debug kernel's KASAN, lockdep and WARN checks watch the console.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util.h"

#define ROUNDS 48        /* openers, each forking and exiting mid-pin */
#define PINNERS 2        /* pinning threads per opener */
#define FORKS 4          /* children per opener */
#define BUF_PAGES 64
#define CLOSE_REGIONS 16384

struct opener {
	int dev;
	char *buf;
	atomic_long pins; /* successful PINs so far */
	atomic_long bad;  /* a PIN or UNPIN failing in a way it should not */
};

/* PIN and UNPIN in a loop until the process goes; a few pins stay. */
static void *pinner(void *arg)
{
	struct opener *o = arg;
	size_t pg = page_size();
	uint64_t held[8] = { 0 };
	unsigned int i = 0;

	for (;;) {
		uint64_t *h = &held[i++ % 8];
		int ret;

		if (*h && dev_unpin(o->dev, *h))
			atomic_fetch_add(&o->bad, 1);
		*h = 0;
		ret = dev_pin(o->dev, o->buf + (i % (BUF_PAGES - 4)) * pg, (1 + i % 4) * pg,
			      DAO_PIN_WRITE, h);
		/* The only refusal a root job under the node limit may see. */
		if (ret && ret != -EINTR)
			atomic_fetch_add(&o->bad, 1);
		if (!ret)
			atomic_fetch_add(&o->pins, 1);
	}
	return NULL;
}

/* Until the pinners have made n pins; a pinner failing ends the opener. */
static void wait_pins(struct opener *o, long n)
{
	while (atomic_load(&o->pins) < n) {
		if (atomic_load(&o->bad))
			_exit(1);
		sched_yield();
	}
}

/*
 * One opener. Its children: the first holds the fd until the opener is
 * dead (a pipe's EOF) and so closes it after the opener's mm is gone; the
 * middle ones exit at once and are waited for; the last exits at once,
 * racing the opener's own exit. Then it tells the test it is ready and
 * exits, or is killed, with its pinners mid-pin.
 */
static void opener_main(unsigned int round, int ready)
{
	static struct opener o;
	pthread_t th[PINNERS];
	int holder[2];

	o.dev = dev_open();
	o.buf = map_pages(BUF_PAGES * page_size(), PROT_READ | PROT_WRITE);
	if (o.dev < 0 || !o.buf || pipe(holder))
		_exit(2);
	for (int i = 0; i < PINNERS; i++)
		if (pthread_create(&th[i], NULL, pinner, &o))
			_exit(3);
	for (int i = 0; i < FORKS; i++) {
		pid_t kid;

		wait_pins(&o, 4 * (i + 1));
		kid = fork();
		if (kid < 0)
			_exit(4);
		if (!kid) {
			char c;

			close(ready);
			close(holder[1]);
			if (i == 0 && read(holder[0], &c, 1) < 0)
				_exit(5);
			_exit(0);
		}
		if (i > 0 && i < FORKS - 1 && waitpid(kid, NULL, 0) != kid)
			_exit(6);
	}
	if (write(ready, "r", 1) != 1)
		_exit(7);
	/* Odd rounds are killed by the test mid-pin; even ones exit mid-pin. */
	if (round & 1)
		pause();
	_exit(atomic_load(&o.bad) ? 1 : 0);
}

/* Reaps every descendant, the orphaned grandchildren included. */
static int reap_all(int *failed)
{
	int status, n = 0;
	pid_t pid;

	while ((pid = waitpid(-1, &status, 0)) > 0) {
		n++;
		if ((WIFEXITED(status) && WEXITSTATUS(status)) ||
		    (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)) {
			printf("# pid %d: status %#x\n", pid, status);
			(*failed)++;
		}
	}
	return errno == ECHILD ? n : -errno;
}

static void expect_node_empty(struct __test_metadata *_metadata, long long acquired0,
			      long long released0)
{
	struct node_state st;
	struct nl_sock *sk;

	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(0, st.pinned);
	EXPECT_EQ(0, st.procs);
	dnl_close(sk);
	EXPECT_EQ(vmstat_get("nr_foll_pin_acquired") - acquired0,
		  vmstat_get("nr_foll_pin_released") - released0);
}

FIXTURE(lifetime) {};
FIXTURE_SETUP(lifetime) {}
FIXTURE_TEARDOWN(lifetime) {}

/* The harness's default of 30 s is shorter than a run on the debug kernel. */
TEST_F_TIMEOUT(lifetime, fork_and_exit_while_pinning, 600)
{
	long long acquired0 = vmstat_get("nr_foll_pin_acquired");
	long long released0 = vmstat_get("nr_foll_pin_released");
	int failed = 0, reaped = 0;

	/* Grandchildren whose opener died come back to us, to be waited for. */
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	for (unsigned int r = 0; r < ROUNDS; r++) {
		int ready[2], n;
		pid_t pid;
		char c;

		ASSERT_EQ(0, pipe(ready));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close(ready[0]);
			opener_main(r, ready[1]);
		}
		close(ready[1]);
		/* EOF instead means the opener died early: reap_all reports it. */
		if (read(ready[0], &c, 1) == 1 && (r & 1))
			kill(pid, SIGKILL);
		close(ready[0]);
		n = reap_all(&failed);
		ASSERT_LE(0, n);
		reaped += n;
	}
	EXPECT_EQ(0, failed);
	/* Each round: the opener, the holder and the last child. */
	EXPECT_EQ(ROUNDS * 3, reaped);
	expect_node_empty(_metadata, acquired0, released0);
}

/*
 * A close that releases thousands of regions takes longer than an SRCU
 * grace period; the file must outlive the whole teardown.
 */
TEST_F_TIMEOUT(lifetime, close_releases_many_regions, 600)
{
	long long acquired0 = vmstat_get("nr_foll_pin_acquired");
	long long released0 = vmstat_get("nr_foll_pin_released");
	size_t pg = page_size();
	char *buf = map_pages(CLOSE_REGIONS * pg, PROT_READ | PROT_WRITE);

	ASSERT_NE(NULL, buf);
	for (int round = 0; round < 2; round++) {
		int dev = dev_open();

		ASSERT_LE(0, dev);
		for (int i = 0; i < CLOSE_REGIONS; i++)
			ASSERT_EQ(0, dev_pin(dev, buf + i * pg, pg, DAO_PIN_WRITE, NULL));
		ASSERT_EQ(0, close(dev));
	}
	munmap(buf, CLOSE_REGIONS * pg);
	expect_node_empty(_metadata, acquired0, released0);
}

TEST_HARNESS_MAIN
