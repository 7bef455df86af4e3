/* SPDX-License-Identifier: MIT */
/*
 * ops.cpp - what an operator's schema says about it, what it leaves out
 * (the table of corrections), and what the fallback looks up once per
 * operator: whether it draws random numbers, a flop estimate for traces
 * and the policy's modeled time.
 */
#include "dao_torch.h"

#include <ATen/ops/empty.h>
#include <c10/core/TensorImpl.h>

#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace dao_torch {
namespace {

/* Arguments written although the schema does not say so (PyTorch 1.13's
 * schemas; the checker of the sweep finds them). native_batch_norm updates
 * its running statistics in place when training; its schema marks them as
 * plain inputs. */
struct WriteCorrection {
	const char *op;
	const char *arg;
	bool when_training; /* only when argument "training" is true */
};
const WriteCorrection write_corrections[] = {
	{"aten::native_batch_norm", "running_mean", true},
	{"aten::native_batch_norm", "running_var", true},
	/* The random slopes it draws land in `noise` (found by the checker). */
	{"aten::rrelu_with_noise", "noise", true},
	{"aten::rrelu_with_noise_", "noise", true},
};

/* In-place operators that write every element of `self` whatever it held:
 * when self covers its whole storage, the storage's old contents are dead
 * (w, not rw: nothing to fetch). */
const char *const overwrite_self[] = {
	"aten::zero_",   "aten::fill_",        "aten::normal_",   "aten::uniform_",
	"aten::random_", "aten::exponential_", "aten::geometric_", "aten::log_normal_",
	"aten::cauchy_", "aten::bernoulli_",   "aten::copy_",
};

/* Random operators whose number of draws depends on the values they read
 * (rejection sampling, draws only for some elements): the generator's
 * state after them is known only once they ran. */
const char *const rng_value_dependent[] = {
	"aten::poisson",          "aten::_standard_gamma", "aten::binomial",
	"aten::_sample_dirichlet", "aten::rrelu_with_noise", "aten::rrelu_with_noise_",
};

/* Random operators without a Generator argument: their CPU or CUDA
 * kernels draw from the default generator, when the float argument named
 * here is not 0 (a dropout probability). The checker finds them: it fails
 * a kernel that changed the default generator's state undeclared. */
struct RngNoGenerator {
	const char *op;
	const char *when_nonzero;
};
const RngNoGenerator rng_no_generator[] = {
	{"aten::native_dropout", "p"},
	{"aten::_scaled_dot_product_attention_forward", "dropout_p"},
	{"aten::_scaled_dot_product_flash_attention_for_cpu", "dropout_p"},
	{"aten::_scaled_dot_product_flash_attention", "dropout_p"},
	{"aten::_scaled_dot_product_efficient_attention", "dropout_p"},
	{"aten::_scaled_dot_product_cudnn_attention", "dropout_p"},
	{"aten::_fused_dropout", "p"},
};

/* Operators whose meta kernel gives other shapes than the CPU kernel:
 * they run while the job waits, which then takes the CPU's results. In
 * PyTorch 1.13, embedding_bag's offset2bag and max_indices depend on
 * whether the CPU takes its fast path, which its meta kernel ignores. */
const char *const meta_unreliable[] = {
#if TORCH_VERSION_MAJOR < 2
	"aten::_embedding_bag",
	"aten::_embedding_bag_forward_only",
#endif
	"",
};

/* Operators whose answer depends on metadata alone. */
const char *const metadata_only_ops[] = {
	"aten::_fused_sdp_choice", "aten::is_pinned", "aten::is_set_to",
	"aten::_has_same_storage_numel", "aten::_debug_has_internal_overlap",
};

enum FlopsRule { FLOPS_NONE, FLOPS_MM, FLOPS_ADDMM, FLOPS_BMM, FLOPS_BADDBMM, FLOPS_CONV, FLOPS_CONV_BACKWARD };

enum ShapeRule { SHAPES_NONE, SHAPES_CONVOLUTION_BACKWARD };

bool in(const char *const *table, size_t n, const std::string &name)
{
	for (size_t i = 0; i < n; i++)
		if (name == table[i])
			return true;
	return false;
}
#define IN(table, name) in(table, sizeof(table) / sizeof(table[0]), name)

bool is_tensor_type(const c10::TypePtr &ty)
{
	return ty->kind() == c10::TypeKind::TensorType;
}

bool is_tensor_or_list(const c10::TypePtr &ty)
{
	if (is_tensor_type(ty))
		return true;
	if (ty->kind() == c10::TypeKind::OptionalType)
		return is_tensor_type(ty->castRaw<c10::OptionalType>()->getElementType());
	if (ty->kind() == c10::TypeKind::ListType)
		return is_tensor_type(ty->castRaw<c10::ListType>()->getElementType());
	return false;
}

std::unique_ptr<OpTraits> build(const c10::OperatorHandle &op)
{
	auto t = std::make_unique<OpTraits>();
	const auto &s = op.schema();
	t->name = s.name();
	t->label = s.overload_name().empty() ? s.name() : s.name() + "." + s.overload_name();
	const size_t n = s.arguments().size();
	t->written.assign(n, false);
	t->whole.assign(n, false);
	t->out.assign(n, false);
	bool whole_self = IN(overwrite_self, t->name);
	for (size_t i = 0; i < n; i++) {
		const auto &a = s.arguments()[i];
		t->written[i] = a.alias_info() && a.alias_info()->isWrite();
		t->out[i] = a.is_out();
		t->whole[i] = t->out[i] || (t->written[i] && whole_self && a.name() == "self");
		if (a.type()->str().find("Generator") != std::string::npos) {
			t->rng = true;
			t->generator_arg = static_cast<int>(i);
		}
		if (a.name() == "training")
			t->training_arg = static_cast<int>(i);
	}
	t->corrected.assign(n, false);
	for (const WriteCorrection &c : write_corrections) {
		if (t->name != c.op)
			continue;
		for (size_t i = 0; i < n; i++)
			if (s.arguments()[i].name() == c.arg) {
				t->corrected[i] = true;
				if (c.when_training)
					t->corrected_when_training.push_back(static_cast<int>(i));
			}
	}
	for (size_t i = 0; i < n; i++)
		t->writes_any = t->writes_any || t->written[i] || t->corrected[i];
	for (size_t i = 0; i < n; i++)
		t->has_out_args = t->has_out_args || t->out[i];
	for (const auto &r : s.returns())
		if (!is_tensor_or_list(r.type()))
			t->tensor_returns_only = false;
	for (const RngNoGenerator &r : rng_no_generator) {
		if (t->name != r.op)
			continue;
		t->rng = true;
		for (size_t i = 0; i < n; i++)
			if (s.arguments()[i].name() == r.when_nonzero)
				t->rng_when_nonzero = static_cast<int>(i);
	}
	t->rng_value_dependent = t->rng && IN(rng_value_dependent, t->name);
	t->metadata_only = IN(metadata_only_ops, t->name);
	t->meta_unreliable = IN(meta_unreliable, t->name);
	if (t->name == "aten::convolution_backward")
		t->shape_rule = SHAPES_CONVOLUTION_BACKWARD;
	static const std::unordered_map<std::string, int> flops = {
		{"aten::mm", FLOPS_MM},
		{"aten::addmm", FLOPS_ADDMM},
		{"aten::bmm", FLOPS_BMM},
		{"aten::baddbmm", FLOPS_BADDBMM},
		{"aten::convolution", FLOPS_CONV},
		{"aten::_convolution", FLOPS_CONV},
		{"aten::convolution_backward", FLOPS_CONV_BACKWARD},
	};
	auto f = flops.find(t->name);
	t->flops_rule = f == flops.end() ? FLOPS_NONE : f->second;
	return t;
}

const at::Tensor *tensor_at(c10::ArrayRef<c10::IValue> args, size_t i)
{
	if (i < args.size() && args[i].isTensor() && args[i].toTensor().defined())
		return &args[i].toTensor();
	return nullptr;
}

std::mutex traits_mu;
std::unordered_map<const void *, std::unique_ptr<OpTraits>> *traits_cache =
	new std::unordered_map<const void *, std::unique_ptr<OpTraits>>;

} // namespace

