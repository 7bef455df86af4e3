/* SPDX-License-Identifier: MIT */
/*
 * test_cudamodel_libs.c - the models of cuBLAS and cuSOLVER (cublas.c,
 * cusolver.c) compute what OpenBLAS and LAPACK compute, in stream order,
 * and the runtime model catches their races and misuses as it does a
 * copy's. Scenarios run as in test_cudamodel.c (scenario.h); the ones the
 * model must stop end with its status 66 and its message.
 */
#include <cblas.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <lapacke.h>
#include <stdbool.h>

#include "cudamodel/cudamodel.h"
#include "cudamodel/scenario.h"

#define T 64 /* tile order */
#define TILE_BYTES (T * T * sizeof(double))

static void fill(double *t, unsigned seed, double diag)
{
	for (int j = 0; j < T; j++)
		for (int i = 0; i < T; i++)
			t[j * T + i] = (double)((i * 7 + j * 13 + (int)seed) % 17) / 17.0 - 0.5 +
				       (i == j ? diag : 0.0);
}

/* A device tile holding host's, copied in on s from pinned memory: the
 * copy is asynchronous (from pageable memory the call would wait). */
static double *device_tile(const double *host, cudaStream_t s)
{
	void *d, *pinned;

	EXPECT(cudaMalloc(&d, TILE_BYTES) == cudaSuccess);
	EXPECT(cudaHostAlloc(&pinned, TILE_BYTES, 0) == cudaSuccess);
	memcpy(pinned, host, TILE_BYTES);
	EXPECT(cudaMemcpyAsync(d, pinned, TILE_BYTES, cudaMemcpyHostToDevice, s) == cudaSuccess);
	return d;
}

static cudaStream_t stream(void)
{
	cudaStream_t s;

	EXPECT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
	return s;
}

/* C -= A B^T by cuBLAS on s2 after the tiles arrive on s1, with or without
 * the event wait that orders them; the result as OpenBLAS computes it. */
static int blas_two_streams(bool wait)
{
	static double a[T * T], b[T * T], c[T * T], want[T * T], got[T * T];
	const double one = 1.0, minus_one = -1.0;
	cudaStream_t s1 = stream(), s2 = stream();
	cublasHandle_t h;
	cudaEvent_t ev;
	double *da, *db, *dc;

	fill(a, 1, 0);
	fill(b, 2, 0);
	fill(c, 3, 0);
	memcpy(want, c, sizeof(c));
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, T, T, T, -1.0, a, T, b, T, 1.0, want,
		    T);
	da = device_tile(a, s1);
	db = device_tile(b, s1);
	dc = device_tile(c, s1);
	EXPECT(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess);
	EXPECT(cudaEventRecord(ev, s1) == cudaSuccess);
	if (wait)
		EXPECT(cudaStreamWaitEvent(s2, ev, 0) == cudaSuccess);
	EXPECT(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
	EXPECT(cublasSetStream(h, s2) == CUBLAS_STATUS_SUCCESS);
	EXPECT(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, T, T, T, &minus_one, da, T, db, T, &one,
			   dc, T) == CUBLAS_STATUS_SUCCESS);
	EXPECT(cudaMemcpyAsync(got, dc, TILE_BYTES, cudaMemcpyDeviceToHost, s2) == cudaSuccess);
	EXPECT(cudaStreamSynchronize(s2) == cudaSuccess);
	EXPECT(memcmp(got, want, sizeof(got)) == 0);
	EXPECT(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
	return 0;
}

/* dpotrf of an SPD tile and of one whose leading minor of order 6 is not:
 * the factor LAPACK computes, the verdict words 0 and 6, written on the
 * stream. */
