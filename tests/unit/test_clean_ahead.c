/* SPDX-License-Identifier: MIT */
/*
 * test_clean_ahead.c - cleaning ahead (core/residency.c: clean_ahead, the
 * dao policy's clean rule) replayed on the simulated device in round
 * units (sim_unit.h: a flop 1 ns, a byte 1 ns to copy either way):
 *
 *   - it writes back a record only where the window needs room before
 *     that record's next use: a record rewritten before any eviction is
 *     not written back ahead (the write-back would be thrown away);
 *   - how far ahead it goes is the write-backs the d2h engine still has
 *     to do, not the bytes it cleaned earlier that stay resident: those
 *     do not keep the engine idle while dirty data the window will evict
 *     waits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/daosim/replay.h"
#include "sim_unit.h"
#include "tap.h"

static void replay(const char *text, uint64_t budget, struct replay_result *r)
{
	struct dao_trace *t = parse(text);
	struct replay_opts o = { .policy = DAO_POLICY_DAO, .lookahead = 65536, .budget = budget };
	struct trace_profile p;
	struct dao_sim_model m;

	unit_model(&m);
	if (trace_profile_build(t, 1, &p))
		tap_bail("profile");
	memset(r, 0, sizeof(*r));
	if (replay_sim(t, &p, &o, &m, 1, r) != DAO_OK)
		tap_bail("replay: %s", r->err);
	trace_profile_free(&p);
	dao_trace_free(t);
}

/*
 * R (100 bytes) is written by k0, rewritten (rw) by k7 and read by k9.
 * k1..k6 each read an input of 100 bytes freed after it; k8 reads A (950
 * bytes), which does not fit beside R in 1000 bytes, so R is evicted
 * once, after k7. Before k7 the window needs no room that R must leave:
 * a write-back of R then would be thrown away when k7 rewrites it. So
 * R is written back exactly once, after k7 (before, it was written back
 * at k0 too: the room the whole window needs was counted, not the room
 * needed before R's next use).
 */
static void test_room_before_next_use(void)
{
	static const char text[] = "dao-trace 1\n"
				   "b 1 100 r\nk k0 10 r=- w=1 rw=-\n"
				   "b 2 100\nk k1 100 r=2 w=- rw=-\nf 2\n"
				   "b 3 100\nk k2 100 r=3 w=- rw=-\nf 3\n"
				   "b 4 100\nk k3 100 r=4 w=- rw=-\nf 4\n"
				   "b 5 100\nk k4 100 r=5 w=- rw=-\nf 5\n"
				   "b 6 100\nk k5 100 r=6 w=- rw=-\nf 6\n"
				   "b 7 100\nk k6 100 r=7 w=- rw=-\nf 7\n"
				   "k k7 10 r=- w=- rw=1\n"
				   "b 8 950 a\nk k8 10 r=8 w=- rw=-\n"
				   "k k9 10 r=1 w=- rw=-\n";
	struct replay_result r;

	replay(text, 1000, &r);
	TAP_IS_U64(r.stats.d2h_bytes, 100, "R is written back once: after k7 rewrites it");
	TAP_IS_U64(r.stats.writebacks, 1, "one write-back");
	replay_result_free(&r);
}

/*
 * P (100 bytes) is written first, then Q0..Q7 (100 bytes each) by
 * kernels of 60 ns, then O0..O59 (10 bytes each) by kernels of 5 ns; all
 * are read at the end (the Os, the Qs, P), so in 1000 bytes the Qs and P
 * are what goes when the Os come. The 490 ns of compute before the first
 * O (phase A) are time the d2h engine has for nothing else: cleaning
 * ahead keeps at most about one write-back queued beyond the kernels up
 * to the prefetch frontier, so it writes back one record of 100 ns after
 * another, at least four of them before phase A ends. Before, cleaning
 * counted P's write-back as long as P stayed resident, clean: with
 * 200 ns of write-backs against less compute up to the frontier, it
 * cleaned nothing more in phase A (100 ns of the engine's time).
 */
static void test_engine_kept_busy(void)
{
	enum { NQ = 8, NO = 60 };
	char text[8192];
	size_t n = 0;
	struct replay_result r;
	uint64_t phase_b = 0, d2h_in_a = 0;
	size_t kernels = 0;

	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      "dao-trace 1\nb 1 100 p\nk kp 10 r=- w=1 rw=-\n");
	for (int i = 0; i < NQ; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "b %d 100\nk qa 60 r=- w=%d rw=-\n", 10 + i, 10 + i);
	for (int j = 0; j < NO; j++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "b %d 10\nk ob 5 r=- w=%d rw=-\n", 100 + j, 100 + j);
	for (int j = 0; j < NO; j++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "k oe 5 r=%d w=- rw=-\n",
				      100 + j);
	for (int i = 0; i < NQ; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "k qe 5 r=%d w=- rw=-\n",
				      10 + i);
	n += (size_t)snprintf(text + n, sizeof(text) - n, "k pe 5 r=1 w=- rw=-\n");
	if (n >= sizeof(text))
		tap_bail("trace text too long");

	replay(text, 1000, &r);
	/* Compute spans come in kernel order: the first O's is the 10th. */
	for (size_t i = 0; i < r.nspans && !phase_b; i++)
		if (r.spans[i].engine == DAO_SIM_ENGINE_COMPUTE && ++kernels == 1 + NQ + 1)
			phase_b = r.spans[i].start_ns;
	for (size_t i = 0; i < r.nspans; i++)
		if (r.spans[i].engine == DAO_SIM_ENGINE_D2H && r.spans[i].start_ns < phase_b)
			d2h_in_a += r.spans[i].end_ns - r.spans[i].start_ns;
	tap_ok(phase_b >= 490, "phase A computes 490 ns (the first O starts at %llu ns)",
	       (unsigned long long)phase_b);
	tap_ok(d2h_in_a >= 400,
	       "the d2h engine writes back at least four records during phase A (%llu ns busy)",
	       (unsigned long long)d2h_in_a);
	replay_result_free(&r);
}

int main(void)
{
	test_room_before_next_use();
	test_engine_kept_busy();
	tap_plan_done();
	return tap_exit();
}
