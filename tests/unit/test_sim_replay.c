/* SPDX-License-Identifier: MIT */
/*
 * test_sim_replay.c - traces replayed through libdao's executor and policy
 * on the simulated device: Belady's bytes on traces solved by hand, and the
 * LP bounds never above what any policy moves on random traces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/daosim/bounds/lp_bound.h"
#include "../../tools/daosim/bounds/time_bound.h"
#include "../../tools/daosim/replay.h"
#include "tap.h"

#define H "dao-trace 1\n"

static struct dao_trace *parse(const char *text)
{
	struct dao_trace *t = NULL;
	char err[256];

	if (dao_trace_read_mem(text, strlen(text), &t, err, sizeof(err)))
		tap_bail("test trace does not parse: %s", err);
	return t;
}

static dao_status run(const char *text, dao_policy policy, uint64_t budget,
		      struct replay_result *r)
{
	struct dao_trace *t = parse(text);
	struct trace_profile p;
	struct dao_sim_model m;
	struct replay_opts o = { .policy = policy, .budget = budget };
	dao_status st;

	dao_sim_model_preset("h100", &m);
	if (trace_profile_build(t, 1, &p))
		tap_bail("profile");
	st = replay_sim(t, &p, &o, &m, 0, r);
	trace_profile_free(&p);
	dao_trace_free(t);
	return st;
}

/* The traces of test_lp_bound.c, with Belady's (farthest next use) result
 * worked out by hand. */
static void test_belady_by_hand(void)
{
	/* a b c a b c at room for two: at c, evict b (next use 4 > 3); at b,
	 * evict a (no next use): 3 compulsory + b again = 400 */
	static const char cyclic[] =
		H "b 1 100\nb 2 100\nb 3 100\n"
		  "k k0 0 r=1 w=- rw=-\nk k1 0 r=2 w=- rw=-\nk k2 0 r=3 w=- rw=-\n"
		  "k k3 0 r=1 w=- rw=-\nk k4 0 r=2 w=- rw=-\nk k5 0 r=3 w=- rw=-\n";
	/* a b s a b, 200 bytes: s (50) needs room; b is used last: evicted and
	 * fetched again: 250 + 100 = 350 (the LP's 300 is fractional) */
	static const char fractional[] = H "b 1 100\nb 2 100\nb 3 50\n"
					   "k k0 0 r=1 w=- rw=-\nk k1 0 r=2 w=- rw=-\n"
					   "k k2 0 r=3 w=- rw=-\nk k3 0 r=1 w=- rw=-\n"
					   "k k4 0 r=2 w=- rw=-\n";
	/* a written, b read (room for one), a read: a written back, fetched */
	static const char dirty[] = H "b 1 100\nb 2 100\n"
				      "k k0 0 r=- w=1 rw=-\nk k1 0 r=2 w=- rw=-\n"
				      "k k2 0 r=1 w=- rw=-\n";
	/* a read, b read, a overwritten: a is dead when evicted: no copy back */
	static const char dead[] = H "b 1 100\nb 2 100\n"
				     "k k0 0 r=1 w=- rw=-\nk k1 0 r=2 w=- rw=-\n"
				     "k k2 0 r=- w=1 rw=-\n";
	struct replay_result r;

	if (!tap_ok(run(cyclic, DAO_POLICY_BELADY, 200, &r) == DAO_OK, "cyclic replays"))
		tap_diag("  %s", r.err);
	TAP_IS_U64(r.stats.h2d_bytes, 400, "cyclic: Belady moves 400 bytes up");
	TAP_IS_U64(r.stats.d2h_bytes, 0, "cyclic: nothing written back");
	TAP_IS_U64(r.stats.kernels, 6, "cyclic: six kernels ran");
	replay_result_free(&r);

	if (!tap_ok(run(fractional, DAO_POLICY_BELADY, 200, &r) == DAO_OK, "fractional replays"))
		tap_diag("  %s", r.err);
	TAP_IS_U64(r.stats.h2d_bytes, 350, "fractional: Belady moves 350 bytes up");
	replay_result_free(&r);

	if (!tap_ok(run(dirty, DAO_POLICY_BELADY, 100, &r) == DAO_OK, "dirty replays"))
		tap_diag("  %s", r.err);
	TAP_IS_U64(r.stats.h2d_bytes, 200, "dirty: b, then a again");
	TAP_IS_U64(r.stats.d2h_bytes, 100, "dirty: a written back once");
	replay_result_free(&r);

	if (!tap_ok(run(dead, DAO_POLICY_BELADY, 100, &r) == DAO_OK, "dead replays"))
		tap_diag("  %s", r.err);
	TAP_IS_U64(r.stats.h2d_bytes, 200, "dead: compulsory only");
	TAP_IS_U64(r.stats.d2h_bytes, 0, "dead: dead data is never written back");
	replay_result_free(&r);

	/* A budget below a kernel's operands is the core's clear error too. */
	tap_ok(run(cyclic, DAO_POLICY_BELADY, 99, &r) != DAO_OK && r.err[0],
	       "a budget below the largest kernel fails: %s", r.err);
	replay_result_free(&r);
}

