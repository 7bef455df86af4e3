/* SPDX-License-Identifier: MIT */
/*
 * waits.cpp - where the job's thread stops running ahead: an operator
 * whose results cannot be known without running it (no meta kernel, a
 * shape that depends on the data, a value the program reads) runs on the
 * executor while the job waits; and the copies that bring a dao tensor's
 * bytes to the CPU (dao_read, after the kernels that produce them).
 */
#include "dao_torch.h"

#include <ATen/EmptyTensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>

namespace dao_torch {
namespace {

/* A backend tensor (CPU or CUDA) the operator may resize: what an out=
 * argument becomes while the job waits, so that an out= operator whose
 * output size depends on the data can still resize it. */
at::Tensor resizable_temporary(const at::Tensor &like)
{
	return at::empty({0}, at::TensorOptions().dtype(like.dtype()).device(backend_device()));
}

/* Dense strides for a result: its own when it is dense, else contiguous. */
at::Tensor dao_like(const at::Tensor &r)
{
	if (r.is_non_overlapping_and_dense())
		return empty_dao(r.sizes(), r.strides(), r.scalar_type());
	return at::detail::empty_generic(r.sizes(), allocator(),
					 c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), r.scalar_type(),
					 c10::nullopt);
}

/* Wait for every queued kernel (the waited one among them); the GIL is
 * not held here (PyTorch's bindings release it around operators). */
void wait_for_queue(const char *what)
{
	uint64_t t0 = now_ns();
	dao_status st = dao_sync(context());
	stats().wait_ns += now_ns() - t0;
	if (st != DAO_OK && st != DAO_ERR_KERNEL)
		fail(what, st);
}

} // namespace

void run_and_wait(const c10::OperatorHandle &op, const OpTraits &t, torch::jit::Stack *stack,
		  const char *reason)
{
	count_wait(reason, t.label);
	const size_t nargs = op.schema().arguments().size();
	auto args = torch::jit::last(*stack, nargs);

	auto owned = std::make_unique<OpLaunch>(op);
	OpLaunch *l = owned.get();
	l->name = t.name.c_str();
	l->keys = backend_keys();
	l->waited = true;
	l->rng = draws(t, args);

	/* Out= arguments become temporaries the operator may resize; their
	 * results are copied into the dao tensors afterwards. */
	std::vector<std::pair<at::Tensor, at::Tensor>> outs; /* dao tensor, temporary */
	torch::jit::Stack in(args.begin(), args.end());
	for (size_t i = 0; i < nargs; i++) {
		if (t.out[i] && in[i].isTensor() && is_dao(in[i].toTensor())) {
			at::Tensor tmp = resizable_temporary(in[i].toTensor());
			outs.emplace_back(in[i].toTensor(), tmp);
			in[i] = tmp;
		}
	}
	Operands ops;
	describe_args(*l, t, in, ops);
	LabelScope label(t.name.c_str());
	submit(std::move(owned), ops, 0);
	wait_for_queue(("waiting for " + t.label).c_str());

	std::unique_ptr<OpLaunch> done(l);
	forget_launch(l);
	if (!l->done.load(std::memory_order_acquire))
		fail("running " + t.label, DAO_ERR_FAILED);
	if (l->error)
		std::rethrow_exception(l->error);

	/* Results: the dao tensor a result lives in, or a new dao storage
	 * holding a copy of it. */
	for (auto &o : outs) {
		const at::Tensor &dst = o.first, &tmp = o.second;
		uint64_t need = static_cast<uint64_t>(tmp.numel()) * tmp.itemsize() +
				static_cast<uint64_t>(dst.storage_offset()) * dst.itemsize();
		Storage *s = storage_of(dst);
		if (need > (s ? s->nbytes : 0))
			grow_storage(dst, need, false);
		dst.unsafeGetTensorImpl()->set_sizes_contiguous(tmp.sizes());
		if (tmp.numel())
			copy_in(dst, tmp);
	}
	auto result_of = [&](const at::Tensor &r) -> at::Tensor {
		if (!r.defined())
			return r;
		TORCH_CHECK(r.layout() == at::kStrided, "dao: ", t.label, " makes a ", r.layout(),
			    " tensor; only strided tensors live on the dao device");
		for (auto &o : outs)
			if (r.is_alias_of(o.second))
				return o.first;
		for (size_t k = 0; k < l->wrapped.size(); k++) {
			if (!r.has_storage() || r.storage().unsafeGetStorageImpl() != l->wrapped[k])
				continue;
			const at::Tensor &orig = l->wrapped_orig[k];
			if (r.sizes() == orig.sizes() && r.strides() == orig.strides() &&
			    r.storage_offset() == orig.storage_offset() && r.dtype() == orig.dtype())
				return orig;
			return view_of(orig, r);
		}
		at::Tensor fresh = dao_like(r);
		if (r.numel())
			copy_in(fresh, r);
		return fresh;
	};
	std::vector<c10::IValue> returns;
	for (const c10::IValue &r : l->results) {
		if (r.isTensor()) {
			returns.emplace_back(result_of(r.toTensor()));
		} else if (r.isTensorList()) {
			c10::List<at::Tensor> lst;
			for (const at::Tensor &x : r.toTensorList())
				lst.push_back(result_of(x));
			returns.emplace_back(std::move(lst));
		} else {
			returns.push_back(r);
		}
	}
	torch::jit::drop(*stack, nargs);
	for (auto &r : returns)
		stack->push_back(std::move(r));
}

namespace {

/* Copy a held tensor into a dao tensor on the executor. */
struct CopyIn : Launch {
	TensorArg dst;
	at::Tensor src;
	void run(const dao_kernel_args *args) override
	{
		at::Tensor d = wrap(dst, args);
		d.copy_(src, src.device().is_cpu() && src.is_pinned());
	}
};

} // namespace

void copy_in(const at::Tensor &dst, const at::Tensor &src)
{
	auto l = std::make_unique<CopyIn>();
	l->name = "dao::copy_in";
	Operands ops;
	dao_mode mode = covers_storage(dst) && dst.numel() == src.numel() ? DAO_W : DAO_RW;
	l->dst = describe(dst, ops.add(dst, mode, "dst"));
	l->src = src;
	submit(std::move(l), ops, 0);
}

at::Tensor read_to_cpu(const at::Tensor &src, const char *why)
{
	count_wait(why, "read by the CPU");
	auto opts = at::TensorOptions().dtype(src.dtype()).device(c10::kCPU);
	const uint64_t isz = src.itemsize();
	const uint64_t lo = static_cast<uint64_t>(src.storage_offset()) * isz;
	const uint64_t hi = bytes_needed(src);
	at::Tensor flat = at::empty({static_cast<int64_t>(hi > lo ? (hi - lo) / isz : 0)}, opts);
	if (hi > lo) {
		Storage *s = storage_of(src);
		TORCH_CHECK(s, "dao: reading a tensor with no storage");
		uint64_t t0 = now_ns();
		dao_status st = dao_read(s->ctx, s->buf, lo, flat.data_ptr(), hi - lo);
		stats().wait_ns += now_ns() - t0;
		if (st != DAO_OK)
			fail("reading a tensor back to the CPU", st);
		check_read_current(s->ctx, "reading a tensor back to the CPU");
		reap_launches(false);
		stats().copies_out++;
		stats().bytes_out += hi - lo;
	}
	at::Tensor out = flat.as_strided(src.sizes(), src.strides(), 0);
	if (src.is_conj())
		out = out.conj();
	if (src.is_neg())
		out = out._neg_view();
	return out;
}

} // namespace dao_torch
