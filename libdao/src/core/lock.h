/* SPDX-License-Identifier: MIT */
/*
 * lock.h - taking and leaving dev->mu, the device's one lock.
 *
 * The job's thread and the executor hand the lock back and forth once per
 * kernel. When the two run on different CPUs, sleeping in the kernel for a
 * section of a microsecond costs a futex wait on one side and a futex wake
 * on the other, microseconds each on a virtual machine. So a thread that
 * finds the lock taken spins while the holder runs on another CPU (it will
 * leave soon), a bounded number of times, and sleeps only when the holder
 * is on its own CPU (spinning would only delay the holder) or the bound
 * runs out. The holder's CPU is a hint written after each acquisition and
 * cleared before each release; a wrong hint costs at most one bounded spin
 * or one sleep.
 */
#ifndef DAO_CORE_LOCK_H
#define DAO_CORE_LOCK_H

#include <sched.h>

#include "core/objects.h"

void dev_lock_slow(struct device *d);

/* One round of a spin-wait: tells the CPU (and a hyperthread sibling). */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* Ask for the cache line at p in a state this CPU may write (a hint). */
static inline void prefetch_for_write(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	/* prefetchw: a no-op where the CPU lacks it. */
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/*
 * Wait without dev->mu, without leaving the CPU, until *counter (written
 * with relaxed atomics by the other side) differs from seen, or *also (when
 * not NULL) differs from also_seen, for at most DEV_SPIN_NS; true when one
 * changed. For waits on another CPU's work that usually ends within a
 * microsecond, where sleeping and being woken would cost several.
 */
#define DEV_SPIN_NS 20000ull
bool dev_spin_until_changed(const uint64_t *counter, uint64_t seen, const uint64_t *also,
			    uint64_t also_seen);

static inline void dev_lock_mark(struct device *d)
{
	__atomic_store_n(&d->mu_cpu, sched_getcpu(), __ATOMIC_RELAXED);
}

static inline void dev_lock(struct device *d)
{
	if (pthread_mutex_trylock(&d->mu) != 0)
		dev_lock_slow(d);
	dev_lock_mark(d);
}

/* The hint is -1 while the lock is free or being taken, so a waiter never
 * mistakes a new holder for itself, the last one. */
static inline void dev_unlock(struct device *d)
{
	__atomic_store_n(&d->mu_cpu, -1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&d->mu);
}

/* pthread_cond_wait on one of d's condition variables. */
static inline void dev_cond_wait(struct device *d, pthread_cond_t *cv)
{
	__atomic_store_n(&d->mu_cpu, -1, __ATOMIC_RELAXED);
	pthread_cond_wait(cv, &d->mu);
	dev_lock_mark(d);
}

#endif /* DAO_CORE_LOCK_H */
