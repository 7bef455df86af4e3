/* SPDX-License-Identifier: MIT */
/*
 * native.cpp - the operators the dao device implements by name rather
 * than through the fallback: making storages (empty, empty_strided), the
 * copies between the CPU and the device, resize_ and set_ (metadata and
 * storages, no kernel), .item(), and the dao:: operators of dao_torch.
 */
#include "dao_torch.h"

#include <ATen/EmptyTensor.h>
#include <ATen/ExpandUtils.h>
#include <c10/util/string_view.h> /* c10::string_view: 2.x headers no longer bring it */
#include <ATen/ops/empty.h>
#include <torch/library.h>

namespace dao_torch {

at::Tensor empty_dao(at::IntArrayRef sizes, at::IntArrayRef strides, at::ScalarType dtype)
{
	return at::detail::empty_strided_generic(sizes, strides, allocator(),
						 c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), dtype);
}

namespace {

void check_options(c10::optional<at::Layout> layout, c10::optional<c10::Device> device,
		   c10::optional<bool> pin_memory)
{
	TORCH_CHECK(!layout || *layout == at::kStrided, "dao: only strided tensors live on the dao device");
	TORCH_CHECK(!device || device->index() <= 0, "dao: there is one dao device, index 0");
	TORCH_CHECK(!pin_memory || !*pin_memory, "dao: pinned memory is host memory, not the dao device's");
}

at::Tensor empty_memory_format(at::IntArrayRef size, c10::optional<at::ScalarType> dtype,
			       c10::optional<at::Layout> layout, c10::optional<c10::Device> device,
			       c10::optional<bool> pin_memory, c10::optional<at::MemoryFormat> memory_format)
{
	check_options(layout, device, pin_memory);
	return at::detail::empty_generic(size, allocator(), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
					 c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, c10::optional<at::ScalarType> dtype,
			 c10::optional<at::Layout> layout, c10::optional<c10::Device> device,
			 c10::optional<bool> pin_memory)
{
	check_options(layout, device, pin_memory);
	return empty_dao(size, stride, c10::dtype_or_default(dtype));
}

/* A kernel copying a dao tensor into another (dtype conversion,
 * broadcasting and strides as copy_ does them). */
struct DeviceCopy : Launch {
	TensorArg dst, src;
	void run(const dao_kernel_args *args) override
	{
		at::Tensor d = wrap(dst, args);
		d.copy_(wrap(src, args));
	}
};

/* _copy_from(src, dst): every copy_ with a dao tensor on either side. */
at::Tensor copy_from(const at::Tensor &src, const at::Tensor &dst, bool non_blocking)
{
	TORCH_CHECK(src.layout() == at::kStrided && dst.layout() == at::kStrided, "dao: cannot copy a ",
		    src.layout(), " tensor into a ", dst.layout(), " one: only strided tensors live on the dao device");
	TORCH_CHECK(at::is_expandable_to(src.sizes(), dst.sizes()), "dao: cannot copy a tensor of shape ",
		    src.sizes(), " into one of shape ", dst.sizes());
	if (dst.numel() == 0)
		return dst;
	if (is_dao(dst) && is_dao(src)) {
		stats().ops++;
		auto l = std::make_unique<DeviceCopy>();
		l->name = "aten::copy_";
		Operands ops;
		l->src = describe(src, ops.add(src, DAO_R, "src"));
		bool whole = covers_storage(dst) && !src.is_alias_of(dst);
		l->dst = describe(dst, ops.add(dst, whole ? DAO_W : DAO_RW, "dst"));
		submit(std::move(l), ops, 0);
		return dst;
	}
	if (is_dao(dst)) {
		/* From the CPU (or another device, through the CPU). The
		 * program may change its tensor once copy_ returns: the
		 * kernel copies from a snapshot, unless the program asked for
		 * a non-blocking copy from pinned memory (as CUDA reads those
		 * later too). */
		at::Tensor s = src.device().is_cpu() ? src : src.cpu();
		if (!(non_blocking && s.is_pinned()))
			s = s.clone();
		stats().copies_in++;
		stats().bytes_in += static_cast<uint64_t>(s.numel()) * s.itemsize();
		if (covers_storage(dst))
			set_label(storage_of(dst), "from_cpu");
		copy_in(dst, s);
		return dst;
	}
	TORCH_CHECK(is_dao(src), "dao: _copy_from with no dao tensor");
	/* To the CPU: dao_read, after the kernels that produce src. A dense
	 * copy of matching layout lands in dst directly. */
	Storage *s = storage_of(src);
	if (s && dst.device().is_cpu() && src.dtype() == dst.dtype() && src.sizes() == dst.sizes() &&
	    src.is_contiguous() && dst.is_contiguous() && !src.is_conj() && !src.is_neg() &&
	    !dst.is_conj() && !dst.is_neg()) {
		count_wait("read by the CPU", "aten::_copy_from");
		uint64_t n = static_cast<uint64_t>(src.numel()) * src.itemsize();
		dao_status st = dao_read(s->ctx, s->buf, static_cast<uint64_t>(src.storage_offset()) * src.itemsize(),
					 dst.data_ptr(), n);
		if (st != DAO_OK)
			fail("reading a tensor back to the CPU", st);
		check_read_current(s->ctx, "reading a tensor back to the CPU");
		reap_launches(false);
		stats().copies_out++;
		stats().bytes_out += n;
		return dst;
	}
	at::Tensor host = read_to_cpu(src, "aten::_copy_from");
	dst.copy_(host, non_blocking);
	return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor &src, const at::Tensor &dst)
{
	if (is_dao(dst))
		resize_dao(dst, src.sizes(), c10::nullopt);
	else
		dst.resize_(src.sizes());
	return copy_from(src, dst, false);
}

const at::Tensor &resize_(const at::Tensor &self, at::IntArrayRef size,
			  c10::optional<at::MemoryFormat> memory_format)
{
	resize_dao(self, size, memory_format);
	return self;
}

at::Scalar local_scalar_dense(const at::Tensor &self)
{
	TORCH_CHECK(self.numel() == 1, "dao: a Tensor with ", self.numel(),
		    " elements cannot be converted to Scalar");
	return read_to_cpu(self, "aten::_local_scalar_dense (.item())").item();
}

int64_t int_of(const c10::IValue &v)
{
	if (v.isInt())
		return v.toInt();
#if TORCH_VERSION_MAJOR >= 2
	if (v.isSymInt())
		return v.toSymInt().expect_int();
#endif
	TORCH_CHECK(false, "dao: expected an integer, got ", v.tagKind());
}

std::vector<int64_t> ints_of(const c10::IValue &v)
{
	if (v.isIntList())
		return v.toIntVector();
	std::vector<int64_t> r;
	for (const c10::IValue &e : v.toList())
		r.push_back(int_of(e));
	return r;
}

/* self takes storage `st` with the given metadata (set_ and its overloads):
 * no data moves, only what self names. */
void set_storage(const at::Tensor &self, const c10::Storage &st, int64_t offset, at::IntArrayRef sizes,
		 at::IntArrayRef strides)
{
	TORCH_CHECK(st.device().type() == c10::DeviceType::PrivateUse1,
		    "dao: set_ of a dao tensor with a storage of device ", st.device());
	auto *impl = self.unsafeGetTensorImpl();
	if (!impl->storage().is_alias_of(st))
		impl->set_storage_keep_dtype(st);
	if (strides.empty()) {
		impl->set_sizes_contiguous(sizes);
		impl->set_storage_offset(offset);
	} else {
		impl->set_sizes_and_strides(sizes, strides, offset);
	}
	TORCH_CHECK(bytes_needed(self) <= st.nbytes(), "dao: set_ beyond the end of the storage (",
		    bytes_needed(self), " > ", st.nbytes(), " bytes)");
}

void set_boxed(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
	const size_t n = op.schema().arguments().size();
	auto args = torch::jit::last(*stack, n);
	at::Tensor self = args[0].toTensor();
	const std::string &ov = op.schema().overload_name();
	if (ov == "source_Storage" || ov == "source_Storage_storage_offset") {
		c10::Storage st = args[1].toStorage();
		if (n == 2) {
			int64_t count = static_cast<int64_t>(st.nbytes() / self.itemsize());
			set_storage(self, st, 0, {count}, {});
		} else {
			std::vector<int64_t> strides = n > 4 ? ints_of(args[4]) : std::vector<int64_t>();
			set_storage(self, st, int_of(args[2]), ints_of(args[3]), strides);
		}
	} else if (ov == "source_Tensor") {
		at::Tensor src = args[1].toTensor();
		set_storage(self, src.storage(), src.storage_offset(), src.sizes(), src.strides());
	} else {
		c10::Storage st(c10::Storage::use_byte_size_t(), static_cast<size_t>(0), allocator()->allocate(0),
				allocator(), true);
		set_storage(self, st, 0, {0}, {});
	}
	torch::jit::drop(*stack, n);
	stack->push_back(self);
}

/* The dao device orders all work itself: nothing to record. */
void record_stream_boxed(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
	torch::jit::drop(*stack, op.schema().arguments().size());
}

bool is_pinned(const at::Tensor &, c10::optional<c10::Device>)
{
	return false;
}

/* dao::label(Tensor self, str label): name self's storage for daoctl. */
void label(const at::Tensor &self, c10::string_view text)
{
	set_label(storage_of(self), std::string(text).c_str());
}

/* dao::buffer_id(Tensor self): the dao handle of self's storage (0 for an
 * empty one); views of one storage share it. */
int64_t buffer_id(const at::Tensor &self)
{
	Storage *s = storage_of(self);
	return s ? static_cast<int64_t>(s->buf.id) : 0;
}

} // namespace

void resize_dao(const at::Tensor &self, at::IntArrayRef size, c10::optional<at::MemoryFormat> memory_format)
{
	TORCH_CHECK(!memory_format || *memory_format != at::MemoryFormat::Preserve,
		    "dao: resize_ does not support memory format Preserve");
	auto *impl = self.unsafeGetTensorImpl();
	impl->set_sizes_contiguous(size);
	if (memory_format)
		impl->empty_tensor_restride(*memory_format);
	uint64_t need = bytes_needed(self);
	Storage *s = storage_of(self);
	if (need > (s ? s->nbytes : 0))
		grow_storage(self, need, true);
}

namespace {

/* Copy the first bytes of one buffer into another (a storage that grew). */
struct GrowCopy : Launch {
	TensorArg dst, src;
	void run(const dao_kernel_args *args) override
	{
		at::Tensor d = wrap(dst, args), s = wrap(src, args);
		d.narrow(0, 0, s.numel()).copy_(s);
	}
};

TensorArg bytes_arg(int32_t operand, uint64_t n)
{
	TensorArg a;
	a.operand = operand;
	a.dtype = caffe2::TypeMeta::Make<uint8_t>();
	a.sizes = {static_cast<int64_t>(n)};
	a.strides = {1};
	return a;
}

} // namespace

void grow_storage(const at::Tensor &t, uint64_t nbytes, bool keep)
{
	c10::StorageImpl *si = t.storage().unsafeGetStorageImpl();
	TORCH_CHECK(si->resizable(), "dao: trying to resize a storage that is not resizable");
	Storage *old = storage_of(t);
	c10::DataPtr fresh = allocator()->allocate(nbytes);
	if (keep && old && old->nbytes > 0) {
		auto *s = static_cast<Storage *>(fresh.get_context());
		auto l = std::make_unique<GrowCopy>();
		l->name = "dao::resize_copy";
		Operands ops;
		l->src = bytes_arg(ops.add(old, DAO_R, "old"), old->nbytes);
		l->dst = bytes_arg(ops.add(s, DAO_W, "new"), nbytes);
		submit(std::move(l), ops, 0);
	}
	/* The old buffer's handle goes with its DataPtr; libdao frees it
	 * after the copy that reads it. */
	si->set_data_ptr_noswap(std::move(fresh));
	si->set_nbytes(nbytes);
	stats().resizes++;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
	m.impl("empty_strided", TORCH_FN(empty_strided));
	m.impl("_copy_from", TORCH_FN(copy_from));
	m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
	m.impl("resize_", TORCH_FN(resize_));
	m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
	m.impl("is_pinned", TORCH_FN(is_pinned));
	m.impl("set_.source_Storage", torch::CppFunction::makeFromBoxedFunction<&set_boxed>());
	m.impl("set_.source_Storage_storage_offset", torch::CppFunction::makeFromBoxedFunction<&set_boxed>());
	m.impl("set_.source_Tensor", torch::CppFunction::makeFromBoxedFunction<&set_boxed>());
	m.impl("set_", torch::CppFunction::makeFromBoxedFunction<&set_boxed>());
	m.impl("record_stream", torch::CppFunction::makeFromBoxedFunction<&record_stream_boxed>());
}

/* Operators whose composite decomposition is not what the CPU or CUDA
 * runs: given to the fallback whole (ops.cpp says which and why). */
struct Capture {
	std::unique_ptr<torch::Library> lib;
	Capture()
	{
		lib = std::make_unique<torch::Library>(torch::Library::IMPL, "aten",
						       c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
		auto &d = c10::Dispatcher::singleton();
		for (const c10::OperatorName &n : d.getAllOpNames()) {
			auto h = d.findSchema(n);
			if (!h || !captured(*h))
				continue;
			std::string name = n.overload_name.empty() ? n.name : n.name + "." + n.overload_name;
			lib->impl(name.substr(6).c_str(), torch::CppFunction::makeFromBoxedFunction<&fallback>());
		}
	}
} g_capture;

/* The conjugate and negative bits' fallbacks materialise a flagged
 * argument with clone(), whose copy_ on the dao device is _copy_from
 * again: endless. _copy_from handles the bits itself (the kernel's copy_
 * reads them), as copy_ does on the CPU and CUDA. */
struct PassBits {
	std::vector<std::unique_ptr<torch::Library>> libs;
	PassBits()
	{
		auto h = c10::Dispatcher::singleton().findSchema({"aten::_copy_from", ""});
		for (c10::DispatchKey k : {c10::DispatchKey::Conjugate, c10::DispatchKey::Negative}) {
			if (!h || h->hasKernelForDispatchKey(k))
				continue;
			libs.push_back(std::make_unique<torch::Library>(torch::Library::IMPL, "aten", k, __FILE__,
									  __LINE__));
			libs.back()->impl("_copy_from", torch::CppFunction::makeFallthrough());
		}
	}
} g_pass_bits;

TORCH_LIBRARY(dao, m)
{
	m.def("label(Tensor self, str label) -> ()");
	m.def("buffer_id(Tensor self) -> int");
}

TORCH_LIBRARY_IMPL(dao, PrivateUse1, m)
{
	m.impl("label", TORCH_FN(label));
	m.impl("buffer_id", TORCH_FN(buffer_id));
}

#if TORCH_VERSION_MAJOR < 2
/* PyTorch 1.13 has no autograd fallback for this key (2.x does): operators
 * without a derivative pass through it, as they do on the CPU. */
TORCH_LIBRARY_IMPL(_, AutogradPrivateUse1, m)
{
	m.fallback(torch::CppFunction::makeFallthrough());
}
#endif

/* They compute nothing to differentiate. */
TORCH_LIBRARY_IMPL(dao, AutogradPrivateUse1, m)
{
	m.impl("label", torch::CppFunction::makeFallthrough());
	m.impl("buffer_id", torch::CppFunction::makeFallthrough());
}

} // namespace dao_torch
