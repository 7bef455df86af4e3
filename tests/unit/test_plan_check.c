/* SPDX-License-Identifier: MIT */
/*
 * test_plan_check.c - daosim's planned schedule (tools/daosim/bounds/
 * plan.c) and the check that makes it an upper bound (plan_check.c): a
 * trace whose optimum is worked out by hand, every policy's replay
 * accepted on random traces, each rule of the check refusing a timeline
 * broken on purpose, and the plan never above a policy's time nor below
 * the largest lower bound.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/daosim/bounds/bound.h"
#include "../../tools/daosim/bounds/plan_check.h"
#include "../../tools/daosim/replay.h"
#include "random_trace.h"
#include "sim_unit.h"
#include "tap.h"

/*
 * One buffer of 1000 bytes read by a kernel of 1000 flops, then written
 * back by nothing (it is only read): any schedule copies it in (1000 ns)
 * before the kernel (1000 ns), and the planner's is that one: 2000 ns.
 */
static void test_hand(void)
{
	struct dao_trace *t = parse("dao-trace 1\nb 1 1000\nk a 1000 r=1 w=- rw=-\n");
	struct trace_profile p;
	struct dao_sim_model m;
	struct bound_input in = { 0 };
	char err[256];
	uint64_t v = 0;
	dao_status st;

	unit_model(&m);
	if (trace_profile_build(t, 1, &p))
		tap_bail("profile");
	in = (struct bound_input){ .trace = t, .profile = &p, .model = &m, .budget = 1000,
				   .cpu_limit_s = 10 };
	st = bound_plan.solve(&in, &v, err, sizeof(err));
	tap_ok(st == DAO_OK && v == 2000,
	       "one read buffer: the plan is the copy then the kernel (%llu ns)",
	       (unsigned long long)v);
	tap_ok(bound_plan.side == BOUND_UPPER && bound_plan.of == BOUND_TIME_NS &&
		       bound_index(&bound_plan) == bound_count - 1,
	       "the plan is an upper bound on time, the table's last row");
	trace_profile_free(&p);
	dao_trace_free(t);
}

/* r's timeline broken by `breaks`, then checked; the timeline restored. */
typedef void (*breaker)(struct replay_result *r, uint64_t budget);

static void over_budget(struct replay_result *r, uint64_t budget)
{
	for (size_t i = 0; i < r->nspans; i++)
		if (r->spans[i].engine == DAO_SIM_ENGINE_COMPUTE) {
			r->spans[i].resident_bytes = budget + 1;
			return;
		}
}

static void copies_overlap(struct replay_result *r, uint64_t budget)
{
	size_t prev = SIZE_MAX;

	for (size_t i = 0; i < r->nspans; i++) {
		if (r->spans[i].engine != DAO_SIM_ENGINE_H2D)
			continue;
		if (prev != SIZE_MAX) {
			r->spans[i].start_ns = r->spans[prev].end_ns - 1;
			return;
		}
		prev = i;
	}
}

static void kernel_lost(struct replay_result *r, uint64_t budget)
{
	for (size_t i = r->nspans; i-- > 0;)
		if (r->spans[i].engine == DAO_SIM_ENGINE_COMPUTE) {
			r->spans[i].engine = DAO_SIM_ENGINE_H2D;
			r->spans[i].start_ns = r->spans[i].end_ns; /* no overlap to find first */
			return;
		}
}

static void operand_missing(struct replay_result *r, uint64_t budget)
{
	for (size_t i = 0; i < r->nspans; i++)
		if (r->spans[i].engine == DAO_SIM_ENGINE_COMPUTE) {
			r->spans[i].bytes--;
			return;
		}
}

static void kernel_short(struct replay_result *r, uint64_t budget)
{
	for (size_t i = 0; i < r->nspans; i++)
		if (r->spans[i].engine == DAO_SIM_ENGINE_COMPUTE) {
			r->spans[i].end_ns--;
			return;
		}
}

static void copy_uncounted(struct replay_result *r, uint64_t budget)
{
	r->stats.h2d_bytes++;
}

