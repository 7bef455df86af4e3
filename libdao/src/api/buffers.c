/* SPDX-License-Identifier: MIT */
/*
 * buffers.c - the buffer and view entry points. The handles themselves
 * (tag, generation, slot) are core/registry.c's; records core/record.c's.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "core/record.h"
#include "api/enter.h"

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
	st = api_enter(h, API_LOOK, NULL, &c, NULL);
	if (st != DAO_OK)
		return st;
	d = c->dev;
	if (bytes >= (1ull << 63)) {
		st = DAO_ERR_OVERFLOW;
	} else if (arena_round(&d->res.arena, bytes) > d->budget) {
		dao_err("a buffer of %llu bytes can never fit in the device budget of %llu bytes",
			(unsigned long long)bytes, (unsigned long long)d->budget);
		st = DAO_ERR_BUDGET;
	} else if (bytes > d->host_budget - d->host_committed) {
		dao_err("host budget of %llu bytes exhausted (%llu committed, %llu asked)",
			(unsigned long long)d->host_budget, (unsigned long long)d->host_committed,
			(unsigned long long)bytes);
		st = DAO_ERR_HOST_BUDGET;
	} else {
		/* The slot table's writers hold slot_mu too (core/objects.h). */
		pthread_mutex_lock(&c->slot_mu);
		if ((st = slot_new(c, &idx)) != DAO_OK) {
			/* nothing taken */
		} else if ((st = rec_create(d, c, bytes, &r)) != DAO_OK) {
			slot_put_unused(c, idx);
		} else {
			c->slots[idx].refs = 1;
			c->slots[idx].rec = r;
			c->slots[idx].off = 0;
			c->slots[idx].len = bytes;
			c->slots[idx].is_view = false;
			c->live_handles++;
			*out = slot_handle(c, idx);
		}
		pthread_mutex_unlock(&c->slot_mu);
	}
	api_leave(c);
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
	st = api_enter(h, API_LOOK, &of, &c, &s);
	if (st != DAO_OK)
		return st;
	if (__builtin_add_overflow(offset, length, &end))
		st = DAO_ERR_OVERFLOW;
	else if (end > s->len)
		st = DAO_ERR_RANGE;
	if (st == DAO_OK && s->rec->refs == UINT32_MAX)
		st = DAO_ERR_OVERFLOW;
	pthread_mutex_lock(&c->slot_mu);
	if (st == DAO_OK)
		st = slot_new(c, &idx); /* may move the slot array: reload s below */
	if (st == DAO_OK) {
		struct slot *parent = &c->slots[slot_index(of)];
		struct slot *v = &c->slots[idx];

		v->refs = 1;
		v->rec = parent->rec;
		v->off = parent->off + offset;
		v->len = length;
		v->is_view = true;
		v->rec->refs++;
		c->live_handles++;
		*out = slot_handle(c, idx);
	}
	pthread_mutex_unlock(&c->slot_mu);
	api_leave(c);
	return st;
}

dao_status dao_retain(dao_ctx h, dao_buf buf)
{
	struct ctx *c;
	struct slot *s;
	dao_status st = api_enter(h, API_LOOK, &buf, &c, &s);

	if (st != DAO_OK)
		return st;
	pthread_mutex_lock(&c->slot_mu);
	if (s->refs == UINT32_MAX)
		st = DAO_ERR_OVERFLOW;
	else
		s->refs++;
	pthread_mutex_unlock(&c->slot_mu);
	api_leave(c);
	return st;
}

dao_status dao_release(dao_ctx h, dao_buf buf)
{
	struct ctx *c;
	struct slot *s;
	dao_status st = api_enter(h, API_LOOK, &buf, &c, &s);

	if (st != DAO_OK)
		return st;
	{
		struct rec *r = NULL;

		/* A launch without dev->mu looks handles up under slot_mu:
		 * either it finds this one gone, or it has claimed its inbox
		 * cell before this, and rec_unref waits for that cell. */
		pthread_mutex_lock(&c->slot_mu);
		if (--s->refs == 0) {
			r = s->rec;
			slot_put(c, slot_index(buf));
		}
		pthread_mutex_unlock(&c->slot_mu);
		if (r)
			rec_unref(c->dev, r);
	}
	api_leave(c);
	return st;
}

dao_status dao_set_label(dao_ctx h, dao_buf buf, const char *label)
{
	struct ctx *c;
	struct slot *s;
	dao_status st;

	if (!label)
		return DAO_ERR_NULL;
	st = api_enter(h, API_LOOK, &buf, &c, &s);
	if (st != DAO_OK)
		return st;
	sanitize_label(s->rec->label, label);
	api_leave(c);
	return st;
}

dao_status dao_buffer_size(dao_ctx h, dao_buf buf, uint64_t *bytes)
{
	struct ctx *c;
	struct slot *s;
	dao_status st;

	if (!bytes)
		return DAO_ERR_NULL;
	st = api_enter(h, API_LOOK, &buf, &c, &s);
	if (st != DAO_OK)
		return st;
	*bytes = s->len;
	api_leave(c);
	return st;
}
