/* SPDX-License-Identifier: MIT */
/*
 * launch.cpp - a kernel as libdao runs it. The job's thread builds a Launch
 * (the operator, its arguments with every dao tensor replaced by the
 * operand it lives in) and queues it with dao_launch_named; the executor
 * thread runs it with the operands' pointers, wrapped as tensors of the
 * backend (CPU on host, CUDA on the CUDA backends) with the metadata each
 * dao tensor had at submission.
 */
#include "dao_torch.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/ops/copy.h>
#include <c10/core/TensorImpl.h>

#include <cstdio>
#include <cstring>
#include <deque>
#include <set>

namespace dao_torch {
namespace {

std::mutex launches_mu;
std::deque<Launch *> launches; /* queued, in submission order */

std::mutex failure_mu;
std::string first_failure;

void record_failure(const std::string &msg)
{
	std::lock_guard<std::mutex> g(failure_mu);
	if (first_failure.empty())
		first_failure = msg;
}

std::string what_of(const std::exception_ptr &e)
{
	try {
		std::rethrow_exception(e);
	} catch (const c10::Error &err) {
		return err.what_without_backtrace();
	} catch (const std::exception &err) {
		return err.what();
	} catch (...) {
		return "unknown exception";
	}
}

/* The error a checker's finding raises in the job, at the wait that sees
 * it. Built from a source location: the one constructor of c10::Error that
 * every PyTorch from 1.13 to 2.11 has (the base one's backtrace turned from
 * a string into a lazy value in 2.x). */
c10::Error checker_error(const std::string &msg)
{
	return c10::Error(c10::SourceLocation{__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, msg);
}

/* The checker's fingerprint of an operand's bytes. */
uint64_t checksum(const void *p, uint64_t n)
{
	const unsigned char *b = static_cast<const unsigned char *>(p);
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	uint64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		std::memcpy(&w, b + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* PyTorch's warnings raised in a kernel: on the job's thread a warning
 * reaches Python's filters (once per place); on the executor it would be
 * logged every time the kernel runs. Each distinct one is printed once. */
struct WarnOnce final : c10::WarningHandler {
	std::mutex mu;
	std::set<std::string> seen;
	const char *op = "";
	void once(const std::string &msg)
	{
		std::lock_guard<std::mutex> g(mu);
		if (seen.insert(msg).second)
			std::fprintf(stderr, "dao_torch: warning from %s: %s\n", op, msg.c_str());
	}
#if TORCH_VERSION_MAJOR >= 2
	void process(const c10::Warning &w) override
	{
		once(w.msg());
	}
#else
	void process(const c10::SourceLocation &, const std::string &msg, const bool) override
	{
		once(msg);
	}
#endif
};

WarnOnce &warn_once()
{
	static WarnOnce *w = new WarnOnce;
	return *w;
}

/* The default CPU generator's state (the checker's view of it: with the
 * checker on, the job's thread waits for each kernel, so a change while
 * one runs is the kernel's own draw). */
at::Tensor default_generator_state()
{
	at::Generator gen = at::detail::getDefaultCPUGenerator();
	std::lock_guard<std::mutex> lock(gen.mutex());
	return gen.get_state();
}

int kernel_entry(const dao_kernel_args *args)
{
	auto *l = static_cast<Launch *>(args->user);
	int rc = 0;
	/* Parallel CPU kernels split their work by the thread count: the
	 * submitting thread's, so results are the ones it would compute. */
	if (at::get_num_threads() != l->num_threads)
		at::set_num_threads(l->num_threads);
	std::vector<uint64_t> sums;
	sums.reserve(l->read_only.size());
	for (uint32_t i : l->read_only)
		sums.push_back(args->ptrs[i] ? checksum(args->ptrs[i], args->sizes[i]) : 0);
	at::Tensor rng_before;
	if (checking() && !l->rng)
		rng_before = default_generator_state();
	try {
		/* The wrapped tensors need no autograd, and nested calls must
		 * not record any. */
		at::AutoDispatchBelowADInplaceOrView below_autograd;
		warn_once().op = l->name; /* only the executor thread sets it */
#if TORCH_VERSION_MAJOR >= 2
		c10::WarningUtils::WarningHandlerGuard warnings(&warn_once());
#else
		c10::Warning::WarningHandlerGuard warnings(&warn_once());
#endif
#ifdef DAO_TORCH_CUDA
		std::unique_ptr<CudaStreamScope> on_stream;
		if (args->stream)
			on_stream.reset(new CudaStreamScope(args->stream));
#endif
		l->run(args);
	} catch (...) {
		l->error = std::current_exception();
		if (!l->waited) {
			record_failure(std::string(l->name) + ": " + what_of(l->error));
			rc = 1;
		}
	}
	for (size_t k = 0; rc == 0 && k < l->read_only.size(); k++) {
		uint32_t i = l->read_only[k];
		if (!args->ptrs[i] || checksum(args->ptrs[i], args->sizes[i]) == sums[k])
			continue;
		std::string msg = std::string(l->name) + " wrote argument '" + l->read_only_names[k] +
				  "', which its schema (and dao's corrections) declare read-only";
		record_failure("checker: " + msg);
		if (l->waited && !l->error)
			l->error = std::make_exception_ptr(checker_error(msg));
		rc = l->waited ? 0 : 1;
	}
	if (rc == 0 && rng_before.defined() && !rng_before.equal(default_generator_state())) {
		std::string msg = std::string(l->name) +
				  " drew from the default generator, which dao's table of random operators does not say";
		record_failure("checker: " + msg);
		if (l->waited && !l->error)
			l->error = std::make_exception_ptr(checker_error(msg));
		rc = l->waited ? 0 : 1;
	}
	l->done.store(true, std::memory_order_release);
	return rc;
}

} // namespace

c10::DispatchKeySet backend_keys()
{
	return c10::DispatchKeySet(kernels_on_cuda() ? c10::DispatchKey::CUDA : c10::DispatchKey::CPU);
}

c10::Device backend_device()
{
	return kernels_on_cuda() ? c10::Device(c10::DeviceType::CUDA, 0) : c10::Device(c10::DeviceType::CPU);
}

int32_t Operands::add(Storage *s, dao_mode mode, const char *name)
{
	if (!s)
		return EMPTY_STORAGE;
	TORCH_CHECK(s->ctx.id == context().id,
		    "dao: a tensor of a dao device closed since (its storage belongs to another context)");
	for (size_t i = 0; i < storages.size(); i++) {
		if (storages[i] == s) {
			ops[i].mode = static_cast<dao_mode>(ops[i].mode | mode);
			return static_cast<int32_t>(i);
		}
	}
	storages.push_back(s);
	ops.push_back(dao_operand{s->buf, mode});
	names.push_back(name);
	return static_cast<int32_t>(ops.size() - 1);
}

int32_t Operands::add(const at::Tensor &t, dao_mode mode, const char *name)
{
	return add(storage_of(t), mode, name);
}

TensorArg describe(const at::Tensor &t, int32_t operand)
{
	TensorArg a;
	a.operand = operand;
	a.dtype = t.dtype();
	a.sizes.assign(t.sizes().begin(), t.sizes().end());
	a.strides.assign(t.strides().begin(), t.strides().end());
	a.offset = t.storage_offset();
	a.conj = t.is_conj();
	a.neg = t.is_neg();
	return a;
}

at::Tensor wrap(const TensorArg &a, const dao_kernel_args *args)
{
	if (a.operand == HELD)
		return a.held;
	void *p = nullptr;
	uint64_t n = 0;
	if (a.operand >= 0) {
		p = args->ptrs[a.operand];
		n = args->sizes[a.operand];
	}
	/* A written operand's wrapper may grow: some kernels resize an out=
	 * argument on the way (to the full size before a reduction into it),
	 * and then the bytes move to memory of the backend's allocator;
	 * OpLaunch::run copies them home. */
	c10::Allocator *alloc = a.written ? c10::GetAllocator(backend_device().type()) : nullptr;
	c10::Storage st(c10::Storage::use_byte_size_t(), static_cast<size_t>(n),
			c10::DataPtr(p, backend_device()), alloc, a.written);
	auto impl = c10::make_intrusive<c10::TensorImpl>(std::move(st), backend_keys(), a.dtype);
	impl->set_sizes_and_strides(a.sizes, a.strides, a.offset);
	if (a.conj)
		impl->_set_conj(true);
	if (a.neg)
		impl->_set_neg(true);
	return at::Tensor(std::move(impl));
}

void submit(std::unique_ptr<Launch> l, const Operands &ops, uint64_t flops)
{
	dao_ctx ctx = context();
	reap_launches(false);
	l->num_threads = at::get_num_threads();
	if (checking()) {
		for (size_t i = 0; i < ops.ops.size(); i++) {
			if (ops.ops[i].mode == DAO_R) {
				l->read_only.push_back(static_cast<uint32_t>(i));
				l->read_only_names.push_back(ops.names[i] ? ops.names[i] : "?");
			}
		}
	}
	Launch *raw = l.release();
	/* Once launched, raw may run and be freed by any thread's reap. */
	const char *name = raw->name;
	const bool waited = raw->waited;
	{
		std::lock_guard<std::mutex> g(launches_mu);
		launches.push_back(raw);
	}
	dao_status st = dao_launch_named(ctx, raw->name, flops, &kernel_entry, raw, ops.ops.data(),
					 ops.ops.size());
	if (st != DAO_OK) {
		{
			std::lock_guard<std::mutex> g(launches_mu);
			for (auto it = launches.end(); it != launches.begin();) {
				if (*--it == raw) {
					launches.erase(it);
					break;
				}
			}
		}
		delete raw;
		fail("launching " + std::string(name), st);
	}
	stats().kernels++;
	/* The checker runs each kernel before the job goes on: a kernel that
	 * changes the default generator's state then did so itself, not the
	 * job's thread drawing beside it. */
	if (checking() && !waited) {
		st = dao_sync(ctx);
		if (st != DAO_OK)
			fail("running " + std::string(name), st);
	}
}

void reap_launches(bool all)
{
	std::vector<Launch *> dead;
	{
		std::lock_guard<std::mutex> g(launches_mu);
		while (!launches.empty() &&
		       (all || launches.front()->done.load(std::memory_order_acquire))) {
			dead.push_back(launches.front());
			launches.pop_front();
		}
	}
	for (Launch *l : dead)
		if (!l->waited)
			delete l;
}

void forget_launch(Launch *l)
{
	std::lock_guard<std::mutex> g(launches_mu);
	for (auto it = launches.begin(); it != launches.end(); ++it) {
		if (*it == l) {
			launches.erase(it);
			return;
		}
	}
}

size_t launches_queued()
{
	std::lock_guard<std::mutex> g(launches_mu);
	return launches.size();
}

std::string failure()
{
	std::lock_guard<std::mutex> g(failure_mu);
	return first_failure;
}

void clear_failure()
{
	std::lock_guard<std::mutex> g(failure_mu);
	first_failure.clear();
}

bool covers_storage(const at::Tensor &t)
{
	Storage *s = storage_of(t);
	return s && t.storage_offset() == 0 && t.is_non_overlapping_and_dense() &&
	       static_cast<uint64_t>(t.numel()) * t.itemsize() == s->nbytes;
}

uint64_t bytes_needed(const at::Tensor &t)
{
	if (t.numel() == 0)
		return 0;
	int64_t last = t.storage_offset();
	for (int64_t d = 0; d < t.dim(); d++)
		last += (t.size(d) - 1) * t.stride(d);
	return static_cast<uint64_t>(last + 1) * t.itemsize();
}

at::Tensor view_of(const at::Tensor &orig, const at::Tensor &m)
{
	/* As PyTorch's own views: the base's key set (autograd keys
	 * included, which the VIEW constructor does not add). */
	auto impl = c10::make_intrusive<c10::TensorImpl>(c10::TensorImpl::VIEW, c10::Storage(orig.storage()),
							 orig.key_set(), m.dtype());
	impl->set_sizes_and_strides(m.sizes(), m.strides(), m.storage_offset());
	impl->_set_conj(m.is_conj());
	impl->_set_neg(m.is_neg());
	return at::Tensor(std::move(impl));
}

void describe_args(OpLaunch &l, const OpTraits &t, c10::ArrayRef<c10::IValue> args, Operands &ops)
{
	const auto &schema = l.op.schema();
	l.values.resize(args.size());
	l.kinds.resize(args.size());
	l.counts.assign(args.size(), 0);
	l.tensors.reserve(args.size());
	auto one = [&](const at::Tensor &x, size_t i, bool written) -> TensorArg {
		if (!x.defined()) {
			TensorArg a;
			a.operand = NONE;
			return a;
		}
		if (is_dao(x)) {
			dao_mode mode = DAO_R;
			if (written)
				mode = t.whole[i] && covers_storage(x) ? DAO_W : DAO_RW;
			TensorArg a = describe(x, ops.add(x, mode, schema.arguments()[i].name().c_str()));
			a.written = written;
			if (l.waited)
				a.orig = x;
			return a;
		}
		/* A tensor of another device (a CPU scalar, CPU indices) is
		 * passed as it is: a copy, so that the program may change its
		 * own before the kernel runs. */
		TensorArg a;
		a.operand = HELD;
		if (x.device().is_cpu() && !written) {
			a.held = x.clone();
			if (x.unsafeGetTensorImpl()->is_wrapped_number())
				a.held.unsafeGetTensorImpl()->set_wrapped_number(true);
		} else {
			a.held = x;
		}
		return a;
	};
	for (size_t i = 0; i < args.size(); i++) {
		const c10::IValue &v = args[i];
		bool written = writes_arg(t, args, i);
		if (v.isTensor() && v.toTensor().defined()) {
			l.kinds[i] = ARG_TENSOR;
			l.tensors.push_back(one(v.toTensor(), i, written));
			l.counts[i] = 1;
		} else if (v.isTensorList()) {
			l.kinds[i] = ARG_TENSOR_LIST;
			for (const at::Tensor &x : v.toTensorList())
				l.tensors.push_back(one(x, i, written));
			l.counts[i] = static_cast<uint32_t>(v.toTensorList().size());
		} else if (is_opt_tensor_list(v)) {
			l.kinds[i] = ARG_OPT_TENSOR_LIST;
			for (const c10::IValue &e : v.toList())
				l.tensors.push_back(one(e.isNone() ? at::Tensor() : e.toTensor(), i, written));
			l.counts[i] = static_cast<uint32_t>(v.toList().size());
		} else {
			l.kinds[i] = ARG_VALUE;
			l.values[i] = v;
		}
	}
}

/* ---------------------------------------------------------------- OpLaunch */

torch::jit::Stack OpLaunch::stack_with(const std::function<at::Tensor(const TensorArg &)> &f) const
{
	torch::jit::Stack s;
	s.reserve(values.size() + outs.size());
	size_t k = 0;
	for (size_t i = 0; i < values.size(); i++) {
		const TensorArg *first = tensors.data() + k;
		const uint32_t n = counts[i];
		k += n;
		switch (kinds[i]) {
		case ARG_VALUE:
			s.push_back(values[i]);
			break;
		case ARG_TENSOR:
			s.push_back(f(*first));
			break;
		case ARG_TENSOR_LIST: {
			c10::List<at::Tensor> l;
			l.reserve(n);
			for (uint32_t j = 0; j < n; j++)
				l.push_back(f(first[j]));
			s.push_back(std::move(l));
			break;
		}
		case ARG_OPT_TENSOR_LIST: {
			c10::List<c10::optional<at::Tensor>> l;
			l.reserve(n);
			for (uint32_t j = 0; j < n; j++) {
				if (first[j].operand == NONE)
					l.push_back(c10::nullopt);
				else
					l.push_back(f(first[j]));
			}
			s.push_back(std::move(l));
			break;
		}
		}
	}
	return s;
}

void OpLaunch::run(const dao_kernel_args *args)
{
	/* Boxed kernels of functions returning references (out= variants
	 * returning several Tensor&) drop their arguments before pushing
	 * their results: the wrapped tensors must be held here too. */
	std::vector<at::Tensor> alive;
	/* The written wrappers, to find those the kernel moved. */
	std::vector<std::pair<const TensorArg *, at::Tensor>> written;
	auto wrap_one = [&](const TensorArg &a) {
		at::Tensor w = wrap(a, args);
		alive.push_back(w);
		if (a.written && a.operand >= 0)
			written.emplace_back(&a, w);
		if (waited && a.orig.defined()) {
			wrapped.push_back(w.storage().unsafeGetStorageImpl());
			wrapped_orig.push_back(a.orig);
		}
		return w;
	};
	torch::jit::Stack s = stack_with(wrap_one);
	op.redispatchBoxed(keys, &s);
	for (auto &p : written) {
		const TensorArg &a = *p.first;
		const at::Tensor &w = p.second;
		if (w.storage().data() == args->ptrs[a.operand])
			continue;
		/* The kernel moved it (it grew on the way): its final value
		 * goes back into the operand. */
		TORCH_CHECK(w.sizes() == c10::IntArrayRef(a.sizes), "dao: ", name, " resized an argument to ",
			    w.sizes(), " where its meta kernel said ", c10::IntArrayRef(a.sizes));
		TensorArg home = a;
		home.written = false;
		wrap(home, args).copy_(w);
	}
	if (copy_outs) {
		/* The fresh outputs among the returned tensors, in order. */
		size_t k = 0;
		int32_t slot = 0;
		auto copy_one = [&](const at::Tensor &r) {
			int32_t here = slot++;
			if (k >= outs.size() || out_slots[k] != here)
				return;
			const TensorArg &o = outs[k++];
			at::Tensor dst = wrap(o, args);
			TORCH_CHECK(r.defined() && r.sizes() == dst.sizes(), "dao: ", name,
				    " returned a result unlike what its meta kernel said (shape ", dst.sizes(), ")");
			dst.copy_(r);
		};
		for (const c10::IValue &v : s) {
			if (v.isTensor()) {
				copy_one(v.toTensor());
			} else if (v.isTensorList()) {
				for (const at::Tensor &t : v.toTensorList())
					copy_one(t);
			} else if (v.isNone()) {
				slot++;
			}
		}
		TORCH_CHECK(k == outs.size(), "dao: ", name, " returned fewer results than its meta kernel said");
	}
	if (waited)
		results = std::move(s);
}

} // namespace dao_torch
