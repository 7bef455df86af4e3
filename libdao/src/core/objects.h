/* SPDX-License-Identifier: MIT */
/*
 * objects.h - the core's objects and how they relate.
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
 * The exceptions, for dao_launch's and dao_buffer_create's paths without
 * dev->mu (core/inbox.c, core/record.c; Documentation/design.md, Locking):
 * a context's handle slots are written under its slot_mu (and dev->mu too,
 * except by a create that does not grow the table), read under either; the
 * device's inbox is a ring of its own (struct dev_inbox); new records, the
 * record cache and host_committed are atomic or under their own locks
 * (struct rec_cache, struct ctx_recs).
 */
#ifndef DAO_CORE_OBJECTS_H
#define DAO_CORE_OBJECTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/fence.h"
#include "dao.h"
#include "mem/arena.h"

struct dao_backend;
struct dao_pin;
struct dao_publisher;
struct dao_policy_ops;
struct policy_use;

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
	struct rec *rec; /* NULL for an operand of zero bytes */
	uint64_t off;
	uint64_t len;
};

/* One dao_launch_named call as the job made it (checked by the API:
 * operands non-NULL when counted, at most DAO_MAX_OPERANDS, modes valid),
 * until it is an op (core/launch.h). */
struct launch {
	const char *name; /* NULL: unnamed */
	size_t namelen;   /* strnlen(name, LAUNCH_NAME_MAX) */
	uint64_t flops;
	uint32_t flags; /* DAO_LAUNCH_*: the inbox takes only 0 */
	dao_kernel_fn fn;
	void *user;
	const dao_operand *ops;
	size_t count;
};

#define LAUNCH_NAME_MAX 255u

enum op_kind { OP_KERNEL, OP_WRITE, OP_READ, OP_FREE, OP_ITER, OP_SYNC };

struct op {
	struct op *next; /* device queue, FIFO */
	enum op_kind kind;
	struct ctx *ctx;
	uint64_t seq; /* logical time: position in the device's op stream */
	/* OP_KERNEL */
	bool on_host; /* a host kernel (DAO_LAUNCH_HOST): works on host copies */
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
	bool cached; /* from the device's op cache (queue.c), goes back there */
	bool in_inbox; /* a cell of the device's inbox (inbox.c), goes back there */
	uint64_t ticket; /* in_inbox: its position in the inbox */
	/* blocking ops: the submitter waits for done */
	bool blocking;
	bool done;
	dao_status result;
};

enum heap_id { HEAP_CLEAN = 0, HEAP_DIRTY = 1, HEAPS = 2 };

/*
 * One owning buffer. The first cache line is what a create writes and a
 * launch reads; of the rest, a create writes only heap_pos and host_valid
 * (the first bytes of the second line) and leaves the others zero until
 * the buffer is used: two lines of fresh memory instead of the whole
 * record (core/record.c).
 */
struct rec {
	uint64_t id; /* device-wide serial, never reused: trace id */
	uint64_t size;
	uint64_t asize; /* size rounded to the arena granularity */
	struct ctx *ctx;
	/* "" (rec_no_label) or its own copy (dao_set_label), never NULL */
	const char *label;
	/* every live record of the device, for publishing (core/record.c:
	 * a new record waits on the device's list of new ones until dev->mu's
	 * holder moves it here) */
	struct {
		struct rec *prev, *next;
	} all;
	uint32_t refs; /* live handle slots naming it */
	bool released;
	bool traced; /* its 'b' line is in the trace */

	/* From here on the executor writes, some fields for every kernel: a
	 * line apart from the first, which every launch reads. */
	struct {
		int32_t pos; /* index in heaps[which], -1 when absent */
		uint8_t which;
	} heap;
	/* Where the current contents are, changed together by every move. */
	struct {
		bool host_valid; /* the host copy (or the job's initial contents) is current */
		bool dev_valid;  /* the device copy holds the current contents */
		bool ahead;      /* prefetched (or its space reserved); its use has not run */
		bool cleaned;    /* written back ahead of eviction, still resident and clean */
		bool lost;       /* a kernel that writes it failed: its contents are undefined */
	} copies;
	uint32_t pin; /* operand of the op being executed: not a victim */
	/* its uses in the access-pattern table, oldest first */
	struct {
		struct opnd *head, *tail;
	} uses;
	/* launch-time deduplication: the device's stamp when a launch last
	 * named it, and that launch's operand index */
	struct {
		uint64_t seq;
		uint32_t idx;
	} stamp;

