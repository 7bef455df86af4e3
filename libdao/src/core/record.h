/* SPDX-License-Identifier: MIT */
/*
 * record.h - record lifetime (record.c, the one file that creates and
 * destroys records).
 */
#ifndef DAO_CORE_RECORD_H
#define DAO_CORE_RECORD_H

#include "core/objects.h"

/* A new record of `bytes` for context c, counted against the host budget;
 * the caller has checked the budgets. */
dao_status rec_create(struct device *d, struct ctx *c, uint64_t bytes, struct rec **out);
/* One handle fewer; the last one queues the record's free. */
void rec_unref(struct device *d, struct rec *r);
void rec_destroy(struct device *d, struct rec *r);
/* Frees the memory of every record the device had: at its destruction. */
void rec_cache_destroy(struct device *d);
/* Its 'b' line in the trace, once. */
void trace_buffer_once(struct device *d, struct rec *r);

#endif /* DAO_CORE_RECORD_H */
