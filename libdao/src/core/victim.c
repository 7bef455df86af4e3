/* SPDX-License-Identifier: MIT */
/*
 * victim.c - the eviction order. Resident records that no running op pins
 * sit in max-heaps keyed so that the best victim is on top:
 *
 *   next access overwrites the whole buffer (w)  KEY_DEAD: its data is dead,
 *                                                so dropping it costs nothing
 *   next use by a host kernel that writes it     KEY_HOST: it leaves the device
 *   (or any host kernel, on unified memory)      there anyway (a host kernel's
 *                                                read on separate memory is
 *                                                passed over: the next use counts)
 *   next use known (queued op) at seq s           s: farthest next use first
 *   next use predicted from the last iteration    that predicted seq
 *   no known future                               KEY_UNKNOWN + age (LRU)
 *
 * lru and fifo key on last use / load time instead. The dao policy keeps
 * dirty records (whose eviction costs a write-back) in a heap of their own
 * and takes one only when its next use is much farther than the best clean
 * one's. Keys are absolute logical times, so they do not change as time
 * advances; a record's key changes only when its next use does, and then it
 * is out of the heap (pinned) or updated here.
 */
#include <stdlib.h>

#include "backend/backend.h"
#include "core/victim.h"
#include "policy/policy.h"

#define KEY_DEAD (UINT64_MAX - 1)
/* Next used by a host kernel, which takes it off the device: keeping it
 * until then saves nothing, and what evicting it copies back is owed
 * anyway. */
#define KEY_HOST (KEY_DEAD - 1)
#define KEY_UNKNOWN (1ull << 62)
#define KEY_AGE_SPAN (1ull << 61)

/* A dirty victim must be needed this much farther away than the best clean
 * one (in distance from now) to be chosen: it costs a write-back now on top
 * of the fetch later. */
#define DIRTY_NUM 5
#define DIRTY_DEN 4

static uint64_t age_key(uint64_t seq)
{
	return KEY_UNKNOWN + (KEY_AGE_SPAN - (seq & (KEY_AGE_SPAN - 1)));
}

static uint64_t next_use_from(struct device *d, struct rec *r, struct opnd *u, bool valid)
{
	/* A host kernel works on the host copy (residency.c): reading it
	 * leaves a separate device copy as it is. */
	while (u && u->op->on_host && u->mode == MODE_R && !d->be->ops->host_access_vacates(d->be))
		u = u->next_use;
	if (u) {
		/* Data about to be overwritten is dead, but space reserved
		 * for that write is needed then. */
		if (u->mode == MODE_W && valid)
			return KEY_DEAD;
		if (u->op->on_host)
			return KEY_HOST;
		return u->op->seq;
	}
	if (r->released)
		return KEY_DEAD; /* waiting for its free */
	if (d->res.prev_iter_len && r->iter_no == d->res.iter_no) {
		uint64_t p = d->res.iter_start + d->res.prev_iter_len + r->iter_off;

		if (p > d->q.now_seq)
			return p;
	}
	return age_key(r->last_use);
}

uint64_t victim_next_use(struct device *d, struct rec *r)
{
	return next_use_from(d, r, r->use_head, r->dev_valid);
}

uint64_t victim_key_after(struct device *d, const struct opnd *u)
{
	if (d->pol->victim_key != POLICY_KEY_NEXT_USE)
		return 0;
	return next_use_from(d, u->rec, u->next_use, true);
}

static uint64_t key_of(struct device *d, struct rec *r)
{
	switch (d->pol->victim_key) {
	case POLICY_KEY_LAST_USE:
		return age_key(r->last_use);
	case POLICY_KEY_LOAD_SEQ:
		return age_key(r->load_seq);
	default:
		return victim_next_use(d, r);
	}
}

static enum heap_id heap_for(struct device *d, struct rec *r, uint64_t key)
{
	/* Where evicting clean data copies it just the same, the dirty
	 * ones are no worse victims. */
	if (!d->pol->clean_ahead || d->be->ops->clean_evict_copies(d->be))
		return HEAP_CLEAN;
	/* Dead data costs no write-back however dirty it is; data a host
	 * kernel needs next is written back for it anyway. */
	if (key == KEY_DEAD || key == KEY_HOST || !rec_dirty(r))
		return HEAP_CLEAN;
	return HEAP_DIRTY;
}

