/* SPDX-License-Identifier: MIT */
/*
 * dao-gpurate - the rate of each of dao-cholesky's GPU tile kernels
 * (tools/cholesky/tile_kernels_gpu.c: cuSOLVER's dpotrf, cuBLAS's dtrsm,
 * dsyrk and dgemm, the very functions dao-cholesky runs) on tiles of one
 * order, in the flops dao-cholesky declares to libdao (and so in its
 * traces): daosim's compute rate for a device file of this card.
 *
 * Each kernel runs once untimed (module loading, handles, workspace), then
 * REPEATS times, each call alone between two events on one stream, its
 * read-write operand restored from a pristine copy before it, untimed, so
 * every call sees the same data (dpotrf an SPD tile, dtrsm the same right
 * side). One JSON object: per kernel the mean seconds per call and the
 * flop rate.
 *
 * Usage: dao-gpurate [TILE [REPEATS]]  (default 2048, 10).
 * Exit status: 0 measured; 1 a CUDA call failed or dpotrf found the tile
 * not positive definite; 2 bad argument; 77 no usable CUDA device.
 *
 * Safety on lent cards: six tiles of device memory, refused beyond a
 * quarter of what is free; nothing about the card is changed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gpubench.h"
#include "matrix.h"
#include "tile_kernels.h"
#include "tile_kernels_gpu.h"

#define CHECK(call) GPUBENCH_CHECK("dao-gpurate", call)

/* Device tiles: the SPD tile and its factor (pristine), two inputs, the
 * operand each call updates, and the pristine copy of that operand. */
enum { SPD, FACTOR, IN1, IN2, OUT, OUT0, NTILES };

struct bench {
	cudaStream_t s;
	size_t bytes;
	double *t[NTILES];
	struct chol_tile_geom geom;
	struct chol_potrf_arg potrf;
	int repeats;
};

struct kernel {
	const char *name;
	dao_kernel_fn fn;
	uint64_t (*flops)(uint64_t tile);
	int restore_from; /* the tile OUT is restored from before each call */
	int ops[3];       /* operand tiles, the updated one last */
	uint32_t count;
};

/* Mean seconds of one call of k, each call alone between two events. */
static double time_kernel(struct bench *b, const struct kernel *k)
{
	cudaEvent_t start, stop;
	double total = 0;

	CHECK(cudaEventCreate(&start));
	CHECK(cudaEventCreate(&stop));
	for (int r = -1; r < b->repeats; r++) {
		void *ptrs[3];
		uint64_t sizes[3] = { b->bytes, b->bytes, b->bytes };
		dao_kernel_args args = { .user = k->fn == chol_kernel_potrf ? (void *)&b->potrf
									  : (void *)&b->geom,
					 .ptrs = ptrs, .sizes = sizes, .count = k->count,
					 .stream = b->s };
		float ms = 0;

		for (uint32_t i = 0; i < k->count; i++)
			ptrs[i] = b->t[k->ops[i]];
		CHECK(cudaMemcpyAsync(b->t[OUT], b->t[k->restore_from], b->bytes,
				      cudaMemcpyDeviceToDevice, b->s));
		CHECK(cudaEventRecord(start, b->s));
		if (k->fn(&args)) {
			fprintf(stderr, "dao-gpurate: %s failed\n", k->name);
			exit(1);
		}
		CHECK(cudaEventRecord(stop, b->s));
		CHECK(cudaEventSynchronize(stop));
		CHECK(cudaEventElapsedTime(&ms, start, stop));
		if (r >= 0) /* the first call is the warm-up */
			total += ms * 1e-3;
	}
	CHECK(cudaEventDestroy(start));
	CHECK(cudaEventDestroy(stop));
	return total / b->repeats;
}

