/* SPDX-License-Identifier: MIT */
/*
 * plan.c - the planned schedule: an upper bound on the optimal modeled
 * time (Documentation/daosim.md, "The planned schedule").
 *
 * The planner searches among complete schedules that libdao's executor
 * produces: first, where daosim's own runs have settings none of the
 * candidates below has, each policy with them (so no run reported beside
 * the plan is faster); then each policy of the table of policies (dao_policy 1, 2, ...
 * until dao_policy_name says "unknown", so a policy added to libdao is a
 * candidate without a change here), with each of two windows, replays the
 * trace on the same device model as daosim's runs, and the fastest
 * schedule is kept. The plan policy runs again at the whole window in
 * each of its orders of eviction (DAO_CONFIG_PLAN_*), with the trace's
 * marks, with iterations marked at its ends too, and with the whole trace
 * one iteration (replay.h, enum replay_marks), and the fastest of these
 * once more with its prefetches eager. Then the fastest schedule,
 * its marks and order as they were, runs again with every window between
 * the two that is a power of two: a window
 * decides how early a fetch may be issued and a victim chosen, and
 * neither end of the range is the faster one on every trace. Every
 * candidate is checked on its own timeline (plan_check.c) before it
 * counts: the budget at every kernel, one operation at a time on each
 * copy engine, every kernel with the operands and the duration the trace
 * gives it, the copies the statistics count. The figure is the modeled
 * end of a schedule that was replayed and checked, so no optimum is
 * slower; it is an upper bound whenever at least one candidate finished,
 * also when the CPU-time limit stopped the search early. Which candidate
 * it was (policy, window, marks, order) and the bytes it moved are
 * reported beside it, for the plan policy's goal is the plan's bytes as
 * well as its time.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bound.h"
#include "plan_check.h"
#include "../replay.h"

/* The windows a candidate runs with: the most kernels libdao lets a job
 * run ahead (DAO_MAX_LOOKAHEAD, daosim's default: the whole trace), and
 * libdao's default (64), whose later decisions are sometimes the faster
 * schedule. */
#define PLAN_WINDOW_MIN 64
#define PLAN_WINDOW_MAX 65536
static const uint32_t plan_windows[] = { PLAN_WINDOW_MAX, PLAN_WINDOW_MIN };

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The search so far: the fastest checked schedule, its policy, the
 * fastest of the plan policy's, and the longest a candidate took. */
struct plan_search {
	double start, longest_s;
	uint64_t best, best_plan;
	struct bound_schedule best_schedule, best_plan_schedule;
};

/* Replay candidate c (its policy, window, marks, plan order and
 * prefetches) and check it into the search. 1: no time for it: the
 * CPU-time limit is reached, or would be before a candidate as long as the
 * longest so far ended. */
static int try_schedule(const struct bound_input *in, struct plan_search *q,
			struct bound_schedule c, dao_status *st, char *err, size_t errlen)
{
	struct replay_opts o = { .policy = c.policy,
				 .lookahead = c.lookahead,
				 .budget = in->budget,
				 .marks = c.marks,
				 .plan_order = c.plan_order,
				 .plan_eager = c.plan_eager };
	struct replay_result r;
	double t0 = cpu_s();

	if (in->cpu_limit_s > 0 && q->best != UINT64_MAX &&
	    t0 - q->start + q->longest_s > in->cpu_limit_s)
		return 1; /* what was found stands: a checked schedule */
	*st = replay_sim(in->trace, in->profile, &o, in->model, 1, &r);
	if (*st) {
		snprintf(err, errlen, "policy %s: %s", dao_policy_name(c.policy), r.err);
		return 0;
	}
	*st = plan_check(in, &r, err, errlen);
	c.h2d_bytes = r.stats.h2d_bytes;
	c.d2h_bytes = r.stats.d2h_bytes;
	if (!*st && r.sim.end_ns < q->best) {
		q->best = r.sim.end_ns;
		q->best_schedule = c;
	}
	if (!*st && c.policy == DAO_POLICY_PLAN && r.sim.end_ns < q->best_plan) {
		q->best_plan = r.sim.end_ns;
		q->best_plan_schedule = c;
	}
	replay_result_free(&r);
	if (cpu_s() - t0 > q->longest_s)
		q->longest_s = cpu_s() - t0;
	return 0;
}

/* try_schedule, and where it ends the search or fails, goto done or
 * return its status. */
#define TRY(c)                                                    \
	do {                                                      \
		if (try_schedule(in, &q, (c), &st, err, errlen)) \
			goto done;                                \
		if (st)                                           \
			return st;                                \
	} while (0)

