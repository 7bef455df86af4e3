/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "options.h"
#include "uvm.h"

#ifdef DAO_HAVE_CUDA
#include <cuda_runtime.h>

#include "tile_kernels.h"
#include "tile_kernels_gpu.h"

/* Index of lower tile (i, j), j <= i, in row-major order of the triangle
 * (as factor.c numbers its buffers). */
static uint64_t tix(uint64_t i, uint64_t j)
{
	return i * (i + 1) / 2 + j;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cuda_failed(cudaError_t err, const char *what)
{
	if (err == cudaSuccess)
		return 0;
	fprintf(stderr, "dao-cholesky: %s: %s\n", what, cudaGetErrorString(err));
	return 1;
}

/* MemAvailable of /proc/meminfo in bytes; 0 when it cannot be read. */
static uint64_t host_available(void)
{
	unsigned long long kib = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib * 1024;
}

struct uvm_job {
	const struct chol_problem *p;
	struct chol_tile_geom geom;
	struct chol_potrf_arg *potrf; /* one per tile column */
	cudaStream_t stream;
	double **tiles; /* managed, one allocation per tile */
	uint64_t kernels;
};

/* One tile kernel of tile_kernels_gpu.c on the job's stream, its operands
 * the managed tiles themselves. */
static int run_kernel(struct uvm_job *jb, dao_kernel_fn fn, void *user, double *t0, double *t1,
		      double *t2, uint32_t count)
{
	void *ptrs[3] = { t0, t1, t2 };
	uint64_t b = chol_tile_bytes(jb->p);
	uint64_t sizes[3] = { b, b, b };
	dao_kernel_args args = { .user = user, .ptrs = ptrs, .sizes = sizes, .count = count,
				 .stream = jb->stream };

	jb->kernels++;
	return fn(&args) ? CHOL_EXIT_FAILED : CHOL_EXIT_OK;
}

/* The right-looking algorithm, kernel for kernel as factor.c submits it. */
static int submit(struct uvm_job *jb)
{
	const struct chol_problem *p = jb->p;
	double **a = jb->tiles;

	for (uint64_t k = 0; k < p->nt; k++) {
		jb->potrf[k] = (struct chol_potrf_arg){ jb->geom, k };
		if (run_kernel(jb, chol_gpu_potrf, &jb->potrf[k], a[tix(k, k)], NULL, NULL, 1))
			return CHOL_EXIT_FAILED;
		for (uint64_t i = k + 1; i < p->nt; i++)
			if (run_kernel(jb, chol_gpu_trsm, &jb->geom, a[tix(k, k)], a[tix(i, k)],
				       NULL, 2))
				return CHOL_EXIT_FAILED;
		for (uint64_t i = k + 1; i < p->nt; i++) {
			if (run_kernel(jb, chol_gpu_syrk, &jb->geom, a[tix(i, k)], a[tix(i, i)],
				       NULL, 2))
				return CHOL_EXIT_FAILED;
			for (uint64_t j = k + 1; j < i; j++)
				if (run_kernel(jb, chol_gpu_gemm, &jb->geom, a[tix(i, k)],
					       a[tix(j, k)], a[tix(i, j)], 3))
					return CHOL_EXIT_FAILED;
		}
	}
	return CHOL_EXIT_OK;
}

/* The tiles, written by the host: they start on the host, as libdao's do. */
static int load(struct uvm_job *jb)
{
	const struct chol_problem *p = jb->p;

	for (uint64_t i = 0; i < p->nt; i++)
		for (uint64_t j = 0; j <= i; j++) {
			double **t = &jb->tiles[tix(i, j)];

			if (cuda_failed(cudaMallocManaged((void **)t, chol_tile_bytes(p),
							  cudaMemAttachGlobal),
					"cudaMallocManaged"))
				return CHOL_EXIT_FAILED;
			chol_tile_get(p, p->a, i, j, *t);
		}
	return CHOL_EXIT_OK;
}

static void read_back(struct uvm_job *jb, double *l)
{
	const struct chol_problem *p = jb->p;

	for (uint64_t i = 0; i < p->nt; i++)
		for (uint64_t j = 0; j <= i; j++) {
			double *t = jb->tiles[tix(i, j)];

			if (i == j) {
				/* dpotrf leaves A's upper triangle in place;
				 * L has zeros there. */
				for (uint64_t c = 1; c < p->tile; c++)
					memset(t + c * p->tile, 0, c * sizeof(double));
			}
			chol_tile_put(p, l, i, j, t);
		}
}

/*
 * The machine as the run finds it: a usable device, the matrix (which
 * main.c has checked against the budget) within 15/16 of the device's
 * free memory (as libdao's cuda-managed caps itself: on a shared card a
 * program that asks for more managed memory than is free can hang the
 * GPU) and within the host's available memory. *in_force: the device
 * memory the run may use, the budget or (0) what is free.
 */
static int check_machine(uint64_t matrix_bytes, uint64_t budget, uint64_t *in_force)
{
	size_t free_b = 0, total = 0;
	uint64_t avail;
	int n = 0;
	cudaError_t err = cudaGetDeviceCount(&n);

	if (err != cudaSuccess || n == 0) {
		fprintf(stderr, "dao-cholesky: --backend uvm: no usable CUDA device (%s)\n",
			err != cudaSuccess ? cudaGetErrorString(err) : "none visible");
		return CHOL_EXIT_NODEV;
	}
	if (cuda_failed(cudaMemGetInfo(&free_b, &total), "cudaMemGetInfo"))
		return CHOL_EXIT_FAILED;
	if (matrix_bytes > free_b / 16 * 15) {
		fprintf(stderr,
			"dao-cholesky: --backend uvm: the %llu-byte matrix in managed memory is "
			"more than 15/16 of the %llu bytes free on the device\n",
			(unsigned long long)matrix_bytes, (unsigned long long)free_b);
		return CHOL_EXIT_USAGE;
	}
	/* What the driver evicts must have somewhere to go. */
	avail = host_available();
	if (matrix_bytes > avail) {
		fprintf(stderr,
			"dao-cholesky: --backend uvm: the %llu-byte matrix in managed memory "
			"is more than the %llu bytes the host has available\n",
			(unsigned long long)matrix_bytes, (unsigned long long)avail);
		return CHOL_EXIT_USAGE;
	}
	*in_force = budget ? budget : free_b;
	return CHOL_EXIT_OK;
}

int chol_uvm_factor(const struct chol_problem *p, uint64_t budget, struct chol_run_result *out)
{
	uint64_t count = chol_tile_count(p);
	struct uvm_job jb = { .p = p, .geom = { .tile = (int)p->tile } };
	double t0;
	int ret, bad;

	memset(out, 0, sizeof(*out));
	out->transfers_unknown = true;
	out->info.backend_name = CHOL_UVM_NAME;
	out->info.policy_name = "driver";
	ret = check_machine(count * chol_tile_bytes(p), budget, &out->info.device_budget);
	if (ret)
		return ret;
	jb.tiles = calloc(count, sizeof(*jb.tiles));
	jb.potrf = calloc(p->nt, sizeof(*jb.potrf));
	out->l = chol_matrix_alloc(p);
	if (!jb.tiles || !jb.potrf || !out->l) {
		fprintf(stderr, "dao-cholesky: out of memory for a %llu x %llu matrix\n",
			(unsigned long long)p->npad, (unsigned long long)p->npad);
		ret = CHOL_EXIT_FAILED;
		goto out;
	}
	if (cuda_failed(cudaStreamCreateWithFlags(&jb.stream, cudaStreamNonBlocking),
			"cudaStreamCreateWithFlags") ||
	    chol_gpu_create(p->nt, &jb.geom.gpu)) {
		ret = CHOL_EXIT_FAILED;
		goto out;
	}
	ret = load(&jb);
	if (ret)
		goto out;
	/* The handles and dpotrf's workspace outside the clock. */
	if (chol_gpu_prepare(jb.geom.gpu, jb.stream, (int)p->tile, jb.tiles[0])) {
		ret = CHOL_EXIT_FAILED;
		goto out;
	}

	t0 = now_seconds();
	ret = submit(&jb);
	if (ret)
		goto out;
	if (cuda_failed(cudaStreamSynchronize(jb.stream), "cudaStreamSynchronize")) {
		ret = CHOL_EXIT_FAILED;
		goto out;
	}
	out->seconds = now_seconds() - t0;
	out->kernels = jb.kernels;
	bad = chol_gpu_failed(jb.geom.gpu);
	if (bad) {
		if (bad > 0)
			fprintf(stderr, "dao-cholesky: a tile kernel failed: the matrix is not "
					"positive definite\n");
		ret = CHOL_EXIT_FAILED;
		goto out;
	}
	read_back(&jb, out->l);

out:
	for (uint64_t i = 0; jb.tiles && i < count; i++)
		if (jb.tiles[i] && cuda_failed(cudaFree(jb.tiles[i]), "cudaFree") && !ret)
			ret = CHOL_EXIT_FAILED;
	chol_gpu_destroy(jb.geom.gpu);
	if (jb.stream && cuda_failed(cudaStreamDestroy(jb.stream), "cudaStreamDestroy") && !ret)
		ret = CHOL_EXIT_FAILED;
	if (ret) {
		free(out->l);
		out->l = NULL;
	}
	free(jb.potrf);
	free(jb.tiles);
	return ret;
}
#else
int chol_uvm_factor(const struct chol_problem *p, uint64_t budget, struct chol_run_result *out)
{
	memset(out, 0, sizeof(*out));
	fprintf(stderr, "dao-cholesky: --backend uvm: this dao-cholesky was built without CUDA\n");
	return CHOL_EXIT_NODEV;
}
#endif
