/* SPDX-License-Identifier: MIT */
/*
 * inject.h - runtime calls failed on purpose, as the real runtime fails
 * them, so that tests can fail each CUDA call a job makes in turn.
 * DAO_CUDAMODEL_FAIL, read at the first call: a comma-separated list of
 * NAME:N (the N-th call of the runtime function NAME, counted from 1,
 * fails; the others go through), NAME:N+ (the N-th and every later call
 * of NAME fails: a card that stays failed), all:N and all:N+ (the same,
 * counting every call), and "count" (nothing fails; at exit one line on
 * stderr gives how many calls of each function the process made). A
 * failed call does nothing but return its error: the one the runtime
 * gives there (out of memory for what allocates, a launch failure, which
 * the real runtime reports for an asynchronous fault, for the rest).
 * Documentation/cuda.md.
 */
#ifndef DAO_CUDAMODEL_BASE_INJECT_H
#define DAO_CUDAMODEL_BASE_INJECT_H

#include <cuda_runtime.h>

#include "base/errors.h"

/* cudaSuccess, or err when this call of `call` is to fail (then said on
 * stderr); counts the call. Takes no lock of the model's. */
cudaError_t cm_inject(const char *call, cudaError_t err);

/* The first line of an entry point: a failing call returns at once. */
#define CM_INJECT(call, err)                                   \
	do {                                                   \
		cudaError_t injected_ = cm_inject(call, err);  \
		if (injected_ != cudaSuccess)                  \
			return cm_ret(injected_);              \
	} while (0)

#endif /* DAO_CUDAMODEL_BASE_INJECT_H */
