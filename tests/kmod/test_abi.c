// SPDX-License-Identifier: GPL-2.0
/*
 * test_abi.c - the layout of the ioctl structs and how every malformed
 * argument is refused without effect.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util.h"

/* Each struct is argsz and flags, then naturally aligned fields, no holes. */
#define NO_HOLE(type, prev, next) \
	_Static_assert(offsetof(type, next) == offsetof(type, prev) + sizeof(((type *)0)->prev), \
		       #type ": hole before " #next)
#define ALIGNED(type, field) \
	_Static_assert(offsetof(type, field) % sizeof(((type *)0)->field) == 0, \
		       #type "." #field " misaligned")

_Static_assert(offsetof(struct dao_ioc_version, argsz) == 0, "argsz first");
NO_HOLE(struct dao_ioc_version, argsz, flags);
NO_HOLE(struct dao_ioc_version, flags, abi_version);
NO_HOLE(struct dao_ioc_version, abi_version, page_size);
NO_HOLE(struct dao_ioc_version, page_size, features);
NO_HOLE(struct dao_ioc_version, features, reserved);
ALIGNED(struct dao_ioc_version, features);
ALIGNED(struct dao_ioc_version, reserved);
_Static_assert(sizeof(struct dao_ioc_version) == offsetof(struct dao_ioc_version, reserved) + 8,
	       "no tail padding");
_Static_assert(sizeof(struct dao_ioc_version) == DAO_IOC_VERSION_SIZE_V1, "v1 size");

_Static_assert(offsetof(struct dao_ioc_pin, argsz) == 0, "argsz first");
NO_HOLE(struct dao_ioc_pin, argsz, flags);
NO_HOLE(struct dao_ioc_pin, flags, addr);
NO_HOLE(struct dao_ioc_pin, addr, length);
NO_HOLE(struct dao_ioc_pin, length, handle);
NO_HOLE(struct dao_ioc_pin, handle, charged);
ALIGNED(struct dao_ioc_pin, addr);
ALIGNED(struct dao_ioc_pin, charged);
_Static_assert(sizeof(struct dao_ioc_pin) == offsetof(struct dao_ioc_pin, charged) + 8,
	       "no tail padding");
_Static_assert(sizeof(struct dao_ioc_pin) == DAO_IOC_PIN_SIZE_V1, "v1 size");

_Static_assert(offsetof(struct dao_ioc_unpin, argsz) == 0, "argsz first");
NO_HOLE(struct dao_ioc_unpin, argsz, flags);
NO_HOLE(struct dao_ioc_unpin, flags, handle);
ALIGNED(struct dao_ioc_unpin, handle);
_Static_assert(sizeof(struct dao_ioc_unpin) == offsetof(struct dao_ioc_unpin, handle) + 8,
	       "no tail padding");
_Static_assert(sizeof(struct dao_ioc_unpin) == DAO_IOC_UNPIN_SIZE_V1, "v1 size");

_Static_assert(offsetof(struct dao_ioc_stats, argsz) == 0, "argsz first");
NO_HOLE(struct dao_ioc_stats, argsz, flags);
NO_HOLE(struct dao_ioc_stats, flags, pinned_bytes);
NO_HOLE(struct dao_ioc_stats, pinned_bytes, regions);
NO_HOLE(struct dao_ioc_stats, regions, peak_bytes);
NO_HOLE(struct dao_ioc_stats, peak_bytes, refused);
ALIGNED(struct dao_ioc_stats, pinned_bytes);
_Static_assert(sizeof(struct dao_ioc_stats) == offsetof(struct dao_ioc_stats, refused) + 8,
	       "no tail padding");
_Static_assert(sizeof(struct dao_ioc_stats) == DAO_IOC_STATS_SIZE_V1, "v1 size");

/* The layouts are fixed: the ioctl numbers carry no size that could differ. */
TEST(abi_sizes_at_run_time)
{
	EXPECT_EQ(32, sizeof(struct dao_ioc_version));
	EXPECT_EQ(40, sizeof(struct dao_ioc_pin));
	EXPECT_EQ(16, sizeof(struct dao_ioc_unpin));
	EXPECT_EQ(40, sizeof(struct dao_ioc_stats));
}

TEST(version)
{
	struct dao_ioc_version v = { .argsz = sizeof(v) };
	int fd = dev_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_ioctl(fd, DAO_IOC_VERSION, &v));
	EXPECT_EQ(DAO_IOC_ABI_VERSION, v.abi_version);
	EXPECT_EQ(page_size(), v.page_size);
	EXPECT_EQ(DAO_FEAT_ALL, v.features);
	EXPECT_EQ(sizeof(v), v.argsz);
	close(fd);
}

/* A newer caller's larger struct with a zero tail is fine; its tail is untouched. */
TEST(version_larger_struct_zero_tail)
{
	struct {
		struct dao_ioc_version v;
		uint64_t future[4];
	} big;
	int fd = dev_open();

	ASSERT_LE(0, fd);
	memset(&big, 0, sizeof(big));
	big.v.argsz = sizeof(big);
	ASSERT_EQ(0, dev_ioctl(fd, DAO_IOC_VERSION, &big));
	EXPECT_EQ(DAO_IOC_ABI_VERSION, big.v.abi_version);
	EXPECT_EQ(0, big.future[0] | big.future[1] | big.future[2] | big.future[3]);
	close(fd);
}

FIXTURE(bad)
{
	int fd;
	size_t pg;
	void *buf;
};

FIXTURE_SETUP(bad)
{
	self->fd = dev_open();
	ASSERT_LE(0, self->fd);
	self->pg = page_size();
	self->buf = map_pages(4 * self->pg, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(bad)
{
	struct dao_ioc_stats s;

	/* Whatever was refused left nothing behind. */
	EXPECT_EQ(0, dev_stats(self->fd, &s));
	EXPECT_EQ(0, s.pinned_bytes);
	EXPECT_EQ(0, s.regions);
	EXPECT_EQ(0, vmpin_kb(getpid()));
	close(self->fd);
}

TEST_F(bad, unknown_command)
{
	struct dao_ioc_version v = { .argsz = sizeof(v) };

	EXPECT_EQ(-ENOTTY, dev_ioctl(self->fd, _IO(DAO_IOC_MAGIC, 0x7f), &v));
	EXPECT_EQ(-ENOTTY, dev_ioctl(self->fd, _IOWR(DAO_IOC_MAGIC, 0x00, struct dao_ioc_version), &v));
	EXPECT_EQ(-ENOTTY, dev_ioctl(self->fd, _IO('T', 0x01), &v));
}

TEST_F(bad, argsz_too_small)
{
	struct dao_ioc_pin p = { .argsz = DAO_IOC_PIN_SIZE_V1 - 8, .addr = (uintptr_t)self->buf,
				 .length = self->pg };
	struct dao_ioc_version v = { .argsz = 0 };
	struct dao_ioc_unpin u = { .argsz = 4, .handle = 1 };
	struct dao_ioc_stats s = { .argsz = 8 };

	EXPECT_EQ(-EINVAL, dev_ioctl(self->fd, DAO_IOC_PIN, &p));
	EXPECT_EQ(-EINVAL, dev_ioctl(self->fd, DAO_IOC_VERSION, &v));
	EXPECT_EQ(-EINVAL, dev_ioctl(self->fd, DAO_IOC_UNPIN, &u));
	EXPECT_EQ(-EINVAL, dev_ioctl(self->fd, DAO_IOC_STATS, &s));
	EXPECT_EQ(0, p.handle);
}

TEST_F(bad, argsz_beyond_a_page)
{
	struct dao_ioc_stats s = { .argsz = (uint32_t)self->pg + 1 };
	struct dao_ioc_pin p = { .argsz = UINT32_MAX, .addr = (uintptr_t)self->buf,
				 .length = self->pg };

	EXPECT_EQ(-E2BIG, dev_ioctl(self->fd, DAO_IOC_STATS, &s));
	EXPECT_EQ(-E2BIG, dev_ioctl(self->fd, DAO_IOC_PIN, &p));
}

TEST_F(bad, nonzero_unknown_tail)
{
	struct {
		struct dao_ioc_pin p;
		uint64_t future;
	} big = { .p = { .argsz = sizeof(big), .addr = (uintptr_t)self->buf,
			 .length = self->pg }, .future = 1 };
	struct {
		struct dao_ioc_stats s;
		uint32_t future;
	} st = { .s = { .argsz = sizeof(st) }, .future = 0x100 };

	EXPECT_EQ(-E2BIG, dev_ioctl(self->fd, DAO_IOC_PIN, &big));
	EXPECT_EQ(0, big.p.handle);
	EXPECT_EQ(-E2BIG, dev_ioctl(self->fd, DAO_IOC_STATS, &st));
}

TEST_F(bad, unknown_flags)
{
	struct dao_ioc_pin p = { .argsz = sizeof(p), .flags = 1u << 1, .addr = (uintptr_t)self->buf,
				 .length = self->pg };
	struct dao_ioc_version v = { .argsz = sizeof(v), .flags = 1 };
	struct dao_ioc_unpin u = { .argsz = sizeof(u), .flags = 1, .handle = 1 };
	struct dao_ioc_stats s = { .argsz = sizeof(s), .flags = 0x80000000u };

	EXPECT_EQ(-EINVAL, dev_ioctl(self->fd, DAO_IOC_PIN, &p));
	p.flags = ~0u;
	EXPECT_EQ(-EINVAL, dev_ioctl(self->fd, DAO_IOC_PIN, &p));
	EXPECT_EQ(-EINVAL, dev_ioctl(self->fd, DAO_IOC_VERSION, &v));
	EXPECT_EQ(-EINVAL, dev_ioctl(self->fd, DAO_IOC_UNPIN, &u));
	EXPECT_EQ(-EINVAL, dev_ioctl(self->fd, DAO_IOC_STATS, &s));
}

TEST_F(bad, nonzero_reserved)
{
	struct dao_ioc_version v = { .argsz = sizeof(v), .reserved = 1 };

	EXPECT_EQ(-EINVAL, dev_ioctl(self->fd, DAO_IOC_VERSION, &v));
	EXPECT_EQ(0, v.abi_version);
}

TEST_F(bad, argument_pointer_unmapped)
{
	EXPECT_EQ(-EFAULT, dev_ioctl(self->fd, DAO_IOC_PIN, NULL));
	EXPECT_EQ(-EFAULT, dev_ioctl(self->fd, DAO_IOC_STATS, (void *)8));
}

TEST_F(bad, unknown_handle)
{
	uint64_t h;

	EXPECT_EQ(-ENOENT, dev_unpin(self->fd, 0));
	EXPECT_EQ(-ENOENT, dev_unpin(self->fd, 1));
	EXPECT_EQ(-ENOENT, dev_unpin(self->fd, UINT64_MAX));
	EXPECT_EQ(-ENOENT, dev_unpin(self->fd, 1ULL << 32 | 1));
	/* A handle unpinned once is gone. */
	ASSERT_EQ(0, dev_pin(self->fd, self->buf, self->pg, 0, &h));
	ASSERT_EQ(0, dev_unpin(self->fd, h));
	EXPECT_EQ(-ENOENT, dev_unpin(self->fd, h));
}

TEST_HARNESS_MAIN
