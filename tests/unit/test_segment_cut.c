/* SPDX-License-Identifier: MIT */
/*
 * test_segment_cut.c - daosim's segment-cut bound: traces worked out by
 * hand (every cut set enumerated in the comments), the fast dynamic
 * program against a brute force written here from the definition
 * (Documentation/daosim.md, "Segment-cut bound") on random traces, and the
 * bound never above the modeled time of any policy's replay; the segment
 * LP bound on the same cut set ("Segment LP bound") between the two, and
 * the same with residency 0 or 1 ("A block is held whole") above it.
 */
#include <errno.h>
#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/daosim/bounds/bound.h"
#include "../../tools/daosim/bounds/lp_bound.h"
#include "../../tools/daosim/replay.h"
#include "../../tools/daosim/bounds/segment_cut.h"
#include "../../tools/daosim/bounds/segment_lp.h"
#include "../../tools/daosim/bounds/segment_mip.h"
#include "../../tools/daosim/segments.h"
#include "random_trace.h"
#include "sim_unit.h"
#include "tap.h"

#define H "dao-trace 1\n"

static dao_status cut(const char *text, const struct dao_sim_model *m, uint64_t budget,
		      struct segment_cut *sc, char *err, size_t errlen)
{
	struct dao_trace *t = parse(text);
	struct trace_profile p;
	dao_status st;

	if (trace_profile_build(t, 1, &p))
		tap_bail("profile");
	st = segment_cut_bound(t, &p, m, budget, sc, err, errlen);
	trace_profile_free(&p);
	dao_trace_free(t);
	return st;
}

/* The segment LP bound (segment_lp.c) through its row of the table. */
static uint64_t lp_ns(const struct dao_trace *t, const struct trace_profile *p,
		      const struct dao_sim_model *m, uint64_t budget)
{
	struct bound_input in = { .trace = t, .profile = p, .model = m, .budget = budget };
	uint64_t v = 0;
	char err[256];

	if (bound_segment_lp.solve(&in, &v, err, sizeof(err)))
		tap_bail("segment LP: %s", err);
	return v;
}

/* lp_ns on a trace's text, on the unit model. */
static uint64_t lp_text_ns(const char *text, uint64_t budget)
{
	struct dao_trace *t = parse(text);
	struct trace_profile p;
	struct dao_sim_model m;
	uint64_t v;

	unit_model(&m);
	if (trace_profile_build(t, 1, &p))
		tap_bail("profile");
	v = lp_ns(t, &p, &m, budget);
	trace_profile_free(&p);
	dao_trace_free(t);
	return v;
}

static uint64_t cut_ns(const char *text, uint64_t budget)
{
	struct dao_sim_model m;
	struct segment_cut sc;
	char err[256];

	unit_model(&m);
	if (cut(text, &m, budget, &sc, err, sizeof(err)))
		tap_bail("segment cut: %s", err);
	return sc.ns;
}

/*
 * The brute force, from the definition: every segment [a, b) of kernels
 * costs max(compute, (F - room_in(a)) / h2d, (W + operands(b) - M) / d2h)
 * with F, W counted buffer by buffer by scanning the accesses; then the
 * O(K^2) dynamic program over cut points. Independent of segment_cut.c.
 */
struct access {
	size_t k;
	uint32_t mode;
};

struct bufacc {
	uint64_t bytes;
	struct access *a;
	size_t n;
};

/* The trace's accesses, buffer by buffer, and each kernel's `w` bytes. */
struct accesses {
	struct bufacc *ba;
	uint64_t *wb;
	size_t nbufs;
};

static void accesses_build(const struct dao_trace *t, size_t K, struct accesses *x)
{
	size_t k = 0;

	x->nbufs = t->nbufs;
	x->ba = calloc(t->nbufs, sizeof(*x->ba));
	x->wb = calloc(K + 1, sizeof(*x->wb));
	for (size_t b = 0; b < t->nbufs; b++) {
		x->ba[b].bytes = t->bufs[b].bytes;
		x->ba[b].a = malloc((K + 1) * sizeof(struct access));
	}
	for (size_t e = 0; e < t->nevents; e++) {
		const struct dao_trace_event *ev = &t->events[e];
		const struct dao_trace_operand *ops;

		if (ev->type != DAO_TRACE_KERNEL)
			continue;
		ops = dao_trace_kernel_ops(t, ev);
		for (uint32_t i = 0; i < ev->u.kernel.nops; i++) {
			struct bufacc *y = &x->ba[ops[i].buf];

			y->a[y->n++] = (struct access){ k, ops[i].mode };
			if (ops[i].mode == DAO_W)
				x->wb[k] += y->bytes;
		}
		k++;
	}
}

