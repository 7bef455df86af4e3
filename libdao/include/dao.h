/* SPDX-License-Identifier: MIT */
/*
 * dao.h - the public C API of libdao.
 *
 * A job submits kernels together with the buffers each one reads (DAO_R),
 * overwrites whole (DAO_W) or updates in place (DAO_RW). Submission returns
 * at once; an executor thread makes each kernel's operands resident within a
 * device budget, prefetches ahead of execution, evicts what is needed
 * farthest in the future and frees buffers after their last use.
 *
 * Every call returns a dao_status; dao_strerror() turns it into text.
 * A call that fails changes nothing.
 */
#ifndef DAO_H
#define DAO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DAO_VERSION_MAJOR 0
#define DAO_VERSION_MINOR 1
#define DAO_VERSION_PATCH 0

#if defined(__GNUC__)
#define DAO_API __attribute__((visibility("default")))
#define DAO_NODISCARD __attribute__((warn_unused_result))
#else
#define DAO_API
#define DAO_NODISCARD
#endif

/* Status codes. Values are stable: they are part of the ABI. */
typedef enum dao_status {
	DAO_OK = 0,
	DAO_ERR_NULL = 1,        /* a required pointer argument is NULL */
	DAO_ERR_INVALID = 2,     /* an argument is outside its domain */
	DAO_ERR_OVERFLOW = 3,    /* a size or offset computation overflows */
	DAO_ERR_RANGE = 4,       /* a view or host access lies outside its buffer */
	DAO_ERR_HANDLE = 5,      /* buffer handle released, stale or never issued */
	DAO_ERR_FOREIGN = 6,     /* buffer handle belongs to another context */
	DAO_ERR_CLOSED = 7,      /* context handle closed, stale or never issued */
	DAO_ERR_BUDGET = 8,      /* a kernel's operands do not fit in the device budget */
	DAO_ERR_HOST_BUDGET = 9, /* host budget (or the node's memory) exhausted */
	DAO_ERR_NOMEM = 10,      /* the system ran out of memory */
	DAO_ERR_BACKEND = 11,    /* the backend is unavailable or failed */
	DAO_ERR_CONFIG = 12,     /* bad configuration (struct field or environment) */
	DAO_ERR_CONFLICT = 13,   /* settings conflict with a context already open on the device */
	DAO_ERR_KERNEL = 14,     /* a kernel function reported failure */
	DAO_ERR_IO = 15,         /* reading or writing a file failed */
	DAO_ERR_FORMAT = 16,     /* malformed input (trace, number) */
	DAO_ERR_FAILED = 17,     /* an earlier asynchronous failure poisoned the context */
	DAO_ERR_LIMIT = 18,      /* a fixed limit is reached (contexts open at once, handles) */
	DAO_ERR_REENTRANT = 19,  /* called from a kernel function where it would wait for that kernel */
	DAO_ERR_LOST = 20,       /* a failed context's buffer whose latest contents are lost */
} dao_status;

/* The highest status value this version returns. */
#define DAO_STATUS_LAST DAO_ERR_LOST

/* Human-readable text for a status; never NULL. */
DAO_API const char *dao_strerror(dao_status status);

/* ---------------------------------------------------------------- config */

typedef enum dao_backend_kind {
	DAO_BACKEND_DEFAULT = 0,       /* DAO_BACKEND from the environment, else auto */
	DAO_BACKEND_AUTO = 1,          /* CUDA when a device is usable, else host */
	DAO_BACKEND_HOST = 2,          /* capped host arena, CPU kernels */
	DAO_BACKEND_CUDA_MANAGED = 3,
	DAO_BACKEND_CUDA_EXPLICIT = 4,
} dao_backend_kind;

typedef enum dao_policy {
	DAO_POLICY_DEFAULT = 0, /* DAO_POLICY from the environment, else dao (plan
				 * for a job that marks iterations and does
				 * not fit: dao_iteration) */
	DAO_POLICY_DAO = 1,     /* next use weighted by eviction cost */
	DAO_POLICY_BELADY = 2,  /* pure next use */
	DAO_POLICY_LRU = 3,
	DAO_POLICY_FIFO = 4,
	DAO_POLICY_PLAN = 5,    /* dao, with next uses from last iteration's plan */
} dao_policy;

typedef enum dao_log_level {
	DAO_LOG_DEFAULT = 0, /* DAO_LOG from the environment, else warn */
	DAO_LOG_SILENT = 1,
	DAO_LOG_ERROR = 2,
	DAO_LOG_WARN = 3,
	DAO_LOG_INFO = 4,
	DAO_LOG_DEBUG = 5,
} dao_log_level;