	/* residency, decided by the executor */
	struct dao_block *blk; /* device allocation, NULL when not resident */
	void *host;
	uint64_t pin_handle; /* module pin of the host copy, 0 if none */
	struct {
		dao_fence ready;     /* device copy valid once reached */
		dao_fence busy;      /* every use of the device copy done once reached */
		dao_fence host_busy; /* every copy from or into the host copy done */
	} fence;
	uint64_t last_use; /* seq of the last executed use */
	uint64_t load_seq; /* seq when it became resident (fifo) */
	uint64_t key;
	/* iteration pattern: offset of the first use in the current iteration */
	struct {
		uint64_t no;
		uint64_t off;
	} iter;
} __attribute__((aligned(64)));

/* A handle slot. Owners and views alike; views point at the owner's record. */
struct slot {
	uint32_t gen;
	uint32_t gen_first; /* its first generation: the slot retires before reaching it again */
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

/*
 * Records are carved from huge-page chunks the device keeps until it is
 * destroyed (record.c, chunks.c): no malloc per buffer, pages touched once,
 * and a record of fresh memory needs no clearing. Creates do not take dev->mu: they carve
 * under mu (taken only by creates, for a batch of records at a time) and
 * take destroyed records back from `returned`, a stack the destroyers
 * (dev->mu held) push onto and a create empties at once into its context's
 * own list (struct ctx_recs).
 */
struct rec_cache {
	pthread_mutex_t mu;
	void **chunks;
	uint32_t nchunks, cap;
	char *cur;     /* unused part of the newest chunk */
	size_t left;   /* its bytes */
	bool cur_zero; /* that chunk is fresh memory, all zero */
	struct rec *returned __attribute__((aligned(64))); /* linked through all_next; atomic */
	/* New records not yet in dev->all_recs: pushed by creates, moved
	 * there by dev->mu's holder (rec_adopt). Atomic. */
	struct rec *fresh;
};

/* A context's records ready for its next creates: under its slot_mu. */
struct ctx_recs {
	struct rec *free; /* linked through all_next */
	char *cur;        /* a batch carved from the device's chunk */
	size_t left;
	bool zero;        /* the batch is fresh memory, all zero */
};

/* The device's queue of ops (queue.c pushes, executor.c pops). */
struct dev_queue {
	struct op *head, *tail;
	uint64_t queued;
	uint32_t flush; /* blocking ops or waiters in queue: run without waiting for a full window */
	uint64_t next_seq;
	uint64_t now_seq;     /* seq of the op being executed */
	struct op *pinned_op; /* kernel whose operands are pinned, between prepare and retire */
	bool executing;       /* between popping an op and finishing it */
	/* Ops pushed so far; read without dev->mu by the executor's poll. */
	uint64_t pushed;
	/* Ops finished so far: read without dev->mu by waiters that spin
	 * (queue.c). */
	uint64_t finished;
	/* Finished small ops kept for reuse (queue.c): no malloc per launch. */
	struct op *free_ops;
	uint32_t nfree;
};

/*
 * Kernels launched without dev->mu (inbox.c): a bounded ring of cells. A
 * launch claims position p (a compare-and-swap on tail while cell p's
 * sequence number says it is free), writes what it resolved into the cell
 * and sets the sequence number to p + 1; whoever holds dev->mu turns the
 * published cells, in position order, into the ops of the same index (in
 * ops, which only that side writes) and puts those into the queue and the
 * table; the executor gives both back (p + cells) once the op is finished.
 * A cell is written by the job's thread and only read by the other side,
 * so its cache lines are never dirty in the executor's cache when the next
 * launch writes them. cells == 0: the device has no inbox (deterministic
 * or traced).
 */
#define INBOX_OPERANDS 8u /* at most this many operands go through the inbox */
#define INBOX_NAME_MAX 64u /* and names of fewer characters */

struct inbox_cell {
	dao_kernel_fn fn;
	void *user;
	struct ctx *ctx;
	uint64_t flops;
	uint32_t nargs;
	uint32_t nopnd;
	bool named;
	/* The op's own arrays (core/launch.h), copied into it as they are. */
	struct karg args[INBOX_OPERANDS];
	struct opnd opnd[INBOX_OPERANDS];
	char name[INBOX_NAME_MAX];
};

struct dev_inbox {
	/* Set at device creation. */
	uint64_t *seq __attribute__((aligned(64))); /* per cell */
	struct inbox_cell *cell;
	char *ops;      /* the op of each cell: cells * op_bytes */
	size_t op_bytes;
	uint32_t cells; /* a power of two, or 0 */
	uint64_t tail __attribute__((aligned(64))); /* next position to claim */
	uint64_t head __attribute__((aligned(64))); /* next position to drain: dev->mu */
};

/* What is resident where, and what goes next (residency.c, victim.c). */
struct dev_residency {
	struct dao_arena arena;
	struct victim_heap heaps[HEAPS];
	struct op *pf_op; /* prefetch cursor: first op whose operands may still need a fetch */
	uint32_t pf_idx;
	uint64_t pf_bytes;    /* bytes brought in ahead whose use has not run */
	uint64_t clean_bytes; /* bytes written back ahead that are still resident */
	/* Modeled d2h time of the write-backs cleaning ahead issued that the
	 * engine has not worked through yet: each adds its copy time, each
	 * kernel takes off the time it spans (its duration and the stall
	 * before it), and a wait for every write-back issued empties it. */
	uint64_t clean_queue_ns;
	/* The same for the h2d engine and every fetch issued: how long its
	 * queue keeps it busy. */
	uint64_t fetch_queue_ns;
	uint64_t max_asize;   /* largest buffer: sets how far ahead to work */
	uint64_t live_asize;  /* asize of every live record (adopted, not destroyed) */
	uint64_t iter_no;
	uint64_t iter_start;
	uint64_t prev_iter_len; /* 0 until one iteration completed */
	/* The iteration predictor (victim.c: a record's next use at the
	 * offset of its first use in the last iteration) is trusted for an
	 * iteration only if it was right in the one before for at least half
	 * the records it could be checked on: those used in both, first used
	 * at the same offset (residency.c). Where iterations rotate their
	 * buffers (a time step reads what the last one wrote) its guesses
	 * are wrong, and no guess ranks such records better. */
	uint64_t predict_checked, predict_right; /* in the iteration running */
	bool predict_off;
	/* Evicting dirty data costs a write-back that evicting clean data
	 * does not (the backend's clean_evict_copies is false). */
	bool dirty_costs;
	/* A host kernel's touch of a host copy moves the device copy's
	 * pages (the backend's host_access_vacates: unified memory). */
	bool host_vacates;
	/* The facts of an op's uses for the policy's queued hook (policy.h),
	 * DAO_MAX_OPERANDS of them; NULL when the policy has none. */
	struct policy_use *pol_uses;
};

/*
 * A device is a composition: its queue, its residency (with the policy's
 * table and the arena), its statistics and its publisher, each kept by the
 * files named beside it; the rest is the executor thread's state and the
 * settings the device was opened with.
 */
struct device {
	pthread_mutex_t mu;
	int mu_cpu; /* CPU of dev->mu's last holder, a hint for spinning (lock.h) */
	pthread_cond_t work_cv; /* executor: work arrived */
	pthread_cond_t done_cv; /* submitters: op done, queue space */
	struct {
		pthread_t id;
		bool started;
		bool stop; /* asked to finish what is queued and return */
	} thread; /* the executor (executor.c) */
	struct {
		uint32_t done;   /* threads sleeping on done_cv */
		uint32_t window; /* of those, launches waiting for a full window to drain */
	} waiters;

