/* SPDX-License-Identifier: MIT */
/*
 * policy.h - what a policy decides, and the facts core hands it to decide.
 *
 * A policy is an ops table (struct dao_policy_ops) in a file of its own
 * (dao.c, belady.c, lru.c, fifo.c, plan.c) and a row { id, name, ops } of the table
 * of policies (policy.c). Core keeps the mechanics (the access-pattern
 * table, the victim heaps, modeled time, the copies) and asks the device's
 * policy where a decision is made; it never tests which policy runs. This
 * layer sees none of core's objects: a record, an op and the queued window
 * reach a policy as the facts below, and a policy answers in keys, seqs,
 * bytes and yes/no.
 *
 * Times are logical: an op's seq, its position in the device's stream.
 * Every hook runs on the device's executor (or, for queued, wherever an op
 * enters the access-pattern table) with the device's mutex held, and gets
 * the device's policy state (create; NULL for a stateless policy).
 *
 * The victim order is called for every re-ranked record, several times a
 * kernel: its facts are plain fields, filled without a walk. The other
 * decisions are asked only where one is made (a fetch that needs room,
 * dirty data that could be cleaned), and what costs a walk of the window
 * is asked for, through the decision's question functions, only by the
 * policies that use it.
 */
#ifndef DAO_POLICY_H
#define DAO_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dao.h"

/* Next-use facts (struct policy_rec's next_use) besides a seq: host (its
 * next use is a host kernel's, which takes it off the device: keeping it
 * until then saves nothing, and what evicting it copies back is owed
 * anyway), dead (its next access overwrites it whole, or it awaits its
 * free), unknown (no queued use, none predicted). */
#define POLICY_USE_HOST (UINT64_MAX - 2)
#define POLICY_USE_DEAD (UINT64_MAX - 1)
#define POLICY_USE_UNKNOWN UINT64_MAX

/*
 * Victim keys: the largest is evicted first. A key is the logical time the
 * policy reckons the record is needed next, for core compares keys with
 * seqs: a prefetch for kernel k evicts only records keyed after k (rule 1,
 * do no harm), and cleaning ahead asks about the dirty records in key
 * order. So a policy that knows no future keys every record at
 * POLICY_KEY_UNKNOWN or above (after every known use), and dead data,
 * which costs nothing to drop, at POLICY_KEY_DEAD.
 */
#define POLICY_KEY_DEAD POLICY_USE_DEAD
#define POLICY_KEY_UNKNOWN (UINT64_C(1) << 62)
#define POLICY_KEY_SPAN (UINT64_C(1) << 61) /* of policy_key_oldest_first's keys */

/* A key after every known use that ranks the smaller seq first (the least
 * recently used, the first loaded). */
static inline uint64_t policy_key_oldest_first(uint64_t seq)
{
	return POLICY_KEY_UNKNOWN + (POLICY_KEY_SPAN - (seq & (POLICY_KEY_SPAN - 1)));
}

/* What core knows of a resident, unpinned record when it ranks it. */
struct policy_rec {
	uint64_t id;    /* the record's serial on its device, never reused (the trace's id) */
	uint64_t bytes; /* the device space it takes */
	/* Its next use as the access-pattern table knows it: the seq of its
	 * next queued use, else of the use predicted at the same offset of
	 * the next iteration (predicted), else POLICY_USE_UNKNOWN; or
	 * POLICY_USE_DEAD when its data is dead, POLICY_USE_HOST when a host
	 * kernel is next. */
	uint64_t next_use;
	uint64_t last_use; /* seq of its last executed use (0: none) */
	uint64_t load_seq; /* seq at which it became resident */
	bool predicted;
	/* Evicting it copies it back to the host, where evicting a clean
	 * record copies nothing: valid on the device only, its data not dead
	 * and no host kernel next, on a backend that drops clean data without
	 * a copy. */
	bool dirty;
};

/* Belady's key, which dao and belady share: the next use, dead data
 * first, unknown futures after every known use, least recently used
 * first. */
static inline uint64_t policy_key_next_use(const struct policy_rec *r)
{
	return r->next_use != POLICY_USE_UNKNOWN ? r->next_use : policy_key_oldest_first(r->last_use);
}

/* A policy's rank for a record. apart: the record ranks apart from the
 * others, in a heap of its own (dirty data, whose eviction costs a
 * write-back now); when both heaps hold a victim, pick_apart chooses. */
struct policy_rank {
	uint64_t key;
	bool apart;
};

/*
 * The default policy's victim order (dao.c): Belady's key, with dirty
 * records apart, for their eviction costs a write-back now. Core ranks a
 * device whose table names policy_rank_dirty_apart with this inline copy
 * instead of calling through the table (core/victim.c): the same answer
 * without an indirect call and the facts it does not read, four times a
 * kernel. (The kernel's INDIRECT_CALL_1 does the same for retpolines.)
 */
static inline struct policy_rank policy_rank_dirty_apart_inline(const struct policy_rec *r)
{
	return (struct policy_rank){ .key = policy_key_next_use(r), .apart = r->dirty };
}

struct policy_rank policy_rank_dirty_apart(void *state, const struct policy_rec *r);

