/* SPDX-License-Identifier: MIT */
/*
 * test_plan_policy.c - the plan policy (libdao/src/policy/plan.c) through
 * its ops, as core calls them: an iteration recorded, the plan built (at
 * the mark on a modeled device, in the policy's thread otherwise) and
 * followed in the next iteration, a record keyed by the plan's next use
 * where the window holds none, the counts, and each kind of departure
 * (another size, another buffer, an op more) falling back to dao's keys
 * at once, with a re-rank only where plan keys were given; cleaning
 * ahead where the plan's replay, not the window, says a record leaves;
 * an iteration queued whole planned from its own ops at its mark; and
 * the order of eviction the replay chose (clean first where write-backs
 * are dear); prefetches that take their room at once where the device
 * says so. The property tests (test_property) run it on the host
 * backend against the plain interpreter.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "policy/plan.h"
#include "policy/policy.h"
#include "tap.h"

#define MB (UINT64_C(1) << 20)

struct job {
	void *s;
	enum policy_after last;
};

static enum policy_after op(struct job *j, uint64_t seq, uint32_t n, const struct policy_use *u)
{
	struct policy_op o = { .seq = seq, .kind = POLICY_OP_KERNEL, .flops = 1, .nuses = n,
			       .uses = u };

	return j->last = policy_plan.queued(j->s, &o);
}

/* A mark reached with the next one queued at next_seq (0: none queued). */
static enum policy_after mark_before(struct job *j, uint64_t seq, uint64_t it, uint64_t next_seq)
{
	struct policy_mark m = { .seq = seq, .iteration = it, .next_seq = next_seq };

	return j->last = policy_plan.iteration(j->s, &m);
}

static enum policy_after mark(struct job *j, uint64_t seq, uint64_t it)
{
	return mark_before(j, seq, it, 0);
}

/*
 * One iteration from mark `at`: the parameters 1 and 2 (named before the
 * first mark) and a buffer `act` it creates:
 *   at+1: 1 r, act w    at+2: act r    at+3: 2 r    at+4: 1 r
 * act_bytes changes its size, extra adds an op at at+5.
 */
static void iteration(struct job *j, uint64_t at, uint64_t act, uint64_t act_bytes, bool extra)
{
	op(j, at + 1, 2,
	   (struct policy_use[]){ { 1, MB, DAO_R }, { act, act_bytes, DAO_W } });
	op(j, at + 2, 1, (struct policy_use[]){ { act, act_bytes, DAO_R } });
	op(j, at + 3, 1, (struct policy_use[]){ { 2, MB, DAO_R } });
	op(j, at + 4, 1, (struct policy_use[]){ { 1, MB, DAO_R } });
	if (extra)
		op(j, at + 5, 1, (struct policy_use[]){ { 2, MB, DAO_R } });
}

static uint64_t key(struct job *j, uint64_t id, uint64_t last_use, uint64_t next_use)
{
	struct policy_rec r = { .id = id, .bytes = MB, .next_use = next_use,
				.last_use = last_use };

	return policy_plan.rank(j->s, &r).key;
}

static struct plan_counts counts(struct job *j)
{
	struct plan_counts c;

	policy_plan_counts(j->s, &c);
	return c;
}

static struct policy_device device(bool modeled)
{
	return (struct policy_device){ .budget = 64 * MB, .lookahead = 64, .h2d_bytes_per_s = 1e9,
				       .d2h_bytes_per_s = 1e9, .flops_per_s = 1e12,
				       .mem_bytes_per_s = 1e12, .modeled = modeled };
}

