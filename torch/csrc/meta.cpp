/* SPDX-License-Identifier: MIT */
/*
 * meta.cpp - what an operator will produce, known before it runs: its meta
 * kernel (the operator on metadata alone) run on twins of its arguments,
 * described relative to them (each result the same tensor as an argument,
 * a view of one, or fresh with its own shape), and remembered: a training
 * loop calls the same operators on the same shapes every step, and a meta
 * kernel costs microseconds in C++ and hundreds in Python (many of
 * PyTorch 1.13's are Python).
 */
#include "dao_torch.h"

#include <ATen/core/LegacyTypeDispatch.h>
#include <c10/core/TensorImpl.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <cstring>
#include <unordered_map>

namespace dao_torch {

void flat_tensors(c10::ArrayRef<c10::IValue> args, std::vector<at::Tensor> &out, std::vector<uint32_t> *arg_of)
{
	auto add = [&](const at::Tensor &t, size_t i) {
		out.push_back(t);
		if (arg_of)
			arg_of->push_back(static_cast<uint32_t>(i));
	};
	for (size_t i = 0; i < args.size(); i++) {
		const c10::IValue &v = args[i];
		if (v.isTensor()) {
			if (v.toTensor().defined())
				add(v.toTensor(), i);
		} else if (v.isTensorList()) {
			for (const at::Tensor &x : v.toTensorList())
				add(x, i);
		} else if (is_opt_tensor_list(v)) {
			/* an undefined tensor there means None, as in indexing */
			for (const c10::IValue &e : v.toList())
				if (!e.isNone() && e.toTensor().defined())
					add(e.toTensor(), i);
		}
	}
}

namespace {

/* A CPU scalar stays one in the meta pass: TensorIterator takes those
 * beside tensors of any device, and meta kernels do too. */
bool stays_itself(const at::Tensor &t)
{
	return !is_dao(t) && t.device().is_cpu() && t.dim() == 0;
}

/* Meta twins of the arguments' tensors; tensors sharing a storage get
 * twins sharing a meta storage, so the meta kernel sees their overlap. */
struct Twins {
	std::vector<at::Tensor> twin; /* per flat argument tensor */
	std::vector<std::pair<const c10::StorageImpl *, c10::Storage>> storages;
	size_t next = 0;

	at::Tensor make(const at::Tensor &t)
	{
		if (!t.defined())
			return t;
		at::Tensor m = stays_itself(t) ? t : twin_of(t);
		twin.push_back(m);
		return m;
	}

	at::Tensor twin_of(const at::Tensor &t)
	{
		c10::Storage ms;
		const c10::StorageImpl *key = t.has_storage() ? t.storage().unsafeGetStorageImpl() : nullptr;
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
		auto impl = c10::make_intrusive<c10::TensorImpl>(
			std::move(ms), c10::DispatchKeySet(c10::DispatchKey::Meta), t.dtype());
		impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
		impl->_set_conj(t.is_conj());
		impl->_set_neg(t.is_neg());
		if (t.unsafeGetTensorImpl()->is_wrapped_number())
			impl->set_wrapped_number(true);
		return at::Tensor(std::move(impl));
	}

	c10::IValue convert(const c10::IValue &v)
	{
		if (v.isTensor())
			return make(v.toTensor());
		if (v.isTensorList()) {
			c10::List<at::Tensor> l;
			for (const at::Tensor &t : v.toTensorList())
				l.push_back(make(t));
			return l;
		}
		if (is_opt_tensor_list(v)) {
			c10::List<c10::optional<at::Tensor>> l;
			for (const c10::IValue &e : v.toList()) {
				if (e.isNone() || !e.toTensor().defined())
					l.push_back(c10::nullopt);
				else
					l.push_back(make(e.toTensor()));
			}
			return l;
		}
		return v;
	}

	int32_t index_of_impl(const c10::TensorImpl *i) const
	{
		for (size_t k = 0; k < twin.size(); k++)
			if (twin[k].unsafeGetTensorImpl() == i)
				return static_cast<int32_t>(k);
		return -1;
	}

