/* SPDX-License-Identifier: MIT */
/* streams.c - streams and their workers (streams.h). */
#include <stdlib.h>

#include "base/lock.h"
#include "base/ptr_set.h"
#include "base/report.h"
#include "check/races.h"
#include "state/streams.h"

/* A stream waits until op index of stream s has completed. */
struct wait_op {
	struct cm_op op;
	struct cm_stream *s;
	uint64_t index;
};

static struct cm_stream *all;    /* every stream ever made (never freed) */
static struct cm_stream *legacy; /* the legacy default stream */
static struct cm_ptr_set live;   /* the handles the caller may use */
/* Broadcast whenever an op completes. */
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;

static void wait_run(struct cm_op *op)
{
	struct wait_op *w = (struct wait_op *)op;

	while (w->s->completed < w->index)
		cm_wait(&done);
}

void *cm_op_new(size_t size, void (*run)(struct cm_op *op))
{
	struct cm_op *op = calloc(1, size);

	if (!op)
		cm_fail("out of memory");
	op->run = run;
	return op;
}

struct cm_op *cm_wait_op(struct cm_stream *t, uint64_t index)
{
	struct wait_op *w = cm_op_new(sizeof(*w), wait_run);

	w->s = t;
	w->index = index;
	return &w->op;
}

static void *worker_main(void *arg)
{
	struct cm_stream *s = arg;

	cm_lock();
	for (;;) {
		struct cm_op *op = s->head;

		if (!op) {
			if (s->dead)
				break;
			cm_wait(&s->cv);
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
	cm_actor_free(s->actor);
	pthread_cond_broadcast(&done);
	cm_unlock();
	return NULL;
}

static struct cm_stream *stream_new(unsigned flags, bool is_legacy)
{
	struct cm_stream *s = calloc(1, sizeof(*s));
	pthread_attr_t attr;

	if (!s)
		return NULL;
	s->flags = flags;
	s->legacy = is_legacy;
	s->actor = cm_actor_new(&s->vc);
	pthread_cond_init(&s->cv, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&s->worker, &attr, worker_main, s))
		cm_fail("cannot start a stream's worker thread");
	pthread_attr_destroy(&attr);
	s->next_all = all;
	all = s;
	return s;
}

void cm_streams_init(void)
{
	cm_lock();
	legacy = stream_new(0, true);
	cm_unlock();
}

struct cm_stream *cm_stream_create(unsigned flags)
{
	struct cm_stream *s = stream_new(flags, false);

	if (s)
		cm_set_add(&live, s);
	return s;
}

void cm_stream_destroy(struct cm_stream *s)
{
	cm_set_del(&live, s);
	s->dead = true;
	pthread_cond_signal(&s->cv);
}

struct cm_stream *cm_stream_of(cudaStream_t h, cudaError_t *err)
{
	*err = cudaSuccess;
	if (h == NULL || h == cudaStreamLegacy)
		return legacy;
	if (!cm_set_has(&live, h)) {
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
	append(s, cm_wait_op(t, t->enqueued));
}

void cm_enqueue(struct cm_stream *s, struct cm_op *op)
{
	int host_actor;
	struct cm_vc *host = cm_host_vc(&host_actor);

	if (s->legacy) {
		for (struct cm_stream *t = all; t; t = t->next_all)
			if (t != s && !t->dead && !(t->flags & cudaStreamNonBlocking))
				implicit_wait(s, t);
	} else if (!(s->flags & cudaStreamNonBlocking)) {
		implicit_wait(s, legacy);
	}
	cm_vc_join(&s->vc, host);
	cm_vc_tick(&s->vc, s->actor);
	append(s, op);
	/* What the host does from now on is not ordered before op. */
	cm_vc_tick(host, host_actor);
}

void cm_submit(struct cm_stream *s, struct cm_op *op, const void *rd, uint64_t rlen,
	       const void *wr, uint64_t wlen, bool wait, const char *what)
{
	cm_site_here(&op->site);
	cm_enqueue(s, op);
	if (rd)
		cm_check(rd, rlen, false, s->actor, &s->vc, &op->site, what);
	if (wr)
		cm_check(wr, wlen, true, s->actor, &s->vc, &op->site, what);
	if (wait) {
		struct cm_vc vc = s->vc;

		cm_host_wait(s, op->index, &vc);
	}
}

void cm_host_wait(struct cm_stream *s, uint64_t index, const struct cm_vc *vc)
{
	int a;

	while (s->completed < index)
		cm_wait(&done);
	cm_vc_join(cm_host_vc(&a), vc);
}

void cm_stream_sync(struct cm_stream *s)
{
	/* The clock of what is enqueued now: waiting drops the lock, and
	 * what others enqueue meanwhile is not waited for. */
	struct cm_vc vc = s->vc;

	cm_host_wait(s, s->enqueued, &vc);
}

void cm_streams_sync_all(void)
{
	for (struct cm_stream *s = all; s; s = s->next_all)
		cm_stream_sync(s);
}
