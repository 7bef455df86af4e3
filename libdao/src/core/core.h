/* SPDX-License-Identifier: MIT */
/*
 * core.h - libdao's internal objects and how they relate.
 *
 *   dao_ctx (handle) -> struct ctx      one ordered stream of work, its handles
 *   struct ctx       -> struct device   shared by the contexts of a process on
 *                                       one backend (decision 11)
 *   buffer handle    -> struct slot     per context: generation, references,
 *                                       owner record plus view offset/length
 *   struct slot      -> struct rec      one owning buffer: its future uses (the
 *                                       access-pattern table) and its residency
 *   struct op                           one queued operation (kernel, host
 *                                       write/read, free, iteration, sync); a
 *                                       kernel's distinct owners are its `opnd`s,
 *                                       each also a node of its record's use list
 *
 * Locking: one mutex per device (dev->mu) guards everything here. The executor
 * drops it only while a kernel function runs or while it waits for copies.
 */
#ifndef DAO_CORE_H
#define DAO_CORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mem/arena.h"
#include "backend/backend.h"
#include "dao.h"

#define DAO_MAX_OPERANDS 4096u
#define DAO_MAX_LOOKAHEAD 65536u
#define DAO_LABEL_MAX 64
#define DAO_HOST_ALIGN 256u

struct rec;
struct op;
struct ctx;
struct device;
struct dao_trace_writer;

enum { MODE_R = 1, MODE_W = 2, MODE_RW = 3 };

/* One distinct owning buffer of a queued op; a node of the record's list of
 * upcoming uses, in logical-time order. */
struct opnd {
	struct rec *rec;
	struct opnd *next_use;
	struct op *op;
	uint8_t mode;
};

/* One operand as the job gave it: resolved to its owner plus the view. */
struct karg {
	struct rec *rec;
	uint64_t off;
	uint64_t len;
};

enum op_kind { OP_KERNEL, OP_WRITE, OP_READ, OP_FREE, OP_ITER, OP_SYNC };

struct op {
	struct op *next; /* device queue, FIFO */
	enum op_kind kind;
	struct ctx *ctx;
	uint64_t seq; /* logical time: position in the device's op stream */
	/* OP_KERNEL */
	dao_kernel_fn fn;
	void *user;
	const char *name;
	uint64_t flops;
	uint32_t nargs;
	uint32_t nopnd;
	struct karg *args;
	struct opnd *opnd; /* distinct owners; host ops use opnd[0] */
	void **ptrs;
	uint64_t *sizes;
	/* OP_WRITE / OP_READ: range of opnd[0].rec, job memory */
	uint64_t off;
	uint64_t len;
	void *mem;
	/* OP_FREE */
	struct rec *free_rec;
	/* blocking ops: the submitter waits for done */
	bool blocking;
	bool done;
	dao_status result;
};

enum heap_id { HEAP_CLEAN = 0, HEAP_DIRTY = 1, HEAPS = 2 };

struct rec {
	uint64_t id; /* device-wide serial, never reused: trace id */
	uint64_t size;
	uint64_t asize; /* size rounded to the arena granularity */
	struct ctx *ctx;
	uint32_t refs; /* live handle slots naming it */
	bool released;
	bool traced; /* its 'b' line is in the trace */
	char label[DAO_LABEL_MAX];
	struct opnd *use_head, *use_tail;
	uint64_t stamp; /* launch-time deduplication */
	uint32_t stamp_idx;

	/* residency, decided by the executor */
	struct dao_block *blk; /* device allocation, NULL when not resident */
	bool dev_valid;        /* the device copy holds the current contents */
	bool host_valid;       /* the host copy (or the job's initial contents) is current */
	void *host;
	uint64_t pin_handle; /* module pin of the host copy, 0 if none */
	dao_fence ready;     /* device copy valid once reached */
	dao_fence busy;      /* every use of the device copy done once reached */
	dao_fence host_busy; /* every copy from or into the host copy done */
	uint64_t last_use;   /* seq of the last executed use */
	uint64_t load_seq;   /* seq when it became resident (fifo) */
	uint32_t pin;        /* operand of the op being executed: not a victim */
	bool ahead;          /* prefetched (or its space reserved); its use has not run */
	bool cleaned;        /* written back ahead of eviction, still resident and clean */
	int32_t heap_pos;    /* index in heaps[heap_which], -1 when absent */
	uint8_t heap_which;
	uint64_t key;
	/* iteration pattern: offset of the first use in the current iteration */
	uint64_t iter_no;
	uint64_t iter_off;
	/* every live record of the device, for publishing */
	struct rec *all_prev, *all_next;
};

/* A handle slot. Owners and views alike; views point at the owner's record. */
struct slot {
	uint32_t gen;
	uint32_t refs; /* 0: free slot */
	struct rec *rec;
	uint64_t off;
	uint64_t len;
	uint32_t next_free;
	bool is_view;
};

struct victim_heap {
	struct rec **v;
	uint32_t n;
	uint32_t cap;
};

struct device {
	pthread_mutex_t mu;
	pthread_cond_t work_cv; /* executor: work arrived */
	pthread_cond_t done_cv; /* submitters: op done, queue space */
	pthread_t thread;
	bool thread_started;
	bool stop;
	bool exec_waiting;     /* executor sleeps on work_cv */
	uint32_t done_waiters; /* threads sleeping on done_cv */