static void accesses_free(struct accesses *x)
{
	for (size_t b = 0; b < x->nbufs; b++)
		free(x->ba[b].a);
	free(x->ba);
	free(x->wb);
}

/* Segment [a, b)'s three terms, from the definition, in ns: v[SEGMENT_COMPUTE],
 * v[SEGMENT_FETCH], v[SEGMENT_WRITE_BACK] (-inf for the last segment); its
 * cost, their maximum, is returned. */
static double seg_terms(const struct accesses *x, const struct trace_profile *p,
			const struct dao_sim_model *m, uint64_t budget, size_t a, size_t b,
			double v[3])
{
	size_t K = p->nkernels;
	double c = 0, f = 0, w = 0, cost;

	v[SEGMENT_WRITE_BACK] = -INFINITY;
	for (size_t j = a; j < b; j++)
		c += (double)model_kernel_ns(m, p->kernel_flops[j], p->kernel_bytes[j]);
	for (size_t xb = 0; xb < x->nbufs; xb++) {
		const struct bufacc *y = &x->ba[xb];
		size_t i = 0, named_b = 0, last_w = SIZE_MAX, next = SIZE_MAX;

		/* F: its first access in a..b-1 reads (data from before a: a
		 * write or the initial contents) */
		while (i < y->n && y->a[i].k < a)
			i++;
		if (i < y->n && y->a[i].k < b && y->a[i].mode != DAO_W)
			f += (double)y->bytes;
		/* W: not named by b, last write before b in a..b-1, next
		 * access after b reads */
		for (i = 0; i < y->n; i++) {
			if (y->a[i].k == b)
				named_b = 1;
			if (y->a[i].k < b && y->a[i].mode != DAO_R)
				last_w = y->a[i].k;
			if (y->a[i].k > b && next == SIZE_MAX)
				next = i;
		}
		if (b < K && !named_b && last_w != SIZE_MAX && last_w >= a && next != SIZE_MAX &&
		    y->a[next].mode != DAO_W)
			w += (double)y->bytes;
	}
	f -= a == 0 ? 0 : (double)budget - (double)x->wb[a];
	v[SEGMENT_COMPUTE] = c;
	v[SEGMENT_FETCH] = f * 1e9 / m->h2d_bytes_per_s;
	if (b < K) {
		w += (double)p->kernel_bytes[b] - (double)budget;
		v[SEGMENT_WRITE_BACK] = w * 1e9 / m->d2h_bytes_per_s;
	}
	cost = v[0];
	for (int i = 1; i < 3; i++)
		if (v[i] > cost)
			cost = v[i];
	return cost;
}

static double brute(const struct dao_trace *t, const struct trace_profile *p,
		    const struct dao_sim_model *m, uint64_t budget)
{
	size_t K = p->nkernels;
	double *best = malloc((K + 1) * sizeof(*best)), res;
	struct accesses x;

	accesses_build(t, K, &x);
	best[0] = 0;
	for (size_t b = 1; b <= K; b++) {
		best[b] = -INFINITY;
		for (size_t a = 0; a < b; a++) {
			double v[3], cost = seg_terms(&x, p, m, budget, a, b, v);

			if (best[a] + cost > best[b])
				best[b] = best[a] + cost;
		}
	}
	res = best[K];
	accesses_free(&x);
	free(best);
	return res;
}

/* k0 writes a, k1 writes b, then k2 reads a; 100-byte buffers, 10-flop
 * kernels. */
static const char wb_then_fetch[] = H "b 1 100\nb 2 100\n"
				      "k k0 10 r=- w=1 rw=-\nk k1 10 r=- w=2 rw=-\n"
				      "k k2 10 r=1 w=- rw=-\n";

/* Two host inputs, read in turn: k0 (10 flops) reads a, k1 (100)
 * updates c, k2 (10) overwrites a (test_hand works it out). */
static const char two_inputs[] = H "b 1 100\nb 2 100\nb 3 100\n"
				   "k k0 10 r=1 w=- rw=-\nk k1 100 r=- w=- rw=3\n"
				   "k k2 10 r=- w=1 rw=-\n";

