/* SPDX-License-Identifier: MIT */
/*
 * pin.h - pinning host staging memory through dao.ko (/dev/dao), which
 * charges it to the node-wide limit. Without the module, or when its limit
 * refuses, the caller keeps its memory unpinned and carries on: pinning is
 * an optimisation, never a condition of correctness.
 *
 * DAO_PIN_DEVICE overrides the device path (default /dev/dao).
 */
#ifndef DAO_PIN_H
#define DAO_PIN_H

#include <stdint.h>

#include "dao.h"

struct dao_pin;

/* Never fails for a missing or unusable module: pinning is then just
 * unavailable, said once in the log. DAO_ERR_NULL, DAO_ERR_NOMEM otherwise. */
dao_status dao_pin_open(struct dao_pin **out);

/* 1 when ranges can be pinned through the module, 0 otherwise (or p NULL). */
int dao_pin_available(const struct dao_pin *p);

/*
 * Pin [addr, addr + len): both page aligned, len > 0. *handle gets what
 * dao_pin_unpin() takes.
 *   DAO_ERR_NULL      p, addr or handle is NULL
 *   DAO_ERR_INVALID   unaligned or zero length, or the range is not mapped
 *                     (writable: not mapped writable)
 *   DAO_ERR_OVERFLOW  addr + len wraps
 *   DAO_ERR_BACKEND   no module, or it refused (node limit, RLIMIT_MEMLOCK,
 *                     a process other than the opener): use the memory unpinned
 */
dao_status dao_pin_range(struct dao_pin *p, void *addr, uint64_t len, int writable,
			 uint64_t *handle);

/* Release one pin; unknown handles are ignored (and logged at debug). */
void dao_pin_unpin(struct dao_pin *p, uint64_t handle);

/* Unpins whatever is left and closes; p may be NULL. */
void dao_pin_close(struct dao_pin *p);

#endif /* DAO_PIN_H */
