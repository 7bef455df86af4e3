/* SPDX-License-Identifier: MIT */
/*
 * plan_evict.c - which buffers the plan foresees leaving the device
 * between two of their uses (plan_evict.h; plan_build.h: evicted): the
 * iteration replayed on a device of the budget's size, in the order the
 * policy evicts (the buffer used farthest ahead; one whose eviction needs
 * a write-back only when it is used a quarter farther ahead than the
 * clean one it passes over, as dao_pick_apart), with every next use known
 * from the plan, and each gap between two uses of a buffer marked where
 * the replay evicts it.
 *
 * The replay knows nothing of timing (no window, no prefetch, no copy
 * engines): only which buffers a device of that size must give up, and
 * in what order a policy that sees the whole iteration would. Three
 * passes: the first brings the buffers the iteration found (parameters,
 * optimizer state) to where the iteration leaves them, the second is
 * marked, and the third closes the gaps that run from the second into
 * the next iteration. O(uses log uses) per pass; the heaps hold at most
 * twice the buffers (outdated entries are dropped when they reach that).
 *
 * Two orders: dao's, and clean first (a buffer whose eviction needs a
 * write-back only when no clean one is left). Where the budget lets every
 * dirty buffer stay until its data is dead, clean first writes nothing
 * back and fetches a little more; elsewhere it fetches much more. The
 * plan keeps the order whose busier copy engine, by the bytes the marked
 * pass moves each way, works for less (plan_choose_evictions).
 */
#include <stdlib.h>
#include <string.h>

#include "policy/plan_evict.h"

/* A heap entry: buffer b, next used at `key`, valid while b's version is
 * `ver` (entries are never removed, only outdated). */
struct ev_entry {
	uint64_t key;
	uint32_t b, ver;
};

struct ev_heap {
	struct ev_entry *v;
	size_t n, cap;
};

/* Per buffer, during the replay. */
struct ev_buf {
	uint64_t size;
	uint64_t next;  /* time of its next use: pass * nops + its op's index */
	uint32_t ver;
	uint32_t gap;   /* its last use's index in use_off: the gap it is in */
	uint8_t gap_pass; /* the pass that use was in (GAP_NONE before any) */
	uint8_t resident, dirty;
	uint8_t dead_next; /* its next use overwrites it whole */
};

#define GAP_NONE 0xff
#define PASSES 3
#define MARKED_PASS 1

struct ev_replay {
	struct plan *p;
	uint8_t *evicted;   /* per use in use_off order: marked where it leaves */
	bool clean_first;   /* the order: a dirty buffer only when no clean one is left */
	uint64_t h2d, d2h;  /* bytes fetched and written back in the marked pass */
	struct ev_buf *buf;
	uint32_t *use_op;   /* per use in use_off order: its op's index */
	uint8_t *use_mode;  /* per use in use_off order: its dao_mode */
	uint32_t *use_at;   /* per use of ops: its index in use_off order */
	struct ev_heap clean, dirty;
	uint64_t used, budget;
};

static bool heap_push(struct ev_heap *h, struct ev_entry e)
{
	size_t i;

	if (h->n == h->cap) {
		size_t ncap = h->cap ? 2 * h->cap : 256;
		struct ev_entry *v = realloc(h->v, ncap * sizeof(*v));

		if (!v)
			return false;
		h->v = v;
		h->cap = ncap;
	}
	/* A max-heap on key. */
	for (i = h->n++; i && h->v[(i - 1) / 2].key < e.key; i = (i - 1) / 2)
		h->v[i] = h->v[(i - 1) / 2];
	h->v[i] = e;
	return true;
}

static void sift_down(struct ev_heap *h, size_t i)
{
	struct ev_entry v = h->v[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1].key > h->v[c].key)
			c++;
		if (h->v[c].key <= v.key)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	h->v[i] = v;
}

static void heap_pop(struct ev_heap *h)
{
	h->v[0] = h->v[--h->n];
	if (h->n)
		sift_down(h, 0);
}

/* The heap's top that is still current, outdated entries dropped; NULL
 * when none is left. */
static const struct ev_entry *heap_top(struct ev_heap *h, const struct ev_buf *buf)
{
	while (h->n && (h->v[0].ver != buf[h->v[0].b].ver || !buf[h->v[0].b].resident))
		heap_pop(h);
	return h->n ? &h->v[0] : NULL;
}

/* Contents only the device holds and that the next use reads: what an
 * eviction must write back (a next use that overwrites makes it a drop). */
static bool must_write_back(const struct ev_buf *x)
{
	return x->dirty && !x->dead_next;
}

/* Keep the current entries only (at most one per buffer), as a heap. */
static void heap_compact(struct ev_heap *h, const struct ev_buf *buf)
{
	size_t n = 0;

	for (size_t i = 0; i < h->n; i++)
		if (h->v[i].ver == buf[h->v[i].b].ver && buf[h->v[i].b].resident)
			h->v[n++] = h->v[i];
	h->n = n;
	for (size_t i = n / 2; i-- > 0;)
		sift_down(h, i);
}

