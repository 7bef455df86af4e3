/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

void replay_result_free(struct replay_result *r)
{
	free(r->spans);
	r->spans = NULL;
	r->nspans = 0;
}

/* Per-buffer replay state: created lazily, released exactly once. */
struct rbuf {
	dao_buf h;
	uint8_t created;
	uint8_t released;
};

static const struct {
	const char *name;
	uint32_t flag;
} plan_orders[] = {
	{ "chosen", 0 },
	{ "dao", DAO_CONFIG_PLAN_DAO_ORDER },
	{ "clean-first", DAO_CONFIG_PLAN_CLEAN_FIRST },
};

const char *replay_plan_order_name(uint32_t plan_order)
{
	for (size_t i = 0; i < sizeof(plan_orders) / sizeof(plan_orders[0]); i++)
		if (plan_orders[i].flag == plan_order)
			return plan_orders[i].name;
	return "unknown";
}

int replay_plan_order_named(const char *s, uint32_t *plan_order)
{
	for (size_t i = 0; i < sizeof(plan_orders) / sizeof(plan_orders[0]); i++)
		if (!strcmp(plan_orders[i].name, s)) {
			*plan_order = plan_orders[i].flag;
			return 0;
		}
	return -1;
}

static dao_status release(dao_ctx ctx, struct rbuf *b)
{
	if (!b->created || b->released)
		return DAO_OK;
	b->released = 1;
	return dao_release(ctx, b->h);
}

static dao_status mark(dao_ctx ctx, char *err, size_t errlen)
{
	dao_status st = dao_iteration(ctx);

	if (st)
		snprintf(err, errlen, "dao_iteration: %s", dao_strerror(st));
	return st;
}

/* Whether a mark comes before the trace's first kernel (from 0, step 1)
 * or after its last (from the end, step -1). */
static bool marked_before_kernels(const struct dao_trace *t, bool from_end)
{
	for (size_t i = 0; i < t->nevents; i++) {
		enum dao_trace_event_type ty = t->events[from_end ? t->nevents - 1 - i : i].type;

		if (ty == DAO_TRACE_KERNEL)
			return false;
		if (ty == DAO_TRACE_ITERATION)
			return true;
	}
	return false;
}

/* replay.h */
bool replay_marked_between_kernels(const struct dao_trace *t)
{
	bool kernel_before = false, mark_after_kernel = false;

	for (size_t e = 0; e < t->nevents; e++) {
		if (t->events[e].type == DAO_TRACE_KERNEL) {
			if (mark_after_kernel)
				return true;
			kernel_before = true;
		} else if (t->events[e].type == DAO_TRACE_ITERATION && kernel_before) {
			mark_after_kernel = true;
		}
	}
	return false;
}

static dao_status run(dao_ctx ctx, const struct dao_trace *t, const struct trace_profile *p,
		      enum replay_marks marks, struct rbuf *bufs, dao_operand *ops, char *err,
		      size_t errlen)
{
	bool one = marks == REPLAY_MARKS_ONE_ITERATION;
	bool ends = marks != REPLAY_MARKS_TRACE;
	size_t k = 0;
	dao_status st;

	if (ends && (one || !marked_before_kernels(t, false)) && (st = mark(ctx, err, errlen)))
		return st;
	for (size_t e = 0; e < t->nevents; e++) {
		const struct dao_trace_event *ev = &t->events[e];
		const struct dao_trace_operand *to;
		uint32_t n;

		switch (ev->type) {
		case DAO_TRACE_ITERATION:
			if (one)
				continue;
			st = mark(ctx, err, errlen);
			if (st)
				return st;
			continue;
		case DAO_TRACE_FREE:
			st = release(ctx, &bufs[ev->u.free_buf]);
			if (st) {
				snprintf(err, errlen, "dao_release of buffer %llu: %s",
					 (unsigned long long)t->bufs[ev->u.free_buf].id,
					 dao_strerror(st));
				return st;
			}
			continue;
		case DAO_TRACE_KERNEL:
			break;
		}
		to = dao_trace_kernel_ops(t, ev);
		n = ev->u.kernel.nops;
		for (uint32_t i = 0; i < n; i++) {
			struct rbuf *b = &bufs[to[i].buf];

			if (!b->created) {
				st = dao_buffer_create(ctx, t->bufs[to[i].buf].bytes, &b->h);
				if (st) {
					snprintf(err, errlen, "dao_buffer_create(%llu bytes): %s",
						 (unsigned long long)t->bufs[to[i].buf].bytes,
						 dao_strerror(st));
					return st;
				}
				b->created = 1;
			}
			ops[i].buf = b->h;
			ops[i].mode = (dao_mode)to[i].mode;
		}
		st = dao_launch_named(ctx, ev->u.kernel.name, p->kernel_flops[k], NULL, NULL, ops,
				      n);
		if (st) {
			snprintf(err, errlen, "kernel %zu (%s): %s", k, ev->u.kernel.name,
				 dao_strerror(st));
			return st;
		}
		/* Nothing has to be kept after a buffer's last access: release
		 * now so that libdao frees it then, as the job would. */
		for (uint32_t i = 0; i < n; i++) {
			if (p->last_access[to[i].buf] != k)
				continue;
			st = release(ctx, &bufs[to[i].buf]);
			if (st) {
				snprintf(err, errlen, "dao_release after last use: %s",
					 dao_strerror(st));
				return st;
			}
		}
		k++;
	}
	if (ends && (one || !marked_before_kernels(t, true)) && (st = mark(ctx, err, errlen)))
		return st;
	/* Buffers freed by the trace before any use were never created;
	 * anything else still held goes now. */
	for (size_t b = 0; b < t->nbufs; b++) {
		st = release(ctx, &bufs[b]);
		if (st) {
			snprintf(err, errlen, "final dao_release: %s", dao_strerror(st));
			return st;
		}
	}
	st = dao_sync(ctx);
	if (st)
		snprintf(err, errlen, "dao_sync: %s", dao_strerror(st));
	return st;
}

