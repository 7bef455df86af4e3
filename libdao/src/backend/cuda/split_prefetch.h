/* SPDX-License-Identifier: MIT */
/*
 * split_prefetch.h - DAO_CUDA_MANAGED=split-to-host (switches.h): a
 * prefetch to the host cut into slices of whole driver blocks, each on a
 * stream of its own, forked from the engine's stream and joined back into
 * it, so that the driver may migrate the slices at once. Prefetches to the
 * host ran at about 10 GB/s on an H100 against 55 GB/s for pinned copies
 * (Documentation/cuda.md); whether slicing helps is what dao-umprobe's
 * prefetch-to-host-4-streams measures. Order is kept: the slices start
 * after everything the engine's stream waits for, and what comes after on
 * that stream waits for every slice.
 */
#ifndef DAO_CUDA_SPLIT_PREFETCH_H
#define DAO_CUDA_SPLIT_PREFETCH_H

#include "backend/cuda/cuda_engines.h"

#define SPLIT_STREAMS 4

struct split_prefetch {
	cudaStream_t s[SPLIT_STREAMS];
	cudaEvent_t fork, joined[SPLIT_STREAMS];
	bool ready;
};

/* Streams and events; DAO_ERR_BACKEND (logged) when CUDA refuses. */
dao_status split_prefetch_init(struct split_prefetch *sp);
/* After the engines' streams were drained (cu_engines_fini): the slices'
 * work was joined into them. */
void split_prefetch_fini(struct split_prefetch *sp);

/* Prefetch [p, p + n) to loc as slices of whole `block`s (at most
 * SPLIT_STREAMS) on behalf of engine e, each logged as `call` for why.
 * Failures go to the engines (cu_note). */
void split_prefetch(struct split_prefetch *sp, struct cu_engines *g, enum dao_engine e, char *p,
		    size_t n, struct cudaMemLocation loc, uint64_t block, const char *call,
		    enum dao_move_why why);

#endif /* DAO_CUDA_SPLIT_PREFETCH_H */
