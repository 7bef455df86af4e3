/* SPDX-License-Identifier: MIT */
/*
 * dao-bench iterations: what a job that marks iterations pays per kernel
 * under each policy, and which policy it ends with when it chose none.
 * Empty kernels, each naming 4 of ITER_BUFFERS buffers in turn (every
 * buffer once every ITER_BUFFERS / 4 kernels), a dao_iteration every
 * ITER_EVERY kernels; with a budget that holds every buffer (nothing
 * moves: what is measured is the policy's own cost per kernel) and with
 * one that holds half of them (every kernel fetches). Pipelined: the
 * launches back to back, one dao_sync at the end; the fastest of
 * ITER_REPEATS runs on one context is kept.
 */
#include <inttypes.h>
#include <stdio.h>

#include "bench.h"

#define ITER_BUFFERS 1000
#define ITER_BYTES 4096
#define ITER_EVERY 1000
#define ITER_REPEATS 3
#define ITER_OPERANDS 4

struct iter_row {
	const char *budget_name; /* "fits" or "half" */
	uint64_t budget;
	dao_policy asked;        /* DAO_POLICY_DEFAULT: none chosen */
	double ns_per_kernel;
	uint64_t h2d_bytes, evictions;
	char in_force[16];       /* the policy at the end */
};

static dao_status run_row(const struct bench_options *o, struct iter_row *row, const char **what)
{
	dao_buf bufs[ITER_BUFFERS];
	uint64_t made = 0;
	dao_ctx ctx;
	dao_stats st;
	dao_info info;
	dao_status s;

	*what = "dao_open";
	s = bench_open(bench_env_backend(), row->budget, row->asked, &ctx);
	if (s != DAO_OK)
		return s;
	row->ns_per_kernel = 0;
	for (; made < ITER_BUFFERS && s == DAO_OK; made++) {
		*what = "dao_buffer_create";
		s = dao_buffer_create(ctx, ITER_BYTES, &bufs[made]);
		if (s != DAO_OK)
			break;
	}
	for (int rep = 0; rep < ITER_REPEATS && s == DAO_OK; rep++) {
		uint64_t t0 = bench_now_ns();
		double ns;

		for (uint64_t k = 0; k < o->kernels && s == DAO_OK; k++) {
			dao_operand ops[ITER_OPERANDS];

			for (int i = 0; i < ITER_OPERANDS; i++)
				ops[i] = (dao_operand){ bufs[(k * ITER_OPERANDS + i) % ITER_BUFFERS],
							DAO_RW };
			*what = "dao_launch";
			s = dao_launch(ctx, bench_empty_kernel, NULL, ops, ITER_OPERANDS);
			if (s == DAO_OK && (k + 1) % ITER_EVERY == 0) {
				*what = "dao_iteration";
				s = dao_iteration(ctx);
			}
		}
		if (s == DAO_OK) {
			*what = "dao_sync";
			s = dao_sync(ctx);
		}
		ns = (double)(bench_now_ns() - t0) / (double)o->kernels;
		if (s == DAO_OK && (!row->ns_per_kernel || ns < row->ns_per_kernel))
			row->ns_per_kernel = ns;
	}
	if (s == DAO_OK && (s = dao_stats_get(ctx, &st)) == DAO_OK &&
	    (s = dao_info_get(ctx, &info)) == DAO_OK) {
		row->h2d_bytes = st.h2d_bytes;
		row->evictions = st.evictions;
		snprintf(row->in_force, sizeof(row->in_force), "%s", info.policy_name);
	}
	bench_close(ctx, bufs, made, &s, what);
	return s;
}

int bench_iterations(const struct bench_options *o)
{
	static const dao_policy asked[] = { DAO_POLICY_DEFAULT, DAO_POLICY_DAO, DAO_POLICY_PLAN };
	const uint64_t all = (uint64_t)ITER_BUFFERS * ITER_BYTES;
	struct iter_row rows[2 * 3];
	size_t n = 0;

	for (int b = 0; b < 2; b++)
		for (size_t p = 0; p < sizeof(asked) / sizeof(asked[0]); p++) {
			struct iter_row *r = &rows[n++];
			const char *what;
			dao_status s;

			*r = (struct iter_row){ .budget_name = b ? "half" : "fits",
						/* Twice what the buffers take: room for
						 * the arena's rounding. */
						.budget = b ? all / 2 : 2 * all,
						.asked = asked[p] };
			s = run_row(o, r, &what);
			if (s != DAO_OK)
				return bench_fail(what, s);
		}
	if (o->json) {
		printf("[");
		for (size_t i = 0; i < n; i++)
			printf("%s\n {\"budget\": \"%s\", \"budget_bytes\": %" PRIu64
			       ", \"policy_asked\": \"%s\", \"policy_in_force\": \"%s\", "
			       "\"kernels\": %" PRIu64 ", \"ns_per_kernel\": %.1f, \"h2d_bytes\": %" PRIu64
			       ", \"evictions\": %" PRIu64 "}",
			       i ? "," : "", rows[i].budget_name, rows[i].budget,
			       dao_policy_name(rows[i].asked), rows[i].in_force, o->kernels,
			       rows[i].ns_per_kernel, rows[i].h2d_bytes, rows[i].evictions);
		printf("\n]\n");
		return 0;
	}
	printf("%d buffers of %d bytes, %d named per empty kernel, dao_iteration every %d "
	       "kernels, %" PRIu64 " kernels per run (fastest of %d)\n",
	       ITER_BUFFERS, ITER_BYTES, ITER_OPERANDS, ITER_EVERY, o->kernels, ITER_REPEATS);
	printf("%-6s %-10s %-10s %14s %14s %12s\n", "budget", "asked", "in force", "ns/kernel",
	       "h2d bytes", "evictions");
	for (size_t i = 0; i < n; i++)
		printf("%-6s %-10s %-10s %14.1f %14" PRIu64 " %12" PRIu64 "\n", rows[i].budget_name,
		       dao_policy_name(rows[i].asked), rows[i].in_force, rows[i].ns_per_kernel,
		       rows[i].h2d_bytes, rows[i].evictions);
	return 0;
}
