/* SPDX-License-Identifier: MIT */
/*
 * report.h - what daosim found for one trace, and how it is printed (a
 * table for people, one JSON document for programs, an SVG).
 */
#ifndef DAOSIM_REPORT_H
#define DAOSIM_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "bounds/bound.h"
#include "bounds/segment_cut.h"
#include "replay.h"
#include "dao_sim.h"

struct policy_run {
	dao_policy policy;
	dao_status status; /* DAO_OK or why the replay failed (err) */
	struct replay_result r;
};

struct trace_report {
	const char *path;
	size_t nkernels, nbufs;
	unsigned flops_scale;
	uint64_t peak_live_bytes;
	uint64_t budget_bytes;
	double budget_percent; /* < 0 when the budget was given in bytes */
	uint64_t max_kernel_bytes;
	struct bound_value bounds[BOUND_TABLE_MAX]; /* bound_table[i]'s in bounds[i] */
	struct policy_run *runs; /* nruns of them */
	int nruns;
	/* --segments: the segment-cut bound's cut set (segs NULL for no
	 * kernels) */
	bool segments;
	struct segment_cut_segment *segs;
	size_t nsegs;
};

void report_text(FILE *f, const struct dao_sim_model *m, const struct trace_report *tr);
void report_json(FILE *f, const struct dao_sim_model *m, const struct trace_report *trs,
		 size_t n);

/* Write one SVG with a panel per trace and policy; 0 or -1 (errno set). */
int report_svg(const char *path, const struct dao_sim_model *m, const struct trace_report *trs,
	       size_t n);

#endif /* DAOSIM_REPORT_H */