static void start_on(struct job *j, bool modeled, bool deterministic)
{
	struct policy_device dev = device(modeled);

	dev.deterministic = deterministic;

	if (policy_plan.create(&dev, &j->s) != DAO_OK)
		tap_bail("plan: create");
	/* Before the loop: a kernel without buffers (no uses, NULL: recorded
	 * and dropped at the first mark, as UBSan checks), then the parameters
	 * named (set up). */
	op(j, 4, 0, NULL);
	op(j, 5, 2, (struct policy_use[]){ { 1, MB, DAO_W }, { 2, MB, DAO_W } });
	mark(j, 10, 1);
	iteration(j, 10, 100, MB, false);
}

static void start(struct job *j, bool modeled)
{
	start_on(j, modeled, false);
}

static void test_modeled(void)
{
	struct job j;
	struct plan_counts c;

	start(&j, true);
	tap_ok(key(&j, 1, 11, POLICY_USE_UNKNOWN) == policy_key_oldest_first(11),
	       "no plan yet: dao's key");
	tap_ok(mark(&j, 15, 2) == POLICY_RERANK && counts(&j).built == 1,
	       "a modeled device: the plan is built at the mark, followed at once, re-ranked");
	iteration(&j, 15, 200, MB, false);
	tap_ok(j.last == POLICY_CONTINUE && counts(&j).departures == 0,
	       "the next iteration follows it (a new buffer in the place of the last one's)");
	tap_ok(key(&j, 1, 16, POLICY_USE_UNKNOWN) == 19,
	       "a parameter the window holds no use of: keyed by its next use in the plan");
	tap_ok(key(&j, 1, 19, POLICY_USE_UNKNOWN) == 21,
	       "after its last use of the iteration: its first of the next one");
	tap_ok(key(&j, 1, 19, 30) == 30 && key(&j, 1, 19, POLICY_USE_DEAD) == POLICY_KEY_DEAD,
	       "a use the window holds, and dead data, keep dao's key");
	tap_ok(key(&j, 200, 16, POLICY_USE_UNKNOWN) == 17,
	       "a buffer this iteration created: matched by its place, keyed by the plan");
	tap_ok(key(&j, 100, 11, POLICY_USE_UNKNOWN) == policy_key_oldest_first(11),
	       "last iteration's buffer is not in this one's plan: dao's key");
	mark(&j, 20, 3);
	c = counts(&j);
	tap_ok(c.followed == 1 && c.built == 1,
	       "the iteration followed its plan to the end: counted, and no plan built from it "
	       "(it would be the same)");
	tap_ok(key(&j, 1, 19, POLICY_USE_UNKNOWN) == 21,
	       "the plan in force goes on from the mark (a parameter keyed by it)");

	/* Another size. */
	iteration(&j, 20, 300, 2 * MB, false);
	c = counts(&j);
	tap_ok(c.departures == 1 && key(&j, 1, 21, POLICY_USE_UNKNOWN) == policy_key_oldest_first(21),
	       "a buffer of another size departs: counted, dao's keys at once");
	mark(&j, 25, 4);
	c = counts(&j);
	tap_ok(c.followed == 1 && c.departures == 1 && c.built == 2,
	       "and the iteration is not counted as followed; its plan is built");

	/* The plan of that iteration (another size) is followed next; core's
	 * re-rank at the mark keys a parameter by it; another buffer where a
	 * parameter was departs. */
	tap_ok(key(&j, 1, 25, POLICY_USE_UNKNOWN) == 26, "the re-rank at the mark keys by the new plan");
	op(&j, 26, 2, (struct policy_use[]){ { 7, MB, DAO_R }, { 400, 2 * MB, DAO_W } });
	tap_ok(j.last == POLICY_RERANK && counts(&j).departures == 2,
	       "another record in a parameter's place departs, and asks for a re-rank");
	mark(&j, 30, 5);
	/* Its plan departs at its first op, before any record was keyed by it:
	 * the order is dao's already, and a re-rank would only lose the keys
	 * core predicted from the last iteration. */
	op(&j, 31, 1, (struct policy_use[]){ { 8, MB, DAO_R } });
	tap_ok(j.last == POLICY_CONTINUE && counts(&j).departures == 3,
	       "a departure before any plan key was given asks for no re-rank");
	policy_plan.destroy(j.s);
}

