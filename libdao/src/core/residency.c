/* SPDX-License-Identifier: MIT */
/*
 * residency.c - what moves where: reserving device space (evicting by the
 * policy's order), fetching, writing back, prefetching along the window,
 * host accesses, freeing. Runs on the executor with dev->mu held. Where a
 * move is the policy's to decide, core/ask.c asks it.
 *
 * A record's data is in one of three places: the device copy (dev_valid),
 * the host copy (host_valid; for a buffer never touched, "the job's initial
 * contents", still to be allocated), or nowhere when the next access
 * overwrites it whole. Dirty = valid on the device only.
 */
#include <string.h>

#include "backend/backend.h"
#include "base/log.h"
#include "core/ask.h"
#include "core/horizon.h"
#include "core/record.h"
#include "core/lock.h"
#include "core/residency.h"
#include "core/victim.h"

dao_status res_wait(struct device *d, const dao_fence *f)
{
	dao_status st;

	dev_unlock(d);
	st = d->be->ops->wait(d->be, f);
	dev_lock(d);
	if (st == DAO_OK) {
		dao_fence_join(&d->reached, f);
		/* Every write-back issued is done: cleaning has none queued;
		 * every fetch issued is done: the h2d engine has none. */
		if (f->seq[DAO_ENGINE_D2H] >= d->issued.seq[DAO_ENGINE_D2H])
			d->res.clean_queue_ns = 0;
		if (f->seq[DAO_ENGINE_H2D] >= d->issued.seq[DAO_ENGINE_H2D])
			d->res.fetch_queue_ns = 0;
	} else if (!d->failure) {
		__atomic_store_n(&d->failure, st, __ATOMIC_RELAXED); /* read without dev->mu: inbox.c */
	}
	return st;
}

static dao_status ensure_host(struct device *d, struct rec *r)
{
	dao_status st;

	if (r->host || !d->be->holds_data || !r->size)
		return DAO_OK;
	st = d->be->ops->host_alloc(d->be, r->size, &r->host, &r->pin_handle);
	if (st == DAO_OK) {
		d->stats.host_bytes += r->size;
		if (r->pin_handle) {
			d->stats.pinned_bytes += r->size;
			if (d->stats.pinned_bytes > d->peak_pinned_bytes)
				d->peak_pinned_bytes = d->stats.pinned_bytes;
		}
	}
	return st;
}

static uint64_t copy(struct device *d, enum dao_engine e, struct rec *r, const dao_fence *after,
		     enum dao_move_why why)
{
	uint64_t seq = d->be->ops->copy(d->be, e, r->blk->off, r->host, r->size, after, why);

	dao_fence_add(&d->issued, e, seq);
	return seq;
}

/* Copy the device copy back to the host copy; the record stays resident. */
static dao_status write_back(struct device *d, struct rec *r, enum dao_move_why why)
{
	dao_fence after = r->fence.busy;
	dao_status st = ensure_host(d, r);
	uint64_t seq;

	if (st != DAO_OK)
		return st;
	dao_fence_join(&after, &r->fence.ready);
	dao_fence_join(&after, &r->fence.host_busy);
	seq = copy(d, DAO_ENGINE_D2H, r, &after, why);
	dao_fence_add(&r->fence.host_busy, DAO_ENGINE_D2H, seq);
	dao_fence_add(&r->fence.busy, DAO_ENGINE_D2H, seq);
	r->copies.host_valid = true;
	d->stats.writebacks++;
	d->stats.d2h_bytes += r->size;
	return DAO_OK;
}

/* Whether the contents must survive an eviction. */
static bool data_needed(const struct rec *r)
{
	if (r->uses.head)
		return r->uses.head->mode != MODE_W;
	return !r->released;
}

/* An operand of the host kernel running now (res_prepare_host_kernel):
 * pinned but not placed. Its host copy is the kernel's until it returns. */
static bool held_on_host(const struct rec *r)
{
	return r->pin && !r->blk;
}

static void forget_ahead(struct device *d, struct rec *r)
{
	if (r->copies.ahead) {
		r->copies.ahead = false;
		d->res.pf_bytes -= r->asize;
	}
}