static void test_hand(void)
{
	/*
	 * wb_then_fetch at budget 100. The cut sets of three kernels:
	 *  {}    [0,3): compute 30; F 0 (a, b first written); W 0 (the end): 30
	 *  {1}   [0,1): compute 10; W at b=1: a (not named by k1, written at
	 *        0, next access k2 reads) 100 + operands(k1) 100 - 100 = 100;
	 *        [1,3): compute 20; F: a (first access k2 reads, written at
	 *        0) 100 - room_in(1) = 100 - (100 - k1's w bytes 100) = 100:
	 *        100 + 100 = 200
	 *  {2}   [0,2): compute 20; W at b=2: a is named by k2, b is never
	 *        read again: 0 + 100 - 100 = 0; [2,3): F: a 100 - (100 - 0)
	 *        = 0, compute 10: 30
	 *  {1,2} [0,1) 100, [1,2): W: a's last write (0) is not in 1..1: 10,
	 *        [2,3) 10: 120
	 * The bound is 200: a's write-back (100) and its fetch (100) cannot
	 * overlap, since b's space is a's. (The simple bound says 100.)
	 */
	tap_ok(cut_ns(wb_then_fetch, 100) == 200, "write-back then refetch of one block: 200 ns (got %llu)",
	       (unsigned long long)cut_ns(wb_then_fetch, 100));
	/* At budget 200 every room term is >= the bytes: compute, 30. */
	tap_ok(cut_ns(wb_then_fetch, 200) == 30, "the same with room for both: compute, 30 ns");
	/*
	 * One kernel of 50 flops reading 100 bytes: one segment from time 0,
	 * where nothing is on the device: max(50, 100 / 1) = 100 at any
	 * budget (no room is subtracted in the first segment).
	 */
	tap_ok(cut_ns(H "b 1 100\nk k0 50 r=1 w=- rw=-\n", 100) == 100 &&
		       cut_ns(H "b 1 100\nk k0 50 r=1 w=- rw=-\n", 1000) == 100,
	       "one kernel: its compulsory fetch in the first segment, 100 ns");
	/*
	 * k2 overwrites a (w): a's data from k0 is dead, needs neither a
	 * write-back nor a fetch: W at b=1 counts nothing, F nothing: every
	 * cut set gives compute, 30.
	 */
	tap_ok(cut_ns(H "b 1 100\nb 2 100\nk k0 10 r=- w=1 rw=-\nk k1 10 r=- w=2 rw=-\n"
			"k k2 10 r=- w=1 rw=-\n",
		      100) == 30,
	       "data overwritten whole (w) is neither written back nor fetched: 30 ns");
	/* rw reads: the same as r in wb_then_fetch, 200. */
	tap_ok(cut_ns(H "b 1 100\nb 2 100\nk k0 10 r=- w=1 rw=-\nk k1 10 r=- w=2 rw=-\n"
			"k k2 10 r=- w=- rw=1\n",
		      100) == 200,
	       "an rw read needs the data like r: 200 ns");
	/*
	 * No writes: three 100-byte inputs read in turn, budget 100, 10 flops
	 * each. {}: max(30, 300) = 300 (all compulsory, first segment); any
	 * later segment subtracts 100 of room, so cutting loses: 300.
	 */
	tap_ok(cut_ns(H "b 1 100\nb 2 100\nb 3 100\nk k0 10 r=1 w=- rw=-\n"
			"k k1 10 r=2 w=- rw=-\nk k2 10 r=3 w=- rw=-\n",
		      100) == 300,
	       "no writes: the compulsory fetches, 300 ns");
	/*
	 * What the segment cut holds at a cut for free, and the segment LP
	 * charges. Two host inputs: k0 (10 flops) reads a, k1 (100) updates
	 * c, k2 (10) overwrites a; budget 200, room for both.
	 *  {}    F a + c = 200 from time 0, compute 120: 200
	 *  {1}   [0,1): a, 100; [1,3): c in F, but room_in(1) = 200 holds
	 *        it: compute 110: 210
	 *  {2}   [0,2): 200; [2,3): 10: 210
	 *  {1,2} 100 + compute 100 + 10: 210
	 * The bound is 210, attained first by {1}. The segment LP on {1}: c
	 * is k1's operand at the cut, its host data held nowhere at time 0,
	 * so its fetch ends by k1's start, in segment 0 with a's: t_0 >= 200,
	 * t_1 >= 110: 310, the optimum (a fetched, then c while k0 runs, then
	 * k1 and k2).
	 */
	{

		tap_ok(cut_ns(two_inputs, 200) == 210 && lp_text_ns(two_inputs, 200) == 310,
		       "host data held at a cut: the segment cut 210 ns, the segment LP 310 (got %llu, %llu)",
		       (unsigned long long)cut_ns(two_inputs, 200),
		       (unsigned long long)lp_text_ns(two_inputs, 200));
		/* and where the segment cut is exact, the LP is too */
		tap_ok(lp_text_ns(wb_then_fetch, 100) == 200,
		       "write-back then refetch of one block: the segment LP 200 ns as well");
	}
}