/* b is a candidate again, with its next use. */
static bool rank(struct ev_replay *e, uint32_t b)
{
	struct ev_buf *x = &e->buf[b];
	struct ev_heap *h = must_write_back(x) ? &e->dirty : &e->clean;

	x->ver++;
	if (h->n >= 2 * e->p->nbufs + 64)
		heap_compact(h, e->buf);
	return heap_push(h, (struct ev_entry){ .key = x->next, .b = b, .ver = x->ver });
}

static uint64_t distance(uint64_t key, uint64_t now)
{
	return key > now ? key - now : 0;
}

static void leave(struct ev_replay *e, struct ev_buf *x)
{
	x->resident = 0;
	x->dirty = 0;
	x->ver++;
	e->used -= x->size;
}

/* Give up buffers until `size` more fits, or nothing is left to give up
 * (the op's own operands are not candidates: the replay then runs over
 * the budget, as every schedule would). */
static void make_room(struct ev_replay *e, uint64_t size, uint64_t now)
{
	while (e->used + size > e->budget) {
		const struct ev_entry *c = heap_top(&e->clean, e->buf);
		const struct ev_entry *d = heap_top(&e->dirty, e->buf);
		struct ev_buf *x;

		if (!c && !d)
			return;
		/* dao_pick_apart's rule: the dirty one only when it is used a
		 * quarter farther ahead than the clean one; clean first: only
		 * when no clean one is left. */
		if (d && (!c || (!e->clean_first &&
				 distance(d->key, now) / 5 > distance(c->key, now) / 4))) {
			x = &e->buf[d->b];
			heap_pop(&e->dirty);
			if (x->gap_pass == MARKED_PASS)
				e->d2h += x->size;
		} else {
			x = &e->buf[c->b];
			heap_pop(&e->clean);
		}
		if (x->gap_pass == MARKED_PASS)
			e->evicted[x->gap] = 1;
		leave(e, x);
	}
}

/* After buffer b's use k (in use_off order) in `pass`: its next use, or
 * its end (a buffer the iteration created, at its last use). */
static bool after_use(struct ev_replay *e, uint32_t b, uint32_t k, size_t pass)
{
	const struct plan *p = e->p;
	struct ev_buf *x = &e->buf[b];
	uint32_t nk;

	x->gap = k;
	x->gap_pass = (uint8_t)pass;
	if (k + 1 < p->use_start[b + 1]) {
		nk = k + 1;
		x->next = pass * p->nops + e->use_op[nk];
	} else if (p->persistent[b]) {
		nk = p->use_start[b];
		x->next = (pass + 1) * p->nops + e->use_op[nk];
	} else {
		if (x->resident)
			leave(e, x);
		return true;
	}
	x->dead_next = e->use_mode[nk] == DAO_W;
	return !x->resident || rank(e, b);
}

/* One op of the replay at time `now`. */
static bool replay_op(struct ev_replay *e, size_t i, size_t pass)
{
	const struct plan *p = e->p;
	const struct plan_op *o = &p->ops[i];
	uint64_t now = pass * p->nops + i;

	if (o->kind == POLICY_OP_KERNEL) {
		/* Its operands are not candidates while it is placed. */
		for (uint32_t j = o->first; j < o->first + o->n; j++)
			e->buf[p->canon[j]].ver++;
		for (uint32_t j = o->first; j < o->first + o->n; j++) {
			struct ev_buf *x = &e->buf[p->canon[j]];

			if (x->resident)
				continue;
			make_room(e, x->size, now);
			if (pass == MARKED_PASS && (p->mode[j] & DAO_R))
				e->h2d += x->size;
			x->resident = 1;
			x->dirty = 0;
			e->used += x->size;
		}
	}
	for (uint32_t j = o->first; j < o->first + o->n; j++) {
		struct ev_buf *x = &e->buf[p->canon[j]];

		if (o->kind == POLICY_OP_KERNEL && (p->mode[j] & DAO_W))
			x->dirty = 1;
		else if (o->kind == POLICY_OP_WRITE && x->resident)
			leave(e, x); /* the host's copy is the current one */
		else if (o->kind == POLICY_OP_READ)
			x->dirty = 0; /* written back for the host; it stays */
		if (!after_use(e, p->canon[j], e->use_at[j], pass))
			return false;
	}
	return true;
}

/* One replay in the given order into a new evicted array (*out; NULL on
 * DAO_ERR_NOMEM), with the bytes each copy engine moves in the marked
 * pass. */
