/* SPDX-License-Identifier: MIT */
/*
 * record.c - record lifetime: the one file that creates and destroys
 * records (struct rec, one per owning buffer). A record lives while a handle
 * names it or the queue still uses it; the last of those frees it, the
 * executor through residency.c, the job's thread here.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/log.h"
#include "core/inbox.h"
#include "core/queue.h"
#include "core/record.h"
#include "core/victim.h"
#include "trace/trace_writer.h"

/* Chunks start small (a job with a few buffers keeps a few KiB) and
 * double up to a huge page, which the kernel may then back with one page:
 * a million records fault in about 150 pages instead of 75,000. */
#define CHUNK_FIRST (16u << 10)
#define CHUNK_MAX (2u << 20)

#ifdef __SANITIZE_ADDRESS__
/* Under AddressSanitizer every record is its own allocation, so a use of a
 * destroyed record is still caught. */
static struct rec *rec_alloc(struct device *d)
{
	(void)d;
	return calloc(1, sizeof(struct rec));
}

static void rec_free(struct device *d, struct rec *r)
{
	(void)d;
	free(r);
}
#else
static bool chunk_add(struct rec_cache *rc)
{
	size_t size = rc->next_size ? rc->next_size : CHUNK_FIRST;
	void *p;

	if (rc->nchunks == rc->cap) {
		uint32_t cap = rc->cap ? rc->cap * 2 : 16;
		void **v = realloc(rc->chunks, cap * sizeof(*v));

		if (!v)
			return false;
		rc->chunks = v;
		rc->cap = cap;
	}
	p = size == CHUNK_MAX ? aligned_alloc(CHUNK_MAX, size) : malloc(size);
	if (!p)
		return false;
	if (size == CHUNK_MAX)
		madvise(p, size, MADV_HUGEPAGE); /* advice: fine if refused */
	rc->chunks[rc->nchunks++] = p;
	rc->cur = p;
	rc->left = size;
	rc->next_size = size < CHUNK_MAX ? size * 2 : CHUNK_MAX;
	return true;
}

static struct rec *rec_alloc(struct device *d)
{
	struct rec_cache *rc = &d->recs;
	struct rec *r = rc->free;

	if (r) {
		rc->free = r->all_next;
	} else {
		if (rc->left < sizeof(*r) && !chunk_add(rc))
			return NULL;
		r = (struct rec *)(void *)rc->cur;
		rc->cur += sizeof(*r);
		rc->left -= sizeof(*r);
	}
	memset(r, 0, sizeof(*r));
	return r;
}

static void rec_free(struct device *d, struct rec *r)
{
	r->all_next = d->recs.free;
	d->recs.free = r;
}
#endif

void rec_cache_destroy(struct device *d)
{
	struct rec_cache *rc = &d->recs;

	for (uint32_t i = 0; i < rc->nchunks; i++)
		free(rc->chunks[i]);
	free(rc->chunks);
	*rc = (struct rec_cache){ 0 };
}

dao_status rec_create(struct device *d, struct ctx *c, uint64_t bytes, struct rec **out)
{
	struct rec *r = rec_alloc(d);

	if (!r)
		return DAO_ERR_NOMEM;
	r->id = d->next_rec_id++;
	r->size = bytes;
	r->asize = arena_round(&d->res.arena, bytes);
	if (r->asize > d->res.max_asize)
		d->res.max_asize = r->asize;
	r->ctx = c;
	r->refs = 1;
	r->host_valid = true; /* "the job's data", undefined until written */
	r->heap_pos = -1;
	r->all_next = d->all_recs;
	if (r->all_next)
		r->all_next->all_prev = r;
	d->all_recs = r;
	d->host_committed += bytes;
	d->stats.live_buffers++;
	*out = r;
	return DAO_OK;
}

void rec_destroy(struct device *d, struct rec *r)
{
	if (r->all_prev)
		r->all_prev->all_next = r->all_next;
	else
		d->all_recs = r->all_next;
	if (r->all_next)
		r->all_next->all_prev = r->all_prev;
	d->stats.live_buffers--;
	rec_free(d, r);
}

void rec_unref(struct device *d, struct rec *r)
{
	if (--r->refs)
		return;
	/* Every launch that named it is in the table now (core/inbox.c). */
	inbox_drain_all(d);
	r->released = true;
	d->host_committed -= r->size;
	if (d->trace) {
		trace_buffer_once(d, r);
		dao_trace_writer_free(d->trace, r->id);
	}
	if (r->use_head)
		return; /* the executor frees it after its last use */
	if (r->blk && !r->pin)
		victim_update(d, r); /* first to go until its free runs */
	if (!r->blk && !r->host) {
		rec_destroy(d, r);
		return;
	}
	{
		struct op *op = calloc(1, sizeof(*op));

		if (!op) {
			/* Cannot queue the free: keep the record until close frees
			 * the device; memory, not correctness, is lost. */
			dao_err("out of memory queueing a free");
			return;
		}
		op->kind = OP_FREE;
		op->free_rec = r;
		queue_wait_turn(d);
		inbox_push(d, op);
	}
}

void trace_buffer_once(struct device *d, struct rec *r)
{
	if (!d->trace || r->traced)
		return;
	r->traced = true;
	dao_trace_writer_buffer(d->trace, r->id, r->size, r->label[0] ? "buf" : NULL,
				r->label[0] ? r->label : NULL);
}
