/* SPDX-License-Identifier: MIT */
/*
 * plan.c - the policy that follows last iteration's plan
 * (Documentation/design.md, "The plan policy").
 *
 * A job that calls dao_iteration repeats itself: once it has run one
 * iteration, the whole of the next is known. The queued hook records the
 * ops of the device's stream; at each iteration mark the iteration that
 * just ended (unless it followed its plan to the end: its plan would be
 * the same) goes to a thread of this policy's own, which builds the plan
 * (plan_build.c: every buffer's uses across the iteration) within a CPU
 * time limit, off the executor's path (at the mark itself on a modeled
 * device, and on a deterministic one, whose decisions must not depend on
 * when a thread finishes). There, an iteration queued whole when its mark
 * is reached (the next mark is queued: a window longer than the
 * iteration) is planned from its own ops instead, and followed at once.
 * From the next mark the newest plan
 * built is followed (the one before it while a build is still running):
 * each op entering the access-pattern table is checked against it (the
 * same offset, kind, records, space and modes), and while
 * all agree a record whose next use the window does not hold is keyed by
 * the plan's next use, in this iteration or the next, instead of core's
 * guess (the same offset as its first use of this iteration, one
 * iteration on; unknown for a buffer the iteration creates), and a
 * dirty record is cleaned ahead where the plan's replay of the iteration
 * on a device of the budget's size evicts it before its next use, and
 * only there (plan_says, plan_evict.c), as far ahead as the h2d engine's
 * queue allows; where the run has evicted it dirty in a gap where the
 * replay keeps it, dao's rule decides in that gap from then on
 * (plan_evicted_dirty). Where the plan's replay kept the order clean first (its
 * busier copy engine less busy so), a dirty record is evicted only when
 * no clean one is left, and no record the plan cannot judge is cleaned
 * ahead. Everything else (dirty data apart, prefetch, fetch room,
 * cleaning ahead of a record the plan cannot judge in dao's order) is
 * dao's, but where the device says a prefetch takes its room at once
 * (DAO_CONFIG_PLAN_EAGER): then it never waits for a better victim.
 *
 * The plan is never waited for: until one is built the policy is dao, and
 * it is dao again from the first op that departs from the plan to the next
 * mark (counted in plan_counts), asking core to re-rank at once.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "policy/plan.h"
#include "policy/plan_build.h"
#include "policy/plan_evict.h"
#include "policy/policy.h"

/* A recorded iteration holds at most this many uses (about 24 MiB); a
 * stream that grows past it without a mark is not recorded any more. */
#define PLAN_MAX_USES (UINT64_C(1) << 20)
/* CPU seconds a plan may take to build (it is linear in the uses: well
 * under a second at the cap). */
#define PLAN_CPU_LIMIT_S 10.0

struct plan_state {
	/* The executor's side, under the device's mutex. */
	struct plan_record rec;   /* the ops queued since the last mark (and ahead of it) */
	uint64_t *max_before;     /* per op of rec: the largest id named before it */
	size_t cap_max_before;
	uint64_t max_id;          /* the largest id any op named */
	bool have_mark, recording;
	uint64_t mark_seq;        /* the last mark's */
	uint64_t mark_max_id;     /* the largest id named before it */
	uint64_t seq_start;       /* ops before it were queued before the policy started */
	struct plan *follow;      /* followed since the last mark; NULL: none */
	bool departed;            /* from follow, since the last mark */
	/* Per gap of follow (plan_gap_at): the run evicted the record with
	 * its write-back there, where follow's replay keeps it (NULL: none
	 * known, or no room to know). */
	uint8_t *contradicted;
	/* A record was keyed by a plan since core last re-ranked them all:
	 * only then does leaving the plan change the order (a re-rank costs
	 * the keys of records core predicts from the last iteration, which it
	 * cannot work out again until they are used). */
	bool keyed;
	size_t cursor;            /* follow's next op expected */
	uint64_t *bound;          /* per buffer of follow it created: the record now (0: none yet) */
	struct plan_map fresh;    /* those records -> buffer */
	struct plan_counts counts;
	uint64_t budget;          /* the device's; set at create, read by the planner too */
	double h2d_bytes_per_s, d2h_bytes_per_s; /* its copy engines', likewise */
	enum policy_order order;  /* the device's, likewise */
	bool eager;               /* the device's (policy_device.eager) */