static void test_rules(void)
{
	static const struct {
		breaker f;
		const char *what;
	} rules[] = {
		{ over_budget, "more allocated than the budget" },
		{ copies_overlap, "two operations at once" },
		{ kernel_lost, "fewer kernels than the trace has" },
		{ operand_missing, "a kernel without its operands" },
		{ kernel_short, "a kernel shorter than the model makes it" },
		{ copy_uncounted, "copies the statistics do not count" },
	};
	/* Two buffers that do not fit together, read in turn: copies each way. */
	struct dao_trace *t = parse("dao-trace 1\nb 1 1000\nb 2 1000\nk a 1000 r=- w=- rw=1\n"
				    "k b 1000 r=- w=- rw=2\nk c 1000 r=- w=- rw=1\nk d 1000 r=- w=- rw=2\n");
	struct trace_profile p;
	struct dao_sim_model m;
	struct replay_opts o = { .policy = DAO_POLICY_DAO, .budget = 1000 };
	struct bound_input in;
	char err[256];

	unit_model(&m);
	if (trace_profile_build(t, 1, &p))
		tap_bail("profile");
	in = (struct bound_input){ .trace = t, .profile = &p, .model = &m, .budget = 1000 };
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct replay_result r;

		if (replay_sim(t, &p, &o, &m, 1, &r))
			tap_bail("replay: %s", r.err);
		if (i == 0)
			tap_ok(plan_check(&in, &r, err, sizeof(err)) == DAO_OK,
			       "the executor's own timeline passes");
		err[0] = 0;
		rules[i].f(&r, in.budget);
		tap_ok(plan_check(&in, &r, err, sizeof(err)) == DAO_ERR_BACKEND &&
			       strstr(err, rules[i].what),
		       "refused: %s (%s)", rules[i].what, err);
		replay_result_free(&r);
	}
	trace_profile_free(&p);
	dao_trace_free(t);
}

/* Random traces at three budgets: the plan is known, at least every lower
 * bound on time and at most every policy's time (each one a candidate). */
static void test_random(void)
{
	static const struct random_trace_shape shape = { .unit = 4096, .sizes = 16, .flops = true,
							 .frees = true };
	unsigned seed = 2511;
	int known = 1, above = 1, below = 1;

	for (int i = 0; i < 16; i++) {
		char *text = random_trace_shaped(&seed, 4 + i % 9, 10 + 4 * i, &shape);
		struct dao_trace *t = parse(text);
		struct trace_profile p;
		struct dao_sim_model m;

		if (trace_profile_build(t, 1, &p))
			tap_bail("profile");
		dao_sim_model_preset(i % 2 ? "h100" : "a100", &m);
		for (int frac = 1; frac <= 3; frac++) {
			uint64_t budget = p.peak_live_bytes / (uint64_t)frac;
			struct bound_value v[BOUND_TABLE_MAX] = { { 0 } };
			size_t plan = bound_index(&bound_plan);
			/* The runs beside the plan: at the whole window, or at
			 * settings of their own (a window the planner does not
			 * try, other marks, a fixed order, eager prefetches). */
			struct replay_opts runs = { .lookahead = 65536 };

			if (i % 2) {
				runs.lookahead = 1 + (uint32_t)(rand_r(&seed) % 4);
				runs.marks = (enum replay_marks)(rand_r(&seed) % 3);
				runs.plan_order = (uint32_t[]){ 0, DAO_CONFIG_PLAN_DAO_ORDER,
								DAO_CONFIG_PLAN_CLEAN_FIRST }[rand_r(&seed) % 3];
				runs.plan_eager = rand_r(&seed) % 2;
			}

			if (budget < p.max_kernel_bytes)
				budget = p.max_kernel_bytes;
			for (size_t b = 0; b < bound_count; b++) {
				struct bound_input in = { .trace = t, .profile = &p, .model = &m,
							  .budget = budget, .before = v, .nbefore = b,
							  .runs = &runs };
				char err[256];

				if (bound_table[b]->solve(&in, &v[b].value, err, sizeof(err)))
					tap_bail("%s: %s", bound_table[b]->name, err);
				v[b].known = true;
			}
			known &= v[plan].known;
			above &= v[plan].value >= v[bound_index(&bound_largest)].value;
			for (dao_policy q = 1; strcmp(dao_policy_name(q), "unknown"); q++) {
				struct replay_opts o = runs;
				struct replay_result r;

				o.policy = q;
				o.budget = budget;
				if (replay_sim(t, &p, &o, &m, 0, &r))
					tap_bail("replay: %s", r.err);
				below &= v[plan].value <= r.sim.end_ns;
				replay_result_free(&r);
			}
		}
		trace_profile_free(&p);
		dao_trace_free(t);
		free(text);
	}
	tap_ok(known, "random traces: the plan is found at every budget");
	tap_ok(above, "random traces: the plan is never below the largest lower bound");
	tap_ok(below,
	       "random traces: the plan is never slower than a policy, at the runs' window, marks "
	       "and plan settings or the whole window");
}

int main(void)
{
	test_hand();
	test_rules();
	test_random();
	tap_plan_done();
	return tap_exit();
}
