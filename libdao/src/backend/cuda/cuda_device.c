/* SPDX-License-Identifier: MIT */
/*
 * cuda_device.c - finding a usable CUDA device and opening a backend on it.
 * On a machine without a driver every CUDA runtime call fails cleanly; that
 * is turned into DAO_ERR_BACKEND with the runtime's reason, never a crash.
 */
#include <pthread.h>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_engines.h"
#include "backend/cuda/switches.h"
#include "base/log.h"

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static cudaError_t probe_err;
static int probe_count;

static void probe(void)
{
	probe_err = cudaGetDeviceCount(&probe_count);
	/* The failed call leaves its error as the thread's last one. */
	if (probe_err != cudaSuccess)
		(void)cudaGetLastError();
}

bool dao_cuda_usable(void)
{
	pthread_once(&probe_once, probe);
	return probe_err == cudaSuccess && probe_count > 0;
}

dao_status dao_backend_cuda_create(dao_backend_kind kind, const char *name, uint64_t budget,
				   uint32_t percent, struct dao_backend **out)
{
	char switch_names[CU_SWITCHES_LEN];
	uint64_t free_bytes, total;
	struct cu_log *log;
	unsigned switches;
	int device = 0;
	dao_status st;

	if (kind != DAO_BACKEND_CUDA_MANAGED && kind != DAO_BACKEND_CUDA_EXPLICIT)
		return DAO_ERR_INVALID;
	/* Read whichever backend opens, so that a mistyped switch is said
	 * at once; they change cuda-managed only. */
	st = cu_switches_read(&switches, switch_names);
	if (st != DAO_OK)
		return st;
	if (!dao_cuda_usable()) {
		/* Without any driver the runtime says "insufficient driver". */
		dao_err("backend %s: no usable CUDA device: %s%s", name,
			probe_err != cudaSuccess ? cudaGetErrorString(probe_err)
						 : "the driver reports no device",
			probe_err == cudaErrorInsufficientDriver
				? " (no NVIDIA driver, or one older than this CUDA runtime)"
				: "");
		return DAO_ERR_BACKEND;
	}
	if (!cu_ok(cudaGetDevice(&device), "cudaGetDevice") || !cu_mem_info(&free_bytes, &total)) {
		dao_err("backend %s: CUDA device %d is not usable", name, device);
		return DAO_ERR_BACKEND;
	}
	budget = dao_budget_bytes(budget, percent, total);
	st = dao_budget_check(name, budget, kind == DAO_BACKEND_CUDA_MANAGED ? CU_MANAGED_UNIT
									       : CU_EXPLICIT_UNIT);
	if (st != DAO_OK)
		return st;
	/* Budget beyond what is free would leave the overflow to the driver
	 * (managed) or fail the pool (explicit): say so now. */
	if (budget > free_bytes) {
		dao_err("backend %s: a device budget of %llu bytes exceeds the %llu bytes free on "
			"CUDA device %d (of %llu)",
			name, (unsigned long long)budget, (unsigned long long)free_bytes, device,
			(unsigned long long)total);
		return DAO_ERR_CONFIG;
	}
	if (kind == DAO_BACKEND_CUDA_MANAGED && switches)
		dao_warn("backend cuda-managed: diagnostic switches in force: "
			 "DAO_CUDA_MANAGED=%s",
			 switch_names);
	st = cu_log_open(name, kind == DAO_BACKEND_CUDA_MANAGED ? switch_names : "", &log);
	if (st != DAO_OK)
		return st;
	if (kind == DAO_BACKEND_CUDA_EXPLICIT)
		st = cu_explicit_create(device, total, budget, log, out);
	else
		st = cu_managed_create(device, total, budget, free_bytes, switches, log, out);
	if (st != DAO_OK)
		cu_log_close(log);
	return st;
}
