/* SPDX-License-Identifier: MIT */
/*
 * test_pin.c - libdao's pinning through dao.ko when there is no module:
 * open never fails, pinning is unavailable, the fallback is said exactly
 * once, and every bad argument gets its own status. (The module's side is
 * tested in the VM by tests/kmod.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/log.h"
#include "backend/pin.h"
#include "tap.h"

/* Runs fn with stderr sent to a file; returns how many lines libdao logged. */
static int count_log_lines(void (*fn)(void))
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO), lines = 0, c;

	if (!tmp || saved < 0)
		tap_bail("cannot capture stderr");
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	while ((c = fgetc(tmp)) != EOF)
		lines += c == '\n';
	fclose(tmp);
	return lines;
}

static void open_close_three_times(void)
{
	for (int i = 0; i < 3; i++) {
		struct dao_pin *p = NULL;

		if (dao_pin_open(&p) == DAO_OK)
			dao_pin_close(p);
	}
}

static void check_unavailable(const char *device, const char *what)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *buf = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct dao_pin *p = NULL;
	uint64_t h = 7;

	setenv("DAO_PIN_DEVICE", device, 1);
	TAP_IS_STATUS(dao_pin_open(&p), DAO_OK, "open succeeds without a usable module");
	tap_ok(p != NULL, "%s: a pin object all the same", what);
	tap_ok(!dao_pin_available(p), "%s: pinning unavailable", what);
	TAP_IS_STATUS(dao_pin_range(p, buf, (uint64_t)pg, 1, &h), DAO_ERR_BACKEND,
		      "pin falls back");
	TAP_IS_U64(h, 7, "handle untouched on failure");
	dao_pin_unpin(p, 1);
	dao_pin_close(p);
	munmap(buf, (size_t)pg);
}

int main(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *buf = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct dao_pin *p = NULL;
	uint64_t h = 0;

	if (buf == MAP_FAILED)
		tap_bail("mmap");

	/* Said once per process, at info level, however many opens. */
	dao_log_set_level(DAO_LOG_INFO);
	setenv("DAO_PIN_DEVICE", "/nonexistent/dao", 1);
	TAP_IS_U64(count_log_lines(open_close_three_times), 1, "the fallback is said once");
	TAP_IS_U64(count_log_lines(open_close_three_times), 0, "and not repeated");
	dao_log_set_level(DAO_LOG_WARN);

	check_unavailable("/nonexistent/dao", "missing device");
	/* A device that is not dao.ko: the version ioctl fails. */
	check_unavailable("/dev/null", "foreign device");

	TAP_IS_STATUS(dao_pin_open(NULL), DAO_ERR_NULL, "open: NULL out");
	tap_ok(!dao_pin_available(NULL), "available(NULL) is 0");
	dao_pin_unpin(NULL, 1);
	dao_pin_close(NULL);
	tap_ok(1, "unpin and close accept NULL");

	TAP_IS_STATUS(dao_pin_open(&p), DAO_OK, "open");
	TAP_IS_STATUS(dao_pin_range(NULL, buf, (uint64_t)pg, 0, &h), DAO_ERR_NULL, "pin: NULL pin");
	TAP_IS_STATUS(dao_pin_range(p, NULL, (uint64_t)pg, 0, &h), DAO_ERR_NULL, "pin: NULL addr");
	TAP_IS_STATUS(dao_pin_range(p, buf, (uint64_t)pg, 0, NULL), DAO_ERR_NULL, "pin: NULL handle");
	TAP_IS_STATUS(dao_pin_range(p, buf, 0, 0, &h), DAO_ERR_INVALID, "pin: zero length");
	TAP_IS_STATUS(dao_pin_range(p, buf + 1, (uint64_t)pg, 0, &h), DAO_ERR_INVALID,
		      "pin: unaligned address");
	TAP_IS_STATUS(dao_pin_range(p, buf, (uint64_t)pg + 1, 0, &h), DAO_ERR_INVALID,
		      "pin: unaligned length");
	TAP_IS_STATUS(dao_pin_range(p, buf, UINT64_MAX - (uint64_t)pg + 1, 0, &h), DAO_ERR_OVERFLOW,
		      "pin: wrapping range");
	TAP_IS_U64(h, 0, "no handle from refused arguments");
	dao_pin_close(p);

	munmap(buf, 2 * (size_t)pg);
	tap_plan_done();
	return tap_exit();
}
