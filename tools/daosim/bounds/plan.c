/* SPDX-License-Identifier: MIT */
/*
 * plan.c - the planned schedule: an upper bound on the optimal modeled
 * time (Documentation/daosim.md, "The planned schedule").
 *
 * The planner searches among complete schedules that libdao's executor
 * produces: each policy of the table of policies (dao_policy 1, 2, ...
 * until dao_policy_name says "unknown", so a policy added to libdao is a
 * candidate without a change here), with each of two windows, replays the
 * trace on the same device model as daosim's runs, and the fastest
 * schedule is kept. The plan policy runs twice more at the whole window,
 * with iterations marked at the trace's ends and with the whole trace one
 * iteration (replay.h, enum replay_marks). Then the policy of the fastest
 * schedule, its marks as they were, runs again with every window between
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
 * it was (policy, window, marks) and the bytes it moved are reported beside it,
 * for the plan policy's goal is the plan's bytes as well as its time.
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

/* The search so far: the fastest checked schedule, its policy, and the
 * longest a candidate took. */
struct plan_search {
	double start, longest_s;
	uint64_t best;
	struct bound_schedule best_schedule;
};

/* Replay policy p with window w and check it into the search. 1: no time
 * for it: the CPU-time limit is reached, or would be before a candidate
 * as long as the longest so far ended. */
static int try_schedule(const struct bound_input *in, struct plan_search *q, dao_policy p,
			uint32_t w, enum replay_marks marks, dao_status *st, char *err,
			size_t errlen)
{
	struct replay_opts o = { .policy = p, .lookahead = w, .budget = in->budget,
				 .marks = marks };
	struct replay_result r;
	double t0 = cpu_s();

	if (in->cpu_limit_s > 0 && q->best != UINT64_MAX &&
	    t0 - q->start + q->longest_s > in->cpu_limit_s)
		return 1; /* what was found stands: a checked schedule */
	*st = replay_sim(in->trace, in->profile, &o, in->model, 1, &r);
	if (*st) {
		snprintf(err, errlen, "policy %s: %s", dao_policy_name(p), r.err);
		return 0;
	}
	*st = plan_check(in, &r, err, errlen);
	if (!*st && r.sim.end_ns < q->best) {
		q->best = r.sim.end_ns;
		q->best_schedule = (struct bound_schedule){
			.policy = p,
			.lookahead = w,
			.marks = marks,
			.h2d_bytes = r.stats.h2d_bytes,
			.d2h_bytes = r.stats.d2h_bytes,
		};
	}
	replay_result_free(&r);
	if (cpu_s() - t0 > q->longest_s)
		q->longest_s = cpu_s() - t0;
	return 0;
}

static bool has_marks(const struct dao_trace *t)
{
	for (size_t e = 0; e < t->nevents; e++)
		if (t->events[e].type == DAO_TRACE_ITERATION)
			return true;
	return false;
}

static dao_status plan_solve(const struct bound_input *in, uint64_t *value, char *err,
			     size_t errlen)
{
	struct plan_search q = { .start = cpu_s(), .best = UINT64_MAX };
	dao_status st = DAO_OK;

	for (size_t w = 0; w < sizeof(plan_windows) / sizeof(plan_windows[0]); w++)
		for (dao_policy p = 1; strcmp(dao_policy_name(p), "unknown"); p++) {
			if (try_schedule(in, &q, p, plan_windows[w], REPLAY_MARKS_TRACE, &st, err,
					 errlen))
				goto done;
			if (st)
				return st;
		}
	/* The plan policy at the whole window, with the trace's ends marked:
	 * each iteration, and the whole of a trace without marks, is then
	 * queued whole at its mark, and libdao plans it from its own ops.
	 * Then with the whole trace one iteration: the plan then judges every
	 * use, where an iteration's plan cannot judge a use in another
	 * iteration that differs from it (the sweeps of a stencil that
	 * alternate between arrays, a first step that allocates). */
	for (enum replay_marks m = REPLAY_MARKS_ENDS; m <= REPLAY_MARKS_ONE_ITERATION; m++) {
		if (m == REPLAY_MARKS_ONE_ITERATION && !has_marks(in->trace))
			break; /* it is the trace with its ends marked */
		if (try_schedule(in, &q, DAO_POLICY_PLAN, PLAN_WINDOW_MAX, m, &st, err, errlen))
			goto done;
		if (st)
			return st;
	}
	/* The second pass: the powers of two strictly between the two. */
	for (uint32_t w = 2 * PLAN_WINDOW_MIN; q.best_schedule.policy && w < PLAN_WINDOW_MAX;
	     w *= 2) {
		if (try_schedule(in, &q, q.best_schedule.policy, w, q.best_schedule.marks, &st,
				 err, errlen))
			goto done;
		if (st)
			return st;
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
