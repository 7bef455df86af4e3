/* SPDX-License-Identifier: MIT */
/*
 * svg.c - one panel per trace and policy on a shared modeled-time axis:
 * device occupancy against the budget, then how busy the compute, h2d and
 * d2h engines are, column by column. Spans are binned to pixel columns so
 * the file stays small however long the trace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define W 960      /* plot width in px */
#define LEFT 90    /* room for labels */
#define OCC_H 110  /* occupancy chart height */
#define LANE_H 16
#define PANEL_H (30 + OCC_H + 4 * (LANE_H + 4) + 24)
#define GIB 1073741824.0

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
	}
}

/* Busy fraction of each column for one engine. */
static void bin_busy(const struct replay_result *r, int engine, uint64_t span_ns, double *busy)
{
	memset(busy, 0, W * sizeof(*busy));
	for (size_t i = 0; i < r->nspans; i++) {
		const struct dao_sim_span *s = &r->spans[i];
		double a, b;

		if (s->engine != engine || s->end_ns <= s->start_ns)
			continue;
		a = (double)s->start_ns * W / (double)span_ns;
		b = (double)s->end_ns * W / (double)span_ns;
		for (int c = (int)a; c < W && c <= (int)b; c++) {
			double lo = a > c ? a : c, hi = b < c + 1 ? b : c + 1;

			if (hi > lo)
				busy[c] += hi - lo;
		}
	}
	for (int c = 0; c < W; c++)
		if (busy[c] > 1)
			busy[c] = 1;
}

static void lane(FILE *f, int y, const char *name, const char *color, const double *busy)
{
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"l\">%s</text>\n", LEFT - 6, y + LANE_H - 4,
		name);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f4f4f4\"/>\n",
		LEFT, y, W, LANE_H);
	for (int c = 0; c < W; c++) {
		int run = 1;

		if (busy[c] < 0.005)
			continue;
		/* Merge neighbours of about the same shade into one rect. */
		while (c + run < W && busy[c + run] >= 0.005 &&
		       (int)(busy[c + run] * 10) == (int)(busy[c] * 10))
			run++;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" fill-opacity=\"%.2f\"/>\n",
			LEFT + c, y, run, LANE_H, color, 0.15 + 0.85 * busy[c]);
		c += run - 1;
	}
}

/* Where the optimum lies, as far as this run solved it: the largest lower
 * bound on time, and the planned schedule when it was made. */
static void interval(FILE *f, const struct trace_report *tr)
{
	const struct bound_value *lower = &tr->bounds[bound_index(&bound_largest)];
	const struct bound_value *plan = &tr->bounds[bound_index(&bound_plan)];

	if (!lower->known)
		lower = &tr->bounds[bound_index(&bound_time_simple)];
	fprintf(f, "bound %.1f ms", lower->value / 1e6);
	if (plan->known)
		fprintf(f, ", plan %.1f ms", plan->value / 1e6);
}

