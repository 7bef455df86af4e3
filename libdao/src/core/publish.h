/* SPDX-License-Identifier: MIT */
/*
 * publish.h - residency published for daoctl in shared memory (publish.c,
 * layout in dao_publish.h). open and close run with dev->mu not held; tick
 * runs on the executor with dev->mu held after every op and must not make
 * system calls or block.
 */
#ifndef DAO_CORE_PUBLISH_H
#define DAO_CORE_PUBLISH_H

#include "core/objects.h"

/* A rebuild of the table walks every live buffer. One when the job waits
 * on an idle executor may walk this many buffers per op executed since the
 * previous such rebuild: a few percent of what an op costs (a buffer
 * walked costs 11-15 ns, a record's first line missed in the cache; an
 * empty kernel's whole overhead is 300-500 ns), counted in work, not in
 * wall-clock time, so neither a loaded machine nor a sync after every
 * kernel of a job with a million buffers changes what it costs or does. */
#define TABLE_WALK_PER_OP 2u

void publish_open(struct device *d);
/* busy: more ops are about to run; then the summary is rewritten only once
 * the coarse clock has moved since the last one, not after every op. */
void publish_tick(struct device *d, bool busy);
void publish_close(struct device *d);

#endif /* DAO_CORE_PUBLISH_H */
