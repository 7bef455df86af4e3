/* SPDX-License-Identifier: MIT */
/*
 * backend.h - what the executor asks of a device.
 *
 * The executor and the policy are the same code for every backend (host,
 * CUDA, simulator). A backend offers three engines, each executing its work
 * in submission order: the compute engine runs kernels, the h2d and d2h
 * engines copy. Every submission names the fence it must wait for and
 * returns its own sequence number on its engine, so the executor orders work
 * without ever waiting itself, except where host memory is handed back to
 * the job (reads, frees of host copies).
 */
#ifndef DAO_BACKEND_H
#define DAO_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "base/fence.h"
#include "dao.h"

/* One kernel as the backend runs it. */
struct dao_kernel_run {
	dao_kernel_fn fn;
	void *user;
	void *const *ptrs;
	const uint64_t *sizes;
	uint32_t count;
	uint64_t flops;
	uint64_t operand_bytes;  /* sum of distinct operand bytes, for the sim model */
	uint64_t resident_bytes; /* device bytes allocated when it was prepared */
	const char *name;
};

struct dao_backend;

/*
 * Why the executor moves a buffer (copy and discard below).
 * Backends that log what they ask of the device record it
 * (DAO_CUDA_REQUEST_LOG, Documentation/cuda.md); the others ignore it.
 */
enum dao_move_why {
	DAO_WHY_FETCH,      /* an input of the kernel being prepared */
	DAO_WHY_PREFETCH,   /* an input, ahead of its kernel */
	DAO_WHY_EVICT,      /* contents still needed leave the device to make room */
	DAO_WHY_WRITE_BACK, /* dirty contents copied back; the buffer stays resident */
	DAO_WHY_OUTPUT,     /* space for an output: its old pages need not come along */
	DAO_WHY_DEAD,       /* dead contents leave the device to make room */
	DAO_WHY_HOST,       /* dao_write/dao_read: the pages go to the host first */
	DAO_WHY_FREE,       /* a freed buffer's pages leave the device */
};

/* What taking a buffer's contents off the device involves (vacate()). */
enum dao_vacate {
	DAO_VACATE_KEEP,    /* nothing moves; the host copy stays as it is */
	DAO_VACATE_FORGET,  /* nothing moves; the contents are dead */
	DAO_VACATE_COPY,    /* copy the device contents back (D2H) first */
	DAO_VACATE_DISCARD, /* discard() the pages to the host: the contents die */
};

struct dao_backend_ops {
	/* NULL for a backend of the table (backends.c), which names it; a
	 * backend built by hand names itself here (dao_backend_name_of). */
	const char *name;
	/* The pointer a kernel gets for byte view_off of a buffer placed at
	 * arena offset dev_off, whose host copy starts at host: the device
	 * copy's address, or on a unified backend the host copy's own (NULL
	 * when the backend holds no data). */
	void *(*kernel_ptr)(struct dao_backend *be, void *host, uint64_t dev_off,
			    uint64_t view_off);
	/* Host backing store for one buffer; *ptr may be NULL for data-less
	 * backends. *pinned gets a non-zero handle when the memory is pinned
	 * through dao.ko. Returns DAO_ERR_NOMEM when the system refuses. */
	dao_status (*host_alloc)(struct dao_backend *be, uint64_t bytes, void **ptr,
				 uint64_t *pinned);
	void (*host_free)(struct dao_backend *be, void *ptr, uint64_t bytes, uint64_t pinned);
	/* Queue a copy of len bytes between arena offset dev_off and host on
	 * engine e (H2D or D2H), after fence `after`, for reason why. Returns
	 * its sequence number. */
	uint64_t (*copy)(struct dao_backend *be, enum dao_engine e, uint64_t dev_off, void *host,
			 uint64_t len, const dao_fence *after, enum dao_move_why why);
	/* Queue (or run) a kernel after `after`; *seq gets its compute sequence
	 * number. A failure reported synchronously is returned here, one found
	 * later by wait(). */
	dao_status (*kernel)(struct dao_backend *be, const struct dao_kernel_run *k,
			     const dao_fence *after, uint64_t *seq);
	/* Block until fence f is reached. Returns the first failure seen. */
	dao_status (*wait)(struct dao_backend *be, const dao_fence *f);
	/* Nanoseconds the last kernel spent waiting on copies before it could
	 * start (0 if none); read right after kernel(). */
	uint64_t (*last_stall_ns)(struct dao_backend *be);
	void (*destroy)(struct dao_backend *be);
	/*
	 * Where the device copy and the host copy of a buffer differ in kind,
	 * the executor asks these four (the two sets below implement them):
	 *
	 * vacate: a buffer's device space is about to be given back. on_device:
	 * its device copy holds its contents; dirty: only the device copy does;
	 * needed: its contents must survive. Says what has to happen first.
	 */
	enum dao_vacate (*vacate)(const struct dao_backend *be, bool on_device, bool dirty,
				  bool needed);
	/* Space was just placed for a buffer its next use overwrites whole:
	 * whether its old pages must be discard()ed onto the device (H2D),
	 * which ends its contents, so that they do not migrate along. */
	bool (*output_discards)(const struct dao_backend *be);
	/* Whether evicting a device copy the host copy matches still copies
	 * its bytes (so writing dirty data back ahead saves nothing). */
	bool (*clean_evict_copies)(const struct dao_backend *be);
	/* Whether the job's thread, touching a host copy, touches the device
	 * copy's pages: then a resident buffer leaves the device first. */
	bool (*host_access_vacates)(const struct dao_backend *be);
	/* Unified backends only (NULL otherwise): the contents of the host
	 * range [host, host + len) are dead; make its pages resident on the
	 * device (engine H2D) or on the host (D2H) without moving its bytes,
	 * after fence `after`, for reason why. Returns its sequence number on e. */
	uint64_t (*discard)(struct dao_backend *be, enum dao_engine e, void *host, uint64_t len,
			    const dao_fence *after, enum dao_move_why why);
	/* Optional (NULL: nothing to do): the executor is about to touch
	 * (done false), or has just touched (done true), [host, host + len)
	 * of a host copy for dao_write (write), dao_read or a host kernel
	 * (write: it may write). Only for diagnostics: a backend may log it. */
	void (*host_access)(struct dao_backend *be, const void *host, uint64_t len, bool write,
			    bool done);
};

