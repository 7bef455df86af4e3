/* SPDX-License-Identifier: MIT */
/*
 * buffers.c - buffer and view handles.
 *
 * A dao_buf is tag(12) | generation(28) | slot + 1 (24 bits). The tag names
 * the context, so a handle passed to the wrong context is recognised; the
 * generation changes whenever a slot is freed, so a released handle never
 * names the buffer that later takes its slot (decision 1).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "base/log.h"
#include "trace/trace_writer.h"

#define SLOT_BITS 24
#define GEN_BITS 28
#define SLOT_MASK ((1u << SLOT_BITS) - 1)
#define GEN_MASK ((1u << GEN_BITS) - 1)

static _Atomic uint32_t gen_seed = 1;
/* Tags of open contexts, to tell a foreign handle from garbage. */
static _Atomic uint32_t tags_open[4096 / 32];

void ctx_tag_set(uint32_t tag, bool open)
{
	if (open)
		atomic_fetch_or(&tags_open[tag / 32], 1u << (tag % 32));
	else
		atomic_fetch_and(&tags_open[tag / 32], ~(1u << (tag % 32)));
}

static dao_buf make_handle(const struct ctx *c, uint32_t idx)
{
	const struct slot *s = &c->slots[idx];

	return (dao_buf){ ((uint64_t)c->tag << (SLOT_BITS + GEN_BITS)) |
			  ((uint64_t)(s->gen & GEN_MASK) << SLOT_BITS) | (idx + 1) };
}

dao_status slot_lookup(struct ctx *c, dao_buf b, struct slot **out)
{
	uint32_t idx = (uint32_t)(b.id & SLOT_MASK);
	uint32_t gen = (uint32_t)((b.id >> SLOT_BITS) & GEN_MASK);
	uint32_t tag = (uint32_t)(b.id >> (SLOT_BITS + GEN_BITS));
	struct slot *s;

	if (tag != c->tag) {
		if (tag && (atomic_load(&tags_open[tag / 32]) & (1u << (tag % 32))))
			return DAO_ERR_FOREIGN;
		return DAO_ERR_HANDLE;
	}
	if (idx == 0 || idx > c->nslots)
		return DAO_ERR_HANDLE;
	s = &c->slots[idx - 1];
	if (!s->refs || (s->gen & GEN_MASK) != gen)
		return DAO_ERR_HANDLE;
	*out = s;
	return DAO_OK;
}

static dao_status slot_new(struct ctx *c, uint32_t *idx)
{
	if (!c->free_head) {
		uint32_t n = c->nslots ? c->nslots * 2 : 64;
		struct slot *v;

		if (c->nslots >= SLOT_MASK)
			return DAO_ERR_NOMEM;
		if (n > SLOT_MASK)
			n = SLOT_MASK;
		v = realloc(c->slots, (size_t)n * sizeof(*v));
		if (!v)
			return DAO_ERR_NOMEM;
		for (uint32_t i = c->nslots; i < n; i++) {
			v[i] = (struct slot){ .gen = atomic_fetch_add(&gen_seed, 7919) };
			v[i].next_free = i + 1 < n ? i + 2 : 0;
		}
		c->free_head = c->nslots + 1;
		c->slots = v;
		c->nslots = n;
	}
	*idx = c->free_head - 1;
	c->free_head = c->slots[*idx].next_free;
	return DAO_OK;
}

