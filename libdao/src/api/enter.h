/* SPDX-License-Identifier: MIT */
/*
 * enter.h - the shape every entry point shares: enter the context (its
 * device's lock held, core/handles.h), look up the buffer handle the call
 * names if it names one, do the work, leave. Inline: dao_launch goes
 * through it on every kernel.
 */
#ifndef DAO_API_ENTER_H
#define DAO_API_ENTER_H

#include "core/handles.h"

enum api_entry {
	API_LOOK,  /* reads or changes handles and figures only */
	API_QUEUE, /* queues work or waits for it (not from a kernel function) */
};

/*
 * Enter context h; with buf, also look *buf up into *s. On success the
 * caller holds *c and must api_leave() it; on failure nothing is held and
 * the status says why (the context's error first, then the buffer's).
 */
static inline dao_status api_enter(dao_ctx h, enum api_entry how, const dao_buf *buf,
				   struct ctx **c, struct slot **s)
{
	dao_status st = how == API_QUEUE ? ctx_enter_to_queue(h, c) : ctx_enter(h, c);

	if (st != DAO_OK || !buf)
		return st;
	st = slot_lookup(*c, *buf, s);
	if (st != DAO_OK)
		ctx_leave(*c);
	return st;
}

static inline void api_leave(struct ctx *c)
{
	ctx_leave(c);
}

#endif /* DAO_API_ENTER_H */
