// SPDX-License-Identifier: GPL-2.0
/*
 * test_limits.c - the node limit (exactly at its boundary, with its event),
 * RLIMIT_MEMLOCK for the unprivileged versus CAP_IPC_LOCK, the parameter
 * that turns that check off, and who may change the limit.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "child.h"
#include "util.h"

FIXTURE(node)
{
	int fd;
	size_t pg;
	char *buf;
	struct nl_sock *events;
	long long limit0;
};

FIXTURE_SETUP(node)
{
	self->pg = page_size();
	self->limit0 = param_get("max_pinned_mb");
	ASSERT_LE(0, self->limit0);
	ASSERT_EQ(0, limit_set_mb(2));
	self->fd = dev_open();
	ASSERT_LE(0, self->fd);
	self->buf = map_pages(2 * MiB + self->pg, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, self->buf);
	ASSERT_EQ(0, dnl_events_open(&self->events));
}

FIXTURE_TEARDOWN(node)
{
	close(self->fd);
	dnl_close(self->events);
	EXPECT_EQ(0, limit_set_mb(self->limit0));
}

TEST_F(node, limit_exactly_at_the_boundary)
{
	struct dao_ioc_stats s;
	struct node_state st, st0;
	struct dao_event ev;
	struct nl_sock *sk;
	uint64_t h1, h2;

	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, dnl_get_node(sk, &st0));
	/* No event is pending before the refusal. */
	EXPECT_EQ(-EAGAIN, dnl_event_next(self->events, &ev));

	/* Up to the limit in two pins: the second reaches it exactly. */
	ASSERT_EQ(0, dev_pin(self->fd, self->buf, MiB, DAO_PIN_WRITE, &h1));
	ASSERT_EQ(0, dev_pin(self->fd, self->buf + MiB, MiB, DAO_PIN_WRITE, &h2));
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(2 * MiB, st.limit);
	EXPECT_EQ(2 * MiB, st.pinned);
	EXPECT_EQ(-EAGAIN, dnl_event_next(self->events, &ev));

	/* One page more is refused, charged nowhere, and announced. */
	EXPECT_EQ(-EDQUOT, dev_pin(self->fd, self->buf + 2 * MiB, self->pg, 0, NULL));
	ASSERT_EQ(0, dev_stats(self->fd, &s));
	EXPECT_EQ(2 * MiB, s.pinned_bytes);
	EXPECT_EQ(2, s.regions);
	EXPECT_EQ(1, s.refused);
	EXPECT_EQ((long)(2 * MiB / 1024), vmpin_kb(getpid()));
	ASSERT_EQ(0, dnl_event_next(self->events, &ev));
	EXPECT_EQ(DAO_NL_CMD_PIN_REFUSED, ev.cmd);
	EXPECT_EQ(getpid(), (pid_t)ev.pid);
	EXPECT_EQ(self->pg, ev.bytes);
	EXPECT_EQ(2 * MiB, ev.node_pinned);
	EXPECT_EQ(2 * MiB, ev.node_limit);
	EXPECT_EQ(-EAGAIN, dnl_event_next(self->events, &ev));

	/* A page given back makes room for exactly a page. */
	ASSERT_EQ(0, dev_unpin(self->fd, h2));
	ASSERT_EQ(0, dev_pin(self->fd, self->buf + MiB, MiB - self->pg, 0, &h2));
	ASSERT_EQ(0, dev_pin(self->fd, self->buf + 2 * MiB, self->pg, 0, NULL));
	EXPECT_EQ(-EDQUOT, dev_pin(self->fd, self->buf, self->pg, 0, NULL));
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(2 * MiB, st.pinned);
	EXPECT_EQ(2, st.refused - st0.refused);
	dnl_close(sk);
}

TEST_F(node, single_pin_larger_than_the_limit)
{
	struct dao_event ev;

	EXPECT_EQ(-EDQUOT, dev_pin(self->fd, self->buf, 2 * MiB + self->pg, 0, NULL));
	ASSERT_EQ(0, dnl_event_next(self->events, &ev));
	EXPECT_EQ(DAO_NL_CMD_PIN_REFUSED, ev.cmd);
	EXPECT_EQ(2 * MiB + self->pg, ev.bytes);
	EXPECT_EQ(0, ev.node_pinned);
	EXPECT_EQ(0, vmpin_kb(getpid()));
}

TEST_F(node, limit_zero_refuses_everything)
{
	ASSERT_EQ(0, limit_set_mb(0));
	EXPECT_EQ(-EDQUOT, dev_pin(self->fd, self->buf, self->pg, 0, NULL));
}

/* Lowering the limit below what is pinned keeps the pins and refuses new ones. */
TEST_F(node, limit_lowered_below_pinned)
{
	uint64_t h;

	ASSERT_EQ(0, dev_pin(self->fd, self->buf, 2 * MiB, 0, &h));
	ASSERT_EQ(0, limit_set_mb(1));
	EXPECT_EQ(-EDQUOT, dev_pin(self->fd, self->buf, self->pg, 0, NULL));
	EXPECT_EQ(0, dev_unpin(self->fd, h));
	EXPECT_EQ(0, dev_pin(self->fd, self->buf, MiB, 0, &h));
	EXPECT_EQ(0, dev_unpin(self->fd, h));
}

/* ------------------------------------------------------ RLIMIT_MEMLOCK */

struct memlock_case {
	int drop_privileges;
	int expect_over_limit; /* result of pinning past the rlimit */
};