/* The clean question on a window that needs no room, with 1 ms of
 * compute to the frontier and a d2h engine of 1 GB/s (a byte a ns). */
static uint64_t no_room(struct policy_clean *c)
{
	return 0;
}

static uint64_t one_ms(struct policy_clean *c)
{
	return 1000000;
}

static uint64_t byte_a_ns(struct policy_clean *c, uint64_t bytes)
{
	return bytes;
}

static bool clean_fq(struct job *j, uint64_t id, uint64_t key, uint64_t walk_end,
		     uint64_t queue_ns, uint64_t fetch_queue_ns)
{
	struct policy_clean c = { .id = id, .key = key, .bytes = MB / 4, .frontier = walk_end,
				  .live_fits = true, .walk_end = walk_end, .queue_ns = queue_ns,
				  .fetch_queue_ns = fetch_queue_ns, .peak_room = no_room,
				  .compute_ns = one_ms, .d2h_ns = byte_a_ns };

	return policy_plan.clean(j->s, &c);
}

static bool clean(struct job *j, uint64_t id, uint64_t key, uint64_t walk_end, uint64_t queue_ns)
{
	return clean_fq(j, id, key, walk_end, queue_ns, 0);
}

/* The clean question where dao's rule cleans: not every live record
 * fits, and the window needs 64 MB more room than is free before the
 * candidate's next use. */
static uint64_t room_64mb(struct policy_clean *c)
{
	return 64 * MB;
}

static struct policy_clean tight(uint64_t id, uint64_t key, uint64_t walk_end)
{
	return (struct policy_clean){ .id = id, .key = key, .bytes = MB / 4, .frontier = 11,
				      .walk_end = walk_end, .peak_room = room_64mb,
				      .compute_ns = one_ms, .d2h_ns = byte_a_ns };
}

static bool clean_tight(struct job *j, uint64_t id, uint64_t key, uint64_t walk_end)
{
	struct policy_clean c = tight(id, key, walk_end);

	return policy_plan.clean(j->s, &c);
}

/*
 * Cleaning ahead where the window cannot see the room: the iterations of
 * iteration() with a buffer of 63 MB in a budget of 64 MB. Op 1 needs
 * room for it beside parameter 1, so parameter 2 leaves the device there
 * every iteration (the plan's replay: between its use at op 3 and the
 * next iteration's op 3), while parameter 1, an operand of op 1 and read
 * again at op 4 when parameter 2 is back beside it (2 MB), never leaves.
 * The window (walk_end) shows nothing that needs room, and every record
 * the table holds fits.
 */
static void start_tight(struct job *j)
{
	struct policy_device dev = device(true);

	if (policy_plan.create(&dev, &j->s) != DAO_OK)
		tap_bail("plan: create");
	op(j, 5, 2, (struct policy_use[]){ { 1, MB, DAO_W }, { 2, MB, DAO_W } });
	mark(j, 10, 1);
	iteration(j, 10, 100, 63 * MB, false);
}

