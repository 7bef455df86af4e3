/* SPDX-License-Identifier: MIT */
/*
 * bench_bounds - time daosim's lower bounds side by side on traces: the
 * byte LPs by the greedy (what daosim uses) and by GLPK's min-cost flow
 * (what it used before, skipped with --no-glpk), and the time-indexed LP
 * by CLP. Prints one line per trace and budget; checks that the greedy and
 * GLPK agree.
 *
 *   daosim-bench-bounds [--no-glpk] [--glpk-limit S] [--ti-limit S] [--device NAME] PCT TRACE...
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lp_bound.h"
#include "profile.h"
#include "report.h"
#include "time_bound.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct dao_sim_model m;
	int glpk = 1, i = 1, bad = 0;
	double pct, ti_limit = 0, glpk_limit = 0;

	dao_sim_model_preset("h100", &m);
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--no-glpk") == 0) {
			glpk = 0;
		} else if (strcmp(argv[i], "--glpk-limit") == 0 && i + 1 < argc) {
			glpk_limit = atof(argv[++i]);
		} else if (strcmp(argv[i], "--ti-limit") == 0 && i + 1 < argc) {
			ti_limit = atof(argv[++i]);
		} else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
			if (dao_sim_model_preset(argv[++i], &m)) {
				fprintf(stderr, "bench_bounds: unknown device %s\n", argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "bench_bounds: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: daosim-bench-bounds [--no-glpk] [--glpk-limit S] [--ti-limit S] [--device NAME] PCT TRACE...\n");
		return 2;
	}
	pct = atof(argv[i++]);
	printf("%-28s %7s %9s %5s %12s %12s %9s %9s %9s %12s %12s %9s\n", "trace", "kernels",
	       "intervals", "pct", "lp_h2d", "lp_d2h", "greedy_s", "glpk_s", "agree", "time_lb_ns",
	       "ti_lb_ns", "ti_s");
	/* time_lb_ns: max(compute, LP h2d / bw, LP d2h / bw); ti: the
	 * time-indexed LP, "-" when it did not finish within --ti-limit */
	for (; i < argc; i++) {
		struct dao_trace *t;
		struct trace_profile p;
		struct time_bound tb;
		char err[512], ti[32], agree[16];
		dao_status st;
		uint64_t budget, h, d, gh = 0, gd = 0;
		double t0, tg, tglpk = NAN, tti;
		const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];

		if (dao_trace_read_file(argv[i], &t, err, sizeof(err)) ||
		    trace_profile_build(t, trace_flops_scale(t), &p)) {
			fprintf(stderr, "bench_bounds: %s: %s\n", argv[i], err);
			return 1;
		}
		budget = (uint64_t)floor((double)p.peak_live_bytes * pct / 100);
		t0 = now();
		if (lp_bound_bytes(&p, budget, LP_H2D, &h, err, sizeof(err)) ||
		    lp_bound_bytes(&p, budget, LP_D2H, &d, err, sizeof(err))) {
			fprintf(stderr, "bench_bounds: %s: %s\n", argv[i], err);
			return 1;
		}
		tg = now() - t0;
		snprintf(agree, sizeof(agree), "-");
		if (glpk) {
			t0 = now();
			st = lp_bound_bytes_glpk(&p, budget, LP_H2D, glpk_limit, &gh, err, sizeof(err));
			if (!st)
				st = lp_bound_bytes_glpk(&p, budget, LP_D2H, glpk_limit, &gd, err,
							 sizeof(err));
			tglpk = now() - t0;
			if (st && st != DAO_ERR_RANGE) {
				fprintf(stderr, "bench_bounds: %s: GLPK: %s\n", argv[i], err);
				return 1;
			}
			if (st) {
				snprintf(agree, sizeof(agree), ">limit");
			} else {
				snprintf(agree, sizeof(agree), gh == h && gd == d ? "yes" : "NO");
				bad |= gh != h || gd != d;
			}
		}
		t0 = now();
		st = time_bound_solve(&p, &m, budget, ti_limit, &tb, err, sizeof(err));
		tti = now() - t0;
		if (st && st != DAO_ERR_RANGE) {
			fprintf(stderr, "bench_bounds: %s: time-indexed: %s\n", argv[i], err);
			return 1;
		}
		if (st)
			snprintf(ti, sizeof(ti), "-");
		else
			snprintf(ti, sizeof(ti), "%llu", (unsigned long long)tb.ns);
		printf("%-28s %7zu %9zu %5g %12llu %12llu %9.3f %9.3f %9s %12llu %12s %9.3f\n", base,
		       p.nkernels, p.nintervals, pct, (unsigned long long)h, (unsigned long long)d,
		       tg, tglpk, agree,
		       (unsigned long long)report_time_bound_ns(&m, profile_compute_ns(&p, &m), h, d),
		       ti, tti);
		fflush(stdout);
		trace_profile_free(&p);
		dao_trace_free(t);
	}
	return bad;
}