	/* What every launch reads, written seldom: a cache line of its own
	 * (the device is allocated aligned). */
	struct dao_backend *be __attribute__((aligned(64)));
	dao_backend_kind kind;
	struct {
		dao_policy id;
		const struct dao_policy_ops *ops; /* its decisions (policy/policy.h) */
		void *state; /* its state for this device (NULL: stateless) */
	} policy;
	uint32_t lookahead;
	uint32_t flags;
	uint64_t budget;
	/* Backend failure, sticky for every context; stored atomically:
	 * launches read it without dev->mu (core/inbox.c). */
	dao_status failure;

	/* How a launch through the inbox wakes the executor: read by every
	 * such launch, written seldom, all atomic. */
	struct {
		bool exec_waiting; /* the executor sleeps on work_cv */
		/* CPU of the last push or launch: how the executor waits for
		 * the next (executor.c) */
		int push_cpu;
		/* The executor's CPU when it finished its last op, written when
		 * it changes: waiters spin while it is another CPU (queue.c),
		 * and a launch from its CPU takes dev->mu instead of the inbox
		 * (inbox.h). */
		int exec_cpu;
	} wake __attribute__((aligned(64)));
	struct {
		uint64_t budget;
		/* Bytes of live owning buffers: atomic, creates add without
		 * dev->mu. */
		uint64_t committed;
		/* Committed bytes the node could back at its last reading:
		 * host copies libdao held then plus what the node had
		 * available (api/buffers.c); UINT64_MAX when the backend
		 * keeps no data. Atomic. */
		uint64_t room;
	} host;
	struct {
		bool shared;
		uint32_t nctx;
		struct device *next; /* the next shared device (api/open.c) */
	} sharing; /* between the contexts of a process */
	/* The default for iterative jobs replaces only a policy no context
	 * chose (core/ask.c). policy.id changes with it, under dev->mu, and
	 * is read without it where a context joins the device (atomic). */
	struct {
		bool chosen;  /* by a context: dao_config or DAO_POLICY (atomic) */
		bool tried;   /* it was tried, at a mark after an eviction (dev->mu) */
	} policy_choice;

