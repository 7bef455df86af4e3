/* SPDX-License-Identifier: MIT */
/*
 * executor.h - the one thread per device that runs the queue (executor.c).
 */
#ifndef DAO_CORE_EXECUTOR_H
#define DAO_CORE_EXECUTOR_H

#include "core/objects.h"

dao_status executor_start(struct device *d);
void executor_stop(struct device *d);

#endif /* DAO_CORE_EXECUTOR_H */
