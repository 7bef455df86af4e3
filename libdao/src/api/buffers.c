/* SPDX-License-Identifier: MIT */
/*
 * buffers.c - the buffer and view entry points. The handles themselves
 * (tag, generation, slot) are core/handles.c's; records core/record.c's.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "core/record.h"
#include "api/enter.h"

/* Count bytes into the host budget, unless they do not fit: one atomic
 * step, so racing creates never commit more than the budget together. */
static bool host_reserve(struct device *d, uint64_t bytes, uint64_t *committed)
{
	uint64_t cur = __atomic_load_n(&d->host.committed, __ATOMIC_RELAXED);

	do {
		if (bytes > d->host.budget - cur) {
			*committed = cur;
			return false;
		}
	} while (!__atomic_compare_exchange_n(&d->host.committed, &cur, cur + bytes, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

/*
 * Without dev->mu (Documentation/design.md, Locking): the checks read
 * settings fixed at open, the host budget is one atomic count, the slot
 * and the record are taken under slot_mu. Only growing the slot table
 * takes dev->mu too, because every call that holds dev->mu may hold a
 * pointer into it. A deterministic device takes dev->mu and the job's
 * turn as before: there no thread's call may overlap an op.
 */
dao_status dao_buffer_create(dao_ctx h, uint64_t bytes, dao_buf *out)
{
	struct ctx *c;
	struct device *d;
	struct rec *r;
	uint32_t idx;
	uint64_t committed;
	bool locked;
	dao_status st;

	if (!out)
		return DAO_ERR_NULL;
	st = ctx_enter_unlocked(h, &c);
	if (st != DAO_OK)
		return st;
	d = c->dev;
	locked = d->flags & DAO_CONFIG_DETERMINISTIC;
	if (locked)
		ctx_lock_device(c);
	if (bytes >= (1ull << 63)) {
		st = DAO_ERR_OVERFLOW;
	} else if (arena_round(&d->res.arena, bytes) > d->budget) {
		dao_err("a buffer of %llu bytes can never fit in the device budget of %llu bytes",
			(unsigned long long)bytes, (unsigned long long)d->budget);
		st = DAO_ERR_BUDGET;
	} else if (!host_reserve(d, bytes, &committed)) {
		dao_err("host budget of %llu bytes exhausted (%llu committed, %llu asked)",
			(unsigned long long)d->host.budget, (unsigned long long)committed,
			(unsigned long long)bytes);
		st = DAO_ERR_HOST_BUDGET;
	} else {
		pthread_mutex_lock(&c->slot_mu);
		if (slot_table_full(c) && !locked) {
			/* The table grows: dev->mu first (slot_mu is taken last). */
			pthread_mutex_unlock(&c->slot_mu);
			ctx_lock_device(c);
			locked = true;
			pthread_mutex_lock(&c->slot_mu);
		}
		if ((st = slot_new(c, &idx)) != DAO_OK) {
			/* nothing taken */
		} else if ((st = rec_create(d, c, bytes, &r)) != DAO_OK) {
			slot_put_unused(c, idx);
		} else {
			struct slot *s = &c->slots[idx];

			s->rec = r;
			s->off = 0;
			s->len = bytes;
			s->is_view = false;
			/* Last: a lookup of a forged handle without slot_mu
			 * reads refs first (slot_lookup). */
			__atomic_store_n(&s->refs, 1, __ATOMIC_RELEASE);
			c->live_handles++;
			*out = slot_handle(c, idx);
		}
		pthread_mutex_unlock(&c->slot_mu);
		if (st != DAO_OK)
			__atomic_fetch_sub(&d->host.committed, bytes, __ATOMIC_RELAXED);
	}
	if (locked)
		ctx_leave(c);
	else
		ctx_leave_unlocked(c);
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

/* The label as daoctl and traces show it: at most DAO_LABEL_MAX - 1
 * bytes, spaces and control characters replaced; NULL when out of
 * memory, rec_no_label when empty. */
static const char *label_copy(const char *src)
{
	size_t n = strnlen(src, DAO_LABEL_MAX - 1);
	char *dst;

	if (!n)
		return rec_no_label;
	dst = malloc(n + 1);
	if (!dst)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)src[i];

		dst[i] = ch <= ' ' || ch == 0x7f ? '_' : (char)ch;
	}
	dst[n] = 0;
	return dst;
}

dao_status dao_set_label(dao_ctx h, dao_buf buf, const char *label)
{
	struct ctx *c;
	struct slot *s;
	const char *copy;
	dao_status st;

	if (!label)
		return DAO_ERR_NULL;
	st = api_enter(h, API_LOOK, &buf, &c, &s);
	if (st != DAO_OK)
		return st;
	/* Out of line: most buffers have none, and a create writes one
	 * cache line of its record (core/objects.h). */
	copy = label_copy(label);
	if (copy)
		rec_label_set(s->rec, copy);
	else
		st = DAO_ERR_NOMEM; /* the old label stays */
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
