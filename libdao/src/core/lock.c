/* SPDX-License-Identifier: MIT */
/*
 * lock.c - the waiting parts of dev->mu's discipline (lock.h says why):
 * spinning while the lock's holder or the thread about to give work runs on
 * another CPU, for a bounded time, before sleeping.
 */
#include <time.h>

#include "core/lock.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no system call */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Try again while the holder runs on another CPU, for up to DEV_SPIN_NS;
 * then, or once the holder is on this CPU, sleep in pthread_mutex_lock. */
void dev_lock_slow(struct device *d)
{
	int me = sched_getcpu();
	uint64_t start = 0;

	for (unsigned i = 1; me >= 0; i++) {
		if (__atomic_load_n(&d->mu_cpu, __ATOMIC_RELAXED) == me)
			break;
		cpu_relax();
		if (pthread_mutex_trylock(&d->mu) == 0)
			return;
		if (i == 1)
			start = mono_ns();
		else if (i % 64 == 0 && mono_ns() - start > DEV_SPIN_NS)
			break;
	}
	pthread_mutex_lock(&d->mu);
}

static bool unchanged(const uint64_t *counter, uint64_t seen, const uint64_t *also,
		      uint64_t also_seen)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED) == seen &&
	       (!also || __atomic_load_n(also, __ATOMIC_RELAXED) == also_seen);
}

bool dev_spin_until_changed(const uint64_t *counter, uint64_t seen, const uint64_t *also,
			    uint64_t also_seen)
{
	uint64_t start = mono_ns();

	for (unsigned i = 1; unchanged(counter, seen, also, also_seen); i++) {
		cpu_relax();
		/* The clock costs tens of cycles: look at it now and then. */
		if (i % 64 == 0 && mono_ns() - start > DEV_SPIN_NS)
			return false;
	}
	return true;
}