static void test_clean(void)
{
	struct job j;

	start_tight(&j);
	tap_ok(!clean(&j, 2, 23, 17, 0), "no plan yet: dao's answer (everything live fits: not cleaned)");
	mark(&j, 15, 2);
	iteration(&j, 15, 200, 63 * MB, false);
	tap_ok(clean(&j, 2, 23, 17, 0),
	       "parameter 2, next used in the next iteration past the window, leaves the device "
	       "before that use in the plan's replay: the plan cleans it");
	tap_ok(!clean(&j, 2, 23, 17, 900000),
	       "not while the d2h engine's queue leaves no time for it");
	tap_ok(clean_fq(&j, 2, 23, 17, 900000, 2000000),
	       "but within the fetches the h2d engine has queued (2 ms), longer than the compute: "
	       "cleaned");
	tap_ok(!clean_fq(&j, 2, 23, 17, 1900000, 2000000), "not past them");
	tap_ok(!clean_fq(&j, 1, 21, 17, 0, 2000000),
	       "nor parameter 1, which the replay keeps, whatever the queue");
	tap_ok(!clean_tight(&j, 1, 21, 17),
	       "parameter 1 stays on the device until its next use in the replay: not cleaned, "
	       "where dao's rule (some record must leave) would clean it");
	tap_ok(clean_tight(&j, 2, 18, 20) && !clean_tight(&j, 1, 19, 20),
	       "within the window's walk too: parameter 2 (leaves) cleaned, parameter 1 (stays) "
	       "not");
	tap_ok(clean_tight(&j, 2, 22, 17) && !clean(&j, 2, 22, 17, 0),
	       "a key that is no use of the record's: dao's answer, either way");
	op(&j, 20, 1, (struct policy_use[]){ { 9, MB, DAO_R } }); /* where the mark is due */
	tap_ok(counts(&j).departures == 1 && !clean(&j, 2, 23, 17, 0) && clean_tight(&j, 1, 21, 17),
	       "after a departure: dao's answer, either way");
	policy_plan.destroy(j.s);
}

/*
 * The run evicts, with its write-back, a record in a gap where the plan's
 * replay keeps it (the executor evicts for prefetches a window ahead, the
 * replay only for the kernel that needs room): from then on dao's rule
 * decides in that gap, and only there, for as long as the plan is
 * followed. The iterations of test_clean: parameter 1 stays in both its
 * gaps (its use at op 1 to op 4, and op 4 to the next iteration's op 1).
 */
static void test_contradicted(void)
{
	struct job j;

	start_tight(&j);
	policy_plan.evicted_dirty(j.s, 1, 21); /* no plan yet: nothing to learn */
	mark(&j, 15, 2);
	iteration(&j, 15, 200, 63 * MB, false);
	tap_ok(!clean_tight(&j, 1, 21, 17) && !clean_tight(&j, 1, 19, 20),
	       "before: parameter 1 stays in both gaps, and a gap learned before the plan counts "
	       "for nothing");
	policy_plan.evicted_dirty(j.s, 2, 23); /* a gap where it leaves: nothing new */
	policy_plan.evicted_dirty(j.s, 1, 21);
	tap_ok(clean_tight(&j, 1, 21, 17) && !clean(&j, 1, 21, 17, 0),
	       "evicted dirty in the gap up to its use in the next iteration: there dao's answer, "
	       "either way");
	tap_ok(!clean_tight(&j, 1, 19, 20), "its other gap still stays");
	tap_ok(clean(&j, 2, 23, 17, 0) && !clean_fq(&j, 2, 23, 17, 1900000, 2000000),
	       "parameter 2, evicted where the plan says it leaves: the plan's answer as before");
	mark(&j, 20, 3);
	iteration(&j, 20, 300, 63 * MB, false);
	tap_ok(counts(&j).followed == 1 && clean_tight(&j, 1, 26, 22) && !clean_tight(&j, 1, 24, 25),
	       "the plan followed on: the same gap of the next iteration is dao's, the other "
	       "stays");
	op(&j, 25, 1, (struct policy_use[]){ { 9, MB, DAO_R } }); /* a departure */
	mark(&j, 26, 4);
	iteration(&j, 26, 400, 63 * MB, false);
	mark(&j, 31, 5);
	tap_ok(counts(&j).built >= 2 && !clean_tight(&j, 1, 37, 33),
	       "a plan built since (after the departure) starts with nothing learned");
	policy_plan.destroy(j.s);
}

/*
 * An iteration queued whole when its mark is reached (its end mark is
 * queued: a window longer than the iteration) is planned from its own
 * ops, at the mark, on a device that builds there; the iterations of
 * test_clean (a 63 MB buffer in 64 MB: parameter 2 leaves every
 * iteration, parameter 1 never), the first one included.
 */
