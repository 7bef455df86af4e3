// SPDX-License-Identifier: GPL-2.0
/*
 * test_kill.c - a process killed with SIGKILL in the middle of pinning
 * leaves nothing behind: node counters at zero, every page pinned also
 * unpinned (nr_foll_pin_acquired == nr_foll_pin_released), VmPin balanced.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util.h"

#define REGION (8 * MiB)

/* Pins and unpins in a loop until killed; says "r" after the first pin. */
static int pin_forever(void *arg)
{
	int ready = *(int *)arg;
	char *buf = map_pages(REGION, PROT_READ | PROT_WRITE);
	uint64_t h[4] = { 0 };
	int fd = dev_open(), i;

	if (!buf || fd < 0 || dev_pin(fd, buf, REGION, DAO_PIN_WRITE, &h[0]))
		_exit(1);
	if (write(ready, "r", 1) != 1)
		_exit(2);
	for (i = 1;; i++) {
		if (h[i % 4])
			dev_unpin(fd, h[i % 4]);
		h[i % 4] = 0;
		dev_pin(fd, buf, REGION, i & 1 ? DAO_PIN_WRITE : 0, &h[i % 4]);
	}
	return 0;
}

struct baseline {
	long long acquired, released;
	struct nl_sock *sk;
};

static void take_baseline(struct __test_metadata *_metadata, struct baseline *b)
{
	ASSERT_EQ(0, dnl_open(&b->sk));
	ASSERT_EQ(0, limit_set_mb(64));
	b->acquired = vmstat_get("nr_foll_pin_acquired");
	b->released = vmstat_get("nr_foll_pin_released");
	ASSERT_LE(0, b->acquired);
}

static void check_balanced(struct __test_metadata *_metadata, struct baseline *b)
{
	struct node_state st;

	ASSERT_EQ(0, dnl_get_node(b->sk, &st));
	EXPECT_EQ(0, st.pinned);
	EXPECT_EQ(0, st.procs);
	EXPECT_EQ(vmstat_get("nr_foll_pin_acquired") - b->acquired,
		  vmstat_get("nr_foll_pin_released") - b->released);
	/* Something was pinned at all, or the test proved nothing. */
	EXPECT_LT(0, vmstat_get("nr_foll_pin_acquired") - b->acquired);
	dnl_close(b->sk);
}

TEST(sigkill_while_pinning)
{
	struct baseline b;
	int round, p[2];

	take_baseline(_metadata, &b);
	ASSERT_EQ(0, pipe(p));
	for (round = 0; round < 8; round++) {
		int status;
		char c;
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (!pid)
			_exit(pin_forever(&p[1]));
		ASSERT_EQ(1, read(p[0], &c, 1));
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status));
		EXPECT_EQ(SIGKILL, WTERMSIG(status));
	}
	check_balanced(_metadata, &b);
}

/*
 * A child sharing this process's mm (CLONE_VM without CLONE_THREAD) opens
 * the device and pins into the shared mm: its VmPin is ours, and must come
 * back to zero after the kill, through the teardown that never looks at
 * current->mm.
 */
TEST(sigkill_with_shared_mm)
{
	size_t stack_size = 256 * 1024;
	char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	struct baseline b;
	int round, p[2];

	ASSERT_NE(MAP_FAILED, stack);
	take_baseline(_metadata, &b);
	ASSERT_EQ(0, pipe(p));
	for (round = 0; round < 4; round++) {
		int status;
		char c;
		pid_t pid = clone(pin_forever, stack + stack_size, CLONE_VM | SIGCHLD, &p[1]);

		ASSERT_LT(0, pid);
		ASSERT_EQ(1, read(p[0], &c, 1));
		EXPECT_LE(REGION / 1024, vmpin_kb(getpid()));
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status));
		EXPECT_EQ(0, vmpin_kb(getpid()));
	}
	check_balanced(_metadata, &b);
}

TEST_HARNESS_MAIN