static void forget_cleaned(struct device *d, struct rec *r)
{
	if (r->copies.cleaned) {
		r->copies.cleaned = false;
		d->res.clean_bytes -= r->asize;
	}
}

static void drop_block(struct device *d, struct rec *r)
{
	dao_fence f = r->fence.busy;

	forget_ahead(d, r);
	forget_cleaned(d, r);

	dao_fence_join(&f, &r->fence.ready);
	arena_free(&d->res.arena, r->blk, &f);
	r->blk = NULL;
	r->copies.dev_valid = false;
}

/*
 * Unified memory: let the range's pages go without moving its bytes
 * (engine D2H: to the host, H2D: onto the device). The contents are dead
 * from then on, on both sides.
 */
static dao_status discard(struct device *d, struct rec *r, enum dao_engine e,
			  enum dao_move_why why)
{
	dao_fence after = r->fence.ready;
	dao_status st = ensure_host(d, r);
	uint64_t seq;

	if (st != DAO_OK)
		return st;
	dao_fence_join(&after, &r->fence.busy);
	dao_fence_join(&after, &r->fence.host_busy);
	seq = d->be->ops->discard(d->be, e, r->host, r->size, &after, why);
	dao_fence_add(&d->issued, e, seq);
	dao_fence_add(&r->fence.ready, e, seq);
	dao_fence_add(&r->fence.busy, e, seq);
	dao_fence_add(&r->fence.host_busy, e, seq);
	r->copies.host_valid = false;
	return DAO_OK;
}

/*
 * Take r's contents off the device, before its space is given back, as the
 * backend says it must be done (backend.h: vacate); *moved tells whether
 * that copies bytes. copy_why and dead_why say why, for a copy and for a
 * discard.
 */
static dao_status vacate(struct device *d, struct rec *r, bool *moved,
			 enum dao_move_why copy_why, enum dao_move_why dead_why)
{
	/* Placed but never fetched (a kernel's preparation that failed half
	 * way): on unified memory its pages are the host copy, whose
	 * contents they then hold as a device copy would. */
	bool holds = r->copies.dev_valid ||
		     (r->copies.host_valid && d->be->ops->host_access_vacates(d->be));

	*moved = false;
	switch (d->be->ops->vacate(d->be, holds, rec_dirty(r), data_needed(r))) {
	case DAO_VACATE_COPY:
		*moved = true;
		return write_back(d, r, copy_why);
	case DAO_VACATE_DISCARD:
		return discard(d, r, DAO_ENGINE_D2H, dead_why);
	case DAO_VACATE_FORGET:
		r->copies.host_valid = false; /* dead data: nothing to keep */
		return DAO_OK;
	case DAO_VACATE_KEEP:
		break;
	}
	return DAO_OK;
}

/* The prefetch cursor may have passed use u: rewind to it. */
static void rewind_prefetch(struct device *d, const struct opnd *u)
{
	if (u && (!d->res.pf_op || u->op->seq < d->res.pf_op->seq)) {
		d->res.pf_op = u->op;
		d->res.pf_idx = 0;
	}
}

static dao_status evict(struct device *d, struct rec *r)
{
	bool moved;
	dao_status st = vacate(d, r, &moved, DAO_WHY_EVICT, DAO_WHY_DEAD);

	if (st != DAO_OK)
		return st;
	if (!moved)
		d->stats.drops++;
	else if (d->policy.ops->evicted_dirty)
		d->policy.ops->evicted_dirty(d->policy.state, r->id, r->key);
	victim_remove(d, r);
	drop_block(d, r);
	d->stats.evictions++;
	rewind_prefetch(d, r->uses.head);
	return DAO_OK;
}

/* Space for asize bytes, evicting in policy order. For a prefetch (target
 * != NULL), only records keyed after target may go (rule 1), and only
 * those the policy lets go (policy.h: fetch_room). */