int main(int argc, char **argv)
{
	long tile = argc > 1 ? strtol(argv[1], NULL, 10) : 2048;
	struct bench b = { .repeats = argc > 2 ? atoi(argv[2]) : 10 };
	struct chol_problem p = { 0 };
	struct cudaDeviceProp prop;
	size_t free_b, total;
	int dev = 0;
	/* dtrsm solves with the factor, dgemm and dsyrk read the inputs;
	 * dpotrf factors a copy of the SPD tile. */
	const struct kernel kernels[] = {
		{ "dpotrf", chol_kernel_potrf, chol_flops_potrf, SPD, { OUT }, 1 },
		{ "dtrsm", chol_kernel_trsm, chol_flops_trsm, OUT0, { FACTOR, OUT }, 2 },
		{ "dsyrk", chol_kernel_syrk, chol_flops_syrk, OUT0, { IN1, OUT }, 2 },
		{ "dgemm", chol_kernel_gemm, chol_flops_gemm, OUT0, { IN1, IN2, OUT }, 3 },
	};
	double seconds[4];

	if (argc > 3 || tile < 1 || tile > 16384 || b.repeats < 1) {
		fprintf(stderr, "usage: dao-gpurate [TILE [REPEATS]]\n");
		return 2;
	}
	if (gpubench_device("dao-gpurate"))
		return GPUBENCH_NODEV;
	CHECK(cudaGetDevice(&dev));
	CHECK(cudaGetDeviceProperties(&prop, dev));
	CHECK(cudaMemGetInfo(&free_b, &total));
	b.bytes = (size_t)tile * (size_t)tile * sizeof(double);
	if (NTILES * b.bytes > free_b / 4) {
		fprintf(stderr, "dao-gpurate: %d tiles of %zu bytes are more than a quarter of the "
				"%zu free\n",
			NTILES, b.bytes, free_b);
		return 2;
	}
	/* dao-cholesky's own matrix of one tile: diagonally dominant, SPD;
	 * its entries in [-1, 1) serve as the inputs too. */
	if (chol_problem_init(&p, (uint64_t)tile, (uint64_t)tile, 1)) {
		fprintf(stderr, "dao-gpurate: out of memory\n");
		return 1;
	}
	CHECK(cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking));
	for (int i = 0; i < NTILES; i++) {
		CHECK(cudaMalloc((void **)&b.t[i], b.bytes));
		CHECK(cudaMemcpyAsync(b.t[i], p.a, b.bytes, cudaMemcpyHostToDevice, b.s));
	}
	b.geom.tile = (int)tile;
	if (chol_gpu_create(1, &b.geom.gpu))
		return 1;
	b.potrf = (struct chol_potrf_arg){ b.geom, 0 };
	/* The factor for dtrsm: dpotrf of the SPD tile, then kept. */
	time_kernel(&b, &kernels[0]);
	CHECK(cudaMemcpyAsync(b.t[FACTOR], b.t[OUT], b.bytes, cudaMemcpyDeviceToDevice, b.s));
	for (int k = 0; k < 4; k++)
		seconds[k] = time_kernel(&b, &kernels[k]);
	CHECK(cudaStreamSynchronize(b.s));
	if (chol_gpu_failed(b.geom.gpu)) {
		fprintf(stderr, "dao-gpurate: dpotrf found the tile not positive definite\n");
		return 1;
	}
	printf("{\"gpu\":\"%s\",\"tile\":%ld,\"repeats\":%d", prop.name, tile, b.repeats);
	for (int k = 0; k < 4; k++)
		printf(",\"%s_seconds\":%.6g,\"%s_flops_per_s\":%.6g", kernels[k].name, seconds[k],
		       kernels[k].name,
		       seconds[k] > 0 ? (double)kernels[k].flops((uint64_t)tile) / seconds[k] : 0.0);
	printf("}\n");
	chol_gpu_destroy(b.geom.gpu);
	for (int i = 0; i < NTILES; i++)
		CHECK(cudaFree(b.t[i]));
	CHECK(cudaStreamDestroy(b.s));
	chol_problem_free(&p);
	return 0;
}