static void slot_put(struct ctx *c, uint32_t idx)
{
	struct slot *s = &c->slots[idx];

	s->gen++;
	s->refs = 0;
	s->rec = NULL;
	s->next_free = c->free_head;
	c->free_head = idx + 1;
	c->live_handles--;
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

static void sanitize_label(char *dst, const char *src)
{
	size_t i;

	for (i = 0; i < DAO_LABEL_MAX - 1 && src[i]; i++) {
		unsigned char ch = (unsigned char)src[i];

		dst[i] = ch <= ' ' || ch == 0x7f ? '_' : (char)ch;
	}
	dst[i] = 0;
}

dao_status dao_buffer_create(dao_ctx h, uint64_t bytes, dao_buf *out)
{
	struct ctx *c;
	struct device *d;
	struct rec *r;
	uint32_t idx;
	dao_status st;

	if (!out)
		return DAO_ERR_NULL;
	st = ctx_enter(h, &c);
	if (st != DAO_OK)
		return st;
	d = c->dev;
	if (bytes >= (1ull << 63)) {
		st = DAO_ERR_OVERFLOW;
	} else if (arena_round(&d->arena, bytes) > d->budget) {
		dao_err("a buffer of %llu bytes can never fit in the device budget of %llu bytes",
			(unsigned long long)bytes, (unsigned long long)d->budget);
		st = DAO_ERR_BUDGET;
	} else if (bytes > d->host_budget - d->host_committed) {
		dao_err("host budget of %llu bytes exhausted (%llu committed, %llu asked)",
			(unsigned long long)d->host_budget, (unsigned long long)d->host_committed,
			(unsigned long long)bytes);
		st = DAO_ERR_HOST_BUDGET;
	} else if (!(r = calloc(1, sizeof(*r)))) {
		st = DAO_ERR_NOMEM;
	} else if ((st = slot_new(c, &idx)) != DAO_OK) {
		free(r);
	} else {
		r->id = d->next_rec_id++;
		r->size = bytes;
		r->asize = arena_round(&d->arena, bytes);
		if (r->asize > d->max_asize)
			d->max_asize = r->asize;
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
		c->slots[idx].refs = 1;
		c->slots[idx].rec = r;
		c->slots[idx].off = 0;
		c->slots[idx].len = bytes;
		c->slots[idx].is_view = false;
		c->live_handles++;
		*out = make_handle(c, idx);
	}
	ctx_leave(c);
	return st;
}

dao_status dao_view_create(dao_ctx h, dao_buf of, uint64_t offset, uint64_t length,
			   dao_buf *out)
{
	struct ctx *c;
	struct slot *s;
	uint32_t idx;
	uint64_t end;
	dao_status st;

	if (!out)
		return DAO_ERR_NULL;
	st = ctx_enter(h, &c);
	if (st != DAO_OK)
		return st;
	st = slot_lookup(c, of, &s);
	if (st == DAO_OK) {
		if (__builtin_add_overflow(offset, length, &end))
			st = DAO_ERR_OVERFLOW;
		else if (end > s->len)
			st = DAO_ERR_RANGE;
	}
	if (st == DAO_OK && s->rec->refs == UINT32_MAX)
		st = DAO_ERR_OVERFLOW;
	if (st == DAO_OK)
		st = slot_new(c, &idx); /* may move the slot array: reload s below */
	if (st == DAO_OK) {
		struct slot *parent = &c->slots[(of.id & SLOT_MASK) - 1];
		struct slot *v = &c->slots[idx];

		v->refs = 1;
		v->rec = parent->rec;
		v->off = parent->off + offset;
		v->len = length;
		v->is_view = true;
		v->rec->refs++;
		c->live_handles++;
		*out = make_handle(c, idx);
	}
	ctx_leave(c);
	return st;
}

dao_status dao_retain(dao_ctx h, dao_buf buf)
{
	struct ctx *c;
	struct slot *s;
	dao_status st = ctx_enter(h, &c);

	if (st != DAO_OK)
		return st;
	st = slot_lookup(c, buf, &s);
	if (st == DAO_OK) {
		if (s->refs == UINT32_MAX)
			st = DAO_ERR_OVERFLOW;
		else
			s->refs++;
	}
	ctx_leave(c);
	return st;
}

dao_status dao_release(dao_ctx h, dao_buf buf)
{
	struct ctx *c;
	struct slot *s;
	dao_status st = ctx_enter(h, &c);

	if (st != DAO_OK)
		return st;
	st = slot_lookup(c, buf, &s);
	if (st == DAO_OK && --s->refs == 0) {
		struct rec *r = s->rec;

		slot_put(c, (uint32_t)(buf.id & SLOT_MASK) - 1);
		rec_unref(c->dev, r);
	}
	ctx_leave(c);
	return st;
}

dao_status dao_set_label(dao_ctx h, dao_buf buf, const char *label)
{
	struct ctx *c;
	struct slot *s;
	dao_status st;

	if (!label)
		return DAO_ERR_NULL;
	st = ctx_enter(h, &c);
	if (st != DAO_OK)
		return st;
	st = slot_lookup(c, buf, &s);
	if (st == DAO_OK)
		sanitize_label(s->rec->label, label);
	ctx_leave(c);
	return st;
}

dao_status dao_buffer_size(dao_ctx h, dao_buf buf, uint64_t *bytes)
{
	struct ctx *c;
	struct slot *s;
	dao_status st;

	if (!bytes)
		return DAO_ERR_NULL;
	st = ctx_enter(h, &c);
	if (st != DAO_OK)
		return st;
	st = slot_lookup(c, buf, &s);
	if (st == DAO_OK)
		*bytes = s->len;
	ctx_leave(c);
	return st;
}
