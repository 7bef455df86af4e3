/* SPDX-License-Identifier: MIT */
/* lock.c - the model's one lock (lock.h). */
#include "base/lock.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void cm_lock(void)
{
	pthread_mutex_lock(&lock);
}

void cm_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

void cm_wait(pthread_cond_t *cv)
{
	pthread_cond_wait(cv, &lock);
}
