/* SPDX-License-Identifier: MIT */
/*
 * bench_mip - the segment LP with residency 0 or 1 (segment_mip.h) on
 * traces: one line per trace with the kernels, the segments of its cut
 * set, the binary columns, the LP's optimum, the bound the branch and
 * bound proved within the limit (and whether it is the optimum) and the
 * CPU seconds taken (Documentation/daosim.md, "A block is held whole").
 *
 *   daosim-bench-mip [--device NAME] [--every N] [--limit S] PCT TRACE...
 *   daosim-bench-mip [--device NAME] [--every N] --mps FILE PCT TRACE
 *
 * --every N adds a cut at every N-th kernel to the segment cut's (default
 * 1: every kernel); --limit S, seconds for each trace (default 60).
 * --mps FILE writes the one trace's program to FILE in free MPS instead
 * of searching it, for another solver (integer columns the residencies,
 * the objective the run's time in microseconds).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "bounds/segment_mip.h"

static int usage(void)
{
	fprintf(stderr, "usage: daosim-bench-mip [--device h100|a100] [--every N] [--limit S] "
			"PCT TRACE...\n"
			"       daosim-bench-mip [--device h100|a100] [--every N] --mps FILE PCT "
			"TRACE\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct dao_sim_model m;
	const char *device = "h100", *mps = NULL;
	double pct, limit = 60;
	long every = 1;
	char *end;
	int i = 1, failed = 0;

	for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
		if (!strcmp(argv[i], "--device")) {
			device = argv[i + 1];
		} else if (!strcmp(argv[i], "--every")) {
			every = strtol(argv[i + 1], &end, 10);
			if (*end || end == argv[i + 1])
				return usage();
		} else if (!strcmp(argv[i], "--limit")) {
			limit = strtod(argv[i + 1], &end);
			if (*end || end == argv[i + 1])
				return usage();
		} else if (!strcmp(argv[i], "--mps")) {
			mps = argv[i + 1];
		} else {
			return usage();
		}
	}
	if (argc - i < 2 || every < 0 || !(limit > 0) || dao_sim_model_preset(device, &m) != DAO_OK ||
	    (mps && argc - i != 2))
		return usage();
	pct = strtod(argv[i], &end);
	if (*end || !(pct > 0 && pct <= 100)) {
		fprintf(stderr, "daosim-bench-mip: %s: a percentage in (0, 100]\n", argv[i]);
		return 2;
	}
	if (!mps)
		printf("%-32s %7s %8s %8s %8s %12s %12s %8s %8s\n", "trace", "budget", "kernels",
		       "segments", "binary", "LP ms", "MIP ms", "optimal", "cpu s");
	for (i++; i < argc; i++) {
		struct dao_trace *t;
		struct trace_profile p;
		struct segment_mip r;
		char err[512];

		if (dao_trace_read_file(argv[i], &t, err, sizeof(err))) {
			fprintf(stderr, "daosim-bench-mip: %s\n", err);
			failed = 1;
			continue;
		}
		if (trace_profile_build(t, trace_flops_scale(t), &p)) {
			fprintf(stderr, "daosim-bench-mip: %s: out of memory\n", argv[i]);
			dao_trace_free(t);
			failed = 1;
			continue;
		}
		struct bound_input in = {
			.trace = t,
			.profile = &p,
			.model = &m,
			.budget = (uint64_t)floor((double)p.peak_live_bytes * pct / 100),
		};

		if (mps) {
			if (segment_mip_write_mps(&in, (size_t)every, mps, &r, err, sizeof(err))) {
				fprintf(stderr, "daosim-bench-mip: %s: %s\n", argv[i], err);
				failed = 1;
			} else {
				printf("%s: %g%% of %s (%zu kernels): %zu segments, %zu binary "
				       "columns; the objective in microseconds\n",
				       mps, pct, argv[i], t->nkernels, r.segments, r.binaries);
			}
		} else if (segment_mip_bound(&in, (size_t)every, limit, &r, err, sizeof(err))) {
			fprintf(stderr, "daosim-bench-mip: %s: %s\n", argv[i], err);
			failed = 1;
		} else {
			printf("%-32s %6g%% %8zu %8zu %8zu %12.3f %12.3f %8s %8.1f\n", argv[i], pct,
			       t->nkernels, r.segments, r.binaries, r.lp_ns / 1e6, r.ns / 1e6,
			       r.optimal ? "yes" : "no", r.cpu_s);
		}
		trace_profile_free(&p);
		dao_trace_free(t);
	}
	return failed;
}