std::map<std::string, uint64_t> copied_ops()
{
	std::map<std::string, uint64_t> m;
	std::lock_guard<std::mutex> g(traits_mu);
	for (auto &p : *traits_cache)
		if (p.second->copied)
			m[p.second->label] += p.second->copied;
	return m;
}

const OpTraits &traits(const c10::OperatorHandle &op)
{
	auto *cache = traits_cache;
	const void *key = &op.schema();
	std::lock_guard<std::mutex> g(traits_mu);
	auto it = cache->find(key);
	if (it != cache->end())
		return *it->second;
	auto t = build(op);
	const OpTraits &ref = *t;
	cache->emplace(key, std::move(t));
	return ref;
}

bool writes_arg(const OpTraits &t, c10::ArrayRef<c10::IValue> args, size_t i)
{
	if (t.written[i])
		return true;
	/* DAO_TORCH_NO_CORRECTIONS=1 (read at open) drops the corrections:
	 * the tests show the checker catching what they mend. */
	if (!t.corrected[i] || !corrections_enabled())
		return false;
	for (int c : t.corrected_when_training)
		if (static_cast<size_t>(c) == i)
			return t.training_arg >= 0 && args[t.training_arg].isBool() &&
			       args[t.training_arg].toBool();
	return true;
}

bool draws(const OpTraits &t, c10::ArrayRef<c10::IValue> args)
{
	if (!t.rng)
		return false;
	if (t.rng_when_nonzero < 0)
		return true;
	const c10::IValue &v = args[t.rng_when_nonzero];
	return !(v.isDouble() && v.toDouble() == 0.0);
}

