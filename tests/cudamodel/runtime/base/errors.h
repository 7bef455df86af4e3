/* SPDX-License-Identifier: MIT */
/*
 * errors.h - the runtime's error codes as a call returns them: each
 * thread's last error, and the names and strings of the codes
 * (cudaGetLastError, cudaGetErrorName ... are defined in errors.c: they
 * touch nothing but the errors, and the reports below every entry point
 * name the codes).
 */
#ifndef DAO_CUDAMODEL_BASE_ERRORS_H
#define DAO_CUDAMODEL_BASE_ERRORS_H

#include <cuda_runtime.h>

/* Returns err, and makes it the calling thread's last error unless it is
 * cudaSuccess. */
cudaError_t cm_ret(cudaError_t err);

#endif /* DAO_CUDAMODEL_BASE_ERRORS_H */
