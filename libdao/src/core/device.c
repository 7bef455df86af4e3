/* SPDX-License-Identifier: MIT */
/*
 * device.c - a device: what the contexts on one backend share (decision 11):
 * its queue and executor, residency and policy, arena, trace, publisher and
 * statistics. Created from the settings the api layer resolved.
 */
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "backend/backend.h"
#include "base/log.h"
#include "core/ask.h"
#include "core/device.h"
#include "core/executor.h"
#include "core/horizon.h"
#include "core/inbox.h"
#include "core/publish.h"
#include "core/queue.h"
#include "core/record.h"
#include "core/summary.h"
#include "core/victim.h"
#include "policy/policy.h"
#include "trace/trace_writer.h"

void device_destroy(struct device *d)
{
	if (!d)
		return;
	executor_stop(d);
	rec_adopt(d); /* the summary counts every record */
	inbox_destroy(d);
	op_cache_destroy(d);
	summary_write(d);
	publish_close(d);
	if (d->trace.out && dao_trace_writer_close(d->trace.out) != DAO_OK)
		dao_warn("writing the trace failed");
	free(d->trace.path);
	ask_stop(d);
	victim_destroy(d);
	rec_cache_destroy(d);
	arena_destroy(&d->res.arena);
	if (d->be)
		d->be->ops->destroy(d->be);
	pthread_cond_destroy(&d->work_cv);
	pthread_cond_destroy(&d->done_cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

dao_status device_create(struct dao_backend *be, const struct resolved_config *rc,
			 uint64_t host_budget, struct device **out)
{
	/* Aligned: its cache lines are laid out (objects.h). */
	struct device *d = fault_aligned_alloc(_Alignof(struct device), sizeof(*d));
	dao_status st;

	if (!d) {
		be->ops->destroy(be);
		return DAO_ERR_NOMEM;
	}
	/* The policy times the window with them (core/horizon.c). */
	if (!horizon_rates_valid(&be->rates)) {
		dao_err("backend %s: its device rates are not all positive and finite",
			dao_backend_name_of(be));
		be->ops->destroy(be);
		free(d);
		return DAO_ERR_INVALID;
	}
	memset(d, 0, sizeof(*d));
	rec_cache_init(d);
	{
		pthread_mutexattr_t ma;

		/* The job's thread and the executor hand the lock back and
		 * forth for short sections: spin a little before sleeping. */
		pthread_mutexattr_init(&ma);
		pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
		pthread_mutex_init(&d->mu, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	d->mu_cpu = -1;
	d->wake.push_cpu = -1;
	d->wake.exec_cpu = -1;
	pthread_cond_init(&d->work_cv, NULL);
	pthread_cond_init(&d->done_cv, NULL);
	d->be = be;
	d->kind = be->kind;
	d->policy.id = rc->policy;
	d->policy_choice.chosen = rc->policy_explicit;
	d->lookahead = rc->lookahead;
	d->flags = rc->flags;
	d->report.log_level = rc->log_level;
	d->budget = be->arena_bytes;
	d->host.budget = host_budget;
	d->q.next_seq = 1;
	d->recs.next_id = 1;
	d->stats.budget_bytes = d->budget;
	d->stats.host_budget_bytes = d->host.budget;
	victim_init(d);
	st = ask_start(d, policy_ops(rc->policy));
	if (st != DAO_OK) {
		dao_err("policy %s: %s", dao_policy_name(rc->policy), dao_strerror(st));
		device_destroy(d);
		return st;
	}
	if (!arena_init(&d->res.arena, be->arena_bytes, be->align, be->contiguous)) {
		device_destroy(d);
		return DAO_ERR_NOMEM;
	}
	if (rc->trace_path[0]) {
		d->trace.path = fault_strdup(rc->trace_path);
		if (!d->trace.path) {
			device_destroy(d);
			return DAO_ERR_NOMEM;
		}
		st = dao_trace_writer_open(rc->trace_path, &d->trace.out);
		if (st != DAO_OK) {
			dao_err("cannot write trace %s", rc->trace_path);
			device_destroy(d);
			return st;
		}
	}
	if (!inbox_init(d)) {
		device_destroy(d);
		return DAO_ERR_NOMEM;
	}
	memcpy(d->report.job_name, rc->job_name, sizeof(d->report.job_name));
	memcpy(d->report.summary_path, rc->summary_path, sizeof(d->report.summary_path));
	d->report.slurm_job_id = summary_slurm_job_id();
	publish_open(d);
	st = executor_start(d);
	if (st != DAO_OK) {
		device_destroy(d);
		return st;
	}
	*out = d;
	return DAO_OK;
}