static void swap_at(struct victim_heap *h, uint32_t i, uint32_t j)
{
	struct rec *t = h->v[i];

	h->v[i] = h->v[j];
	h->v[j] = t;
	h->v[i]->heap_pos = (int32_t)i;
	h->v[j]->heap_pos = (int32_t)j;
}

static void sift_up(struct victim_heap *h, uint32_t i)
{
	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (h->v[p]->key >= h->v[i]->key)
			break;
		swap_at(h, i, p);
		i = p;
	}
}

static void sift_down(struct victim_heap *h, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && h->v[l]->key > h->v[m]->key)
			m = l;
		if (r < h->n && h->v[r]->key > h->v[m]->key)
			m = r;
		if (m == i)
			break;
		swap_at(h, i, m);
		i = m;
	}
}

void victim_init(struct device *d)
{
	for (int i = 0; i < HEAPS; i++)
		d->res.heaps[i] = (struct victim_heap){ 0 };
}

void victim_destroy(struct device *d)
{
	for (int i = 0; i < HEAPS; i++) {
		free(d->res.heaps[i].v);
		d->res.heaps[i] = (struct victim_heap){ 0 };
	}
}

void victim_remove(struct device *d, struct rec *r)
{
	struct victim_heap *h;
	uint32_t i;

	if (r->heap_pos < 0)
		return;
	h = &d->res.heaps[r->heap_which];
	i = (uint32_t)r->heap_pos;
	r->heap_pos = -1;
	h->n--;
	if (i == h->n)
		return;
	h->v[i] = h->v[h->n];
	h->v[i]->heap_pos = (int32_t)i;
	sift_up(h, i);
	sift_down(h, (uint32_t)h->v[i]->heap_pos);
}

void victim_update(struct device *d, struct rec *r)
{
	uint64_t key;
	enum heap_id which;
	struct victim_heap *h;

	if (!r->blk || r->pin) {
		victim_remove(d, r);
		return;
	}
	key = key_of(d, r);
	which = heap_for(d, r, key);
	if (r->heap_pos >= 0 && r->heap_which == which) {
		uint64_t old = r->key;

		r->key = key;
		if (key > old)
			sift_up(&d->res.heaps[which], (uint32_t)r->heap_pos);
		else if (key < old)
			sift_down(&d->res.heaps[which], (uint32_t)r->heap_pos);
		return;
	}
	victim_remove(d, r);
	h = &d->res.heaps[which];
	if (h->n == h->cap) {
		uint32_t cap = h->cap ? h->cap * 2 : 64;
		struct rec **v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return; /* not evictable until next update: safe, only suboptimal */
		h->v = v;
		h->cap = cap;
	}
	r->key = key;
	r->heap_which = (uint8_t)which;
	r->heap_pos = (int32_t)h->n;
	h->v[h->n++] = r;
	sift_up(h, h->n - 1);
}

static uint64_t distance(struct device *d, uint64_t key)
{
	return key > d->q.now_seq ? key - d->q.now_seq : 0;
}

struct rec *victim_pick(struct device *d, uint64_t limit_seq)
{
	struct victim_heap *c = &d->res.heaps[HEAP_CLEAN], *w = &d->res.heaps[HEAP_DIRTY];
	struct rec *rc = c->n ? c->v[0] : NULL;
	struct rec *rw = w->n ? w->v[0] : NULL;
	struct rec *pick;

	if (limit_seq) {
		if (rc && rc->key <= limit_seq)
			rc = NULL;
		if (rw && rw->key <= limit_seq)
			rw = NULL;
	}
	if (!rc || !rw) {
		pick = rc ? rc : rw;
	} else if (rc->key >= KEY_UNKNOWN) {
		pick = rc;
	} else if (rw->key >= KEY_UNKNOWN) {
		pick = rw;
	} else {
		uint64_t dc = distance(d, rc->key), dw = distance(d, rw->key);

		pick = dw / DIRTY_NUM > dc / DIRTY_DEN ? rw : rc;
	}
	return pick;
}