static struct dao_block *make_room(struct device *d, uint64_t asize, const struct op *target,
				   dao_status *st)
{
	uint64_t limit_seq = target ? target->seq : 0, wait_for = 0;
	bool asked = false;

	*st = DAO_OK;
	for (;;) {
		struct dao_block *b = arena_alloc(&d->res.arena, asize);
		struct rec *v;

		if (b)
			return b;
		if (d->res.arena.nomem) {
			*st = DAO_ERR_NOMEM;
			return NULL;
		}
		v = victim_pick(d, limit_seq);
		if (!v && !target) {
			/* Records a failed heap growth left out are
			 * victims too; an out-of-memory is not a budget. */
			int back = victim_readmit(d);

			if (back < 0)
				*st = DAO_ERR_NOMEM;
			if (back > 0)
				continue;
		}
		if (!v)
			return NULL;
		if (target && !asked) {
			wait_for = ask_fetch_room(d, target);
			asked = true;
		}
		if (v->key < wait_for)
			return NULL;
		*st = evict(d, v);
		if (*st != DAO_OK)
			return NULL;
	}
}

static void place(struct device *d, struct rec *r, struct dao_block *b)
{
	r->blk = b;
	r->copies.dev_valid = false;
	/* The space is free once its previous occupant's work is done. */
	r->fence.ready = b->fence;
	r->fence.busy = b->fence;
	r->load_seq = d->q.now_seq;
}

static dao_status fetch(struct device *d, struct rec *r, bool ahead)
{
	dao_fence after = r->fence.ready;
	dao_status st = ensure_host(d, r);
	uint64_t seq;

	if (st != DAO_OK)
		return st;
	dao_fence_join(&after, &r->fence.host_busy);
	seq = copy(d, DAO_ENGINE_H2D, r, &after, ahead ? DAO_WHY_PREFETCH : DAO_WHY_FETCH);
	dao_fence_add(&r->fence.ready, DAO_ENGINE_H2D, seq);
	dao_fence_add(&r->fence.busy, DAO_ENGINE_H2D, seq);
	dao_fence_add(&r->fence.host_busy, DAO_ENGINE_H2D, seq);
	r->copies.dev_valid = true;
	horizon_queue_fetch(d, r->size);
	d->stats.fetches++;
	d->stats.h2d_bytes += r->size;
	if (ahead)
		d->stats.prefetches++;
	return DAO_OK;
}

/* Allocate every operand of op, assuming nothing else is resident: the
 * arena is then one free block, and operands that fit the budget together
 * are placed side by side. */
static dao_status place_all_after_flush(struct device *d, struct op *op)
{
	dao_status st;
	int back;

	for (uint32_t i = 0; i < op->nopnd; i++) {
		struct rec *r = op->opnd[i].rec;

		if (r->blk) {
			st = evict(d, r);
			if (st != DAO_OK)
				return st;
		}
	}
	do {
		while (victim_pick(d, 0))
			if ((st = evict(d, victim_pick(d, 0))) != DAO_OK)
				return st;
		back = victim_readmit(d);
	} while (back > 0);
	if (back < 0)
		return DAO_ERR_NOMEM;
	for (uint32_t i = 0; i < op->nopnd; i++) {
		struct rec *r = op->opnd[i].rec;
		struct dao_block *b;

		if (!r->size)
			continue;
		b = arena_alloc(&d->res.arena, r->asize);
		if (!b)
			return d->res.arena.nomem ? DAO_ERR_NOMEM : DAO_ERR_BUDGET;
		place(d, r, b);
	}
	return DAO_OK;
}

/* The operands of the op about to run: not victims until it retires. */
static void pin_operands(struct device *d, struct op *op)
{
	for (uint32_t i = 0; i < op->nopnd; i++) {
		struct rec *r = op->opnd[i].rec;

		r->pin++;
		victim_remove(d, r);
	}
}

