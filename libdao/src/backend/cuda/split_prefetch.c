/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "backend/cuda/split_prefetch.h"

dao_status split_prefetch_init(struct split_prefetch *sp)
{
	memset(sp, 0, sizeof(*sp));
	if (!cu_ok(cudaEventCreateWithFlags(&sp->fork, cudaEventDisableTiming),
		   "cudaEventCreateWithFlags"))
		return DAO_ERR_BACKEND;
	sp->ready = true;
	for (int i = 0; i < SPLIT_STREAMS; i++) {
		if (!cu_ok(cudaStreamCreateWithFlags(&sp->s[i], cudaStreamNonBlocking),
			   "cudaStreamCreateWithFlags") ||
		    !cu_ok(cudaEventCreateWithFlags(&sp->joined[i], cudaEventDisableTiming),
			   "cudaEventCreateWithFlags")) {
			split_prefetch_fini(sp);
			return DAO_ERR_BACKEND;
		}
	}
	return DAO_OK;
}

void split_prefetch_fini(struct split_prefetch *sp)
{
	if (!sp->ready)
		return;
	for (int i = 0; i < SPLIT_STREAMS; i++) {
		if (sp->joined[i])
			cudaEventDestroy(sp->joined[i]);
		if (sp->s[i])
			cudaStreamDestroy(sp->s[i]);
	}
	cudaEventDestroy(sp->fork);
	sp->ready = false;
}

void split_prefetch(struct split_prefetch *sp, struct cu_engines *g, enum dao_engine e, char *p,
		    size_t n, struct cudaMemLocation loc, uint64_t block, const char *call,
		    enum dao_move_why why)
{
	cudaStream_t main = g->e[e].stream;
	/* Whole blocks a slice, enough of them that SPLIT_STREAMS cover n. */
	size_t per = (n / SPLIT_STREAMS + block - 1) / block * block;
	uint64_t seq = cu_next_seq(g, e);

	if (!cu_note(g, cudaEventRecord(sp->fork, main), "cudaEventRecord (fork)"))
		return;
	for (size_t i = 0, off = 0; off < n && i < SPLIT_STREAMS; i++, off += per) {
		size_t len = n - off < per ? n - off : per;

		if (g->log)
			cu_log_move(g->log, e, seq, call, why, p + off, len);
		if (!cu_note(g, cudaStreamWaitEvent(sp->s[i], sp->fork, 0), "cudaStreamWaitEvent") ||
		    !cu_note(g, cudaMemPrefetchAsync(p + off, len, loc, 0, sp->s[i]),
			     "cudaMemPrefetchAsync (a slice, to the host)") ||
		    !cu_note(g, cudaEventRecord(sp->joined[i], sp->s[i]), "cudaEventRecord (join)") ||
		    !cu_note(g, cudaStreamWaitEvent(main, sp->joined[i], 0), "cudaStreamWaitEvent"))
			return;
	}
}
