/* SPDX-License-Identifier: MIT */
/*
 * test_policy.c - the policy interface (policy/policy.h): the shipped
 * policies' orders and shared answers from the facts alone; and, on a
 * device built by hand over the simulated backend, what core asks of a
 * policy it knows nothing about: the worked example of
 * Documentation/design.md ("evict the largest first", written here as a
 * new policy would be) orders the victim heaps with no change to core,
 * and a stateful policy gets its state with the device, the facts of every
 * queued op and iteration mark, and has every resident record re-ranked
 * at once when its order changes (and only then).
 */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/ask.h"
#include "core/objects.h"
#include "core/queue.h"
#include "core/residency.h"
#include "core/victim.h"
#include "dao_sim.h"
#include "policy/policy.h"
#include "tap.h"

#define KB 1024u

static struct policy_rank rank(const struct dao_policy_ops *p, struct policy_rec f)
{
	return p->rank(NULL, &f);
}

static void test_table(void)
{
	int complete = 1;

	for (dao_policy p = DAO_POLICY_DAO; p <= DAO_POLICY_FIFO; p++) {
		const struct dao_policy_ops *o = policy_ops(p);

		complete &= o && o->rank && o->fetch_now && o->fetch_room;
	}
	tap_ok(complete, "every policy's row has its victim order and prefetch answers");
	tap_ok(!policy_ops(DAO_POLICY_DEFAULT) && !policy_ops((dao_policy)99),
	       "default and a value outside the enum have no ops");
}

/* dao and belady: Belady's order. */
static void test_next_use_order(const char *name, const struct dao_policy_ops *p)
{
	struct policy_rec near = { .next_use = 10, .last_use = 5 };
	struct policy_rec far = { .next_use = 900, .last_use = 5 };
	struct policy_rec dead = { .next_use = POLICY_USE_DEAD, .last_use = 5 };
	struct policy_rec host = { .next_use = POLICY_USE_HOST, .last_use = 5 };
	struct policy_rec old = { .next_use = POLICY_USE_UNKNOWN, .last_use = 3 };
	struct policy_rec recent = { .next_use = POLICY_USE_UNKNOWN, .last_use = 8 };

	tap_ok(rank(p, far).key > rank(p, near).key, "%s: the farther next use goes first", name);
	tap_ok(rank(p, recent).key > rank(p, far).key,
	       "%s: no known future goes after every known use", name);
	tap_ok(rank(p, old).key > rank(p, recent).key,
	       "%s: of those, the least recently used first", name);
	tap_ok(rank(p, host).key > rank(p, old).key,
	       "%s: a record a host kernel needs next before any other use", name);
	tap_ok(rank(p, dead).key > rank(p, host).key, "%s: dead data first of all", name);
	tap_ok(rank(p, far).key == 900, "%s: the key of a known use is its seq (rule 1 reads it)",
	       name);
}

static void test_orders(void)
{
	struct policy_rec clean = { .next_use = 300 }, dirty = { .next_use = 300, .dirty = true };
	struct policy_rec a = { .next_use = 20, .last_use = 4, .load_seq = 9 };
	struct policy_rec b = { .next_use = 900, .last_use = 7, .load_seq = 2 };

	test_next_use_order("dao", &policy_dao);
	test_next_use_order("belady", &policy_belady);
	tap_ok(rank(&policy_dao, dirty).apart && !rank(&policy_dao, clean).apart,
	       "dao ranks dirty records apart");
	tap_ok(!rank(&policy_belady, dirty).apart, "belady ranks none apart");
	tap_ok(rank(&policy_lru, a).key > rank(&policy_lru, b).key,
	       "lru: the least recently used first, whatever the next use");
	tap_ok(rank(&policy_fifo, b).key > rank(&policy_fifo, a).key,
	       "fifo: the first loaded first, whatever the next use");
	tap_ok(!rank(&policy_lru, dirty).apart && !rank(&policy_fifo, dirty).apart,
	       "lru and fifo rank none apart");
	/* now 100: the clean victim is needed in 100, the dirty one in d. */
	tap_ok(policy_dao.pick_apart(NULL, 230, 200, 100),
	       "dao takes a dirty victim needed more than 1.25 times as far (130 against 100)");
	tap_ok(!policy_dao.pick_apart(NULL, 220, 200, 100), "and not one needed 120 away");
	tap_ok(!policy_dao.pick_apart(NULL, policy_key_oldest_first(1), policy_key_oldest_first(2),
				      100),
	       "a clean victim with no known future goes before any dirty one");
	tap_ok(policy_dao.pick_apart(NULL, policy_key_oldest_first(1), 200, 100),
	       "a dirty one with no known future before a clean one needed");
}