/* Flags for dao_config.flags. */
/* Give this context a device of its own instead of sharing the process-wide
 * one (decision 11 of Documentation/architecture.md); for tests, simulators and side-by-side comparisons. */
#define DAO_CONFIG_PRIVATE (1u << 0)
/* Start a kernel only when the lookahead window behind it is full or the job
 * waits (sync, read, write, close): transfer decisions then depend on the
 * program alone, not on thread timing. */
#define DAO_CONFIG_DETERMINISTIC (1u << 1)
/* The plan policy's order of eviction; unset, each plan's replay of its
 * iteration chooses. PLAN_DAO_ORDER: dao's (a dirty victim only when it
 * is needed a quarter farther ahead than the best clean one; dirty data
 * written back ahead by dao's rule where the plan cannot judge it).
 * PLAN_CLEAN_FIRST: a dirty victim only when no clean one is left,
 * written back ahead only where the plan evicts it. At most one of the
 * two; other policies ignore them. */
#define DAO_CONFIG_PLAN_DAO_ORDER (1u << 2)
#define DAO_CONFIG_PLAN_CLEAN_FIRST (1u << 3)
#define DAO_CONFIG_PLAN_ORDER (DAO_CONFIG_PLAN_DAO_ORDER | DAO_CONFIG_PLAN_CLEAN_FIRST)
/* The plan policy's prefetches take their room at once: one that finds no
 * free space evicts the best victim there is now (one needed after its
 * kernel), where unset it waits, as dao's do, for a record still in use
 * that will be a better victim once that use is done, unless the wait
 * would make it late. Waiting moves the fewest bytes; taking the room at
 * once keeps the h2d engine busy. Neither is the faster on every job;
 * other policies ignore it. */
#define DAO_CONFIG_PLAN_EAGER (1u << 4)
#define DAO_CONFIG_FLAGS_ALL                                                    \
	(DAO_CONFIG_PRIVATE | DAO_CONFIG_DETERMINISTIC | DAO_CONFIG_PLAN_ORDER | \
	 DAO_CONFIG_PLAN_EAGER)

/*
 * Context configuration. Initialise with dao_config_init(); a field left at
 * zero (or NULL) takes its environment variable, else the default:
 *   backend        DAO_BACKEND        host|cuda-managed|cuda-explicit|auto
 *   device_budget  DAO_DEVICE_BUDGET  bytes, K/M/G/T suffix, or N% of device memory
 *   host_budget    DAO_HOST_BUDGET    bytes with suffix, or N% of what the node
 *                                     could give the process (default 100%)
 *   policy         DAO_POLICY         dao|belady|lru|fifo
 *   lookahead      DAO_LOOKAHEAD      kernels the job may run ahead (default 64)
 *   log_level      DAO_LOG            silent|error|warn|info|debug, for this
 *                                     context only (errors opening it included)
 *   trace_path     DAO_TRACE          write a dao-trace v1 to this file
 *   job_name       DAO_JOB            name shown by daoctl
 *
 * The device budget is counted in the backend's allocation unit: 256 bytes
 * on host and cuda-explicit, 64 KiB (the device's large page) on
 * cuda-managed. The budget in force is the one asked for rounded down to
 * whole units (dao_info.device_budget); dao_open refuses one below a
 * single unit with DAO_ERR_CONFIG and a log line naming the unit. A buffer
 * costs its size rounded up to whole units: dao_buffer_create refuses one
 * that costs more than the budget, and a device kernel whose distinct
 * buffers cost more in total is refused at launch (DAO_ERR_BUDGET); one
 * that fits after this rounding is accepted. (On cuda-managed a buffer of
 * 2 MiB or more owns whole 2 MiB blocks of managed memory, but only the
 * 64 KiB units it spans move to the device and count in the budget.)
 *
 * The host budget is held to what the node can give (Documentation/libdao.md,
 * "The host budget and the node"): what it could ever give the process is
 * physical memory, capped by the process's memory cgroup limit and, under
 * strict overcommit, by the commit limit; dao_open refuses an explicit host
 * budget above that with DAO_ERR_CONFIG. What it can give now is
 * MemAvailable, capped by the cgroup's headroom (page cache counted as free)
 * and the commit headroom: dao_buffer_create fails with DAO_ERR_HOST_BUDGET,
 * changing nothing, when the live buffers with the new one would need more
 * host memory than libdao holds plus that (each counted at its bytes, its
 * page tables and a page for the allocator). A backend that keeps no data
 * (the simulator) is exempt.
 */
