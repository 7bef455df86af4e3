/* SPDX-License-Identifier: MIT */
/*
 * registry.c - context handles, and the devices they share.
 *
 * A dao_ctx is (generation << 32 | slot + 1) in a process-wide table, so a
 * closed or forged handle is refused instead of dereferenced. Contexts that
 * are not private attach to one device per backend kind: one budget, one
 * table, one eviction order for the whole process (decision 11).
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "base/log.h"
#include "trace/trace_writer.h"
#ifdef DAO_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

struct reg_slot {
	uint32_t gen;
	struct ctx *c;
};

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cv = PTHREAD_COND_INITIALIZER;
static struct reg_slot *reg;
static uint32_t nreg;
static struct device *shared_dev[DAO_BACKEND_CUDA_EXPLICIT + 1];

/* A kernel function runs on its device's executor, which waits for it: a call
 * from there that queues work or waits for queued work could never finish. */
static dao_status enter(dao_ctx h, bool queues_or_waits, struct ctx **out)
{
	uint32_t idx = (uint32_t)h.id, gen = (uint32_t)(h.id >> 32);
	struct ctx *c;

	pthread_mutex_lock(&reg_mu);
	if (idx == 0 || idx > nreg || reg[idx - 1].gen != gen || !(c = reg[idx - 1].c) ||
	    c->closing) {
		pthread_mutex_unlock(&reg_mu);
		return DAO_ERR_CLOSED;
	}
	if (queues_or_waits && executor_is_current(c->dev)) {
		pthread_mutex_unlock(&reg_mu);
		dao_log_at(c->log_level, DAO_LOG_ERROR,
			   "called from inside a kernel function on the device that runs it");
		return DAO_ERR_REENTRANT;
	}
	c->active++;
	pthread_mutex_unlock(&reg_mu);
	dao_log_scope_push(c->log_level);
	pthread_mutex_lock(&c->dev->mu);
	/* Deterministic mode: the job's calls interleave with whole ops only,
	 * so what the executor sees never depends on thread timing. */
	if (c->dev->flags & DAO_CONFIG_DETERMINISTIC)
		queue_wait_turn(c->dev);
	*out = c;
	return DAO_OK;
}

dao_status ctx_enter(dao_ctx h, struct ctx **out)
{
	return enter(h, false, out);
}

dao_status ctx_enter_to_queue(dao_ctx h, struct ctx **out)
{
	return enter(h, true, out);
}

void ctx_leave(struct ctx *c)
{
	pthread_mutex_unlock(&c->dev->mu);
	dao_log_scope_pop();
	pthread_mutex_lock(&reg_mu);
	if (--c->active == 0)
		pthread_cond_broadcast(&reg_cv);
	pthread_mutex_unlock(&reg_mu);
}

/* Called with reg_mu held. */
static dao_status reg_insert(struct ctx *c)
{
	dao_status st;
	uint32_t i;

	for (i = 0; i < nreg; i++)
		if (!reg[i].c)
			break;
	if (i == nreg) {
		struct reg_slot *n = realloc(reg, (nreg + 16) * sizeof(*n));

		if (!n)
			return DAO_ERR_NOMEM;
		memset(n + nreg, 0, 16 * sizeof(*n));
		reg = n;
		nreg += 16;
	}
	st = ctx_tag_alloc(&c->tag);
	if (st != DAO_OK) {
		dao_err("%u contexts are open: no context tag is free", CTX_TAGS);
		return st;
	}
	reg[i].gen++;
	reg[i].c = c;
	c->id = ((uint64_t)reg[i].gen << 32) | (i + 1);
	return DAO_OK;
}

