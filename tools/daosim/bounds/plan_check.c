/* SPDX-License-Identifier: MIT */
/*
 * plan_check.c - a replayed schedule checked against the trace, the budget
 * and the device model (plan_check.h).
 */
#include <stdio.h>

#include "plan_check.h"

static dao_status fail(char *err, size_t errlen, const char *what, size_t i)
{
	snprintf(err, errlen, "the schedule is not feasible: %s (span %zu)", what, i);
	return DAO_ERR_BACKEND;
}

dao_status plan_check(const struct bound_input *in, const struct replay_result *r, char *err,
		      size_t errlen)
{
	const struct trace_profile *p = in->profile;
	uint64_t engine_free[3] = { 0, 0, 0 };
	uint64_t copied[3] = { 0, 0, 0 };
	uint64_t end = 0;
	size_t k = 0;

	if (!r->spans && p->nkernels)
		return fail(err, errlen, "no timeline was recorded", 0);
	for (size_t i = 0; i < r->nspans; i++) {
		const struct dao_sim_span *s = &r->spans[i];

		if (s->engine > DAO_SIM_ENGINE_D2H)
			return fail(err, errlen, "an operation on no engine", i);
		if (s->start_ns < engine_free[s->engine] || s->end_ns < s->start_ns)
			return fail(err, errlen, "two operations at once on one engine", i);
		engine_free[s->engine] = s->end_ns;
		if (s->end_ns > end)
			end = s->end_ns;
		if (s->engine != DAO_SIM_ENGINE_COMPUTE) {
			copied[s->engine] += s->bytes;
			continue;
		}
		if (k == p->nkernels)
			return fail(err, errlen, "more kernels than the trace has", i);
		if (s->bytes != p->kernel_bytes[k])
			return fail(err, errlen, "a kernel without its operands", i);
		if (s->end_ns - s->start_ns !=
		    model_kernel_ns(in->model, p->kernel_flops[k], p->kernel_bytes[k]))
			return fail(err, errlen, "a kernel shorter than the model makes it", i);
		if (s->resident_bytes > in->budget)
			return fail(err, errlen, "more allocated than the budget", i);
		k++;
	}
	if (k != p->nkernels)
		return fail(err, errlen, "fewer kernels than the trace has", r->nspans);
	if (copied[DAO_SIM_ENGINE_H2D] != r->stats.h2d_bytes ||
	    copied[DAO_SIM_ENGINE_D2H] != r->stats.d2h_bytes)
		return fail(err, errlen, "copies the statistics do not count", r->nspans);
	if (end != r->sim.end_ns)
		return fail(err, errlen, "an end that is not the last operation's", r->nspans);
	return DAO_OK;
}
