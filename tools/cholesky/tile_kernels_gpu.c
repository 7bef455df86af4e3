/* SPDX-License-Identifier: MIT */
#ifdef DAO_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "tile_kernels.h"
#include "tile_kernels_gpu.h"

struct chol_gpu {
	/* Made by the first kernel, on libdao's executor thread: that is
	 * where every kernel runs. */
	bool ready;
	cublasHandle_t blas;
	cusolverDnHandle_t solver;
	double *work; /* dpotrf's workspace, lwork doubles */
	int lwork;
	int *info; /* nt words on the device, one per diagonal tile */
	uint64_t nt;
};

static const double one = 1.0, minus_one = -1.0;

static int cuda_failed(cudaError_t err, const char *what)
{
	if (err == cudaSuccess)
		return 0;
	fprintf(stderr, "dao-cholesky: %s: %s\n", what, cudaGetErrorString(err));
	return 1;
}

static int blas_failed(cublasStatus_t st, const char *what)
{
	if (st == CUBLAS_STATUS_SUCCESS)
		return 0;
	fprintf(stderr, "dao-cholesky: %s: %s\n", what, cublasGetStatusString(st));
	return 1;
}

static int solver_failed(cusolverStatus_t st, const char *what)
{
	if (st == CUSOLVER_STATUS_SUCCESS)
		return 0;
	fprintf(stderr, "dao-cholesky: %s failed (cuSOLVER status %d)\n", what, (int)st);
	return 1;
}

int chol_gpu_create(uint64_t nt, struct chol_gpu **out)
{
	struct chol_gpu *g = calloc(1, sizeof(*g));

	if (!g) {
		fprintf(stderr, "dao-cholesky: out of memory\n");
		return -1;
	}
	g->nt = nt;
	if (cuda_failed(cudaMalloc((void **)&g->info, nt * sizeof(int)), "cudaMalloc")) {
		chol_gpu_destroy(g);
		return -1;
	}
	*out = g;
	return 0;
}

void chol_gpu_destroy(struct chol_gpu *g)
{
	if (!g)
		return;
	if (g->ready) {
		cublasDestroy(g->blas);
		cusolverDnDestroy(g->solver);
	}
	cudaFree(g->work);
	cudaFree(g->info);
	free(g);
}

int chol_gpu_failed(struct chol_gpu *g)
{
	int *info = malloc(g->nt * sizeof(int));
	int bad = 0;

	/* The words were written on libdao's non-blocking stream, which the
	 * legacy stream's copy does not wait for; dao_sync has seen them done
	 * on libdao's executor thread, not this one. Once per run. */
	if (!info || cuda_failed(cudaDeviceSynchronize(), "cudaDeviceSynchronize") ||
	    cuda_failed(cudaMemcpy(info, g->info, g->nt * sizeof(int), cudaMemcpyDeviceToHost),
			"reading dpotrf's results")) {
		free(info);
		return -1;
	}
	for (uint64_t k = 0; k < g->nt; k++)
		bad |= info[k] != 0;
	free(info);
	return bad;
}

static struct chol_gpu *gpu_of(const dao_kernel_args *args)
{
	return ((const struct chol_tile_geom *)args->user)->gpu;
}

static int tile_of(const dao_kernel_args *args)
{
	return ((const struct chol_tile_geom *)args->user)->tile;
}

/* The handles, on the launch's stream. */
static int bind(struct chol_gpu *g, const dao_kernel_args *args)
{
	cudaStream_t s = (cudaStream_t)args->stream;

	if (!g)
		return 1;
	if (!g->ready) {
		/* dpotrf's words cleared on the stream the kernels run on, so
		 * that they are ordered before every dpotrf (a cudaMemset on
		 * the legacy stream is not, before work on libdao's
		 * non-blocking streams, and returns before it is done). */
		if (cuda_failed(cudaMemsetAsync(g->info, 0, g->nt * sizeof(int), s),
				"cudaMemsetAsync"))
			return 1;
		if (blas_failed(cublasCreate(&g->blas), "cublasCreate"))
			return 1;
		if (solver_failed(cusolverDnCreate(&g->solver), "cusolverDnCreate")) {
			cublasDestroy(g->blas);
			return 1;
		}
		g->ready = true;
	}
	return blas_failed(cublasSetStream(g->blas, s), "cublasSetStream") ||
	       solver_failed(cusolverDnSetStream(g->solver, s), "cusolverDnSetStream");
}

/* dpotrf's workspace: the same for every tile, sized once. */
static int size_work(struct chol_gpu *g, int t, double *a)
{
	int lwork = 0;

	if (g->work)
		return 0;
	if (solver_failed(cusolverDnDpotrf_bufferSize(g->solver, CUBLAS_FILL_MODE_LOWER, t, a, t,
						       &lwork),
			  "cusolverDnDpotrf_bufferSize") ||
	    cuda_failed(cudaMalloc((void **)&g->work,
				   (size_t)(lwork > 0 ? lwork : 1) * sizeof(double)),
			"cudaMalloc"))
		return 1;
	g->lwork = lwork;
	return 0;
}

int chol_gpu_prepare(struct chol_gpu *g, void *stream, int tile, double *a)
{
	dao_kernel_args args = { .stream = stream };

	return bind(g, &args) || size_work(g, tile, a) ? -1 : 0;
}

int chol_gpu_potrf(const dao_kernel_args *args)
{
	const struct chol_potrf_arg *a = args->user;
	struct chol_gpu *g = gpu_of(args);
	int t = tile_of(args);

	if (bind(g, args) || size_work(g, t, args->ptrs[0]))
		return 1;
	return solver_failed(cusolverDnDpotrf(g->solver, CUBLAS_FILL_MODE_LOWER, t, args->ptrs[0],
					      t, g->work, g->lwork, g->info + a->k),
			     "cusolverDnDpotrf");
}

int chol_gpu_trsm(const dao_kernel_args *args)
{
	struct chol_gpu *g = gpu_of(args);
	int t = tile_of(args);

	if (bind(g, args))
		return 1;
	return blas_failed(cublasDtrsm(g->blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER,
				       CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, t, t, &one,
				       args->ptrs[0], t, args->ptrs[1], t),
			   "cublasDtrsm");
}

int chol_gpu_syrk(const dao_kernel_args *args)
{
	struct chol_gpu *g = gpu_of(args);
	int t = tile_of(args);

	if (bind(g, args))
		return 1;
	return blas_failed(cublasDsyrk(g->blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, t, t,
				       &minus_one, args->ptrs[0], t, &one, args->ptrs[1], t),
			   "cublasDsyrk");
}

int chol_gpu_gemm(const dao_kernel_args *args)
{
	struct chol_gpu *g = gpu_of(args);
	int t = tile_of(args);

	if (bind(g, args))
		return 1;
	return blas_failed(cublasDgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, t, t, t, &minus_one,
				       args->ptrs[0], t, args->ptrs[1], t, &one, args->ptrs[2], t),
			   "cublasDgemm");
}
#else
/* ISO C wants something in a translation unit. */
typedef int chol_no_cuda;
#endif