	/* The planner's side, under lock. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	/* Build at the mark, no thread: a modeled device (the simulator's
	 * clock) or a deterministic one (policy_device). */
	bool at_mark;
	bool stop, job_pending;
	struct plan_record job;
	size_t job_nops;
	uint64_t job_start, job_len, job_max_id;
	struct plan *ready;       /* the newest plan built, not yet followed */
	uint64_t built, late;
};

/* The replay of p's evictions in the device's order, or in the one the
 * replay chooses (policy_device.order). */
static dao_status plan_evictions(const struct plan_state *s, struct plan *p)
{
	if (s->order == POLICY_ORDER_CHOSEN)
		return plan_choose_evictions(p, s->budget, s->h2d_bytes_per_s, s->d2h_bytes_per_s);
	return plan_build_evictions(p, s->budget, s->order == POLICY_ORDER_CLEAN_FIRST);
}

/* Build the pending job (called with lock held; drops it meanwhile). */
static void build_job(struct plan_state *s)
{
	struct plan_record job = s->job;
	size_t nops = s->job_nops;
	uint64_t start = s->job_start, len = s->job_len, max_id = s->job_max_id;
	struct plan *p = NULL;
	dao_status st;

	memset(&s->job, 0, sizeof(s->job));
	s->job_pending = false;
	pthread_mutex_unlock(&s->lock);
	st = plan_build(&job, nops, start, len, max_id, PLAN_CPU_LIMIT_S, &p);
	if (st == DAO_OK && (st = plan_evictions(s, p)) != DAO_OK) {
		plan_free(p);
		p = NULL;
	}
	plan_record_free(&job);
	pthread_mutex_lock(&s->lock);
	if (st == DAO_OK) {
		plan_free(s->ready);
		s->ready = p;
		s->built++;
	} else {
		s->late++;
	}
}

static void *planner_main(void *arg)
{
	struct plan_state *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->stop && !s->job_pending)
			pthread_cond_wait(&s->wake, &s->lock);
		if (s->stop)
			break;
		build_job(s);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static dao_status plan_create(const struct policy_device *dev, void **state)
{
	struct plan_state *s = fault_calloc(1, sizeof(*s));

	if (!s)
		return DAO_ERR_NOMEM;
	s->recording = true;
	/* Records made before the policy started were named before any
	 * iteration it records. */
	s->max_id = dev->ids_before ? dev->ids_before - 1 : 0;
	s->seq_start = dev->seq_start;
	s->budget = dev->budget;
	s->h2d_bytes_per_s = dev->h2d_bytes_per_s;
	s->d2h_bytes_per_s = dev->d2h_bytes_per_s;
	s->order = dev->order;
	s->eager = dev->eager;
	s->at_mark = dev->modeled || dev->deterministic;
	if (pthread_mutex_init(&s->lock, NULL)) {
		free(s);
		return DAO_ERR_NOMEM;
	}
	if (pthread_cond_init(&s->wake, NULL)) {
		pthread_mutex_destroy(&s->lock);
		free(s);
		return DAO_ERR_NOMEM;
	}
	if (!s->at_mark && fault_pthread_create(&s->thread, NULL, planner_main, s)) {
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return DAO_ERR_NOMEM;
	}
	*state = s;
	return DAO_OK;
}

static void stop_following(struct plan_state *s)
{
	plan_free(s->follow);
	s->follow = NULL;
	free(s->contradicted);
	s->contradicted = NULL;
	free(s->bound);
	s->bound = NULL;
	plan_map_free(&s->fresh);
}

static void plan_destroy(void *state)
{
	struct plan_state *s = state;

	if (!s->at_mark) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	stop_following(s);
	plan_free(s->ready);
	plan_record_free(&s->job);
	plan_record_free(&s->rec);
	free(s->max_before);
	free(s);
}

static void stop_recording(struct plan_state *s)
{
	s->recording = false;
	plan_record_free(&s->rec);
	free(s->max_before);
	s->max_before = NULL;
	s->cap_max_before = 0;
}

/* Whether op (of the iteration followed) agrees with the plan; advances
 * the cursor and binds the records the iteration creates. */
