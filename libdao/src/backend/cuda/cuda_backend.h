/* SPDX-License-Identifier: MIT */
/*
 * cuda_backend.h - the CUDA backends as the registry sees them. Plain C,
 * no CUDA header: the registry is compiled without one.
 */
#ifndef DAO_CUDA_BACKEND_H
#define DAO_CUDA_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"

/* Whether a CUDA device can be used: a driver answers and a device is
 * visible. Logs nothing; the answer is computed once per process. */
bool dao_cuda_usable(void);

/*
 * A cuda-managed or cuda-explicit backend (kind, called name in messages)
 * on the calling thread's current CUDA device, its arena spanning `budget`
 * bytes, or `percent` of the device's memory when budget is 0.
 *   DAO_ERR_BACKEND  no usable device, a device without what the kind
 *                    needs, or a CUDA call failed (each said in the log)
 *   DAO_ERR_CONFIG   the budget exceeds the device memory free now
 *   DAO_ERR_NOMEM    the system ran out of memory
 */
dao_status dao_backend_cuda_create(dao_backend_kind kind, const char *name, uint64_t budget,
				   uint32_t percent, struct dao_backend **out);

#endif /* DAO_CUDA_BACKEND_H */
