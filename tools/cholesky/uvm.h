/* SPDX-License-Identifier: MIT */
/*
 * uvm.h - `--backend uvm`: the same tiled Cholesky with every tile in
 * cudaMallocManaged memory, no hints and no libdao: the CUDA driver's own
 * oversubscription, what a user would try first. The card is shrunk to
 * the budget by a cudaMalloc ballast held for the run, so the driver
 * really has to evict. The driver does not report the bytes it moves.
 */
#ifndef CHOL_UVM_H
#define CHOL_UVM_H

#include <stdint.h>

#include "factor.h"
#include "matrix.h"

/* The backend's name in the output (no libdao backend has it). */
#define CHOL_UVM_NAME "uvm"

/*
 * Factor p->a with the tiles in managed memory, the device limited to
 * budget bytes by a ballast (budget 0: no ballast, the whole card).
 * Returns a CHOL_EXIT_* status: CHOL_EXIT_NODEV without a usable CUDA
 * device (or in a build without CUDA), CHOL_EXIT_USAGE when the budget is
 * more than the device has free or the matrix more than the host has
 * free; the reason is on stderr and out->l is NULL then. On success
 * out->stats is zero and out->transfers_unknown set.
 */
int chol_uvm_factor(const struct chol_problem *p, uint64_t budget, struct chol_run_result *out);

#endif /* CHOL_UVM_H */
