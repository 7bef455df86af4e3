/* SPDX-License-Identifier: MIT */
/*
 * report.c - daosim's table and --json document: the trace's figures,
 * every row of the table of bounds (bounds/bound.h) in its order, and
 * each policy's run with its figures over those rows.
 */
#include <math.h>
#include <string.h>

#include "json_string.h"
#include "report.h"
#include "segments.h"

#define GIB 1073741824.0

/* got / bound, or NAN when the bound is 0 and got is not (no finite ratio). */
static double ratio(uint64_t got, uint64_t bound)
{
	if (bound == 0)
		return got == 0 ? 1.0 : NAN;
	return (double)got / (double)bound;
}

/* What policy run pr did in the figure b bounds. */
static uint64_t figure(const struct bound *b, const struct policy_run *pr)
{
	switch (b->of) {
	case BOUND_H2D_BYTES:
		return pr->r.stats.h2d_bytes;
	case BOUND_D2H_BYTES:
		return pr->r.stats.d2h_bytes;
	default:
		return pr->r.sim.end_ns;
	}
}

/* pr's figure over bound row i, or NAN when the bound is not known. */
static double bound_ratio(const struct trace_report *tr, size_t i, const struct policy_run *pr)
{
	if (!tr->bounds[i].known)
		return NAN;
	return ratio(figure(bound_table[i], pr), tr->bounds[i].value);
}

/* pr's bytes moved (both ways) over those of row i's schedule (a row
 * with json_schedule), or NAN when it is not known. */
static double schedule_bytes_ratio(const struct trace_report *tr, size_t i,
				   const struct policy_run *pr)
{
	const struct bound_value *v = &tr->bounds[i];

	if (!v->known)
		return NAN;
	return ratio(pr->r.stats.h2d_bytes + pr->r.stats.d2h_bytes,
		     v->schedule.h2d_bytes + v->schedule.d2h_bytes);
}

static void print_ratio(FILE *f, double r)
{
	if (isnan(r))
		fprintf(f, " %9s", "-");
	else
		fprintf(f, " %8.3fx", r);
}

/* One unit for a whole trace's byte figures, so columns compare. */
static void pick_unit(uint64_t peak, double *div, const char **name)
{
	if (peak >= (1ull << 30)) {
		*div = GIB;
		*name = "GiB";
	} else if (peak >= (1ull << 20)) {
		*div = 1048576.0;
		*name = "MiB";
	} else if (peak >= 1024) {
		*div = 1024.0;
		*name = "KiB";
	} else {
		*div = 1.0;
		*name = "B";
	}
}

/* How a planned schedule's replay marked iterations, after its window. */
static const char *const schedule_marks_text[] = {
	[REPLAY_MARKS_TRACE] = "",
	[REPLAY_MARKS_ENDS] = ", the trace's ends marked",
	[REPLAY_MARKS_ONE_ITERATION] = ", the trace one iteration",
};

/* The bounds' lines: each row that opens a line starts one, the others
 * follow on it; a row not known ends its line ("not computed"). */
static void text_bounds(FILE *f, const struct trace_report *tr, double u, const char *un)
{
	int skip = 0;

	for (size_t i = 0; i < bound_count; i++) {
		const struct bound *b = bound_table[i];
		const struct bound_value *v = &tr->bounds[i];

		if (b->text_line) {
			fprintf(f, "%s  %s", i ? "\n" : "", b->text_line);
			skip = 0;
		} else if (skip) {
			continue;
		} else {
			fputs(", ", f);
		}
		if (!v->known) {
			fprintf(f, "%s not computed", b->name);
			skip = 1;
		} else if (b->of == BOUND_TIME_NS) {
			fprintf(f, "%s %.2f ms", b->name, v->value / 1e6);
		} else {
			fprintf(f, "%s %.3f %s", b->name, v->value / u, un);
		}
		if (v->known && b->json_schedule)
			fprintf(f, " (%s at a window of %u kernel%s%s%s%s%s: h2d %.3f %s, d2h %.3f %s)",
				dao_policy_name(v->schedule.policy), v->schedule.lookahead,
				v->schedule.lookahead == 1 ? "" : "s",
				schedule_marks_text[v->schedule.marks],
				v->schedule.plan_order ? ", the plan order " : "",
				v->schedule.plan_order ? replay_plan_order_name(v->schedule.plan_order) : "",
				v->schedule.plan_eager ? ", prefetches eager" : "",
				v->schedule.h2d_bytes / u, un, v->schedule.d2h_bytes / u, un);
	}
	fputc('\n', f);
}

