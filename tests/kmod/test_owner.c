// SPDX-License-Identifier: GPL-2.0
/*
 * test_owner.c - only the process that opened /dev/dao may use the fd: not a
 * forked child, not a process that received it over a Unix socket. The
 * opener's pins are released when the last reference goes, wherever that is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "child.h"
#include "util.h"

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'f';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &m, 0) != 1)
		return -errno;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Every command a stranger could try, each refused with -EACCES. */
static int stranger_is_refused(int fd, void *buf, uint64_t handle)
{
	struct dao_ioc_version v = { .argsz = sizeof(v) };
	struct dao_ioc_stats s;

	CHILD_CHECK(dev_ioctl(fd, DAO_IOC_VERSION, &v) == -EACCES);
	CHILD_CHECK(dev_pin(fd, buf, page_size(), 0, NULL) == -EACCES);
	CHILD_CHECK(dev_unpin(fd, handle) == -EACCES);
	CHILD_CHECK(dev_stats(fd, &s) == -EACCES);
	return 0;
}

struct owned {
	int fd;
	char *buf;
	uint64_t handle;
};

static int forked_child(void *arg)
{
	struct owned *o = arg;

	return stranger_is_refused(o->fd, o->buf, o->handle);
}

TEST(forked_child_refused)
{
	struct owned o;
	struct dao_ioc_stats s;

	o.fd = dev_open();
	ASSERT_LE(0, o.fd);
	o.buf = map_pages(4 * page_size(), PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, o.buf);
	ASSERT_EQ(0, dev_pin(o.fd, o.buf, page_size(), DAO_PIN_WRITE, &o.handle));
	EXPECT_EQ(0, run_child(forked_child, &o));
	/* The child's exit closed its copy; the opener's pin is intact. */
	ASSERT_EQ(0, dev_stats(o.fd, &s));
	EXPECT_EQ(page_size(), s.pinned_bytes);
	EXPECT_EQ(0, dev_unpin(o.fd, o.handle));
	close(o.fd);
}

static int receiver(void *arg)
{
	int *socks = arg;
	int fd = recv_fd(socks[1]);
	char *buf = map_pages(page_size(), PROT_READ | PROT_WRITE);

	CHILD_CHECK(fd >= 0 && buf);
	return stranger_is_refused(fd, buf, 1);
}

TEST(scm_rights_receiver_refused)
{
	int socks[2], fd, pid_status;
	char *buf = map_pages(page_size(), PROT_READ | PROT_WRITE);
	uint64_t h;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, socks));
	fd = dev_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_pin(fd, buf, page_size(), DAO_PIN_WRITE, &h));
	ASSERT_EQ(0, send_fd(socks[0], fd));
	pid_status = run_child(receiver, socks);
	EXPECT_EQ(0, pid_status);
	EXPECT_EQ(0, dev_unpin(fd, h));
	close(fd);
}

/*
 * The receiver may hold the last reference: release then runs in a process
 * whose mm is not the opener's and must uncharge the opener's VmPin.
 */
TEST(release_in_receiver_uncharges_opener)
{
	int socks[2], fd, status;
	size_t len = 8 * page_size();
	char *buf = map_pages(len, PROT_READ | PROT_WRITE);
	struct nl_sock *sk;
	struct node_state st;
	char c;
	pid_t pid;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, socks));
	fd = dev_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_pin(fd, buf, len, DAO_PIN_WRITE, NULL));
	EXPECT_EQ((long)(len / 1024), vmpin_kb(getpid()));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int got = recv_fd(socks[1]);

		if (got < 0 || write(socks[1], "r", 1) != 1)
			_exit(1);
		/* Holds the only reference until the opener says it closed its own. */
		if (read(socks[1], &c, 1) != 1)
			_exit(2);
		close(got);
		_exit(0);
	}
	ASSERT_EQ(0, send_fd(socks[0], fd));
	ASSERT_EQ(1, read(socks[0], &c, 1));
	close(fd);
	/* The receiver still holds the file: the pins stay. */
	EXPECT_EQ((long)(len / 1024), vmpin_kb(getpid()));
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(len, st.pinned);
	ASSERT_EQ(1, write(socks[0], "c", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, vmpin_kb(getpid()));
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(0, st.pinned);
	EXPECT_EQ(0, st.procs);
	dnl_close(sk);
}

/*
 * The opener's own process after exec has the same pid but a new mm: an fd
 * kept across exec must not pin into it. The exec'd image checks that in
 * probe_fd_mode() and its exit status is this test's result.
 */
TEST(exec_refused)
{
	int fd = open(DAO_DEVICE_PATH, O_RDWR);
	char arg[16];

	ASSERT_LE(0, fd);
	snprintf(arg, sizeof(arg), "%d", fd);
	execl("/proc/self/exe", "test_owner", "--probe-fd", arg, (char *)NULL);
	ASSERT_EQ(0, errno);
}

/* Runs instead of the harness when exec'd by exec_keeps_no_access. */
static void __attribute__((constructor)) probe_fd_mode(void)
{
	char buf[64];
	FILE *f = fopen("/proc/self/cmdline", "r");
	size_t n;

	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	if (n > strlen(buf) + 1 && !strcmp(buf + strlen(buf) + 1, "--probe-fd")) {
		int fd = atoi(buf + strlen(buf) + 1 + strlen("--probe-fd") + 1);
		char *page = map_pages(page_size(), PROT_READ | PROT_WRITE);

		_exit(page ? stranger_is_refused(fd, page, 1) : 99);
	}
}

TEST_HARNESS_MAIN
