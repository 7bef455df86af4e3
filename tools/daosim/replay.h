/* SPDX-License-Identifier: MIT */
/*
 * replay.h - drive libdao's real executor and policy with a trace.
 */
#ifndef DAOSIM_REPLAY_H
#define DAOSIM_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dao.h"
#include "profile.h"
#include "dao_sim.h"
#include "dao_trace.h"

/* Where the replay marks an iteration (dao_iteration). */
enum replay_marks {
	REPLAY_MARKS_TRACE, /* where the trace has its 'i' records */
	/* There, and at the trace's start and end unless a mark is there
	 * already: the trace's last iteration, or the whole of a trace
	 * without marks, then ends at a mark too (--mark-ends). */
	REPLAY_MARKS_ENDS,
	/* At the trace's start and end only, its own marks dropped: the
	 * whole trace is one iteration, which a policy that plans an
	 * iteration plans whole, with every use known (--one-iteration). */
	REPLAY_MARKS_ONE_ITERATION,
};

/* Whether t marks an iteration between two kernels: else
 * REPLAY_MARKS_ONE_ITERATION replays it as REPLAY_MARKS_ENDS does. */
bool replay_marked_between_kernels(const struct dao_trace *t);

struct replay_opts {
	dao_policy policy;
	uint32_t lookahead; /* 0: libdao's default */
	uint64_t budget;
	enum replay_marks marks;
	/* The plan policy's order of eviction: 0 (its replay chooses),
	 * DAO_CONFIG_PLAN_DAO_ORDER or DAO_CONFIG_PLAN_CLEAN_FIRST
	 * (--plan-order). */
	uint32_t plan_order;
	/* The plan policy's prefetches take their room at once
	 * (DAO_CONFIG_PLAN_EAGER, --plan-eager). */
	bool plan_eager;
};

/* The names of replay_opts.plan_order, as --plan-order takes them:
 * "chosen" (0), "dao", "clean-first". */
const char *replay_plan_order_name(uint32_t plan_order);
/* 0, or -1 when s names none (*plan_order unchanged). */
int replay_plan_order_named(const char *s, uint32_t *plan_order);

struct replay_result {
	dao_stats stats;
	struct dao_sim_result sim; /* zero unless the backend was the simulator */
	struct dao_sim_span *spans; /* owned copy of sim.spans (plots), or NULL */
	size_t nspans;
	char err[256]; /* why it failed */
};

/*
 * Replay t on backend be (which the call consumes: the context owns it).
 * Buffers are created at first use and released at their 'f' record, or
 * right after their last access when the trace never frees them.
 * When is_sim, the simulator's timeline is collected too (spans when
 * record_spans was set at its creation).
 */
dao_status replay_on_backend(const struct dao_trace *t, const struct trace_profile *p,
			     const struct replay_opts *o, struct dao_backend *be, int is_sim,
			     struct replay_result *out);

/* Replay on a fresh simulated device with model m. */
dao_status replay_sim(const struct dao_trace *t, const struct trace_profile *p,
		      const struct replay_opts *o, const struct dao_sim_model *m, int record_spans,
		      struct replay_result *out);

void replay_result_free(struct replay_result *r);

#endif /* DAOSIM_REPLAY_H */