/* Bytes of all the trace's buffers, at most 2^63 - 1 (the largest budget). */
static uint64_t trace_total_bytes(const struct dao_trace *t)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < t->nbufs; i++)
		if (__builtin_add_overflow(sum, t->bufs[i].bytes, &sum) || sum >= (UINT64_C(1) << 63))
			return (UINT64_C(1) << 63) - 1;
	return sum ? sum : 1;
}

dao_status replay_on_backend(const struct dao_trace *t, const struct trace_profile *p,
			     const struct replay_opts *o, struct dao_backend *be, int is_sim,
			     struct replay_result *out)
{
	dao_config cfg;
	dao_ctx ctx;
	struct rbuf *bufs;
	dao_operand *ops;
	uint32_t maxops = 0;
	dao_status st, cst;

	memset(out, 0, sizeof(*out));
	for (size_t e = 0; e < t->nevents; e++)
		if (t->events[e].type == DAO_TRACE_KERNEL && t->events[e].u.kernel.nops > maxops)
			maxops = t->events[e].u.kernel.nops;
	bufs = calloc(t->nbufs + 1, sizeof(*bufs));
	ops = calloc(maxops + 1, sizeof(*ops));
	if (!bufs || !ops) {
		free(bufs);
		free(ops);
		dao_backend_destroy(be);
		snprintf(out->err, sizeof(out->err), "out of memory");
		return DAO_ERR_NOMEM;
	}
	dao_config_init(&cfg);
	cfg.policy = o->policy;
	cfg.lookahead = o->lookahead;
	cfg.device_budget = o->budget;
	/* The simulated host allocates nothing: give it room for every buffer
	 * of the trace, not a share of this machine's memory. */
	if (is_sim)
		cfg.host_budget = trace_total_bytes(t);
	cfg.flags = DAO_CONFIG_DETERMINISTIC | DAO_CONFIG_PRIVATE | o->plan_order |
		    (o->plan_eager ? DAO_CONFIG_PLAN_EAGER : 0);
	/* The replayed job must not trace itself into DAO_TRACE. */
	cfg.trace_path = "";
	st = dao_open_on_backend(&cfg, be, &ctx);
	if (st) {
		snprintf(out->err, sizeof(out->err), "dao_open_on_backend: %s", dao_strerror(st));
		goto done;
	}
	st = run(ctx, t, p, o->marks, bufs, ops, out->err, sizeof(out->err));
	if (st == DAO_OK)
		st = dao_stats_get(ctx, &out->stats);
	if (st == DAO_OK && is_sim) {
		dao_backend_sim_result(be, &out->sim);
		if (out->sim.nspans) {
			out->spans = malloc(out->sim.nspans * sizeof(*out->spans));
			if (out->spans) {
				memcpy(out->spans, out->sim.spans,
				       out->sim.nspans * sizeof(*out->spans));
				out->nspans = out->sim.nspans;
			}
		}
		out->sim.spans = NULL; /* dies with the backend */
		out->sim.nspans = 0;
	}
	cst = dao_close(ctx, NULL);
	if (st == DAO_OK && cst != DAO_OK) {
		st = cst;
		snprintf(out->err, sizeof(out->err), "dao_close: %s", dao_strerror(cst));
	}
done:
	free(bufs);
	free(ops);
	return st;
}

dao_status replay_sim(const struct dao_trace *t, const struct trace_profile *p,
		      const struct replay_opts *o, const struct dao_sim_model *m, int record_spans,
		      struct replay_result *out)
{
	struct dao_backend *be;
	dao_status st = dao_backend_sim_create(m, o->budget, record_spans, &be);

	if (st) {
		memset(out, 0, sizeof(*out));
		snprintf(out->err, sizeof(out->err), "simulated backend: %s", dao_strerror(st));
		return st;
	}
	return replay_on_backend(t, p, o, be, 1, out);
}
