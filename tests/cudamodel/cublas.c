/* SPDX-License-Identifier: MIT */
/*
 * cublas.c - a model of cuBLAS (libcublas.so.13) for the CUDA runtime
 * model: exactly the calls dao-cholesky's tile kernels make
 * (tools/cholesky/tile_kernels_gpu.c), each level-3 routine a stream
 * operation that OpenBLAS runs on the stream's worker (cudamodel_lib.h),
 * its operands checked for races and residency as copies are.
 *
 * As the real library: a handle belongs to a device and carries a stream
 * (the legacy default one until cublasSetStream); scalars are read from
 * the host when the call is made (CUBLAS_POINTER_MODE_HOST, the default);
 * matrices are column-major in device or managed memory; cublasDestroy
 * synchronises the device. Stricter: a bad argument, an operand outside
 * device memory or a freed handle is a refusal that fails the process.
 */
#include <cblas.h>
#include <cublas_v2.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cudamodel_lib.h"

#define HANDLE_MAGIC 0x636d626c61730000ull /* "cmblas" */

struct cublasContext {
	uint64_t magic;
	cudaStream_t stream;
};

static bool live(cublasHandle_t h)
{
	return h && h->magic == HANDLE_MAGIC;
}

/* Bytes a rows x cols column-major matrix with leading dimension ld spans. */
static uint64_t span(int rows, int cols, int ld)
{
	return rows > 0 && cols > 0 ? ((uint64_t)(cols - 1) * (uint64_t)ld + (uint64_t)rows) * 8 : 0;
}

static enum CBLAS_TRANSPOSE trans_of(cublasOperation_t op)
{
	return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
}