static dao_status replay_order(struct plan *p, uint64_t budget, bool clean_first,
			       uint8_t **out, uint64_t *h2d, uint64_t *d2h)
{
	struct ev_replay e = { .p = p, .budget = budget, .clean_first = clean_first };
	size_t nuses = p->nuses ? p->nuses : 1;
	uint32_t *fill = NULL;
	dao_status st = DAO_ERR_NOMEM;

	e.evicted = calloc(nuses, 1);
	e.buf = calloc(p->nbufs ? p->nbufs : 1, sizeof(*e.buf));
	e.use_op = malloc(nuses * sizeof(*e.use_op));
	e.use_mode = malloc(nuses);
	e.use_at = malloc(nuses * sizeof(*e.use_at));
	fill = malloc((p->nbufs + 1) * sizeof(*fill));
	if (!e.evicted || !e.buf || !e.use_op || !e.use_mode || !e.use_at || !fill)
		goto out;
	memcpy(fill, p->use_start, (p->nbufs + 1) * sizeof(*fill));
	for (size_t i = 0; i < p->nops; i++)
		for (uint32_t j = p->ops[i].first; j < p->ops[i].first + p->ops[i].n; j++) {
			uint32_t b = p->canon[j], k = fill[b]++;

			e.use_op[k] = (uint32_t)i;
			e.use_mode[k] = p->mode[j];
			e.use_at[j] = k;
			if (p->bytes[j] > e.buf[b].size)
				e.buf[b].size = p->bytes[j];
		}
	for (size_t b = 0; b < p->nbufs; b++)
		e.buf[b].gap_pass = GAP_NONE;
	for (size_t pass = 0; pass < PASSES; pass++)
		for (size_t i = 0; i < p->nops; i++)
			if (!replay_op(&e, i, pass))
				goto out;
	st = DAO_OK;
	*h2d = e.h2d;
	*d2h = e.d2h;
out:
	if (st) {
		free(e.evicted);
		e.evicted = NULL;
	}
	*out = e.evicted;
	free(fill);
	free(e.buf);
	free(e.use_op);
	free(e.use_mode);
	free(e.use_at);
	free(e.clean.v);
	free(e.dirty.v);
	return st;
}

dao_status plan_build_evictions(struct plan *p, uint64_t budget, bool clean_first)
{
	uint64_t h2d, d2h;
	uint8_t *ev;
	dao_status st = replay_order(p, budget, clean_first, &ev, &h2d, &d2h);

	if (st == DAO_OK) {
		free(p->evicted);
		p->evicted = ev;
		p->clean_first = clean_first;
	}
	return st;
}

dao_status plan_choose_evictions(struct plan *p, uint64_t budget, double h2d_bytes_per_s,
				 double d2h_bytes_per_s)
{
	uint64_t h2d[2], d2h[2];
	uint8_t *ev[2] = { NULL, NULL };
	double busy[2];
	dao_status st = DAO_OK;

	for (int o = 0; o < 2 && st == DAO_OK; o++) {
		st = replay_order(p, budget, o == 1, &ev[o], &h2d[o], &d2h[o]);
		if (st == DAO_OK) {
			double a = (double)h2d[o] / h2d_bytes_per_s, b = (double)d2h[o] / d2h_bytes_per_s;

			busy[o] = a > b ? a : b;
		}
	}
	if (st != DAO_OK) {
		free(ev[0]);
		free(ev[1]);
		return st;
	}
	p->clean_first = busy[1] < busy[0];
	p->evicted = ev[p->clean_first];
	free(ev[!p->clean_first]);
	return DAO_OK;
}

static enum plan_gap gap_of(bool evicted)
{
	return evicted ? PLAN_GAP_LEAVES : PLAN_GAP_STAYS;
}

enum plan_gap plan_gap_at(const struct plan *p, uint32_t b, uint64_t next_off, uint32_t *gap)
{
	uint32_t first = p->use_start[b], end = p->use_start[b + 1], k;

	if (first == end || !p->evicted || !next_off)
		return PLAN_GAP_NONE;
	if (next_off >= p->len) {
		/* Into the next iteration: its first use there, from its last
		 * use here. */
		if (!p->persistent[b] || p->use_off[first] != next_off - p->len)
			return PLAN_GAP_NONE;
		*gap = end - 1;
		return gap_of(p->evicted[end - 1]);
	}
	k = plan_use_after(p, b, next_off - 1);
	if (k == end || p->use_off[k] != next_off)
		return PLAN_GAP_NONE;
	if (k == first) { /* from the last iteration's last use */
		*gap = end - 1;
		return gap_of(p->persistent[b] && p->evicted[end - 1]);
	}
	*gap = k - 1;
	return gap_of(p->evicted[k - 1]);
}

enum plan_gap plan_gap(const struct plan *p, uint32_t b, uint64_t next_off)
{
	uint32_t gap;

	return plan_gap_at(p, b, next_off, &gap);
}

bool plan_evicted(const struct plan *p, uint32_t b, uint64_t next_off)
{
	return plan_gap(p, b, next_off) == PLAN_GAP_LEAVES;
}