static void test_fetch_bounded(void)
{
	struct policy_fetch f = { .budget = 64 * 1024 * KB, .bytes = 256 * KB };

	tap_ok(policy_fetch_bounded(NULL, &f), "rule 3: a fetch with nothing ahead goes");
	f.ahead_bytes = 512 * KB;
	tap_ok(policy_fetch_bounded(NULL, &f), "up to budget / 64 ahead (1 MiB)");
	f.ahead_bytes = 800 * KB;
	tap_ok(!policy_fetch_bounded(NULL, &f), "not beyond it");
	f.bytes = 1024 * KB;
	f.ahead_bytes = 2048 * KB;
	tap_ok(policy_fetch_bounded(NULL, &f), "or up to 3 x the buffer when that is more");
	f.bytes = 64 * 1024 * KB;
	f.ahead_bytes = 0;
	tap_ok(policy_fetch_bounded(NULL, &f), "a fetch as large as the budget with nothing ahead");
}

/* dao's answers on cleaning ahead, from a window whose room and compute
 * time are given: 1 ms of compute to the frontier, 50 GB/s d2h, a
 * candidate of 10 MB (0.2 ms). */
struct fixed_window {
	struct policy_clean c; /* first */
	uint64_t room, compute_ns;
};

static uint64_t fixed_room(struct policy_clean *c)
{
	return ((struct fixed_window *)c)->room;
}

static uint64_t fixed_compute(struct policy_clean *c)
{
	return ((struct fixed_window *)c)->compute_ns;
}

static uint64_t fixed_d2h(struct policy_clean *c, uint64_t bytes)
{
	return bytes / 50; /* 50 GB/s: 50 bytes a ns */
}

static void test_dao_clean(void)
{
	struct fixed_window w = {
		.c = { .key = 500, .bytes = 10000000, .frontier = 100, .free_bytes = 0,
		       .peak_room = fixed_room, .compute_ns = fixed_compute, .d2h_ns = fixed_d2h },
		.room = 1ull << 30,
		.compute_ns = 1000000,
	};

	tap_ok(policy_dao.clean(NULL, &w.c), "dao cleans a record needed after the frontier");
	w.c.cleaned_bytes = 1ull << 40;
	w.c.free_bytes = 0;
	w.room = (1ull << 40) + 1;
	tap_ok(policy_dao.clean(NULL, &w.c),
	       "1 TB cleaned long ago and still resident does not hold it back: none queued");
	w.c.queue_ns = 900000;
	tap_ok(!policy_dao.clean(NULL, &w.c),
	       "0.9 ms queued and 0.2 ms more is past 1 ms of compute to the frontier: not now");
	w.c.fetch_queue_ns = 5000000;
	tap_ok(!policy_dao.clean(NULL, &w.c),
	       "nor with 5 ms of fetches queued: dao, not knowing the record leaves, keeps to the compute");
	w.c.fetch_queue_ns = 0;
	w.c.queue_ns = 800000;
	tap_ok(policy_dao.clean(NULL, &w.c), "0.8 ms queued and 0.2 ms more is within it");
	w.c.queue_ns = 0;
	w.c.bytes = 1ull << 36;
	tap_ok(policy_dao.clean(NULL, &w.c), "one record goes when none is queued, however long");
	w.room = 1ull << 40;
	tap_ok(!policy_dao.clean(NULL, &w.c),
	       "not once what is free and cleaned covers the room needed before its next use");
	w.room = 1ull << 41;
	w.c.key = 100;
	tap_ok(!policy_dao.clean(NULL, &w.c), "nor a record needed before the frontier");
	w.c.key = 500;
	tap_ok(policy_dao.clean(NULL, &w.c), "needed after it again: cleaned");
	w.c.live_fits = true;
	tap_ok(!policy_dao.clean(NULL, &w.c), "not when every live record fits: none is evicted");
}