static void test_refusals(void)
{
	struct dao_sim_model m;
	struct segment_cut sc = { 7, 7 };
	char err[256];

	unit_model(&m);
	tap_ok(cut(wb_then_fetch, &m, 99, &sc, err, sizeof(err)) == DAO_ERR_BUDGET &&
		       strstr(err, "more than the budget") && sc.ns == 7,
	       "a budget below a kernel's operands is refused, nothing written (%s)", err);
	tap_ok(cut(H "b 1 100\n", &m, 100, &sc, err, sizeof(err)) == DAO_OK && sc.ns == 0,
	       "a trace without kernels: 0");
	{
		/* a profile of another trace is refused, out untouched */
		struct dao_trace *t = parse(wb_then_fetch), *u = parse(H "b 1 100\nk k0 1 r=1 w=- rw=-\n");
		struct trace_profile p;
		dao_status st;

		if (trace_profile_build(u, 1, &p))
			tap_bail("profile");
		sc.ns = 7;
		st = segment_cut_bound(t, &p, &m, 1000, &sc, err, sizeof(err));
		tap_ok(st == DAO_ERR_INVALID && strstr(err, "kernels") && sc.ns == 7,
		       "a profile that is not the trace's is refused (%s)", err);
		trace_profile_free(&p);
		dao_trace_free(t);
		dao_trace_free(u);
	}
}

/* A random trace: nb buffers of 64..1024 bytes, nk kernels of 1..3
 * operands, random flops, some frees. */
static char *random_trace(unsigned *seed, int nb, int nk)
{
	static const struct random_trace_shape shape = { .unit = 64, .sizes = 16, .flops = true, .frees = true };

	return random_trace_shaped(seed, nb, nk, &shape);
}

/* Trace i's device: the balanced unit model and the copy-bound h100 in
 * turn. */
static void alternate_model(int i, struct dao_sim_model *m)
{
	if (i % 2)
		unit_model(m);
	else
		dao_sim_model_preset("h100", m);
}

static void test_brute(void)
{
	unsigned seed = 4242;
	int same = 1, n = 0;

	for (int i = 0; i < 150; i++) {
		char *text = random_trace(&seed, 3 + i % 10, 1 + i % 40);
		struct dao_trace *t = parse(text);
		struct trace_profile p;
		struct dao_sim_model m;
		char err[256];

		alternate_model(i, &m);
		trace_profile_build(t, 1, &p);
		for (int step = 0; step <= 4; step++) {
			uint64_t budget = p.max_kernel_bytes +
					  (p.peak_live_bytes - p.max_kernel_bytes) * step / 4;
			struct segment_cut sc;
			double want;

			if (segment_cut_bound(t, &p, &m, budget, &sc, err, sizeof(err)))
				tap_bail("segment cut: %s", err);
			want = brute(t, &p, &m, budget);
			n++;
			if (fabs(sc.exact_ns - want) > 1e-9 * want + 1e-9 ||
			    sc.ns != (uint64_t)ceil(want - want * 1e-10 - 1e-6)) {
				if (same)
					tap_diag("trace %d budget %llu: DP %.6f (%llu ns), brute force %.6f",
						 i, (unsigned long long)budget, sc.exact_ns,
						 (unsigned long long)sc.ns, want);
				same = 0;
			}
		}
		trace_profile_free(&p);
		dao_trace_free(t);
		free(text);
	}
	tap_ok(same, "%d random traces and budgets: the DP equals the O(K^2) brute force", n);
}

/* The bound is never above what the executor's replay takes, under every
 * policy, on three devices (copy-bound h100, balanced unit, a contiguous
 * pool that must evict to defragment), at four budgets. */