uint64_t estimate_flops(const OpTraits &t, c10::ArrayRef<c10::IValue> args,
			const std::vector<c10::IValue> &results)
{
	if (t.flops_rule == FLOPS_NONE)
		return 0;
	const at::Tensor *out = !results.empty() && results[0].isTensor() && results[0].toTensor().defined()
					? &results[0].toTensor()
					: nullptr;
	switch (t.flops_rule) {
	case FLOPS_MM:
	case FLOPS_BMM: {
		const at::Tensor *a = tensor_at(args, 0);
		if (!a || !out || a->dim() < 1)
			return 0;
		return 2ull * out->numel() * a->size(-1);
	}
	case FLOPS_ADDMM:
	case FLOPS_BADDBMM: {
		const at::Tensor *a = tensor_at(args, 1);
		if (!a || !out || a->dim() < 1)
			return 0;
		return 2ull * out->numel() * a->size(-1);
	}
	case FLOPS_CONV: {
		/* 2 * output elements * (input channels / groups) * kernel size */
		const at::Tensor *w = tensor_at(args, 1);
		if (!w || !out || w->dim() < 2)
			return 0;
		uint64_t per_out = 1;
		for (int64_t d = 1; d < w->dim(); d++)
			per_out *= w->size(d);
		bool transposed = args.size() > 6 && args[6].isBool() && args[6].toBool();
		if (transposed) {
			const at::Tensor *x = tensor_at(args, 0);
			return x ? 2ull * x->numel() * per_out : 0;
		}
		return 2ull * out->numel() * per_out;
	}
	case FLOPS_CONV_BACKWARD: {
		/* The input and weight gradients each cost about the forward. */
		const at::Tensor *g = tensor_at(args, 0), *w = tensor_at(args, 2);
		if (!g || !w || w->dim() < 2)
			return 0;
		uint64_t per_out = 1;
		for (int64_t d = 1; d < w->dim(); d++)
			per_out *= w->size(d);
		return 4ull * g->numel() * per_out;
	}
	}
	return 0;
}

