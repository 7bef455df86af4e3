/* SPDX-License-Identifier: MIT */
/*
 * launch.h - a kernel launch, from the job's call to the queued op
 * (launch.c). The job's operands change form once: launch_resolve turns
 * them into the op's own arrays (struct karg per operand, struct opnd per
 * distinct owner), written where the op will hold them (the locked path)
 * or into an inbox cell of the same types (core/inbox.c), from which the
 * op is copied as it is. (struct launch, the call as the job made it, is
 * in objects.h: the inbox takes it too.)
 */
#ifndef DAO_CORE_LAUNCH_H
#define DAO_CORE_LAUNCH_H

#include <stddef.h>

#include "core/objects.h"

/* Up to this many operands, duplicates are found by looking at the owners
 * found so far (no line the executor uses is written); beyond it, by
 * stamping the records, which needs dev->mu. */
#define LAUNCH_SCAN_MAX 8u

/*
 * Resolve l's operands in context c (entered; c->slot_mu or dev->mu held,
 * and dev->mu when l->count > LAUNCH_SCAN_MAX): args[i] is operand i's
 * owner record and view (rec NULL for zero bytes), opnd[0..*nopnd) the
 * distinct owners in first-use order with their modes or'ed (a write of
 * part of a buffer updates its owner). A bad handle's status, or
 * DAO_ERR_BUDGET (logged) when the owners do not fit in the budget
 * together; args and opnd are then partly written and meaningless.
 */
dao_status launch_resolve(struct ctx *c, const struct launch *l, struct karg *args,
			  struct opnd *opnd, uint32_t *nopnd);

/* With dev->mu held (c entered and locked): wait for room in c's window
 * (and, deterministic, for the job's turn), then queue l. */
dao_status launch_locked(struct ctx *c, const struct launch *l);

#endif /* DAO_CORE_LAUNCH_H */