static void test_below_policies(void)
{
	static const dao_policy pols[] = { DAO_POLICY_DAO, DAO_POLICY_BELADY, DAO_POLICY_LRU,
					   DAO_POLICY_FIFO, DAO_POLICY_PLAN };
	unsigned seed = 99;
	int runs = 0, failed = 0, below = 1, above_compute = 1, closest_set = 0;
	int lp_below = 1, lp_above = 1, lp_higher = 0, nlp = 0;
	double closest = 0;

	for (int i = 0; i < 60; i++) {
		char *text = random_trace(&seed, 5 + i % 10, 20 + 3 * i);
		struct dao_trace *t = parse(text);
		struct trace_profile p;
		struct dao_sim_model m;
		char err[256];

		if (i % 3 == 0)
			dao_sim_model_preset("h100", &m);
		else
			unit_model(&m);
		m.contiguous = i % 3 == 2;
		trace_profile_build(t, 1, &p);
		for (int frac = 1; frac <= 4; frac++) {
			uint64_t budget = frac == 4 ? p.max_kernel_bytes : p.peak_live_bytes / (uint64_t)frac;
			struct segment_cut sc;
			uint64_t lp;

			if (budget < p.max_kernel_bytes)
				budget = p.max_kernel_bytes;
			if (segment_cut_bound(t, &p, &m, budget, &sc, err, sizeof(err)))
				tap_bail("segment cut: %s", err);
			above_compute &= sc.ns >= profile_compute_ns(&p, &m);
			lp = lp_ns(t, &p, &m, budget);
			lp_above &= (double)lp + 1 >= (double)sc.ns * (1 - 1e-6);
			lp_higher += lp > sc.ns + 1;
			nlp++;
			for (size_t j = 0; j < sizeof(pols) / sizeof(pols[0]); j++) {
				struct replay_opts o = { .policy = pols[j], .budget = budget };
				struct replay_result r;

				runs++;
				if (replay_sim(t, &p, &o, &m, 0, &r) != DAO_OK) {
					if (!failed++)
						tap_diag("  replay failed: %s", r.err);
					continue;
				}
				if (r.sim.end_ns < lp) {
					lp_below = 0;
					tap_diag("  trace %d budget %llu %s: modeled %llu ns < segment LP %llu",
						 i, (unsigned long long)budget, dao_policy_name(pols[j]),
						 (unsigned long long)r.sim.end_ns, (unsigned long long)lp);
				}
				if (r.sim.end_ns < sc.ns) {
					below = 0;
					tap_diag("  trace %d budget %llu %s: modeled %llu ns < segment cut %llu",
						 i, (unsigned long long)budget, dao_policy_name(pols[j]),
						 (unsigned long long)r.sim.end_ns,
						 (unsigned long long)sc.ns);
				}
				if (r.sim.end_ns && (!closest_set || (double)r.sim.end_ns / (double)sc.ns < closest)) {
					closest = (double)r.sim.end_ns / (double)sc.ns;
					closest_set = 1;
				}
				replay_result_free(&r);
			}
		}
		trace_profile_free(&p);
		dao_trace_free(t);
		free(text);
	}
	tap_ok(failed == 0, "%d random replays, %d failed", runs, failed);
	tap_ok(below, "the segment-cut bound <= every policy's modeled time (closest: %.4fx)", closest);
	tap_ok(above_compute, "the segment-cut bound >= the compute time (no cut)");
	tap_ok(lp_below, "the segment LP bound <= every policy's modeled time");
	tap_ok(lp_above && lp_higher > 0,
	       "the segment LP bound >= the segment cut on all %d, above it on %d", nlp, lp_higher);
}

static int close_to(double got, double want)
{
	return fabs(got - want) <= 1e-9 * fabs(want) + 1e-6;
}

/*
 * The cut set segment_cut_segments returns: its segments tile the kernels
 * in order, each costs what the definition gives for it (the brute force's
 * terms above, not segment_cut.c's) and pays the term it names, and their
 * costs add up to the bound. Then the claim daosim --segments rests on:
 * every policy's replay spends at least each segment's cost between the
 * starts of the kernels that bound it (time 0 and the run's end at the
 * ends), its engines busy no longer than that, and the segments' times add
 * up to the run's.
 */
