/* SPDX-License-Identifier: MIT */
/*
 * segments.h - daosim --segments: the cut set that attains the segment-cut
 * bound, and each policy's time over each of its segments (where a run is
 * slower than the bound, and at what: compute, fetches or write-backs).
 */
#ifndef DAOSIM_SEGMENTS_H
#define DAOSIM_SEGMENTS_H

#include <stdio.h>

#include "report.h"

/* A run's time over one segment: from its first kernel's start (0 for
 * kernel 0) to the next segment's first kernel's start (the run's end
 * after the last), and what each copy engine was busy in that time. */
struct segment_time {
	uint64_t ns, h2d_busy_ns, d2h_busy_ns;
};

/* Run pr's times over tr's segments into out[tr->nsegs]; -1 when the run
 * has no timeline (failed, or spans were not recorded) or it is not one
 * compute span per kernel. */
int segment_times(const struct trace_report *tr, const struct policy_run *pr,
		  struct segment_time *out);

/* After report_text's table: a line per segment, with each run's time. */
void segments_text(FILE *f, const struct trace_report *tr);
/* The "segments" member of a trace's JSON object (a leading ", "). */
void segments_json(FILE *f, const struct trace_report *tr);

#endif /* DAOSIM_SEGMENTS_H */