dao_status res_prepare_kernel(struct device *d, struct op *op, dao_fence *after)
{
	dao_status st = DAO_OK;
	bool flushed = false;

	pin_operands(d, op);
	for (uint32_t i = 0; i < op->nopnd; i++) {
		struct rec *r = op->opnd[i].rec;
		struct dao_block *b;

		if (!r->size || r->blk)
			continue;
		b = make_room(d, r->asize, NULL, &st);
		if (!b) {
			if (st != DAO_OK || flushed)
				return st != DAO_OK ? st : DAO_ERR_BUDGET;
			/* Free space is fragmented around this kernel's own
			 * operands: start over from an empty arena. */
			dao_dbg("kernel %s: fragmented arena, re-placing its operands",
				op->name ? op->name : "(unnamed)");
			flushed = true;
			st = place_all_after_flush(d, op);
			if (st != DAO_OK)
				return st;
			break;
		}
		place(d, r, b);
	}
	memset(after, 0, sizeof(*after));
	for (uint32_t i = 0; i < op->nopnd; i++) {
		struct rec *r = op->opnd[i].rec;

		if (!r->size)
			continue;
		if (op->opnd[i].mode != MODE_W && !r->copies.dev_valid) {
			st = fetch(d, r, false);
			if (st != DAO_OK)
				return st;
		} else if (!r->copies.dev_valid && !r->copies.ahead && d->be->ops->output_discards(d->be)) {
			/* Space just placed for an output: its old pages
			 * need not come along. */
			st = discard(d, r, DAO_ENGINE_H2D, DAO_WHY_OUTPUT);
			if (st != DAO_OK)
				return st;
		}
		dao_fence_join(after, &r->fence.ready);
		dao_fence_join(after, &r->fence.busy);
	}
	/* What the kernel function gets (dao_kernel_args), from the
	 * operands as the launch resolved them. */
	for (uint32_t i = 0; i < op->nargs; i++) {
		struct karg *a = &op->args[i];

		op->sizes[i] = a->len;
		if (!a->rec || !a->rec->blk)
			op->ptrs[i] = NULL;
		else
			op->ptrs[i] = d->be->ops->kernel_ptr(d->be, a->rec->host, a->rec->blk->off,
							     a->off);
	}
	return DAO_OK;
}

void res_after_kernel(struct device *d, struct op *op, uint64_t kseq)
{
	for (uint32_t i = 0; i < op->nopnd; i++) {
		struct rec *r = op->opnd[i].rec;

		if (!r->size)
			continue;
		dao_fence_add(&r->fence.busy, DAO_ENGINE_COMPUTE, kseq);
		if (op->opnd[i].mode & MODE_W) {
			dao_fence_add(&r->fence.ready, DAO_ENGINE_COMPUTE, kseq);
			r->copies.dev_valid = true;
			r->copies.host_valid = false;
			forget_cleaned(d, r);
		}
	}
}

void res_kernel_failed(struct op *op)
{
	for (uint32_t i = 0; i < op->nopnd; i++)
		if (op->opnd[i].mode & MODE_W)
			op->opnd[i].rec->copies.lost = true;
}

/* Consume op's uses; free what was released and is now unused. */
static void consume(struct device *d, struct op *op, bool pinned)
{
	for (uint32_t i = 0; i < op->nopnd; i++) {
		struct opnd *u = &op->opnd[i];
		struct rec *r = u->rec;

		r->uses.head = u->next_use;
		if (!r->uses.head)
			r->uses.tail = NULL;
		r->last_use = op->seq;
		forget_ahead(d, r);
		/* Its first use in this iteration, and it had one in the
		 * last: was the predictor right about it? */
		if (r->iter.no + 1 == d->res.iter_no && r->iter.off) {
			d->res.predict_checked++;
			d->res.predict_right += op->seq - d->res.iter_start == r->iter.off;
		}
		if (r->iter.no != d->res.iter_no || !r->iter.off) {
			r->iter.no = d->res.iter_no;
			r->iter.off = op->seq - d->res.iter_start;
		}
		if (pinned)
			r->pin--;
		if (r->released && !r->uses.head && !r->pin)
			res_free_rec(d, r);
		else
			victim_update(d, r);
	}
}

void res_retire(struct device *d, struct op *op)
{
	consume(d, op, true);
}

void res_skip(struct device *d, struct op *op)
{
	consume(d, op, false);
}

/* At a mark: trust the iteration predictor for the iteration beginning
 * if it was right in the one that ended for at least half the records it
 * could be checked on (none: as before). A change re-ranks every record,
 * for their keys hold the old verdict's guesses. */
static void predictor_verdict(struct device *d)
{
	uint64_t checked = d->res.predict_checked, right = d->res.predict_right;
	bool off = checked ? right * 2 < checked : d->res.predict_off;

	d->res.predict_checked = d->res.predict_right = 0;
	if (checked)
		dao_dbg("iteration %llu: the iteration predictor was right for %llu of %llu records: %s",
			(unsigned long long)d->res.iter_no - 1, (unsigned long long)right,
			(unsigned long long)checked, off ? "not trusted" : "trusted");
	if (off != d->res.predict_off) {
		d->res.predict_off = off;
		victim_rerank(d);
	}
}

