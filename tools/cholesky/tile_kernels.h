/* SPDX-License-Identifier: MIT */
/*
 * tile_kernels.h - the four tile operations of a lower tiled Cholesky, as
 * libdao kernel functions. Operands are contiguous column-major tiles of
 * order `tile`, passed through the launch's user pointer. On a CUDA
 * backend (the launch has a stream) they run on the GPU instead.
 */
#ifndef CHOL_TILE_KERNELS_H
#define CHOL_TILE_KERNELS_H

#include <stdint.h>

#include "dao.h"

struct chol_gpu;

struct chol_tile_geom {
	int tile;
	struct chol_gpu *gpu; /* on a CUDA backend (tile_kernels_gpu.h), else NULL */
};

/* dpotrf's launch argument: which diagonal tile it factors, for the GPU's
 * per-tile failure word. geom first: every kernel reads the tile order
 * through a struct chol_tile_geom pointer. */
struct chol_potrf_arg {
	struct chol_tile_geom geom;
	uint64_t k;
};

/* (rw A_kk): A_kk = L_kk with L_kk L_kk^T = A_kk. Fails if A_kk is not
 * positive definite. */
int chol_kernel_potrf(const dao_kernel_args *args);
/* (r L_kk, rw A_ik): A_ik = A_ik L_kk^-T. */
int chol_kernel_trsm(const dao_kernel_args *args);
/* (r L_ik, rw A_ii): A_ii -= L_ik L_ik^T (lower triangle). */
int chol_kernel_syrk(const dao_kernel_args *args);
/* (r L_ik, r L_jk, rw A_ij): A_ij -= L_ik L_jk^T. */
int chol_kernel_gemm(const dao_kernel_args *args);

/* Floating-point operations of each, for traces and simulation. */
uint64_t chol_flops_potrf(uint64_t tile);
uint64_t chol_flops_trsm(uint64_t tile);
uint64_t chol_flops_syrk(uint64_t tile);
uint64_t chol_flops_gemm(uint64_t tile);

#endif /* CHOL_TILE_KERNELS_H */