static void test_segments(void)
{
	static const dao_policy pols[] = { DAO_POLICY_DAO, DAO_POLICY_LRU, DAO_POLICY_PLAN };
	unsigned seed = 777;
	int sets = 0, runs = 0, tiled = 1, costs = 1, sums = 1, in_runs = 1, failed = 0;
	int multi = 0;

	for (int i = 0; i < 120; i++) {
		char *text = random_trace(&seed, 3 + i % 12, 1 + i % 45);
		struct dao_trace *t = parse(text);
		struct trace_profile p;
		struct dao_sim_model m;
		struct accesses x;
		char err[256];

		alternate_model(i, &m);
		trace_profile_build(t, 1, &p);
		accesses_build(t, p.nkernels, &x);
		for (int step = 0; step <= 3; step++) {
			uint64_t budget = p.max_kernel_bytes +
					  (p.peak_live_bytes - p.max_kernel_bytes) * step / 3;
			struct trace_report tr = { .nkernels = p.nkernels, .segments = true };
			struct segment_cut sc, plain;
			double sum = 0;
			size_t at = 0;

			if (segment_cut_segments(t, &p, &m, budget, &sc, &tr.segs, &tr.nsegs, err,
						 sizeof(err)) ||
			    segment_cut_bound(t, &p, &m, budget, &plain, err, sizeof(err)))
				tap_bail("segment cut: %s", err);
			sets++;
			multi += tr.nsegs > 1;
			for (size_t s = 0; s < tr.nsegs; s++) {
				const struct segment_cut_segment *g = &tr.segs[s];
				double v[3], want;

				if (g->first != at || g->end <= g->first) {
					tiled = 0;
					break;
				}
				at = g->end;
				want = seg_terms(&x, &p, &m, budget, g->first, g->end, v);
				if (!close_to(g->cost_ns, want) || !close_to(v[g->term], want)) {
					if (costs)
						tap_diag("trace %d budget %llu: segment %zu-%zu costs %.6f (%s), the definition %.6f (%s %.6f)",
							 i, (unsigned long long)budget, g->first,
							 g->end, g->cost_ns, segment_term_name(g->term),
							 want, segment_term_name(g->term), v[g->term]);
					costs = 0;
				}
				sum += g->cost_ns;
			}
			tiled &= at == p.nkernels;
			sums &= close_to(sum, sc.exact_ns) && sc.ns == plain.ns &&
				close_to(sc.exact_ns, plain.exact_ns);
			for (size_t j = 0; j < sizeof(pols) / sizeof(pols[0]); j++) {
				struct replay_opts o = { .policy = pols[j], .budget = budget };
				struct policy_run pr = { .policy = pols[j] };
				struct segment_time *st = malloc((tr.nsegs + 1) * sizeof(*st));
				uint64_t total = 0;

				runs++;
				pr.status = replay_sim(t, &p, &o, &m, 1, &pr.r);
				if (pr.status || segment_times(&tr, &pr, st)) {
					if (!failed++)
						tap_diag("  replay or its times failed: %s", pr.r.err);
					free(st);
					replay_result_free(&pr.r);
					continue;
				}
				for (size_t s = 0; s < tr.nsegs; s++) {
					int ok = (double)st[s].ns + 1e-9 * tr.segs[s].cost_ns + 1e-6 >=
							 tr.segs[s].cost_ns &&
						 st[s].h2d_busy_ns <= st[s].ns &&
						 st[s].d2h_busy_ns <= st[s].ns;

					if (!ok && in_runs)
						tap_diag("  trace %d budget %llu %s: segment %zu-%zu took %llu ns (busy %llu/%llu), the bound %.3f",
							 i, (unsigned long long)budget,
							 dao_policy_name(pols[j]), tr.segs[s].first,
							 tr.segs[s].end, (unsigned long long)st[s].ns,
							 (unsigned long long)st[s].h2d_busy_ns,
							 (unsigned long long)st[s].d2h_busy_ns,
							 tr.segs[s].cost_ns);
					in_runs &= ok;
					total += st[s].ns;
				}
				in_runs &= total == pr.r.sim.end_ns;
				free(st);
				replay_result_free(&pr.r);
			}
			free(tr.segs);
		}
		accesses_free(&x);
		trace_profile_free(&p);
		dao_trace_free(t);
		free(text);
	}
	tap_ok(tiled, "%d cut sets (%d of more than one segment): each tiles the kernels in order",
	       sets, multi);
	tap_ok(costs, "each segment costs what the definition gives, by the term it names");
	tap_ok(sums, "the segments' costs add up to the bound");
	tap_ok(failed == 0, "%d replays with their timelines, %d failed", runs, failed);
	tap_ok(in_runs, "every replay spends at least each segment's cost in it, its copy engines "
			"busy no longer, and the segments' times add up to its own");
}