static dao_status plan_solve(const struct bound_input *in, uint64_t *value, char *err,
			     size_t errlen)
{
	static const uint32_t orders[] = { 0, DAO_CONFIG_PLAN_DAO_ORDER,
					   DAO_CONFIG_PLAN_CLEAN_FIRST };
	struct plan_search q = { .start = cpu_s(), .best = UINT64_MAX, .best_plan = UINT64_MAX };
	const struct replay_opts *r = in->runs;
	dao_status st = DAO_OK;

	/*
	 * The settings daosim's own runs have, where the candidates below do
	 * not have them (another window, marks, order or eager prefetches):
	 * every policy with them first, so that no schedule daosim reports
	 * beside the plan is faster than it.
	 */
	if (r && (r->marks != REPLAY_MARKS_TRACE || r->plan_order || r->plan_eager ||
		  (r->lookahead != PLAN_WINDOW_MAX && r->lookahead != PLAN_WINDOW_MIN)))
		for (dao_policy p = 1; strcmp(dao_policy_name(p), "unknown"); p++)
			TRY(((struct bound_schedule){ .policy = p,
						      .lookahead = r->lookahead,
						      .marks = r->marks,
						      .plan_order = r->plan_order,
						      .plan_eager = r->plan_eager }));
	for (size_t w = 0; w < sizeof(plan_windows) / sizeof(plan_windows[0]); w++)
		for (dao_policy p = 1; strcmp(dao_policy_name(p), "unknown"); p++)
			TRY(((struct bound_schedule){ .policy = p, .lookahead = plan_windows[w] }));
	/*
	 * The plan policy at the whole window in each of its orders (the
	 * one each plan's replay chooses, run above with the trace's marks;
	 * dao's; clean first): the replay cannot tell which one the executor
	 * runs faster, for it moves bytes without time. With the trace's
	 * marks; with its ends marked too (each iteration, and the whole of
	 * a trace without marks, is then queued whole at its mark, and
	 * libdao plans it from its own ops); and with the whole trace one
	 * iteration, so that the plan judges every use, where an iteration's
	 * plan cannot judge a use in another iteration that differs from it
	 * (the sweeps of a stencil that alternate between arrays, a first
	 * step that allocates).
	 */
	for (enum replay_marks m = REPLAY_MARKS_TRACE; m <= REPLAY_MARKS_ONE_ITERATION; m++) {
		if (m == REPLAY_MARKS_ONE_ITERATION && !replay_marked_between_kernels(in->trace))
			break; /* it is the trace with its ends marked */
		for (size_t o = m == REPLAY_MARKS_TRACE; o < sizeof(orders) / sizeof(orders[0]); o++)
			TRY(((struct bound_schedule){ .policy = DAO_POLICY_PLAN,
						      .lookahead = PLAN_WINDOW_MAX,
						      .marks = m,
						      .plan_order = orders[o] }));
	}
	/*
	 * The fastest of those, its prefetches eager (DAO_CONFIG_PLAN_EAGER):
	 * a prefetch that finds no free space then takes the best victim now
	 * instead of waiting, by rule 2, for a record still in use that will
	 * be a better one. Waiting moves the fewest bytes and can leave the
	 * h2d engine idle while the device is full; taking the room at once
	 * keeps the engine busy at the price of a fetch more later. These are
	 * the conservative and aggressive strategies of integrated
	 * prefetching and caching (Cao, Felten, Karlin and Li, 1995), and
	 * neither is the faster on every trace.
	 */
	if (q.best_plan != UINT64_MAX) {
		struct bound_schedule c = q.best_plan_schedule;

		c.plan_eager = true;
		TRY(c);
	}
	/* The second pass: the powers of two strictly between the two. */
	for (uint32_t w = 2 * PLAN_WINDOW_MIN; q.best_schedule.policy && w < PLAN_WINDOW_MAX;
	     w *= 2) {
		struct bound_schedule c = q.best_schedule;

		c.lookahead = w;
		TRY(c);
	}
done:
	if (q.best == UINT64_MAX) {
		snprintf(err, errlen, "no schedule within %g CPU seconds", in->cpu_limit_s);
		return DAO_ERR_RANGE;
	}
	*value = q.best;
	if (in->schedule)
		*in->schedule = q.best_schedule;
	return DAO_OK;
}

const struct bound bound_plan = {
	.name = "planned schedule",
	.of = BOUND_TIME_NS,
	.side = BOUND_UPPER,
	.solve = plan_solve,
	.json = "plan_ns",
	.json_ratio = "time_ratio_to_plan",
	.json_schedule = "plan_schedule",
	.json_bytes_ratio = "bytes_ratio_to_plan",
	.text_line = "",
	.column = "time/plan",
	.limit_option = "plan-limit",
	.limit_default_s = 10,
	.limit_help = "CPU seconds the planner may take",
};
