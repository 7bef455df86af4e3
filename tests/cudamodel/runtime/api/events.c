/* SPDX-License-Identifier: MIT */
/*
 * events.c - events: a record marks a point of a stream (timed by its
 * worker when it gets there); cudaStreamWaitEvent makes a stream's worker
 * wait for it; cudaEventQuery and cudaEventSynchronize order the host after
 * it (a query only when it sees it done, and never under
 * DAO_CUDAMODEL_QUERY=0); cudaEventElapsedTime for timed events. An event
 * lives until its handle is destroyed and its pending records have run.
 */
#include <stdlib.h>
#include <time.h>

#include "api/init.h"
#include "base/errors.h"
#include "base/lock.h"
#include "base/ptr_set.h"
#include "base/report.h"
#include "check/clocks.h"
#include "state/streams.h"

struct cm_event {
	unsigned flags;
	uint32_t refs; /* the handle and each pending record */
	bool recorded;
	struct cm_stream *s; /* of the latest record */
	uint64_t index;
	struct cm_vc vc;
	uint64_t time_ns; /* completion of the latest record */
};

/* An event's record on stream s. */
struct record_op {
	struct cm_op op;
	struct cm_stream *s;
	struct cm_event *ev;
};

static struct cm_ptr_set live; /* the handles the caller may use */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void event_put(struct cm_event *ev)
{
	if (--ev->refs == 0)
		free(ev);
}

static void record_run(struct cm_op *op)
{
	struct record_op *r = (struct record_op *)op;

	if (r->ev->s == r->s && r->ev->index == op->index)
		r->ev->time_ns = now_ns();
	event_put(r->ev);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *out, unsigned int flags)
{
	struct cm_event *ev;

	if (!out)
		return cm_misuse("cudaEventCreateWithFlags", cudaErrorInvalidValue, "NULL handle");
	if (flags & ~(unsigned)(cudaEventBlockingSync | cudaEventDisableTiming |
				cudaEventInterprocess))
		return cm_misuse("cudaEventCreateWithFlags", cudaErrorInvalidValue, "flags 0x%x",
				 flags);
	if ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming))
		return cm_misuse("cudaEventCreateWithFlags", cudaErrorInvalidValue,
				 "interprocess events must disable timing");
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return cm_ret(cudaErrorMemoryAllocation);
	ev->flags = flags;
	ev->refs = 1;
	cm_enter();
	cm_set_add(&live, ev);
	cm_unlock();
	*out = (cudaEvent_t)ev;
	return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *out)
{
	return cudaEventCreateWithFlags(out, cudaEventDefault);
}

static struct cm_event *event_of(cudaEvent_t h)
{
	return cm_set_has(&live, h) ? (struct cm_event *)h : NULL;
}

cudaError_t cudaEventDestroy(cudaEvent_t h)
{
	struct cm_event *ev;

	cm_enter();
	ev = event_of(h);
	if (!ev) {
		cm_unlock();
		return cm_misuse("cudaEventDestroy", cudaErrorInvalidResourceHandle,
				 "event %p is not a live event", (void *)h);
	}
	cm_set_del(&live, ev);
	event_put(ev);
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t h, cudaStream_t sh)
{
	struct cm_event *ev;
	struct cm_stream *s;
	struct record_op *op;
	cudaError_t err;

	cm_enter();
	ev = event_of(h);
	s = cm_stream_of(sh, &err);
	if (!ev || !s) {
		cm_unlock();
		return cm_misuse("cudaEventRecord", cudaErrorInvalidResourceHandle,
				 "event %p, stream %p", (void *)h, (void *)sh);
	}
	op = cm_op_new(sizeof(*op), record_run);
	op->s = s;
	op->ev = ev;
	ev->refs++;
	cm_enqueue(s, &op->op);
	ev->recorded = true;
	ev->s = s;
	ev->index = op->op.index;
	ev->vc = s->vc;
	ev->time_ns = 0;
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t h)
{
	struct cm_event *ev;
	cudaError_t err = cudaSuccess;

	cm_enter();
	ev = event_of(h);
	if (!ev) {
		cm_unlock();
		return cm_misuse("cudaEventQuery", cudaErrorInvalidResourceHandle, "event %p",
				 (void *)h);
	}
	if (ev->recorded) {
		if (ev->s->completed >= ev->index && !cm_config.no_query) {
			struct cm_vc vc = ev->vc;

			cm_host_wait(ev->s, ev->index, &vc);
		} else {
			err = cudaErrorNotReady;
		}
	}
	cm_unlock();
	return err; /* NotReady is not an error: the last error stays */
}

cudaError_t cudaEventSynchronize(cudaEvent_t h)
{
	struct cm_event *ev;

	cm_enter();
	ev = event_of(h);
	if (!ev) {
		cm_unlock();
		return cm_misuse("cudaEventSynchronize", cudaErrorInvalidResourceHandle,
				 "event %p", (void *)h);
	}
	if (ev->recorded) {
		struct cm_vc vc = ev->vc;

		cm_host_wait(ev->s, ev->index, &vc);
	}
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t sh, cudaEvent_t h, unsigned int flags)
{
	struct cm_event *ev;
	struct cm_stream *s;
	struct cm_op *op;
	cudaError_t err;

	cm_enter();
	ev = event_of(h);
	s = cm_stream_of(sh, &err);
	if (!ev || !s || flags) {
		cm_unlock();
		return cm_misuse("cudaStreamWaitEvent",
				 flags ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle,
				 "stream %p, event %p, flags 0x%x", (void *)sh, (void *)h, flags);
	}
	if (!ev->recorded) {
		cm_unlock();
		return cudaSuccess; /* nothing to wait for */
	}
	op = cm_wait_op(ev->s, ev->index);
	cm_vc_join(&s->vc, &ev->vc);
	cm_enqueue(s, op);
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	struct cm_event *a, *b;
	cudaError_t err = cudaSuccess;

	if (!ms)
		return cm_misuse("cudaEventElapsedTime", cudaErrorInvalidValue, "ms is NULL");
	cm_enter();
	a = event_of(start);
	b = event_of(end);
	if (!a || !b || (a->flags & cudaEventDisableTiming) || (b->flags & cudaEventDisableTiming) ||
	    !a->recorded || !b->recorded) {
		cm_unlock();
		return cm_misuse("cudaEventElapsedTime", cudaErrorInvalidResourceHandle,
				 "events %p and %p must be live, timed and recorded", (void *)start,
				 (void *)end);
	}
	if (a->s->completed < a->index || b->s->completed < b->index)
		err = cudaErrorNotReady;
	else
		*ms = (float)((double)((int64_t)(b->time_ns - a->time_ns)) / 1e6);
	cm_unlock();
	return cm_ret(err);
}
