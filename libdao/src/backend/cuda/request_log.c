/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fault.h"
#include "backend/cuda/request_log.h"
#include "base/log.h"

/* A buffer of lines; a line is at most LINE_MAX_BYTES. */
#define LOG_BUFFER (256u << 10)
#define LINE_MAX_BYTES 160u

struct cu_log {
	int fd;
	unsigned id;
	uint32_t used;
	bool failed; /* a write failed: said once, logging stops */
	char buf[LOG_BUFFER];
};

/* Backends of one process, told apart in a shared file. */
static atomic_uint next_id = 1;

static const char *const why_names[] = {
	[DAO_WHY_FETCH] = "fetch",   [DAO_WHY_PREFETCH] = "prefetch",
	[DAO_WHY_EVICT] = "evict",   [DAO_WHY_WRITE_BACK] = "write-back",
	[DAO_WHY_OUTPUT] = "output", [DAO_WHY_DEAD] = "dead",
	[DAO_WHY_HOST] = "host",     [DAO_WHY_FREE] = "free",
};

static const char *const engine_names[] = {
	[DAO_ENGINE_COMPUTE] = "compute",
	[DAO_ENGINE_H2D] = "h2d",
	[DAO_ENGINE_D2H] = "d2h",
};

uint64_t cu_log_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* One write() per buffer: with O_APPEND, the lines of backends sharing
 * the file never interleave within a line. */
static void flush(struct cu_log *l)
{
	uint32_t done = 0;

	while (done < l->used && !l->failed) {
		ssize_t n = write(l->fd, l->buf + done, l->used - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			dao_warn("DAO_CUDA_REQUEST_LOG: writing failed (%s): the log stops here",
				 n < 0 ? strerror(errno) : "nothing written");
			l->failed = true;
			break;
		}
		done += (uint32_t)n;
	}
	l->used = 0;
}

static void put(struct cu_log *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct cu_log *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->failed)
		return;
	if (LOG_BUFFER - l->used < LINE_MAX_BYTES)
		flush(l);
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->used, LINE_MAX_BYTES, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->used += (uint32_t)n < LINE_MAX_BYTES ? (uint32_t)n : LINE_MAX_BYTES - 1;
}

dao_status cu_log_open(const char *backend, const char *switches, struct cu_log **out)
{
	const char *path = getenv("DAO_CUDA_REQUEST_LOG");
	struct cu_log *l;

	*out = NULL;
	if (!path || !*path)
		return DAO_OK;
	l = fault_malloc(sizeof(*l));
	if (!l)
		return DAO_ERR_NOMEM;
	l->fd = fault_open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (l->fd < 0) {
		dao_err("DAO_CUDA_REQUEST_LOG: cannot open %s: %s", path, strerror(errno));
		free(l);
		return DAO_ERR_IO;
	}
	l->id = atomic_fetch_add(&next_id, 1);
	l->used = 0;
	l->failed = false;
	put(l, "# dao-cuda-request-log 1 id=%u backend=%s pid=%ld clock=monotonic switches=%s\n",
	    l->id, backend, (long)getpid(), *switches ? switches : "-");
	*out = l;
	return DAO_OK;
}

void cu_log_move_at(struct cu_log *l, uint64_t t_ns, int e, uint64_t seq, const char *call,
		    enum dao_move_why why, const void *addr, uint64_t bytes)
{
	put(l, "%llu %u %s %s %s 0x%llx %llu %llu\n", (unsigned long long)t_ns, l->id,
	    engine_names[e], call, why_names[why], (unsigned long long)(uintptr_t)addr,
	    (unsigned long long)bytes, (unsigned long long)seq);
}

void cu_log_done(struct cu_log *l, int e, uint64_t seq)
{
	put(l, "%llu %u %s done %llu\n", (unsigned long long)cu_log_now(), l->id,
	    engine_names[e], (unsigned long long)seq);
}

void cu_log_move(struct cu_log *l, int e, uint64_t seq, const char *call, enum dao_move_why why,
		 const void *addr, uint64_t bytes)
{
	cu_log_move_at(l, cu_log_now(), e, seq, call, why, addr, bytes);
}

void cu_log_chunk(struct cu_log *l, const char *what, const void *addr, uint64_t bytes)
{
	put(l, "%llu %u - chunk-%s alloc 0x%llx %llu\n", (unsigned long long)cu_log_now(), l->id, what,
	    (unsigned long long)(uintptr_t)addr, (unsigned long long)bytes);
}

void cu_log_host(struct cu_log *l, const void *addr, uint64_t bytes, bool write, bool done)
{
	put(l, "%llu %u host %s%s host 0x%llx %llu\n", (unsigned long long)cu_log_now(), l->id,
	    write ? "host-write" : "host-read", done ? "-done" : "",
	    (unsigned long long)(uintptr_t)addr, (unsigned long long)bytes);
}

void cu_log_close(struct cu_log *l)
{
	if (!l)
		return;
	flush(l);
	close(l->fd);
	free(l);
}