static bool agrees(struct plan_state *s, uint64_t seq, enum policy_op_kind kind, uint32_t n,
		   const struct policy_use *uses)
{
	const struct plan *p = s->follow;
	const struct plan_op *o;

	if (s->cursor >= p->nops)
		return false;
	o = &p->ops[s->cursor];
	if (o->seq != seq - s->mark_seq || o->kind != kind || o->n != n)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t e = o->first + i, b = p->canon[e], had;

		if (uses[i].bytes != p->bytes[e] || (uint8_t)uses[i].mode != p->mode[e])
			return false;
		if (p->persistent[b]) {
			if (uses[i].id != p->buf_id[b])
				return false;
		} else if (s->bound[b]) {
			if (uses[i].id != s->bound[b])
				return false;
		} else {
			/* New in this iteration, and no other buffer's. */
			if (uses[i].id <= s->mark_max_id ||
			    !plan_map_put(&s->fresh, uses[i].id, b, &had))
				return false;
			s->bound[b] = uses[i].id;
		}
	}
	s->cursor++;
	return true;
}

/* What leaving the plan asks of core: a re-rank when plan keys were given. */
static enum policy_after rerank_if_keyed(struct plan_state *s)
{
	if (!s->keyed)
		return POLICY_CONTINUE;
	s->keyed = false;
	return POLICY_RERANK;
}

/* Check one recorded op of the iteration followed; on the first that
 * departs, fall back to dao until the next mark. */
static enum policy_after check(struct plan_state *s, const struct plan_op *op,
			       const struct policy_use *uses)
{
	uint64_t off = op->seq - s->mark_seq;

	if (!s->follow || s->departed || off > s->follow->len)
		return POLICY_CONTINUE; /* a later iteration's: checked at its mark */
	/* At len the next mark is due: an op there is one more than the plan's. */
	if (off < s->follow->len && agrees(s, op->seq, op->kind, op->n, uses))
		return POLICY_CONTINUE;
	s->departed = true;
	s->counts.departures++;
	return rerank_if_keyed(s);
}

static enum policy_after plan_queued(void *state, const struct policy_op *op)
{
	struct plan_state *s = state;
	uint64_t before = s->max_id;
	dao_status st;

	for (uint32_t i = 0; i < op->nuses; i++)
		if (op->uses[i].id > s->max_id)
			s->max_id = op->uses[i].id;
	if (!s->recording)
		return POLICY_CONTINUE;
	st = plan_record_add(&s->rec, op, PLAN_MAX_USES);
	if (st == DAO_OK && s->rec.nops > s->cap_max_before) {
		size_t ncap = s->rec.capops;
		uint64_t *p = realloc(s->max_before, ncap * sizeof(*p));

		if (!p) {
			st = DAO_ERR_NOMEM;
		} else {
			s->max_before = p;
			s->cap_max_before = ncap;
		}
	}
	if (st != DAO_OK) {
		/* No room for the iteration: dao from here on. */
		stop_recording(s);
		if (s->follow && !s->departed) {
			s->departed = true;
			s->counts.departures++;
			return rerank_if_keyed(s);
		}
		return POLICY_CONTINUE;
	}
	s->max_before[s->rec.nops - 1] = before;
	return check(s, &s->rec.ops[s->rec.nops - 1], s->rec.uses + s->rec.ops[s->rec.nops - 1].first);
}

/* Forget rec's first k ops. */
static void drop_front(struct plan_state *s, size_t k)
{
	plan_record_drop_front(&s->rec, k);
	if (s->rec.nops)
		memmove(s->max_before, s->max_before + k, s->rec.nops * sizeof(*s->max_before));
}

