/* SPDX-License-Identifier: MIT */
/*
 * cusolver.c - a model of cuSOLVER's dense API (libcusolver.so.12) for the
 * CUDA runtime model: exactly the calls dao-cholesky's tile kernels make
 * (tools/cholesky/tile_kernels_gpu.c). dpotrf is a stream operation that
 * LAPACK runs on the stream's worker (cudamodel_lib.h).
 *
 * As the real library: the caller sizes the workspace with
 * cusolverDnDpotrf_bufferSize and passes Lwork doubles of device memory
 * and one int of device memory for the verdict, which dpotrf writes on the
 * stream: 0, or i when the leading minor of order i is not positive
 * definite (the factorisation stops there), as LAPACK's info. The
 * workspace is scratch: the model fills it with 0xdb on every call, so
 * nothing can rely on what it held, and claims all of it as written, so a
 * workspace shared by two streams is a race. The handle carries a stream
 * (the legacy default one until cusolverDnSetStream). Stricter: a bad
 * argument, a workspace below Lwork or outside device memory, or a freed
 * handle is a refusal that fails the process.
 */
#include <cusolverDn.h>
#include <lapacke.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cudamodel_lib.h"

#define HANDLE_MAGIC 0x636d736f6c766572ull /* "cmsolver" */
/* The workspace the model asks for: a panel of 64 columns. The real
 * library's figure differs by version and is not relied on. */
#define PANEL 64

struct cusolverDnContext {
	uint64_t magic;
	cudaStream_t stream;
};

static bool live(cusolverDnHandle_t h)
{
	return h && h->magic == HANDLE_MAGIC;
}

static cusolverStatus_t refused(const char *call, const char *why)
{
	dao_cudamodel_refuse(call, "%s", why);
	return CUSOLVER_STATUS_INVALID_VALUE;
}

/* What the real library answers for a handle it did not make. */
static cusolverStatus_t not_a_handle(const char *call)
{
	dao_cudamodel_refuse(call, "not a live handle");
	return CUSOLVER_STATUS_NOT_INITIALIZED;
}

static int lwork_for(int n)
{
	return n > 0 ? n * PANEL : 1;
}

cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *out)
{
	int n = 0;

	if (!out)
		return refused("cusolverDnCreate", "handle pointer is NULL");
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
		return CUSOLVER_STATUS_NOT_INITIALIZED;
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return CUSOLVER_STATUS_ALLOC_FAILED;
	(*out)->magic = HANDLE_MAGIC;
	return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t h)
{
	if (!live(h))
		return not_a_handle("cusolverDnDestroy");
	h->magic = 0;
	free(h);
	return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t h, cudaStream_t s)
{
	if (!live(h))
		return not_a_handle("cusolverDnSetStream");
	h->stream = s;
	return CUSOLVER_STATUS_SUCCESS;
}

static bool args_ok(cublasFillMode_t uplo, int n, int lda)
{
	return (uplo == CUBLAS_FILL_MODE_LOWER || uplo == CUBLAS_FILL_MODE_UPPER) && n >= 0 &&
	       lda >= (n > 1 ? n : 1);
}

cusolverStatus_t cusolverDnDpotrf_bufferSize(cusolverDnHandle_t h, cublasFillMode_t uplo, int n,
					     double *A, int lda, int *lwork)
{
	if (!live(h))
		return not_a_handle("cusolverDnDpotrf_bufferSize");
	if (!args_ok(uplo, n, lda) || !lwork)
		return refused("cusolverDnDpotrf_bufferSize", "bad fill mode, order or lda");
	*lwork = lwork_for(n);
	return CUSOLVER_STATUS_SUCCESS;
}

struct potrf_arg {
	char uplo;
	int n, lda, lwork;
};

static void potrf_run(const void *arg, void *const *p)
{
	const struct potrf_arg *a = arg;
	int info;

	memset(p[1], 0xdb, (size_t)a->lwork * sizeof(double));
	info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, a->uplo, a->n, p[0], a->lda);
	memcpy(p[2], &info, sizeof(info));
}

cusolverStatus_t cusolverDnDpotrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double *A,
				  int lda, double *work, int lwork, int *info)
{
	struct potrf_arg a = { uplo == CUBLAS_FILL_MODE_LOWER ? 'L' : 'U', n, lda, lwork };

	if (!live(h))
		return not_a_handle("cusolverDnDpotrf");
	if (!args_ok(uplo, n, lda) || !info)
		return refused("cusolverDnDpotrf", "bad fill mode, order, lda or info pointer");
	if (lwork < lwork_for(n) || !work)
		return refused("cusolverDnDpotrf",
			       "workspace below what cusolverDnDpotrf_bufferSize asked for");
	{
		struct dao_cudamodel_operand ops[] = {
			{ A, n ? ((uint64_t)(n - 1) * (uint64_t)lda + (uint64_t)n) * 8 : 0,
			  DAO_CUDAMODEL_READ_WRITE },
			{ work, (uint64_t)lwork * sizeof(double), DAO_CUDAMODEL_WRITE },
			{ info, sizeof(int), DAO_CUDAMODEL_WRITE },
		};

		return dao_cudamodel_kernel(h->stream, "cusolverDnDpotrf", potrf_run, &a,
					    sizeof(a), ops, 3) == cudaSuccess
			       ? CUSOLVER_STATUS_SUCCESS
			       : CUSOLVER_STATUS_EXECUTION_FAILED;
	}
}
