/* SPDX-License-Identifier: MIT */
/*
 * rng.cpp - random operators in program order.
 *
 * A random operator runs on the executor, later than the program called
 * it; the program meanwhile goes on and may draw from the same generator
 * itself (torch.randn on the CPU for the next batch, torch.manual_seed).
 * Plain PyTorch draws in program order, so dao must too: at submission the
 * generator's state is copied for the kernel, and the generator is advanced
 * exactly as the operator will advance it, by running the same operator on
 * the job thread over scratch memory of the same shapes and strides (how
 * much a CPU kernel draws depends on those, not on the values, except for
 * the operators ops.cpp lists as value-dependent: those run while the job
 * waits). The kernel then draws from the copy: the same numbers the
 * program would have drawn at that point.
 */
#include "dao_torch.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/fill.h>

namespace dao_torch {

void rng_take_turn(OpLaunch &l, const OpTraits &t)
{
	TORCH_INTERNAL_ASSERT(t.generator_arg >= 0 && l.kinds[t.generator_arg] == ARG_VALUE);
	const c10::IValue &g = l.values[t.generator_arg];
	at::Generator gen = g.isNone() ? at::detail::getDefaultCPUGenerator() : g.toGenerator();
	at::Generator turn;
	{
		std::lock_guard<std::mutex> lock(gen.mutex());
		turn = gen.clone();
	}
	/* Scratch operands: the values do not matter for how much is drawn,
	 * but they must be valid inputs (probabilities, standard deviations):
	 * ones are. */
	std::vector<at::Tensor> alive; /* as in OpLaunch::run */
	auto scratch = [&](const TensorArg &a) -> at::Tensor {
		if (a.operand == HELD)
			return a.held;
		at::Tensor s = at::empty_strided(a.sizes, a.strides,
						 at::TensorOptions().dtype(a.dtype).device(c10::kCPU));
		s.fill_(1);
		alive.push_back(s);
		return s;
	};
	torch::jit::Stack s = l.stack_with(scratch);
	{
		at::AutoDispatchBelowADInplaceOrView below_autograd;
		l.op.redispatchBoxed(l.keys, &s);
	}
	l.values[t.generator_arg] = c10::IValue(turn);
}

} // namespace dao_torch