typedef struct dao_config {
	uint32_t size; /* sizeof(struct dao_config), set by dao_config_init */
	uint32_t flags;
	dao_backend_kind backend;
	dao_policy policy;
	dao_log_level log_level;
	uint32_t lookahead;
	uint64_t device_budget;         /* bytes */
	uint32_t device_budget_percent; /* 1..100 of device memory, used when device_budget is 0 */
	uint32_t reserved0;
	uint64_t host_budget; /* bytes: most bytes of live buffers the host backs */
	const char *trace_path;
	const char *job_name;
} dao_config;

DAO_API void dao_config_init(dao_config *cfg);

/* Parse "1048576", "64M", "2G", "512k" into bytes. */
DAO_API dao_status dao_parse_size(const char *text, uint64_t *bytes);

/* --------------------------------------------------------------- handles */

/* A context: an ordered stream of work on one device. */
typedef struct dao_ctx {
	uint64_t id;
} dao_ctx;

/* A buffer or a view. Handles carry a generation: a released handle stays
 * invalid (DAO_ERR_HANDLE) forever, even when its slot is reused; a slot that
 * has issued every generation retires. Handles carry their context's tag: in
 * another open context they are DAO_ERR_FOREIGN. */
typedef struct dao_buf {
	uint64_t id;
} dao_buf;

#define DAO_CTX_NULL ((dao_ctx){0})
#define DAO_BUF_NULL ((dao_buf){0})

/* Open a context; cfg may be NULL (all defaults and environment).
 * Without DAO_CONFIG_PRIVATE the context joins the process's device for its
 * backend when one is open: settings its config leaves unset come from the
 * device, settings it gives explicitly (budget after rounding, policy,
 * lookahead, host budget, trace file, DAO_CONFIG_DETERMINISTIC, the plan
 * order, DAO_CONFIG_PLAN_EAGER) must match
 * the device's, else DAO_ERR_CONFLICT. At most 4095 contexts are open at
 * once; one more is DAO_ERR_LIMIT. The memory the first creates use is
 * taken and touched here, so that they do not wait for it: 2 MiB of handle
 * slots for the context and, for a new device, 2 MiB of buffer records,
 * resident from dao_open whether or not a buffer is created (after
 * dao_close a few such chunks are kept for the process's next open). */
DAO_API DAO_NODISCARD dao_status dao_open(const dao_config *cfg, dao_ctx *out);

/* Drain all work, free every buffer, close. Handles still unreleased are
 * reported as leaks in the log and counted in *leaked when leaked != NULL. */
DAO_API dao_status dao_close(dao_ctx ctx, uint64_t *leaked);

/* Create an owning buffer. Contents are undefined until written; nothing is
 * allocated anywhere until first use. Zero bytes is legal. */
DAO_API DAO_NODISCARD dao_status dao_buffer_create(dao_ctx ctx, uint64_t bytes, dao_buf *out);

/* Create a view of bytes [offset, offset + length) of a buffer or view. The
 * view keeps the owning buffer alive; it owns no memory itself. */
DAO_API DAO_NODISCARD dao_status dao_view_create(dao_ctx ctx, dao_buf of, uint64_t offset,
						 uint64_t length, dao_buf *out);

DAO_API dao_status dao_retain(dao_ctx ctx, dao_buf buf);

/* Drop one reference. The memory goes once no reference and no queued kernel
 * remains. */
DAO_API dao_status dao_release(dao_ctx ctx, dao_buf buf);

/* Attach a label (shown by daoctl, written to traces); copied, at most 63
 * bytes kept, spaces replaced. DAO_ERR_NOMEM when it cannot be copied (the
 * buffer keeps its label). */
DAO_API dao_status dao_set_label(dao_ctx ctx, dao_buf buf, const char *label);

/* Size in bytes of a buffer or view. */
DAO_API dao_status dao_buffer_size(dao_ctx ctx, dao_buf buf, uint64_t *bytes);

/* ---------------------------------------------------------------- kernels */

typedef enum dao_mode {
	DAO_R = 1,  /* reads current contents */
	DAO_W = 2,  /* overwrites the whole operand; old contents are dead */
	DAO_RW = 3, /* reads and updates in place */
} dao_mode;

typedef struct dao_operand {
	dao_buf buf;
	dao_mode mode;
} dao_operand;

