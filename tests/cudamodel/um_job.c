/* SPDX-License-Identifier: MIT */
/*
 * um_job.c - a small cuda-managed job that makes libdao issue every kind
 * of residency request (fetches and prefetches of inputs, evictions,
 * discards of outputs and of dead data, frees, the host's writes and
 * reads), for the tests of the request log (DAO_CUDA_REQUEST_LOG), of the
 * diagnostic switches (DAO_CUDA_MANAGED) and of the analysis that matches
 * the log against the driver's records (tools/gpubench/um-analyze.pl), run
 * against the CUDA runtime model (um_experiments.t).
 *
 * Eight buffers of 1 MiB under a 3 MiB budget, two rounds: each round
 * overwrites every output from its input (the output's old contents are
 * dead), marks it, and the job reads the outputs back and checks them.
 * A temporary buffer per round is released after its one use.
 *
 * --touch-behind: after the last kernel, and while its output is still on
 * the device, the job reads a byte of it through the kernel's own pointer,
 * from the host, behind libdao's back: what the analysis must report as a
 * fault and a migration libdao did not ask for. (The results stay right:
 * the driver, here the model, migrates the page back.)
 *
 * Exit status: 0 right results, 1 wrong ones or a libdao failure, 2 usage.
 */
#include <cuda_runtime.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dao.h"

#define PAIRS 4
#define BUF (1u << 20)
#define MARK 4096u

#define CHECK(call)                                                                  \
	do {                                                                         \
		dao_status st_ = (call);                                             \
		if (st_ != DAO_OK) {                                                 \
			fprintf(stderr, "um_job: %s: %s\n", #call, dao_strerror(st_)); \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

/* out (W) = in (R): the first operand is written whole. */
static int copy_kernel(const dao_kernel_args *a)
{
	return cudaMemcpyAsync(a->ptrs[0], a->ptrs[1], a->sizes[0], cudaMemcpyDefault,
			       (cudaStream_t)a->stream) != cudaSuccess;
}

/* Its first MARK bytes set to the byte in user; the pointer kept in
 * `last_ptr` for --touch-behind. */
static void *volatile last_ptr;

static int mark_kernel(const dao_kernel_args *a)
{
	last_ptr = a->ptrs[0];
	return cudaMemsetAsync(a->ptrs[0], (int)(uintptr_t)a->user, MARK,
			       (cudaStream_t)a->stream) != cudaSuccess;
}

static unsigned char mark_of(int round, int i)
{
	return (unsigned char)(0x40 + 8 * round + i);
}

int main(int argc, char **argv)
{
	static unsigned char host[BUF];
	dao_buf in[PAIRS], out[PAIRS];
	bool touch = argc == 2 && !strcmp(argv[1], "--touch-behind");
	dao_config cfg;
	dao_ctx ctx;
	int bad = 0;

	if (argc > 2 || (argc == 2 && !touch)) {
		fprintf(stderr, "usage: um_job [--touch-behind]\n");
		return 2;
	}
	dao_config_init(&cfg);
	cfg.backend = DAO_BACKEND_CUDA_MANAGED;
	cfg.device_budget = 3 * BUF;
	cfg.policy = DAO_POLICY_LRU;
	cfg.flags = DAO_CONFIG_PRIVATE;
	CHECK(dao_open(&cfg, &ctx));
	for (int i = 0; i < PAIRS; i++) {
		CHECK(dao_buffer_create(ctx, BUF, &in[i]));
		CHECK(dao_buffer_create(ctx, BUF, &out[i]));
		memset(host, i + 1, BUF);
		CHECK(dao_write(ctx, in[i], 0, host, BUF));
	}
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < PAIRS; i++) {
			dao_operand cp[2] = { { out[i], DAO_W }, { in[i], DAO_R } };
			dao_operand mk = { out[i], DAO_RW };
			dao_operand tmp_ops[2];
			dao_buf tmp;

			CHECK(dao_launch(ctx, copy_kernel, NULL, cp, 2));
			CHECK(dao_launch(ctx, mark_kernel, (void *)(uintptr_t)mark_of(round, i), &mk,
					 1));
			/* A buffer used once and released: its pages are freed. */
			CHECK(dao_buffer_create(ctx, BUF, &tmp));
			tmp_ops[0] = (dao_operand){ tmp, DAO_W };
			tmp_ops[1] = (dao_operand){ in[i], DAO_R };
			CHECK(dao_launch(ctx, copy_kernel, NULL, tmp_ops, 2));
			CHECK(dao_release(ctx, tmp));
		}
	}
	CHECK(dao_sync(ctx));
	/* dao_sync waited on the executor's thread; this thread orders itself
	 * after the device's work too, so that the touch is no race, only
	 * behind libdao's back. */
	if (touch && last_ptr && cudaDeviceSynchronize() == cudaSuccess)
		bad |= ((volatile unsigned char *)last_ptr)[0] != mark_of(1, PAIRS - 1);
	for (int i = 0; i < PAIRS; i++) {
		CHECK(dao_read(ctx, out[i], 0, host, BUF));
		for (uint32_t b = 0; b < BUF; b++)
			bad |= host[b] != (b < MARK ? mark_of(1, i) : (unsigned char)(i + 1));
	}
	for (int i = 0; i < PAIRS; i++) {
		CHECK(dao_release(ctx, in[i]));
		CHECK(dao_release(ctx, out[i]));
	}
	CHECK(dao_close(ctx, NULL));
	if (bad)
		fprintf(stderr, "um_job: wrong results\n");
	return bad;
}
