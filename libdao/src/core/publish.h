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

void publish_open(struct device *d);
void publish_tick(struct device *d);
void publish_close(struct device *d);

#endif /* DAO_CORE_PUBLISH_H */
