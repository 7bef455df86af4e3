// SPDX-License-Identifier: GPL-2.0
/*
 * test_pin.c - pinning and unpinning ranges: what is charged, what the
 * kernel's own counters say, and every range that must be refused.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util.h"

FIXTURE(pin)
{
	int fd;
	size_t pg;
	long long acquired0, released0;
};

FIXTURE_SETUP(pin)
{
	self->pg = page_size();
	self->acquired0 = vmstat_get("nr_foll_pin_acquired");
	self->released0 = vmstat_get("nr_foll_pin_released");
	ASSERT_LE(0, self->acquired0);
	ASSERT_EQ(0, limit_set_mb(64));
	self->fd = dev_open();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(pin)
{
	struct dao_ioc_stats s;

	EXPECT_EQ(0, dev_stats(self->fd, &s));
	EXPECT_EQ(0, s.pinned_bytes);
	EXPECT_EQ(0, s.regions);
	close(self->fd);
	EXPECT_EQ(0, vmpin_kb(getpid()));
	/* Every page pinned by this test was unpinned. */
	EXPECT_EQ(vmstat_get("nr_foll_pin_acquired") - self->acquired0,
		  vmstat_get("nr_foll_pin_released") - self->released0);
}

TEST_F(pin, round_trip)
{
	size_t len = 16 * self->pg;
	unsigned char *buf = map_pages(len, PROT_READ | PROT_WRITE);
	struct dao_ioc_pin p = { .argsz = sizeof(p), .flags = DAO_PIN_WRITE };
	struct dao_ioc_stats s;
	size_t i;

	ASSERT_NE(NULL, buf);
	p.addr = (uintptr_t)buf;
	p.length = len;
	ASSERT_EQ(0, dev_ioctl(self->fd, DAO_IOC_PIN, &p));
	EXPECT_NE(0, p.handle);
	EXPECT_EQ(len, p.charged);
	EXPECT_EQ((long)(len / 1024), vmpin_kb(getpid()));
	ASSERT_EQ(0, dev_stats(self->fd, &s));
	EXPECT_EQ(len, s.pinned_bytes);
	EXPECT_EQ(1, s.regions);
	EXPECT_EQ(len, s.peak_bytes);
	EXPECT_EQ(0, s.refused);
	EXPECT_EQ(16, vmstat_get("nr_foll_pin_acquired") - self->acquired0);

	/* The pinned pages are the process's pages: writes stay visible. */
	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	ASSERT_EQ(0, dev_unpin(self->fd, p.handle));
	for (i = 0; i < len; i++)
		if (buf[i] != (unsigned char)(i * 7 + 3))
			break;
	EXPECT_EQ(len, i);
	EXPECT_EQ(0, vmpin_kb(getpid()));
	ASSERT_EQ(0, dev_stats(self->fd, &s));
	EXPECT_EQ(0, s.pinned_bytes);
	EXPECT_EQ(len, s.peak_bytes);
	munmap(buf, len);
}

/* Unmapping a pinned range keeps the pages until unpin; unpin still works. */
TEST_F(pin, munmap_while_pinned)
{
	size_t len = 4 * self->pg;
	void *buf = map_pages(len, PROT_READ | PROT_WRITE);
	uint64_t h;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, dev_pin(self->fd, buf, len, DAO_PIN_WRITE, &h));
	ASSERT_EQ(0, munmap(buf, len));
	EXPECT_EQ((long)(len / 1024), vmpin_kb(getpid()));
	EXPECT_EQ(0, dev_unpin(self->fd, h));
}

TEST_F(pin, many_regions_distinct_handles)
{
	size_t len = 8 * self->pg;
	char *buf = map_pages(len, PROT_READ | PROT_WRITE);
	uint64_t h[8];
	struct dao_ioc_stats s;
	int i, j;

	ASSERT_NE(NULL, buf);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, dev_pin(self->fd, buf + i * self->pg, self->pg, 0, &h[i]));
	/* The same page may be pinned twice: each pin is charged. */
	for (i = 0; i < 8; i++)
		for (j = 0; j < i; j++)
			EXPECT_NE(h[i], h[j]);
	ASSERT_EQ(0, dev_stats(self->fd, &s));
	EXPECT_EQ(8, s.regions);
	EXPECT_EQ(len, s.pinned_bytes);
	for (i = 7; i >= 0; i--)
		EXPECT_EQ(0, dev_unpin(self->fd, h[i]));
	munmap(buf, len);
}