static int potrf_info(void)
{
	static double a[T * T], want[T * T], got[T * T];
	cudaStream_t s = stream();
	cusolverDnHandle_t h;
	double *da, *work;
	int lwork = 0, *info, verdict[2] = { -1, -1 };

	EXPECT(cusolverDnCreate(&h) == CUSOLVER_STATUS_SUCCESS);
	EXPECT(cusolverDnSetStream(h, s) == CUSOLVER_STATUS_SUCCESS);
	fill(a, 4, T);
	memcpy(want, a, sizeof(a));
	EXPECT(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', T, want, T) == 0);
	da = device_tile(a, s);
	EXPECT(cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, T, da, T, &lwork) ==
	       CUSOLVER_STATUS_SUCCESS);
	EXPECT(lwork > 0);
	EXPECT(cudaMalloc((void **)&work, (size_t)lwork * sizeof(double)) == cudaSuccess);
	EXPECT(cudaMalloc((void **)&info, 2 * sizeof(int)) == cudaSuccess);
	EXPECT(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, T, da, T, work, lwork, info) ==
	       CUSOLVER_STATUS_SUCCESS);
	EXPECT(cudaMemcpyAsync(got, da, TILE_BYTES, cudaMemcpyDeviceToHost, s) == cudaSuccess);
	a[5 * T + 5] = -1.0;
	EXPECT(cudaMemcpyAsync(da, a, TILE_BYTES, cudaMemcpyHostToDevice, s) == cudaSuccess);
	EXPECT(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, T, da, T, work, lwork, info + 1) ==
	       CUSOLVER_STATUS_SUCCESS);
	EXPECT(cudaMemcpyAsync(verdict, info, sizeof(verdict), cudaMemcpyDeviceToHost, s) ==
	       cudaSuccess);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	EXPECT(memcmp(got, want, sizeof(got)) == 0);
	EXPECT(verdict[0] == 0 && verdict[1] == 6);
	EXPECT(cusolverDnDestroy(h) == CUSOLVER_STATUS_SUCCESS);
	return 0;
}

/* Two streams factoring their own tiles with one workspace and no order
 * between them: the workspace is written by both, a race. */
static int shared_workspace(void)
{
	static double a[T * T];
	cudaStream_t s[2] = { stream(), stream() };
	cusolverDnHandle_t h[2];
	double *work, *da[2];
	int lwork = 0, *info;

	fill(a, 5, T);
	EXPECT(cudaMalloc((void **)&info, 2 * sizeof(int)) == cudaSuccess);
	for (int i = 0; i < 2; i++) {
		EXPECT(cusolverDnCreate(&h[i]) == CUSOLVER_STATUS_SUCCESS);
		EXPECT(cusolverDnSetStream(h[i], s[i]) == CUSOLVER_STATUS_SUCCESS);
		da[i] = device_tile(a, s[i]);
	}
	EXPECT(cusolverDnDpotrf_bufferSize(h[0], CUBLAS_FILL_MODE_LOWER, T, da[0], T, &lwork) ==
	       CUSOLVER_STATUS_SUCCESS);
	EXPECT(cudaMalloc((void **)&work, (size_t)lwork * sizeof(double)) == cudaSuccess);
	for (int i = 0; i < 2; i++)
		EXPECT(cusolverDnDpotrf(h[i], CUBLAS_FILL_MODE_LOWER, T, da[i], T, work, lwork,
					info + i) == CUSOLVER_STATUS_SUCCESS);
	EXPECT(cudaDeviceSynchronize() == cudaSuccess);
	return 0;
}

/* Bad calls get the libraries' statuses (with DAO_CUDAMODEL_MISUSE_OK=1;
 * without, the process fails at exit). */
static int misuse(void)
{
	static uint64_t not_a_handle[4];
	static double host[T * T];
	const double one = 1.0;
	cudaStream_t s = stream();
	cusolverDnHandle_t sh;
	cublasHandle_t bh;
	double *da = device_tile(host, s), *work;
	int lwork = 0, *info;

	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	EXPECT(cublasCreate(&bh) == CUBLAS_STATUS_SUCCESS);
	EXPECT(cusolverDnCreate(&sh) == CUSOLVER_STATUS_SUCCESS);
	/* An operand in pageable host memory: the real kernel would fault. */
	EXPECT(cublasDgemm(bh, CUBLAS_OP_N, CUBLAS_OP_T, T, T, T, &one, da, T, da, T, &one, host,
			   T) == CUBLAS_STATUS_EXECUTION_FAILED);
	EXPECT(cublasDsyrk(bh, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, T, T, &one, da, T - 1, &one,
			   da, T) == CUBLAS_STATUS_INVALID_VALUE);
	EXPECT(cusolverDnDpotrf_bufferSize(sh, CUBLAS_FILL_MODE_LOWER, T, da, T, &lwork) ==
	       CUSOLVER_STATUS_SUCCESS);
	EXPECT(cudaMalloc((void **)&work, (size_t)lwork * sizeof(double)) == cudaSuccess);
	EXPECT(cudaMalloc((void **)&info, sizeof(int)) == cudaSuccess);
	EXPECT(cusolverDnDpotrf(sh, CUBLAS_FILL_MODE_LOWER, T, da, T, work, lwork - 1, info) ==
	       CUSOLVER_STATUS_INVALID_VALUE);
	EXPECT(cublasSetStream((cublasHandle_t)(void *)not_a_handle, s) ==
	       CUBLAS_STATUS_NOT_INITIALIZED);
	EXPECT(cublasDestroy(bh) == CUBLAS_STATUS_SUCCESS);
	EXPECT(cusolverDnDestroy(sh) == CUSOLVER_STATUS_SUCCESS);
	return 0;
}

