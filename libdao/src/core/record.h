/* SPDX-License-Identifier: MIT */
/*
 * record.h - record lifetime (record.c, the one file that creates and
 * destroys records).
 */
#ifndef DAO_CORE_RECORD_H
#define DAO_CORE_RECORD_H

#include "core/objects.h"

/* The label of a record that has none. */
extern const char rec_no_label[1];

/* Give r the label `copy` (rec_no_label or its own heap copy), freeing the
 * copy it held. */
void rec_label_set(struct rec *r, const char *copy);

/* A new record of `bytes` for context c, with c->slot_mu held and dev->mu
 * not needed; the caller has checked the budgets and counted its bytes
 * into host_committed. It joins the device's list of live records (and
 * its statistics) at the next rec_adopt. */
dao_status rec_create(struct device *d, struct ctx *c, uint64_t bytes, struct rec **out);
/* dev->mu held: the records created since the last call join the list of
 * live ones, the statistics and max_asize. Every holder of dev->mu that
 * looks at that list or destroys a record calls it first. */
void rec_adopt(struct device *d);
/* dao_close, the context's calls drained: its unused records go back to
 * the device. */
void rec_ctx_release(struct device *d, struct ctx *c);
/* One handle fewer; the last one queues the record's free. */
void rec_unref(struct device *d, struct rec *r);
void rec_destroy(struct device *d, struct rec *r);
/* Frees the memory of every record the device had: at its destruction. */
void rec_cache_destroy(struct device *d);
void rec_cache_init(struct device *d);
/* dao_open: the device's first chunk of records, faulted in now unless it
 * has one (chunks.c). Nothing on failure (a create tries again) and
 * nothing under AddressSanitizer. */
void rec_cache_prime(struct device *d);
/* Its 'b' line in the trace, once. */
void trace_buffer_once(struct device *d, struct rec *r);

#endif /* DAO_CORE_RECORD_H */