static void text_run(FILE *f, const struct trace_report *tr, const struct policy_run *pr,
		     double u)
{
	const dao_stats *s = &pr->r.stats;

	if (pr->status != DAO_OK) {
		fprintf(f, "  %-7s failed: %s\n", dao_policy_name(pr->policy), pr->r.err);
		return;
	}
	fprintf(f, "  %-7s %9.3f %9.3f %8llu %9llu %10.2f %10.2f %10.2f",
		dao_policy_name(pr->policy), s->h2d_bytes / u, s->d2h_bytes / u,
		(unsigned long long)s->fetches, (unsigned long long)s->evictions,
		pr->r.sim.compute_ns / 1e6, pr->r.sim.end_ns / 1e6, pr->r.sim.stall_ns / 1e6);
	for (size_t i = 0; i < bound_count; i++)
		if (bound_table[i]->column)
			print_ratio(f, bound_ratio(tr, i, pr));
	fputc('\n', f);
}

void report_text(FILE *f, const struct dao_sim_model *m, const struct trace_report *tr)
{
	double u;
	const char *un;
	char h2d[16], d2h[16];

	pick_unit(tr->peak_live_bytes, &u, &un);
	snprintf(h2d, sizeof(h2d), "h2d %s", un);
	snprintf(d2h, sizeof(d2h), "d2h %s", un);
	fprintf(f, "%s: %zu kernels, %zu buffers%s\n", tr->path, tr->nkernels, tr->nbufs,
		tr->flops_scale == 2 ? " (float64: flops counted twice)" : "");
	fprintf(f, "  device %s: %.0f/%.0f GB/s h2d/d2h, %.1f Tflop/s, %.0f GB/s memory, launch %llu ns\n",
		m->name, m->h2d_bytes_per_s / 1e9, m->d2h_bytes_per_s / 1e9, m->flops_per_s / 1e12,
		m->mem_bytes_per_s / 1e9, (unsigned long long)m->launch_ns);
	fprintf(f, "  peak live %.3f %s, budget %.3f %s", tr->peak_live_bytes / u, un,
		tr->budget_bytes / u, un);
	if (tr->budget_percent >= 0)
		fprintf(f, " (%g%%)", tr->budget_percent);
	fprintf(f, ", largest kernel %.3f %s\n", tr->max_kernel_bytes / u, un);
	text_bounds(f, tr, u, un);
	fprintf(f, "  %-7s %9s %9s %8s %9s %10s %10s %10s", "policy", h2d, d2h, "fetches",
		"evictions", "compute ms", "modeled ms", "stall ms");
	for (size_t i = 0; i < bound_count; i++)
		if (bound_table[i]->column)
			fprintf(f, " %9s", bound_table[i]->column);
	fputc('\n', f);
	for (int i = 0; i < tr->nruns; i++)
		text_run(f, tr, &tr->runs[i], u);
	if (tr->segments)
		segments_text(f, tr);
}

static void json_ratio(FILE *f, const char *key, double r)
{
	if (isnan(r))
		fprintf(f, "\"%s\": null", key);
	else
		fprintf(f, "\"%s\": %.6f", key, r);
}

#define U(x) ((unsigned long long)(x))

static void json_schedule(FILE *f, const char *key, const struct bound_value *v)
{
	fprintf(f, ", \"%s\": ", key);
	if (!v->known) {
		fputs("null", f);
		return;
	}
	fputs("{\"policy\": ", f);
	json_string(f, dao_policy_name(v->schedule.policy));
	fprintf(f,
		", \"lookahead\": %u, \"mark_ends\": %s, \"one_iteration\": %s, \"plan_order\": "
		"\"%s\", \"plan_eager\": %s, \"h2d_bytes\": %llu, \"d2h_bytes\": %llu}",
		v->schedule.lookahead, v->schedule.marks != REPLAY_MARKS_TRACE ? "true" : "false",
		v->schedule.marks == REPLAY_MARKS_ONE_ITERATION ? "true" : "false",
		replay_plan_order_name(v->schedule.plan_order),
		v->schedule.plan_eager ? "true" : "false", U(v->schedule.h2d_bytes),
		U(v->schedule.d2h_bytes));
}