/*
 * What the device does per second, for the policy's modeled time (which
 * queued kernel is due for its fetches, core/horizon.c): only ratios
 * matter there, compute time against copy time. A kernel lasts
 * max(flops / flops_per_s, operand bytes / mem_bytes_per_s) + launch_ns,
 * as the simulator models it.
 */
struct dao_rates {
	double h2d_bytes_per_s;
	double d2h_bytes_per_s;
	double flops_per_s;
	double mem_bytes_per_s;
	uint64_t launch_ns;
};

struct dao_backend {
	const struct dao_backend_ops *ops;
	struct dao_rates rates; /* every constructor sets all four rates > 0 */
	dao_backend_kind kind;
	bool holds_data;        /* false for the simulator: no host copies, no pointers */
	uint64_t device_memory; /* total device memory, for percentage budgets */
	uint64_t arena_bytes;   /* the budget the arena spans */
	uint64_t align;         /* arena allocation granularity (power of two, >= 1) */
	bool contiguous;        /* each buffer needs one contiguous range of the arena */
};

/*
 * The two kinds, as ops entries. Separate memories (host, sim,
 * cuda-explicit): the device copy is a copy; dropping a clean one is free,
 * a dirty one is copied back only when needed, the host copy is the job's.
 * Unified memory (cuda-managed): the device copy is the host copy's pages
 * (a kernel's pointer is the host copy + offset, copy() migrates the host
 * range and dev_off is only the budget's bookkeeping); dropping a resident
 * buffer migrates it back unless its contents are dead, which discard()
 * lets go, and the job's thread would fault its pages over behind the
 * budget's back.
 */
enum dao_vacate dao_separate_vacate(const struct dao_backend *be, bool on_device, bool dirty,
				    bool needed);
enum dao_vacate dao_unified_vacate(const struct dao_backend *be, bool on_device, bool dirty,
				   bool needed);
bool dao_backend_no(const struct dao_backend *be);
bool dao_backend_yes(const struct dao_backend *be);

#define DAO_SEPARATE_MEMORY_OPS                                                          \
	.vacate = dao_separate_vacate, .output_discards = dao_backend_no,               \
	.clean_evict_copies = dao_backend_no, .host_access_vacates = dao_backend_no
#define DAO_UNIFIED_MEMORY_OPS                                                           \
	.vacate = dao_unified_vacate, .output_discards = dao_backend_yes,               \
	.clean_evict_copies = dao_backend_yes, .host_access_vacates = dao_backend_yes

/* The budget a backend's arena spans for a requested budget: whole units of
 * its allocation granularity. Every backend rounds through here, so a shared
 * device compares a second context's request the same way (dao_open). */
static inline uint64_t dao_budget_round(uint64_t bytes, uint64_t align)
{
	return bytes & ~(align - 1);
}

/* The bytes a budget comes to: `bytes` when given, else `percent` of a
 * memory of `total` bytes (the device's, or the host's physical memory).
 * The one place a percentage becomes bytes: the backends size their arenas
 * with it, and dao_open a second context's request on a shared device. */
static inline uint64_t dao_budget_bytes(uint64_t bytes, uint32_t percent, uint64_t total)
{
	return bytes ? bytes : (uint64_t)((unsigned __int128)total * percent / 100);
}

/* What be is called (dao_info, daoctl, the summary): its row's name in the
 * table of backends (backends.c); a backend built by hand outside it (the
 * simulator, the tests' models) names itself in its ops. */
const char *dao_backend_name_of(const struct dao_backend *be);

/* DAO_ERR_CONFIG, and a log line naming the backend and its unit, for a
 * requested budget below one unit (budget.c); DAO_OK otherwise. Every
 * backend checks its budget here before it takes anything. */
dao_status dao_budget_check(const char *backend, uint64_t budget, uint64_t unit);

/* Constructors. Each returns a backend whose arena spans `budget` bytes,
 * rounded by dao_budget_round(), or refuses a budget below its unit
 * (dao_budget_check), naming itself `name` (its row's in backends.c). */
dao_status dao_backend_host_create(const char *name, uint64_t budget, struct dao_backend **out);
/* Total memory of the host backend's "device" (physical memory). */
uint64_t dao_host_memory_bytes(void);

/* dao_open_on_backend, which opens a context on a backend built by hand
 * (api/open.c), is declared in dao_sim.h. */

#endif /* DAO_BACKEND_H */