void correct_meta(const OpTraits &t, c10::ArrayRef<c10::IValue> args, std::vector<c10::IValue> &results)
{
	/* native_batch_norm's meta kernel gives save_mean and save_invstd the
	 * channels' shape also when not training, where the CPU and CUDA
	 * kernels return empty tensors. */
	if (t.name == "aten::native_batch_norm" && t.training_arg >= 0 && args[t.training_arg].isBool() &&
	    !args[t.training_arg].toBool() && results.size() == 3) {
		for (size_t i = 1; i < 3; i++)
			if (results[i].isTensor() && results[i].toTensor().defined())
				results[i] = at::empty({0}, results[i].toTensor().options());
	}
}

bool shape_rule_outputs(const OpTraits &t, c10::ArrayRef<c10::IValue> meta_args,
			std::vector<c10::IValue> &results)
{
	if (t.shape_rule != SHAPES_CONVOLUTION_BACKWARD)
		return false;
	/* convolution_backward(grad_output, input, weight, bias_sizes, stride,
	 * padding, dilation, transposed, output_padding, groups, output_mask):
	 * the gradients have the input's, the weight's and the bias's shapes,
	 * dense in the input's and the weight's memory formats (what the CPU
	 * and CUDA kernels return). */
	if (meta_args.size() != 11 || !meta_args[1].isTensor() || !meta_args[2].isTensor() ||
	    !meta_args[10].isBoolList())
		return false;
	const at::Tensor &input = meta_args[1].toTensor(), &weight = meta_args[2].toTensor();
	auto mask = meta_args[10].toBoolList();
	if (mask.size() != 3)
		return false;
	auto like = [](const at::Tensor &x) {
		return at::empty(x.sizes(), x.options().memory_format(x.suggest_memory_format()));
	};
	results.clear();
	results.emplace_back(mask[0] ? like(input) : at::Tensor());
	results.emplace_back(mask[1] ? like(weight) : at::Tensor());
	if (mask[2]) {
		if (!meta_args[3].isIntList() && !meta_args[3].isNone())
			return false;
		std::vector<int64_t> bias = meta_args[3].isNone() ? std::vector<int64_t>{weight.size(0)}
								 : meta_args[3].toIntVector();
		results.emplace_back(at::empty(bias, weight.options()));
	} else {
		results.emplace_back(at::Tensor());
	}
	return true;
}

bool captured(const c10::OperatorHandle &op)
{
	if (!op.hasSchema() || op.schema().name().compare(0, 6, "aten::") != 0 ||
	    op.hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1))
		return false;
	/* Composites whose decomposition branches on the device (found by the
	 * sweep): convolution picks mkldnn or cuDNN only for the CPU or CUDA
	 * and calls convolution_overrideable, which neither implements, on any
	 * other. */
	static const std::unordered_set<std::string> branching = {
		"aten::convolution",
		"aten::_convolution",
		"aten::convolution_backward",
		/* "mode only supports CPU AND CUDA device type" */
		"aten::mode.values",
		/* calls nansum_out's CPU code directly, not through the
		 * dispatcher ("DispatchStub: unsupported device type") */
		"aten::nanmean.out",
	};
	const auto &s = op.schema();
	if (branching.count(s.name()) ||
	    branching.count(s.name() + (s.overload_name().empty() ? "" : "." + s.overload_name())))
		return true;
	/* An operator with a CPU or CUDA kernel and a composite one runs the
	 * composite (native_layer_norm: mean and variance through
	 * native_batch_norm) on any other device: other arithmetic, other
	 * bits. The fallback runs the CPU's or CUDA's kernel instead; with no
	 * derivative of its own it would lose the composite's, so only those
	 * that have one are taken. */
	bool backend = op.hasKernelForDispatchKey(c10::DispatchKey::CPU) ||
		       op.hasKernelForDispatchKey(c10::DispatchKey::CUDA);
	bool composite = op.hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) ||
			 op.hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd);
	bool explicit_ok = op.hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) ||
			   op.hasKernelForDispatchKey(c10::DispatchKey::Autograd);
	return backend && composite && explicit_ok;
}

} // namespace dao_torch
