/* SPDX-License-Identifier: MIT */
/*
 * handles.h - handles to objects: a dao_ctx names a struct ctx in the
 * process-wide table, a dao_buf a slot of its context (handles.c).
 */
#ifndef DAO_CORE_HANDLES_H
#define DAO_CORE_HANDLES_H

#include "core/objects.h"

/* The table's lock, for callers that must look up and attach atomically
 * (the shared devices of dao_open). */
void registry_lock(void);
void registry_unlock(void);

/* Enter context h: on success dev->mu is held (and, deterministic, it is
 * the job's turn, except inside a kernel function) and libdao logs at the
 * context's level; ctx_leave undoes it. ctx_enter_to_queue is for calls that
 * queue work or wait for it: from a kernel function of the same device it
 * returns DAO_ERR_REENTRANT. */
dao_status ctx_enter(dao_ctx h, struct ctx **out);
dao_status ctx_enter_to_queue(dao_ctx h, struct ctx **out);
void ctx_leave(struct ctx *c);
/* dao_launch's way in: as ctx_enter_to_queue, but without dev->mu (the
 * inbox, core/inbox.h); ctx_lock_device takes it (and the deterministic
 * turn) when the launch needs it after all. Leave with ctx_leave once
 * locked, else ctx_leave_unlocked. */
dao_status ctx_enter_to_launch(dao_ctx h, struct ctx **out);
/* dao_buffer_create's way in: as ctx_enter, without dev->mu. */
dao_status ctx_enter_unlocked(dao_ctx h, struct ctx **out);
void ctx_lock_device(struct ctx *c);
void ctx_leave_unlocked(struct ctx *c);

/* Context tags 1..CTX_TAGS, each held by at most one open context. */
#define CTX_TAGS 4095u

/* With the registry locked: give c a handle and a tag no open context holds
 * (DAO_ERR_LIMIT when CTX_TAGS contexts are open). */
dao_status registry_insert(struct ctx *c);
/* Start closing h: no new entries, waits for those in flight, removes it
 * from the table. DAO_ERR_CLOSED for a closed or forged handle,
 * DAO_ERR_REENTRANT from a kernel function of its device. */
dao_status registry_close(dao_ctx h, struct ctx **out);

/* Buffer handles of context c (c entered). */
dao_status slot_lookup(struct ctx *c, dao_buf b, struct slot **out);
dao_status slot_new(struct ctx *c, uint32_t *idx);
/* slot_new would grow the table (and move it: dev->mu needed too). */
bool slot_table_full(const struct ctx *c);
void slot_put(struct ctx *c, uint32_t idx);
void slot_put_unused(struct ctx *c, uint32_t idx);
void slot_table_free(struct ctx *c); /* at close: every slot goes */
/* dao_open, slot_mu held: the first table, faulted in now (chunks.c), so
 * that the context's first create finds it. Nothing on failure (the first
 * create tries again) and nothing under AddressSanitizer. */
void slot_table_prime(struct ctx *c);
uint32_t slot_index(dao_buf b); /* of a handle slot_lookup accepted */
dao_buf slot_handle(const struct ctx *c, uint32_t idx);

#endif /* DAO_CORE_HANDLES_H */
