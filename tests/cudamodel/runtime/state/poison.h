/* SPDX-License-Identifier: MIT */
/*
 * poison.h - discarded managed bytes: a bitmap per page of what
 * cudaMemDiscardAndPrefetchBatchAsync discarded and nothing wrote since. A
 * read of them, by a stream operation or by the host, stops the process
 * naming the read and the discard. The lock held.
 */
#ifndef DAO_CUDAMODEL_STATE_POISON_H
#define DAO_CUDAMODEL_STATE_POISON_H

#include <stdint.h>

#include "base/site.h"
#include "state/allocs.h"

void cm_poison_set(struct cm_alloc *m, uint64_t off, uint64_t len, const struct cm_site *site);
void cm_poison_clear(struct cm_alloc *m, uint64_t off, uint64_t len);
/* The same for one whole page, without freeing (signal handler). */
void cm_poison_drop_page(struct cm_alloc *m, uint32_t pg);
/* Stops the process if [off, off + len) of m holds discarded bytes. */
void cm_poison_check(struct cm_alloc *m, uint64_t off, uint64_t len, const struct cm_site *site,
		     const char *what);

#endif /* DAO_CUDAMODEL_STATE_POISON_H */
