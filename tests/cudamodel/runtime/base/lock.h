/* SPDX-License-Identifier: MIT */
/*
 * lock.h - the model's one lock. It guards all of the model's state; stream
 * workers drop it only while they move bytes. Taking it does not start the
 * model: an entry point starts it first (api/init.h, cm_enter).
 */
#ifndef DAO_CUDAMODEL_BASE_LOCK_H
#define DAO_CUDAMODEL_BASE_LOCK_H

#include <pthread.h>

void cm_lock(void);
void cm_unlock(void);
/* Waits on cv, the lock held before and after. */
void cm_wait(pthread_cond_t *cv);

#endif /* DAO_CUDAMODEL_BASE_LOCK_H */