	struct dao_backend *be;
	dao_backend_kind kind;
	dao_policy policy;
	uint32_t lookahead;
	uint32_t flags;
	uint64_t budget;
	uint64_t host_budget;
	uint64_t host_committed; /* bytes of live owning buffers */
	bool shared;
	uint32_t nctx;
	uint32_t serial; /* registry bookkeeping */

	/* queue */
	struct op *qhead, *qtail;
	uint64_t queued;
	uint32_t flush; /* blocking ops or waiters in queue: run without waiting for a full window */
	uint64_t next_seq;
	uint64_t now_seq; /* seq of the op being executed */
	struct op *pinned_op; /* kernel whose operands are pinned, between prepare and retire */
	bool executing;   /* between popping an op and finishing it */

	/* policy */
	struct dao_arena arena;
	struct victim_heap heaps[HEAPS];
	struct op *pf_op; /* prefetch cursor: first op whose operands may still need a fetch */
	uint32_t pf_idx;
	uint64_t pf_bytes;    /* bytes brought in ahead whose use has not run */
	uint64_t clean_bytes; /* bytes written back ahead that are still resident */
	uint64_t max_asize;   /* largest buffer: sets how far ahead to work */
	uint64_t iter_no;
	uint64_t iter_start;
	uint64_t prev_iter_len; /* 0 until one iteration completed */

	uint64_t next_rec_id;
	uint64_t stamp;
	uint64_t trace_iter;
	struct dao_trace_writer *trace;
	struct dao_pin *pin;
	struct dao_publisher *pub;
	struct rec *all_recs; /* list of live records (rec->all_next) */
	char job_name[64];

	dao_fence issued; /* everything submitted to the backend so far */
	dao_status failure; /* backend failure: sticky for every context */
	dao_stats stats;
};

struct ctx {
	uint64_t id; /* the dao_ctx value */
	uint32_t tag;
	struct device *dev;
	struct slot *slots;
	uint32_t nslots;
	uint32_t free_head; /* 1-based; 0 none */
	uint64_t live_handles;
	uint64_t queued;
	uint32_t active; /* API calls in flight (registry mutex) */
	bool closing;
	dao_status failure; /* first kernel failure */
	char job_name[64];
};

/* registry.c */
dao_status ctx_enter(dao_ctx h, struct ctx **out); /* locks dev->mu on success */
void ctx_leave(struct ctx *c);                      /* unlocks dev->mu */

/* buffers.c */
dao_status slot_lookup(struct ctx *c, dao_buf b, struct slot **out);
void rec_unref(struct device *d, struct rec *r);
void rec_destroy(struct device *d, struct rec *r);
void ctx_tag_set(uint32_t tag, bool open);

/* submit.c */
void queue_push(struct device *d, struct op *op);
/* Deterministic mode: wait until a non-blocking op may be queued. */
void queue_wait_turn(struct device *d);
/* Sleep on done_cv (signalled after every op the executor finishes). */
void wait_done(struct device *d);
static inline bool queue_window_full(const struct device *d)
{
	return d->qhead && d->qtail->seq - d->qhead->seq >= d->lookahead;
}
dao_status op_wait(struct device *d, struct op *op);
void trace_buffer_once(struct device *d, struct rec *r);

/* executor.c */
dao_status executor_start(struct device *d);
void executor_stop(struct device *d);

/* residency.c: all called with dev->mu held, from the executor */
dao_status res_prepare_kernel(struct device *d, struct op *op, dao_fence *after);
void res_after_kernel(struct device *d, struct op *op, uint64_t kseq);
void res_retire(struct device *d, struct op *op);
void res_prefetch(struct device *d);
dao_status res_host_write(struct device *d, struct op *op);
dao_status res_host_read(struct device *d, struct op *op);
void res_free_rec(struct device *d, struct rec *r);
void res_skip(struct device *d, struct op *op);
void res_iteration(struct device *d, struct op *op);
dao_status res_wait(struct device *d, const dao_fence *f);

/* victim.c */
void victim_init(struct device *d);
void victim_destroy(struct device *d);
void victim_update(struct device *d, struct rec *r); /* (re)insert a resident, unpinned record */
void victim_remove(struct device *d, struct rec *r);
/* The next victim, or NULL. With limit_seq != 0 only records whose next use
 * comes after limit_seq qualify (prefetch must not evict what is needed sooner). */
struct rec *victim_pick(struct device *d, uint64_t limit_seq);
uint64_t victim_next_use(struct device *d, struct rec *r);
/* Eviction key u's record will have once use u is done. */
uint64_t victim_key_after(struct device *d, const struct opnd *u);

/* publish.c: residency published for daoctl (shared memory). open and close
 * run with dev->mu not held; tick runs on the executor with dev->mu held
 * after every op and must not make system calls or block. */
void publish_open(struct device *d);
void publish_tick(struct device *d);
void publish_close(struct device *d);

/* config.c */
struct resolved_config {
	dao_backend_kind backend;
	bool backend_explicit;
	dao_policy policy;
	bool policy_explicit;
	uint32_t lookahead;
	dao_log_level log_level;
	uint64_t device_budget;
	uint32_t device_budget_percent;
	bool budget_explicit;
	uint64_t host_budget;
	uint32_t host_budget_percent;
	uint32_t flags;
	char trace_path[4096];
	char job_name[64];
};
dao_status config_resolve(const dao_config *cfg, struct resolved_config *out);
uint64_t config_percent_of(uint64_t total, uint32_t percent);

static inline bool rec_dirty(const struct rec *r)
{
	return r->blk && r->dev_valid && !r->host_valid;
}

#endif /* DAO_CORE_H */