/* A kernel on managed memory is a device access: pages not on the card
 * fault there (counted), and a read of discarded bytes is stopped. */
static int managed_operands(bool discarded)
{
	static double a[T * T];
	const double one = 1.0;
	struct cudaMemLocation dev = { cudaMemLocationTypeDevice, 0 };
	struct dao_cudamodel_counters before, after;
	cudaStream_t s = stream();
	cublasHandle_t h;
	double *m;
	size_t first = 0, bytes = 2u << 20;
	void *p;

	EXPECT(cudaMallocManaged((void **)&m, bytes, cudaMemAttachGlobal) == cudaSuccess);
	p = m;
	fill(a, 6, 0);
	memcpy(m, a, TILE_BYTES);
	EXPECT(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
	EXPECT(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS);
	if (discarded)
		EXPECT(cudaMemDiscardAndPrefetchBatchAsync(&p, &bytes, 1, &dev, &first, 1, 0, s) ==
		       cudaSuccess);
	dao_cudamodel_counters(&before);
	/* m's second tile += m's first tile times itself, transposed. */
	EXPECT(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, T, T, T, &one, m, T, m, T, &one,
			   m + T * T, T) == CUBLAS_STATUS_SUCCESS);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	dao_cudamodel_counters(&after);
	EXPECT(after.device_faults > before.device_faults);
	EXPECT(after.fault_migrations > before.fault_migrations);
	EXPECT(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
	return 0;
}

static int run_scenario(const char *name)
{
	if (!strcmp(name, "blas-missing-wait"))
		return blas_two_streams(false);
	if (!strcmp(name, "blas-event-wait"))
		return blas_two_streams(true);
	if (!strcmp(name, "potrf-info"))
		return potrf_info();
	if (!strcmp(name, "shared-workspace"))
		return shared_workspace();
	if (!strcmp(name, "misuse"))
		return misuse();
	if (!strcmp(name, "managed-faults"))
		return managed_operands(false);
	if (!strcmp(name, "managed-discarded"))
		return managed_operands(true);
	fprintf(stderr, "unknown scenario %s\n", name);
	return 2;
}

int main(int argc, char **argv)
{
	char self[4096];

	if (!scenario_parent(argc, self, sizeof(self)))
		return run_scenario(argv[1]);
	expect(self, "blas-missing-wait", NULL, MODEL_EXIT, "cublasDgemm (read) is not ordered",
	       "cublasDgemm reading tiles another stream copies in, no event wait: a race");
	expect(self, "blas-event-wait", NULL, 0, NULL,
	       "the same with cudaStreamWaitEvent: ordered, C - A B^T as OpenBLAS computes it");
	expect(self, "potrf-info", NULL, 0, NULL,
	       "cusolverDnDpotrf: LAPACK's factor; verdict words 0 and 6 written on the stream");
	expect(self, "shared-workspace", NULL, MODEL_EXIT,
	       "cusolverDnDpotrf (write) is not ordered after cusolverDnDpotrf (write)",
	       "one dpotrf workspace on two unordered streams: a race");
	expect(self, "misuse", "DAO_CUDAMODEL_MISUSE_OK=1", 0, NULL,
	       "a host operand, a bad lda, a short workspace, a handle never made: the "
	       "libraries' statuses");
	expect(self, "misuse", NULL, MODEL_EXIT, "refused call(s): failing the process",
	       "a process that made a refused library call fails");
	expect(self, "managed-faults", NULL, 0, NULL,
	       "a kernel on managed pages not on the card: device faults and migrations counted");
	expect(self, "managed-discarded", NULL, MODEL_EXIT, "device read of discarded data",
	       "a kernel reading discarded managed bytes is stopped");
	tap_plan_done();
	return tap_exit();
}