static void test_queued_whole(void)
{
	struct policy_device dev = device(true);
	struct job j;
	struct policy_clean c;

	if (policy_plan.create(&dev, &j.s) != DAO_OK)
		tap_bail("plan: create");
	op(&j, 5, 2, (struct policy_use[]){ { 1, MB, DAO_W }, { 2, MB, DAO_W } });
	iteration(&j, 10, 100, 63 * MB, false);
	tap_ok(mark_before(&j, 10, 1, 15) == POLICY_RERANK && counts(&j).built == 1,
	       "the first mark, its iteration queued whole: planned from its own ops and followed "
	       "at once, with no iteration recorded before");
	tap_ok(key(&j, 1, 11, POLICY_USE_UNKNOWN) == 14 && key(&j, 100, 11, POLICY_USE_UNKNOWN) == 12,
	       "its next uses key the records (a buffer it creates too)");
	c = tight(1, 14, 20);
	tap_ok(policy_dao.clean(NULL, &c) && !clean_tight(&j, 1, 14, 20),
	       "parameter 1, which the replay keeps: not cleaned, where dao's rule (some record "
	       "must leave) would clean it");
	tap_ok(clean_tight(&j, 2, 13, 20),
	       "parameter 2, which leaves in the replay before its use the window holds: cleaned");
	iteration(&j, 15, 200, 63 * MB, false);
	mark_before(&j, 15, 2, 20);
	tap_ok(counts(&j).followed == 1 && counts(&j).built == 2 && counts(&j).departures == 0,
	       "the next one, queued whole too: the plan followed to its end, and the next "
	       "iteration planned from its own ops");
	iteration(&j, 20, 300, 63 * MB, false);
	mark(&j, 20, 3);
	tap_ok(counts(&j).followed == 2 && counts(&j).built == 2,
	       "an iteration not queued whole at its mark: the last plan in force, none built");
	tap_ok(key(&j, 1, 21, POLICY_USE_UNKNOWN) == 24 && !clean_tight(&j, 1, 24, 30) &&
		       clean_tight(&j, 2, 23, 30),
	       "the last iteration's plan stays in force: it keys the records, and its replay "
	       "decides cleaning ahead");
	policy_plan.destroy(j.s);

	/* The policy's thread builds plans of iterations recorded whole only:
	 * a build at the mark would cost a real device's executor its time. */
	dev = device(false);
	if (policy_plan.create(&dev, &j.s) != DAO_OK)
		tap_bail("plan: create");
	op(&j, 5, 2, (struct policy_use[]){ { 1, MB, DAO_W }, { 2, MB, DAO_W } });
	iteration(&j, 10, 100, 63 * MB, false);
	tap_ok(mark_before(&j, 10, 1, 15) == POLICY_CONTINUE && counts(&j).built == 0 &&
		       key(&j, 1, 11, POLICY_USE_UNKNOWN) == policy_key_oldest_first(11),
	       "on a device with the policy's thread, an iteration queued whole is not planned at "
	       "its mark");
	policy_plan.destroy(j.s);
}

/*
 * The order of eviction the plan's replay chose. One iteration of 1 MB
 * buffers in 2 MB: D updated at +1 and read at +10, C read at +2 and +4,
 * E at +3 (kernels without buffers between). At +3 dao's order gives up
 * D (used 7 ahead, dirty) before C (used 1 ahead): a write-back; clean
 * first gives up C and fetches it again at +4. Where a write-back costs
 * a thousand times a fetch, the plan keeps the order clean first.
 */
