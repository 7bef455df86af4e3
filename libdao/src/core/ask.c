/* SPDX-License-Identifier: MIT */
/*
 * ask.c - how core asks the device's policy (policy/policy.h) where a
 * decision is made, beyond the victim order (victim.c).
 *
 * A decision's facts are plain fields; what costs a walk of the queued
 * window (rule 2's better victim, modeled time from horizon.c) is a
 * question the policy calls only if it uses the answer, worked out at most
 * once per decision. Each question's struct is the first member of core's
 * own, so the function gets back to the device from it.
 */
#include <stdlib.h>

#include "base/fault.h"
#include "backend/backend.h"
#include "base/log.h"
#include "core/ask.h"
#include "core/horizon.h"
#include "core/victim.h"

/* pol's state for d and the buffer of its queued hook, d unchanged. */
static dao_status create(struct device *d, const struct dao_policy_ops *pol, void **state,
			 struct policy_use **uses_out)
{
	const struct dao_rates *r = &d->be->rates;
	const struct policy_device dev = {
		.budget = d->budget,
		.lookahead = d->lookahead,
		.h2d_bytes_per_s = r->h2d_bytes_per_s,
		.d2h_bytes_per_s = r->d2h_bytes_per_s,
		.flops_per_s = r->flops_per_s,
		.mem_bytes_per_s = r->mem_bytes_per_s,
		.launch_ns = r->launch_ns,
		.modeled = !d->be->holds_data, /* the simulator */
		.deterministic = (d->flags & DAO_CONFIG_DETERMINISTIC) != 0,
		.ids_before = __atomic_load_n(&d->recs.next_id, __ATOMIC_RELAXED),
		.seq_start = d->q.next_seq,
		.order = d->flags & DAO_CONFIG_PLAN_CLEAN_FIRST ? POLICY_ORDER_CLEAN_FIRST
			 : d->flags & DAO_CONFIG_PLAN_DAO_ORDER ? POLICY_ORDER_DAO
								 : POLICY_ORDER_CHOSEN,
		.eager = (d->flags & DAO_CONFIG_PLAN_EAGER) != 0,
	};
	struct policy_use *uses = NULL;
	dao_status st;

	*state = NULL;
	if (!pol || !pol->rank || !pol->fetch_now || !pol->fetch_room)
		return DAO_ERR_CONFIG;
	if (pol->queued && !(uses = fault_calloc(DAO_MAX_OPERANDS, sizeof(*uses))))
		return DAO_ERR_NOMEM;
	if (pol->create && (st = pol->create(&dev, state)) != DAO_OK) {
		free(uses);
		return st;
	}
	*uses_out = uses;
	return DAO_OK;
}

static void install(struct device *d, const struct dao_policy_ops *pol, void *state,
		    struct policy_use *uses)
{
	d->policy.ops = pol;
	d->policy.state = state;
	d->res.pol_uses = uses;
}

dao_status ask_start(struct device *d, const struct dao_policy_ops *pol)
{
	struct policy_use *uses = NULL;
	void *state;
	dao_status st = create(d, pol, &state, &uses);

	if (st == DAO_OK)
		install(d, pol, state, uses);
	return st;
}

/*
 * The job queues an iteration mark on a device whose policy no context
 * chose, and the device has had to evict: the default for iterative jobs
 * (policy.c) takes over from here, once. Not before the first eviction:
 * the plan only changes which records go and costs the executor a little
 * per op, so a job whose data fits keeps the policy that costs least.
 * The first eviction and the marks are the program's, so on a
 * deterministic device the switch is too (plan builds at the mark there).
 * It starts from the same order (plan is dao until it has a plan to
 * follow, and it records the iterations from this mark on), so nothing is
 * re-ranked. If it cannot start, the device keeps its policy, says so and
 * does not try again.
 */
