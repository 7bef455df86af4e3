/* SPDX-License-Identifier: MIT */
/*
 * test_unified.c - the executor's side of unified backends (backend.h:
 * DAO_UNIFIED_MEMORY_OPS), checked on the host with a model of managed memory:
 *
 *   - one allocation per buffer; a kernel gets host + offset;
 *   - copy() migrates a range (H2D: onto the modeled device, D2H: off it);
 *   - discard() migrates without the bytes: they become garbage (0xA5), so
 *     dead data discarded by mistake shows in the results;
 *   - every operand must be on the device when its kernel runs, and off
 *     it (its pages on the host) when a host kernel (DAO_LAUNCH_HOST)
 *     touches it with the CPU; the bytes on the device never exceed the
 *     budget, and no buffer is freed with its pages still there (the
 *     range would be reused behind the budget).
 *
 * Random byte-moving programs (tests/gpu/program.h) must read back exactly
 * what a plain-memory interpreter computes, under every policy, at budgets
 * from the largest kernel's needs to everything.
 */
#include "gpu/program.h"

#include "backend/backend.h"
#include "dao_sim.h"

#define UNI_GRANULE 64u
#define UNI_MAX_RANGES (PROG_MAX_BUFS * 2)

struct uni_range {
	char *p;
	uint64_t len;
	bool on_device;
};

struct uni_backend {
	struct dao_backend base;
	struct uni_range r[UNI_MAX_RANGES];
	uint32_t n;
	uint64_t seq[DAO_ENGINES];
	uint64_t device_bytes, peak;
	uint64_t not_resident; /* kernel operands found off the device */
	uint64_t host_on_device; /* host kernel touches of ranges on the device */
	uint64_t unknown;      /* calls on ranges it never handed out */
	uint64_t freed_on_device;
};

static struct uni_backend *ub(struct dao_backend *be)
{
	return (struct uni_backend *)be;
}

static struct uni_range *find(struct uni_backend *u, const void *p)
{
	for (uint32_t i = 0; i < u->n; i++)
		if ((const char *)p >= u->r[i].p && (const char *)p < u->r[i].p + u->r[i].len)
			return &u->r[i];
	u->unknown++;
	return NULL;
}

static uint64_t granules(uint64_t len)
{
	return prog_round(len, UNI_GRANULE);
}

static void move(struct uni_backend *u, void *host, bool to_device)
{
	struct uni_range *r = find(u, host);

	if (!r || r->on_device == to_device)
		return;
	r->on_device = to_device;
	if (to_device) {
		u->device_bytes += granules(r->len);
		if (u->device_bytes > u->peak)
			u->peak = u->device_bytes;
	} else {
		u->device_bytes -= granules(r->len);
	}
}

static void *uni_kernel_ptr(struct dao_backend *be, void *host, uint64_t dev_off,
			    uint64_t view_off)
{
	return (char *)host + view_off; /* unified: kernels use the host copy */
}

static dao_status uni_host_alloc(struct dao_backend *be, uint64_t bytes, void **ptr,
				 uint64_t *pinned)
{
	struct uni_backend *u = ub(be);
	uint32_t i;

	*pinned = 0;
	for (i = 0; i < u->n && u->r[i].p; i++)
		;
	if (i == UNI_MAX_RANGES)
		return DAO_ERR_NOMEM;
	u->r[i] = (struct uni_range){ .p = malloc(bytes), .len = bytes };
	if (!u->r[i].p)
		return DAO_ERR_NOMEM;
	if (i == u->n)
		u->n++;
	*ptr = u->r[i].p;
	return DAO_OK;
}

static void uni_host_free(struct dao_backend *be, void *ptr, uint64_t bytes, uint64_t pinned)
{
	struct uni_range *r = find(ub(be), ptr);

	if (!r)
		return;
	if (r->on_device) {
		ub(be)->freed_on_device++;
		move(ub(be), ptr, false);
	}
	free(r->p);
	*r = (struct uni_range){ 0 };
}

static uint64_t uni_copy(struct dao_backend *be, enum dao_engine e, uint64_t dev_off, void *host,
			 uint64_t len, const dao_fence *after, enum dao_move_why why)
{
	move(ub(be), host, e == DAO_ENGINE_H2D);
	return ++ub(be)->seq[e];
}

static uint64_t uni_discard(struct dao_backend *be, enum dao_engine e, void *host, uint64_t len,
			    const dao_fence *after, enum dao_move_why why)
{
	memset(host, 0xa5, len);
	move(ub(be), host, e == DAO_ENGINE_H2D);
	return ++ub(be)->seq[e];
}

static dao_status uni_kernel(struct dao_backend *be, const struct dao_kernel_run *k,
			     const dao_fence *after, uint64_t *seq)
{
	struct uni_backend *u = ub(be);
	dao_kernel_args args = { .user = k->user, .ptrs = k->ptrs, .sizes = k->sizes,
				 .count = k->count };

	for (uint32_t i = 0; i < k->count; i++) {
		struct uni_range *r = k->ptrs[i] ? find(u, k->ptrs[i]) : NULL;

		if (k->ptrs[i] && (!r || !r->on_device))
			u->not_resident++;
	}
	*seq = ++u->seq[DAO_ENGINE_COMPUTE];
	return k->fn && k->fn(&args) ? DAO_ERR_KERNEL : DAO_OK;
}

/* The model a host kernel of the run in progress touches (one at a time). */
static struct uni_backend *host_model;

static void host_touch(const void *p)
{
	struct uni_range *r = find(host_model, p);

	if (r && r->on_device)
		host_model->host_on_device++;
}