static void clean_first_iteration(struct job *j, uint64_t at)
{
	op(j, at + 1, 1, (struct policy_use[]){ { 1, MB, DAO_RW } });
	op(j, at + 2, 1, (struct policy_use[]){ { 2, MB, DAO_R } });
	op(j, at + 3, 1, (struct policy_use[]){ { 3, MB, DAO_R } });
	op(j, at + 4, 1, (struct policy_use[]){ { 2, MB, DAO_R } });
	for (uint64_t k = 5; k < 10; k++)
		op(j, at + k, 0, NULL);
	op(j, at + 10, 1, (struct policy_use[]){ { 1, MB, DAO_R } });
}

/* A 2 MB device, write-backs a thousand times dearer than fetches when
 * slow, in `order`, that has recorded clean_first_iteration and built its
 * plan at the mark after it (21). */
static void order_job(struct job *j, bool slow, enum policy_order order)
{
	struct policy_device dev = device(true);

	dev.budget = 2 * MB;
	dev.order = order;
	if (slow)
		dev.d2h_bytes_per_s = 1e6;
	if (policy_plan.create(&dev, &j->s) != DAO_OK)
		tap_bail("plan: create");
	op(j, 5, 3, (struct policy_use[]){ { 1, MB, DAO_W }, { 2, MB, DAO_W }, { 3, MB, DAO_W } });
	mark(j, 10, 1);
	clean_first_iteration(j, 10);
	mark(j, 21, 2);
}

static void test_order(void)
{
	for (int slow = 0; slow < 2; slow++) {
		struct job j;
		bool dao_apart = policy_dao.pick_apart(NULL, 30, 23, 22);

		order_job(&j, slow, POLICY_ORDER_CHOSEN);
		if (!slow) {
			tap_ok(counts(&j).built == 1 && dao_apart &&
				       policy_plan.pick_apart(j.s, 30, 23, 22) == dao_apart,
			       "copy engines alike: the plan keeps dao's order (the dirty record, "
			       "used 8 ahead, before the clean one used 1 ahead)");
			policy_plan.destroy(j.s);
			continue;
		}
		tap_ok(counts(&j).built == 1 && !policy_plan.pick_apart(j.s, 30, 23, 22),
		       "write-backs dear: the plan keeps the order clean first, and a dirty record "
		       "goes only when no clean one is left");
		tap_ok(!clean_tight(&j, 9, 40, 50),
		       "nor is a record the plan cannot judge cleaned ahead on dao's rule, which "
		       "assumes dao's order");
		op(&j, 22, 1, (struct policy_use[]){ { 7, MB, DAO_R } }); /* departs */
		tap_ok(counts(&j).departures == 1 && policy_plan.pick_apart(j.s, 30, 23, 22) &&
			       clean_tight(&j, 9, 40, 50),
		       "after a departure: dao's order and dao's cleaning");
		policy_plan.destroy(j.s);
	}
}

/* The device's order (DAO_CONFIG_PLAN_*), where it is fixed, is the
 * plan's whatever its replay would choose: clean first with the engines
 * alike, dao's with write-backs dear. */
static void test_order_fixed(void)
{
	for (int slow = 0; slow < 2; slow++) {
		struct job j;
		bool dao_apart = policy_dao.pick_apart(NULL, 30, 23, 22);

		order_job(&j, slow, slow ? POLICY_ORDER_DAO : POLICY_ORDER_CLEAN_FIRST);
		if (slow)
			tap_ok(counts(&j).built == 1 && policy_plan.pick_apart(j.s, 30, 23, 22) ==
								dao_apart,
			       "dao's order fixed: kept where write-backs are dear");
		else
			tap_ok(counts(&j).built == 1 && !policy_plan.pick_apart(j.s, 30, 23, 22),
			       "clean first fixed: kept where the copy engines are alike");
		policy_plan.destroy(j.s);
	}
}

/* A prefetch that found no free space, a record in use before its kernel
 * a better victim at key 42 once that use is done, and the fetch due or
 * not, late if it waits or not. */
static bool room_due, room_late;

static uint64_t better_42(struct policy_fetch_room *q)
{
	return 42;
}

