/* SPDX-License-Identifier: MIT */
/*
 * pin.c - the user side of dao.ko: open /dev/dao, check it speaks our ABI,
 * pin and unpin ranges. Every failure falls back to unpinned memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/dao.h>

#include "base/fault.h"
#include "base/log.h"
#include "backend/pin.h"

struct dao_pin {
	int fd; /* -1: pinning unavailable */
};

/* Said once per process, however many contexts open and pin. */
static atomic_flag said_unavailable = ATOMIC_FLAG_INIT;
static atomic_flag said_refused = ATOMIC_FLAG_INIT;

static const char *pin_device_path(void)
{
	const char *env = getenv("DAO_PIN_DEVICE");

	return env && *env ? env : DAO_DEVICE_PATH;
}

static void say_unavailable(const char *path, const char *why)
{
	if (!atomic_flag_test_and_set(&said_unavailable))
		dao_info("host staging memory is not pinned through %s (%s)", path, why);
}

/* The module must speak ABI version 1 with pinning, or we do not use it. */
static const char *check_version(int fd)
{
	struct dao_ioc_version v;

	memset(&v, 0, sizeof(v));
	v.argsz = sizeof(v);
	if (fault_ioctl(fd, DAO_IOC_VERSION, &v))
		return strerror(errno);
	if (v.abi_version != DAO_IOC_ABI_VERSION)
		return "unknown ABI version";
	if (!(v.features & DAO_FEAT_PIN))
		return "module cannot pin";
	if (v.page_size != (uint32_t)sysconf(_SC_PAGESIZE))
		return "page size differs";
	return NULL;
}

dao_status dao_pin_open(struct dao_pin **out)
{
	const char *path = pin_device_path();
	const char *why;
	struct dao_pin *p;

	if (!out)
		return DAO_ERR_NULL;
	p = fault_malloc(sizeof(*p));
	if (!p)
		return DAO_ERR_NOMEM;
	p->fd = fault_open(path, O_RDWR | O_CLOEXEC, 0);
	if (p->fd < 0) {
		say_unavailable(path, strerror(errno));
	} else if ((why = check_version(p->fd))) {
		say_unavailable(path, why);
		close(p->fd);
		p->fd = -1;
	} else {
		dao_dbg("pinning host staging memory through %s", path);
	}
	*out = p;
	return DAO_OK;
}

int dao_pin_available(const struct dao_pin *p)
{
	return p && p->fd >= 0;
}

dao_status dao_pin_range(struct dao_pin *p, void *addr, uint64_t len, int writable,
			 uint64_t *handle)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr;
	struct dao_ioc_pin req;
	int err;

	if (!p || !addr || !handle)
		return DAO_ERR_NULL;
	if (!len || a % page || len % page)
		return DAO_ERR_INVALID;
	if (a + len < a)
		return DAO_ERR_OVERFLOW;
	if (p->fd < 0)
		return DAO_ERR_BACKEND;

	memset(&req, 0, sizeof(req));
	req.argsz = sizeof(req);
	req.flags = writable ? DAO_PIN_WRITE : 0;
	req.addr = a;
	req.length = len;
	if (!fault_ioctl(p->fd, DAO_IOC_PIN, &req)) {
		*handle = req.handle;
		return DAO_OK;
	}
	err = errno;
	switch (err) {
	case EFAULT:
	case EINVAL:
		return DAO_ERR_INVALID;
	case EDQUOT:
	case ENOMEM:
		if (!atomic_flag_test_and_set(&said_refused))
			dao_warn("%s refused to pin %llu bytes (%s); staging memory stays unpinned",
				 pin_device_path(), (unsigned long long)len,
				 err == EDQUOT ? "node limit reached" : "RLIMIT_MEMLOCK or memory");
		return DAO_ERR_BACKEND;
	default:
		dao_dbg("pinning %llu bytes failed: %s", (unsigned long long)len, strerror(err));
		return DAO_ERR_BACKEND;
	}
}

void dao_pin_unpin(struct dao_pin *p, uint64_t handle)
{
	struct dao_ioc_unpin req;

	if (!p || p->fd < 0 || !handle)
		return;
	memset(&req, 0, sizeof(req));
	req.argsz = sizeof(req);
	req.handle = handle;
	if (fault_ioctl(p->fd, DAO_IOC_UNPIN, &req))
		dao_dbg("unpinning handle %llu failed: %s", (unsigned long long)handle,
			strerror(errno));
}

void dao_pin_close(struct dao_pin *p)
{
	if (!p)
		return;
	/* Closing releases every pin still held, in the module. */
	if (p->fd >= 0)
		close(p->fd);
	free(p);
}