	struct dev_queue q __attribute__((aligned(64))); /* queue.c, executor.c */
	struct dev_inbox inbox;   /* inbox.c */
	struct dev_residency res; /* residency.c, victim.c */

	struct {
		uint64_t next_id; /* atomic */
		uint64_t stamp;   /* the last launch's number (launch.c) */
		struct rec *all;  /* the live records (rec->all.next) */
		struct rec_cache cache; /* where records come from (record.c) */
	} recs;
	struct {
		struct dao_trace_writer *out;
		char *path; /* where the trace goes; NULL when none */
		uint64_t iter;
	} trace;
	/* What the device tells the world: daoctl's view, the summary, its
	 * own messages. */
	struct {
		struct dao_publisher *pub;
		char job_name[64];
		uint64_t slurm_job_id; /* SLURM_JOB_ID when run under Slurm, else 0 */
		char summary_path[4096]; /* DAO_SUMMARY: "stderr", a file, or "" */
		/* Messages that belong to no one context (the device's own)
		 * follow the most verbose context ever opened on it (raised by
		 * dao_open while the executor may read it). */
		_Atomic int log_level;
	} report;
	uint64_t peak_pinned_bytes; /* most host bytes pinned at once */

	dao_fence issued; /* everything submitted to the backend so far */
	/* everything a wait saw done: what a failed device finished (dao.h,
	 * DAO_ERR_LOST) */
	dao_fence reached;
	dao_stats stats;
};
/*
 * The cache lines the comments above promise, kept when fields are added:
 * a launch reads a record's first line and the executor writes its second;
 * a launch reads the device's configuration line and, through the inbox,
 * its wake line, neither shared with what the executor writes per kernel.
 */
_Static_assert(offsetof(struct rec, heap) == 64, "a record's first line is what a launch reads");
_Static_assert(offsetof(struct rec, blk) < 128, "the executor's per-kernel fields share one line");
_Static_assert(offsetof(struct device, wake) - offsetof(struct device, be) == 64,
	       "the device's configuration is one line");
_Static_assert(offsetof(struct device, q) - offsetof(struct device, wake) == 64,
	       "the wake line holds only what launches read");



/* Three cache lines, so that the job's thread and the executor do not
 * write lines the other reads for every op (allocated aligned). */
struct ctx {
	/* Read by both sides, written seldom. */
	uint64_t id; /* the dao_ctx value */
	uint32_t tag;
	/* First kernel failure; stored atomically: launches read it without
	 * dev->mu (core/inbox.c). */
	dao_status failure;
	dao_log_level log_level; /* what libdao logs for this context */
	struct device *dev;
	char job_name[64];

