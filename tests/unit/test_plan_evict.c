/* SPDX-License-Identifier: MIT */
/*
 * test_plan_evict.c - the plan's eviction replay (libdao/src/policy/
 * plan_evict.c): which buffers a device of the budget's size gives up
 * between two of their uses, in the policy's order. One iteration worked
 * out by hand (kernels of several operands, the gaps into the next
 * iteration), then random iterations of kernels and host reads and
 * writes against a plain reference written here: a linear scan for each
 * victim instead of heaps, the same rule, in dao's order and clean first,
 * and the order plan_choose_evictions keeps.
 */
#include <stdlib.h>
#include <string.h>

#include "policy/plan_evict.h"
#include "tap.h"

#define MB (UINT64_C(1) << 20)

static void add(struct plan_record *r, uint64_t seq, enum policy_op_kind kind, uint32_t n,
		const struct policy_use *u)
{
	struct policy_op o = { .seq = seq, .kind = kind, .flops = 1, .nuses = n, .uses = u };

	if (plan_record_add(r, &o, 1u << 20) != DAO_OK)
		tap_bail("plan_record_add");
}

/*
 * Three parameters X, Y, Z (ids 1-3, named before the mark at 10) of 1 MB
 * in a budget of 2 MB, each updated once a step and X read again:
 *   11: X rw    12: Y rw    13: Z rw    14: X r     (next mark at 15)
 * Pass 0 brings them in; in the pass marked (times 4-7, the next pass
 * 8-11), the policy's order (farthest next use first; all three are
 * dirty, so the dirty rule does not apply) gives:
 *   5 (Y rw): resident X (next 7) and Z (next 6): X goes, after its use
 *     at 11, before its use at 14.
 *   7 (X r): resident Y (next 9) and Z (next 10): Z goes, after its use
 *     at 13, before the next iteration's at 18.
 *   8, 9: X and Y resident, nothing goes; 10 (Z rw): X (next 11), Y (next
 *     13): Y goes, but its gap began at 9, past the pass marked.
 * So Y stays from its use at 12 to the next iteration's at 17, and X from
 * 14 to the next iteration's 16.
 */
static void test_by_hand(void)
{
	struct plan_record r = { 0 };
	struct plan *p;

	add(&r, 11, POLICY_OP_KERNEL, 1, (struct policy_use[]){ { 1, MB, DAO_RW } });
	add(&r, 12, POLICY_OP_KERNEL, 1, (struct policy_use[]){ { 2, MB, DAO_RW } });
	add(&r, 13, POLICY_OP_KERNEL, 1, (struct policy_use[]){ { 3, MB, DAO_RW } });
	add(&r, 14, POLICY_OP_KERNEL, 1, (struct policy_use[]){ { 1, MB, DAO_R } });
	if (plan_build(&r, r.nops, 10, 5, 3, 0, &p) != DAO_OK ||
	    plan_build_evictions(p, 2 * MB, false) != DAO_OK)
		tap_bail("plan_build");
	/* Buffers in the order first named: X 0, Y 1, Z 2; offsets from 10. */
	tap_ok(plan_evicted(p, 0, 4), "X leaves between its update at 11 and its read at 14");
	tap_ok(plan_evicted(p, 2, 5 + 3), "Z leaves between its update and the next one");
	tap_ok(!plan_evicted(p, 1, 5 + 2), "Y stays from its update to the next one");
	tap_ok(!plan_evicted(p, 0, 5 + 1), "X stays from its read to the next update");
	tap_ok(!plan_evicted(p, 0, 3) && !plan_evicted(p, 0, 5 + 4),
	       "no answer where X has no use");
	plan_free(p);
	plan_record_free(&r);

	/*
	 * A budget of 3 MB and the same iteration with a kernel of two
	 * operands: 12 reads X beside Y's update. Everything fits: nothing
	 * leaves.
	 */
	add(&r, 11, POLICY_OP_KERNEL, 1, (struct policy_use[]){ { 1, MB, DAO_RW } });
	add(&r, 12, POLICY_OP_KERNEL, 2, (struct policy_use[]){ { 2, MB, DAO_RW }, { 1, MB, DAO_R } });
	add(&r, 13, POLICY_OP_KERNEL, 1, (struct policy_use[]){ { 3, MB, DAO_RW } });
	if (plan_build(&r, r.nops, 10, 4, 3, 0, &p) != DAO_OK ||
	    plan_build_evictions(p, 3 * MB, false) != DAO_OK)
		tap_bail("plan_build");
	tap_ok(!plan_evicted(p, 0, 2) && !plan_evicted(p, 0, 4 + 1) && !plan_evicted(p, 1, 4 + 2) &&
		       !plan_evicted(p, 2, 4 + 3),
	       "all of it fits: nothing leaves");
	plan_free(p);
	plan_record_free(&r);
}

