/* SPDX-License-Identifier: MIT */
/*
 * device.cpp - the dao device as PyTorch sees it: one dao context per
 * process, an allocator that makes every storage a dao buffer (released by
 * the storage's deleter, so a buffer dies exactly when its last tensor
 * does), the device guard of the PrivateUse1 slot, statistics.
 */
#include "dao_torch.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>
#if DAO_TORCH_HOOKS
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#endif

#include <cstdlib>
#include <cstring>

namespace dao_torch {
namespace {

struct DeviceState {
	std::mutex mu; /* open, close */
	std::atomic<bool> open{false};
	dao_ctx ctx{0};
	bool cuda = false;
	bool check = false;
	bool corrections = true;
	/* The strings dao_config points at while dao_open reads them. */
	OpenOptions opts;
};

DeviceState &state()
{
	static DeviceState *s = new DeviceState; /* outlives every storage */
	return *s;
}

thread_local const char *tl_label = nullptr;

/* Storages get addresses nobody can dereference: libdao moves the bytes,
 * so the only stable name of a storage is its buffer handle. The range is
 * non-canonical on x86-64 and outside every mapping elsewhere; each
 * storage's range is its own, so PyTorch's overlap checks (same storage,
 * overlapping byte ranges) stay meaningful. */
constexpr uint64_t FAKE_BASE = 1ull << 62;
std::atomic<uint64_t> fake_next{0};

/* The live storages, so that the interpreter's exit can release them. */
std::mutex live_mu;
Storage live_head{DAO_BUF_NULL, DAO_CTX_NULL, 0, true, &live_head, &live_head};

void delete_storage(void *p)
{
	auto *s = static_cast<Storage *>(p);
	{
		std::lock_guard<std::mutex> g(live_mu);
		s->prev->next = s->next;
		s->next->prev = s->prev;
	}
	/* After close the handle is gone (DAO_ERR_CLOSED): nothing to do. */
	if (!s->released)
		(void)dao_release(s->ctx, s->buf);
	stats().storages--;
	delete s;
}

Storage *new_storage(dao_buf buf, dao_ctx ctx, uint64_t n)
{
	auto *s = new Storage{buf, ctx, n, false, nullptr, nullptr};
	std::lock_guard<std::mutex> g(live_mu);
	s->next = live_head.next;
	s->prev = &live_head;
	live_head.next->prev = s;
	live_head.next = s;
	return s;
}

/* Release the handles of the storages still alive (the process ends with
 * them); their deleters then have nothing left to release. */
void release_live_storages(dao_ctx ctx)
{
	std::lock_guard<std::mutex> g(live_mu);
	for (Storage *s = live_head.next; s != &live_head; s = s->next) {
		if (!s->released && s->ctx.id == ctx.id) {
			(void)dao_release(s->ctx, s->buf);
			s->released = true;
		}
	}
}

/* A DAO_BACKEND or DAO_POLICY word as its value, by libdao's own names
 * (both enums run from 1 without a gap, "unknown" past the last): what
 * libdao accepts, this accepts. */
template <typename Kind>
Kind parse_kind(const std::string &s, const char *(*name_of)(Kind), const char *what)
{
	if (s.empty())
		return static_cast<Kind>(0); /* the DAO_* variable, else libdao's default */
	std::string known;
	for (int k = 1;; k++) {
		const char *n = name_of(static_cast<Kind>(k));
		if (!n || std::strcmp(n, "unknown") == 0)
			break;
		if (s == n)
			return static_cast<Kind>(k);
		known += (known.empty() ? "" : ", ") + std::string(n);
	}
	TORCH_CHECK(false, "dao: unknown ", what, " '", s, "' (", known, ")");
}

dao_backend_kind parse_backend(const std::string &s)
{
	return parse_kind<dao_backend_kind>(s, dao_backend_name, "backend");
}

dao_policy parse_policy(const std::string &s)
{
	return parse_kind<dao_policy>(s, dao_policy_name, "policy");
}

void parse_budget(const std::string &s, dao_config &cfg)
{
	if (s.empty())
		return;
	if (s.back() == '%') {
		char *end = nullptr;
		unsigned long pct = std::strtoul(s.c_str(), &end, 10);
		TORCH_CHECK(end == s.c_str() + s.size() - 1 && pct >= 1 && pct <= 100,
			    "dao: budget '", s, "' is not a percentage from 1% to 100%");
		cfg.device_budget_percent = static_cast<uint32_t>(pct);
		return;
	}
	uint64_t bytes = 0;
	check(dao_parse_size(s.c_str(), &bytes), ("budget '" + s + "'").c_str());
	TORCH_CHECK(bytes > 0, "dao: a budget of 0 bytes");
	cfg.device_budget = bytes;
}

bool env_flag(const char *name)
{
	const char *v = std::getenv(name);
	return v && *v && std::strcmp(v, "0") != 0;
}

} // namespace

Stats &stats()
{
	static Stats *s = new Stats;
	return *s;
}

void count_wait(const char *reason, const std::string &op)
{
	Stats &st = stats();
	st.waits++;
	std::lock_guard<std::mutex> g(st.mu);
	st.wait_reasons[std::string(reason) + ": " + op]++;
}

[[noreturn]] void fail(const std::string &what, dao_status st)
{
	std::string msg = "dao: " + what + ": " + dao_strerror(st);
	std::string first = failure();
	if (st == DAO_ERR_FAILED && !first.empty())
		msg += " (" + first + ")";
	if (st == DAO_ERR_BUDGET || st == DAO_ERR_HOST_BUDGET || st == DAO_ERR_NOMEM)
		C10_THROW_ERROR(OutOfMemoryError, msg);
	C10_THROW_ERROR(Error, msg);
}

void check(dao_status st, const char *what)
{
	if (st != DAO_OK)
		fail(what, st);
}

void check_read_current(dao_ctx ctx, const char *what)
{
	/* Nothing is queued: the read waited for every kernel before it. */
	if (dao_sync(ctx) != DAO_OK)
		fail(what, DAO_ERR_FAILED);
}

c10::Device dao_device()
{
	return c10::Device(c10::DeviceType::PrivateUse1, 0);
}

namespace {

void open_locked(DeviceState &d, const OpenOptions &opts)
{
	d.opts = opts;

	dao_config cfg;
	dao_config_init(&cfg);
	cfg.backend = parse_backend(opts.backend);
	cfg.policy = parse_policy(opts.policy);
	parse_budget(opts.budget, cfg);
	if (!opts.host_budget.empty())
		check(dao_parse_size(opts.host_budget.c_str(), &cfg.host_budget), "host budget");
	cfg.lookahead = opts.lookahead;
	if (!d.opts.trace.empty())
		cfg.trace_path = d.opts.trace.c_str();
	if (!d.opts.job.empty())
		cfg.job_name = d.opts.job.c_str();
	if (opts.deterministic)
		cfg.flags |= DAO_CONFIG_DETERMINISTIC;

	dao_ctx ctx;
	check(dao_open(&cfg, &ctx), "opening the device");
	dao_info info;
	dao_status st = dao_info_get(ctx, &info);
	bool cuda = info.backend == DAO_BACKEND_CUDA_MANAGED ||
		    info.backend == DAO_BACKEND_CUDA_EXPLICIT;
	bool want_check = opts.check >= 0 ? opts.check != 0 : env_flag("DAO_TORCH_CHECK");
	std::string refuse;
	if (st != DAO_OK)
		refuse = std::string("dao_info_get: ") + dao_strerror(st);
#ifndef DAO_TORCH_CUDA
	else if (cuda)
		refuse = std::string("backend ") + info.backend_name +
			 ": dao_torch was built against a PyTorch without CUDA; use backend='host'";
#endif
	else if (cuda && want_check)
		refuse = "the checker (check=True, DAO_TORCH_CHECK) reads operands on the CPU: host backend only";
	if (!refuse.empty()) {
		(void)dao_close(ctx, nullptr);
		TORCH_CHECK(false, "dao: ", refuse);
	}
	clear_failure();
	d.corrections = !env_flag("DAO_TORCH_NO_CORRECTIONS");
	d.ctx = ctx;
	d.cuda = cuda;
	d.check = want_check;
	d.open.store(true, std::memory_order_release);
}

} // namespace

void open_device(const OpenOptions &opts)
{
	DeviceState &d = state();
	std::lock_guard<std::mutex> g(d.mu);
	TORCH_CHECK(!d.open.load(), "dao: the dao device is open already (dao_torch.close() first)");
	open_locked(d, opts);
}

uint64_t close_device(bool exiting)
{
	DeviceState &d = state();
	std::lock_guard<std::mutex> g(d.mu);
	if (!d.open.load())
		return 0;
	uint64_t leaked = 0;
	(void)dao_sync(d.ctx);
	reap_launches(false);
	if (exiting)
		release_live_storages(d.ctx);
	dao_status st = dao_close(d.ctx, &leaked);
	d.open.store(false);
	/* The kernels a failure made libdao skip never ran: free them now. */
	reap_launches(true);
	/* A kernel failure was the program's to see at its waits (failure()
	 * keeps it); closing after one is what it should do. */
	if (st != DAO_ERR_KERNEL && st != DAO_ERR_FAILED)
		check(st, "closing the device");
	return leaked;
}

bool device_is_open()
{
	return state().open.load();
}

dao_ctx context()
{
	DeviceState &d = state();
	if (C10_LIKELY(d.open.load(std::memory_order_acquire)))
		return d.ctx;
	std::lock_guard<std::mutex> g(d.mu);
	if (!d.open.load())
		open_locked(d, OpenOptions());
	return d.ctx;
}

bool kernels_on_cuda()
{
	return state().cuda;
}

bool checking()
{
	return state().check;
}

bool corrections_enabled()
{
	return state().corrections;
}

void sync_device()
{
	if (!device_is_open())
		return;
	dao_status st = dao_sync(context());
	reap_launches(false);
	if (st != DAO_OK)
		fail("waiting for the queued kernels", st);
}

LabelScope::LabelScope(const char *label) : prev(tl_label)
{
	tl_label = label;
}

LabelScope::~LabelScope()
{
	tl_label = prev;
}

void set_label(Storage *s, const char *label)
{
	if (s)
		(void)dao_set_label(s->ctx, s->buf, label); /* a label is advice */
}

/* ------------------------------------------------------------ allocator */

namespace {

struct DaoAllocator final : c10::Allocator {
	c10::DataPtr allocate(size_t n) DAO_TORCH_ALLOCATE_CONST override
	{
		if (n == 0)
			return c10::DataPtr(nullptr, dao_device());
		dao_ctx ctx = context();
		dao_buf buf;
		dao_status st = dao_buffer_create(ctx, n, &buf);
		if (st != DAO_OK) {
			dao_info info;
			std::string what = "allocating " + std::to_string(n) + " bytes on the dao device";
			if (tl_label)
				what += " for " + std::string(tl_label);
			if (dao_info_get(ctx, &info) == DAO_OK)
				what += " (budget " + std::to_string(info.device_budget) + " bytes)";
			fail(what, st);
		}
		Storage *s = new_storage(buf, ctx, n);
		set_label(s, tl_label ? tl_label : "aten::empty");
		stats().storages++;
		uint64_t span = (static_cast<uint64_t>(n) + 4095) & ~4095ull;
		void *fake = reinterpret_cast<void *>(FAKE_BASE + fake_next.fetch_add(span));
		return c10::DataPtr(fake, s, &delete_storage, dao_device());
	}

