// SPDX-License-Identifier: GPL-2.0
/*
 * test_rmmod.c - the module cannot go while /dev/dao is open, goes cleanly
 * once it is closed, and comes back with nothing left over.
 * DAO_KO names the module file (default /lib/modules/dao.ko, where the VM
 * keeps it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util.h"

static int delete_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

static int load_module(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

TEST(rmmod_refused_while_open_clean_after)
{
	const char *ko = getenv("DAO_KO") ? getenv("DAO_KO") : "/lib/modules/dao.ko";
	char *buf = map_pages(4 * page_size(), PROT_READ | PROT_WRITE);
	struct node_state st;
	struct nl_sock *sk;
	int fd;

	if (access(ko, R_OK))
		SKIP(return, "no module file at %s", ko);
	ASSERT_NE(NULL, buf);
	fd = dev_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_pin(fd, buf, 4 * page_size(), DAO_PIN_WRITE, NULL));

	EXPECT_EQ(-EWOULDBLOCK, delete_module("dao"));
	/* Refused means untouched: the pin and the device are still there. */
	EXPECT_EQ(0, access(DAO_DEVICE_PATH, F_OK));
	EXPECT_EQ((long)(4 * page_size() / 1024), vmpin_kb(getpid()));

	close(fd);
	EXPECT_EQ(0, vmpin_kb(getpid()));
	ASSERT_EQ(0, delete_module("dao"));
	EXPECT_EQ(-1, access(DAO_DEVICE_PATH, F_OK));
	EXPECT_EQ(-ENOENT, dnl_open(&sk));
	EXPECT_EQ(-ENOENT, delete_module("dao"));

	ASSERT_EQ(0, load_module(ko));
	EXPECT_EQ(-EEXIST, load_module(ko));
	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(0, st.pinned);
	EXPECT_EQ(0, st.peak);
	EXPECT_EQ(0, st.procs);
	EXPECT_EQ(0, st.refused);
	dnl_close(sk);
	fd = dev_open();
	ASSERT_LE(0, fd);
	close(fd);
}

TEST_HARNESS_MAIN
