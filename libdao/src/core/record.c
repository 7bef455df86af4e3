/* SPDX-License-Identifier: MIT */
/*
 * record.c - record lifetime: the one file that creates and destroys
 * records (struct rec, one per owning buffer). A record lives while a handle
 * names it or the queue still uses it; the last of those frees it, the
 * executor through residency.c, the job's thread here.
 */
#include <stdlib.h>

#include "base/log.h"
#include "core/queue.h"
#include "core/record.h"
#include "core/victim.h"
#include "trace/trace_writer.h"

dao_status rec_create(struct device *d, struct ctx *c, uint64_t bytes, struct rec **out)
{
	struct rec *r = calloc(1, sizeof(*r));

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
	free(r);
}

void rec_unref(struct device *d, struct rec *r)
{
	if (--r->refs)
		return;
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
		queue_push(d, op);
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
