/* SPDX-License-Identifier: MIT */
/*
 * launch.h - a kernel launch, from the job's call to the queued op
 * (launch.c). The job's operands change form once: one resolver turns
 * them into the op's own arrays (struct karg per operand, struct opnd per
 * distinct owner), written where the op will hold them (the locked path)
 * or into an inbox cell of the same types (core/inbox.c), from which the
 * op is copied as it is. (struct launch, the call as the job made it, is
 * in objects.h: the inbox takes it too.)
 */
#ifndef DAO_CORE_LAUNCH_H
#define DAO_CORE_LAUNCH_H

#include <stddef.h>

#include "core/inbox.h"
#include "core/objects.h"

/* With dev->mu held (c entered and locked): wait for room in c's window
 * (and, deterministic, for the job's turn), then queue l. */
dao_status launch_locked(struct ctx *c, const struct launch *l);

/* c entered without dev->mu, l of at most INBOX_OPERANDS operands: queue l
 * through the inbox (core/inbox.h). INBOX_QUEUED: done, with the job's
 * error (a bad handle, the budget) in *st if any, nothing queued then;
 * INBOX_LOCKED or INBOX_FULL: take dev->mu and launch_locked (after
 * inbox_launch_uncount for FULL). */
enum inbox_result launch_through_inbox(struct ctx *c, const struct launch *l, dao_status *st);

#endif /* DAO_CORE_LAUNCH_H */