void res_iteration(struct device *d, struct op *op)
{
	if (op->seq > d->res.iter_start)
		d->res.prev_iter_len = op->seq - d->res.iter_start;
	d->res.iter_start = op->seq;
	d->res.iter_no++;
	predictor_verdict(d);
	ask_iteration(d, op);
}

/*
 * Write back, ahead of time, the dirty records the policy will evict next
 * (the top of the heap of records it ranks apart), so that their eviction
 * is a drop and the fetch that takes their space need not wait for a
 * write-back: both copy directions stay busy. Whether and how far is
 * the policy's (policy.h: clean), asked while there are dirty records.
 */
static void clean_ahead(struct device *d)
{
	struct victim_heap *h = &d->res.heaps[HEAP_DIRTY];
	struct clean_turn t;

	/* Whether everything live fits (nothing the table holds will be
	 * evicted) is the policy's to weigh: a plan of the iteration knows
	 * of records the job has yet to create. */
	if (!h->n || !ask_clean_begin(&t, d))
		return;
	while (h->n) {
		struct rec *r = h->v[0];

		if (!ask_clean(&t, r) ||
		    write_back(d, r, DAO_WHY_WRITE_BACK) != DAO_OK)
			return;
		r->copies.cleaned = true;
		d->res.clean_bytes += r->asize;
		horizon_queue_clean(d, r->size);
		victim_update(d, r);
	}
}

/* Whether the policy issues u's prefetch now (rule 3: how far ahead). */
static bool fetch_now(struct device *d, const struct op *op, const struct opnd *u)
{
	const struct policy_fetch f = {
		.target = op->seq,
		.id = u->rec->id,
		.bytes = u->rec->asize,
		.ahead_bytes = d->res.pf_bytes,
		.budget = d->budget,
		.output = u->mode == MODE_W,
	};

	return d->policy.ops->fetch_now(d->policy.state, &f);
}

void res_prefetch(struct device *d)
{
	struct op *op;

	while ((op = d->res.pf_op) && op->seq <= d->q.now_seq + d->lookahead) {
		/* What it writes must not be fetched before it. A host kernel
		 * stops the walk as a host write does: the executor reaches it
		 * as soon as the kernels before it are issued (not done), and
		 * the walk goes on from there while it waits and runs. */
		if (op->kind == OP_WRITE || (op->kind == OP_KERNEL && op->on_host))
			break;
		if (op->kind == OP_KERNEL) {
			for (; d->res.pf_idx < op->nopnd; d->res.pf_idx++) {
				struct opnd *u = &op->opnd[d->res.pf_idx];
				struct rec *r = u->rec;
				struct dao_block *b;
				dao_status st;

				if (!r->size || r->blk || (u->mode != MODE_W && !r->copies.host_valid) ||
				    held_on_host(r))
					continue;
				/* Where reserving an output discards the
				 * buffer's contents, an earlier use may still
				 * need them. */
				if (u->mode == MODE_W && r->uses.head != u &&
				    d->be->ops->output_discards(d->be))
					continue;
				if (!fetch_now(d, op, u))
					goto out;
				b = make_room(d, r->asize, op, &st);
				if (!b)
					goto out;
				place(d, r, b);
				/* An output only needs its space: reserving it in
				 * window order keeps its allocation from evicting
				 * inputs fetched for later kernels. */
				if ((u->mode != MODE_W ? fetch(d, r, true)
				     : d->be->ops->output_discards(d->be)
					     ? discard(d, r, DAO_ENGINE_H2D, DAO_WHY_OUTPUT)
					     : DAO_OK) != DAO_OK) {
					drop_block(d, r);
					goto out;
				}
				r->copies.ahead = true;
				d->res.pf_bytes += r->asize;
				victim_update(d, r);
			}
		}
		d->res.pf_op = op->next;
		d->res.pf_idx = 0;
	}
out:
	clean_ahead(d);
}

