/* SPDX-License-Identifier: MIT */
/*
 * residency.h - what moves where (residency.c): all called with dev->mu
 * held, from the executor.
 */
#ifndef DAO_CORE_RESIDENCY_H
#define DAO_CORE_RESIDENCY_H

#include "core/objects.h"

dao_status res_prepare_kernel(struct device *d, struct op *op, dao_fence *after);
void res_after_kernel(struct device *d, struct op *op, uint64_t kseq);
void res_retire(struct device *d, struct op *op);
void res_prefetch(struct device *d);
/* A host kernel (DAO_LAUNCH_HOST): its operands current and idle on the
 * host once *idle is reached; then, after the function, what it wrote. */
dao_status res_prepare_host_kernel(struct device *d, struct op *op, dao_fence *idle);
void res_after_host_kernel(struct device *d, struct op *op);
/* The host kernel's function is about to touch (done false), or has just
 * touched (done true), its operands' host copies: the backend hears of it
 * (backend.h: host_access), as it does of dao_write and dao_read. */
void res_host_kernel_touch(struct device *d, const struct op *op, bool done);
dao_status res_host_write(struct device *d, struct op *op);
dao_status res_host_read(struct device *d, struct op *op);
/* dao_read on a failed context (dao.h): the latest contents where they are
 * intact, else DAO_ERR_LOST with a log line saying why. */
dao_status res_host_read_failed(struct device *d, struct op *op);
void res_free_rec(struct device *d, struct rec *r);
void res_skip(struct device *d, struct op *op);
/* A kernel's function failed: what it writes is undefined (DAO_ERR_LOST). */
void res_kernel_failed(struct op *op);
void res_iteration(struct device *d, struct op *op);
dao_status res_wait(struct device *d, const dao_fence *f);

#endif /* DAO_CORE_RESIDENCY_H */
