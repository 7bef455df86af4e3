/* SPDX-License-Identifier: MIT */
/*
 * victim.c - the eviction order's mechanics. Resident records that no
 * running op pins sit in max-heaps, keyed by the device's policy
 * (policy/policy.h: rank) so that the best victim is on top; a policy that
 * ranks some records apart (dirty ones, say, whose eviction costs a
 * write-back) has them in a heap of their own and chooses between the two
 * tops (pick_apart). Keys are absolute logical times, so they do not
 * change as time advances; a record's key changes only when its facts do
 * (its next use above all), and then it is out of the heap (pinned) or
 * re-ranked here.
 *
 * The facts are what the access-pattern table knows of the record's next
 * use:
 *
 *   next access overwrites the whole buffer (w)  dead: dropping it costs
 *                                                nothing
 *   next use by a host kernel that writes it     host: it leaves the device
 *   (or any host kernel, on unified memory)      then anyway (a host kernel's
 *                                                read on separate memory is
 *                                                passed over: the next use counts)
 *   next use known (queued op) at seq s           s
 *   next use predicted from the last iteration    that predicted seq
 *   no known future                               unknown
 */
#include <stdlib.h>

#include "base/fault.h"
#include "backend/backend.h"
#include "core/victim.h"
#include "policy/policy.h"

/* No queued use: dead if released, else the use predicted from the last
 * iteration, else unknown. */
static inline __attribute__((always_inline)) uint64_t
next_use_unqueued(struct device *d, struct rec *r, bool *predicted)
{
	if (r->released)
		return POLICY_USE_DEAD; /* waiting for its free */
	if (d->res.prev_iter_len && r->iter.no == d->res.iter_no && !d->res.predict_off) {
		uint64_t p = d->res.iter_start + d->res.prev_iter_len + r->iter.off;

		if (p > d->q.now_seq) {
			*predicted = true;
			return p;
		}
	}
	return POLICY_USE_UNKNOWN;
}

/* The next use is a host kernel's. It works on the host copy
 * (residency.c): reading it leaves a separate device copy as it is, so
 * such reads are passed over. Out of line: rare, and kept off the path
 * every re-rank takes. */
static __attribute__((noinline, cold)) uint64_t
next_use_past_host(struct device *d, struct rec *r, const struct opnd *u, bool valid,
		   bool *predicted)
{
	while (u && u->op->on_host && u->mode == MODE_R && !d->res.host_vacates)
		u = u->next_use;
	if (!u)
		return next_use_unqueued(d, r, predicted);
	if (u->mode == MODE_W && valid)
		return POLICY_USE_DEAD;
	return u->op->on_host ? POLICY_USE_HOST : u->op->seq;
}

/* Inlined into every re-rank, as the next-use lookup was before the
 * policies had files of their own: it runs for every operand of every
 * kernel. */
static inline __attribute__((always_inline)) uint64_t
next_use_from(struct device *d, struct rec *r, const struct opnd *u, bool valid, bool *predicted)
{
	*predicted = false;
	if (!u)
		return next_use_unqueued(d, r, predicted);
	if (__builtin_expect(u->op->on_host, 0))
		return next_use_past_host(d, r, u, valid, predicted);
	/* Data about to be overwritten is dead, but space reserved for
	 * that write is needed then. */
	if (u->mode == MODE_W && valid)
		return POLICY_USE_DEAD;
	return u->op->seq;
}

/* The policy's rank for r, with u as its next use and valid as its device
 * copy's. Inlined: it runs for every operand of every kernel. */
static inline __attribute__((always_inline)) struct policy_rank
rank_with(struct device *d, struct rec *r, const struct opnd *u, bool valid, bool dirty)
{
	struct policy_rec f;

	f.next_use = next_use_from(d, r, u, valid, &f.predicted);
	f.last_use = r->last_use;
	/* Dead data costs no write-back however dirty it is; data a host
	 * kernel needs next is written back for it anyway. */
	f.dirty = dirty && d->res.dirty_costs && f.next_use != POLICY_USE_DEAD &&
		  f.next_use != POLICY_USE_HOST;
	if (__builtin_expect(d->policy.ops->rank == policy_rank_dirty_apart, 1))
		return policy_rank_dirty_apart_inline(&f);
	f.id = r->id;
	f.bytes = r->asize;
	f.load_seq = r->load_seq;
	return d->policy.ops->rank(d->policy.state, &f);
}