/* What a kernel function receives when it runs. */
typedef struct dao_kernel_args {
	void *user;           /* the pointer given at launch */
	void *const *ptrs;    /* each operand, in launch order: its device copy,
				 or its host copy for a host kernel (below);
				 NULL for an operand of zero bytes, whose
				 owner is then neither fetched nor changed */
	const uint64_t *sizes; /* bytes of each operand */
	uint32_t count;
	uint32_t reserved;
	void *stream; /* cudaStream_t of a device kernel on a CUDA backend, else NULL */
} dao_kernel_args;

/*
 * A kernel function returns 0 on success; anything else fails the context
 * (DAO_ERR_KERNEL). It runs on the executor thread of its device, in
 * submission order, and that thread waits for it. It may touch its
 * operands only, only as declared (DAO_R: read; DAO_W: overwrite every
 * byte, the old contents are undefined; DAO_RW: read and update), and only
 * through ptrs, in one of two ways fixed at launch:
 *
 * A device kernel (dao_launch, dao_launch_named, dao_launch_flags without
 * DAO_LAUNCH_HOST) works where the backend computes:
 *   host           ptrs are host memory (the arena that plays the device),
 *                  ready when the function is called; stream is NULL and
 *                  the work is done when the function returns.
 *   cuda-explicit, ptrs are device memory (cuda-managed: managed memory) and
 *   cuda-managed   stream is the cudaStream_t they are ready on: work the
 *                  function enqueues there runs after every copy that makes
 *                  them so, and whatever follows the kernel (copies,
 *                  evictions, later kernels, dao_read) runs after that work.
 *                  The function is called when that work is queued, not
 *                  when the operands are there: it must not touch them with
 *                  the CPU (on cuda-explicit they are device memory; on
 *                  cuda-managed their pages may be on the device or on
 *                  their way, and a CPU touch races with libdao's
 *                  migrations and pulls pages past the device budget), nor
 *                  on another stream, whose work is not ordered with
 *                  libdao's (the streams are non-blocking). It may wait for
 *                  the stream, at the cost of overlap.
 *
 * A host kernel (dao_launch_flags with DAO_LAUNCH_HOST) works with the CPU,
 * the same on every backend: the function is called once each operand's
 * host copy is current (r, rw) and idle, i.e. every kernel before it that
 * writes the operand and every copy into or out of its host copy has
 * completed. ptrs are those host copies; stream is NULL; the function is
 * done with them when it returns (it must leave no work on them behind,
 * CPU or device). What it wrote is what every later kernel, device or
 * host, and dao_read see. Its operands need no room in the device budget
 * (the launch is never DAO_ERR_BUDGET) and are not fetched: an operand
 * whose current contents are on the device is copied back first
 * (cuda-managed: its pages migrate to the host), and an operand it writes
 * leaves the device, to be fetched again by the next device kernel that
 * uses it.
 *
 * Inside a kernel function of either kind, calls on handles work (create,
 * view, retain, release, label, size, stats, info); calls that queue work
 * or wait for it (launch, write, read, sync, iteration, close) on a
 * context of the same device return DAO_ERR_REENTRANT and change nothing,
 * since they would wait for this very kernel.
 */
typedef int (*dao_kernel_fn)(const dao_kernel_args *args);

/* Queue a kernel; returns once accepted (blocking only while the lookahead
 * window is full). fn may be NULL (a kernel that only touches its operands'
 * residency). The operand array is copied. */
DAO_API DAO_NODISCARD dao_status dao_launch(dao_ctx ctx, dao_kernel_fn fn, void *user,
					    const dao_operand *ops, size_t count);

/* As dao_launch, with a name and a flop count for traces and simulation
 * (name may be NULL; it is copied). The flop count also times the kernel
 * for the prefetch policy: a kernel launched without one (dao_launch)
 * lasts, to the policy, its operand bytes at the device's memory rate. */
DAO_API DAO_NODISCARD dao_status dao_launch_named(dao_ctx ctx, const char *name, uint64_t flops,
						  dao_kernel_fn fn, void *user,
						  const dao_operand *ops, size_t count);

/* Flags for dao_launch_flags. */
/* A host kernel: fn works on its operands' host copies with the CPU, on
 * every backend (see dao_kernel_fn). */
#define DAO_LAUNCH_HOST (1u << 0)
#define DAO_LAUNCH_FLAGS_ALL DAO_LAUNCH_HOST

/* As dao_launch_named, with flags (DAO_LAUNCH_*; 0 is dao_launch_named).
 * An unknown flag is DAO_ERR_INVALID. In libdao.so's version node DAO_0.2. */