/*
 * Where the job's thread reaches the device copy's pages through the host
 * (backend.h: host_access_vacates), it would fault them over behind the
 * budget's back. Move them first; the next kernel that needs them fetches
 * them again.
 */
static dao_status vacate_for_host(struct device *d, struct rec *r)
{
	bool moved;
	dao_status st = vacate(d, r, &moved, DAO_WHY_HOST, DAO_WHY_HOST);

	if (st != DAO_OK)
		return st;
	drop_block(d, r);
	if (r->uses.head)
		rewind_prefetch(d, r->uses.head->next_use);
	return DAO_OK;
}

/* Make r's host copy current (when its contents are needed) and idle, for
 * the job to read or write it; r stays pinned until the op is consumed. */
static dao_status host_prepare(struct device *d, struct rec *r, bool need_current)
{
	dao_status st = DAO_OK;

	r->pin++;
	victim_remove(d, r);
	if (r->blk && d->be->ops->host_access_vacates(d->be))
		st = vacate_for_host(d, r);
	else if (need_current && rec_dirty(r))
		st = write_back(d, r, DAO_WHY_HOST);
	if (st == DAO_OK)
		st = ensure_host(d, r);
	if (st == DAO_OK) {
		dao_fence f = r->fence.host_busy;

		st = res_wait(d, &f);
	}
	return st;
}

/* The job's bytes into (write) or out of r's host copy; a backend that
 * logs its requests hears of it before and after. */
static void host_touch(struct device *d, struct rec *r, const struct op *op, bool write)
{
	char *host = (char *)r->host + op->off;
	void (*note)(struct dao_backend *, const void *, uint64_t, bool, bool) =
		d->be->ops->host_access;

	if (note)
		note(d->be, host, op->len, write, false);
	if (write)
		memcpy(host, op->mem, op->len);
	else
		memcpy(op->mem, host, op->len);
	if (note)
		note(d->be, host, op->len, write, true);
}

dao_status res_host_write(struct device *d, struct op *op)
{
	struct rec *r = op->opnd[0].rec;
	/* A partial write merges with the current contents. */
	dao_status st = host_prepare(d, r, op->opnd[0].mode != MODE_W);

	if (st == DAO_OK) {
		if (r->host)
			host_touch(d, r, op, true);
		r->copies.host_valid = true;
		if (r->blk)
			drop_block(d, r); /* stale now */
	}
	consume(d, op, true);
	return st;
}

dao_status res_host_read(struct device *d, struct op *op)
{
	struct rec *r = op->opnd[0].rec;
	dao_status st = host_prepare(d, r, true);

	if (st == DAO_OK && r->host)
		host_touch(d, r, op, false);
	consume(d, op, true);
	return st;
}

/*
 * Why r's latest contents are lost once its context or device failed
 * (dao.h, DAO_ERR_LOST), NULL when they are intact. After a device failure
 * nothing on the device is trusted, nor a host copy a copy from the device
 * was filling and no wait saw done, nor (unified memory) a host copy whose
 * pages the device holds.
 */
static const char *lost_why(const struct device *d, const struct rec *r)
{
	if (r->copies.lost)
		return "a kernel that writes it failed";
	if (r->size && !r->copies.host_valid && !r->copies.dev_valid)
		return "its contents were given up ahead of a kernel that overwrites it whole, "
		       "which the failure skipped";
	if (!d->failure || !r->size)
		return NULL;
	if (!r->copies.host_valid)
		return "its latest contents were on the device only when the device failed";
	if (r->fence.host_busy.seq[DAO_ENGINE_D2H] > d->reached.seq[DAO_ENGINE_D2H])
		return "the device failed while copying it back to the host";
	if (r->blk && d->be->ops->host_access_vacates(d->be))
		return "its pages were on the device when the device failed";
	return NULL;
}

static dao_status read_lost(struct device *d, struct op *op, const char *why)
{
	const struct rec *r = op->opnd[0].rec;

	dao_err("buffer %llu%s%s%s is lost: %s", (unsigned long long)r->id, r->label[0] ? " (" : "",
		r->label, r->label[0] ? ")" : "", why);
	return DAO_ERR_LOST;
}

