// SPDX-License-Identifier: GPL-2.0
/*
 * test_netlink.c - the "dao" family tells the same story as the files:
 * node state, the per-process dump against DAO_IOC_STATS, and the event
 * sent when a process's pins are released at exit.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "child.h"
#include "util.h"

static const struct proc_state *find_proc(const struct proc_state *ps, int n, pid_t pid)
{
	for (int i = 0; i < n; i++)
		if (ps[i].pid == (uint32_t)pid)
			return &ps[i];
	return NULL;
}

TEST(node_state_idle)
{
	struct node_state st;
	struct nl_sock *sk;

	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(0, st.pinned);
	EXPECT_EQ(0, st.procs);
	EXPECT_EQ((uint64_t)param_get("max_pinned_mb") * MiB, st.limit);
	EXPECT_GE(st.peak, st.pinned);
	dnl_close(sk);
}

TEST(dump_equals_file_stats)
{
	size_t pg = page_size();
	char *buf = map_pages(64 * pg, PROT_READ | PROT_WRITE);
	struct proc_state ps[8];
	const struct proc_state *me;
	struct dao_ioc_stats s1, s2;
	struct node_state st;
	struct nl_sock *sk;
	uint64_t h;
	int fd1, fd2, n;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, limit_set_mb(64));
	fd1 = dev_open();
	fd2 = dev_open();
	ASSERT_LE(0, fd1);
	ASSERT_LE(0, fd2);
	/* Two files of one process: the dump shows one process, their sum. */
	ASSERT_EQ(0, dev_pin(fd1, buf, 16 * pg, DAO_PIN_WRITE, &h));
	ASSERT_EQ(0, dev_pin(fd1, buf + 16 * pg, 8 * pg, 0, NULL));
	ASSERT_EQ(0, dev_unpin(fd1, h));
	ASSERT_EQ(0, dev_pin(fd2, buf, 32 * pg, DAO_PIN_WRITE, NULL));
	ASSERT_EQ(0, limit_set_mb(0));
	EXPECT_EQ(-EDQUOT, dev_pin(fd2, buf, pg, 0, NULL));
	ASSERT_EQ(0, limit_set_mb(64));

	ASSERT_EQ(0, dev_stats(fd1, &s1));
	ASSERT_EQ(0, dev_stats(fd2, &s2));
	ASSERT_EQ(0, dnl_dump_procs(sk, ps, 8, &n));
	ASSERT_EQ(1, n);
	me = find_proc(ps, n, getpid());
	ASSERT_NE(NULL, me);
	EXPECT_EQ(s1.pinned_bytes + s2.pinned_bytes, me->pinned);
	EXPECT_EQ(s1.regions + s2.regions, me->regions);
	EXPECT_EQ(s1.refused + s2.refused, me->refused);
	EXPECT_EQ(1, me->refused);
	EXPECT_EQ(0, me->uid);
	EXPECT_STREQ("test_netlink", me->comm);
	/* The process's peak is over both files at once. */
	EXPECT_EQ(24 * pg, s1.peak_bytes);
	EXPECT_EQ(32 * pg, s2.peak_bytes);
	EXPECT_EQ(8 * pg + 32 * pg, me->peak);

	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(me->pinned, st.pinned);
	EXPECT_EQ(1, st.procs);

	close(fd1);
	close(fd2);
	ASSERT_EQ(0, dnl_dump_procs(sk, ps, 8, &n));
	EXPECT_EQ(0, n);
	dnl_close(sk);
}

/* Many processes: the dump spans several messages and misses none. */
TEST(dump_many_processes)
{
	enum { N = 40 };
	pid_t kids[N];
	int ready[2], hold[2], i, n;
	struct proc_state ps[N + 1];
	struct nl_sock *sk;
	char c;

	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(hold));
	ASSERT_EQ(0, limit_set_mb(64));
	for (i = 0; i < N; i++) {
		kids[i] = fork();
		ASSERT_LE(0, kids[i]);
		if (!kids[i]) {
			char *b = map_pages((i + 1) * page_size(), PROT_READ | PROT_WRITE);
			int fd = dev_open();

			close(hold[1]);
			if (!b || fd < 0 || dev_pin(fd, b, (i + 1) * page_size(), 0, NULL))
				_exit(1);
			if (write(ready[1], "r", 1) != 1)
				_exit(2);
			/* Until the parent closes its end. */
			if (read(hold[0], &c, 1) != 0)
				_exit(3);
			_exit(0);
		}
	}
	close(hold[0]);
	for (i = 0; i < N; i++)
		ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(0, dnl_dump_procs(sk, ps, N + 1, &n));
	EXPECT_EQ(N, n);
	for (i = 0; i < N; i++) {
		const struct proc_state *p = find_proc(ps, n, kids[i]);

		ASSERT_NE(NULL, p);
		EXPECT_EQ((i + 1) * page_size(), p->pinned);
		EXPECT_EQ(1, p->regions);
	}
	close(hold[1]);
	for (i = 0; i < N; i++) {
		int status;

		ASSERT_EQ(kids[i], waitpid(kids[i], &status, 0));
		EXPECT_EQ(0, status);
	}
	dnl_close(sk);
}

TEST(release_event_at_exit)
{
	struct nl_sock *ev_sk;
	struct dao_event ev;
	int status, p[2];
	size_t pg = page_size();
	pid_t pid;
	char c;

	ASSERT_EQ(0, limit_set_mb(64));
	ASSERT_EQ(0, dnl_events_open(&ev_sk));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char *b = map_pages(6 * pg, PROT_READ | PROT_WRITE);
		int fd = dev_open();

		if (!b || fd < 0 || dev_pin(fd, b, 2 * pg, 0, NULL) ||
		    dev_pin(fd, b + 2 * pg, 4 * pg, DAO_PIN_WRITE, NULL))
			_exit(1);
		if (write(p[1], "r", 1) != 1)
			_exit(2);
		/* Killed here, pins held. */
		for (;;)
			pause();
	}
	ASSERT_EQ(1, read(p[0], &c, 1));
	EXPECT_EQ(-EAGAIN, dnl_event_next(ev_sk, &ev));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, dnl_event_next(ev_sk, &ev));
	EXPECT_EQ(DAO_NL_CMD_PROC_RELEASE, ev.cmd);
	EXPECT_EQ(pid, (pid_t)ev.pid);
	EXPECT_EQ(6 * pg, ev.bytes);
	EXPECT_EQ(2, ev.regions);
	EXPECT_EQ(0, ev.node_pinned);
	EXPECT_EQ(-EAGAIN, dnl_event_next(ev_sk, &ev));
	dnl_close(ev_sk);
}

/* Reading is for everyone, including a process that never opened the device. */
static int reader_child(void *arg)
{
	struct proc_state ps[4];
	struct node_state st;
	struct nl_sock *sk;
	int n;

	CHILD_CHECK(!become_nobody());
	CHILD_CHECK(!dnl_open(&sk));
	CHILD_CHECK(!dnl_get_node(sk, &st));
	CHILD_CHECK(!dnl_dump_procs(sk, ps, 4, &n));
	CHILD_CHECK(n == 0);
	dnl_close(sk);
	return 0;
}

TEST(unprivileged_reader)
{
	EXPECT_EQ(0, run_child(reader_child, NULL));
}

TEST_HARNESS_MAIN
