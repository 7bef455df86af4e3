/* SPDX-License-Identifier: MIT */
/*
 * dao_trace.h - dao-trace v1 (Documentation/trace-format.md): the format's
 * limits and a reader that turns a whole trace into memory. The reader is in
 * the static library libdao-sim.a (with the simulated backend, dao_sim.h),
 * not in libdao.so; the writer behind DAO_TRACE is internal to libdao.
 *
 * The reader resolves every id to a dense buffer index so that consumers
 * (daosim, the LP bound, tests) index arrays instead of hashing ids again.
 */
#ifndef DAO_TRACE_H
#define DAO_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "dao.h"

/* Longest line a reader accepts, newline excluded. */
#define DAO_TRACE_MAX_LINE (1u << 20)
/* Ids and sizes are below 2^63 so they fit a signed 64-bit integer anywhere. */
#define DAO_TRACE_ID_LIMIT (UINT64_C(1) << 63)

struct dao_trace_buffer {
	uint64_t id;
	uint64_t bytes;
	char *kind;  /* NULL when absent */
	char *label; /* NULL when absent */
	size_t line; /* where it was declared */
};

enum dao_trace_event_type {
	DAO_TRACE_KERNEL = 1,
	DAO_TRACE_FREE = 2,
	DAO_TRACE_ITERATION = 3,
};

/* One operand: a buffer index (into dao_trace.bufs) and its dao_mode. */
struct dao_trace_operand {
	uint32_t buf;
	uint32_t mode; /* DAO_R, DAO_W or DAO_RW */
};

struct dao_trace_event {
	enum dao_trace_event_type type;
	union {
		struct {
			char *name;
			uint64_t flops;
			size_t first_op; /* into dao_trace.ops: r, then w, then rw */
			uint32_t nops;
		} kernel;
		uint32_t free_buf; /* buffer index */
		uint64_t iteration;
	} u;
};

struct dao_trace {
	struct dao_trace_buffer *bufs;
	size_t nbufs;
	struct dao_trace_event *events;
	size_t nevents;
	struct dao_trace_operand *ops;
	size_t nops;
	size_t nkernels;
	/* Text of the comment lines before the first record, joined by '\n'
	 * (e.g. "model=gpt batch=4 dtype=float32"); "" when none. */
	char *preamble;
};

/*
 * Parse a whole trace. On failure *out is untouched, and err (when errlen
 * > 0) gets "line N: reason" (or "PATH: reason" for I/O errors).
 * Returns DAO_ERR_FORMAT for malformed input, DAO_ERR_IO, DAO_ERR_NOMEM.
 */
dao_status dao_trace_read_mem(const char *data, size_t len, struct dao_trace **out, char *err,
			      size_t errlen);
dao_status dao_trace_read_file(const char *path, struct dao_trace **out, char *err,
			       size_t errlen);
void dao_trace_free(struct dao_trace *t);

/* Kernel operands of event e (which must be a kernel). */
static inline const struct dao_trace_operand *dao_trace_kernel_ops(const struct dao_trace *t,
								  const struct dao_trace_event *e)
{
	return t->ops + e->u.kernel.first_op;
}

#endif /* DAO_TRACE_H */
