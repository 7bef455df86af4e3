/* SPDX-License-Identifier: MIT */
/*
 * switches.h - DAO_CUDA_MANAGED, diagnostic switches of the cuda-managed
 * backend, each turning one driver primitive off so that an experiment
 * can tell what that primitive costs or causes (Documentation/cuda.md,
 * "Experiments"). Read when a CUDA backend is created; never needed to run
 * a job.
 */
#ifndef DAO_CUDA_SWITCHES_H
#define DAO_CUDA_SWITCHES_H

#include <stddef.h>

#include "dao.h"

enum cu_switch {
	/* Dead data and outputs move by prefetch, never by
	 * cudaMemDiscardAndPrefetchBatchAsync. */
	CU_NO_DISCARD = 1u << 0,
	/* No cudaMemAdviseSetAccessedBy (the device) on managed chunks. */
	CU_NO_ACCESSED_BY = 1u << 1,
	/* No cudaMemAdviseSetPreferredLocation (the host) on managed chunks. */
	CU_NO_PREFERRED_HOST = 1u << 2,
	/* Prefetches to the host of two blocks or more cut into slices on
	 * streams of their own (split_prefetch.h). */
	CU_SPLIT_TO_HOST = 1u << 3,
};

/* Room for every switch's name in canon (below). */
#define CU_SWITCHES_LEN 64

/*
 * The switches DAO_CUDA_MANAGED names, comma-separated: no-discard,
 * no-accessed-by, no-preferred-host, split-to-host, and no-advise for both
 * advices. Unset
 * or empty: none. *out gets the set, canon (CU_SWITCHES_LEN bytes) its
 * names in a fixed order ("" for none). Anything else, an empty name included, is
 * DAO_ERR_CONFIG with a log line naming the variable and what it takes.
 */
dao_status cu_switches_read(unsigned *out, char canon[CU_SWITCHES_LEN]);

#endif /* DAO_CUDA_SWITCHES_H */
