/* SPDX-License-Identifier: MIT */
/*
 * chunks.c - huge-page-sized mappings for records (record.c) and the first
 * slot table of a context (handles.c).
 *
 * On a virtual machine the first touch of a fresh page costs far more than
 * anything a create does (a 4 KiB fault 10-15 us, a 2 MiB huge-page fault
 * 0.1-0.5 ms, a create about 0.1 us), so memory is taken in huge pages and
 * a device or context that goes away leaves up to POOL_MAX of them for the
 * next one, as malloc keeps freed memory for the next allocation: a process
 * that opens devices or contexts again does not fault their memory again.
 */
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#include "base/fault.h"
#include "core/chunks.h"

#define POOL_MAX 8u /* 16 MiB kept at most */

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static void *pool[POOL_MAX];
static unsigned npool;

void *chunk_map(size_t bytes)
{
	size_t span = bytes + CHUNK_BYTES;
	char *p, *at;

	/* Over-map by a chunk, then trim both ends to the aligned part. */
	p = fault_mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	at = (char *)(((uintptr_t)p + CHUNK_BYTES - 1) & ~(uintptr_t)(CHUNK_BYTES - 1));
	if (at > p)
		munmap(p, (size_t)(at - p));
	if (p + span > at + bytes)
		munmap(at + bytes, (size_t)(p + span - (at + bytes)));
	madvise(at, bytes, MADV_HUGEPAGE); /* advice: fine if refused */
	return at;
}

void *chunk_get(bool *zero)
{
	void *p;

	pthread_mutex_lock(&pool_mu);
	p = npool ? pool[--npool] : NULL;
	pthread_mutex_unlock(&pool_mu);
	*zero = !p;
	return p ? p : chunk_map(CHUNK_BYTES);
}

void chunk_fault_in(void *p)
{
	/* A write fault, not a read (which would map the shared zero page).
	 * Through a volatile pointer: a store of what the memory holds is
	 * otherwise free to drop. */
	*(volatile char *)p = 0;
}

void chunk_put(void *p)
{
	pthread_mutex_lock(&pool_mu);
	if (npool < POOL_MAX) {
		pool[npool++] = p;
		p = NULL;
	}
	pthread_mutex_unlock(&pool_mu);
	if (p)
		munmap(p, CHUNK_BYTES);
}