static int uni_host_fill(void *dst, int byte, uint64_t len, void *stream)
{
	host_touch(dst);
	return prog_host_exec.fill(dst, byte, len, stream);
}

static int uni_host_copy(void *dst, const void *src, uint64_t len, void *stream)
{
	host_touch(dst);
	host_touch(src);
	return prog_host_exec.copy(dst, src, len, stream);
}

static const struct prog_exec uni_host_exec = { uni_host_fill, uni_host_copy, NULL };
/* Device kernels as the CPU runs them here; host kernels checked. */
static const struct prog_exec uni_exec = { prog_host_fill, prog_host_copy, &uni_host_exec };

static dao_status uni_wait(struct dao_backend *be, const dao_fence *f)
{
	return DAO_OK;
}

static uint64_t uni_last_stall(struct dao_backend *be)
{
	return 0;
}

/* The checks read the counters after dao_close: destroy only detaches. */
static void uni_destroy(struct dao_backend *be)
{
}

static const struct dao_backend_ops uni_ops = {
	.name = "unified-model",
	.kernel_ptr = uni_kernel_ptr,
	.host_alloc = uni_host_alloc,
	.host_free = uni_host_free,
	.copy = uni_copy,
	.kernel = uni_kernel,
	.wait = uni_wait,
	.last_stall_ns = uni_last_stall,
	.destroy = uni_destroy,
	.discard = uni_discard,
	DAO_UNIFIED_MEMORY_OPS,
};

static void uni_init(struct uni_backend *u, uint64_t budget)
{
	memset(u, 0, sizeof(*u));
	u->base.ops = &uni_ops;
	u->base.kind = DAO_BACKEND_CUDA_MANAGED;
	u->base.holds_data = true;
	u->base.rates = (struct dao_rates){ .h2d_bytes_per_s = 10e9, .d2h_bytes_per_s = 10e9,
					    .flops_per_s = 1e12, .mem_bytes_per_s = 100e9 };
	u->base.device_memory = budget;
	u->base.align = UNI_GRANULE;
	u->base.contiguous = false;
	u->base.arena_bytes = budget;
}

static void run_one(const struct program *p, const struct prog_result *want, dao_policy policy,
		    uint64_t budget, uint32_t lookahead, int idx)
{
	struct uni_backend u;
	struct prog_result got;
	dao_config cfg;
	dao_ctx ctx;
	dao_status st;
	int bad;

	prog_result_alloc(p, &got);
	uni_init(&u, budget);
	dao_config_init(&cfg);
	cfg.policy = policy;
	cfg.lookahead = lookahead;
	cfg.log_level = test_log_level();
	host_model = &u;
	TEST_TRY(dao_open_on_backend(&cfg, &u.base, &ctx));
	st = prog_run(p, ctx, &uni_exec, got.out, got.reads, got.tmp);
	TEST_TRY(dao_close(ctx, NULL));
	bad = st == DAO_OK ? prog_compare(p, got.out, want->out, got.reads, want->reads) : -2;
	if (!tap_ok(bad == -1 && !u.not_resident && !u.host_on_device && !u.unknown &&
			    u.peak <= budget && !u.device_bytes && !u.freed_on_device,
		    "program %d, %s, budget %llu, lookahead %u: results exact, operands "
		    "resident (host kernels': on the host), device within budget",
		    idx, dao_policy_name(policy), (unsigned long long)budget, lookahead))
		tap_diag("  status %s, first wrong buffer %d, %llu operands off the device, "
			 "%llu host kernel touches on it, "
			 "%llu unknown ranges, peak %llu, left on device %llu, %llu freed there",
			 dao_strerror(st), bad, (unsigned long long)u.not_resident,
			 (unsigned long long)u.host_on_device,
			 (unsigned long long)u.unknown, (unsigned long long)u.peak,
			 (unsigned long long)u.device_bytes, (unsigned long long)u.freed_on_device);
	prog_result_free(p, &got);
	/* Every range was freed through host_free; nothing is left to free. */
	for (uint32_t i = 0; i < u.n; i++)
		free(u.r[i].p);
}

int main(void)
{
	static const dao_policy policies[] = { DAO_POLICY_DAO, DAO_POLICY_BELADY, DAO_POLICY_LRU,
					       DAO_POLICY_FIFO };
	static struct program p;
	uint64_t rng = test_seed();
	uint64_t programs = test_env_u64("DAO_TEST_PROGRAMS", 6);

	test_clear_env();
	for (uint64_t i = 0; i < programs; i++) {
		struct prog_result want;
		uint64_t lo;

		prog_generate(&p, &rng, (uint32_t)test_rng_range(&rng, 2, 24),
			      (uint32_t)test_rng_range(&rng, 1, 200), 1, 3000, UNI_GRANULE);
		prog_result_alloc(&p, &want);
		prog_reference(&p, want.out, want.reads);
		lo = p.min_budget;
		for (size_t q = 0; q < TEST_ARRAY_SIZE(policies); q++) {
			uint64_t budgets[] = { lo, lo + (prog_round(p.total, 64) - lo) / 3,
					       prog_round(p.total, 64) + 64 * PROG_MAX_BUFS };

			for (size_t b = 0; b < TEST_ARRAY_SIZE(budgets); b++)
				run_one(&p, &want, policies[q], budgets[b], b == 1 ? 1 : 16,
					(int)i);
		}
		prog_result_free(&p, &want);
	}
	tap_plan_done();
	return tap_exit();
}