	c10::DeleterFnPtr raw_deleter() const override
	{
		return nullptr;
	}

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
	void copy_data(void *, const void *, std::size_t) const override
	{
		TORCH_CHECK(false, "dao: a storage's bytes are a dao buffer's: copy tensors, not raw storages");
	}
#endif
};

DaoAllocator g_allocator;

/* One device, one stream: libdao orders all the work. */
struct DaoGuard final : c10::impl::DeviceGuardImplInterface {
	c10::DeviceType type() const override
	{
		return c10::DeviceType::PrivateUse1;
	}
	c10::Device exchangeDevice(c10::Device d) const override
	{
		setDevice(d);
		return dao_device();
	}
	c10::Device getDevice() const override
	{
		return dao_device();
	}
	void setDevice(c10::Device d) const override
	{
		TORCH_CHECK(d.index() <= 0, "dao: there is one dao device, index 0 (asked for ", d.index(), ")");
	}
	void uncheckedSetDevice(c10::Device) const noexcept override
	{
	}
	c10::Stream getStream(c10::Device) const noexcept override
	{
		return c10::Stream(c10::Stream::DEFAULT, dao_device());
	}
	c10::Stream exchangeStream(c10::Stream) const noexcept override
	{
		return c10::Stream(c10::Stream::DEFAULT, dao_device());
	}
	c10::DeviceIndex deviceCount() const noexcept override
	{
		return 1;
	}
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, DaoGuard);

#if DAO_TORCH_HOOKS
/* What PyTorch 2 asks the PrivateUse1 device beyond its guard: from 2.8 a
 * named PrivateUse1 backend is the process's accelerator, and PyTorch asks
 * the accelerator's hooks (with none registered, training on the device
 * failed on PyTorch 2.11: "Please register PrivateUse1HooksInterface").
 * The dao device always exists (libdao opens on demand); its random
 * operators draw from the CPU generator in program order (rng.cpp), so
 * that is its default generator. Pinned host memory is not dao's to give:
 * getPinnedMemoryAllocator keeps PyTorch's "not implemented" error. */
struct DaoHooks final : at::PrivateUse1HooksInterface {
	bool isBuilt() const override
	{
		return true;
	}
	bool isAvailable() const override
	{
		return true;
	}
	bool hasPrimaryContext(c10::DeviceIndex) const override
	{
		return true;
	}
	const at::Generator &getDefaultGenerator(c10::DeviceIndex) const override
	{
		return at::detail::getDefaultCPUGenerator();
	}
	at::Device getDeviceFromPtr(void *) const override
	{
		return dao_device();
	}
};
#endif

struct RegisterAllocator {
	RegisterAllocator()
	{
		c10::SetAllocator(c10::DeviceType::PrivateUse1, &g_allocator);
#if DAO_TORCH_HOOKS
		if (!at::isPrivateUse1HooksRegistered())
			at::RegisterPrivateUse1HooksInterface(new DaoHooks);
#endif
	}
} g_register_allocator;

} // namespace

c10::Allocator *allocator()
{
	return &g_allocator;
}

Storage *storage_of(const c10::Storage &s)
{
	const c10::DataPtr &dp = s.data_ptr();
	if (dp.get_deleter() != &delete_storage)
		return nullptr;
	return static_cast<Storage *>(dp.get_context());
}

bool is_dao(const at::Tensor &t)
{
	return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1;
}

} // namespace dao_torch
