/* SPDX-License-Identifier: MIT */
/*
 * gpu_common.h - what the GPU tests share: skipping without a device,
 * executing program kernels with CUDA calls on the launch's stream, and
 * reading the device's memory use.
 *
 * Safety on lent GPUs (these tests run on cards shared with others): never
 * allocate more managed memory than the card has free, emulate
 * oversubscription with a budget far below the card's memory, never change
 * the card's settings. Each test asks for a few GiB at most and skips when
 * the card has less than GPU_MIN_FREE free.
 */
#ifndef DAO_TEST_GPU_COMMON_H
#define DAO_TEST_GPU_COMMON_H

#include <cuda_runtime.h>
#include <dlfcn.h>

#include "cudamodel/cudamodel.h"

#include "program.h"

#define GPU_MIN_FREE (8ull << 30)

static const dao_backend_kind gpu_backends[] = { DAO_BACKEND_CUDA_EXPLICIT,
						 DAO_BACKEND_CUDA_MANAGED };

/* The backends' allocation units: a kernel's budget need is counted in them. */
static inline uint64_t gpu_granule(dao_backend_kind kind)
{
	return kind == DAO_BACKEND_CUDA_MANAGED ? 64u << 10 : 256u;
}

/* Print a TAP skip and exit unless a CUDA device is usable with enough free. */
static inline void gpu_require_device(void)
{
	size_t free_b = 0, total = 0;
	cudaError_t err;
	int n = 0;

	err = cudaGetDeviceCount(&n);
	if (err != cudaSuccess || n == 0) {
		printf("1..0 # SKIP no usable CUDA device (%s)\n",
		       err != cudaSuccess ? cudaGetErrorString(err) : "none visible");
		exit(0);
	}
	err = cudaMemGetInfo(&free_b, &total);
	if (err != cudaSuccess) {
		printf("1..0 # SKIP CUDA device 0 is not usable (%s)\n", cudaGetErrorString(err));
		exit(0);
	}
	/* The CUDA runtime model's card is small: its runs say how much
	 * they need (DAO_TEST_GPU_MIN_FREE). */
	if (free_b < test_env_u64("DAO_TEST_GPU_MIN_FREE", GPU_MIN_FREE)) {
		printf("1..0 # SKIP only %zu bytes free on the device, %llu wanted\n", free_b,
		       (unsigned long long)test_env_u64("DAO_TEST_GPU_MIN_FREE", GPU_MIN_FREE));
		exit(0);
	}
	tap_diag("device: %zu of %zu bytes free", free_b, total);
}

/* The CUDA runtime model's counters (tests/cudamodel/) when the test runs
 * against it; false on a real runtime. */
static inline bool gpu_model_counters(struct dao_cudamodel_counters *c)
{
	dao_cudamodel_counters_fn fn;

	*(void **)&fn = dlsym(RTLD_DEFAULT, "dao_cudamodel_counters");
	if (!fn)
		return false;
	fn(c);
	return true;
}

static inline void gpu_model_reset_peaks(void)
{
	dao_cudamodel_reset_peaks_fn fn;

	*(void **)&fn = dlsym(RTLD_DEFAULT, "dao_cudamodel_reset_peaks");
	if (fn)
		fn();
}

/* Residency changes libdao did not ask for between two snapshots: faults
 * either way, pages the faults moved, reads over the bus. */
static inline uint64_t gpu_unplanned(const struct dao_cudamodel_counters *a,
				     const struct dao_cudamodel_counters *b)
{
	return (b->device_faults - a->device_faults) + (b->host_faults - a->host_faults) +
	       (b->fault_migrations - a->fault_migrations) +
	       (b->remote_accesses - a->remote_accesses) + (b->evictions - a->evictions);
}

static inline uint64_t gpu_used_bytes(void)
{
	size_t free_b = 0, total = 0;

	if (cudaMemGetInfo(&free_b, &total) != cudaSuccess)
		tap_bail("cudaMemGetInfo failed");
	return total - free_b;
}

static inline int gpu_fill(void *dst, int byte, uint64_t len, void *stream)
{
	return cudaMemsetAsync(dst, byte, len, (cudaStream_t)stream) != cudaSuccess;
}

static inline int gpu_copy(void *dst, const void *src, uint64_t len, void *stream)
{
	/* Default: the same call serves device and managed pointers. */
	return cudaMemcpyAsync(dst, src, len, cudaMemcpyDefault, (cudaStream_t)stream) !=
	       cudaSuccess;
}

static const struct prog_exec gpu_exec = { gpu_fill, gpu_copy, NULL };

static inline dao_config gpu_config(dao_backend_kind kind, uint64_t budget, dao_policy policy,
				    uint32_t flags)
{
	dao_config cfg;

	dao_config_init(&cfg);
	cfg.backend = kind;
	cfg.device_budget = budget;
	cfg.policy = policy;
	cfg.flags = flags;
	cfg.log_level = test_log_level();
	return cfg;
}

#endif /* DAO_TEST_GPU_COMMON_H */