static bool op_ok(cublasOperation_t op)
{
	return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static bool fill_ok(cublasFillMode_t f)
{
	return f == CUBLAS_FILL_MODE_LOWER || f == CUBLAS_FILL_MODE_UPPER;
}

static enum CBLAS_UPLO uplo_of(cublasFillMode_t f)
{
	return f == CUBLAS_FILL_MODE_LOWER ? CblasLower : CblasUpper;
}

/* How a kernel touches the matrix it updates: BLAS ignores its contents
 * when their factor (beta, or trsm's alpha) is 0. */
static enum dao_cudamodel_access updated(double factor)
{
	return factor == 0.0 ? DAO_CUDAMODEL_WRITE : DAO_CUDAMODEL_READ_WRITE;
}

static cublasStatus_t refused(const char *call, const char *why)
{
	dao_cudamodel_refuse(call, "%s", why);
	return CUBLAS_STATUS_INVALID_VALUE;
}

/* What the real library answers for a handle it did not make. */
static cublasStatus_t not_a_handle(const char *call)
{
	dao_cudamodel_refuse(call, "not a live handle");
	return CUBLAS_STATUS_NOT_INITIALIZED;
}

static cublasStatus_t launch(cublasHandle_t h, const char *name, dao_cudamodel_kernel_fn fn,
			     const void *arg, size_t bytes, const struct dao_cudamodel_operand *ops,
			     unsigned count)
{
	return dao_cudamodel_kernel(h->stream, name, fn, arg, bytes, ops, count) == cudaSuccess
		       ? CUBLAS_STATUS_SUCCESS
		       : CUBLAS_STATUS_EXECUTION_FAILED;
}

cublasStatus_t cublasCreate_v2(cublasHandle_t *out)
{
	int n = 0;

	if (!out)
		return refused("cublasCreate", "handle pointer is NULL");
	/* The real one needs a device and initialises its context. */
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return CUBLAS_STATUS_ALLOC_FAILED;
	(*out)->magic = HANDLE_MAGIC;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
	if (!live(h))
		return not_a_handle("cublasDestroy");
	/* The real one synchronises the device as it releases its memory,
	 * and releases it whatever the device answers. */
	cudaError_t err = cudaDeviceSynchronize();

	h->magic = 0;
	free(h);
	return err == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INTERNAL_ERROR;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
	if (!live(h))
		return not_a_handle("cublasSetStream");
	h->stream = s;
	return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusString(cublasStatus_t st)
{
	switch (st) {
	case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
	case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
	case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
	case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
	case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
	case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
	default: return "unknown error";
	}
}

struct gemm_arg {
	enum CBLAS_TRANSPOSE ta, tb;
	int m, n, k, lda, ldb, ldc;
	double alpha, beta;
};

static void gemm_run(const void *arg, void *const *p)
{
	const struct gemm_arg *a = arg;

	cblas_dgemm(CblasColMajor, a->ta, a->tb, a->m, a->n, a->k, a->alpha, p[0], a->lda, p[1],
		    a->ldb, a->beta, p[2], a->ldc);
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
			      int m, int n, int k, const double *alpha, const double *A, int lda,
			      const double *B, int ldb, const double *beta, double *C, int ldc)
{
	struct gemm_arg a = { trans_of(ta), trans_of(tb), m, n, k, lda, ldb, ldc, 0, 0 };
	int ar = ta == CUBLAS_OP_N ? m : k, ac = ta == CUBLAS_OP_N ? k : m;
	int br = tb == CUBLAS_OP_N ? k : n, bc = tb == CUBLAS_OP_N ? n : k;

	if (!live(h))
		return not_a_handle("cublasDgemm");
	if (!op_ok(ta) || !op_ok(tb) || m < 0 || n < 0 || k < 0 || lda < (ar > 1 ? ar : 1) ||
	    ldb < (br > 1 ? br : 1) || ldc < (m > 1 ? m : 1) || !alpha || !beta)
		return refused("cublasDgemm", "bad dimensions, leading dimensions or scalars");
	if (!m || !n)
		return CUBLAS_STATUS_SUCCESS;
	a.alpha = *alpha;
	a.beta = *beta;
	{
		struct dao_cudamodel_operand ops[] = {
			{ A, k ? span(ar, ac, lda) : 0, DAO_CUDAMODEL_READ },
			{ B, k ? span(br, bc, ldb) : 0, DAO_CUDAMODEL_READ },
			{ C, span(m, n, ldc), updated(a.beta) },
		};

		return launch(h, "cublasDgemm", gemm_run, &a, sizeof(a), ops, 3);
	}
}

struct syrk_arg {
	enum CBLAS_UPLO uplo;
	enum CBLAS_TRANSPOSE t;
	int n, k, lda, ldc;
	double alpha, beta;
};

static void syrk_run(const void *arg, void *const *p)
{
	const struct syrk_arg *a = arg;

	cblas_dsyrk(CblasColMajor, a->uplo, a->t, a->n, a->k, a->alpha, p[0], a->lda, a->beta,
		    p[1], a->ldc);
}

cublasStatus_t cublasDsyrk_v2(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t t,
			      int n, int k, const double *alpha, const double *A, int lda,
			      const double *beta, double *C, int ldc)
{
	struct syrk_arg a = { uplo_of(uplo), trans_of(t), n, k, lda, ldc, 0, 0 };
	int ar = t == CUBLAS_OP_N ? n : k, ac = t == CUBLAS_OP_N ? k : n;

	if (!live(h))
		return not_a_handle("cublasDsyrk");
	if (!fill_ok(uplo) || !op_ok(t) || n < 0 || k < 0 || lda < (ar > 1 ? ar : 1) ||
	    ldc < (n > 1 ? n : 1) || !alpha || !beta)
		return refused("cublasDsyrk", "bad fill mode, dimensions or scalars");
	if (!n)
		return CUBLAS_STATUS_SUCCESS;
	a.alpha = *alpha;
	a.beta = *beta;
	{
		/* Only C's uplo triangle is touched; the model claims all of
		 * C: stricter, never blind. */
		struct dao_cudamodel_operand ops[] = {
			{ A, k ? span(ar, ac, lda) : 0, DAO_CUDAMODEL_READ },
			{ C, span(n, n, ldc), updated(a.beta) },
		};

		return launch(h, "cublasDsyrk", syrk_run, &a, sizeof(a), ops, 2);
	}
}

struct trsm_arg {
	enum CBLAS_SIDE side;
	enum CBLAS_UPLO uplo;
	enum CBLAS_TRANSPOSE t;
	enum CBLAS_DIAG diag;
	int m, n, lda, ldb;
	double alpha;
};

static void trsm_run(const void *arg, void *const *p)
{
	const struct trsm_arg *a = arg;

	cblas_dtrsm(CblasColMajor, a->side, a->uplo, a->t, a->diag, a->m, a->n, a->alpha, p[0],
		    a->lda, p[1], a->ldb);
}

cublasStatus_t cublasDtrsm_v2(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
			      cublasOperation_t t, cublasDiagType_t diag, int m, int n,
			      const double *alpha, const double *A, int lda, double *B, int ldb)
{
	int ka = side == CUBLAS_SIDE_LEFT ? m : n;
	struct trsm_arg a = { side == CUBLAS_SIDE_LEFT ? CblasLeft : CblasRight,
			      uplo_of(uplo),
			      trans_of(t),
			      diag == CUBLAS_DIAG_UNIT ? CblasUnit : CblasNonUnit,
			      m,
			      n,
			      lda,
			      ldb,
			      0 };

	if (!live(h))
		return not_a_handle("cublasDtrsm");
	if ((side != CUBLAS_SIDE_LEFT && side != CUBLAS_SIDE_RIGHT) || !fill_ok(uplo) ||
	    !op_ok(t) || (diag != CUBLAS_DIAG_UNIT && diag != CUBLAS_DIAG_NON_UNIT) || m < 0 ||
	    n < 0 || lda < (ka > 1 ? ka : 1) || ldb < (m > 1 ? m : 1) || !alpha)
		return refused("cublasDtrsm", "bad modes, dimensions or scalar");
	if (!m || !n)
		return CUBLAS_STATUS_SUCCESS;
	a.alpha = *alpha;
	{
		struct dao_cudamodel_operand ops[] = {
			{ A, span(ka, ka, lda), DAO_CUDAMODEL_READ },
			{ B, span(m, n, ldb), updated(a.alpha) },
		};

		return launch(h, "cublasDtrsm", trsm_run, &a, sizeof(a), ops, 2);
	}
}
