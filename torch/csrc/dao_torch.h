/* SPDX-License-Identifier: MIT */
/*
 * dao_torch.h - the dao PyTorch device's internal interfaces (C++, one
 * extension module). Documentation/torch.md says what runs where and why.
 *
 *   device.cpp      the dao context, the allocator (one dao buffer per
 *                   storage), the device guard, statistics, failures
 *   launch.cpp      a kernel as libdao runs it: operands, the executor's
 *                   side (wrapping operand pointers as tensors, the checker)
 *   fallback.cpp    the boxed fallback: every operator becomes a kernel
 *   ops.cpp         what an operator's schema says and what it leaves out
 *                   (corrections, out= variants, flops), cached per operator
 *   waits.cpp       operators whose results the job must wait for
 *   rng.cpp         random operators in program order
 *   native.cpp      the operators registered one by one: factories, copies,
 *                   resize_, set_, .item()
 *   module.cpp      the Python module dao_torch._C
 *   cuda.cpp        kernels on a CUDA backend (only with a CUDA PyTorch)
 */
#ifndef DAO_TORCH_H
#define DAO_TORCH_H

#include <dao.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/Allocator.h>
#include <c10/util/Optional.h> /* c10::optional: 2.x headers no longer bring it */
#include <c10/util/SmallVector.h>
#include <torch/csrc/api/include/torch/version.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

/* PyTorch 2.8 and later: the PrivateUse1 hooks (device.cpp) in the shape
 * 2.8 to 2.11 declare (every method const). */
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 8)
#define DAO_TORCH_HOOKS 1
#else
#define DAO_TORCH_HOOKS 0
#endif
/* PyTorch 2.3 made Allocator::allocate non-const and added copy_data. */
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define DAO_TORCH_ALLOCATE_CONST
#else
#define DAO_TORCH_ALLOCATE_CONST const
#endif

