/* SPDX-License-Identifier: MIT */
/*
 * test_budget_unit.c - the host backend's device budget against its
 * allocation unit of 256 bytes (budget_unit.h; the CUDA backends' in
 * tests/gpu/test_gpu_units.c).
 */
#include "budget_unit.h"

int main(void)
{
	test_clear_env();
	budget_unit_checks(DAO_BACKEND_HOST, 256);
	budget_unit_big(DAO_BACKEND_HOST, 256);
	tap_plan_done();
	return tap_exit();
}
