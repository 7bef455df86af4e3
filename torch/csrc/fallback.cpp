/* SPDX-License-Identifier: MIT */
/*
 * fallback.cpp - every operator on dao tensors becomes a dao kernel.
 *
 * On the job's thread, for an operator the device does not implement by
 * name: its meta kernel (the operator run on metadata alone) says what the
 * outputs look like; outputs get new dao storages (w), arguments the
 * schema says are written are rw (or w when the write covers the whole
 * storage), the others r; aliasing outputs (views) share their input's
 * storage and need no kernel at all. The kernel then runs the operator's
 * CPU (or CUDA) kernel on the executor thread, on tensors wrapping the
 * operands' pointers. The job thread goes on at once: it waits only where
 * the program needs a value (waits.cpp).
 */
#include "dao_torch.h"

#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/native/Resize.h>
#include <c10/core/TensorImpl.h>
#include <torch/library.h>

#include <chrono>

namespace dao_torch {
namespace {

uint64_t now_ns()
{
	return std::chrono::duration_cast<std::chrono::nanoseconds>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

/* One tensor among the arguments, with its meta twin. */
struct Twin {
	at::Tensor orig;
	at::Tensor meta;
	size_t arg;
};

/* Meta twins of the arguments; tensors sharing a dao storage get twins
 * sharing a meta storage, so that the meta kernel sees their overlap. */
struct Twins {
	std::vector<Twin> all;
	std::vector<std::pair<c10::StorageImpl *, c10::Storage>> storages;

	at::Tensor make(const at::Tensor &t, size_t arg)
	{
		if (!t.defined())
			return t;
		/* A CPU scalar stays one: TensorIterator takes those beside
		 * tensors of any device, and meta kernels do too. */
		if (!is_dao(t) && t.device().is_cpu() && t.dim() == 0)
			return t;
		c10::Storage ms;
		c10::StorageImpl *key = t.has_storage() ? t.storage().unsafeGetStorageImpl() : nullptr;
		for (auto &p : storages)
			if (key && p.first == key)
				ms = p.second;
		if (!ms) {
			size_t nbytes = t.has_storage() ? t.storage().nbytes() : 0;
			ms = c10::Storage(c10::Storage::use_byte_size_t(), nbytes,
					  c10::DataPtr(nullptr, c10::Device(c10::DeviceType::Meta)),
					  c10::GetAllocator(c10::DeviceType::Meta), true);
			storages.emplace_back(key, ms);
		}
		at::Tensor m = twin_on(t, std::move(ms));
		all.push_back(Twin{t, m, arg});
		return m;
	}

	static at::Tensor twin_on(const at::Tensor &t, c10::Storage ms)
	{
		auto impl = c10::make_intrusive<c10::TensorImpl>(
			std::move(ms), c10::DispatchKeySet(c10::DispatchKey::Meta), t.dtype());
		impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
		if (t.is_conj())
			impl->_set_conj(true);
		if (t.is_neg())
			impl->_set_neg(true);
		if (t.unsafeGetTensorImpl()->is_wrapped_number())
			impl->set_wrapped_number(true);
		return at::Tensor(std::move(impl));
	}

	c10::IValue convert(const c10::IValue &v, size_t arg)
	{
		if (v.isTensor())
			return make(v.toTensor(), arg);
		if (v.isTensorList()) {
			c10::List<at::Tensor> l;
			for (const at::Tensor &t : v.toTensorList())
				l.push_back(make(t, arg));
			return l;
		}
		if (v.isList()) {
			auto in = v.toList();
			if (in.size() > 0 && is_opt_tensor_list(v)) {
				c10::List<c10::optional<at::Tensor>> l;
				for (const c10::IValue &e : in) {
					if (e.isNone())
						l.push_back(c10::nullopt);
					else
						l.push_back(make(e.toTensor(), arg));
				}
				return l;
			}
		}
		return v;
	}

	static bool is_opt_tensor_list(const c10::IValue &v)
	{
		for (const c10::IValue &e : v.toList())
			if (!e.isNone() && !e.isTensor())
				return false;
		return true;
	}

	const Twin *of_impl(const c10::TensorImpl *i) const
	{
		for (const Twin &t : all)
			if (t.meta.unsafeGetTensorImpl() == i)
				return &t;
		return nullptr;
	}

	const Twin *of_storage(const c10::StorageImpl *s) const
	{
		for (const Twin &t : all)
			if (t.meta.has_storage() && t.meta.storage().unsafeGetStorageImpl() == s)
				return &t;
		return nullptr;
	}
};

bool same_metadata(const at::Tensor &a, const at::Tensor &b)
{
	return a.sizes() == b.sizes() && a.strides() == b.strides() &&
	       a.storage_offset() == b.storage_offset() && a.dtype() == b.dtype();
}

/* The tensors among an argument (a Tensor, Tensor[] or Tensor?[]). */
void collect_tensors(const c10::IValue &v, std::vector<at::Tensor> &out)
{
	if (v.isTensor() && v.toTensor().defined()) {
		out.push_back(v.toTensor());
	} else if (v.isTensorList()) {
		for (const at::Tensor &x : v.toTensorList())
			out.push_back(x);
	} else if (v.isList() && v.toList().size() > 0 && Twins::is_opt_tensor_list(v)) {
		for (const c10::IValue &e : v.toList())
			if (!e.isNone())
				out.push_back(e.toTensor());
	}
}

bool writes_cpu_tensor(const OpTraits &t, c10::ArrayRef<c10::IValue> args)
{
	for (size_t i = 0; i < args.size(); i++) {
		if (!writes_arg(t, args, i))
			continue;
		std::vector<at::Tensor> ts;
		collect_tensors(args[i], ts);
		for (const at::Tensor &x : ts)
			if (x.defined() && !is_dao(x))
				return true;
	}
	return false;
}

/* Run the meta kernel; false when there is none (or it cannot tell). */
bool run_meta(const c10::OperatorHandle &op, const OpTraits &t, c10::ArrayRef<c10::IValue> args,
	      Twins &twins, torch::jit::Stack &meta)
{
	meta.reserve(args.size());
	for (size_t i = 0; i < args.size(); i++)
		meta.push_back(twins.convert(args[i], i));
	if (t.shape_rule) {
		std::vector<c10::IValue> results;
		if (shape_rule_outputs(t, meta, results)) {
			meta = std::move(results);
			return true;
		}
	}
	try {
		at::AutoDispatchBelowADInplaceOrView below_autograd;
		op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &meta);
	} catch (const c10::Error &) {
		/* No meta kernel, or one that needs the data: the operator
		 * runs for real and the job waits for it (an invalid call
		 * then raises its own error there). */
		return false;
	} catch (const std::exception &) {
		forget_python_error(); /* a meta kernel written in Python */
		return false;
	}
	correct_meta(t, args, meta);
	return true;
}

} // namespace

at::Tensor meta_twin(const at::Tensor &t)
{
	Twins tw;
	return tw.make(t, 0);
}

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
	if (writes_cpu_tensor(t, args)) {
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

	Twins twins;
	torch::jit::Stack meta;
	if (!run_meta(op, t, args, twins, meta)) {
		run_and_wait(op, t, stack, "no meta kernel");
		return;
	}

	LabelScope label(t.name.c_str());
	auto l = std::make_unique<OpLaunch>(op);
	l->name = t.name.c_str();
	l->keys = backend_keys();

	for (const c10::IValue &r : meta) {
		std::vector<at::Tensor> rs;
		collect_tensors(r, rs);
		for (const at::Tensor &m : rs)
			TORCH_CHECK(m.layout() == at::kStrided, "dao: ", t.label, " makes a ", m.layout(),
				    " tensor; only strided tensors live on the dao device");
	}

	/* Written arguments whose metadata the operator changes: a storage
	 * that must grow gets a new buffer first (contents kept, unless an
	 * out= argument's). Out= arguments take the new shape before the
	 * kernel, which then finds them resized; others keep theirs for the
	 * kernel (which changes it on its wrapper) and take the new one after
	 * the launch. */
	std::vector<std::pair<at::Tensor, at::Tensor>> restride_after;
	for (const Twin &tw : twins.all) {
		if (!is_dao(tw.orig) || !writes_arg(t, args, tw.arg) || same_metadata(tw.orig, tw.meta))
			continue;
		uint64_t need = bytes_needed(tw.meta);
		Storage *s = storage_of(tw.orig);
		if (need > (s ? s->nbytes : 0))
			grow_storage(tw.orig, need, !t.out[tw.arg]);
		if (t.out[tw.arg])
			tw.orig.unsafeGetTensorImpl()->set_sizes_and_strides(tw.meta.sizes(), tw.meta.strides(),
									      tw.meta.storage_offset());
		else
			restride_after.emplace_back(tw.orig, tw.meta);
	}

	Operands ops;
	describe_args(*l, t, args, ops);

	/* The results: arguments written in place, views of arguments,
	 * fresh outputs (slot: their place among the returned tensors). */
	std::vector<c10::IValue> returns;
	std::vector<at::Tensor> fresh;
	int32_t slot = 0;
	auto result_of = [&](const at::Tensor &m) -> at::Tensor {
		int32_t here = slot++;
		if (!m.defined())
			return m;
		if (const Twin *tw = twins.of_impl(m.unsafeGetTensorImpl()))
			return tw->orig;
		if (m.has_storage()) {
			if (const Twin *tw = twins.of_storage(m.storage().unsafeGetStorageImpl()))
				return view_of(tw->orig, m);
		}
		at::Tensor out = empty_dao(m.sizes(), m.strides(), m.scalar_type());
		fresh.push_back(out);
		l->out_slots.push_back(here);
		return out;
	};
	for (const c10::IValue &r : meta) {
		if (r.isTensor()) {
			returns.push_back(result_of(r.toTensor()));
		} else if (r.isTensorList()) {
			c10::List<at::Tensor> l2;
			for (const at::Tensor &m : r.toTensorList())
				l2.push_back(result_of(m));
			returns.push_back(std::move(l2));
		} else {
			if (r.isNone())
				slot++; /* a Tensor? result */
			returns.push_back(r);
		}
	}
	for (const at::Tensor &f : fresh) {
		l->outs.push_back(describe(f, ops.add(f, DAO_W, "(result)")));
		l->outs.back().written = true;
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
			std::lock_guard<std::mutex> g(st.mu);
			st.copied_ops[t.label]++;
		}
		l->rng = rng;
		if (rng && !kernels_on_cuda()) {
			rng_take_turn(*l, t);
			st.rng_replays++;
		}
		uint64_t flops = estimate_flops(t, args, returns);
		submit(std::move(l), ops, flops);
	}
	for (auto &p : restride_after)
		p.first.unsafeGetTensorImpl()->set_sizes_and_strides(p.second.sizes(), p.second.strides(),
								      p.second.storage_offset());

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