	/* Written by the job's calls. API calls in flight, plus CTX_CLOSING
	 * once dao_close began: one atomic word, so a call leaves without the
	 * registry mutex (core/handles.c). */
	uint32_t calls __attribute__((aligned(64)));
	/* Taken, besides dev->mu, by whoever writes the slot table, and
	 * alone by a launch through the inbox (core/inbox.c). */
	pthread_mutex_t slot_mu;
	struct slot *slots;
	uint32_t nslots;
	uint32_t free_head; /* 1-based; 0 none */
	/* Slots below it were handed out once; those above are untouched.
	 * Atomic: lookups without slot_mu read it (core/handles.c). */
	uint32_t fresh;
	uint64_t live_handles;
	/* Ops queued so far (atomic: launches through the inbox count
	 * without dev->mu). Queued and not finished: ctx_queued(). */
	uint64_t launched;
	/* A value `finished` had, kept where launches read it: a lower
	 * bound they check the window against before they read the
	 * executor's line (ctx_window_full). Atomic. */
	uint64_t finished_seen;
	struct ctx_recs recs; /* core/record.c */

	/* Ops finished so far: the executor's alone, so the line the job's
	 * thread writes per launch is never the executor's too. */
	uint64_t finished __attribute__((aligned(64)));
	uint32_t window_waiters; /* launches sleeping until its queue drains */
	/* Their CPU when they went to sleep, -1 when several or unknown
	 * (queue_op_finished). Written by them, read by the executor, both
	 * with dev->mu. */
	int window_cpu;
};

static inline uint64_t ctx_queued(const struct ctx *c)
{
	/* finished first: launched, read after, is never below it. */
	uint64_t done = __atomic_load_n(&c->finished, __ATOMIC_ACQUIRE);

	return __atomic_load_n(&c->launched, __ATOMIC_RELAXED) - done;
}

/*
 * Launch side: more than `lookahead` ops of c queued? The executor writes
 * `finished` after every op; read at every launch, its line would cross
 * CPUs twice per kernel. So a launch first checks against finished_seen,
 * an older value of it (queued can only be less), and reads `finished`
 * only when that says the window may be full: about once per half window.
 * The answer is the same as ctx_queued()'s. finished_seen may move back
 * when two launching threads race to store it; any value it held is still
 * a lower bound.
 */
static inline bool ctx_window_full(struct ctx *c, uint64_t lookahead)
{
	uint64_t seen = __atomic_load_n(&c->finished_seen, __ATOMIC_RELAXED);

	/* seen first: launched, read after, is never below it. */
	if (__atomic_load_n(&c->launched, __ATOMIC_RELAXED) - seen <= lookahead)
		return false;
	seen = __atomic_load_n(&c->finished, __ATOMIC_ACQUIRE);
	__atomic_store_n(&c->finished_seen, seen, __ATOMIC_RELAXED);
	return __atomic_load_n(&c->launched, __ATOMIC_RELAXED) - seen > lookahead;
}

/* DAO_ERR_FAILED once c or its device failed: nothing more is queued. */
static inline dao_status ctx_usable(const struct ctx *c)
{
	if (c->failure || c->dev->failure)
		return DAO_ERR_FAILED;
	return DAO_OK;
}

static inline bool rec_dirty(const struct rec *r)
{
	return r->blk && r->copies.dev_valid && !r->copies.host_valid;
}

#endif /* DAO_CORE_OBJECTS_H */