void ask_iterations_begin(struct device *d)
{
	dao_policy to = policy_default_iterative();
	const struct dao_policy_ops *pol = policy_ops(to);
	struct policy_use *uses = NULL;
	void *state;
	dao_status st;

	if (d->policy_choice.tried || !d->stats.evictions)
		return;
	d->policy_choice.tried = true;
	/* Not chosen, the device's policy is the default (api/config.c). */
	if (__atomic_load_n(&d->policy_choice.chosen, __ATOMIC_ACQUIRE) || to == d->policy.id)
		return;
	st = create(d, pol, &state, &uses);
	if (st != DAO_OK) {
		dao_warn("the job marks iterations, but policy %s could not start (%s): it keeps %s",
			 dao_policy_name(to), dao_strerror(st), dao_policy_name(d->policy.id));
		return;
	}
	ask_stop(d);
	install(d, pol, state, uses);
	dao_info("the job marks iterations and its data does not fit: policy %s from here on, "
		 "in place of %s (the default for such a job; DAO_POLICY chooses one)",
		 dao_policy_name(to), dao_policy_name(d->policy.id));
	__atomic_store_n(&d->policy.id, to, __ATOMIC_RELEASE);
}

void ask_summary(const struct device *d, char *buf, size_t len)
{
	buf[0] = 0;
	if (d->policy.ops && d->policy.ops->summary)
		d->policy.ops->summary(d->policy.state, buf, len);
}

void ask_stop(struct device *d)
{
	if (d->policy.ops && d->policy.ops->destroy)
		d->policy.ops->destroy(d->policy.state);
	d->policy.state = NULL;
	free(d->res.pol_uses);
	d->res.pol_uses = NULL;
}

/* How many queued ops the better-victim walk looks through. */
#define PREFETCH_SCAN_OPS 256

struct fetch_room {
	struct policy_fetch_room q; /* first */
	struct device *d;
	const struct op *target;
	bool better_known;
	uint64_t better_key;
	const struct op *freed_by; /* the op whose end frees the better victim */
};

static void best_after(struct fetch_room *fr, const struct op *op)
{
	for (uint32_t i = 0; i < op->nopnd; i++) {
		const struct opnd *u = &op->opnd[i];

		if (u->rec->blk) {
			uint64_t k = victim_key_after(fr->d, u);

			if (k > fr->better_key) {
				fr->better_key = k;
				fr->freed_by = op;
			}
		}
	}
}

/*
 * The best victim that a resident record used before the target will be
 * once that use is done (the running op's operands included). Fetching
 * for the target now by evicting a worse victim would be harm Belady would
 * not do at the target's turn.
 */
static uint64_t better_key(struct policy_fetch_room *q)
{
	struct fetch_room *fr = (struct fetch_room *)q;
	struct device *d = fr->d;
	unsigned n = 0;

	if (fr->better_known)
		return fr->better_key;
	fr->better_known = true;
	if (d->q.pinned_op)
		best_after(fr, d->q.pinned_op);
	for (const struct op *op = d->q.head; op && op != fr->target && n < PREFETCH_SCAN_OPS;
	     op = op->next, n++)
		best_after(fr, op);
	return fr->better_key;
}

static bool due(struct policy_fetch_room *q)
{
	struct fetch_room *fr = (struct fetch_room *)q;

	return horizon_due(fr->d, fr->target);
}

static bool late_waiting(struct policy_fetch_room *q)
{
	struct fetch_room *fr = (struct fetch_room *)q;

	better_key(q);
	return horizon_late(fr->d, fr->freed_by, fr->target);
}

uint64_t ask_fetch_room(struct device *d, const struct op *target)
{
	struct fetch_room fr = {
		.q = { .target = target->seq,
		       .better_key = better_key,
		       .due = due,
		       .late_waiting = late_waiting },
		.d = d,
		.target = target,
	};

	return d->policy.ops->fetch_room(d->policy.state, &fr.q);
}