/* A prefetch (a fetch, or space for an output, before its kernel's turn). */
struct policy_fetch {
	uint64_t target;      /* seq of the kernel it is for */
	uint64_t id;          /* the record */
	uint64_t bytes;       /* the space it takes */
	uint64_t ahead_bytes; /* space taken by prefetches whose kernels have not run */
	uint64_t budget;      /* the device's */
	bool output;          /* only space for a w operand: nothing copied */
};

/* A prefetch for kernel `target` found no free space, and a record keyed
 * after target could make room. The policy may ask (each question walks
 * the queued window once; core keeps the answer for the decision): */
struct policy_fetch_room {
	uint64_t target;
	/* Rule 2: the best key that a record used before target (the running
	 * kernel's operands included) will have once that use is done; 0
	 * when none. Evicting a worse victim now is harm Belady's order would
	 * not do at target's turn. */
	uint64_t (*better_key)(struct policy_fetch_room *q);
	/* Modeled time (core/horizon.c): whether target's fetches, put off
	 * to the next decision (the next kernel's end), would arrive after
	 * target could start. */
	bool (*due)(struct policy_fetch_room *q);
	/* Whether they would, put off until the better victim is freed (the
	 * end of its last use before target). */
	bool (*late_waiting)(struct policy_fetch_room *q);
};

/* fetch_room's answer when the prefetch may evict nothing. */
#define POLICY_EVICT_NONE UINT64_MAX

/* Dirty data that cleaning ahead could write back now (it stays
 * resident and clean): the top of the heap of records ranked apart,
 * asked while there are dirty records (whether the live records all fit
 * is live_fits, the policy's to weigh). */
struct policy_clean {
	uint64_t id;            /* the candidate's record */
	uint64_t key;           /* the candidate's */
	uint64_t bytes;         /* its space */
	uint64_t frontier;      /* seq of the first op whose fetches are not yet issued */
	uint64_t free_bytes;    /* free device space */
	uint64_t cleaned_bytes; /* space of records cleaned ahead and still resident */
	/* Every live record fits beside what is allocated: nothing the table
	 * holds now will be evicted (records the job has yet to create may
	 * still need room: what the window holds is in peak_room, what lies
	 * beyond it only a plan of the iteration knows). */
	bool live_fits;
	uint64_t walk_end; /* seq of the first op past the window's walk: peak_room sees none from it on */
	/* Modeled d2h time of the write-backs cleaning ahead has issued that
	 * the engine has not worked through yet (how far ahead cleaning
	 * already is; the bytes it cleaned long ago and that are still
	 * resident are not in it). */
	uint64_t queue_ns;
	/* The same for the h2d engine and every fetch issued: how long the
	 * fetches issued keep it busy (a fetch issued now waits as long). */
	uint64_t fetch_queue_ns;
	/* Modeled time over the queued window (core/horizon.c): the most
	 * space the window's placements take at once before the candidate's
	 * next use (walked once per candidate); the time the kernels before
	 * the frontier compute (once per turn); the time the d2h engine
	 * moves `bytes`. */
	uint64_t (*peak_room)(struct policy_clean *c);
	uint64_t (*compute_ns)(struct policy_clean *c);
	uint64_t (*d2h_ns)(struct policy_clean *c, uint64_t bytes);
};

/* The plan policy's order of eviction (DAO_CONFIG_PLAN_DAO_ORDER,
 * DAO_CONFIG_PLAN_CLEAN_FIRST): chosen by each plan's replay, or fixed. */
enum policy_order { POLICY_ORDER_CHOSEN, POLICY_ORDER_DAO, POLICY_ORDER_CLEAN_FIRST };

/* The device a policy's state is created for. */
struct policy_device {
	uint64_t budget;
	uint32_t lookahead;
	double h2d_bytes_per_s, d2h_bytes_per_s, flops_per_s, mem_bytes_per_s;
	uint64_t launch_ns;
	/* The device is a model whose clock the executor drives (the
	 * simulator): work a policy would do in the background takes none of
	 * its time, so the policy does it at once, and the run is the same
	 * every time. */
	bool modeled;
	/* Decisions must depend on the program alone
	 * (DAO_CONFIG_DETERMINISTIC): no work in the background whose timing
	 * would show in them, so it too is done at once. */
	bool deterministic;
	/* Records of a smaller id existed before the policy took over, and
	 * ops of a smaller seq were queued before it: it saw none of them (1
	 * and 1 at open). A policy created for a device already in use (the
	 * default for a job that marks iterations, policy.c) knows from them
	 * which records were not made after it started, and which marks come
	 * after ops it did not see. */
	uint64_t ids_before, seq_start;
	enum policy_order order;
	/* The plan policy's prefetches take their room at once
	 * (DAO_CONFIG_PLAN_EAGER). */
	bool eager;
};

/* An iteration mark (dao_iteration) reached by the executor. */
struct policy_mark {
	uint64_t seq;       /* the mark's */
	uint64_t iteration; /* iterations begun so far */
	uint64_t prev_len;  /* seqs the iteration that just ended spans (0: none yet) */
	/* The next mark's seq when it is queued already, so that the
	 * iteration beginning here is queued whole (0: it is not). */
	uint64_t next_seq;
};

