/* SPDX-License-Identifier: MIT */
/*
 * streams.h - streams, each with a worker thread of its own that runs its
 * operations in order, and the legacy default stream's implicit ordering.
 * Work is asynchronous: a call enqueues and returns. The lock held.
 */
#ifndef DAO_CUDAMODEL_STATE_STREAMS_H
#define DAO_CUDAMODEL_STATE_STREAMS_H

#include <cuda_runtime.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/site.h"
#include "check/clocks.h"

/*
 * A stream operation: the first member of each kind's own struct (a copy,
 * a prefetch, a kernel, an event's record, a wait), which its run function
 * casts back to and the worker frees as one block once it has run. The
 * worker knows no kind: it calls run.
 */
struct cm_op {
	uint64_t index; /* position in its stream, from 1 */
	/* Called by the stream's worker with the lock held; it may drop the
	 * lock while the bytes change. */
	void (*run)(struct cm_op *op);
	struct cm_site site;
	struct cm_op *next;
};

struct cm_stream {
	unsigned flags;
	bool legacy, dead;
	int actor;
	struct cm_vc vc;
	uint64_t enqueued, completed;
	struct cm_op *head, *tail;
	pthread_t worker;
	pthread_cond_t cv;
	struct cm_stream *next_all;
};

void cm_streams_init(void); /* once, at start: the legacy default stream */
/* A new stream with its worker, its handle live; NULL without memory. */
struct cm_stream *cm_stream_create(unsigned flags);
/* The handle is gone; work already enqueued still runs. */
void cm_stream_destroy(struct cm_stream *s);
/* The stream a handle names (NULL, cudaStreamLegacy: the legacy one);
 * NULL and cudaErrorInvalidResourceHandle when it is not live. */
struct cm_stream *cm_stream_of(cudaStream_t h, cudaError_t *err);
/* Order op after the calling host thread and (legacy rules) other
 * streams, tick s's clock, append op. */
void cm_enqueue(struct cm_stream *s, struct cm_op *op);
/* Enqueue op (its site: the caller's caller) and check what it reads and
 * writes for races; with wait (a pageable host operand: the runtime's
 * staging), return only once it has run. rd or wr NULL: none. */
void cm_submit(struct cm_stream *s, struct cm_op *op, const void *rd, uint64_t rlen,
	       const void *wr, uint64_t wlen, bool wait, const char *what);
/* A zeroed operation of size bytes (its kind's struct) that runs run. */
void *cm_op_new(size_t size, void (*run)(struct cm_op *op));
/* An operation that waits until op index of t has completed. */
struct cm_op *cm_wait_op(struct cm_stream *t, uint64_t index);
/* Block until op index of s completes, then the host's clock joins vc. */
void cm_host_wait(struct cm_stream *s, uint64_t index, const struct cm_vc *vc);
/* The host waits for everything enqueued on s so far. */
void cm_stream_sync(struct cm_stream *s);
/* The same for every stream. */
void cm_streams_sync_all(void);

#endif /* DAO_CUDAMODEL_STATE_STREAMS_H */