/* A random iteration: ops of one use each (so that no two buffers share a
 * next use and the order of eviction is one), kernels mostly. */
struct rop {
	enum policy_op_kind kind;
	uint32_t buf; /* index: persistent ones first */
	dao_mode mode;
};

struct rit {
	size_t nops, npers, nbufs;
	struct rop ops[64];
	uint64_t size[16];
	uint64_t budget;
};

static uint32_t rnd(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/* read_pct: the share of kernels that only read their buffer (else a
 * third each of r, w and rw). */
static void random_iteration(uint32_t *seed, struct rit *t, uint32_t read_pct)
{
	static const dao_mode modes[] = { DAO_R, DAO_W, DAO_RW };
	uint64_t largest = 0, total = 0;

	memset(t, 0, sizeof(*t));
	t->npers = 1 + rnd(seed) % 5;
	t->nbufs = t->npers + rnd(seed) % 6;
	t->nops = 4 + rnd(seed) % 40;
	for (size_t b = 0; b < t->nbufs; b++) {
		t->size[b] = (1 + rnd(seed) % 4) * MB;
		largest = t->size[b] > largest ? t->size[b] : largest;
		total += t->size[b];
	}
	for (size_t i = 0; i < t->nops; i++) {
		uint32_t k = rnd(seed) % 10;

		t->ops[i].kind = k < 8 ? POLICY_OP_KERNEL : k == 8 ? POLICY_OP_WRITE : POLICY_OP_READ;
		t->ops[i].buf = rnd(seed) % t->nbufs;
		t->ops[i].mode = t->ops[i].kind == POLICY_OP_WRITE ? DAO_W
				 : t->ops[i].kind == POLICY_OP_READ ? DAO_R
				 : rnd(seed) % 100 < read_pct       ? DAO_R
								    : modes[rnd(seed) % 3];
	}
	/* From the largest buffer (every kernel fits) to all of them. */
	t->budget = largest + rnd(seed) % (total - largest + 1);
}

/* The reference: per use i of the iteration (one per op), whether the
 * buffer leaves after it and before its next use. */
struct rstate {
	uint64_t next;
	size_t gap;
	int gap_pass;
	bool resident, dirty, dead_next, pinned;
};

static void ref_leave(struct rstate *x, uint64_t size, uint64_t *used)
{
	x->resident = x->dirty = false;
	*used -= size;
}

/* What the reference replays in: the order, and the bytes the marked
 * pass moves each way. */
struct rrun {
	bool clean_first;
	uint64_t h2d, d2h;
};

static void ref_room(const struct rit *t, struct rstate *st, uint64_t size, uint64_t *used,
		     uint64_t now, bool *marked, struct rrun *run)
{
	while (*used + size > t->budget) {
		int c = -1, d = -1, v;

		for (size_t b = 0; b < t->nbufs; b++) {
			const struct rstate *x = &st[b];

			if (!x->resident || x->pinned)
				continue;
			if (x->dirty && !x->dead_next) {
				if (d < 0 || x->next > st[d].next)
					d = (int)b;
			} else if (c < 0 || x->next > st[c].next) {
				c = (int)b;
			}
		}
		if (c < 0 && d < 0)
			return;
		v = d >= 0 && (c < 0 || (!run->clean_first &&
					 (st[d].next - now) / 5 > (st[c].next - now) / 4))
			    ? d
			    : c;
		if (st[v].gap_pass == 1) {
			marked[st[v].gap] = true;
			if (v == d)
				run->d2h += t->size[v];
		}
		ref_leave(&st[v], t->size[v], used);
	}
}

/* The op index of buffer b's next use after op i, or of its first (wrap
 * set) when it has none after i; -1 when it has none at all. */
static long next_of(const struct rit *t, uint32_t b, size_t i, bool *wrap)
{
	*wrap = false;
	for (size_t k = i + 1; k < t->nops; k++)
		if (t->ops[k].buf == b)
			return (long)k;
	*wrap = true;
	for (size_t k = 0; k < t->nops; k++)
		if (t->ops[k].buf == b)
			return (long)k;
	return -1;
}

static void reference(const struct rit *t, bool *marked, struct rrun *run)
{
	struct rstate st[16] = { 0 };
	uint64_t used = 0;

	for (size_t b = 0; b < t->nbufs; b++)
		st[b].gap_pass = -1;
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < t->nops; i++) {
			const struct rop *o = &t->ops[i];
			struct rstate *x = &st[o->buf];
			uint64_t now = (uint64_t)pass * t->nops + i;
			bool wrap;
			long n;

			if (o->kind == POLICY_OP_KERNEL && !x->resident) {
				x->pinned = true;
				ref_room(t, st, t->size[o->buf], &used, now, marked, run);
				x->pinned = false;
				if (pass == 1 && (o->mode & DAO_R))
					run->h2d += t->size[o->buf];
				x->resident = true;
				x->dirty = false;
				used += t->size[o->buf];
			}
			if (o->kind == POLICY_OP_KERNEL && (o->mode & DAO_W))
				x->dirty = true;
			else if (o->kind == POLICY_OP_WRITE && x->resident)
				ref_leave(x, t->size[o->buf], &used);
			else if (o->kind == POLICY_OP_READ)
				x->dirty = false;
			x->gap = i;
			x->gap_pass = pass;
			n = next_of(t, o->buf, i, &wrap);
			if (wrap && o->buf >= t->npers) {
				if (x->resident)
					ref_leave(x, t->size[o->buf], &used); /* its last use: freed */
				continue;
			}
			x->next = (uint64_t)(pass + wrap) * t->nops + (uint64_t)n;
			x->dead_next = t->ops[n].mode == DAO_W;
		}
}

