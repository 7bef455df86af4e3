/* SPDX-License-Identifier: MIT */
/*
 * bound.h - what a daosim bound is: one row of bound_table (bounds.c),
 * defined in its own file. For each trace daosim solves the rows in the
 * table's order and reports each one's value (--json: a field of the
 * trace; the table: on a line of its own or the line before) and each
 * policy's figure over it (--json: a field of the policy; the table: a
 * column). Documentation/daosim.md, "How a bound is added", has the
 * contract in words.
 *
 * A lower bound is a figure no schedule the executor can produce beats
 * (it needs a proof, in daosim.md); an upper bound is the figure of one
 * feasible schedule (replayed and checked through the device model), so
 * the optimum lies between the largest lower and the smallest upper one.
 */
#ifndef DAOSIM_BOUND_H
#define DAOSIM_BOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dao_sim.h"
#include "dao_trace.h"
#include "../profile.h"
#include "../replay.h"

/* What a bound is a bound on, and so what each policy is compared with. */
enum bound_of {
	BOUND_H2D_BYTES, /* bytes copied to the device (dao_stats.h2d_bytes) */
	BOUND_D2H_BYTES, /* bytes copied back (dao_stats.d2h_bytes) */
	BOUND_TIME_NS,   /* modeled run time (dao_sim_result.end_ns) */
};

enum bound_side { BOUND_LOWER, BOUND_UPPER };

/* Which schedule an upper bound's figure is, so that a reader can run it
 * again (daosim --policy P --lookahead W --plan-order O, with
 * --mark-ends or --one-iteration as marks says) and see its bytes beside
 * its time. */
struct bound_schedule {
	dao_policy policy;
	uint32_t lookahead;
	enum replay_marks marks; /* where the replay marks iterations (--mark-ends, --one-iteration) */
	uint32_t plan_order;     /* the plan policy's order, as replay_opts (--plan-order) */
	bool plan_eager;         /* its prefetches take their room at once (--plan-eager) */
	uint64_t h2d_bytes, d2h_bytes;
};

/* What one row found for one trace. */
struct bound_value {
	bool known;     /* else skipped (a limit of 0) or stopped at its limit */
	uint64_t value; /* bytes or ns, as the row's `of` says */
	struct bound_schedule schedule; /* when known, a row with json_schedule's */
};

struct bound;

/* What a solve may read: the trace at the budget on the model, and what
 * the rows before it in the table found (bound_best_lower). */
struct bound_input {
	const struct dao_trace *trace;
	const struct trace_profile *profile; /* the trace's, flops scaled */
	const struct dao_sim_model *model;
	uint64_t budget;      /* >= every kernel's operands (checked before) */
	double cpu_limit_s;   /* > 0: CPU seconds the solve may take; 0: none */
	const struct bound_value *before; /* bound_table[0 .. nbefore - 1]'s */
	size_t nbefore;
	/* An upper row with json_schedule fills it on DAO_OK; NULL for the
	 * other rows. */
	struct bound_schedule *schedule;
	/* The settings daosim's own runs replay the trace with (their
	 * window, marks, plan order and eager prefetches; policy and budget
	 * are not read), so that an upper row can count those schedules
	 * too; NULL: none. */
	const struct replay_opts *runs;
};

struct bound {
	/* In the table ("segment-cut bound 12.34 ms") and in messages. */
	const char *name;
	enum bound_of of;
	enum bound_side side;
	/*
	 * *value on DAO_OK: the bound in whole bytes or ns (the file says
	 * how it rounds and why that stays a bound). DAO_ERR_RANGE (err
	 * says why) when it stopped at in->cpu_limit_s: the row is left out
	 * (null in --json, a note on stderr) and the run stands; any other
	 * error (err says why) fails the trace. It changes nothing but
	 * *value and err.
	 */
	dao_status (*solve)(const struct bound_input *in, uint64_t *value, char *err,
			    size_t errlen);
	/* --json: the trace's field with the value (null when not known),
	 * and each policy's field with its figure over the value (null when
	 * there is none; NULL: no such field). */
	const char *json;
	const char *json_ratio;
	/* An upper row only (NULL: none): the trace's field naming the
	 * schedule ({"policy", "lookahead", "h2d_bytes", "d2h_bytes"}, null
	 * when not known), and each policy's field with its bytes moved
	 * (h2d and d2h) over the schedule's. */
	const char *json_schedule;
	const char *json_bytes_ratio;
	/* The table: a row with text_line opens a line with it (after two
	 * spaces), a row without one goes on the line before, after ", ";
	 * a row not known prints "NAME not computed" and ends its line.
	 * column: the header of the policies' column with the ratio (NULL:
	 * none). */
	const char *text_line;
	const char *column;
	/* A row with limit_option takes its CPU-time limit from the command
	 * line, --OPTION SECONDS (0..86400, 0 skips the row; limit_default_s
	 * without it; limit_help in --help); a row without one is solved
	 * without a limit, so it must be fast: O((kernels + intervals) log
	 * kernels) or so, well under a second at 50,000 kernels. */
	const char *limit_option;
	double limit_default_s;
	const char *limit_help;
	/* Process-wide set-up daosim runs once before solving anything
	 * (NULL: none); it may be refused (non-zero), which changes no
	 * figure. */
	int (*prepare)(void);
};

/* The rows, each defined in its own file of bounds/. */
extern const struct bound bound_compulsory;    /* simple.c */
extern const struct bound bound_lp_h2d;        /* lp_bound.c */
extern const struct bound bound_lp_d2h;        /* lp_bound.c */
extern const struct bound bound_compute;       /* simple.c */
extern const struct bound bound_time_simple;   /* simple.c */
extern const struct bound bound_time_indexed;  /* time_bound.c */
extern const struct bound bound_larger;        /* largest.c */
extern const struct bound bound_segment_cut;   /* segment_cut.c */
extern const struct bound bound_segment_lp; /* segment_lp.c */
extern const struct bound bound_largest;       /* largest.c */
extern const struct bound bound_plan;          /* plan.c */

/* The table (bounds.c): the order they are solved and reported in. */
#define BOUND_TABLE_MAX 16
extern const struct bound *const bound_table[];
extern const size_t bound_count;

/* b's place in bound_table; bound_count when it is not there. */
size_t bound_index(const struct bound *b);

/* The largest known lower bound on `of` among the rows before the one
 * being solved; 0 when there is none. */
uint64_t bound_best_lower(const struct bound_input *in, enum bound_of of);

#endif /* DAOSIM_BOUND_H */