/*
 * The segment LP with a cut at every kernel and residency 0 or 1, by
 * GLPK's branch and bound: at least its LP, which is at least the segment
 * LP on the segment cut's cuts alone (a finer cut set), and never above
 * any policy's replay.
 */
static void test_mip(void)
{
	static const dao_policy pols[] = { DAO_POLICY_DAO, DAO_POLICY_BELADY, DAO_POLICY_LRU,
					   DAO_POLICY_FIFO };
	unsigned seed = 515;
	int n = 0, ordered = 1, below = 1, higher = 0, failed = 0, optimal = 0;
	double closest = INFINITY;

	for (int i = 0; i < 40; i++) {
		char *text = random_trace(&seed, 4 + i % 6, 6 + i % 14);
		struct dao_trace *t = parse(text);
		struct trace_profile p;
		struct dao_sim_model m;
		char err[256];

		alternate_model(i, &m);
		trace_profile_build(t, 1, &p);
		for (int frac = 2; frac <= 3; frac++) {
			uint64_t budget = p.peak_live_bytes / (uint64_t)frac;
			struct bound_input in = { .trace = t, .profile = &p, .model = &m };
			struct segment_mip r;
			uint64_t lp;

			if (budget < p.max_kernel_bytes)
				budget = p.max_kernel_bytes;
			in.budget = budget;
			lp = lp_ns(t, &p, &m, budget);
			if (segment_mip_bound(&in, 1, 2.0, &r, err, sizeof(err)))
				tap_bail("segment MIP: %s", err);
			n++;
			optimal += r.optimal;
			higher += r.ns > r.lp_ns + 1;
			if (r.ns < r.lp_ns || (double)r.lp_ns + 1 < (double)lp * (1 - 1e-6)) {
				if (ordered)
					tap_diag("trace %d budget %llu: MIP %llu, its LP %llu, segment LP %llu",
						 i, (unsigned long long)budget, (unsigned long long)r.ns,
						 (unsigned long long)r.lp_ns, (unsigned long long)lp);
				ordered = 0;
			}
			for (size_t j = 0; j < sizeof(pols) / sizeof(pols[0]); j++) {
				struct replay_opts o = { .policy = pols[j], .budget = budget };
				struct replay_result rr;

				if (replay_sim(t, &p, &o, &m, 0, &rr) != DAO_OK) {
					failed++;
					continue;
				}
				if (r.ns)
					closest = fmin(closest, (double)rr.sim.end_ns / (double)r.ns);
				if (rr.sim.end_ns < r.ns) {
					below = 0;
					tap_diag("  trace %d budget %llu %s: modeled %llu ns < MIP %llu", i,
						 (unsigned long long)budget, dao_policy_name(pols[j]),
						 (unsigned long long)rr.sim.end_ns,
						 (unsigned long long)r.ns);
				}
				replay_result_free(&rr);
			}
		}
		trace_profile_free(&p);
		dao_trace_free(t);
		free(text);
	}
	tap_ok(ordered && failed == 0,
	       "%d random traces and budgets: MIP >= its LP >= the segment LP bound (%d proved "
	       "optimal)", n, optimal);
	tap_ok(below && higher > 0,
	       "the MIP's bound <= every policy's modeled time (closest: %.4fx); above its LP "
	       "on %d", closest, higher);
	{
		struct dao_trace *t = parse(two_inputs);
		struct trace_profile p;
		struct dao_sim_model m;
		struct segment_mip r;
		char err[256];

		unit_model(&m);
		trace_profile_build(t, 1, &p);
		if (segment_mip_bound(&(struct bound_input){ .trace = t, .profile = &p, .model = &m,
							     .budget = 200 },
				      1, 2.0, &r, err, sizeof(err)))
			tap_bail("segment MIP: %s", err);
		/* the hand-worked trace of test_hand: its optimum, 310 */
		tap_ok(r.ns == 310 && r.optimal, "host data held at a cut: the MIP 310 ns (got %llu)",
		       (unsigned long long)r.ns);
		trace_profile_free(&p);
		dao_trace_free(t);
	}
}

/* The program path holds, read back by GLPK and searched to its optimum;
 * -1 when it could not be read or searched. */