/* Random trace with sizes that are multiples of gran (see test_sim_backend_match). */
static char *random_trace(unsigned *seed, int nb, int nk)
{
	size_t cap = 64 + (size_t)nb * 32 + (size_t)nk * 96, n = 0;
	char *s = malloc(cap);

	n += (size_t)snprintf(s + n, cap - n, H);
	for (int b = 1; b <= nb; b++)
		n += (size_t)snprintf(s + n, cap - n, "b %d %d\n", b, 64 * (1 + rand_r(seed) % 16));
	for (int k = 0; k < nk; k++) {
		const char *lists[3] = { "-", "-", "-" };
		char buf[3][16];
		int used[3] = { 0, 0, 0 };

		for (int m = 0; m < 3; m++) {
			int id;

			if (m > 0 && rand_r(seed) % 2)
				continue;
			do {
				id = 1 + rand_r(seed) % nb;
			} while (id == used[0] || id == used[1] || id == used[2]);
			used[m] = id;
			snprintf(buf[m], sizeof(buf[m]), "%d", id);
			lists[rand_r(seed) % 3 == 0 ? (m + 1) % 3 : m] = buf[m];
		}
		n += (size_t)snprintf(s + n, cap - n, "k k%d %d r=%s w=%s rw=%s\n", k,
				      rand_r(seed) % 100000, lists[0], lists[1], lists[2]);
	}
	return s;
}

static void test_lp_below_policies(void)
{
	static const dao_policy pols[] = { DAO_POLICY_DAO, DAO_POLICY_BELADY, DAO_POLICY_LRU,
					   DAO_POLICY_FIFO };
	unsigned seed = 777;
	int runs = 0, failed = 0, h2d_ok = 1, d2h_ok = 1, time_ok = 1, ti_ok = 1;

	for (int i = 0; i < 25; i++) {
		char *text = random_trace(&seed, 5 + i % 10, 20 + 2 * i);
		struct dao_trace *t = parse(text);
		struct trace_profile p;
		struct dao_sim_model m;
		char err[256];

		dao_sim_model_preset("h100", &m);
		trace_profile_build(t, 1, &p);
		for (int frac = 2; frac <= 4; frac++) {
			uint64_t budget = p.peak_live_bytes / (uint64_t)frac, lh, ld;
			struct time_bound ti;

			if (budget < p.max_kernel_bytes)
				budget = p.max_kernel_bytes;
			if (lp_bound_bytes(&p, budget, LP_H2D, &lh, err, sizeof(err)) ||
			    lp_bound_bytes(&p, budget, LP_D2H, &ld, err, sizeof(err)) ||
			    time_bound_solve(&p, &m, budget, 0, &ti, err, sizeof(err)))
				tap_bail("LP: %s", err);
			for (size_t j = 0; j < 4; j++) {
				struct replay_opts o = { .policy = pols[j], .budget = budget };
				struct replay_result r;
				uint64_t tb;

				runs++;
				if (replay_sim(t, &p, &o, &m, 0, &r) != DAO_OK) {
					if (!failed++)
						tap_diag("  replay failed: %s", r.err);
					continue;
				}
				tb = profile_compute_ns(&p, &m);
				if (r.stats.h2d_bytes < lh) {
					h2d_ok = 0;
					tap_diag("  trace %d budget %llu %s: h2d %llu < LP %llu", i,
						 (unsigned long long)budget, dao_policy_name(pols[j]),
						 (unsigned long long)r.stats.h2d_bytes,
						 (unsigned long long)lh);
				}
				if (r.stats.d2h_bytes < ld) {
					d2h_ok = 0;
					tap_diag("  trace %d %s: d2h %llu < LP %llu", i,
						 dao_policy_name(pols[j]),
						 (unsigned long long)r.stats.d2h_bytes,
						 (unsigned long long)ld);
				}
				/* the modeled run can beat neither pure compute nor the
				 * copies it made itself */
				if (r.sim.end_ns < ti.ns) {
					ti_ok = 0;
					tap_diag("  trace %d budget %llu %s: modeled %llu ns < time-indexed bound %llu",
						 i, (unsigned long long)budget, dao_policy_name(pols[j]),
						 (unsigned long long)r.sim.end_ns,
						 (unsigned long long)ti.ns);
				}
				time_ok &= r.sim.end_ns >= tb && r.sim.compute_ns == tb &&
					   r.sim.end_ns >= model_copy_ns(m.h2d_bytes_per_s,
									 r.stats.h2d_bytes);
				replay_result_free(&r);
			}
		}
		trace_profile_free(&p);
		dao_trace_free(t);
		free(text);
	}
	tap_ok(failed == 0, "%d random replays, %d failed", runs, failed);
	tap_ok(h2d_ok, "LP h2d bound <= every policy's h2d bytes");
	tap_ok(d2h_ok, "LP d2h bound <= every policy's d2h bytes");
	tap_ok(time_ok, "modeled time >= compute and >= own h2d time; compute as profiled");
	tap_ok(ti_ok, "the time-indexed bound <= every policy's modeled time");
}

int main(void)
{
	test_belady_by_hand();
	test_lp_below_policies();
	tap_plan_done();
	return tap_exit();
}