/* The worked example of Documentation/design.md, "Where to change what":
 * a new policy, evict the largest first. */
static struct policy_rank largest_rank(void *state, const struct policy_rec *r)
{
	if (r->next_use == POLICY_USE_DEAD)
		return (struct policy_rank){ .key = POLICY_KEY_DEAD };
	/* No future known: after every known use, the largest first. */
	return (struct policy_rank){ .key = POLICY_KEY_UNKNOWN + r->bytes };
}

static const struct dao_policy_ops policy_largest = {
	.rank = largest_rank,
	.fetch_now = policy_fetch_bounded,     /* rule 3, as the others */
	.fetch_room = policy_room_free_only, /* knows no future: into free space only */
};

/* A stateful policy: largest or smallest first as its state says (the
 * test sets it), a re-rank at every mark, and a record of what core told
 * it. */
struct sized {
	struct policy_device dev;
	bool smallest;
	enum policy_after after_queued;
	unsigned queued, marks, ranks;
	void *state_seen; /* the state the hooks got, NULL if ever another */
	struct policy_op op;
	struct policy_use uses[4];
	struct policy_mark mark;
	struct policy_rec last;
};

static struct sized *sized_live; /* for the test to look at */
static unsigned sized_destroyed;

static dao_status sized_create(const struct policy_device *dev, void **state)
{
	struct sized *s = calloc(1, sizeof(*s));

	if (!s)
		return DAO_ERR_NOMEM;
	s->dev = *dev;
	s->state_seen = s;
	sized_live = s;
	*state = s;
	return DAO_OK;
}

static void sized_destroy(void *state)
{
	sized_destroyed++;
	sized_live = NULL;
	free(state);
}

static void seen(struct sized *s, void *state)
{
	if (state != s)
		s->state_seen = NULL;
}

static struct policy_rank sized_rank(void *state, const struct policy_rec *r)
{
	struct sized *s = state;

	seen(s, state);
	s->ranks++;
	s->last = *r;
	return (struct policy_rank){ .key = POLICY_KEY_UNKNOWN +
					    (s->smallest ? POLICY_KEY_SPAN - r->bytes : r->bytes) };
}

static enum policy_after sized_iteration(void *state, const struct policy_mark *m)
{
	struct sized *s = state;

	seen(s, state);
	s->marks++;
	s->mark = *m;
	return POLICY_RERANK;
}

static enum policy_after sized_queued(void *state, const struct policy_op *op)
{
	struct sized *s = state;

	seen(s, state);
	s->queued++;
	s->op = *op;
	memcpy(s->uses, op->uses, (op->nuses < 4 ? op->nuses : 4) * sizeof(*op->uses));
	s->op.uses = s->uses;
	return s->after_queued;
}

static const struct dao_policy_ops policy_sized = {
	.create = sized_create,
	.destroy = sized_destroy,
	.rank = sized_rank,
	.fetch_now = policy_fetch_bounded,
	.fetch_room = policy_room_free_only,
	.iteration = sized_iteration,
	.queued = sized_queued,
};

static dao_status refuse_create(const struct policy_device *dev, void **state)
{
	return DAO_ERR_NOMEM;
}

/* A device as device_create makes one, without its executor: the
 * simulated backend, the arena, the victim heaps. */
struct bench {
	struct device *d;
	struct rec *r[3];
	struct opnd u[3];
	struct op op;
};

static struct bench *bench_new(void)
{
	struct bench *b = calloc(1, sizeof(*b));
	struct dao_sim_model m;
	struct dao_backend *be;

	dao_sim_model_preset("h100", &m);
	if (!b || dao_backend_sim_create(&m, 1 << 20, 0, &be) != DAO_OK)
		tap_bail("sim backend");
	b->d = aligned_alloc(_Alignof(struct device), sizeof(struct device));
	if (!b->d)
		tap_bail("device");
	memset(b->d, 0, sizeof(*b->d));
	b->d->be = be;
	b->d->budget = 1 << 20;
	b->d->lookahead = 7;
	b->d->q.next_seq = 1;
	victim_init(b->d);
	if (!arena_init(&b->d->res.arena, b->d->budget, 256, true))
		tap_bail("arena");
	return b;
}

