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
static uint32_t ctx_serial;
static struct device *shared_dev[DAO_BACKEND_CUDA_EXPLICIT + 1];

dao_status ctx_enter(dao_ctx h, struct ctx **out)
{
	uint32_t idx = (uint32_t)h.id, gen = (uint32_t)(h.id >> 32);
	struct ctx *c;

	pthread_mutex_lock(&reg_mu);
	if (idx == 0 || idx > nreg || reg[idx - 1].gen != gen || !(c = reg[idx - 1].c) ||
	    c->closing) {
		pthread_mutex_unlock(&reg_mu);
		return DAO_ERR_CLOSED;
	}
	c->active++;
	pthread_mutex_unlock(&reg_mu);
	pthread_mutex_lock(&c->dev->mu);
	/* Deterministic mode: the job's calls interleave with whole ops only,
	 * so what the executor sees never depends on thread timing. */
	if (c->dev->flags & DAO_CONFIG_DETERMINISTIC)
		queue_wait_turn(c->dev);
	*out = c;
	return DAO_OK;
}

void ctx_leave(struct ctx *c)
{
	pthread_mutex_unlock(&c->dev->mu);
	pthread_mutex_lock(&reg_mu);
	if (--c->active == 0)
		pthread_cond_broadcast(&reg_cv);
	pthread_mutex_unlock(&reg_mu);
}

static dao_status reg_insert(struct ctx *c)
{
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
	reg[i].gen++;
	reg[i].c = c;
	c->id = ((uint64_t)reg[i].gen << 32) | (i + 1);
	c->tag = ++ctx_serial & 0xfff;
	if (!c->tag)
		c->tag = ++ctx_serial & 0xfff;
	ctx_tag_set(c->tag, true);
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
	victim_destroy(d);
	arena_destroy(&d->arena);
	if (d->be)
		d->be->ops->destroy(d->be);
	pthread_cond_destroy(&d->work_cv);
	pthread_cond_destroy(&d->done_cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
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
	d->budget = be->arena_bytes;
	d->host_budget = rc->host_budget
				 ? rc->host_budget
				 : config_percent_of(dao_host_memory_bytes(), rc->host_budget_percent);
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
	*out = (dao_ctx){ c->id };
	return DAO_OK;
}

dao_status dao_open(const dao_config *cfg, dao_ctx *out)
{
	struct resolved_config rc;
	struct dao_backend *be;
	struct device *d;
	dao_status st;
	dao_backend_kind slot;

	if (!out)
		return DAO_ERR_NULL;
	st = config_resolve(cfg, &rc);
	if (st != DAO_OK)
		return st;
	dao_log_set_level(rc.log_level);

	pthread_mutex_lock(&reg_mu);
	if (rc.backend == DAO_BACKEND_AUTO)
		rc.backend = auto_backend();
	slot = rc.backend;
	if (!(rc.flags & DAO_CONFIG_PRIVATE) && (d = shared_dev[slot])) {
		uint64_t want = rc.device_budget
					? rc.device_budget
					: config_percent_of(d->be->device_memory,
							    rc.device_budget_percent);

		if ((rc.budget_explicit && want != d->budget) ||
		    (rc.policy_explicit && rc.policy != d->policy)) {
			pthread_mutex_unlock(&reg_mu);
			dao_err("a context is already open on the %s device with budget %llu and policy %s",
				dao_backend_name(d->kind), (unsigned long long)d->budget,
				dao_policy_name(d->policy));
			return DAO_ERR_CONFLICT;
		}
		st = open_on(d, &rc, true, out);
		pthread_mutex_unlock(&reg_mu);
		return st;
	}
	st = backend_open(&rc, &be);
	if (st == DAO_OK)
		st = device_create(be, &rc, &d);
	if (st == DAO_OK) {
		st = open_on(d, &rc, !(rc.flags & DAO_CONFIG_PRIVATE), out);
		if (st != DAO_OK)
			device_destroy(d);
		else if (!(rc.flags & DAO_CONFIG_PRIVATE))
			shared_dev[slot] = d;
	}
	pthread_mutex_unlock(&reg_mu);
	if (st == DAO_OK)
		dao_info("opened context on %s backend, budget %llu bytes, policy %s, lookahead %u",
			 dao_backend_name(d->kind), (unsigned long long)d->budget,
			 dao_policy_name(d->policy), d->lookahead);
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
	st = config_resolve(cfg, &rc);
	if (st != DAO_OK) {
		be->ops->destroy(be);
		return st;
	}
	dao_log_set_level(rc.log_level);
	st = device_create(be, &rc, &d);
	if (st != DAO_OK)
		return st;
	pthread_mutex_lock(&reg_mu);
	st = open_on(d, &rc, false, out);
	pthread_mutex_unlock(&reg_mu);
	if (st != DAO_OK)
		device_destroy(d);
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
	c->closing = true;
	ctx_tag_set(c->tag, false);
	while (c->active)
		pthread_cond_wait(&reg_cv, &reg_mu);
	reg[idx - 1].c = NULL;
	pthread_mutex_unlock(&reg_mu);

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
	free(c->slots);
	free(c);
	return st;
}