dao_status res_host_read_failed(struct device *d, struct op *op)
{
	struct rec *r = op->opnd[0].rec;
	const char *why = lost_why(d, r);
	dao_status st = DAO_OK;

	if (why) {
		res_skip(d, op);
		return read_lost(d, op, why);
	}
	if (!d->failure) {
		/* Only the context failed: the device still answers. */
		st = res_host_read(d, op);
		if (st != DAO_OK && d->failure)
			return read_lost(d, op, "the device failed while it was read");
		return st;
	}
	/* The host copy is current and no copy writes into it: read it
	 * without asking the failed device for anything. */
	r->pin++;
	st = ensure_host(d, r);
	if (st == DAO_OK && r->host)
		host_touch(d, r, op, false);
	consume(d, op, true);
	return st;
}

/*
 * A host kernel (dao.h: DAO_LAUNCH_HOST) works on host copies: nothing is
 * placed or fetched. Each operand's host copy is made current where its
 * contents are on the device only (written back), and the operand leaves
 * the device where the kernel writes it (its device copy would be stale)
 * or where the CPU's touch would reach the device copy's pages (unified
 * memory: migrated, or discarded when it is overwritten whole). *idle gets
 * the fence after which every host copy is current and no copy touches it;
 * the executor waits for it before calling the function.
 */
void res_host_kernel_touch(struct device *d, const struct op *op, bool done)
{
	void (*note)(struct dao_backend *, const void *, uint64_t, bool, bool) =
		d->be->ops->host_access;

	for (uint32_t i = 0; note && i < op->nopnd; i++) {
		const struct rec *r = op->opnd[i].rec;

		if (r->size && r->host)
			note(d->be, r->host, r->size, op->opnd[i].mode & MODE_W, done);
	}
}

dao_status res_prepare_host_kernel(struct device *d, struct op *op, dao_fence *idle)
{
	bool unified = d->be->ops->host_access_vacates(d->be);

	memset(idle, 0, sizeof(*idle));
	pin_operands(d, op);
	for (uint32_t i = 0; i < op->nopnd; i++) {
		struct rec *r = op->opnd[i].rec;
		uint8_t mode = op->opnd[i].mode;
		dao_status st = DAO_OK;

		if (!r->size)
			continue;
		if (r->blk && ((mode & MODE_W) || unified))
			st = vacate_for_host(d, r);
		else if (mode != MODE_W && rec_dirty(r))
			st = write_back(d, r, DAO_WHY_HOST);
		if (st == DAO_OK)
			st = ensure_host(d, r);
		if (st != DAO_OK)
			return st;
		dao_fence_join(idle, &r->fence.host_busy);
	}
	for (uint32_t i = 0; i < op->nargs; i++) {
		struct karg *a = &op->args[i];

		op->sizes[i] = a->len;
		op->ptrs[i] = a->rec && a->rec->host ? (char *)a->rec->host + a->off : NULL;
	}
	return DAO_OK;
}

void res_after_host_kernel(struct device *d, struct op *op)
{
	for (uint32_t i = 0; i < op->nopnd; i++) {
		struct opnd *u = &op->opnd[i];

		if (!u->rec->size)
			continue;
		if (u->mode & MODE_W)
			u->rec->copies.host_valid = true;
		/* The prefetch walk passed its later uses while the kernel
		 * held it. */
		if (!u->rec->blk)
			rewind_prefetch(d, u->next_use);
	}
}

void res_free_rec(struct device *d, struct rec *r)
{
	victim_remove(d, r);
	if (r->blk) {
		bool moved;

		/* Its contents are dead (never a copy), but on unified
		 * memory its pages must leave the device before the range
		 * is reused: the backend says how. */
		(void)vacate(d, r, &moved, DAO_WHY_FREE, DAO_WHY_FREE);
		drop_block(d, r);
	}
	if (r->host) {
		dao_fence f = r->fence.host_busy;

		res_wait(d, &f);
		d->be->ops->host_free(d->be, r->host, r->size, r->pin_handle);
		d->stats.host_bytes -= r->size;
		if (r->pin_handle)
			d->stats.pinned_bytes -= r->size;
		r->pin_handle = 0;
		r->host = NULL;
	}
	rec_destroy(d, r);
}
