/* SPDX-License-Identifier: MIT */
/*
 * test_gpu_units.c - the CUDA backends' device budget against their
 * allocation units (dao.h): 256 bytes on cuda-explicit, 64 KiB on
 * cuda-managed, where a budget of 58,112 bytes was once accepted and then
 * held no buffer (budget_unit.h; the host backend's in
 * tests/unit/test_budget_unit.c). Against the model, the card's managed
 * pages stay within the budget of exactly a 2 MiB + 1 byte buffer's cost.
 */
#include "gpu_common.h"
#include "../unit/budget_unit.h"

int main(void)
{
	static const uint64_t units[] = { 256, 64u << 10 };
	struct dao_cudamodel_counters c;

	test_clear_env();
	gpu_require_device();
	for (size_t b = 0; b < TEST_ARRAY_SIZE(gpu_backends); b++) {
		dao_backend_kind kind = gpu_backends[b];
		uint64_t unit = units[kind == DAO_BACKEND_CUDA_MANAGED];

		budget_unit_checks(kind, unit);
		gpu_model_reset_peaks();
		budget_unit_big(kind, unit);
		if (kind == DAO_BACKEND_CUDA_MANAGED && gpu_model_counters(&c) &&
		    !tap_ok(c.managed_device_peak <= (2u << 20) + unit,
			    "the model's card held no more of its pages than that"))
			tap_diag("  peak %llu", (unsigned long long)c.managed_device_peak);
	}
	tap_plan_done();
	return tap_exit();
}