static void json_run(FILE *f, const struct trace_report *tr, const struct policy_run *pr)
{
	const dao_stats *s = &pr->r.stats;

	fprintf(f, "{\"policy\": ");
	json_string(f, dao_policy_name(pr->policy));
	if (pr->status != DAO_OK) {
		fprintf(f, ", \"error\": ");
		json_string(f, pr->r.err);
		fputc('}', f);
		return;
	}
	fprintf(f, ", \"h2d_bytes\": %llu, \"d2h_bytes\": %llu, \"fetches\": %llu, "
		   "\"prefetches\": %llu, \"writebacks\": %llu, \"evictions\": %llu, "
		   "\"drops\": %llu, \"stalls\": %llu, \"kernels\": %llu, "
		   "\"peak_device_bytes\": %llu, \"compute_ns\": %llu, \"modeled_ns\": %llu, "
		   "\"stall_ns\": %llu, \"h2d_busy_ns\": %llu, \"d2h_busy_ns\": %llu",
		U(s->h2d_bytes), U(s->d2h_bytes), U(s->fetches), U(s->prefetches),
		U(s->writebacks), U(s->evictions), U(s->drops), U(s->stalls), U(s->kernels),
		U(s->peak_device_bytes), U(pr->r.sim.compute_ns), U(pr->r.sim.end_ns),
		U(pr->r.sim.stall_ns), U(pr->r.sim.h2d_busy_ns), U(pr->r.sim.d2h_busy_ns));
	for (size_t i = 0; i < bound_count; i++) {
		if (bound_table[i]->json_ratio) {
			fputs(", ", f);
			json_ratio(f, bound_table[i]->json_ratio, bound_ratio(tr, i, pr));
		}
		if (bound_table[i]->json_bytes_ratio) {
			fputs(", ", f);
			json_ratio(f, bound_table[i]->json_bytes_ratio,
				   schedule_bytes_ratio(tr, i, pr));
		}
	}
	fputc('}', f);
}

void report_json(FILE *f, const struct dao_sim_model *m, const struct trace_report *trs,
		 size_t n)
{
	fprintf(f, "{\"format\": \"daosim\", \"version\": 1, \"device\": {\"name\": ");
	json_string(f, m->name);
	fprintf(f, ", \"h2d_bytes_per_s\": %.0f, \"d2h_bytes_per_s\": %.0f, "
		   "\"flops_per_s\": %.0f, \"mem_bytes_per_s\": %.0f, \"launch_ns\": %llu, "
		   "\"memory_bytes\": %llu},\n \"traces\": [",
		m->h2d_bytes_per_s, m->d2h_bytes_per_s, m->flops_per_s, m->mem_bytes_per_s,
		U(m->launch_ns), U(m->memory_bytes));
	for (size_t i = 0; i < n; i++) {
		const struct trace_report *tr = &trs[i];

		fprintf(f, "%s\n  {\"trace\": ", i ? "," : "");
		json_string(f, tr->path);
		fprintf(f, ", \"kernels\": %zu, \"buffers\": %zu, \"flops_scale\": %u, "
			   "\"peak_live_bytes\": %llu, \"budget_bytes\": %llu, ",
			tr->nkernels, tr->nbufs, tr->flops_scale, U(tr->peak_live_bytes),
			U(tr->budget_bytes));
		if (tr->budget_percent >= 0)
			fprintf(f, "\"budget_percent\": %g, ", tr->budget_percent);
		else
			fprintf(f, "\"budget_percent\": null, ");
		fprintf(f, "\"max_kernel_bytes\": %llu", U(tr->max_kernel_bytes));
		for (size_t j = 0; j < bound_count; j++) {
			fprintf(f, ", \"%s\": ", bound_table[j]->json);
			if (tr->bounds[j].known)
				fprintf(f, "%llu", U(tr->bounds[j].value));
			else
				fputs("null", f);
			if (bound_table[j]->json_schedule)
				json_schedule(f, bound_table[j]->json_schedule, &tr->bounds[j]);
		}
		fputs(",\n   \"policies\": [", f);
		for (int j = 0; j < tr->nruns; j++) {
			fputs(j ? ",\n    " : "\n    ", f);
			json_run(f, tr, &tr->runs[j]);
		}
		fputc(']', f);
		if (tr->segments)
			segments_json(f, tr);
		fputc('}', f);
	}
	fputs("]}\n", f);
}
