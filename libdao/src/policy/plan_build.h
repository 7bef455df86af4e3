/* SPDX-License-Identifier: MIT */
/*
 * plan_build.h - one iteration's accesses, recorded, and the plan built
 * from them: for every buffer the iteration names, where it is used, so
 * that a policy following the plan knows each record's next use across
 * the whole iteration and into the next (Documentation/design.md, "The
 * plan policy"). The recorder runs where ops enter the access-pattern
 * table; the build runs off the executor's path (policy/plan.c's thread)
 * or in a tool; neither knows core's objects.
 *
 * Buffers are matched across iterations by their place in the iteration:
 * a buffer the iteration did not create (its id no larger than any id
 * named before the iteration began) must be the same record in the next
 * iteration; one it created is matched to the record the next iteration
 * names, new, at the same place (the n-th buffer first named there).
 */
#ifndef DAO_POLICY_PLAN_BUILD_H
#define DAO_POLICY_PLAN_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

/* An op as recorded: its seq, kind and uses (uses[first .. first + n - 1]). */
struct plan_op {
	uint64_t seq; /* in a plan: its offset from the iteration's mark */
	uint32_t first, n;
	enum policy_op_kind kind;
};

/* What the queued hook records, in the order of the device's stream. */
struct plan_record {
	struct plan_op *ops;
	size_t nops, capops;
	struct policy_use *uses;
	size_t nuses, capuses;
};

/* Append op; DAO_ERR_NOMEM (the record unchanged) or DAO_ERR_LIMIT when
 * the record would hold more than max_uses uses. */
dao_status plan_record_add(struct plan_record *r, const struct policy_op *op, size_t max_uses);
/* Drop the ops before index `from`, keeping the rest in order. */
void plan_record_drop_front(struct plan_record *r, size_t from);
void plan_record_free(struct plan_record *r);

/* An id -> index map (open addressing; ids are never 0 in core, but any
 * value works). */
struct plan_map {
	uint64_t *ids;
	uint32_t *vals;
	uint8_t *used;
	size_t cap; /* a power of two */
};

dao_status plan_map_init(struct plan_map *m, size_t entries);
void plan_map_clear(struct plan_map *m);
void plan_map_free(struct plan_map *m);
/* Insert or find: *val gets the stored value (val_if_new when it was not
 * there). Never fails: the map was sized for its entries. */
bool plan_map_put(struct plan_map *m, uint64_t id, uint32_t val_if_new, uint32_t *val);
/* Find: true with *val when present. */
bool plan_map_get(const struct plan_map *m, uint64_t id, uint32_t *val);

/* The plan for iterations like the recorded one. */
struct plan {
	uint64_t len;        /* seqs from its mark to the next */
	size_t nops;
	struct plan_op *ops; /* seq: offset from the mark */
	uint32_t *canon;     /* per use of ops: its buffer's index */
	uint64_t *bytes;     /* per use: the space it names */
	uint8_t *mode;       /* per use: its dao_mode */
	size_t nuses;
	size_t nbufs;
	uint64_t *buf_id;    /* per buffer: its record's id in the recorded iteration */
	uint8_t *persistent; /* per buffer: not created by the iteration (the same record next time) */
	uint32_t *use_start; /* per buffer, nbufs + 1: into use_off */
	uint64_t *use_off;   /* the offsets of each buffer's uses, ascending */
	struct plan_map persistent_ids; /* id -> buffer, persistent buffers only */
	/* Per use in use_off order: the iteration replayed on a device of
	 * the budget's size, in the policy's order of eviction and with
	 * every next use known, evicts the buffer after this use and before
	 * its next (plan_evict.h; NULL until it has run). */
	uint8_t *evicted;
	/* The replay's order passes over a buffer whose eviction needs a
	 * write-back while a clean one can make room (plan_choose_evictions:
	 * that order kept the busier copy engine less busy). */
	bool clean_first;
};

/*
 * Build the plan from ops[0 .. nops - 1] of record r, the iteration that
 * began at the mark of seq `start` and spans `len` seqs; ids no larger
 * than `max_id_before` were named before it. DAO_ERR_NOMEM, or
 * DAO_ERR_RANGE when it took more than cpu_limit_s of this thread's CPU
 * time (0: no limit); *out is then untouched.
 */
dao_status plan_build(const struct plan_record *r, size_t nops, uint64_t start, uint64_t len,
		      uint64_t max_id_before, double cpu_limit_s, struct plan **out);
void plan_free(struct plan *p);

/* The offset of buffer b's first use after offset `after` (0: its first
 * use; the mark itself is offset 0), or UINT64_MAX when it has none. */
uint64_t plan_next_use(const struct plan *p, uint32_t b, uint64_t after);
/* The same use's index in use_off (use_start[b + 1] when it has none). */
uint32_t plan_use_after(const struct plan *p, uint32_t b, uint64_t after);

#endif /* DAO_POLICY_PLAN_BUILD_H */
