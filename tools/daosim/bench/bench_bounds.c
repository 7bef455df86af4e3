/* SPDX-License-Identifier: MIT */
/*
 * bench_bounds - time daosim's lower bounds side by side on traces: the
 * byte LPs by the greedy (what daosim uses) and by GLPK's min-cost flow
 * (what it used before, skipped with --no-glpk), and the time-indexed LP
 * by CLP. Prints one line per trace and budget; checks that the greedy and
 * GLPK agree. With --ti-reference, also the time-indexed LP from CLP's own
 * start (presolve, primal simplex: the method before the greedy start) and
 * whether the two optima agree to 1e-9 relative.
 *
 *   daosim-bench-bounds [--no-glpk] [--glpk-limit S] [--ti-limit S] [--ti-reference]
 *                       [--ref-limit S] [--heap-default] [--device NAME] PCT TRACE...
 *
 * --heap-default leaves glibc's allocator as it is (without it the bench,
 * like daosim, calls time_bound_keep_heap first).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bounds/lp_bound.h"
#include "profile.h"
#include "bounds/simple.h"
#include "bounds/time_bound.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU seconds of this process: the machine may be shared. */
static double cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Solve the time-indexed LP from start; "-" in text when stopped at
 * limit. 0, or 1 after printing the error. */
static int solve_ti(const struct trace_profile *p, const struct dao_sim_model *m, uint64_t budget,
		    enum time_bound_start start, double limit, const char *name,
		    struct time_bound *tb, int *done, char *text, size_t textlen, double *wall,
		    double *cpus)
{
	char err[512];
	double t0 = now(), c0 = cpu();
	dao_status st = time_bound_solve_from(p, m, budget, start, limit, tb, err, sizeof(err));

	*wall = now() - t0;
	*cpus = cpu() - c0;
	if (st && st != DAO_ERR_RANGE) {
		fprintf(stderr, "bench_bounds: %s: time-indexed: %s\n", name, err);
		return 1;
	}
	*done = !st;
	if (st)
		snprintf(text, textlen, "-");
	else
		snprintf(text, textlen, "%llu", (unsigned long long)tb->ns);
	return 0;
}

int main(int argc, char **argv)
{
	struct dao_sim_model m;
	int glpk = 1, i = 1, bad = 0, ref = 0, keep_heap = 1;
	double pct, ti_limit = 0, glpk_limit = 0, ref_limit = 0;

	dao_sim_model_preset("h100", &m);
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--no-glpk") == 0) {
			glpk = 0;
		} else if (strcmp(argv[i], "--glpk-limit") == 0 && i + 1 < argc) {
			glpk_limit = atof(argv[++i]);
		} else if (strcmp(argv[i], "--ti-limit") == 0 && i + 1 < argc) {
			ti_limit = atof(argv[++i]);
		} else if (strcmp(argv[i], "--heap-default") == 0) {
			keep_heap = 0;
		} else if (strcmp(argv[i], "--ti-reference") == 0) {
			ref = 1;
		} else if (strcmp(argv[i], "--ref-limit") == 0 && i + 1 < argc) {
			ref_limit = atof(argv[++i]);
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
		fprintf(stderr, "usage: daosim-bench-bounds [--no-glpk] [--glpk-limit S] [--ti-limit S] [--ti-reference] [--ref-limit S] [--heap-default] [--device NAME] PCT TRACE...\n");
		return 2;
	}
	if (keep_heap && time_bound_keep_heap()) {
		fprintf(stderr, "bench_bounds: the allocator refused time_bound_keep_heap's settings\n");
		return 1;
	}
	pct = atof(argv[i++]);
	printf("%-28s %7s %9s %5s %12s %12s %9s %9s %9s %12s %12s %9s %9s %9s", "trace", "kernels",
	       "intervals", "pct", "lp_h2d", "lp_d2h", "greedy_s", "glpk_s", "agree", "time_lb_ns",
	       "ti_lb_ns", "ti_s", "ti_cpu_s", "ti_iters");
	if (ref)
		printf(" %12s %9s %9s %9s", "ref_lb_ns", "ref_s", "ref_cpu_s", "ti_agree");
	printf("\n");
	/* time_lb_ns: max(compute, LP h2d / bw, LP d2h / bw); ti: the
	 * time-indexed LP, "-" when it did not finish within --ti-limit;
	 * ref: the same LP from CLP's own start, within --ref-limit */
	for (; i < argc; i++) {
		struct dao_trace *t;
		struct trace_profile p;
		struct time_bound tb;
		char err[512], ti[32], agree[16];
		dao_status st;
		uint64_t budget, h, d, gh = 0, gd = 0;
		double t0, tg, tglpk = NAN, tti, cti;
		int done;
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
		if (solve_ti(&p, &m, budget, TIME_BOUND_START_GREEDY, ti_limit, argv[i], &tb, &done,
			     ti, sizeof(ti), &tti, &cti))
			return 1;
		printf("%-28s %7zu %9zu %5g %12llu %12llu %9.3f %9.3f %9s %12llu %12s %9.3f %9.3f %9zu",
		       base, p.nkernels, p.nintervals, pct, (unsigned long long)h,
		       (unsigned long long)d, tg, tglpk, agree,
		       (unsigned long long)simple_time_bound_ns(&m, profile_compute_ns(&p, &m), h, d),
		       ti, tti, cti, tb.iterations);
		if (ref) {
			struct time_bound rb;
			char rt[32];
			int rdone;
			double tr, cr;
			const char *same = ">limit";

			if (solve_ti(&p, &m, budget, TIME_BOUND_START_CLP, ref_limit, argv[i], &rb,
				     &rdone, rt, sizeof(rt), &tr, &cr))
				return 1;
			if (rdone && done) {
				int ok = fabs(tb.lp_ns - rb.lp_ns) <=
					 1e-9 * fmax(fabs(rb.lp_ns), 1.0);

				same = ok ? "yes" : "NO";
				bad |= !ok;
			}
			printf(" %12s %9.3f %9.3f %9s", rt, tr, cr, same);
		}
		printf("\n");
		fflush(stdout);
		trace_profile_free(&p);
		dao_trace_free(t);
	}
	return bad;
}