DAO_API DAO_NODISCARD dao_status dao_launch_flags(dao_ctx ctx, const char *name, uint64_t flops,
						  uint32_t flags, dao_kernel_fn fn, void *user,
						  const dao_operand *ops, size_t count);

/* ------------------------------------------------------------ host access */

/* Copy len bytes from src into the buffer at offset, after every kernel
 * submitted before this call. Returns when done. */
DAO_API DAO_NODISCARD dao_status dao_write(dao_ctx ctx, dao_buf buf, uint64_t offset,
					   const void *src, uint64_t len);

/* Copy len bytes at offset out of the buffer into dst, after every kernel
 * submitted before this call. Returns when done.
 *
 * What a failed context still gives. Once a kernel, a copy or the device
 * failed, later kernels are skipped and dao_launch, dao_write and
 * dao_iteration return DAO_ERR_FAILED, but dao_read goes on answering,
 * buffer by buffer, so that a job can save what is safe:
 *  - it returns the buffer's latest contents, exactly what the last dao_write
 *    or the last kernel that ran wrote (never a skipped kernel's, never a
 *    mix), when they are intact: on the host, or on a device that still
 *    answers (only the context failed: a kernel function, a refused
 *    allocation);
 *  - it returns DAO_ERR_LOST, and the log says which buffer and why, when
 *    they are not: written by the kernel that failed (its function may have
 *    written part of them), held only by a device that failed, on their
 *    way from it into the host copy when it failed, or given up ahead of a
 *    kernel that overwrites the buffer whole (a prefetch makes room for its
 *    output without its old bytes) which the failure then skipped.
 * dao_release and dao_close free everything as usual. */
DAO_API DAO_NODISCARD dao_status dao_read(dao_ctx ctx, dao_buf buf, uint64_t offset, void *dst,
					  uint64_t len);

/* Wait for everything submitted; returns the first asynchronous failure. */
DAO_API dao_status dao_sync(dao_ctx ctx);

/* Mark an iteration boundary: the pattern of the iteration just ended
 * predicts uses beyond the lookahead window. On a device whose policy no
 * context chose (neither dao_config nor DAO_POLICY), the first mark after
 * the device first had to evict makes DAO_POLICY_PLAN its policy from
 * there on (dao_info_get says so); if plan cannot start, the device keeps
 * dao and logs a warning. */
DAO_API dao_status dao_iteration(dao_ctx ctx);

/* ------------------------------------------------------------- statistics */

typedef struct dao_stats {
	uint64_t h2d_bytes;      /* host to device */
	uint64_t d2h_bytes;      /* device to host */
	uint64_t fetches;        /* host-to-device copies */
	uint64_t prefetches;     /* of which issued ahead of the kernel's turn */
	uint64_t writebacks;     /* device-to-host copies */
	uint64_t evictions;      /* buffers removed from the device to make room */
	uint64_t drops;          /* of which clean or dead: no copy needed */
	uint64_t stalls;         /* kernels that waited for a copy */
	uint64_t stall_ns;       /* time kernels waited for copies */
	uint64_t kernels;        /* kernels run */
	uint64_t device_bytes;   /* bytes resident on the device now */
	uint64_t peak_device_bytes;
	uint64_t host_bytes;     /* bytes of host backing allocated now */
	uint64_t live_buffers;   /* owning buffers not yet freed */
	uint64_t budget_bytes;   /* the device budget in force */
	uint64_t host_budget_bytes;
	uint64_t pinned_bytes;   /* host bytes pinned through dao.ko now */
} dao_stats;

/* Statistics of the device this context runs on (shared by the contexts of
 * one process on one device). */
DAO_API dao_status dao_stats_get(dao_ctx ctx, dao_stats *out);

typedef struct dao_info {
	dao_backend_kind backend; /* the backend chosen (never DEFAULT or AUTO) */
	dao_policy policy;
	uint32_t lookahead;
	uint32_t flags;
	uint64_t device_budget;
	uint64_t host_budget;
	uint64_t device_memory; /* what a percentage budget refers to */
	const char *backend_name;
	const char *policy_name;
} dao_info;

DAO_API dao_status dao_info_get(dao_ctx ctx, dao_info *out);

/* The name DAO_BACKEND / DAO_POLICY take for a value: "default" for 0,
 * "unknown" past the last; both enums are numbered from 1 without a gap. */
DAO_API const char *dao_backend_name(dao_backend_kind kind);
DAO_API const char *dao_policy_name(dao_policy policy);

#ifdef __cplusplus
}
#endif

#endif /* DAO_H */
