/* SPDX-License-Identifier: MIT */
/*
 * tile_kernels_gpu.h - the tile kernels on a CUDA backend: cuSOLVER's
 * dpotrf and cuBLAS's dtrsm, dsyrk and dgemm on the stream libdao hands
 * each launch. Built only when libdao is built with CUDA (DAO_HAVE_CUDA).
 *
 * dpotrf reports a matrix that is not positive definite through an info
 * word on the device; reading it at once would stall the stream, so each
 * diagonal tile has its own word, read after dao_sync.
 */
#ifndef CHOL_TILE_KERNELS_GPU_H
#define CHOL_TILE_KERNELS_GPU_H

#include <stdint.h>

#include "dao.h"

struct chol_gpu;

/* State for a factorisation of nt tile columns: -1 with the reason on
 * stderr when CUDA refuses. */
int chol_gpu_create(uint64_t nt, struct chol_gpu **out);
void chol_gpu_destroy(struct chol_gpu *g);
/* After dao_sync: 0 when every dpotrf succeeded, 1 when one found the
 * matrix not positive definite, -1 when the words cannot be read. */
int chol_gpu_failed(struct chol_gpu *g);

/* Make the cuBLAS and cuSOLVER handles on stream and dpotrf's workspace
 * for tiles of order tile (a: any such tile on the device or managed) now
 * rather than in the first kernel; -1 with the reason on stderr. */
int chol_gpu_prepare(struct chol_gpu *g, void *stream, int tile, double *a);

/* The kernels; args->user as for the host kernels. */
int chol_gpu_potrf(const dao_kernel_args *args);
int chol_gpu_trsm(const dao_kernel_args *args);
int chol_gpu_syrk(const dao_kernel_args *args);
int chol_gpu_gemm(const dao_kernel_args *args);

#endif /* CHOL_TILE_KERNELS_GPU_H */
