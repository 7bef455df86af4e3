/* SPDX-License-Identifier: MIT */
/*
 * gpubench.h - what the GPU measuring programs (dao-gpubw, dao-gpuinfo,
 * dao-gpurate) share: every CUDA call checked, and the same answer when
 * there is no device (status 77, as automake's SKIP, which the scripts
 * read as "no CUDA device").
 */
#ifndef DAO_GPUBENCH_H
#define DAO_GPUBENCH_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define GPUBENCH_NODEV 77

/* A CUDA call that must succeed: else its name and CUDA's reason, exit 1. */
#define GPUBENCH_CHECK(prog, call)                                                    \
	do {                                                                          \
		cudaError_t e_ = (call);                                              \
		if (e_ != cudaSuccess) {                                              \
			fprintf(stderr, "%s: %s: %s\n", prog, #call, cudaGetErrorString(e_)); \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

/* 0 when a CUDA device is usable, else GPUBENCH_NODEV with the reason. */
static inline int gpubench_device(const char *prog)
{
	int n = 0;
	cudaError_t err = cudaGetDeviceCount(&n);

	if (err == cudaSuccess && n)
		return 0;
	fprintf(stderr, "%s: SKIP: no usable CUDA device (%s)\n", prog,
		err != cudaSuccess ? cudaGetErrorString(err) : "none visible");
	return GPUBENCH_NODEV;
}

#endif /* DAO_GPUBENCH_H */