	int32_t index_of_storage(const c10::StorageImpl *s) const
	{
		for (size_t k = 0; k < twin.size(); k++)
			if (twin[k].has_storage() && twin[k].storage().unsafeGetStorageImpl() == s)
				return static_cast<int32_t>(k);
		return -1;
	}
};

MetaTensor describe_meta(const at::Tensor &m, MetaTensor::Kind kind, int32_t arg)
{
	MetaTensor d;
	d.kind = kind;
	d.arg = arg;
	if (!m.defined())
		return d;
	d.dtype = m.dtype();
	d.layout = m.layout();
	d.sizes.assign(m.sizes().begin(), m.sizes().end());
	d.strides.assign(m.strides().begin(), m.strides().end());
	d.offset = m.storage_offset();
	d.conj = m.is_conj();
	d.neg = m.is_neg();
	return d;
}

/* Run the meta kernel and describe its results relative to the arguments;
 * ok false when there is none (or it cannot tell without the data). */
std::shared_ptr<MetaResult> run_meta(const c10::OperatorHandle &op, const OpTraits &t,
				     c10::ArrayRef<c10::IValue> args, const std::vector<at::Tensor> &flat)
{
	auto r = std::make_shared<MetaResult>();
	Twins twins;
	torch::jit::Stack meta;
	meta.reserve(args.size());
	for (const c10::IValue &v : args)
		meta.push_back(twins.convert(v));
	std::vector<at::Tensor> twin = twins.twin; /* the stack gives them up */
	bool have = false;
	if (t.shape_rule) {
		std::vector<c10::IValue> results;
		if (shape_rule_outputs(t, meta, results)) {
			meta = std::move(results);
			have = true;
		}
	}
	if (!have) {
		try {
			at::AutoDispatchBelowADInplaceOrView below_autograd;
			op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &meta);
		} catch (const c10::Error &) {
			/* No meta kernel, or one that needs the data: the
			 * operator runs for real and the job waits for it (an
			 * invalid call then raises its own error there). */
			return r;
		} catch (const std::exception &) {
			forget_python_error(); /* a meta kernel written in Python */
			return r;
		}
		correct_meta(t, args, meta);
	}
	r->ok = true;
	for (size_t k = 0; k < twin.size(); k++) {
		const at::Tensor &m = twin[k];
		const at::Tensor &o = flat[k];
		if (m.sizes() != o.sizes() || m.strides() != o.strides() || m.storage_offset() != o.storage_offset())
			r->changed.push_back(describe_meta(m, MetaTensor::SAME, static_cast<int32_t>(k)));
	}
	auto result = [&](const at::Tensor &m) {
		if (!m.defined())
			return describe_meta(m, MetaTensor::UNDEFINED, -1);
		int32_t k = twins.index_of_impl(m.unsafeGetTensorImpl());
		if (k >= 0)
			return describe_meta(m, MetaTensor::SAME, k);
		if (m.has_storage() && (k = twins.index_of_storage(m.storage().unsafeGetStorageImpl())) >= 0)
			return describe_meta(m, MetaTensor::VIEW, k);
		return describe_meta(m, MetaTensor::FRESH, -1);
	};
	for (const c10::IValue &v : meta) {
		if (v.isTensor()) {
			r->returns.push_back({MetaResult::TENSOR, 1, c10::IValue()});
			r->tensors.push_back(result(v.toTensor()));
		} else if (v.isTensorList()) {
			auto l = v.toTensorList();
			r->returns.push_back({MetaResult::LIST, static_cast<uint32_t>(l.size()), c10::IValue()});
			for (const at::Tensor &m : l)
				r->tensors.push_back(result(m));
		} else {
			r->returns.push_back({MetaResult::VALUE, 0, v});
		}
	}
	return r;
}

/* The meta kernel's answer depends on the arguments' metadata and plain
 * values, the default dtype and the values of CPU scalars; a key holds
 * them all, or there is none (a CPU tensor of several elements: its
 * values might shape the result). Built in a buffer of the thread's own,
 * so that a lookup allocates nothing. */
uint64_t hash_words(const void *op, const std::vector<int64_t> &w)
{
	uint64_t h = reinterpret_cast<uintptr_t>(op) * 0x9e3779b97f4a7c15ull;
	for (int64_t x : w)
		h = (h ^ static_cast<uint64_t>(x)) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

bool key_tensor(const at::Tensor &t, const std::vector<at::Tensor> &flat, size_t k, std::vector<int64_t> &w)
{
	w.push_back(static_cast<int64_t>(t.device().type()));
	w.push_back(static_cast<int64_t>(t.scalar_type()));
	w.push_back(static_cast<int64_t>(t.layout()));
	w.push_back(t.dim());
	for (int64_t s : t.sizes())
		w.push_back(s);
	for (int64_t s : t.strides())
		w.push_back(s);
	w.push_back(t.storage_offset());
	w.push_back(t.has_storage() ? static_cast<int64_t>(t.storage().nbytes()) : -1);
	/* which earlier argument tensor shares the storage */
	int64_t alias = -1;
	for (size_t j = 0; j < k && t.has_storage(); j++)
		if (flat[j].has_storage() && flat[j].storage().is_alias_of(t.storage()))
			alias = static_cast<int64_t>(j);
	w.push_back(alias);
	w.push_back(t.is_conj() * 2 + t.is_neg() + 4 * t.unsafeGetTensorImpl()->is_wrapped_number());
	if (!is_dao(t) && !t.device().is_meta()) {
		if (t.numel() > 1 || !t.device().is_cpu())
			return false;
		int64_t bits = 0;
		if (t.numel() == 1)
			std::memcpy(&bits, t.data_ptr(), std::min<size_t>(t.itemsize(), sizeof bits));
		w.push_back(bits);
	}
	return true;
}

bool key_value(const c10::IValue &v, std::vector<int64_t> &w)
{
	if (v.isNone()) {
		w.push_back(1);
	} else if (v.isInt()) {
		w.push_back(2);
		w.push_back(v.toInt());
	} else if (v.isDouble()) {
		double d = v.toDouble();
		int64_t bits;
		std::memcpy(&bits, &d, sizeof bits);
		w.push_back(3);
		w.push_back(bits);
	} else if (v.isBool()) {
		w.push_back(4);
		w.push_back(v.toBool());
	} else if (v.isIntList()) {
		auto l = v.toIntList();
		w.push_back(5);
		w.push_back(static_cast<int64_t>(l.size()));
		for (int64_t x : l)
			w.push_back(x);
	} else if (v.isString()) {
		w.push_back(6);
		w.push_back(static_cast<int64_t>(std::hash<std::string>()(v.toStringRef())));
	} else if (v.isDevice()) {
		w.push_back(7);
		w.push_back(static_cast<int64_t>(v.toDevice().type()) * 256 + v.toDevice().index());
	} else if (v.isGenerator()) {
		w.push_back(8); /* which one does not shape anything */
	} else if (v.isBoolList() || v.isDoubleList() || (v.isList() && !v.isTensorList())) {
		w.push_back(9);
		w.push_back(static_cast<int64_t>(v.toList().size()));
		for (const c10::IValue &e : v.toList())
			if (!key_value(e, w))
				return false;
#if TORCH_VERSION_MAJOR >= 2
	} else if (v.isSymInt()) {
		auto s = v.toSymInt();
		if (s.is_heap_allocated())
			return false; /* symbolic */
		w.push_back(2);
		w.push_back(s.expect_int());
#endif
	} else {
		return false;
	}
	return true;
}

bool make_key(c10::ArrayRef<c10::IValue> args, const std::vector<at::Tensor> &flat, std::vector<int64_t> &w)
{
	w.clear();
	w.push_back(static_cast<int64_t>(c10::typeMetaToScalarType(c10::get_default_dtype())));
	size_t k = 0;
	for (const c10::IValue &v : args) {
		if (v.isTensor()) {
			if (!v.toTensor().defined())
				w.push_back(-2);
			else if (!key_tensor(v.toTensor(), flat, k++, w))
				return false;
		} else if (v.isTensorList()) {
			auto l = v.toTensorList();
			w.push_back(100 + static_cast<int64_t>(l.size()));
			for (const at::Tensor &t : l)
				if (!key_tensor(t, flat, k++, w))
					return false;
		} else if (is_opt_tensor_list(v)) {
			w.push_back(-100 - static_cast<int64_t>(v.toList().size()));
			for (const c10::IValue &e : v.toList()) {
				if (e.isNone() || !e.toTensor().defined())
					w.push_back(-2);
				else if (!key_tensor(e.toTensor(), flat, k++, w))
					return false;
			}
		} else if (!key_value(v, w)) {
			return false;
		}
	}
	return true;
}

struct Entry {
	const void *op;
	std::vector<int64_t> words;
	std::shared_ptr<MetaResult> result;
};

std::mutex cache_mu;
std::unordered_multimap<uint64_t, Entry> cache;
constexpr size_t CACHE_MAX = 1 << 16;

} // namespace

bool is_opt_tensor_list(const c10::IValue &v)
{
	if (!v.isList() || v.isTensorList() || v.toList().size() == 0)
		return false;
	bool any = false;
	for (const c10::IValue &e : v.toList()) {
		if (!e.isNone() && !e.isTensor())
			return false;
		any = any || e.isTensor();
	}
	return any;
}

std::shared_ptr<MetaResult> meta_result(const c10::OperatorHandle &op, const OpTraits &t,
					c10::ArrayRef<c10::IValue> args, const std::vector<at::Tensor> &flat)
{
	thread_local std::vector<int64_t> words;
	const void *key = &op.schema();
	const bool cacheable = make_key(args, flat, words);
	const uint64_t h = cacheable ? hash_words(key, words) : 0;
	if (cacheable) {
		std::lock_guard<std::mutex> g(cache_mu);
		auto range = cache.equal_range(h);
		for (auto it = range.first; it != range.second; ++it) {
			if (it->second.op == key && it->second.words == words) {
				stats().meta_hits++;
				return it->second.result;
			}
		}
	}
	auto r = run_meta(op, t, args, flat);
	stats().meta_runs++;
	if (cacheable) {
		std::lock_guard<std::mutex> g(cache_mu);
		if (cache.size() >= CACHE_MAX)
			cache.clear();
		cache.emplace(h, Entry{key, words, r});
	}
	return r;
}

} // namespace dao_torch
