/* SPDX-License-Identifier: MIT */
/*
 * executor.c - the one thread per device that runs the queue: for each op,
 * make its operands resident, prefetch what the window needs next, run it,
 * retire it. The decisions live in residency.c and victim.c; this file only
 * sequences them.
 */
#include <stdlib.h>

#include "core/core.h"
#include "base/log.h"

static bool runnable(const struct device *d)
{
	if (!d->qhead)
		return false;
	if (!(d->flags & DAO_CONFIG_DETERMINISTIC))
		return true;
	/* A full window, or someone waits for what is queued. */
	return queue_window_full(d) || d->flush || d->stop;
}

static void run_kernel(struct device *d, struct op *op)
{
	struct ctx *c = op->ctx;
	struct dao_kernel_run kr;
	dao_fence after;
	uint64_t kseq = 0, stall;
	dao_status st;

	if (c->failure || d->failure) {
		res_skip(d, op);
		return;
	}
	st = res_prepare_kernel(d, op, &after);
	if (st != DAO_OK) {
		dao_err("kernel %s could not be made resident: %s", op->name ? op->name : "(unnamed)",
			dao_strerror(st));
		c->failure = st;
		res_retire(d, op); /* drops the pins prepare took */
		return;
	}
	/* Copies for the next kernels overlap this one. */
	d->pinned_op = op;
	res_prefetch(d);
	kr = (struct dao_kernel_run){
		.fn = op->fn,
		.user = op->user,
		.ptrs = op->ptrs,
		.sizes = op->sizes,
		.count = op->nargs,
		.flops = op->flops,
		.resident_bytes = d->arena.used,
		.name = op->name,
	};
	for (uint32_t i = 0; i < op->nopnd; i++)
		kr.operand_bytes += op->opnd[i].rec->size;
	pthread_mutex_unlock(&d->mu);
	st = d->be->ops->kernel(d->be, &kr, &after, &kseq);
	stall = d->be->ops->last_stall_ns(d->be);
	pthread_mutex_lock(&d->mu);
	if (stall) {
		d->stats.stalls++;
		d->stats.stall_ns += stall;
	}
	if (st != DAO_OK && !c->failure) {
		dao_err("kernel %s failed", op->name ? op->name : "(unnamed)");
		c->failure = st == DAO_ERR_KERNEL ? st : DAO_ERR_KERNEL;
	}
	d->stats.kernels++;
	dao_fence_add(&d->issued, DAO_ENGINE_COMPUTE, kseq);
	res_after_kernel(d, op, kseq);
	d->pinned_op = NULL;
	res_retire(d, op);
	res_prefetch(d);
}

static void process(struct device *d, struct op *op)
{
	switch (op->kind) {
	case OP_KERNEL:
		run_kernel(d, op);
		break;
	case OP_WRITE:
		op->result = op->ctx->failure || d->failure ? DAO_ERR_FAILED : res_host_write(d, op);
		if (op->result == DAO_ERR_FAILED)
			res_skip(d, op);
		break;
	case OP_READ:
		op->result = op->ctx->failure || d->failure ? DAO_ERR_FAILED : res_host_read(d, op);
		if (op->result == DAO_ERR_FAILED)
			res_skip(d, op);
		break;
	case OP_FREE:
		res_free_rec(d, op->free_rec);
		break;
	case OP_ITER:
		res_iteration(d, op);
		break;
	case OP_SYNC: {
		dao_fence all = d->issued;

		res_wait(d, &all);
		op->result = DAO_OK;
		break;
	}
	}
}

static void *executor_main(void *arg)
{
	struct device *d = arg;

	pthread_mutex_lock(&d->mu);
	for (;;) {
		struct op *op;
		struct ctx *c;
		bool blocking;

		while (!runnable(d)) {
			if (d->stop && !d->qhead)
				goto out;
			d->exec_waiting = true;
			pthread_cond_wait(&d->work_cv, &d->mu);
			d->exec_waiting = false;
		}
		op = d->qhead;
		d->qhead = op->next;
		if (!d->qhead)
			d->qtail = NULL;
		if (d->pf_op == op) {
			d->pf_op = op->next;
			d->pf_idx = 0;
		}
		d->now_seq = op->seq;
		d->executing = true;
		process(d, op);
		d->executing = false;
		if (d->pub)
			publish_tick(d);
		c = op->ctx;
		blocking = op->blocking;
		d->queued--;
		if (c)
			c->queued--;
		if (blocking) {
			d->flush--;
			op->done = true; /* the waiter owns op from here on */
		} else {
			free(op);
		}
		if (d->done_waiters)
			pthread_cond_broadcast(&d->done_cv);
	}
out: {
	dao_fence all = d->issued;

	res_wait(d, &all);
}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

dao_status executor_start(struct device *d)
{
	if (pthread_create(&d->thread, NULL, executor_main, d))
		return DAO_ERR_NOMEM;
	d->thread_started = true;
	return DAO_OK;
}

void executor_stop(struct device *d)
{
	if (!d->thread_started)
		return;
	pthread_mutex_lock(&d->mu);
	d->stop = true;
	pthread_cond_signal(&d->work_cv);
	pthread_mutex_unlock(&d->mu);
	pthread_join(d->thread, NULL);
	d->thread_started = false;
}