static bool due(struct policy_fetch_room *q)
{
	return room_due;
}

static bool late_waiting(struct policy_fetch_room *q)
{
	return room_late;
}

/* Where the device says so (DAO_CONFIG_PLAN_EAGER), a prefetch takes its
 * room at once: the best victim now, whatever rule 2 would wait for; else
 * it answers as dao does. Either way, with a plan in force or none. */
static void test_eager(void)
{
	for (int eager = 0; eager < 2; eager++) {
		struct policy_device dev = device(true);
		struct job j;

		dev.eager = eager;
		if (policy_plan.create(&dev, &j.s) != DAO_OK)
			tap_bail("plan: create");
		for (int planned = 0; planned < 2; planned++) {
			bool same_as_dao = true, at_once = true;

			for (int c = 0; c < 4; c++) {
				struct policy_fetch_room q = { .target = 30, .better_key = better_42,
							       .due = due,
							       .late_waiting = late_waiting };
				uint64_t got, dao;

				room_due = c & 1;
				room_late = c & 2;
				got = policy_plan.fetch_room(j.s, &q);
				dao = policy_dao.fetch_room(NULL, &q);
				same_as_dao &= got == dao;
				at_once &= got == 0;
			}
			if (eager)
				tap_ok(at_once, "eager, %s: every prefetch takes the best victim now "
						"(rule 2 would wait for key 42)",
				       planned ? "a plan in force" : "no plan yet");
			else
				tap_ok(same_as_dao, "waiting, %s: dao's answer, due or not, late or not",
				       planned ? "a plan in force" : "no plan yet");
			if (!planned) {
				op(&j, 5, 2, (struct policy_use[]){ { 1, MB, DAO_W }, { 2, MB, DAO_W } });
				mark(&j, 10, 1);
				iteration(&j, 10, 100, MB, false);
				mark(&j, 15, 2);
				if (counts(&j).built != 1)
					tap_bail("plan: no plan built at the second mark");
			}
		}
		policy_plan.destroy(j.s);
	}
}

static void test_extra_op(void)
{
	struct job j;

	start(&j, true);
	mark(&j, 15, 2);
	key(&j, 1, 15, POLICY_USE_UNKNOWN); /* core's re-rank: keyed by the plan */
	iteration(&j, 15, 200, MB, true); /* an op more, at 15 + 5: the mark's place */
	tap_ok(counts(&j).departures == 1 && j.last == POLICY_RERANK,
	       "a kernel more than the plan has departs");
	mark(&j, 21, 3);
	iteration(&j, 21, 300, MB, false); /* the plan of the longer iteration: one op fewer */
	mark(&j, 26, 4);
	tap_ok(counts(&j).departures == 2 && counts(&j).followed == 0,
	       "a kernel fewer departs at the mark");
	policy_plan.destroy(j.s);
}

/* With the policy's thread the mark never waits, so whether a plan is
 * ready at a given mark depends on the thread; once one is built it is
 * followed from the next mark on, and stays so while no newer one is. */