static void device_destroy(struct device *d)
{
	if (!d)
		return;
	executor_stop(d);
	publish_close(d);
	if (d->trace && dao_trace_writer_close(d->trace) != DAO_OK)
		dao_warn("writing the trace failed");
	free(d->trace_path);
	victim_destroy(d);
	arena_destroy(&d->arena);
	if (d->be)
		d->be->ops->destroy(d->be);
	pthread_cond_destroy(&d->work_cv);
	pthread_cond_destroy(&d->done_cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

static uint64_t host_budget_of(const struct resolved_config *rc)
{
	return rc->host_budget ? rc->host_budget
			       : config_percent_of(dao_host_memory_bytes(), rc->host_budget_percent);
}

/* Takes ownership of be. */
static dao_status device_create(struct dao_backend *be, const struct resolved_config *rc,
				struct device **out)
{
	struct device *d = calloc(1, sizeof(*d));
	dao_status st;

	if (!d) {
		be->ops->destroy(be);
		return DAO_ERR_NOMEM;
	}
	{
		pthread_mutexattr_t ma;

		/* The job's thread and the executor hand the lock back and
		 * forth for short sections: spin a little before sleeping. */
		pthread_mutexattr_init(&ma);
		pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
		pthread_mutex_init(&d->mu, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	pthread_cond_init(&d->work_cv, NULL);
	pthread_cond_init(&d->done_cv, NULL);
	d->be = be;
	d->kind = be->kind;
	d->policy = rc->policy;
	d->lookahead = rc->lookahead;
	d->flags = rc->flags;
	d->log_level = rc->log_level;
	d->budget = be->arena_bytes;
	d->host_budget = host_budget_of(rc);
	d->next_seq = 1;
	d->next_rec_id = 1;
	d->stats.budget_bytes = d->budget;
	d->stats.host_budget_bytes = d->host_budget;
	victim_init(d);
	if (!arena_init(&d->arena, be->arena_bytes, be->align, be->contiguous)) {
		device_destroy(d);
		return DAO_ERR_NOMEM;
	}
	if (rc->trace_path[0]) {
		d->trace_path = strdup(rc->trace_path);
		if (!d->trace_path) {
			device_destroy(d);
			return DAO_ERR_NOMEM;
		}
		st = dao_trace_writer_open(rc->trace_path, &d->trace);
		if (st != DAO_OK) {
			dao_err("cannot write trace %s", rc->trace_path);
			device_destroy(d);
			return st;
		}
	}
	memcpy(d->job_name, rc->job_name, sizeof(d->job_name));
	publish_open(d);
	st = executor_start(d);
	if (st != DAO_OK) {
		device_destroy(d);
		return st;
	}
	*out = d;
	return DAO_OK;
}

/* auto: cuda-explicit when a CUDA device is usable, else host; said once
 * per process. Called with reg_mu held. */
static dao_backend_kind auto_backend(void)
{
	static bool said;
	dao_backend_kind kind = DAO_BACKEND_HOST;

#ifdef DAO_HAVE_CUDA
	if (dao_cuda_usable())
		kind = DAO_BACKEND_CUDA_EXPLICIT;
#endif
	if (!said) {
		if (kind == DAO_BACKEND_HOST)
			dao_info("backend auto: no usable CUDA device, using the host backend");
		else
			dao_info("backend auto: using %s", dao_backend_name(kind));
		said = true;
	}
	return kind;
}

static dao_status backend_open(const struct resolved_config *rc, struct dao_backend **out)
{
	dao_backend_kind kind = rc->backend;
	uint64_t mem, budget;

	if (kind == DAO_BACKEND_CUDA_MANAGED || kind == DAO_BACKEND_CUDA_EXPLICIT) {
#ifdef DAO_HAVE_CUDA
		return dao_backend_cuda_create(kind, rc->device_budget, rc->device_budget_percent,
					       out);
#else
		dao_err("backend %s: this libdao was built without CUDA support",
			dao_backend_name(kind));
		return DAO_ERR_BACKEND;
#endif
	}
	mem = dao_host_memory_bytes();
	budget = rc->device_budget ? rc->device_budget
				   : config_percent_of(mem, rc->device_budget_percent);
	return dao_backend_host_create(budget, out);
}

static dao_status ctx_create(struct device *d, const struct resolved_config *rc,
			     struct ctx **out)
{
	struct ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return DAO_ERR_NOMEM;
	c->dev = d;
	c->log_level = rc->log_level;
	if (rc->job_name[0])
		memcpy(c->job_name, rc->job_name, sizeof(c->job_name));
	*out = c;
	return DAO_OK;
}

static dao_status open_on(struct device *d, const struct resolved_config *rc, bool shared,
			  dao_ctx *out)
{
	struct ctx *c;
	dao_status st = ctx_create(d, rc, &c);

	if (st != DAO_OK)
		return st;
	st = reg_insert(c);
	if (st != DAO_OK) {
		free(c);
		return st;
	}
	d->nctx++;
	d->shared = shared;
	if ((int)rc->log_level > d->log_level)
		d->log_level = rc->log_level;
	*out = (dao_ctx){ c->id };
	return DAO_OK;
}

/*
 * A second shared context gets the device as it is: what it leaves unset it
 * takes from the device; what it asks for explicitly must be what the device
 * has. Budgets are compared after the rounding the device's budget went
 * through, so two identical requests always agree. Determinism may be given
 * to a context that did not ask for it (it only removes overlap), never
 * taken from one that did. Returns the name of the first setting that
 * differs, NULL when none.
 */
static const char *shared_conflict(const struct device *d, const struct resolved_config *rc)
{
	if (rc->budget_explicit) {
		uint64_t want = rc->device_budget
					? rc->device_budget
					: config_percent_of(d->be->device_memory,
							    rc->device_budget_percent);

		if (dao_budget_round(want, d->be->align) != d->budget)
			return "device budget";
	}
	if (rc->policy_explicit && rc->policy != d->policy)
		return "policy";
	if ((rc->flags & DAO_CONFIG_DETERMINISTIC) && !(d->flags & DAO_CONFIG_DETERMINISTIC))
		return "determinism";
	if (rc->lookahead_explicit && rc->lookahead != d->lookahead)
		return "lookahead";
	if (rc->host_budget_explicit && host_budget_of(rc) != d->host_budget)
		return "host budget";
	if (rc->trace_path[0] && (!d->trace_path || strcmp(rc->trace_path, d->trace_path)))
		return "trace file";
	return NULL;
}

static dao_status open_resolved(struct resolved_config *rc, dao_ctx *out)
{
	struct dao_backend *be;
	struct device *d;
	dao_status st;
	dao_backend_kind slot;
	const char *differs;

	pthread_mutex_lock(&reg_mu);
	if (rc->backend == DAO_BACKEND_AUTO)
		rc->backend = auto_backend();
	slot = rc->backend;
	if (!(rc->flags & DAO_CONFIG_PRIVATE) && (d = shared_dev[slot])) {
		differs = shared_conflict(d, rc);
		if (differs) {
			pthread_mutex_unlock(&reg_mu);
			dao_err("a context is already open on the %s device with another %s "
				"(budget %llu, policy %s, lookahead %u%s)",
				dao_backend_name(d->kind), differs, (unsigned long long)d->budget,
				dao_policy_name(d->policy), d->lookahead,
				d->flags & DAO_CONFIG_DETERMINISTIC ? ", deterministic" : "");
			return DAO_ERR_CONFLICT;
		}
		st = open_on(d, rc, true, out);
		pthread_mutex_unlock(&reg_mu);
		return st;
	}
	st = backend_open(rc, &be);
	if (st == DAO_OK)
		st = device_create(be, rc, &d);
	if (st == DAO_OK) {
		st = open_on(d, rc, !(rc->flags & DAO_CONFIG_PRIVATE), out);
		if (st != DAO_OK)
			device_destroy(d);
		else if (!(rc->flags & DAO_CONFIG_PRIVATE))
			shared_dev[slot] = d;
	}
	pthread_mutex_unlock(&reg_mu);
	if (st == DAO_OK)
		dao_info("opened context on %s backend, budget %llu bytes, policy %s, lookahead %u",
			 dao_backend_name(d->kind), (unsigned long long)d->budget,
			 dao_policy_name(d->policy), d->lookahead);
	return st;
}

/* Everything logged while opening follows the level the config asks for. */
dao_status dao_open(const dao_config *cfg, dao_ctx *out)
{
	struct resolved_config rc;
	dao_status st;

	if (!out)
		return DAO_ERR_NULL;
	dao_log_scope_push(config_log_level(cfg));
	st = config_resolve(cfg, &rc);
	if (st == DAO_OK)
		st = open_resolved(&rc, out);
	dao_log_scope_pop();
	return st;
}

dao_status dao_open_on_backend(const dao_config *cfg, struct dao_backend *be, dao_ctx *out)
{
	struct resolved_config rc;
	struct device *d;
	dao_status st;

	if (!be)
		return DAO_ERR_NULL;
	if (!out) {
		be->ops->destroy(be);
		return DAO_ERR_NULL;
	}
	dao_log_scope_push(config_log_level(cfg));
	st = config_resolve(cfg, &rc);
	if (st != DAO_OK) {
		be->ops->destroy(be);
		dao_log_scope_pop();
		return st;
	}
	st = device_create(be, &rc, &d);
	if (st != DAO_OK) {
		dao_log_scope_pop();
		return st;
	}
	pthread_mutex_lock(&reg_mu);
	st = open_on(d, &rc, false, out);
	pthread_mutex_unlock(&reg_mu);
	if (st != DAO_OK)
		device_destroy(d);
	dao_log_scope_pop();
	return st;
}

/* Release every handle the context still holds; returns how many there were. */
static uint64_t release_all(struct ctx *c)
{
	struct device *d = c->dev;
	uint64_t leaked = 0;

	for (uint32_t i = 0; i < c->nslots; i++) {
		struct slot *s = &c->slots[i];

		if (!s->refs)
			continue;
		leaked++;
		s->refs = 0;
		s->gen++;
		rec_unref(d, s->rec);
	}
	c->live_handles = 0;
	return leaked;
}

dao_status dao_close(dao_ctx h, uint64_t *leaked)
{
	uint32_t idx = (uint32_t)h.id, gen = (uint32_t)(h.id >> 32);
	struct op sync_op = { .kind = OP_SYNC, .blocking = true };
	struct device *d;
	struct ctx *c;
	uint64_t n;
	dao_status st;

	pthread_mutex_lock(&reg_mu);
	if (idx == 0 || idx > nreg || reg[idx - 1].gen != gen || !(c = reg[idx - 1].c) ||
	    c->closing) {
		pthread_mutex_unlock(&reg_mu);
		return DAO_ERR_CLOSED;
	}
	if (executor_is_current(c->dev)) {
		/* Close drains the queue, the kernel calling it included. */
		pthread_mutex_unlock(&reg_mu);
		dao_log_at(c->log_level, DAO_LOG_ERROR,
			   "dao_close called from inside a kernel function on the device that runs it");
		return DAO_ERR_REENTRANT;
	}
	c->closing = true;
	while (c->active)
		pthread_cond_wait(&reg_cv, &reg_mu);
	reg[idx - 1].c = NULL;
	/* Only now: until its calls drained, the tag still named this context. */
	ctx_tag_free(c->tag);
	pthread_mutex_unlock(&reg_mu);
	dao_log_scope_push(c->log_level);

	d = c->dev;
	pthread_mutex_lock(&d->mu);
	n = release_all(c);
	sync_op.ctx = c;
	queue_push(d, &sync_op);
	op_wait(d, &sync_op);
	st = c->failure;
	pthread_mutex_unlock(&d->mu);
	if (n)
		dao_warn("context closed with %llu unreleased handle%s",
			 (unsigned long long)n, n == 1 ? "" : "s");
	if (leaked)
		*leaked = n;

	pthread_mutex_lock(&reg_mu);
	if (--d->nctx == 0) {
		for (int k = 0; k <= DAO_BACKEND_CUDA_EXPLICIT; k++)
			if (shared_dev[k] == d)
				shared_dev[k] = NULL;
	} else {
		d = NULL;
	}
	pthread_mutex_unlock(&reg_mu);
	device_destroy(d);
	dao_log_scope_pop();
	free(c->slots);
	free(c);
	return st;
}
