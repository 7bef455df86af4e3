/* SPDX-License-Identifier: MIT */
/*
 * segments.c - each run's time over the segments of the segment-cut
 * bound's maximum (segments.h). The bound's proof gives every run at least
 * a segment's cost between the starts of the kernels that bound it, so the
 * excess of a run over the bound is located segment by segment, and the
 * busy times say whether the copies were the work or the wait.
 */
#include <stdlib.h>

#include "json_string.h"
#include "segments.h"

/* Overlap of [a, b) with [lo, hi). */
static uint64_t overlap(uint64_t a, uint64_t b, uint64_t lo, uint64_t hi)
{
	uint64_t s = a > lo ? a : lo, e = b < hi ? b : hi;

	return e > s ? e - s : 0;
}

int segment_times(const struct trace_report *tr, const struct policy_run *pr,
		  struct segment_time *out)
{
	const struct dao_sim_span *sp = pr->r.spans;
	size_t n = pr->r.nspans, K = tr->nkernels, k = 0;
	uint64_t *start;

	if (pr->status != DAO_OK || (!sp && K))
		return -1;
	start = malloc((K + 1) * sizeof(*start));
	if (!start)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (sp[i].engine == DAO_SIM_ENGINE_COMPUTE) {
			if (k == K)
				break;
			start[k] = k ? sp[i].start_ns : 0;
			k++;
		}
	if (k != K) {
		free(start);
		return -1;
	}
	start[K] = pr->r.sim.end_ns;
	for (size_t s = 0; s < tr->nsegs; s++) {
		const struct segment_cut_segment *g = &tr->segs[s];
		uint64_t lo = start[g->first], hi = start[g->end];

		out[s] = (struct segment_time){ .ns = hi - lo };
	}
	/* Each engine's spans follow one another in time: one pass per
	 * engine over the segments, a span counted in every one it meets. */
	for (int e = DAO_SIM_ENGINE_H2D; e <= DAO_SIM_ENGINE_D2H; e++) {
		size_t s = 0;

		for (size_t i = 0; i < n && s < tr->nsegs; i++) {
			if (sp[i].engine != e)
				continue;
			while (s < tr->nsegs && start[tr->segs[s].end] <= sp[i].start_ns)
				s++;
			for (size_t j = s; j < tr->nsegs && start[tr->segs[j].first] < sp[i].end_ns;
			     j++) {
				uint64_t o = overlap(sp[i].start_ns, sp[i].end_ns,
						     start[tr->segs[j].first], start[tr->segs[j].end]);

				if (e == DAO_SIM_ENGINE_H2D)
					out[j].h2d_busy_ns += o;
				else
					out[j].d2h_busy_ns += o;
			}
		}
	}
	free(start);
	return 0;
}

/* Every run's times, NULL where a run has none; NULL when out of memory. */
static struct segment_time **all_times(const struct trace_report *tr)
{
	struct segment_time **t = calloc((size_t)tr->nruns + 1, sizeof(*t));

	if (!t)
		return NULL;
	for (int i = 0; i < tr->nruns; i++) {
		t[i] = malloc((tr->nsegs ? tr->nsegs : 1) * sizeof(**t));
		if (t[i] && segment_times(tr, &tr->runs[i], t[i])) {
			free(t[i]);
			t[i] = NULL;
		}
	}
	return t;
}

static void free_times(const struct trace_report *tr, struct segment_time **t)
{
	for (int i = 0; t && i < tr->nruns; i++)
		free(t[i]);
	free(t);
}

void segments_text(FILE *f, const struct trace_report *tr)
{
	struct segment_time **t = all_times(tr);

	if (!t) {
		fprintf(f, "  segments: out of memory\n");
		return;
	}
	fprintf(f, "  segment-cut bound's %zu segments: kernels, the bound's term and ms, then each "
		   "policy's ms (h2d/d2h busy ms)\n",
		tr->nsegs);
	for (size_t s = 0; s < tr->nsegs; s++) {
		const struct segment_cut_segment *g = &tr->segs[s];

		fprintf(f, "  %7zu-%-7zu %-7s %10.3f", g->first, g->end - 1,
			segment_term_name(g->term), g->cost_ns / 1e6);
		for (int i = 0; i < tr->nruns; i++) {
			if (!t[i]) {
				fprintf(f, "  %s -", dao_policy_name(tr->runs[i].policy));
				continue;
			}
			fprintf(f, "  %s %.3f (%.3f/%.3f)", dao_policy_name(tr->runs[i].policy),
				t[i][s].ns / 1e6, t[i][s].h2d_busy_ns / 1e6,
				t[i][s].d2h_busy_ns / 1e6);
		}
		fputc('\n', f);
	}
	free_times(tr, t);
}

void segments_json(FILE *f, const struct trace_report *tr)
{
	struct segment_time **t = all_times(tr);

	if (!t) {
		fputs(",\n   \"segments\": null", f);
		return;
	}
	fputs(",\n   \"segments\": [", f);
	for (size_t s = 0; s < tr->nsegs; s++) {
		const struct segment_cut_segment *g = &tr->segs[s];

		fprintf(f, "%s{\"first_kernel\": %zu, \"end_kernel\": %zu, \"term\": \"%s\", "
			   "\"bound_ns\": %.3f, \"policies\": [",
			s ? ",\n    " : "\n    ", g->first, g->end, segment_term_name(g->term),
			g->cost_ns);
		for (int i = 0; i < tr->nruns; i++) {
			fprintf(f, "%s{\"policy\": ", i ? ", " : "");
			json_string(f, dao_policy_name(tr->runs[i].policy));
			if (t[i])
				fprintf(f, ", \"ns\": %llu, \"h2d_busy_ns\": %llu, \"d2h_busy_ns\": %llu}",
					(unsigned long long)t[i][s].ns,
					(unsigned long long)t[i][s].h2d_busy_ns,
					(unsigned long long)t[i][s].d2h_busy_ns);
			else
				fputs(", \"ns\": null}", f);
		}
		fputs("]}", f);
	}
	fputc(']', f);
	free_times(tr, t);
}
