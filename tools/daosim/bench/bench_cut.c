/* SPDX-License-Identifier: MIT */
/*
 * bench_cut - time daosim's segment-cut bound (segment_cut.h) on traces:
 * one line per trace and budget with the kernels, the operand accesses,
 * the bound and the CPU seconds its dynamic program took (the profile and
 * the trace's parse not counted); then the segment LP bound on its cut set
 * (segment_lp.c, without a CPU limit) and the CPU seconds it took, its
 * dynamic program again included.
 *
 *   daosim-bench-cut [--device NAME] PCT TRACE...
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile.h"
#include "bounds/bound.h"
#include "bounds/segment_cut.h"

/* CPU seconds of this process: the machine may be shared. */
static double cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct dao_sim_model m;
	const char *device = "h100";
	double pct;
	char *end;
	int i = 1, failed = 0;

	if (argc > 2 && !strcmp(argv[1], "--device")) {
		device = argv[2];
		i = 3;
	}
	if (argc - i < 2 || dao_sim_model_preset(device, &m) != DAO_OK) {
		fprintf(stderr, "usage: daosim-bench-cut [--device h100|a100] PCT TRACE...\n");
		return 2;
	}
	pct = strtod(argv[i], &end);
	if (*end || !(pct > 0 && pct <= 100)) {
		fprintf(stderr, "daosim-bench-cut: %s: a percentage in (0, 100]\n", argv[i]);
		return 2;
	}
	printf("%-40s %7s %8s %9s %12s %9s %12s %9s\n", "trace", "budget", "kernels",
	       "accesses", "cut ms", "cpu s", "LP ms", "cpu s");
	for (i++; i < argc; i++) {
		struct dao_trace *t;
		struct trace_profile p;
		struct segment_cut sc;
		char err[512];
		uint64_t budget;
		double c0;

		if (dao_trace_read_file(argv[i], &t, err, sizeof(err))) {
			fprintf(stderr, "daosim-bench-cut: %s\n", err);
			failed = 1;
			continue;
		}
		if (trace_profile_build(t, trace_flops_scale(t), &p)) {
			fprintf(stderr, "daosim-bench-cut: %s: out of memory\n", argv[i]);
			dao_trace_free(t);
			failed = 1;
			continue;
		}
		budget = (uint64_t)floor((double)p.peak_live_bytes * pct / 100);
		c0 = cpu();
		if (segment_cut_bound(t, &p, &m, budget, &sc, err, sizeof(err))) {
			fprintf(stderr, "daosim-bench-cut: %s: %s\n", argv[i], err);
			failed = 1;
		} else {
			struct bound_input in = { .trace = t, .profile = &p, .model = &m,
						  .budget = budget };
			double cut_s = cpu() - c0;
			uint64_t lp = 0;

			c0 = cpu();
			if (bound_segment_lp.solve(&in, &lp, err, sizeof(err))) {
				fprintf(stderr, "daosim-bench-cut: %s: segment LP: %s\n", argv[i], err);
				failed = 1;
			}
			printf("%-40s %6g%% %8zu %9zu %12.3f %9.4f %12.3f %9.4f\n", argv[i], pct,
			       t->nkernels, t->nops, sc.ns / 1e6, cut_s, lp / 1e6, cpu() - c0);
		}
		trace_profile_free(&p);
		dao_trace_free(t);
	}
	return failed;
}
