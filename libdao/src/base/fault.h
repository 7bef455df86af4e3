/* SPDX-License-Identifier: MIT */
/*
 * fault.h - libdao's calls to the world beneath it (memory, threads,
 * mappings, files, /dev/dao, the publisher's shared memory), each of which
 * can be made to fail on purpose: the N-th call of a kind fails as the
 * world would fail it (NULL and ENOMEM, an error number, -1 with errno),
 * so that tests can fail every point of a job in turn (tests/faults/).
 *
 * Armed by DAO_FAULT (read when libdao is loaded) or by fault_arm (tests):
 * a comma-separated list of KIND:N (the N-th call of KIND, counted from 1,
 * fails; the others go through) or KIND:N+ (the N-th and every later one
 * fails: the world stays short), or "count" (nothing fails; at exit one
 * line on stderr says how many calls of each kind the process made). KIND
 * is one of fault_kind_name's. Documentation/libdao.md.
 *
 * Unarmed, a call costs one load and one predictable branch more than the
 * call itself: the flag is read-mostly and never written after start.
 */
#ifndef DAO_BASE_FAULT_H
#define DAO_BASE_FAULT_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

enum fault_kind {
	FAULT_ALLOC,  /* malloc, calloc, realloc, aligned_alloc, posix_memalign, strdup */
	FAULT_THREAD, /* pthread_create */
	FAULT_MMAP,   /* anonymous mappings */
	FAULT_OPEN,   /* files and /dev/dao opened */
	FAULT_IOCTL,  /* /dev/dao's ioctls */
	FAULT_SHM,    /* the publisher's shared memory: its file, its size, its mapping */
	FAULT_KINDS
};

/* Nonzero once anything is armed (counting included). */
extern int fault_armed;

/* The slow path: counts the call, true when it is to fail. */
bool fault_fire(enum fault_kind kind);
/* Arms from a DAO_FAULT string (NULL or "" disarms and zeroes the counts);
 * false, and nothing armed, for a malformed one. */
bool fault_arm(const char *spec);
/* Calls of kind made since arming. */
uint64_t fault_count(enum fault_kind kind);
const char *fault_kind_name(enum fault_kind kind);

static inline bool fault_hit(enum fault_kind kind)
{
	return __builtin_expect(fault_armed, 0) && fault_fire(kind);
}

static inline void *fault_malloc(size_t n)
{
	if (fault_hit(FAULT_ALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return malloc(n);
}

static inline void *fault_calloc(size_t n, size_t size)
{
	if (fault_hit(FAULT_ALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return calloc(n, size);
}

/* On failure the old block stays, as with realloc. */
static inline void *fault_realloc(void *old, size_t n)
{
	if (fault_hit(FAULT_ALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(old, n);
}

static inline void *fault_aligned_alloc(size_t align, size_t n)
{
	if (fault_hit(FAULT_ALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned_alloc(align, n);
}

static inline int fault_posix_memalign(void **p, size_t align, size_t n)
{
	if (fault_hit(FAULT_ALLOC))
		return ENOMEM;
	return posix_memalign(p, align, n);
}

static inline char *fault_strdup(const char *s)
{
	if (fault_hit(FAULT_ALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return strdup(s);
}

static inline int fault_pthread_create(pthread_t *t, const pthread_attr_t *attr,
				       void *(*fn)(void *), void *arg)
{
	if (fault_hit(FAULT_THREAD))
		return EAGAIN;
	return pthread_create(t, attr, fn, arg);
}

static inline void *fault_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (fault_hit(FAULT_MMAP)) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return mmap(addr, len, prot, flags, fd, off);
}

static inline int fault_open(const char *path, int flags, mode_t mode)
{
	if (fault_hit(FAULT_OPEN)) {
		errno = EMFILE;
		return -1;
	}
	return open(path, flags, mode);
}

/* /dev/dao refusing: out of memory, as the module answers a pin it cannot
 * back. */
static inline int fault_ioctl(int fd, unsigned long req, void *arg)
{
	if (fault_hit(FAULT_IOCTL)) {
		errno = ENOMEM;
		return -1;
	}
	return ioctl(fd, req, arg);
}

static inline int fault_shm_open(const char *path, int flags, mode_t mode)
{
	if (fault_hit(FAULT_SHM)) {
		errno = ENOSPC;
		return -1;
	}
	return open(path, flags, mode);
}

static inline int fault_shm_truncate(int fd, off_t len)
{
	if (fault_hit(FAULT_SHM)) {
		errno = ENOSPC;
		return -1;
	}
	return ftruncate(fd, len);
}

static inline void *fault_shm_map(size_t len, int fd)
{
	if (fault_hit(FAULT_SHM)) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
}

#endif /* DAO_BASE_FAULT_H */