/* Three resident records of 3, 1 and 2 KB, ids 1..3. */
static void bench_records(struct bench *b)
{
	static const uint64_t kb[3] = { 3, 1, 2 };

	for (int i = 0; i < 3; i++) {
		struct rec *r = aligned_alloc(_Alignof(struct rec), sizeof(struct rec));

		if (!r)
			tap_bail("record");
		memset(r, 0, sizeof(*r));
		r->id = (uint64_t)i + 1;
		r->size = r->asize = kb[i] * KB;
		r->heap.pos = -1;
		r->blk = arena_alloc(&b->d->res.arena, r->asize);
		r->copies.dev_valid = r->copies.host_valid = true;
		r->last_use = 40 + (uint64_t)i;
		r->load_seq = 30 + (uint64_t)i;
		r->all.next = b->d->recs.all;
		b->d->recs.all = r;
		b->r[i] = r;
		victim_update(b->d, r);
	}
}

static void bench_free(struct bench *b)
{
	ask_stop(b->d);
	victim_destroy(b->d);
	for (int i = 0; i < 3; i++) {
		if (b->r[i]) {
			dao_fence none = { 0 };

			arena_free(&b->d->res.arena, b->r[i]->blk, &none);
		}
		free(b->r[i]);
	}
	arena_destroy(&b->d->res.arena);
	b->d->be->ops->destroy(b->d->be);
	free(b->d);
	free(b);
}

static void test_start_refused(void)
{
	struct bench *b = bench_new();
	struct dao_policy_ops no_rank = policy_largest, fails = policy_sized;
	dao_status st;

	no_rank.rank = NULL;
	st = ask_start(b->d, &no_rank);
	tap_ok(st == DAO_ERR_CONFIG && !b->d->policy.ops, "a table without its victim order is refused (%s)",
	       dao_strerror(st));
	fails.create = refuse_create;
	st = ask_start(b->d, &fails);
	tap_ok(st == DAO_ERR_NOMEM && !b->d->policy.ops && !b->d->policy.state && !b->d->res.pol_uses,
	       "a state that cannot be created fails the start and leaves the device as it was (%s)",
	       dao_strerror(st));
	bench_free(b);
}

static void test_new_policy_in_core(void)
{
	struct bench *b = bench_new();
	struct rec *v;

	if (ask_start(b->d, &policy_largest) != DAO_OK)
		tap_bail("start");
	bench_records(b);
	v = victim_pick(b->d, 0);
	tap_ok(v == b->r[0], "the example policy: core evicts the largest first (3 KB)");
	victim_remove(b->d, v);
	tap_ok(victim_pick(b->d, 0) == b->r[2], "then the 2 KB record");
	tap_ok(victim_pick(b->d, 1000) == b->r[2],
	       "keys after every known use: rule 1 lets a prefetch for any kernel take them");
	b->r[1]->released = true;
	victim_update(b->d, b->r[1]);
	tap_ok(victim_pick(b->d, 0) == b->r[1], "a released record, dead, goes first of all");
	bench_free(b);
}

/* The dirty fact core hands the policy: dao ranks apart a record whose
 * eviction would write it back, whatever its next use, and no other. */
static void test_dirty_fact(void)
{
	struct bench *b = bench_new();
	struct victim_heap *apart = &b->d->res.heaps[HEAP_DIRTY];

	if (ask_start(b->d, &policy_dao) != DAO_OK)
		tap_bail("start");
	bench_records(b);
	tap_ok(apart->n == 0, "dao: clean records rank together");
	b->r[0]->copies.host_valid = false;
	victim_update(b->d, b->r[0]);
	tap_ok(apart->n == 1 && apart->v[0] == b->r[0],
	       "a record valid on the device only ranks apart, with no known future too");
	b->r[0]->released = true;
	victim_update(b->d, b->r[0]);
	tap_ok(apart->n == 0, "not once its data is dead: dropping it writes nothing back");
	bench_free(b);
}