/* The reference's choice: clean first where its busier engine, at these
 * rates (bytes per second), is busy for less than in dao's order. */
static bool ref_choose(const struct rit *t, bool *marked, double h2d_rate, double d2h_rate)
{
	struct rrun run[2] = { { .clean_first = false }, { .clean_first = true } };
	bool m[2][64] = { { 0 } };
	double busy[2];
	bool cf;

	for (int o = 0; o < 2; o++) {
		double a, b;

		reference(t, m[o], &run[o]);
		a = (double)run[o].h2d / h2d_rate;
		b = (double)run[o].d2h / d2h_rate;
		busy[o] = a > b ? a : b;
	}
	cf = busy[1] < busy[0];
	memcpy(marked, m[cf], sizeof(m[cf]));
	return cf;
}

/* d2h_rate 0: one order alone, clean first or dao's
 * (plan_build_evictions); else the order plan_choose_evictions keeps at
 * h2d 1 GB/s and that d2h rate. */
static void test_random(double d2h_rate, uint32_t read_pct, bool fixed_clean_first)
{
	bool choose = d2h_rate > 0;
	uint32_t seed = 2026;
	int bad = 0, gaps = 0, left = 0, clean_first = 0, at_bad = 0;

	for (int round = 0; round < 400; round++) {
		struct rit t;
		struct plan_record r = { 0 };
		struct plan *p;
		uint32_t index[16];
		bool marked[64] = { 0 };
		size_t named = 0;

		random_iteration(&seed, &t, read_pct);
		/* ids: persistent 1..npers (named before the mark at 100), the
		 * rest above. Seqs 101, 102, ...; the next mark at 101 + nops. */
		for (size_t b = 0; b < 16; b++)
			index[b] = UINT32_MAX;
		for (size_t i = 0; i < t.nops; i++) {
			struct policy_use u = { .id = t.ops[i].buf + 1,
						.bytes = t.size[t.ops[i].buf],
						.mode = t.ops[i].mode };

			if (index[t.ops[i].buf] == UINT32_MAX)
				index[t.ops[i].buf] = (uint32_t)named++;
			add(&r, 101 + i, t.ops[i].kind, 1, &u);
		}
		if (plan_build(&r, r.nops, 100, t.nops + 1, t.npers, 0, &p) != DAO_OK ||
		    (choose ? plan_choose_evictions(p, t.budget, 1e9, d2h_rate)
			    : plan_build_evictions(p, t.budget, fixed_clean_first)) != DAO_OK)
			tap_bail("plan_build");
		if (choose) {
			if (ref_choose(&t, marked, 1e9, d2h_rate) != p->clean_first) {
				if (!bad)
					tap_diag("round %d: clean first %d, the reference's %d", round,
						 p->clean_first, !p->clean_first);
				bad++;
			}
			clean_first += p->clean_first;
		} else {
			struct rrun run = { .clean_first = fixed_clean_first };

			reference(&t, marked, &run);
			if (p->clean_first != fixed_clean_first) {
				if (!bad)
					tap_diag("round %d: clean first %d, asked for %d", round,
						 p->clean_first, fixed_clean_first);
				bad++;
			}
		}
		uint32_t uses_seen[16] = { 0 };

		for (size_t i = 0; i < t.nops; i++) {
			uint32_t b = t.ops[i].buf, gap = UINT32_MAX;
			/* The gap opens at op i's use of b: its index among
			 * the plan's uses. */
			uint32_t opens = p->use_start[index[b]] + uses_seen[b]++;
			bool wrap;
			long n = next_of(&t, b, i, &wrap);
			uint64_t off;

			if (wrap && b >= t.npers)
				continue; /* its last use: no gap */
			off = (uint64_t)n + 1 + (wrap ? t.nops + 1 : 0);
			gaps++;
			left += marked[i];
			if (plan_gap_at(p, index[b], off, &gap) == PLAN_GAP_NONE || gap != opens ||
			    !p->evicted[gap] != !marked[i]) {
				if (!at_bad)
					tap_diag("round %d: op %zu (buffer %u): gap %u, the use that opens it %u",
						 round, i, b, gap, opens);
				at_bad++;
			}
			if (plan_evicted(p, index[b], off) != marked[i]) {
				if (!bad)
					tap_diag("round %d: op %zu (buffer %u): replay %d, reference %d",
						 round, i, b, plan_evicted(p, index[b], off),
						 marked[i]);
				bad++;
			}
		}
		plan_free(p);
		plan_record_free(&r);
	}
	tap_diag("%d gaps, %d left the device in the reference", gaps, left);
	tap_ok(!at_bad, "every gap's index (plan_gap_at) is the use that opens it, with its verdict");
	if (!choose) {
		tap_ok(!bad && left > gaps / 10 && left < gaps,
		       "400 random iterations in %s: every gap as the reference says",
		       fixed_clean_first ? "the order clean first" : "dao's order");
		return;
	}
	tap_diag("%d of 400 kept the order clean first", clean_first);
	tap_ok(!bad && left > gaps / 10 && left < gaps && clean_first > 0 && clean_first < 400,
	       "400 random iterations, d2h at %g GB/s, %u%% of kernels reading only: the order the "
	       "reference chooses by its busier engine, each way in some, and every gap as its "
	       "replay in that order says",
	       d2h_rate / 1e9, read_pct);
}

int main(void)
{
	test_by_hand();
	test_random(0, 0, false);
	test_random(0, 60, true);
	/* Equal rates; then write-backs a hundred times dearer, among
	 * buffers mostly read (clean first whenever it writes back less
	 * without fetching a hundred times more). */
	test_random(1e9, 0, false);
	test_random(1e7, 60, false);
	tap_plan_done();
	return tap_exit();
}