static double mps_optimum(const char *path, size_t *integers)
{
	glp_prob *P = glp_create_prob();
	int term = glp_term_out(GLP_OFF);
	double v = -1;
	glp_iocp io;

	glp_init_iocp(&io);
	io.presolve = GLP_ON;
	io.msg_lev = GLP_MSG_OFF;
	if (!glp_read_mps(P, GLP_MPS_FILE, NULL, path)) {
		*integers = (size_t)glp_get_num_int(P);
		if (!glp_intopt(P, &io) && glp_mip_status(P) == GLP_OPT)
			v = glp_mip_obj_val(P);
	}
	glp_term_out(term);
	glp_delete_prob(P);
	return v;
}

/*
 * The program written in MPS for another solver is the same program: read
 * back and searched by GLPK, the optimum segment_mip_bound proves, on the
 * hand-worked trace (310 ns) and on random traces whose residency columns
 * are binary (the objective in microseconds); a path that cannot be
 * written and a trace without kernels are refused, saying why.
 */
static void test_mip_mps(void)
{
	struct dao_trace *none = parse("dao-trace 1\ni 0\n");
	struct trace_profile pn;
	struct dao_sim_model m;
	struct segment_mip r, w;
	char path[] = "/tmp/test_segment_mip_XXXXXX", err[256];
	int fd = mkstemp(path), same = 1, n = 0, with_binaries = 0;
	unsigned seed = 733;
	dao_status st;

	if (fd < 0)
		tap_bail("mkstemp: %s", strerror(errno));
	close(fd);
	for (int i = -1; i < 30; i++) {
		char *text = i < 0 ? NULL : random_trace(&seed, 4 + i % 6, 6 + i % 14);
		struct dao_trace *t = parse(text ? text : two_inputs);
		struct trace_profile p;
		size_t integers = 0;
		double v;

		if (i < 0)
			unit_model(&m);
		else
			alternate_model(i, &m);
		trace_profile_build(t, 1, &p);
		struct bound_input in = { .trace = t, .profile = &p, .model = &m,
					  .budget = i < 0 ? 200 : p.peak_live_bytes / 2 };

		if (in.budget < p.max_kernel_bytes)
			in.budget = p.max_kernel_bytes;
		if (segment_mip_bound(&in, 1, 2.0, &r, err, sizeof(err)))
			tap_bail("segment MIP: %s", err);
		if (r.optimal) {
			st = segment_mip_write_mps(&in, 1, path, &w, err, sizeof(err));
			v = st ? -1 : mps_optimum(path, &integers);
			n++;
			with_binaries += w.binaries > 0;
			if (st || v < 0 || segment_lp_ns(v) != r.ns || integers != w.binaries ||
			    w.binaries != r.binaries || w.segments != r.segments || (i < 0 && r.ns != 310)) {
				if (same)
					tap_diag("trace %d: %s; read back %.6f us, %zu integer columns; "
						 "proved %llu ns, %zu binary", i, st ? err : "written", v,
						 integers, (unsigned long long)r.ns, r.binaries);
				same = 0;
			}
		}
		trace_profile_free(&p);
		dao_trace_free(t);
		free(text);
	}
	tap_ok(same && n > 10 && with_binaries > 5,
	       "%d programs written and read back (%d with binary columns): the optimum proved, "
	       "310 ns on the hand-worked trace", n, with_binaries);
	unlink(path);

	unit_model(&m);
	{
		struct dao_trace *t = parse(two_inputs);
		struct trace_profile p;

		trace_profile_build(t, 1, &p);
		st = segment_mip_write_mps(&(struct bound_input){ .trace = t, .profile = &p,
								  .model = &m, .budget = 200 },
					   1, "/nonexistent-dir/x.mps", &w, err, sizeof(err));
		tap_ok(st == DAO_ERR_IO && strstr(err, "/nonexistent-dir/x.mps"),
		       "an unwritable path: DAO_ERR_IO, named (%s)", err);
		trace_profile_free(&p);
		dao_trace_free(t);
	}
	trace_profile_build(none, 1, &pn);
	st = segment_mip_write_mps(&(struct bound_input){ .trace = none, .profile = &pn,
							  .model = &m, .budget = 200 },
				   1, path, &w, err, sizeof(err));
	tap_ok(st == DAO_ERR_INVALID && access(path, F_OK) != 0,
	       "a trace of no kernels: DAO_ERR_INVALID, nothing written (%s)", err);
	trace_profile_free(&pn);
	dao_trace_free(none);
}

int main(void)
{
	test_hand();
	test_refusals();
	test_brute();
	test_below_policies();
	test_segments();
	test_mip();
	test_mip_mps();
	tap_plan_done();
	return tap_exit();
}