static void test_stateful(void)
{
	struct bench *b = bench_new();
	struct sized *s;
	struct op mark = { .kind = OP_ITER, .seq = 60 };
	dao_status st = ask_start(b->d, &policy_sized);

	s = sized_live;
	tap_ok(st == DAO_OK && s && b->d->policy.state == s, "a stateful policy's state comes with start");
	if (!s)
		tap_bail("no state");
	tap_ok(s->dev.budget == 1 << 20 && s->dev.lookahead == 7 && s->dev.h2d_bytes_per_s > 0 &&
		       s->dev.flops_per_s > 0,
	       "created for the device: its budget, lookahead and rates");
	bench_records(b);
	tap_ok(s->ranks == 3 && s->last.id == 3 && s->last.bytes == 2 * KB &&
		       s->last.next_use == POLICY_USE_UNKNOWN && s->last.last_use == 42 &&
		       s->last.load_seq == 32 && !s->last.dirty && !s->last.predicted,
	       "rank gets the record's facts (id, space, no known future, last use, load)");
	tap_ok(victim_pick(b->d, 0) == b->r[0], "largest first while its state says so");

	/* A kernel reading record 2 and overwriting record 3. */
	b->op = (struct op){ .kind = OP_KERNEL, .seq = 50, .flops = 1234, .opnd = b->u, .nopnd = 2 };
	b->u[0] = (struct opnd){ .rec = b->r[1], .mode = MODE_R };
	b->u[1] = (struct opnd){ .rec = b->r[2], .mode = MODE_W };
	table_append(b->d, &b->op);
	tap_ok(s->queued == 1 && s->op.seq == 50 && s->op.kind == POLICY_OP_KERNEL &&
		       s->op.flops == 1234 && s->op.nuses == 2 && s->uses[0].id == 2 &&
		       s->uses[0].bytes == KB && s->uses[0].mode == DAO_R && s->uses[1].id == 3 &&
		       s->uses[1].mode == DAO_W,
	       "queued: the op's seq, kind, flops and each use (id, space, mode)");
	tap_ok(s->last.id == 3 && s->last.next_use == POLICY_USE_DEAD,
	       "a record whose next access overwrites it whole is ranked dead");

	/* The state changes, no re-rank asked: keys stay as they were. */
	s->smallest = true;
	tap_ok(victim_pick(b->d, 0) == b->r[0], "keys change only when core re-ranks");
	res_iteration(b->d, &mark);
	tap_ok(s->marks == 1 && s->mark.seq == 60 && s->mark.iteration == 1 &&
		       s->mark.prev_len == 60 && s->mark.next_seq == 0,
	       "an iteration mark: its seq, the iterations begun, the last one's length, no "
	       "next mark queued");
	tap_ok(victim_pick(b->d, 0) == b->r[1],
	       "its hook asked for a re-rank: every resident record re-ranked at once (smallest "
	       "first now)");
	s->smallest = false;
	s->after_queued = POLICY_RERANK;
	b->op.seq = 70;
	b->op.nopnd = 0;
	table_append(b->d, &b->op);
	tap_ok(s->queued == 2 && victim_pick(b->d, 0) == b->r[0],
	       "so can a queued op's hook (largest first again)");
	{
		/* The next iteration queued whole: its end mark behind a kernel
		 * and a later mark. */
		struct op m3 = { .kind = OP_ITER, .seq = 90 };
		struct op m2 = { .kind = OP_ITER, .seq = 80, .next = &m3 };
		struct op k = { .kind = OP_KERNEL, .seq = 71, .next = &m2 };
		struct op m1 = { .kind = OP_ITER, .seq = 70, .next = &k };

		res_iteration(b->d, &m1);
		tap_ok(s->marks == 2 && s->mark.seq == 70 && s->mark.prev_len == 10 &&
			       s->mark.next_seq == 80,
		       "a mark whose iteration is queued whole: the next mark's seq");
	}
	tap_ok(s->state_seen == s, "every hook got the state it created");
	bench_free(b);
	tap_ok(sized_destroyed == 1 && !sized_live, "the state goes with the device");
}

int main(void)
{
	test_table();
	test_orders();
	test_fetch_bounded();
	test_dao_clean();
	test_start_refused();
	test_new_policy_in_core();
	test_dirty_fact();
	test_stateful();
	tap_plan_done();
	return tap_exit();
}
