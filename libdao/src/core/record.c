/* SPDX-License-Identifier: MIT */
/*
 * record.c - record lifetime: the one file that creates and destroys
 * records (struct rec, one per owning buffer). A record lives while a handle
 * names it or the queue still uses it; the last of those frees it, the
 * executor through residency.c, the job's thread here.
 *
 * Creating takes no dev->mu (Documentation/design.md, Locking): the record
 * comes from its context's batch or from the destroyed ones, is written
 * (its first line, heap_pos and host_valid only) and pushed onto
 * d->recs.cache.fresh; whoever holds dev->mu next moves the fresh records onto
 * the device's list of live ones and counts them (rec_adopt), before
 * anything can destroy them.
 */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "core/chunks.h"
#include "core/inbox.h"
#include "core/queue.h"
#include "core/record.h"
#include "core/victim.h"
#include "trace/trace_writer.h"

/* Records come from huge-page chunks (core/chunks.c: one fault per 8,192
 * records, and a chunk a closed device left is used again); a context
 * takes them from the newest chunk a batch at a time (one lock per BATCH
 * creates). */
#define BATCH 64u

/* What a record's label is until dao_set_label gives it one. */
const char rec_no_label[1];

static void rec_push(struct rec **stack, struct rec *r)
{
	struct rec *top = __atomic_load_n(stack, __ATOMIC_RELAXED);

	/* A push is never fooled by a top that left and came back: it only
	 * sets r->all_next to whatever the top is when the swap succeeds. */
	do
		r->all.next = top;
	while (!__atomic_compare_exchange_n(stack, &top, r, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
}

#ifdef __SANITIZE_ADDRESS__
/* Under AddressSanitizer every record is its own allocation, so a use of a
 * destroyed record is still caught. */
static struct rec *rec_alloc(struct device *d, struct ctx *c)
{
	struct rec *r = aligned_alloc(_Alignof(struct rec), sizeof(struct rec));

	(void)d;
	(void)c;
	if (r)
		memset(r, 0, sizeof(*r));
	return r;
}

static void rec_free(struct device *d, struct rec *r)
{
	(void)d;
	free(r);
}

void rec_ctx_release(struct device *d, struct ctx *c)
{
	(void)d;
	(void)c;
}

void rec_cache_prime(struct device *d)
{
	(void)d;
}
#else
/* rc->mu held. */
static bool chunk_add(struct rec_cache *rc)
{
	void *p;
	bool zero;

	if (rc->nchunks == rc->cap) {
		uint32_t cap = rc->cap ? rc->cap * 2 : 16;
		void **v = realloc(rc->chunks, cap * sizeof(*v));

		if (!v)
			return false;
		rc->chunks = v;
		rc->cap = cap;
	}
	p = chunk_get(&zero);
	if (!p)
		return false;
	rc->chunks[rc->nchunks++] = p;
	rc->cur = p;
	rc->left = CHUNK_BYTES;
	rc->cur_zero = zero;
	return true;
}

void rec_cache_prime(struct device *d)
{
	struct rec_cache *rc = &d->recs.cache;

	pthread_mutex_lock(&rc->mu);
	if (rc->left < sizeof(struct rec) && chunk_add(rc) && rc->cur_zero)
		chunk_fault_in(rc->cur);
	pthread_mutex_unlock(&rc->mu);
}

/* A batch of fresh records for context c (its slot_mu held). */
static bool batch_take(struct device *d, struct ctx_recs *cr)
{
	struct rec_cache *rc = &d->recs.cache;
	size_t want = BATCH * sizeof(struct rec);
	bool ok = true;

	pthread_mutex_lock(&rc->mu);
	if (rc->left < sizeof(struct rec))
		ok = chunk_add(rc);
	if (ok) {
		size_t n = rc->left < want ? rc->left - rc->left % sizeof(struct rec) : want;

		cr->cur = rc->cur;
		cr->left = n;
		cr->zero = rc->cur_zero;
		rc->cur += n;
		rc->left -= n;
	}
	pthread_mutex_unlock(&rc->mu);
	return ok;
}

static struct rec *rec_alloc(struct device *d, struct ctx *c)
{
	struct ctx_recs *cr = &c->recs;
	struct rec *r = cr->free;

	if (!r && __atomic_load_n(&d->recs.cache.returned, __ATOMIC_RELAXED))
		r = __atomic_exchange_n(&d->recs.cache.returned, NULL, __ATOMIC_ACQUIRE);
	if (r) {
		/* Used before: its lines were written. */
		cr->free = r->all.next;
		memset(r, 0, sizeof(*r));
		return r;
	}
	if (cr->left < sizeof(*r) && !batch_take(d, cr))
		return NULL;
	r = (struct rec *)(void *)cr->cur;
	cr->cur += sizeof(*r);
	cr->left -= sizeof(*r);
	/* Never used: zero since the kernel mapped it, left untouched. */
	if (!cr->zero)
		memset(r, 0, sizeof(*r)); /* a chunk another device left */
	return r;
}

static void rec_free(struct device *d, struct rec *r)
{
	rec_push(&d->recs.cache.returned, r);
}

void rec_ctx_release(struct device *d, struct ctx *c)
{
	struct ctx_recs *cr = &c->recs;

	while (cr->free) {
		struct rec *r = cr->free;

		cr->free = r->all.next;
		rec_push(&d->recs.cache.returned, r);
	}
	/* The rest of its batch: few records, zero again once taken back. */
	for (; cr->left >= sizeof(struct rec); cr->left -= sizeof(struct rec)) {
		rec_push(&d->recs.cache.returned, (struct rec *)(void *)cr->cur);
		cr->cur += sizeof(struct rec);
	}
	cr->cur = NULL;
	cr->left = 0;
}
#endif

void rec_cache_destroy(struct device *d)
{
	struct rec_cache *rc = &d->recs.cache;

#ifndef __SANITIZE_ADDRESS__
	for (uint32_t i = 0; i < rc->nchunks; i++)
		chunk_put(rc->chunks[i]);
#endif
	free(rc->chunks);
	pthread_mutex_destroy(&rc->mu);
	rc->chunks = NULL;
	rc->nchunks = rc->cap = 0;
}

void rec_cache_init(struct device *d)
{
	pthread_mutex_init(&d->recs.cache.mu, NULL);
}

void rec_adopt(struct device *d)
{
	struct rec *r;

	if (!__atomic_load_n(&d->recs.cache.fresh, __ATOMIC_RELAXED))
		return;
	r = __atomic_exchange_n(&d->recs.cache.fresh, NULL, __ATOMIC_ACQUIRE);
	if (!r)
		return;
	/* Newest first on the stack, as the list keeps them (the order the
	 * publisher relies on): the stack goes in front of the list as it
	 * is, in one pass, each record's line touched once (the records
	 * have left the cache by now when many were created in a row). */
	{
		struct rec *prev = NULL, *top = r;

		for (; r; prev = r, r = r->all.next) {
			if (r->asize > d->res.max_asize)
				d->res.max_asize = r->asize;
			r->all.prev = prev;
			d->stats.live_buffers++;
			d->res.live_asize += r->asize;
		}
		prev->all.next = d->recs.all;
		if (d->recs.all)
			d->recs.all->all.prev = prev;
		d->recs.all = top;
	}
}

dao_status rec_create(struct device *d, struct ctx *c, uint64_t bytes, struct rec **out)
{
	struct rec *r = rec_alloc(d, c);

	if (!r)
		return DAO_ERR_NOMEM;
	/* The first line, heap_pos and host_valid: nothing else of a fresh record. */
	r->id = __atomic_fetch_add(&d->recs.next_id, 1, __ATOMIC_RELAXED);
	r->size = bytes;
	r->asize = arena_round(&d->res.arena, bytes);
	r->ctx = c;
	r->label = rec_no_label;
	r->refs = 1;
	r->copies.host_valid = true; /* "the job's data", undefined until written */
	r->heap.pos = -1;
	rec_push(&d->recs.cache.fresh, r);
	*out = r;
	return DAO_OK;
}

void rec_label_set(struct rec *r, const char *copy)
{
	if (r->label != rec_no_label)
		free((char *)r->label);
	r->label = copy;
}

void rec_destroy(struct device *d, struct rec *r)
{
	rec_adopt(d); /* r is on the list of live records */
	if (r->all.prev)
		r->all.prev->all.next = r->all.next;
	else
		d->recs.all = r->all.next;
	if (r->all.next)
		r->all.next->all.prev = r->all.prev;
	d->stats.live_buffers--;
	d->res.live_asize -= r->asize;
	rec_label_set(r, rec_no_label);
	rec_free(d, r);
}

void rec_unref(struct device *d, struct rec *r)
{
	if (--r->refs)
		return;
	/* Every launch that named it is in the table now (core/inbox.c). */
	inbox_drain_all(d);
	r->released = true;
	__atomic_fetch_sub(&d->host.committed, r->size, __ATOMIC_RELAXED);
	if (d->trace.out) {
		trace_buffer_once(d, r);
		dao_trace_writer_free(d->trace.out, r->id);
	}
	if (r->uses.head)
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
	if (!d->trace.out || r->traced)
		return;
	r->traced = true;
	dao_trace_writer_buffer(d->trace.out, r->id, r->size, r->label[0] ? "buf" : NULL,
				r->label[0] ? r->label : NULL);
}