/* An op entering the access-pattern table: a kernel or a host access. */
enum policy_op_kind { POLICY_OP_KERNEL, POLICY_OP_WRITE, POLICY_OP_READ };

struct policy_use {
	uint64_t id;
	uint64_t bytes;
	dao_mode mode;
};

struct policy_op {
	uint64_t seq;
	enum policy_op_kind kind;
	uint64_t flops;
	uint32_t nuses;
	const struct policy_use *uses; /* its distinct records, valid during the call */
};

/* What a hook at a mark or an op asks of core: POLICY_RERANK when the
 * policy's order changed as a whole (say, it stops following a plan): core
 * then re-ranks every resident record before its next decision. */
enum policy_after { POLICY_CONTINUE, POLICY_RERANK };

/* rank, fetch_now and fetch_room are required (a device refuses a table
 * without them); the others may be NULL. */
struct dao_policy_ops {
	/* Per-device state, created with the device and destroyed with it
	 * (both NULL: stateless, state NULL). */
	dao_status (*create)(const struct policy_device *dev, void **state);
	void (*destroy)(void *state);

	/* The victim order: a resident, unpinned record's rank, called
	 * whenever its facts may have changed. A stateful policy takes over
	 * victim choice by ranking from its state. */
	struct policy_rank (*rank)(void *state, const struct policy_rec *r);
	/* Both heaps have a victim: whether the one ranked apart goes first
	 * (now: the seq being executed). NULL: the larger key. */
	bool (*pick_apart)(void *state, uint64_t apart_key, uint64_t key, uint64_t now);

	/* Prefetch: whether this fetch is issued now (false: the walk along
	 * the window stops until the next kernel's turn). */
	bool (*fetch_now)(void *state, const struct policy_fetch *f);
	/* A prefetch needs room: the least key a victim may have (0: any
	 * that rule 1 allows; POLICY_EVICT_NONE: none, it waits). */
	uint64_t (*fetch_room)(void *state, struct policy_fetch_room *q);

	/* Cleaning ahead: whether to write candidate c back now (false: no
	 * more this turn). NULL: never. */
	bool (*clean)(void *state, struct policy_clean *c);

	/* A dirty record was evicted with its write-back (nothing had
	 * cleaned it ahead); key: its rank's then. NULL: unused. */
	void (*evicted_dirty)(void *state, uint64_t id, uint64_t key);

	/* Hooks, NULL when unused: an iteration mark executed; an op entered
	 * the access-pattern table (in the order of the device's stream). */
	enum policy_after (*iteration)(void *state, const struct policy_mark *m);
	enum policy_after (*queued)(void *state, const struct policy_op *op);

	/* Its own figures for the line DAO_SUMMARY writes as the device
	 * closes: " key=value" pairs into buf (len > 0, always terminated).
	 * NULL: none. */
	void (*summary)(void *state, char *buf, size_t len);
};

/* The policies, one file each. */
extern const struct dao_policy_ops policy_dao, policy_belady, policy_lru, policy_fifo, policy_plan;

/* What several policies share (prefetch.c). fetch_now: rule 3, at most
 * max(budget / 64, 3 x the buffer) bytes fetched ahead of their kernels
 * at a time. fetch_room: evict nothing (prefetch into free space only). */
bool policy_fetch_bounded(void *state, const struct policy_fetch *f);
uint64_t policy_room_free_only(void *state, struct policy_fetch_room *q);
/* Whether the d2h engine has time to clean the candidate now: it is needed
 * after the prefetch frontier, and nothing cleaning queued is left or
 * its write-back fits, with what is queued, in the kernels' time up to
 * the frontier, or in at_least_ns if that is longer (policy/dao.c; dao's
 * clean passes 0, plan's the h2d engine's queue where its plan says the
 * candidate leaves). */
bool policy_clean_in_time(struct policy_clean *c, uint64_t at_least_ns);

/* A row of the table of policies (policy.c), one per dao_policy but
 * DEFAULT: the one list of their names (dao_policy_name, DAO_POLICY and
 * every tool's and the Slurm plugin's list come from it: tools/kinds). */
struct dao_policy_entry {
	dao_policy id;
	const char *name;
	const struct dao_policy_ops *ops;
};

/* The row of p, NULL for DEFAULT or a value no row has. */
const struct dao_policy_entry *policy_entry(dao_policy p);
/* The row named name, NULL when none is. */
const struct dao_policy_entry *policy_named(const char *name);
/* The ops of p, NULL for DEFAULT or a value no row has. */
const struct dao_policy_ops *policy_ops(dao_policy p);
/* What DAO_POLICY_DEFAULT resolves to. */
dao_policy policy_default(void);
/* What a device whose policy the job did not choose takes at its first
 * iteration mark (dao_iteration): the default for iterative jobs. */
dao_policy policy_default_iterative(void);
/* Whether p may appear in a dao_config (a policy, or DEFAULT). */
bool policy_valid(dao_policy p);

#endif /* DAO_POLICY_H */
