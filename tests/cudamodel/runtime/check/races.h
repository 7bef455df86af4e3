/* SPDX-License-Identifier: MIT */
/*
 * races.h - the happens-before checker: two accesses to the same bytes, one
 * of them a write, by actors that nothing orders (stream order, events,
 * synchronisation) are a race; the model prints both call sites and stops
 * the process. The lock held.
 */
#ifndef DAO_CUDAMODEL_CHECK_RACES_H
#define DAO_CUDAMODEL_CHECK_RACES_H

#include <stdbool.h>
#include <stdint.h>

#include "base/site.h"
#include "check/clocks.h"

/* An access by actor with clock vc (vc->c[actor] its epoch) to
 * [p, p + len) (vc NULL: the calling host thread, not recorded): reports a
 * race with an unordered conflicting access and stops the process; then
 * records it. */
void cm_check(const void *p, uint64_t len, bool write, int actor, const struct cm_vc *vc,
	      const struct cm_site *site, const char *what);
/* Forgets every access to [p, p + len) (the memory is gone). */
void cm_check_forget(const void *p, uint64_t len);

#endif /* DAO_CUDAMODEL_CHECK_RACES_H */
