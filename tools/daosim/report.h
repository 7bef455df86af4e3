/* SPDX-License-Identifier: MIT */
/*
 * report.h - what daosim found for one trace, and how it is printed (a
 * table for people, one JSON document for programs, an SVG).
 */
#ifndef DAOSIM_REPORT_H
#define DAOSIM_REPORT_H

#include <stdio.h>

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
	uint64_t compulsory_bytes;
	uint64_t lp_h2d_bytes;
	uint64_t lp_d2h_bytes;
	uint64_t compute_ns;
	uint64_t time_bound_ns;
	int ti_solved;        /* the time-indexed LP was solved (else not asked or too slow) */
	uint64_t ti_bound_ns; /* its optimum (time_bound.h) */
	uint64_t cut_bound_ns; /* the segment-cut bound (segment_cut.h) */
	struct policy_run *runs; /* nruns of them */
	int nruns;
};

/* max(compute, LP h2d / h2d bandwidth, LP d2h / d2h bandwidth) */
uint64_t report_time_bound_ns(const struct dao_sim_model *m, uint64_t compute_ns,
			      uint64_t lp_h2d, uint64_t lp_d2h);

void report_text(FILE *f, const struct dao_sim_model *m, const struct trace_report *tr);
void report_json(FILE *f, const struct dao_sim_model *m, const struct trace_report *trs,
		 size_t n);

/* Write one SVG with a panel per trace and policy; 0 or -1 (errno set). */
int report_svg(const char *path, const struct dao_sim_model *m, const struct trace_report *trs,
	       size_t n);

#endif /* DAOSIM_REPORT_H */