/* The first op of rec after seq. */
static size_t first_after(const struct plan_record *r, uint64_t seq)
{
	size_t lo = 0, hi = r->nops;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->ops[mid].seq <= seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Hand the iteration that ended at mark m (rec's first k ops) to the
 * planner, keeping the ops after it in rec. The planner gets rec's
 * arrays; the ops after the mark (at most the window) are copied. */
static void hand_off(struct plan_state *s, const struct policy_mark *m, size_t k)
{
	struct plan_record rest = { 0 };
	bool ok = true;

	for (size_t i = k; i < s->rec.nops && ok; i++) {
		const struct plan_op *o = &s->rec.ops[i];
		struct policy_op op = { .seq = o->seq, .kind = o->kind, .nuses = o->n,
					.uses = s->rec.uses + o->first };

		ok = plan_record_add(&rest, &op, PLAN_MAX_USES) == DAO_OK;
	}
	if (!ok) {
		plan_record_free(&rest);
		stop_recording(s);
		return;
	}
	if (s->rec.nops > k)
		memmove(s->max_before, s->max_before + k,
			(s->rec.nops - k) * sizeof(*s->max_before));
	s->rec.nops = k;
	s->rec.nuses = k ? s->rec.ops[k - 1].first + s->rec.ops[k - 1].n : 0;
	pthread_mutex_lock(&s->lock);
	plan_record_free(&s->job); /* one not yet started: the newer one replaces it */
	s->job = s->rec;
	s->job_nops = k;
	s->job_start = s->mark_seq;
	s->job_len = m->seq - s->mark_seq;
	s->job_max_id = s->mark_max_id;
	s->job_pending = true;
	if (s->at_mark)
		build_job(s);
	else
		pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	s->rec = rest;
}

/* Follow plan p (a newer one, or the one followed so far) from the mark
 * just reached: the ops already recorded after it are checked now. */
static void follow_from_mark(struct plan_state *s, struct plan *p)
{
	if (p != s->follow) {
		stop_following(s);
		/* What the run contradicted holds for as long as the plan
		 * is followed; without room for it, nothing is learned. */
		s->contradicted = calloc(p->use_start[p->nbufs] ? p->use_start[p->nbufs] : 1, 1);
	}
	free(s->bound);
	s->bound = NULL;
	plan_map_free(&s->fresh);
	s->follow = p;
	s->departed = false;
	s->cursor = 0;
	s->bound = calloc(p->nbufs ? p->nbufs : 1, sizeof(*s->bound));
	if (!s->bound || plan_map_init(&s->fresh, p->nbufs)) {
		stop_following(s);
		return;
	}
	for (size_t i = 0; i < s->rec.nops && !s->departed; i++)
		check(s, &s->rec.ops[i], s->rec.uses + s->rec.ops[i].first);
}

/* The plan of the iteration that begins at mark m, from its own ops: it
 * is queued whole (m->next_seq), and built at the mark (at_mark), so the
 * rec holds it from its first op. NULL when the build failed (counted
 * late: the last iteration's plan, if any, stays in force). */
static struct plan *plan_queued_iteration(struct plan_state *s, const struct policy_mark *m)
{
	size_t n = first_after(&s->rec, m->next_seq);
	struct plan *p = NULL;
	dao_status st = plan_build(&s->rec, n, m->seq, m->next_seq - m->seq, s->mark_max_id,
				   PLAN_CPU_LIMIT_S, &p);

	if (st == DAO_OK && (st = plan_evictions(s, p)) != DAO_OK) {
		plan_free(p);
		p = NULL;
	}
	pthread_mutex_lock(&s->lock);
	if (st == DAO_OK)
		s->built++;
	else
		s->late++;
	pthread_mutex_unlock(&s->lock);
	return p;
}

static enum policy_after plan_iteration(void *state, const struct policy_mark *m)
{
	struct plan_state *s = state;
	enum policy_after after = POLICY_CONTINUE;
	bool followed = false;
	/* The iteration beginning here is queued whole, and a plan built here
	 * costs the device no time: plan it from its own ops, not the last
	 * iteration's (which is then not built at all). */
	bool queued_whole = s->recording && s->at_mark && m->next_seq > m->seq;
	size_t k;
	uint64_t max_before;
	struct plan *p;

	/* A mark queued before the policy started (the default for iterative
	 * jobs takes over as the job queues a mark, with others perhaps
	 * still queued): the ops before it were not recorded, so it is no
	 * mark to plan from, and nothing recorded comes before it. */
	if (m->seq < s->seq_start)
		return POLICY_CONTINUE;
	k = first_after(&s->rec, m->seq);
	max_before = k < s->rec.nops ? s->max_before[k] : s->max_id;

	if (s->follow) {
		if (!s->departed && (s->cursor != s->follow->nops || m->seq - s->mark_seq != s->follow->len))
			s->counts.departures++;
		else if (!s->departed)
			followed = true;
		s->counts.followed += followed;
		after = rerank_if_keyed(s); /* its keys count from the mark */
	}
	if (s->recording) {
		/* What came before the first mark is no iteration; an iteration
		 * that followed its plan to the end would build the same plan
		 * again (the same ops, uses and buffers), so it is not built. */
		if (s->have_mark && !followed && !queued_whole)
			hand_off(s, m, k);
		else
			drop_front(s, k);
	}
	s->have_mark = true;
	s->mark_seq = m->seq;
	s->mark_max_id = max_before;
	pthread_mutex_lock(&s->lock);
	p = s->ready;
	s->ready = NULL;
	s->counts.built = s->built;
	s->counts.late = s->late;
	pthread_mutex_unlock(&s->lock);
	/* A plan built since, from an iteration before the one just
	 * followed: the plan in force describes the job as it is now. */
	if (followed && p) {
		plan_free(p);
		p = NULL;
	}
	if (queued_whole) {
		struct plan *q = plan_queued_iteration(s, m);

		if (q) {
			plan_free(p);
			p = q;
		}
	}
	/* The newest plan built, else the one followed so far: a build slower
	 * than an iteration leaves the last plan in force. */
	if (!s->recording) {
		plan_free(p);
		stop_following(s);
	} else if (p || s->follow) {
		/* Followed from here: its keys replace dao's (unless the ops
		 * queued after the mark depart at once). */
		follow_from_mark(s, p ? p : s->follow);
		if (s->follow && !s->departed)
			after = POLICY_RERANK;
	}
	if (after == POLICY_RERANK)
		s->keyed = false;
	return after;
}

/* The plan the job follows now: NULL before one, and from a departure to
 * the next mark. */
static const struct plan *in_force(const struct plan_state *s)
{
	return s->departed ? NULL : s->follow;
}

/* Whether the plan in force keeps the order clean first. */
static bool clean_first(const struct plan_state *s)
{
	const struct plan *p = in_force(s);

	return p && p->clean_first;
}

/* dao's key, or the plan's next use where the window holds none. */
static struct policy_rank plan_rank(void *state, const struct policy_rec *r)
{
	struct plan_state *s = state;
	struct policy_rank k = policy_dao.rank(NULL, r);
	const struct plan *p = in_force(s);
	uint64_t at, next;
	uint32_t b;

	if (!p || (r->next_use != POLICY_USE_UNKNOWN && !r->predicted))
		return k;
	if (!plan_map_get(&p->persistent_ids, r->id, &b) && !plan_map_get(&s->fresh, r->id, &b))
		return k;
	at = r->last_use > s->mark_seq ? r->last_use - s->mark_seq : 0;
	next = plan_next_use(p, b, at);
	if (next != UINT64_MAX) {
		k.key = s->mark_seq + next;
		s->keyed = true;
	} else if (p->persistent[b] && (next = plan_next_use(p, b, 0)) != UINT64_MAX) {
		k.key = s->mark_seq + p->len + next;
		s->keyed = true;
	}
	return k;
}

void policy_plan_counts(void *state, struct plan_counts *out)
{
	struct plan_state *s = state;

	*out = s->counts;
	pthread_mutex_lock(&s->lock);
	out->built = s->built;
	out->late = s->late;
	pthread_mutex_unlock(&s->lock);
}

/* The summary line's: what the plan did for the job. */
static void plan_summary(void *state, char *buf, size_t len)
{
	struct plan_counts c;

	policy_plan_counts(state, &c);
	snprintf(buf, len,
		 " plans_built=%" PRIu64 " plans_late=%" PRIu64 " iterations_followed=%" PRIu64
		 " plan_departures=%" PRIu64,
		 c.built, c.late, c.followed, c.departures);
}

/* The plan's order where its replay chose clean first (a dirty record
 * only when no clean one is left), else dao's. */
static bool plan_pick_apart(void *state, uint64_t apart_key, uint64_t key, uint64_t now)
{
	if (clean_first(state))
		return false;
	return policy_dao.pick_apart(NULL, apart_key, key, now);
}

/* The rest is dao's (its state is none). */

static bool plan_fetch_now(void *state, const struct policy_fetch *f)
{
	return policy_dao.fetch_now(NULL, f);
}

/* Rule 2's wait moves the fewest bytes, and leaves the h2d engine idle
 * while the better victim is in use; taking the room at once keeps it
 * busy for a fetch more later. Which finishes first depends on the job
 * (daosim.md, "Prefetches that take their room at once"), so the device
 * says. */
static uint64_t plan_fetch_room(void *state, struct policy_fetch_room *q)
{
	const struct plan_state *s = state;

	return s->eager ? 0 : policy_dao.fetch_room(NULL, q);
}

/*
 * Whether the plan's replay of the iteration (plan_evict.c) evicts the
 * candidate in the gap that ends at its next use (a next use in the next
 * iteration, for a buffer the iteration found, is its first use there),
 * for a record the plan holds at a key that is one of its uses, while the
 * iteration follows the plan; *gap gets the gap's index where it is not
 * PLAN_GAP_NONE. The window's peak room says only that some record must
 * leave before the candidate's next use, and where the window ends it
 * says nothing; the replay says which. Cleaning one that stays until it
 * is rewritten is d2h time thrown away: on the tiled Cholesky at 33% a
 * quarter of dao's write-backs, on the CNN at 50% a fifth of the plan's
 * at libdao's window (daosim.md, "The iteration planned from its own
 * ops").
 */
static enum plan_gap plan_says(const struct plan_state *s, uint64_t id, uint64_t key,
			       uint32_t *gap)
{
	const struct plan *p = in_force(s);
	uint32_t b;

	if (!p || key >= POLICY_KEY_UNKNOWN || key <= s->mark_seq)
		return PLAN_GAP_NONE;
	if (!plan_map_get(&p->persistent_ids, id, &b) && !plan_map_get(&s->fresh, id, &b))
		return PLAN_GAP_NONE;
	/* A key that is no use of the record's in the plan is a guess the
	 * plan cannot judge (PLAN_GAP_NONE). */
	return plan_gap_at(p, b, key - s->mark_seq, gap);
}

/*
 * The plan's answer where it has one, else dao's. Where the plan sees the
 * candidate evicted, the write-back is one the run will need, so it may
 * run ahead as far as the fetches already issued keep the h2d engine
 * busy, when that is longer than the kernels up to the frontier compute:
 * a fetch the eviction makes room for waits behind that queue anyway, so
 * a write-back done within it delays none, and the d2h engine is
 * otherwise idle then (at the turn of an iteration, while the next one's
 * parameters arrive). dao, without the plan, does not know that the
 * record leaves, and on the stencils at libdao's window the same reach
 * cost it 3.5-6.2% (daosim.md, "Cleaning ahead within the h2d engine's
 * queue"). Where the plan sees it stay, nothing is cleaned this turn: the
 * candidate is the dirty record used farthest ahead.
 */
static bool plan_clean(void *state, struct policy_clean *c)
{
	const struct plan_state *s = state;
	uint32_t gap;

	switch (plan_says(s, c->id, c->key, &gap)) {
	case PLAN_GAP_LEAVES:
		return policy_clean_in_time(c, c->fetch_queue_ns);
	case PLAN_GAP_STAYS:
		if (s->contradicted && s->contradicted[gap])
			break; /* the run evicts it there: dao's rule */
		return false;
	case PLAN_GAP_NONE:
		break;
	}
	/* dao's rule, that some record leaves, assumes dao's order. */
	if (clean_first(state))
		return false;
	return policy_dao.clean(NULL, c);
}

/*
 * The run evicted a dirty record, with its write-back, in a gap where the
 * plan's replay keeps it: the executor's victims are not the replay's
 * there (it evicts for prefetches a window ahead, the replay only when a
 * kernel needs room), so "it stays" is not followed in that gap again
 * while this plan is: dao's rule decides there, and the next iteration's
 * eviction finds it cleaned. Only that gap: elsewhere the replay may
 * still be right, and on the CNN at 33% one wrong gap is no reason to
 * clean the write-backs the replay saves everywhere (daosim.md, "When
 * the run evicts what the plan keeps").
 */
static void plan_evicted_dirty(void *state, uint64_t id, uint64_t key)
{
	struct plan_state *s = state;
	uint32_t gap;

	if (s->contradicted && plan_says(s, id, key, &gap) == PLAN_GAP_STAYS)
		s->contradicted[gap] = 1;
}

const struct dao_policy_ops policy_plan = {
	.create = plan_create,
	.destroy = plan_destroy,
	.rank = plan_rank,
	.pick_apart = plan_pick_apart,
	.fetch_now = plan_fetch_now,
	.fetch_room = plan_fetch_room,
	.clean = plan_clean,
	.evicted_dirty = plan_evicted_dirty,
	.iteration = plan_iteration,
	.queued = plan_queued,
	.summary = plan_summary,
};