static void panel(FILE *f, int y0, const struct trace_report *tr, const struct policy_run *pr,
		  uint64_t span_ns, double *busy)
{
	const struct replay_result *r = &pr->r;
	uint64_t ymax = tr->budget_bytes ? tr->budget_bytes : 1;
	int ybase = y0 + 30 + OCC_H;
	uint64_t last_occ = 0;

	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"t\">", LEFT, y0 + 18);
	xml_text(f, tr->path);
	fprintf(f, " | %s | budget %.2f GiB | h2d %.2f GiB, d2h %.2f GiB | modeled %.1f ms (",
		dao_policy_name(pr->policy), tr->budget_bytes / GIB, r->stats.h2d_bytes / GIB,
		r->stats.d2h_bytes / GIB, r->sim.end_ns / 1e6);
	interval(f, tr);
	fputs(")</text>\n", f);
	/* occupancy */
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fbfbfb\" stroke=\"#ccc\"/>\n",
		LEFT, y0 + 30, W, OCC_H);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"l\">%.2f GiB</text>\n", LEFT - 6, y0 + 40,
		ymax / GIB);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"l\">device</text>\n", LEFT - 6,
		y0 + 30 + OCC_H / 2);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"l\">0</text>\n", LEFT - 6, ybase);
	fprintf(f, "<path fill=\"#9ecae1\" stroke=\"#3182bd\" stroke-width=\"0.8\" d=\"M%d %d",
		LEFT, ybase);
	for (size_t i = 0; i < r->nspans; i++) {
		const struct dao_sim_span *s = &r->spans[i];
		double x;
		uint64_t occ;

		if (s->engine != DAO_SIM_ENGINE_COMPUTE)
			continue;
		x = LEFT + (double)s->start_ns * W / (double)span_ns;
		occ = s->resident_bytes > ymax ? ymax : s->resident_bytes;
		if (occ == last_occ)
			continue;
		fprintf(f, " L%.1f %.1f L%.1f %.1f", x, ybase - (double)last_occ * OCC_H / ymax, x,
			ybase - (double)occ * OCC_H / ymax);
		last_occ = occ;
	}
	fprintf(f, " L%.1f %.1f L%d %d Z\"/>\n",
		LEFT + (double)r->sim.end_ns * W / (double)span_ns,
		ybase - (double)last_occ * OCC_H / ymax,
		LEFT + (int)((double)r->sim.end_ns * W / (double)span_ns), ybase);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#d62728\" stroke-dasharray=\"5,3\"/>\n",
		LEFT, y0 + 30, LEFT + W, y0 + 30);
	/* engines */
	bin_busy(r, DAO_SIM_ENGINE_COMPUTE, span_ns, busy);
	lane(f, ybase + 4, "compute", "#2ca02c", busy);
	bin_busy(r, DAO_SIM_ENGINE_H2D, span_ns, busy);
	lane(f, ybase + 4 + (LANE_H + 4), "h2d", "#1f77b4", busy);
	bin_busy(r, DAO_SIM_ENGINE_D2H, span_ns, busy);
	lane(f, ybase + 4 + 2 * (LANE_H + 4), "d2h", "#ff7f0e", busy);
	/* time axis */
	for (int i = 0; i <= 5; i++) {
		int x = LEFT + i * W / 5;

		fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"a\">%.1f ms</text>\n", x,
			ybase + 4 + 3 * (LANE_H + 4) + 12, (double)span_ns * i / 5 / 1e6);
	}
}

int report_svg(const char *path, const struct dao_sim_model *m, const struct trace_report *trs,
	       size_t n)
{
	double *busy = malloc(W * sizeof(*busy));
	int panels = 0, y = 40;
	FILE *f;

	if (!busy)
		return -1;
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < trs[i].nruns; j++)
			panels += trs[i].runs[j].status == DAO_OK;
	f = fopen(path, "w");
	if (!f) {
		free(busy);
		return -1;
	}
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n",
		LEFT + W + 20, 40 + panels * PANEL_H);
	fputs("<style>.t{font-size:12px;font-weight:bold}.l{font-size:10px;text-anchor:end}"
	      ".a{font-size:10px;text-anchor:middle}</style>\n",
	      f);
	fprintf(f, "<text x=\"%d\" y=\"22\" class=\"t\">daosim on %s: device occupancy (blue) under the budget (red), engine activity (darker = busier)</text>\n",
		LEFT, m->name);
	for (size_t i = 0; i < n; i++) {
		/* Policies of one trace share the time axis: compare at a glance. */
		uint64_t span_ns = 1;

		for (int j = 0; j < trs[i].nruns; j++)
			if (trs[i].runs[j].status == DAO_OK && trs[i].runs[j].r.sim.end_ns > span_ns)
				span_ns = trs[i].runs[j].r.sim.end_ns;
		for (int j = 0; j < trs[i].nruns; j++) {
			if (trs[i].runs[j].status != DAO_OK)
				continue;
			panel(f, y, &trs[i], &trs[i].runs[j], span_ns, busy);
			y += PANEL_H;
		}
	}
	fputs("</svg>\n", f);
	free(busy);
	if (ferror(f)) {
		fclose(f);
		errno = EIO;
		return -1;
	}
	return fclose(f) ? -1 : 0;
}