uint64_t victim_key_after(struct device *d, const struct opnd *u)
{
	return rank_with(d, u->rec, u->next_use, true, rec_dirty(u->rec) || (u->mode & MODE_W))
		.key;
}

static void swap_at(struct victim_heap *h, uint32_t i, uint32_t j)
{
	struct rec *t = h->v[i];

	h->v[i] = h->v[j];
	h->v[j] = t;
	h->v[i]->heap.pos = (int32_t)i;
	h->v[j]->heap.pos = (int32_t)j;
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
	/* The backend's answers are fixed; asked once, not per re-rank. */
	d->res.dirty_costs = !d->be->ops->clean_evict_copies(d->be);
	d->res.host_vacates = d->be->ops->host_access_vacates(d->be);
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

	if (r->heap.pos < 0)
		return;
	h = &d->res.heaps[r->heap.which];
	i = (uint32_t)r->heap.pos;
	r->heap.pos = -1;
	h->n--;
	if (i == h->n)
		return;
	h->v[i] = h->v[h->n];
	h->v[i]->heap.pos = (int32_t)i;
	sift_up(h, i);
	sift_down(h, (uint32_t)h->v[i]->heap.pos);
}

void victim_update(struct device *d, struct rec *r)
{
	struct policy_rank rank;
	uint64_t key;
	enum heap_id which;
	struct victim_heap *h;

	if (!r->blk || r->pin) {
		victim_remove(d, r);
		return;
	}
	rank = rank_with(d, r, r->uses.head, r->copies.dev_valid, rec_dirty(r));
	key = rank.key;
	which = rank.apart ? HEAP_DIRTY : HEAP_CLEAN;
	if (r->heap.pos >= 0 && r->heap.which == which) {
		uint64_t old = r->key;

		r->key = key;
		if (key > old)
			sift_up(&d->res.heaps[which], (uint32_t)r->heap.pos);
		else if (key < old)
			sift_down(&d->res.heaps[which], (uint32_t)r->heap.pos);
		return;
	}
	victim_remove(d, r);
	h = &d->res.heaps[which];
	if (h->n == h->cap) {
		uint32_t cap = h->cap ? h->cap * 2 : 64;
		struct rec **v = fault_realloc(h->v, cap * sizeof(*v));

		if (!v)
			return; /* left out until its next update or victim_readmit */
		h->v = v;
		h->cap = cap;
	}
	r->key = key;
	r->heap.which = (uint8_t)which;
	r->heap.pos = (int32_t)h->n;
	h->v[h->n++] = r;
	sift_up(h, h->n - 1);
}

struct rec *victim_pick(struct device *d, uint64_t limit_seq)
{
	struct victim_heap *c = &d->res.heaps[HEAP_CLEAN], *w = &d->res.heaps[HEAP_DIRTY];
	struct rec *rc = c->n ? c->v[0] : NULL;
	struct rec *rw = w->n ? w->v[0] : NULL;

	if (limit_seq) {
		if (rc && rc->key <= limit_seq)
			rc = NULL;
		if (rw && rw->key <= limit_seq)
			rw = NULL;
	}
	if (!rc || !rw)
		return rc ? rc : rw;
	if (!d->policy.ops->pick_apart)
		return rw->key > rc->key ? rw : rc;
	return d->policy.ops->pick_apart(d->policy.state, rw->key, rc->key, d->q.now_seq) ? rw : rc;
}

int victim_readmit(struct device *d)
{
	int n = 0;

	for (struct rec *r = d->recs.all; r; r = r->all.next) {
		if (!r->blk || r->pin || r->heap.pos >= 0)
			continue;
		victim_update(d, r);
		if (r->heap.pos < 0)
			return -1;
		n++;
	}
	return n;
}

void victim_rerank(struct device *d)
{
	for (struct rec *r = d->recs.all; r; r = r->all.next)
		if (r->heap.pos >= 0)
			victim_update(d, r);
}