static void test_thread(void)
{
	struct job j;
	struct plan_counts c;

	start(&j, false);
	mark(&j, 15, 2);
	do {
		sched_yield();
		c = counts(&j);
	} while (!c.built && !c.late);
	tap_ok(c.built == 1 && c.late == 0, "the policy's thread builds the plan");
	iteration(&j, 15, 200, MB, false);
	tap_ok(mark(&j, 20, 3) == POLICY_RERANK, "followed from the next mark at the latest");
	iteration(&j, 20, 300, MB, false);
	tap_ok(key(&j, 1, 21, POLICY_USE_UNKNOWN) == 24 && key(&j, 300, 21, POLICY_USE_UNKNOWN) == 22 &&
		       counts(&j).departures == 0,
	       "its next uses key the records");
	mark(&j, 25, 4); /* whether iteration 3's plan is built yet or not */
	iteration(&j, 25, 400, MB, false);
	tap_ok(key(&j, 1, 26, POLICY_USE_UNKNOWN) == 29 && counts(&j).departures == 0,
	       "the next iteration follows a plan too, the newest built or the last");
	/* Destroyed with a build perhaps queued (iteration 4's): joined. */
	mark(&j, 30, 5);
	c = counts(&j);
	tap_ok(c.followed >= 2 && c.departures == 0, "iterations followed to their end");
	{
		/* The policy's thread may finish a build (iteration 4's) at any
		 * time: the line's plans_built lies between the counts before
		 * and after it. */
		char line[200];
		unsigned long long built, late, followed, departures;
		struct plan_counts after;

		c = counts(&j);
		policy_plan.summary(j.s, line, sizeof(line));
		after = counts(&j);
		tap_ok(sscanf(line, " plans_built=%llu plans_late=%llu iterations_followed=%llu plan_departures=%llu",
			      &built, &late, &followed, &departures) == 4 &&
			       built >= c.built && built <= after.built && late == 0 && followed == c.followed &&
			       departures == 0,
		       "the summary line's figures: %s", line);
	}
	policy_plan.destroy(j.s);
}

/* A deterministic device (DAO_CONFIG_DETERMINISTIC) decides from the
 * program alone: the plan is built at the mark, as on a modeled one, never
 * on a thread whose timing would choose the mark it is followed from. */
static void test_deterministic(void)
{
	struct job j;

	start_on(&j, false, true);
	tap_ok(mark(&j, 15, 2) == POLICY_RERANK && counts(&j).built == 1,
	       "deterministic: the plan is built at the mark and followed at once");
	iteration(&j, 15, 200, MB, false);
	tap_ok(key(&j, 1, 16, POLICY_USE_UNKNOWN) == 19 && counts(&j).departures == 0,
	       "deterministic: its next uses key the records from the first iteration after it");
	policy_plan.destroy(j.s);
}

/* Started on a device in use (the default for iterative jobs takes over
 * as the job queues a mark): records up to id 2 existed before, ops before
 * seq 20 were queued before; the mark at 15, queued before too, is reached
 * after it started. */
static void test_started_late(void)
{
	struct policy_device dev = device(true);
	struct job j;

	dev.ids_before = 3;
	dev.seq_start = 20;
	if (policy_plan.create(&dev, &j.s) != DAO_OK)
		tap_bail("plan: create");
	tap_ok(mark(&j, 15, 1) == POLICY_CONTINUE && counts(&j).built == 0,
	       "started late: a mark queued before it is no mark to plan from");
	mark(&j, 20, 2);
	tap_ok(counts(&j).built == 0, "the first mark after it: nothing before it to plan");
	iteration(&j, 20, 100, MB, false);
	tap_ok(mark(&j, 25, 3) == POLICY_RERANK && counts(&j).built == 1,
	       "the next mark plans the iteration it recorded whole");
	iteration(&j, 25, 200, MB, false);
	tap_ok(key(&j, 1, 26, POLICY_USE_UNKNOWN) == 29 && counts(&j).departures == 0,
	       "followed: the records made before it started are the same ones every time");
	mark(&j, 30, 4);
	tap_ok(counts(&j).followed == 1 && counts(&j).departures == 0,
	       "the iteration followed its plan to the end");
	policy_plan.destroy(j.s);
}

int main(void)
{
	tap_ok(policy_named("plan") && policy_named("plan")->ops == &policy_plan &&
		       policy_entry(DAO_POLICY_PLAN)->ops == &policy_plan,
	       "plan is a row of the table of policies");
	test_modeled();
	test_clean();
	test_contradicted();
	test_queued_whole();
	test_order();
	test_order_fixed();
	test_eager();
	test_extra_op();
	test_thread();
	test_deterministic();
	test_started_late();
	tap_plan_done();
	return tap_exit();
}
