/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "backend/cuda/cuda_engines.h"
#include "base/log.h"

bool cu_ok(cudaError_t err, const char *what)
{
	if (err == cudaSuccess)
		return true;
	dao_err("CUDA: %s failed: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
	return false;
}

bool cu_note(struct cu_engines *g, cudaError_t err, const char *what)
{
	if (cu_ok(err, what))
		return true;
	if (g->failure == DAO_OK)
		g->failure = DAO_ERR_BACKEND;
	return false;
}

bool cu_bind(struct cu_engines *g)
{
	int cur = -1;

	if (!cu_note(g, cudaGetDevice(&cur), "cudaGetDevice"))
		return false;
	return cur == g->device || cu_note(g, cudaSetDevice(g->device), "cudaSetDevice");
}

bool cu_bind_for_teardown(struct cu_engines *g, int *prev)
{
	*prev = -1;
	cu_ok(cudaGetDevice(prev), "cudaGetDevice");
	return cu_bind(g);
}

void cu_unbind(const struct cu_engines *g, int prev)
{
	if (prev >= 0 && prev != g->device)
		cu_ok(cudaSetDevice(prev), "cudaSetDevice");
}

dao_status cu_engines_init(struct cu_engines *g, int device)
{
	memset(g, 0, sizeof(*g));
	g->device = device;
	g->ready = true;
	for (int e = 0; e < DAO_ENGINES; e++) {
		struct cu_engine *x = &g->e[e];

		/* Non-blocking: the job's or a library's work on the legacy
		 * default stream must not serialise with ours. */
		if (!cu_ok(cudaStreamCreateWithFlags(&x->stream, cudaStreamNonBlocking),
			   "cudaStreamCreateWithFlags"))
			goto fail;
		for (uint32_t i = 0; i < CU_EVENTS; i++) {
			/* Blocking sync: a waiting executor sleeps instead of
			 * spinning on a core the job may need. */
			if (!cu_ok(cudaEventCreateWithFlags(&x->ev[i], cudaEventDisableTiming |
									   cudaEventBlockingSync),
				   "cudaEventCreateWithFlags"))
				goto fail;
		}
	}
	return DAO_OK;
fail:
	cu_engines_fini(g);
	return DAO_ERR_BACKEND;
}

void cu_engines_fini(struct cu_engines *g)
{
	if (!g->ready)
		return;
	for (int e = 0; e < DAO_ENGINES; e++) {
		struct cu_engine *x = &g->e[e];

		if (!x->stream)
			continue;
		/* After a failure the error is sticky: said once is enough. */
		if (g->failure == DAO_OK)
			cu_note(g, cudaStreamSynchronize(x->stream), "cudaStreamSynchronize");
		for (uint32_t i = 0; i < CU_EVENTS && x->ev[i]; i++)
			cudaEventDestroy(x->ev[i]);
		cudaStreamDestroy(x->stream);
	}
	g->ready = false;
}

/* Every submission on x up to s is seen done; the log hears of it, for the
 * copy engines (whose requests it lists). */
static void seen_done(struct cu_engines *g, int x, uint64_t s)
{
	g->e[x].done = s;
	if (g->log && x != DAO_ENGINE_COMPUTE)
		cu_log_done(g->log, x, s);
}

void cu_order(struct cu_engines *g, enum dao_engine e, const dao_fence *f)
{
	for (int x = 0; x < DAO_ENGINES; x++) {
		struct cu_engine *o = &g->e[x];
		uint64_t s = f->seq[x];
		cudaError_t err;

		/* Same engine: stream order already holds. */
		if (x == (int)e || s <= o->done)
			continue;
		err = cudaEventQuery(o->ev[s % CU_EVENTS]);
		if (err == cudaSuccess) {
			seen_done(g, x, s);
			continue;
		}
		if (err != cudaErrorNotReady) {
			cu_note(g, err, "cudaEventQuery");
			continue;
		}
		cu_note(g, cudaStreamWaitEvent(g->e[e].stream, o->ev[s % CU_EVENTS], 0),
			"cudaStreamWaitEvent");
	}
}

uint64_t cu_record(struct cu_engines *g, enum dao_engine e)
{
	struct cu_engine *x = &g->e[e];
	uint64_t seq = x->submitted + 1;

	/* The slot still ends submission seq - CU_EVENTS: wait for it. */
	if (seq - x->done > CU_EVENTS) {
		uint64_t old = seq - CU_EVENTS;

		if (cu_note(g, cudaEventSynchronize(x->ev[old % CU_EVENTS]), "cudaEventSynchronize"))
			seen_done(g, e, old);
	}
	cu_note(g, cudaEventRecord(x->ev[seq % CU_EVENTS], x->stream), "cudaEventRecord");
	x->submitted = seq;
	return seq;
}

dao_status cu_wait(struct cu_engines *g, const dao_fence *f)
{
	for (int x = 0; x < DAO_ENGINES && g->failure == DAO_OK; x++) {
		struct cu_engine *o = &g->e[x];
		uint64_t s = f->seq[x];

		if (s <= o->done)
			continue;
		if (cu_note(g, cudaEventSynchronize(o->ev[s % CU_EVENTS]), "cudaEventSynchronize"))
			seen_done(g, x, s);
	}
	return g->failure;
}

dao_status cu_kernel(struct dao_backend *be, const struct dao_kernel_run *k,
		     const dao_fence *after, uint64_t *seq)
{
	struct cu_engines *g = &((struct cu_backend *)be)->eng;
	int rc = 0;

	if (cu_bind(g))
		cu_order(g, DAO_ENGINE_COMPUTE, after);
	if (k->fn && g->failure == DAO_OK) {
		dao_kernel_args args = { .user = k->user,
					 .ptrs = k->ptrs,
					 .sizes = k->sizes,
					 .count = k->count,
					 .stream = g->e[DAO_ENGINE_COMPUTE].stream };

		rc = k->fn(&args);
	}
	*seq = cu_record(g, DAO_ENGINE_COMPUTE);
	if (rc)
		return DAO_ERR_KERNEL;
	return g->failure;
}

dao_status cu_backend_wait(struct dao_backend *be, const dao_fence *f)
{
	struct cu_engines *g = &((struct cu_backend *)be)->eng;

	if (!cu_bind(g))
		return g->failure;
	return cu_wait(g, f);
}

/* The stream runs ahead of the host: when a kernel will wait, and for how
 * long, is known only on the device. Stalls are not counted on CUDA. */
uint64_t cu_last_stall_ns(struct dao_backend *be)
{
	return 0;
}

void cu_host_access(struct dao_backend *be, const void *host, uint64_t len, bool write,
		    bool done)
{
	struct cu_log *log = ((struct cu_backend *)be)->eng.log;

	if (log)
		cu_log_host(log, host, len, write, done);
}

bool cu_mem_info(uint64_t *free_bytes, uint64_t *total_bytes)
{
	size_t f = 0, t = 0;

	if (!cu_ok(cudaMemGetInfo(&f, &t), "cudaMemGetInfo"))
		return false;
	*free_bytes = f;
	*total_bytes = t;
	return true;
}
