/* SPDX-License-Identifier: MIT */
/*
 * executor.c - the one thread per device that runs the queue: for each op,
 * make its operands resident, prefetch what the window needs next, run it,
 * retire it. The decisions live in residency.c and victim.c; this file only
 * sequences them.
 */
#include <sched.h>
#include <stdlib.h>

#include "base/fault.h"
#include "backend/backend.h"
#include "base/log.h"
#include "core/executor.h"
#include "core/horizon.h"
#include "core/inbox.h"
#include "core/lock.h"
#include "core/publish.h"
#include "core/queue.h"
#include "core/record.h"
#include "core/residency.h"

/* What an op logs follows the level of the context it belongs to. */
static dao_log_level op_log_level(const struct device *d, const struct op *op)
{
	if (op->ctx)
		return op->ctx->log_level;
	if (op->kind == OP_FREE && op->free_rec->ctx)
		return op->free_rec->ctx->log_level;
	return (dao_log_level)d->report.log_level;
}

static bool runnable(const struct device *d)
{
	if (!d->q.head)
		return false;
	if (!(d->flags & DAO_CONFIG_DETERMINISTIC))
		return true;
	/* A full window, or someone waits for what is queued. */
	return queue_window_full(d) || d->q.flush || d->thread.stop;
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
		/* Atomic: launches look at it without dev->mu (inbox.c). */
		__atomic_store_n(&c->failure, st, __ATOMIC_RELAXED);
		res_retire(d, op); /* drops the pins prepare took */
		return;
	}
	/* Copies for the next kernels overlap this one. */
	d->q.pinned_op = op;
	res_prefetch(d);
	kr = (struct dao_kernel_run){
		.fn = op->fn,
		.user = op->user,
		.ptrs = op->ptrs,
		.sizes = op->sizes,
		.count = op->nargs,
		.flops = op->flops,
		.resident_bytes = d->res.arena.used,
		.name = op->name,
	};
	for (uint32_t i = 0; i < op->nopnd; i++)
		kr.operand_bytes += op->opnd[i].rec->size;
	dev_unlock(d);
	st = d->be->ops->kernel(d->be, &kr, &after, &kseq);
	stall = d->be->ops->last_stall_ns(d->be);
	dev_lock(d);
	horizon_kernel_passed(d, op, stall);
	if (stall) {
		d->stats.stalls++;
		d->stats.stall_ns += stall;
	}
	if (st != DAO_OK && !c->failure) {
		/* The device's own failure, where it is one, says more than
		 * "a kernel failed": it is what the context lost. */
		dao_err("kernel %s failed%s", op->name ? op->name : "(unnamed)",
			st == DAO_ERR_KERNEL ? "" : ": the device failed");
		__atomic_store_n(&c->failure, st, __ATOMIC_RELAXED);
	}
	if (st != DAO_OK)
		res_kernel_failed(op);
	d->stats.kernels++;
	dao_fence_add(&d->issued, DAO_ENGINE_COMPUTE, kseq);
	res_after_kernel(d, op, kseq);
	d->q.pinned_op = NULL;
	res_retire(d, op);
	res_prefetch(d);
}

/*
 * A host kernel (dao.h: DAO_LAUNCH_HOST): its operands are made current on
 * the host, the copies for the next kernels are issued, and the executor
 * waits until the host copies are idle before it calls the function with
 * them. Nothing goes to the device's compute engine: what the function
 * wrote is ordered before what follows because the executor issues that
 * only after the function returns.
 */
static void run_host_kernel(struct device *d, struct op *op)
{
	struct ctx *c = op->ctx;
	dao_fence idle;
	dao_status st;
	int rc = 0;

	if (c->failure || d->failure) {
		res_skip(d, op);
		return;
	}
	d->q.pinned_op = op;
	st = res_prepare_host_kernel(d, op, &idle);
	if (st == DAO_OK) {
		res_prefetch(d);
		st = res_wait(d, &idle);
	}
	if (st != DAO_OK) {
		dao_err("host kernel %s could not be given its operands: %s",
			op->name ? op->name : "(unnamed)", dao_strerror(st));
		__atomic_store_n(&c->failure, st, __ATOMIC_RELAXED);
		d->q.pinned_op = NULL;
		res_retire(d, op);
		return;
	}
	if (op->fn) {
		dao_kernel_args args = { .user = op->user, .ptrs = op->ptrs, .sizes = op->sizes,
					 .count = op->nargs };

		res_host_kernel_touch(d, op, false);
		dev_unlock(d);
		rc = op->fn(&args);
		dev_lock(d);
		res_host_kernel_touch(d, op, true);
	}
	if (rc && !c->failure) {
		dao_err("kernel %s failed", op->name ? op->name : "(unnamed)");
		__atomic_store_n(&c->failure, DAO_ERR_KERNEL, __ATOMIC_RELAXED);
	}
	if (rc)
		res_kernel_failed(op);
	d->stats.kernels++;
	res_after_host_kernel(d, op);
	d->q.pinned_op = NULL;
	res_retire(d, op);
	res_prefetch(d);
}

