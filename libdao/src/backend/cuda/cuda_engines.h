/* SPDX-License-Identifier: MIT */
/*
 * cuda_engines.h - the three engines of backend.h as CUDA streams. Each
 * submission ends with an event from a ring, so a fence (one sequence
 * number per engine) maps to at most three events: another stream waits
 * on them with cudaStreamWaitEvent, the executor with cudaEventSynchronize.
 * Nothing synchronises the whole device.
 *
 * Every CUDA call is checked; the first failure is logged and kept, and
 * from then on every wait returns it (the context fails, nothing hangs).
 * Used by the executor thread only.
 */
#ifndef DAO_CUDA_ENGINES_H
#define DAO_CUDA_ENGINES_H

#include <cuda_runtime.h>
#include <stdbool.h>

#include "backend/backend.h"
#include "backend/cuda/request_log.h"

/* The backends' allocation units (dao.h): the budget and every buffer's
 * cost in it are whole units. cuda-explicit: cudaMalloc's alignment, which
 * suits every type; cuda-managed: the device's large page, the granule a
 * prefetch moves (buffers of 2 MiB or more own whole 2 MiB blocks of
 * managed memory, but only the units they span move or count). */
#define CU_EXPLICIT_UNIT 256ull
#define CU_MANAGED_UNIT (64ull << 10)

/* Submissions in flight per engine before a new one waits for the oldest. */
#define CU_EVENTS 1024u

struct cu_engine {
	cudaStream_t stream;
	cudaEvent_t ev[CU_EVENTS]; /* ev[seq % CU_EVENTS] ends submission seq */
	uint64_t submitted;
	uint64_t done; /* every submission up to here has completed */
};

struct cu_engines {
	int device;
	struct cu_engine e[DAO_ENGINES];
	dao_status failure;
	bool ready; /* streams and events exist */
	/* DAO_CUDA_REQUEST_LOG (NULL: none): the backend logs its requests
	 * here, the engines when they see the copy engines' work done. */
	struct cu_log *log;
};

/* Whether err is cudaSuccess; otherwise log "what" with CUDA's reason. */
bool cu_ok(cudaError_t err, const char *what);
/* cu_ok, and a failure makes the engines fail for good. */
bool cu_note(struct cu_engines *g, cudaError_t err, const char *what);

dao_status cu_engines_init(struct cu_engines *g, int device);
/* Waits for everything submitted, then frees streams and events. */
void cu_engines_fini(struct cu_engines *g);

/* Make the calling thread use the engines' device (once per thread). */
bool cu_bind(struct cu_engines *g);
/* A backend's destroy runs on the job's thread (dao_close): cu_bind for
 * the teardown, remembering in *prev the device the thread had; then
 * cu_unbind gives it back. */
bool cu_bind_for_teardown(struct cu_engines *g, int *prev);
void cu_unbind(const struct cu_engines *g, int prev);
/* Make engine e's stream wait for fence f. */
void cu_order(struct cu_engines *g, enum dao_engine e, const dao_fence *f);
/* End the latest submission on e: its sequence number. */
uint64_t cu_record(struct cu_engines *g, enum dao_engine e);
/* The sequence number the next cu_record on e returns (for the log). */
static inline uint64_t cu_next_seq(const struct cu_engines *g, enum dao_engine e)
{
	return g->e[e].submitted + 1;
}
/* Block until fence f is reached; the first failure seen, else DAO_OK. */
dao_status cu_wait(struct cu_engines *g, const dao_fence *f);

/* backend_ops entries shared by both CUDA backends; be must start with a
 * struct cu_backend. */
struct cu_backend {
	struct dao_backend base;
	struct cu_engines eng;
};
dao_status cu_kernel(struct dao_backend *be, const struct dao_kernel_run *k,
		     const dao_fence *after, uint64_t *seq);
dao_status cu_backend_wait(struct dao_backend *be, const dao_fence *f);
uint64_t cu_last_stall_ns(struct dao_backend *be);
/* backend.h's host_access: into the request log, if any. */
void cu_host_access(struct dao_backend *be, const void *host, uint64_t len, bool write,
		    bool done);

/* Device memory now: free and total bytes. */
bool cu_mem_info(uint64_t *free_bytes, uint64_t *total_bytes);

/* Backend constructors (cuda_explicit.c, cuda_managed.c); the device is
 * current on the calling thread, the budget checked against free memory.
 * On success the backend owns log (NULL: none), which it closes; on
 * failure the caller still does. switches: cu_switches_read's. */
dao_status cu_explicit_create(int device, uint64_t total, uint64_t budget, struct cu_log *log,
			      struct dao_backend **out);
dao_status cu_managed_create(int device, uint64_t total, uint64_t budget, uint64_t free_bytes,
			     unsigned switches, struct cu_log *log, struct dao_backend **out);

#endif /* DAO_CUDA_ENGINES_H */
