/* SPDX-License-Identifier: MIT */
/*
 * stream_calls.c - the calls on streams: create and destroy, and the
 * host's synchronisation with one stream or the whole device (a query that
 * finds a stream done orders the host after it, as a synchronisation).
 */
#include "api/init.h"
#include "base/errors.h"
#include "base/lock.h"
#include "base/report.h"
#include "state/streams.h"

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *out, unsigned int flags)
{
	struct cm_stream *s;

	if (!out)
		return cm_misuse("cudaStreamCreateWithFlags", cudaErrorInvalidValue, "NULL handle");
	if (flags & ~(unsigned)cudaStreamNonBlocking)
		return cm_misuse("cudaStreamCreateWithFlags", cudaErrorInvalidValue,
				 "flags 0x%x", flags);
	cm_enter();
	s = cm_stream_create(flags);
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

	cm_enter();
	s = h ? cm_stream_of(h, &err) : NULL;
	if (!s || s->legacy) {
		cm_unlock();
		return cm_misuse("cudaStreamDestroy", cudaErrorInvalidResourceHandle,
				 "stream %p is not a live stream", (void *)h);
	}
	cm_stream_destroy(s);
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t h)
{
	struct cm_stream *s;
	cudaError_t err;

	cm_enter();
	s = cm_stream_of(h, &err);
	if (!s) {
		cm_unlock();
		return cm_misuse("cudaStreamSynchronize", err, "stream %p", (void *)h);
	}
	cm_stream_sync(s);
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t h)
{
	struct cm_stream *s;
	cudaError_t err;

	cm_enter();
	s = cm_stream_of(h, &err);
	if (!s) {
		cm_unlock();
		return cm_misuse("cudaStreamQuery", err, "stream %p", (void *)h);
	}
	err = s->completed >= s->enqueued ? cudaSuccess : cudaErrorNotReady;
	if (err == cudaSuccess)
		cm_stream_sync(s);
	cm_unlock();
	return err;
}

cudaError_t cudaDeviceSynchronize(void)
{
	cm_enter();
	cm_streams_sync_all();
	cm_unlock();
	return cudaSuccess;
}