static uint64_t peak_room(struct policy_clean *c)
{
	struct clean_turn *t = (struct clean_turn *)c;

	if (!t->room_known) {
		t->room = horizon_peak_room(t->d, t->next_use);
		t->room_known = true;
	}
	return t->room;
}

static uint64_t compute_ns(struct policy_clean *c)
{
	struct clean_turn *t = (struct clean_turn *)c;

	if (!t->compute_known) {
		t->compute_ns = horizon_compute_ns(t->d, t->frontier_op);
		t->compute_known = true;
	}
	return t->compute_ns;
}

static uint64_t d2h_ns(struct policy_clean *c, uint64_t bytes)
{
	return horizon_d2h_ns(((struct clean_turn *)c)->d, bytes);
}

bool ask_clean_begin(struct clean_turn *t, struct device *d)
{
	const struct op *frontier_op = d->res.pf_op;

	if (!d->policy.ops->clean)
		return false;
	*t = (struct clean_turn){
		.c = { .frontier = frontier_op ? frontier_op->seq : d->q.next_seq,
		       .free_bytes = d->res.arena.size - d->res.arena.used,
		       /* (What is allocated never exceeds the arena, so this is
			* "free space covers the live bytes not allocated", and
			* space whose last occupant was freed but still counts
			* as used cannot make it wrap.) */
		       .live_fits = d->res.live_asize <= d->res.arena.size,
		       .walk_end = horizon_walk_end(d),
		       .peak_room = peak_room,
		       .compute_ns = compute_ns,
		       .d2h_ns = d2h_ns },
		.d = d,
		.frontier_op = frontier_op,
	};
	return true;
}

bool ask_clean(struct clean_turn *t, const struct rec *r)
{
	t->c.id = r->id;
	t->c.key = r->key;
	t->c.bytes = r->asize;
	t->c.cleaned_bytes = t->d->res.clean_bytes;
	t->c.queue_ns = t->d->res.clean_queue_ns;
	t->c.fetch_queue_ns = t->d->res.fetch_queue_ns;
	t->room_known = false; /* the room is the candidate's: before its next use */
	t->next_use = r->uses.head ? r->uses.head->op->seq : UINT64_MAX;
	return t->d->policy.ops->clean(t->d->policy.state, &t->c);
}

/* The seq of the first mark queued after `mark` (0: none): one walk of
 * the queue per mark, and only for a policy that hears of marks. */
static uint64_t next_mark_seq(const struct op *mark)
{
	for (const struct op *op = mark->next; op; op = op->next)
		if (op->kind == OP_ITER)
			return op->seq;
	return 0;
}

void ask_iteration(struct device *d, const struct op *mark)
{
	struct policy_mark m = {
		.seq = mark->seq,
		.iteration = d->res.iter_no,
		.prev_len = d->res.prev_iter_len,
	};

	if (!d->policy.ops->iteration)
		return;
	m.next_seq = next_mark_seq(mark);
	if (d->policy.ops->iteration(d->policy.state, &m) == POLICY_RERANK)
		victim_rerank(d);
}

void ask_queued_slow(struct device *d, const struct op *op)
{
	struct policy_use *uses = d->res.pol_uses;
	struct policy_op o = {
		.seq = op->seq,
		.kind = op->kind == OP_KERNEL  ? POLICY_OP_KERNEL
			: op->kind == OP_WRITE ? POLICY_OP_WRITE
					       : POLICY_OP_READ,
		.flops = op->flops,
		.nuses = op->nopnd,
		.uses = uses,
	};

	for (uint32_t i = 0; i < op->nopnd; i++)
		uses[i] = (struct policy_use){ .id = op->opnd[i].rec->id,
					       .bytes = op->opnd[i].rec->asize,
					       .mode = (dao_mode)op->opnd[i].mode };
	if (d->policy.ops->queued(d->policy.state, &o) == POLICY_RERANK)
		victim_rerank(d);
}