static int memlock_child(void *arg)
{
	const struct memlock_case *c = arg;
	size_t pg = page_size();
	struct rlimit rl = { 4 * pg, 4 * pg };
	struct dao_ioc_stats s;
	char *buf = map_pages(8 * pg, PROT_READ | PROT_WRITE);
	uint64_t h;
	int fd;

	CHILD_CHECK(buf);
	CHILD_CHECK(!setrlimit(RLIMIT_MEMLOCK, &rl));
	fd = dev_open();
	CHILD_CHECK(fd >= 0);
	if (c->drop_privileges)
		CHILD_CHECK(!become_nobody());
	/* Up to the rlimit always works. */
	CHILD_CHECK(!dev_pin(fd, buf, 4 * pg, DAO_PIN_WRITE, &h));
	CHILD_CHECK(dev_pin(fd, buf + 4 * pg, pg, DAO_PIN_WRITE, NULL) == c->expect_over_limit);
	CHILD_CHECK(!dev_stats(fd, &s));
	CHILD_CHECK(s.refused == (c->expect_over_limit ? 1 : 0));
	CHILD_CHECK(s.pinned_bytes == (c->expect_over_limit ? 4 : 5) * pg);
	CHILD_CHECK(vmpin_kb(getpid()) == (long)(s.pinned_bytes / 1024));
	CHILD_CHECK(!dev_unpin(fd, h));
	/* What was given back can be taken again. */
	CHILD_CHECK(!dev_pin(fd, buf + 4 * pg, pg, 0, NULL));
	close(fd);
	CHILD_CHECK(vmpin_kb(getpid()) == 0);
	return 0;
}

TEST(memlock_unprivileged_refused)
{
	struct memlock_case c = { .drop_privileges = 1, .expect_over_limit = -ENOMEM };

	ASSERT_EQ(1, param_get("check_memlock"));
	EXPECT_EQ(0, run_child(memlock_child, &c));
}

TEST(memlock_cap_ipc_lock_exempt)
{
	struct memlock_case c = { .drop_privileges = 0, .expect_over_limit = 0 };

	ASSERT_EQ(1, param_get("check_memlock"));
	EXPECT_EQ(0, run_child(memlock_child, &c));
}

TEST(memlock_check_switched_off)
{
	struct memlock_case c = { .drop_privileges = 1, .expect_over_limit = 0 };

	ASSERT_EQ(0, param_set("check_memlock", "0"));
	EXPECT_EQ(0, run_child(memlock_child, &c));
	ASSERT_EQ(0, param_set("check_memlock", "1"));
}

/* ---------------------------------------------------- changing the limit */

TEST(admin_sets_limit_over_netlink)
{
	long long limit0 = param_get("max_pinned_mb");
	struct node_state st;
	struct nl_sock *sk;
	uint32_t small = 1;

	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, dnl_set_limit(sk, 3 * MiB));
	EXPECT_EQ(3, param_get("max_pinned_mb"));
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(3 * MiB, st.limit);

	/* Refused requests leave the limit as it was. */
	EXPECT_EQ(-EINVAL, dnl_set_limit(sk, 3 * MiB + 1));
	EXPECT_EQ(-EINVAL, dnl_send_raw(sk, DAO_NL_CMD_SET_LIMIT, 0, NULL, 0));
	EXPECT_EQ(-EINVAL, dnl_send_raw(sk, DAO_NL_CMD_SET_LIMIT, DAO_NL_A_NODE_LIMIT, &small,
				       sizeof(small)));
	EXPECT_EQ(-EINVAL, dnl_send_raw(sk, DAO_NL_CMD_SET_LIMIT, DAO_NL_A_MAX + 1, &small,
				       sizeof(small)));
	EXPECT_EQ(-EOPNOTSUPP, dnl_send_raw(sk, DAO_NL_CMD_PIN_REFUSED, 0, NULL, 0));
	EXPECT_EQ(-EOPNOTSUPP, dnl_send_raw(sk, DAO_NL_CMD_MAX + 1, 0, NULL, 0));
	EXPECT_EQ(3, param_get("max_pinned_mb"));

	/* Through sysfs too, with the same bounds. */
	EXPECT_EQ(-EINVAL, param_set("max_pinned_mb", "lots"));
	EXPECT_EQ(-ERANGE, param_set("max_pinned_mb", "18446744073709551615"));
	EXPECT_EQ(3, param_get("max_pinned_mb"));
	EXPECT_EQ(0, limit_set_mb(limit0));
	dnl_close(sk);
}

static int nonadmin_child(void *arg)
{
	struct node_state st;
	struct nl_sock *sk;

	CHILD_CHECK(!become_nobody());
	CHILD_CHECK(!dnl_open(&sk));
	/* Reading is for everyone, changing is not. */
	CHILD_CHECK(!dnl_get_node(sk, &st));
	CHILD_CHECK(dnl_set_limit(sk, 1 * MiB) == -EPERM);
	CHILD_CHECK(param_set("max_pinned_mb", "1") == -EACCES);
	CHILD_CHECK(param_set("check_memlock", "0") == -EACCES);
	CHILD_CHECK(param_get("max_pinned_mb") == (long long)(st.limit >> 20));
	dnl_close(sk);
	return 0;
}

TEST(nonadmin_limit_change_refused)
{
	long long limit0 = param_get("max_pinned_mb");

	ASSERT_LT(1, limit0);
	EXPECT_EQ(0, run_child(nonadmin_child, NULL));
	EXPECT_EQ(limit0, param_get("max_pinned_mb"));
	EXPECT_EQ(1, param_get("check_memlock"));
}

TEST_HARNESS_MAIN
