/* SPDX-License-Identifier: MIT */
#include <cblas.h>
#include <lapacke.h>

#include "tile_kernels.h"
#ifdef DAO_HAVE_CUDA
#include "tile_kernels_gpu.h"
#define ON_GPU(args, gpu_fn)            \
	do {                            \
		if ((args)->stream)     \
			return gpu_fn(args); \
	} while (0)
#else
/* Without CUDA no backend hands out a stream. */
#define ON_GPU(args, gpu_fn)        \
	do {                        \
		if ((args)->stream) \
			return 1;   \
	} while (0)
#endif

static int tile_of(const dao_kernel_args *args)
{
	return ((const struct chol_tile_geom *)args->user)->tile;
}

int chol_kernel_potrf(const dao_kernel_args *args)
{
	int t = tile_of(args);

	ON_GPU(args, chol_gpu_potrf);
	/* The _work variant skips LAPACKE's NaN scan of the input, a full
	 * extra pass over the tile that the factorisation does not need. */
	return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', t, args->ptrs[0], t) != 0;
}

int chol_kernel_trsm(const dao_kernel_args *args)
{
	int t = tile_of(args);

	ON_GPU(args, chol_gpu_trsm);
	cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, t, t, 1.0,
		    args->ptrs[0], t, args->ptrs[1], t);
	return 0;
}

int chol_kernel_syrk(const dao_kernel_args *args)
{
	int t = tile_of(args);

	ON_GPU(args, chol_gpu_syrk);
	cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, t, t, -1.0, args->ptrs[0], t, 1.0,
		    args->ptrs[1], t);
	return 0;
}

int chol_kernel_gemm(const dao_kernel_args *args)
{
	int t = tile_of(args);

	ON_GPU(args, chol_gpu_gemm);
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, t, t, t, -1.0, args->ptrs[0], t,
		    args->ptrs[1], t, 1.0, args->ptrs[2], t);
	return 0;
}

uint64_t chol_flops_potrf(uint64_t tile)
{
	return tile * tile * tile / 3;
}

uint64_t chol_flops_trsm(uint64_t tile)
{
	return tile * tile * tile;
}

uint64_t chol_flops_syrk(uint64_t tile)
{
	return tile * tile * tile;
}

uint64_t chol_flops_gemm(uint64_t tile)
{
	return 2 * tile * tile * tile;
}
