/* SPDX-License-Identifier: MIT */
/*
 * request_log.h - DAO_CUDA_REQUEST_LOG, a diagnostic: every residency
 * request a CUDA backend makes of the driver (prefetches, discards, copies),
 * with the time it was issued and why, and the host's touches of host
 * copies for dao_write/dao_read, one line each, so that what the driver
 * reports (CUPTI's unified-memory records, tools/gpubench/) can be matched
 * by address and time against what libdao asked for. Format: the
 * "Request log" section of Documentation/cuda.md.
 *
 * Lines are formatted into a buffer and written a buffer at a time (the
 * executor never waits on the file for more than one write of it); a
 * backend without the variable pays one predictable branch per request.
 * Used by one backend's executor, and its creating and closing thread,
 * never at once: no lock.
 */
#ifndef DAO_CUDA_REQUEST_LOG_H
#define DAO_CUDA_REQUEST_LOG_H

#include <stdint.h>

#include "backend/backend.h"

struct cu_log;

/* Open the file DAO_CUDA_REQUEST_LOG names, for appending, and write the
 * header of a backend named `backend` with diagnostic `switches` ("" for
 * none): *out stays NULL when the variable is unset or empty.
 * DAO_ERR_IO (logged with the file and the reason) when it cannot be
 * opened, DAO_ERR_NOMEM. */
dao_status cu_log_open(const char *backend, const char *switches, struct cu_log **out);

/* One request: submission seq on engine e (H2D or D2H), the driver call
 * `call` for reason why, over [addr, addr + bytes), issued now or (_at)
 * at t_ns, a time of cu_log_now's. */
void cu_log_move(struct cu_log *l, int e, uint64_t seq, const char *call, enum dao_move_why why,
		 const void *addr, uint64_t bytes);
void cu_log_move_at(struct cu_log *l, uint64_t t_ns, int e, uint64_t seq, const char *call,
		    enum dao_move_why why, const void *addr, uint64_t bytes);
/* Every submission on engine e up to seq is seen done, now: what was
 * asked of the driver by then has happened. */
void cu_log_done(struct cu_log *l, int e, uint64_t seq);
/* CLOCK_MONOTONIC in nanoseconds: the log's clock. */
uint64_t cu_log_now(void);
/* Memory the backend obtained (`what`: "managed", "pinned", ...). */
void cu_log_chunk(struct cu_log *l, const char *what, const void *addr, uint64_t bytes);
/* The executor is about to touch (done false) or has touched a host copy
 * for dao_write (write) or dao_read. */
void cu_log_host(struct cu_log *l, const void *addr, uint64_t bytes, bool write, bool done);

/* Writes what is buffered, closes the file, frees l (NULL: nothing). */
void cu_log_close(struct cu_log *l);

#endif /* DAO_CUDA_REQUEST_LOG_H */
