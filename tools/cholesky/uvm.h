/* SPDX-License-Identifier: MIT */
/*
 * uvm.h - `--backend uvm`: the same tiled Cholesky with every tile in
 * cudaMallocManaged memory, no hints and no libdao: what a user would try
 * first. Only where the matrix fits the card: oversubscribing plain UVM
 * would need the card shrunk (a cudaMalloc ballast of all its free memory
 * but the budget, as the literature does), and on a shared card a program
 * that holds that much, or asks for more managed memory than is free, can
 * hang the GPU for everyone. The driver does not report the bytes it moves.
 */
#ifndef CHOL_UVM_H
#define CHOL_UVM_H

#include <stdint.h>

#include "factor.h"
#include "matrix.h"

/* The backend's name in the output (no libdao backend has it). */
#define CHOL_UVM_NAME "uvm"

/*
 * Factor p->a with the tiles in managed memory on the whole card; budget
 * (0: none) is what the caller allows, and the matrix must fit in it.
 * Returns a CHOL_EXIT_* status: CHOL_EXIT_NODEV without a usable CUDA
 * device (or in a build without CUDA), CHOL_EXIT_USAGE when the matrix is
 * more than the budget, than 15/16 of the device's free memory or than the
 * host has available; the reason is on stderr and out->l is NULL then. On
 * success out->stats is zero and out->transfers_unknown set.
 */
int chol_uvm_factor(const struct chol_problem *p, uint64_t budget, struct chol_run_result *out);

#endif /* CHOL_UVM_H */