static void process(struct device *d, struct op *op)
{
	switch (op->kind) {
	case OP_KERNEL:
		if (op->on_host)
			run_host_kernel(d, op);
		else
			run_kernel(d, op);
		break;
	case OP_WRITE:
		op->result = op->ctx->failure || d->failure ? DAO_ERR_FAILED : res_host_write(d, op);
		if (op->result == DAO_ERR_FAILED)
			res_skip(d, op);
		break;
	case OP_READ:
		op->result = op->ctx->failure || d->failure ? res_host_read_failed(d, op)
							    : res_host_read(d, op);
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

/*
 * Before sleeping on an empty queue, look for new work for a while: a job
 * that launches back to back then never has to wake the executor, which
 * costs microseconds per kernel across CPUs. When the job last pushed from
 * another CPU, watch the queue without leaving the CPU for up to
 * DEV_SPIN_NS (a system call per look would cost more than the launch it
 * waits for); when it pushed from this CPU, it runs only if this thread
 * yields, so look POLL_ROUNDS times, yielding in between. Called and returns
 * with dev->mu held; the caller looks at the queue again.
 */
#define POLL_ROUNDS 64

static void poll_for_work(struct device *d)
{
	uint64_t seen = d->q.pushed;
	int me = sched_getcpu(), from = __atomic_load_n(&d->wake.push_cpu, __ATOMIC_RELAXED);
	bool elsewhere = me >= 0 && from >= 0 && from != me;
	/* A launch through the inbox publishes the cell at its head, whose
	 * number is the head itself until then (the queue is empty: every
	 * earlier op is finished and its cell given back). Against that, not
	 * the number seen now, which may be published already. */
	const uint64_t *cell = NULL;
	uint64_t cell_seen = 0;

	if (inbox_enabled(d)) {
		cell = inbox_seq(&d->inbox, d->inbox.head);
		cell_seen = d->inbox.head;
	}
	dev_unlock(d);
	if (elsewhere) {
		dev_spin_until_changed(&d->q.pushed, seen, cell, cell_seen);
	} else {
		for (unsigned i = 0; i < POLL_ROUNDS; i++) {
			sched_yield();
			if (__atomic_load_n(&d->q.pushed, __ATOMIC_RELAXED) != seen ||
			    (cell && __atomic_load_n(cell, __ATOMIC_RELAXED) != cell_seen))
				break;
		}
	}
	dev_lock(d);
}

static void *executor_main(void *arg)
{
	struct device *d = arg;

	queue_consumer_set(d);
	dev_lock(d);
	for (;;) {
		struct op *op;
		struct ctx *c;
		bool blocking, polled = false;

		inbox_drain(d);
		rec_adopt(d); /* buffers created without dev->mu: for the publisher */
		while (!runnable(d)) {
			if (d->thread.stop && !d->q.head)
				goto out;
			if (!d->q.head && !d->thread.stop && !polled) {
				poll_for_work(d);
				inbox_drain(d);
				polled = true;
				continue;
			}
			/* Sequentially consistent, then one more look at the
			 * inbox: a launch publishes its cell, then looks at
			 * exec_waiting (inbox.c), so one of the two sees the
			 * other. */
			__atomic_store_n(&d->wake.exec_waiting, true, __ATOMIC_SEQ_CST);
			inbox_drain(d);
			if (!runnable(d))
				dev_cond_wait(d, &d->work_cv);
			__atomic_store_n(&d->wake.exec_waiting, false, __ATOMIC_RELAXED);
			inbox_drain(d);
			polled = false;
		}
		op = d->q.head;
		d->q.head = op->next;
		if (!d->q.head)
			d->q.tail = NULL;
		if (d->res.pf_op == op) {
			d->res.pf_op = op->next;
			d->res.pf_idx = 0;
		}
		d->q.now_seq = op->seq;
		d->q.executing = true;
		dao_log_scope_push(op_log_level(d, op));
		process(d, op);
		dao_log_scope_pop();
		d->q.executing = false;
		/* Busy: readers can wait for the coarse clock to move. */
		if (d->report.pub)
			publish_tick(d, runnable(d));
		c = op->ctx;
		blocking = op->blocking;
		d->q.queued--;
		if (c)
			__atomic_store_n(&c->finished, c->finished + 1, __ATOMIC_RELEASE);
		if (blocking) {
			d->q.flush--;
			op->done = true; /* the waiter owns op from here on */
		} else if (op->in_inbox) {
			inbox_retire(d, op);
		} else {
			op_release(d, op);
		}
		if (queue_op_finished(d, c, blocking)) {
			/* Outside dev->mu: the woken thread's first step is
			 * to take it (queue.c). */
			dev_unlock(d);
			pthread_cond_broadcast(&d->done_cv);
			dev_lock(d);
		}
	}
out: {
	dao_fence all = d->issued;

	dao_log_scope_push((dao_log_level)d->report.log_level);
	res_wait(d, &all);
	dao_log_scope_pop();
}
	dev_unlock(d);
	return NULL;
}

dao_status executor_start(struct device *d)
{
	if (fault_pthread_create(&d->thread.id, NULL, executor_main, d))
		return DAO_ERR_NOMEM;
	d->thread.started = true;
	return DAO_OK;
}

void executor_stop(struct device *d)
{
	if (!d->thread.started)
		return;
	dev_lock(d);
	d->thread.stop = true;
	pthread_cond_signal(&d->work_cv);
	dev_unlock(d);
	pthread_join(d->thread.id, NULL);
	d->thread.started = false;
}