namespace dao_torch {

/* ------------------------------------------------------------ device.cpp */

/* The context of one storage's DataPtr: the dao buffer behind it. */
struct Storage {
	dao_buf buf;
	dao_ctx ctx;
	uint64_t nbytes;
	bool released; /* the device closed under it (the process exits) */
	Storage *prev, *next; /* the live storages */
};

/* What dao_torch.open() asks for; empty or zero fields take DAO_* from the
 * environment, as in every dao program. */
struct OpenOptions {
	std::string backend, policy, budget, host_budget, trace, job;
	uint32_t lookahead = 0;
	bool deterministic = false;
	int check = -1; /* -1: DAO_TORCH_CHECK from the environment */
};

/* Open the device's dao context; throws c10::Error when it is open already
 * or libdao refuses. */
void open_device(const OpenOptions &opts);
/* Drain and close; returns the handles libdao counted as leaked. With
 * `exiting` (the interpreter ends) the storages still alive are released
 * first: their tensors end with the process, they are not leaks. */
uint64_t close_device(bool exiting);
bool device_is_open();
/* The open context, opening one from the environment on first use. */
dao_ctx context();
/* Whether kernels run on CUDA (cuda-managed, cuda-explicit) or on the CPU. */
bool kernels_on_cuda();
/* Whether the checker verifies that read operands stay unchanged. */
bool checking();
/* Whether the table of corrections applies (DAO_TORCH_NO_CORRECTIONS). */
bool corrections_enabled();
/* Wait for every kernel submitted so far; throws the first failure. */
void sync_device();

c10::Allocator *allocator();
/* The dao buffer behind a storage; nullptr for a storage of zero bytes or
 * one that is not the dao device's. */
Storage *storage_of(const c10::Storage &s);
inline Storage *storage_of(const at::Tensor &t)
{
	return t.has_storage() ? storage_of(t.storage()) : nullptr;
}
bool is_dao(const at::Tensor &t);
c10::Device dao_device();

/* Label the storages the calling thread allocates from here on (daoctl,
 * traces): the operator that makes them. */
struct LabelScope {
	explicit LabelScope(const char *label);
	~LabelScope();
	const char *prev;
};
void set_label(Storage *s, const char *label);

/* Throw a c10::Error (OutOfMemoryError for the budgets) naming what failed
 * and libdao's reason. */
[[noreturn]] void fail(const std::string &what, dao_status st);
void check(dao_status st, const char *what);
/* After a dao_read that answered: raises when the context has failed. A
 * failed context's read still returns what the last kernel that ran left
 * (dao.h), but the program asked for what the kernels it submitted
 * produce, and a failure skipped some of them. */
void check_read_current(dao_ctx ctx, const char *what);

/* Counters of the torch layer, beside libdao's dao_stats. */
struct Stats {
	std::atomic<uint64_t> ops{0};          /* operators through the fallback */
	std::atomic<uint64_t> kernels{0};      /* dao kernels launched */
	std::atomic<uint64_t> views{0};        /* operators that only made views */
	std::atomic<uint64_t> copy_outputs{0}; /* functional operators run, results copied */
	std::atomic<uint64_t> rng_replays{0};  /* random operators drawn ahead on the job thread */
	std::atomic<uint64_t> resizes{0};      /* storages that grew: a new buffer */
	std::atomic<uint64_t> copies_in{0};    /* copies from the CPU */
	std::atomic<uint64_t> bytes_in{0};
	std::atomic<uint64_t> copies_out{0};   /* copies to the CPU (dao_read) */
	std::atomic<uint64_t> bytes_out{0};
	std::atomic<uint64_t> submit_ns{0};    /* time in the fallback on the job's threads */
	std::atomic<uint64_t> meta_runs{0};    /* meta kernels run */
	std::atomic<uint64_t> meta_hits{0};    /* answers from the cache instead */
	std::atomic<uint64_t> waits{0};
	std::atomic<uint64_t> wait_ns{0};
	std::atomic<uint64_t> storages{0};     /* live storages (dao buffers) */
	std::mutex mu;                               /* guards the maps below */
	std::map<std::string, uint64_t> wait_reasons; /* "reason: op" -> count */
};
Stats &stats();
void count_wait(const char *reason, const std::string &op);

/* The steady clock in nanoseconds, for the time counters above. */
inline uint64_t now_ns()
{
	return std::chrono::duration_cast<std::chrono::nanoseconds>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

/* ------------------------------------------------------------ launch.cpp */

/* TensorArg::operand values that name no operand. */
constexpr int32_t HELD = -1;          /* `held` is passed as it is */
constexpr int32_t EMPTY_STORAGE = -2; /* a dao tensor of a zero-byte storage */
constexpr int32_t NONE = -3;          /* None in a Tensor?[] list, or undefined */

/* One tensor argument as the kernel receives it: a dao operand wrapped
 * with this metadata, or a tensor held as it is (a CPU snapshot). */
struct TensorArg {
	int32_t operand = HELD;
	at::Tensor held;
	caffe2::TypeMeta dtype;
	c10::SmallVector<int64_t, 5> sizes, strides;
	int64_t offset = 0;
	bool conj = false, neg = false;
	bool written = false; /* the kernel may resize it: its wrapper can grow */
	at::Tensor orig; /* the dao tensor, kept only for a waited launch */
};

/* The operands of one kernel: one per distinct storage, modes merged. */
class Operands {
public:
	/* The operand index of t's storage, added with `mode` (merged with
	 * earlier ones); EMPTY_STORAGE for a storage of zero bytes. */
	int32_t add(const at::Tensor &t, dao_mode mode, const char *name);
	int32_t add(Storage *s, dao_mode mode, const char *name);
	std::vector<dao_operand> ops;
	std::vector<Storage *> storages;
	std::vector<const char *> names;
};

/* The metadata of a dao tensor as the kernel will wrap it. */
TensorArg describe(const at::Tensor &t, int32_t operand);
/* The tensor a kernel sees for `a`: a CPU (or CUDA) tensor on the operand's
 * memory, or the held tensor. */
at::Tensor wrap(const TensorArg &a, const dao_kernel_args *args);
/* Whether writing every element of t overwrites its whole storage. */
bool covers_storage(const at::Tensor &t);
/* The bytes of its storage a tensor's metadata reaches. */
uint64_t bytes_needed(const at::Tensor &t);
/* A dao tensor on orig's storage with the metadata of m (a view). */
at::Tensor view_of(const at::Tensor &orig, const at::Tensor &m);

/* One queued kernel. run() executes on libdao's executor thread; the job
 * thread frees it once done (or at close, if it never ran). */
struct Launch {
	virtual ~Launch() = default;
	virtual void run(const dao_kernel_args *args) = 0;
	const char *name = "";
	/* The job waits for this kernel, takes its failure back as an
	 * exception and frees it; other failures end the context, like a
	 * device fault. */
	bool waited = false;
	std::exception_ptr error;
	int num_threads = 1;
	std::atomic<bool> done{false};
	/* Declared to draw random numbers (the checker verifies the others
	 * leave the default generator alone). */
	bool rng = false;
	/* Operands declared read: the checker verifies they stay unchanged. */
	std::vector<uint32_t> read_only;
	std::vector<const char *> read_only_names;
};

/* Queue a kernel; throws (and queues nothing) when libdao refuses it. */
void submit(std::unique_ptr<Launch> l, const Operands &ops, uint64_t flops);
/* Free the launches the executor has finished (all of them with `all`:
 * after close, those a failure made it skip); waited ones are their
 * waiter's to free. */
void reap_launches(bool all);
/* Take a waited launch out of the queue's list. */
void forget_launch(Launch *l);
size_t launches_queued();
/* The first kernel failure's message ("" while none); cleared by open. */
std::string failure();
void clear_failure();

enum ArgKind : uint8_t { ARG_VALUE, ARG_TENSOR, ARG_TENSOR_LIST, ARG_OPT_TENSOR_LIST };

/* A kernel running an operator on wrapped tensors. */
struct OpLaunch : Launch {
	c10::OperatorHandle op;
	c10::DispatchKeySet keys;
	std::vector<c10::IValue> values;  /* per argument: a plain value */
	std::vector<uint8_t> kinds;       /* per argument: ArgKind */
	std::vector<uint32_t> counts;     /* per argument: how many of `tensors` are its */
	std::vector<TensorArg> tensors;   /* the arguments' tensors, in order */
	std::vector<TensorArg> outs;                 /* fresh outputs */
	std::vector<int32_t> out_slots;              /* their places among the returned tensors */
	bool copy_outs = false;   /* copy the op's results into outs */
	/* A waited launch: the op's results, and the storages of the wrapped
	 * tensors with the dao tensor each stands for. */
	std::vector<c10::IValue> results;
	std::vector<const c10::StorageImpl *> wrapped;
	std::vector<at::Tensor> wrapped_orig;
	explicit OpLaunch(const c10::OperatorHandle &o) : op(o) {}
	void run(const dao_kernel_args *args) override;
	/* The argument stack, each TensorArg turned into a tensor by f. */
	torch::jit::Stack stack_with(const std::function<at::Tensor(const TensorArg &)> &f) const;
};

struct OpTraits;
/* Fill l's arguments from an operator call's: dao tensors become operands
 * (r, w or rw as t says), other tensors are held (CPU ones copied). */
void describe_args(OpLaunch &l, const OpTraits &t, c10::ArrayRef<c10::IValue> args, Operands &ops);

/* The dispatch key set and device of the backend kernels run on. */
c10::DispatchKeySet backend_keys();
c10::Device backend_device();

/* ---------------------------------------------------------------- ops.cpp */

struct OpTraits {
	std::string name;          /* "aten::add" */
	std::string label;         /* "aten::add.Tensor" */
	std::vector<bool> written;   /* per argument: the schema says written */
	std::vector<bool> corrected; /* per argument: written, says the table of corrections */
	std::vector<bool> whole;   /* per argument: a write covers every element */
	std::vector<bool> out;     /* per argument: an out= argument */
	bool writes_any = false; /* some argument written (corrections included) */
	bool has_out_args = false;
	bool tensor_returns_only = true; /* every return is a Tensor, Tensor? or Tensor[] */
	bool rng = false;                /* draws from a generator */
	bool rng_value_dependent = false; /* how much it draws depends on the data */
	int generator_arg = -1;          /* the Generator? argument, if any */
	int rng_when_nonzero = -1;       /* draws only when this float argument is not 0 */
	bool metadata_only = false;      /* answers from shapes alone, no data */
	bool meta_unreliable = false;    /* its meta kernel's shapes are not the CPU's */
	int training_arg = -1;
	std::vector<int> corrected_when_training; /* written only when training */
	int shape_rule = 0; /* outputs of an operator without a meta kernel */
	int flops_rule = 0;
	mutable std::atomic<uint64_t> copied{0}; /* calls run functionally, results copied */
};
const OpTraits &traits(const c10::OperatorHandle &op);
/* Every operator's count of calls whose results were copied, by name. */
std::map<std::string, uint64_t> copied_ops();
/* Whether this call draws random numbers. */
bool draws(const OpTraits &t, c10::ArrayRef<c10::IValue> args);
/* Whether argument i is written in this call. */
bool writes_arg(const OpTraits &t, c10::ArrayRef<c10::IValue> args, size_t i);
uint64_t estimate_flops(const OpTraits &t, c10::ArrayRef<c10::IValue> args,
			const std::vector<c10::IValue> &results);
/* Mend what a meta kernel gets wrong (results are meta tensors). */
void correct_meta(const OpTraits &t, c10::ArrayRef<c10::IValue> args, std::vector<c10::IValue> &results);
/* Meta outputs of an operator without a meta kernel, by a rule; false
 * when there is none. */
bool shape_rule_outputs(const OpTraits &t, c10::ArrayRef<c10::IValue> meta_args,
			std::vector<c10::IValue> &results);
/* Whether an operator goes to the fallback whole rather than through its
 * composite decomposition (which would compute it another way than the
 * CPU or CUDA does). */
bool captured(const c10::OperatorHandle &op);

/* ------------------------------------------------------------ module.cpp */

/* Drop the Python exception a Python kernel (a meta kernel registered from
 * Python) left set on this thread when its C++ exception was caught. */
void forget_python_error();

/* -------------------------------------------------------------- meta.cpp */

/* One tensor an operator returns (or an argument whose metadata it
 * changes), described relative to the arguments' tensors. */
struct MetaTensor {
	enum Kind : uint8_t { UNDEFINED, SAME, VIEW, FRESH } kind = UNDEFINED;
	int32_t arg = -1; /* SAME, VIEW: index into the flat argument tensors */
	caffe2::TypeMeta dtype;
	at::Layout layout = at::kStrided;
	c10::SmallVector<int64_t, 6> sizes, strides;
	int64_t offset = 0;
	bool conj = false, neg = false;
};

/* What the meta kernel said an operator call produces. */
struct MetaResult {
	bool ok = false; /* false: no meta kernel could tell */
	enum Kind : uint8_t { TENSOR, LIST, VALUE };
	struct Return {
		Kind kind;
		uint32_t count; /* tensors it holds (in `tensors`) */
		c10::IValue value;
	};
	std::vector<Return> returns;
	std::vector<MetaTensor> tensors; /* the returned tensors, in order */
	std::vector<MetaTensor> changed; /* argument tensors with new metadata */
};

/* The defined tensors among an operator's arguments, in order (with the
 * argument each comes from). */
void flat_tensors(c10::ArrayRef<c10::IValue> args, std::vector<at::Tensor> &out, std::vector<uint32_t> *arg_of);
bool is_opt_tensor_list(const c10::IValue &v);
/* The meta kernel's answer for this call, from the cache when the same
 * operator saw the same metadata before. */
std::shared_ptr<MetaResult> meta_result(const c10::OperatorHandle &op, const OpTraits &t,
					c10::ArrayRef<c10::IValue> args, const std::vector<at::Tensor> &flat);

/* ---------------------------------------------------------- fallback.cpp */

void fallback(const c10::OperatorHandle &op, c10::DispatchKeySet ks, torch::jit::Stack *stack);

/* ------------------------------------------------------------- waits.cpp */

/* Run the operator on the executor and wait for it: its results come back
 * as the backend gives them (fresh ones copied into new dao storages). */
void run_and_wait(const c10::OperatorHandle &op, const OpTraits &t, torch::jit::Stack *stack,
		  const char *reason);
/* Copy `src` (a CPU or backend tensor, held until then) into dao tensor
 * dst, after everything queued before. */
void copy_in(const at::Tensor &dst, const at::Tensor &src);
/* A dao tensor's bytes as a CPU tensor of the same metadata (dao_read:
 * waits for the kernels that produce them). */
at::Tensor read_to_cpu(const at::Tensor &src, const char *why);

/* --------------------------------------------------------------- rng.cpp */

/* For a random operator about to be queued: give the kernel a copy of its
 * generator's state and advance the generator as the kernel will. */
void rng_take_turn(OpLaunch &l, const OpTraits &t);

/* ------------------------------------------------------------ native.cpp */

at::Tensor empty_dao(at::IntArrayRef sizes, at::IntArrayRef strides, at::ScalarType dtype);
/* resize_ of a dao tensor: contiguous metadata, a storage that grows. */
void resize_dao(const at::Tensor &self, at::IntArrayRef size, c10::optional<at::MemoryFormat> memory_format);
/* Give t's storage room for nbytes: a new buffer, the old contents copied
 * into it when `keep`. */
void grow_storage(const at::Tensor &t, uint64_t nbytes, bool keep);

/* -------------------------------------------------------------- cuda.cpp */

#ifdef DAO_TORCH_CUDA
/* The kernel's stream (args->stream) as PyTorch's current CUDA stream
 * while the kernel runs. */
struct CudaStreamScope {
	explicit CudaStreamScope(void *stream);
	~CudaStreamScope();
	void *saved[4];
};
#endif

} // namespace dao_torch

#endif
