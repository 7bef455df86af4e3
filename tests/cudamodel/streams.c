/* SPDX-License-Identifier: MIT */
/*
 * streams.c - streams, each with a worker thread of its own that runs its
 * operations in order, events, the legacy default stream, and the host's
 * synchronisation calls. Work is asynchronous: a call enqueues and returns.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

struct cm_event {
	unsigned flags;
	bool dead;
	uint32_t refs; /* the handle and each pending record */
	bool recorded;
	struct cm_stream *s; /* of the latest record */
	uint64_t index;
	struct cm_vc vc;
	uint64_t time_ns; /* completion of the latest record */
	bool timed;
};

/* A stream waits until op index of stream s has completed. */
struct wait_op {
	struct cm_op op;
	struct cm_stream *s;
	uint64_t index;
};

/* An event's record on stream s. */
struct record_op {
	struct cm_op op;
	struct cm_stream *s;
	struct cm_event *ev;
};

/* Done condition: broadcast whenever an op completes. */
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;

/* Live handles: a pointer set with open addressing (tombstones). */
struct ptr_set {
	void **slot;
	uint32_t cap, used; /* used counts tombstones too */
};

#define TOMB ((void *)1)

static struct ptr_set live_streams, live_events;

static uint32_t slot_of(const void *p, uint32_t cap)
{
	return (uint32_t)(((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static bool set_has(const struct ptr_set *s, const void *p)
{
	if (!s->cap || !p || p == TOMB)
		return false;
	for (uint32_t i = slot_of(p, s->cap);; i = (i + 1) & (s->cap - 1)) {
		if (!s->slot[i])
			return false;
		if (s->slot[i] == p)
			return true;
	}
}

static void set_add(struct ptr_set *s, void *p)
{
	if ((s->used + 1) * 2 > s->cap) {
		struct ptr_set n = { calloc(s->cap ? s->cap * 2 : 64, sizeof(void *)),
				     s->cap ? s->cap * 2 : 64, 0 };

		if (!n.slot)
			cm_fail("out of memory");
		for (uint32_t i = 0; i < s->cap; i++)
			if (s->slot[i] && s->slot[i] != TOMB)
				set_add(&n, s->slot[i]);
		free(s->slot);
		*s = n;
	}
	for (uint32_t i = slot_of(p, s->cap);; i = (i + 1) & (s->cap - 1))
		if (!s->slot[i]) {
			s->slot[i] = p;
			s->used++;
			return;
		}
}

static void set_del(struct ptr_set *s, const void *p)
{
	for (uint32_t i = slot_of(p, s->cap);; i = (i + 1) & (s->cap - 1))
		if (s->slot[i] == p) {
			s->slot[i] = TOMB;
			return;
		}
}

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

static void wait_run(struct cm_op *op)
{
	struct wait_op *w = (struct wait_op *)op;

	while (w->s->completed < w->index)
		pthread_cond_wait(&done, &model.lock);
}

static struct cm_op *wait_op(struct cm_stream *t, uint64_t index)
{
	struct wait_op *w = calloc(1, sizeof(*w));

	if (!w)
		cm_fail("out of memory");
	w->op.run = wait_run;
	w->s = t;
	w->index = index;
	return &w->op;
}

static void record_run(struct cm_op *op)
{
	struct record_op *r = (struct record_op *)op;

	if (r->ev->s == r->s && r->ev->index == op->index)
		r->ev->time_ns = now_ns();
	event_put(r->ev);
}

static void *worker_main(void *arg)
{
	struct cm_stream *s = arg;

	pthread_mutex_lock(&model.lock);
	for (;;) {
		struct cm_op *op = s->head;

		if (!op) {
			if (s->dead)
				break;
			pthread_cond_wait(&s->cv, &model.lock);
			continue;
		}
		op->run(op); /* may drop and retake the lock */
		s->head = op->next;
		if (!s->head)
			s->tail = NULL;
		s->completed = op->index;
		free(op);
		pthread_cond_broadcast(&done);
	}
	s->exited = true;
	cm_actor_free(s->actor);
	pthread_cond_broadcast(&done);
	pthread_mutex_unlock(&model.lock);
	return NULL;
}

static struct cm_stream *stream_new(unsigned flags, bool legacy)
{
	struct cm_stream *s = calloc(1, sizeof(*s));
	pthread_attr_t attr;

	if (!s)
		return NULL;
	s->flags = flags;
	s->legacy = legacy;
	s->actor = cm_actor_new();
	s->vc.c[s->actor] = model.clock[s->actor];
	pthread_cond_init(&s->cv, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&s->worker, &attr, worker_main, s))
		cm_fail("cannot start a stream's worker thread");
	pthread_attr_destroy(&attr);
	s->next_all = model.streams;
	model.streams = s;
	return s;
}

void cm_streams_init(void)
{
	pthread_mutex_lock(&model.lock);
	model.legacy = stream_new(0, true);
	pthread_mutex_unlock(&model.lock);
}

struct cm_stream *cm_stream_of(cudaStream_t h, const char *call, cudaError_t *err)
{
	*err = cudaSuccess;
	if (h == NULL || h == cudaStreamLegacy)
		return model.legacy;
	if (!set_has(&live_streams, h)) {
		*err = cudaErrorInvalidResourceHandle;
		return NULL;
	}
	return (struct cm_stream *)h;
}

static void append(struct cm_stream *s, struct cm_op *op)
{
	op->index = ++s->enqueued;
	op->next = NULL;
	if (s->tail)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	pthread_cond_signal(&s->cv);
}

/* s waits for t's work enqueued so far (legacy default stream rules). */
static void implicit_wait(struct cm_stream *s, struct cm_stream *t)
{
	cm_vc_join(&s->vc, &t->vc);
	if (t->completed >= t->enqueued)
		return;
	append(s, wait_op(t, t->enqueued));
}

void cm_enqueue(struct cm_stream *s, struct cm_op *op, int host_actor, struct cm_vc *host)
{
	if (s->legacy) {
		for (struct cm_stream *t = model.streams; t; t = t->next_all)
			if (t != s && !t->dead && !(t->flags & cudaStreamNonBlocking))
				implicit_wait(s, t);
	} else if (!(s->flags & cudaStreamNonBlocking)) {
		implicit_wait(s, model.legacy);
	}
	cm_vc_join(&s->vc, host);
	s->vc.c[s->actor] = ++model.clock[s->actor];
	append(s, op);
	/* What the host does from now on is not ordered before op. */
	host->c[host_actor] = ++model.clock[host_actor];
}

void cm_host_wait(struct cm_stream *s, uint64_t index, const struct cm_vc *vc)
{
	int a;

	while (s->completed < index)
		pthread_cond_wait(&done, &model.lock);
	cm_vc_join(cm_host_vc(&a), vc);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *out, unsigned int flags)
{
	struct cm_stream *s;

	if (!out)
		return cm_misuse("cudaStreamCreateWithFlags", cudaErrorInvalidValue, "NULL handle");
	if (flags & ~(unsigned)cudaStreamNonBlocking)
		return cm_misuse("cudaStreamCreateWithFlags", cudaErrorInvalidValue,
				 "flags 0x%x", flags);
	cm_lock();
	s = stream_new(flags, false);
	if (s)
		set_add(&live_streams, s);
	cm_unlock();
	if (!s)
		return cm_ret(cudaErrorMemoryAllocation);
	*out = (cudaStream_t)s;
	return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *out)
{
	return cudaStreamCreateWithFlags(out, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t h)
{
	struct cm_stream *s;
	cudaError_t err;

	cm_lock();
	s = h ? cm_stream_of(h, "cudaStreamDestroy", &err) : NULL;
	if (!s || s->legacy) {
		cm_unlock();
		return cm_misuse("cudaStreamDestroy", cudaErrorInvalidResourceHandle,
				 "stream %p is not a live stream", (void *)h);
	}
	/* Work already enqueued still runs; the handle is gone now. */
	set_del(&live_streams, s);
	s->dead = true;
	pthread_cond_signal(&s->cv);
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t h)
{
	struct cm_stream *s;
	struct cm_vc vc;
	cudaError_t err;

	cm_lock();
	s = cm_stream_of(h, "cudaStreamSynchronize", &err);
	if (!s) {
		cm_unlock();
		return cm_misuse("cudaStreamSynchronize", err, "stream %p", (void *)h);
	}
	vc = s->vc;
	cm_host_wait(s, s->enqueued, &vc);
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t h)
{
	struct cm_stream *s;
	cudaError_t err;

	cm_lock();
	s = cm_stream_of(h, "cudaStreamQuery", &err);
	if (!s) {
		cm_unlock();
		return cm_misuse("cudaStreamQuery", err, "stream %p", (void *)h);
	}
	err = s->completed >= s->enqueued ? cudaSuccess : cudaErrorNotReady;
	if (err == cudaSuccess) {
		struct cm_vc vc = s->vc;

		cm_host_wait(s, s->enqueued, &vc);
	}
	cm_unlock();
	return err;
}

cudaError_t cudaDeviceSynchronize(void)
{
	cm_lock();
	for (struct cm_stream *s = model.streams; s; s = s->next_all) {
		struct cm_vc vc = s->vc;

		cm_host_wait(s, s->enqueued, &vc);
	}
	cm_unlock();
	return cudaSuccess;
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
	cm_lock();
	set_add(&live_events, ev);
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
	return set_has(&live_events, h) ? (struct cm_event *)h : NULL;
}

cudaError_t cudaEventDestroy(cudaEvent_t h)
{
	struct cm_event *ev;

	cm_lock();
	ev = event_of(h);
	if (!ev) {
		cm_unlock();
		return cm_misuse("cudaEventDestroy", cudaErrorInvalidResourceHandle,
				 "event %p is not a live event", (void *)h);
	}
	set_del(&live_events, ev);
	ev->dead = true;
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
	int a;

	cm_lock();
	ev = event_of(h);
	s = cm_stream_of(sh, "cudaEventRecord", &err);
	if (!ev || !s) {
		cm_unlock();
		return cm_misuse("cudaEventRecord", cudaErrorInvalidResourceHandle,
				 "event %p, stream %p", (void *)h, (void *)sh);
	}
	op = calloc(1, sizeof(*op));
	if (!op)
		cm_fail("out of memory");
	op->op.run = record_run;
	op->s = s;
	op->ev = ev;
	ev->refs++;
	{
		struct cm_vc *host = cm_host_vc(&a);

		cm_enqueue(s, &op->op, a, host);
	}
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

	cm_lock();
	ev = event_of(h);
	if (!ev) {
		cm_unlock();
		return cm_misuse("cudaEventQuery", cudaErrorInvalidResourceHandle, "event %p",
				 (void *)h);
	}
	if (ev->recorded) {
		if (ev->s->completed >= ev->index && !model.no_query) {
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

	cm_lock();
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
	int a;

	cm_lock();
	ev = event_of(h);
	s = cm_stream_of(sh, "cudaStreamWaitEvent", &err);
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
	op = wait_op(ev->s, ev->index);
	cm_vc_join(&s->vc, &ev->vc);
	{
		struct cm_vc *host = cm_host_vc(&a);

		cm_enqueue(s, op, a, host);
	}
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	struct cm_event *a, *b;
	cudaError_t err = cudaSuccess;

	if (!ms)
		return cm_misuse("cudaEventElapsedTime", cudaErrorInvalidValue, "ms is NULL");
	cm_lock();
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