/* Closing with pins held releases them all. */
TEST_F(pin, close_releases)
{
	size_t len = 32 * self->pg;
	void *buf = map_pages(len, PROT_READ | PROT_WRITE);
	int fd2 = dev_open();
	uint64_t h;

	ASSERT_NE(NULL, buf);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, dev_pin(fd2, buf, len, DAO_PIN_WRITE, &h));
	ASSERT_EQ(0, dev_pin(fd2, buf, len / 2, 0, &h));
	EXPECT_EQ((long)(len + len / 2) / 1024, vmpin_kb(getpid()));
	close(fd2);
	EXPECT_EQ(0, vmpin_kb(getpid()));
	munmap(buf, len);
}

FIXTURE(range)
{
	int fd;
	size_t pg;
	char *buf;
};

FIXTURE_SETUP(range)
{
	self->pg = page_size();
	ASSERT_EQ(0, limit_set_mb(64));
	self->fd = dev_open();
	ASSERT_LE(0, self->fd);
	self->buf = map_pages(4 * self->pg, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(range)
{
	struct dao_ioc_stats s;

	/* Refused ranges changed nothing. */
	EXPECT_EQ(0, dev_stats(self->fd, &s));
	EXPECT_EQ(0, s.pinned_bytes);
	EXPECT_EQ(0, s.regions);
	EXPECT_EQ(0, s.refused);
	EXPECT_EQ(0, vmpin_kb(getpid()));
	close(self->fd);
}

TEST_F(range, unaligned_address)
{
	EXPECT_EQ(-EINVAL, dev_pin(self->fd, self->buf + 1, self->pg, 0, NULL));
	EXPECT_EQ(-EINVAL, dev_pin(self->fd, self->buf + self->pg / 2, self->pg, 0, NULL));
}

TEST_F(range, unaligned_length)
{
	EXPECT_EQ(-EINVAL, dev_pin(self->fd, self->buf, self->pg + 1, 0, NULL));
	EXPECT_EQ(-EINVAL, dev_pin(self->fd, self->buf, self->pg - 1, 0, NULL));
}

TEST_F(range, zero_length)
{
	EXPECT_EQ(-EINVAL, dev_pin(self->fd, self->buf, 0, DAO_PIN_WRITE, NULL));
}

TEST_F(range, wrapping)
{
	uint64_t top = UINT64_MAX - self->pg + 1;

	EXPECT_EQ(-EINVAL, dev_pin(self->fd, (void *)(uintptr_t)top, 2 * self->pg, 0, NULL));
	EXPECT_EQ(-EINVAL, dev_pin(self->fd, self->buf, UINT64_MAX - self->pg + 1, 0, NULL));
}

TEST_F(range, kernel_addresses)
{
	EXPECT_EQ(-EFAULT, dev_pin(self->fd, (void *)(uintptr_t)0xffff888000000000ULL,
				   self->pg, 0, NULL));
}

TEST_F(range, more_than_the_node_has)
{
	/* Aligned, below the end of user space, but more pages than RAM. */
	EXPECT_EQ(-ENOMEM, dev_pin(self->fd, (void *)(16 * self->pg), 1ULL << 40, 0, NULL));
}

TEST_F(range, unmapped)
{
	char *hole = map_pages(3 * self->pg, PROT_READ | PROT_WRITE);

	ASSERT_NE(NULL, hole);
	ASSERT_EQ(0, munmap(hole + self->pg, self->pg));
	/* The first page pins, the second does not: nothing stays pinned. */
	EXPECT_EQ(-EFAULT, dev_pin(self->fd, hole, 3 * self->pg, DAO_PIN_WRITE, NULL));
	EXPECT_EQ(-EFAULT, dev_pin(self->fd, hole + self->pg, self->pg, 0, NULL));
	EXPECT_EQ(-EFAULT, dev_pin(self->fd, NULL, self->pg, 0, NULL));
}

TEST_F(range, read_only_mapping_pinned_writable)
{
	void *ro = map_pages(2 * self->pg, PROT_READ);
	uint64_t h;

	ASSERT_NE(NULL, ro);
	EXPECT_EQ(-EFAULT, dev_pin(self->fd, ro, 2 * self->pg, DAO_PIN_WRITE, NULL));
	/* Read-only is what it allows. */
	ASSERT_EQ(0, dev_pin(self->fd, ro, 2 * self->pg, 0, &h));
	ASSERT_EQ(0, dev_unpin(self->fd, h));
	munmap(ro, 2 * self->pg);
}

TEST_F(range, no_access_mapping)
{
	void *none = map_pages(self->pg, PROT_NONE);

	ASSERT_NE(NULL, none);
	EXPECT_EQ(-EFAULT, dev_pin(self->fd, none, self->pg, 0, NULL));
	munmap(none, self->pg);
}

TEST_HARNESS_MAIN
