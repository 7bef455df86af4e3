/* SPDX-License-Identifier: MIT */
/*
 * fallback.cpp - every operator on dao tensors becomes a dao kernel.
 *
 * On the job's thread, for an operator the device does not implement by
 * name: its meta kernel (meta.cpp) says what the outputs look like; fresh
 * outputs get new dao storages (w), arguments the schema or the table of
 * corrections say are written are rw (or w when the write covers the
 * whole storage), the others r; outputs that are views share their
 * input's storage and need no kernel. The kernel then runs the operator's
 * CPU (or CUDA) kernel on the executor thread, on tensors wrapping the
 * operands' pointers. The job's thread goes on at once: it waits only
 * where the program needs a value (waits.cpp).
 */
#include "dao_torch.h"

#include <c10/core/TensorImpl.h>
#include <torch/library.h>

namespace dao_torch {
namespace {

bool writes_cpu_tensor(const OpTraits &t, c10::ArrayRef<c10::IValue> args, const std::vector<at::Tensor> &flat,
		       const std::vector<uint32_t> &arg_of)
{
	for (size_t k = 0; k < flat.size(); k++)
		if (!is_dao(flat[k]) && writes_arg(t, args, arg_of[k]))
			return true;
	return false;
}

/* A dao tensor on orig's storage with the metadata the meta kernel gave. */
at::Tensor view_from(const at::Tensor &orig, const MetaTensor &m)
{
	auto impl = c10::make_intrusive<c10::TensorImpl>(c10::TensorImpl::VIEW, c10::Storage(orig.storage()),
							 orig.key_set(), m.dtype);
	impl->set_sizes_and_strides(m.sizes, m.strides, m.offset);
	impl->_set_conj(m.conj);
	impl->_set_neg(m.neg);
	return at::Tensor(std::move(impl));
}

void set_metadata(const at::Tensor &t, const MetaTensor &m)
{
	t.unsafeGetTensorImpl()->set_sizes_and_strides(m.sizes, m.strides, m.offset);
}

uint64_t bytes_reached(const MetaTensor &m)
{
	int64_t last = m.offset;
	for (size_t d = 0; d < m.sizes.size(); d++) {
		if (m.sizes[d] == 0)
			return 0;
		last += (m.sizes[d] - 1) * m.strides[d];
	}
	return static_cast<uint64_t>(last + 1) * m.dtype.itemsize();
}

} // namespace

void fallback(const c10::OperatorHandle &op, c10::DispatchKeySet, torch::jit::Stack *stack)
{
	uint64_t t0 = now_ns();
	Stats &st = stats();
	st.ops++;
	const OpTraits &t = traits(op);
	const auto &schema = op.schema();
	const size_t nargs = schema.arguments().size();
	auto args = torch::jit::last(*stack, nargs);

	if (t.metadata_only) {
		run_and_wait(op, t, stack, "answers from metadata");
		return;
	}
	if (!t.tensor_returns_only) {
		run_and_wait(op, t, stack, "returns a value");
		return;
	}
	std::vector<at::Tensor> flat;
	std::vector<uint32_t> arg_of;
	flat.reserve(8);
	arg_of.reserve(8);
	flat_tensors(args, flat, &arg_of);
	if (writes_cpu_tensor(t, args, flat, arg_of)) {
		run_and_wait(op, t, stack, "writes a CPU tensor");
		return;
	}
	const bool rng = draws(t, args);
	if (rng && !kernels_on_cuda() && (t.rng_value_dependent || t.generator_arg < 0)) {
		run_and_wait(op, t, stack,
			     t.rng_value_dependent ? "random, draws depend on the data"
						   : "random, no generator argument");
		return;
	}
	if (t.meta_unreliable) {
		run_and_wait(op, t, stack, "meta kernel unlike the CPU's");
		return;
	}

	std::shared_ptr<MetaResult> meta = meta_result(op, t, args, flat);
	if (!meta->ok) {
		run_and_wait(op, t, stack, "no meta kernel");
		return;
	}
	for (const MetaTensor &m : meta->tensors)
		TORCH_CHECK(m.layout == at::kStrided, "dao: ", t.label, " makes a ", m.layout,
			    " tensor; only strided tensors live on the dao device");

	LabelScope label(t.name.c_str());
	auto l = std::make_unique<OpLaunch>(op);
	l->name = t.name.c_str();
	l->keys = backend_keys();

	/* Written arguments whose metadata the operator changes: a storage
	 * that must grow gets a new buffer first (contents kept, unless an
	 * out= argument's). Out= arguments take the new shape before the
	 * kernel, which then finds them resized; others keep theirs for the
	 * kernel (which changes it on its wrapper) and take the new one after
	 * the launch. */
	std::vector<const MetaTensor *> restride_after;
	for (const MetaTensor &m : meta->changed) {
		const at::Tensor &orig = flat[m.arg];
		const uint32_t a = arg_of[m.arg];
		if (!is_dao(orig) || !writes_arg(t, args, a))
			continue;
		uint64_t need = bytes_reached(m);
		Storage *s = storage_of(orig);
		if (need > (s ? s->nbytes : 0))
			grow_storage(orig, need, !t.out[a]);
		if (t.out[a])
			set_metadata(orig, m);
		else
			restride_after.push_back(&m);
	}

	Operands ops;
	describe_args(*l, t, args, ops);

	/* The results: arguments written in place, views of arguments,
	 * fresh outputs (slot: their place among the returned tensors). */
	std::vector<at::Tensor> fresh;
	std::vector<at::Tensor> results;
	results.reserve(meta->tensors.size());
	for (size_t i = 0; i < meta->tensors.size(); i++) {
		const MetaTensor &m = meta->tensors[i];
		switch (m.kind) {
		case MetaTensor::UNDEFINED:
			results.emplace_back();
			break;
		case MetaTensor::SAME:
			results.push_back(flat[m.arg]);
			break;
		case MetaTensor::VIEW:
			results.push_back(view_from(flat[m.arg], m));
			break;
		case MetaTensor::FRESH:
			results.push_back(empty_dao(m.sizes, m.strides, c10::typeMetaToScalarType(m.dtype)));
			fresh.push_back(results.back());
			l->out_slots.push_back(static_cast<int32_t>(i));
			break;
		}
	}
	for (const at::Tensor &f : fresh) {
		l->outs.push_back(describe(f, ops.add(f, DAO_W, "(result)")));
		l->outs.back().written = true;
	}

	std::vector<c10::IValue> returns;
	returns.reserve(meta->returns.size());
	size_t k = 0;
	for (const MetaResult::Return &r : meta->returns) {
		if (r.kind == MetaResult::TENSOR) {
			returns.emplace_back(results[k++]);
		} else if (r.kind == MetaResult::LIST) {
			c10::List<at::Tensor> lst;
			lst.reserve(r.count);
			for (uint32_t j = 0; j < r.count; j++)
				lst.push_back(results[k++]);
			returns.emplace_back(std::move(lst));
		} else {
			returns.push_back(r.value);
		}
	}

	bool needs_kernel = t.writes_any || !fresh.empty() || schema.returns().empty();
	if (!needs_kernel) {
		st.views++;
	} else {
		if (!fresh.empty()) {
			/* The operator as the program called it (what plain
			 * PyTorch runs), its results copied into the outputs:
			 * structured operators arrive here as their out= form
			 * already, and out= variants of the others are often
			 * legacy code that resizes its output on the way. */
			l->copy_outs = true;
			st.copy_outputs++;
			t.copied++;
		}
		l->rng = rng;
		if (rng && !kernels_on_cuda()) {
			rng_take_turn(*l, t);
			st.rng_replays++;
		}
		uint64_t flops = estimate_flops(t, args, returns);
		submit(std::move(l), ops, flops);
	}
	for (const MetaTensor *m : restride_after)
		set_metadata(flat[m->arg], *m);

	torch::jit::drop(*stack, nargs);
	for (auto &r : returns)
		stack->push_back(std::move(r));
	st.submit_ns += now_ns() - t0;
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m)
{
	m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}

} // namespace dao_torch
