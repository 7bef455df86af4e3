/* SPDX-License-Identifier: MIT */
/*
 * cudamodel_lib.h - what the models of CUDA's libraries (cublas.c,
 * cusolver.c: libcublas.so.13 and libcusolver.so.12 that run on the CPU)
 * may ask the CUDA runtime model (libcudart.so.13 of tests/cudamodel/):
 * run a library kernel as a stream operation, and refuse a call. The
 * runtime model never calls the library models.
 *
 * A kernel is a CPU function run by the stream's worker thread, in stream
 * order, on the worker's view of its operands (device or managed memory).
 * Its operands are checked as a copy's are: at enqueue, against every
 * earlier conflicting access not ordered before it (a race stops the
 * process, naming both call sites); when it runs, managed operands are
 * device accesses (faults, remote reads and migrations counted as
 * advised), a read of discarded bytes stops the process, and what it
 * writes is live again.
 */
#ifndef DAO_CUDAMODEL_LIB_H
#define DAO_CUDAMODEL_LIB_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#define DAO_CUDAMODEL_KERNEL_OPERANDS 4

enum dao_cudamodel_access {
	DAO_CUDAMODEL_READ,
	DAO_CUDAMODEL_WRITE,      /* overwritten without being read */
	DAO_CUDAMODEL_READ_WRITE, /* read, then written */
};

struct dao_cudamodel_operand {
	const void *ptr; /* as the caller of the library passed it */
	uint64_t bytes;
	enum dao_cudamodel_access access;
};

/* ptrs[i]: where the worker reaches operand i. */
typedef void (*dao_cudamodel_kernel_fn)(const void *arg, void *const *ptrs);

/*
 * Enqueue fn on stream (NULL: the legacy default stream) with a copy of
 * arg_bytes of arg, under name (a string that outlives the process's
 * reports: a literal). cudaSuccess, or a refusal (counted as the runtime's
 * are, so the process fails at exit): a stream that is not live, more than
 * DAO_CUDAMODEL_KERNEL_OPERANDS operands, an operand that is not inside one
 * device or managed allocation.
 */
cudaError_t dao_cudamodel_kernel(cudaStream_t stream, const char *name, dao_cudamodel_kernel_fn fn,
				 const void *arg, size_t arg_bytes,
				 const struct dao_cudamodel_operand *ops, unsigned count);

/* A library call refused for bad arguments: printed with its call site and
 * counted as the runtime's refusals are. */
void dao_cudamodel_refuse(const char *call, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* DAO_CUDAMODEL_LIB_H */
