/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "json_string.h"
#include "profile.h"
#include "report.h"

#define GIB 1073741824.0

uint64_t report_time_bound_ns(const struct dao_sim_model *m, uint64_t compute_ns,
			      uint64_t lp_h2d, uint64_t lp_d2h)
{
	uint64_t t = compute_ns;
	uint64_t h = model_copy_ns(m->h2d_bytes_per_s, lp_h2d);
	uint64_t d = model_copy_ns(m->d2h_bytes_per_s, lp_d2h);

	if (h > t)
		t = h;
	if (d > t)
		t = d;
	return t;
}

/* got / bound, or NAN when the bound is 0 and got is not (no finite ratio). */
static double ratio(uint64_t got, uint64_t bound)
{
	if (bound == 0)
		return got == 0 ? 1.0 : NAN;
	return (double)got / (double)bound;
}

/* The larger of the two time bounds: both are lower bounds. */
static uint64_t max_bound_ns(const struct trace_report *tr)
{
	return tr->ti_solved && tr->ti_bound_ns > tr->time_bound_ns ? tr->ti_bound_ns :
								      tr->time_bound_ns;
}

/* The largest of all three time bounds (each a lower bound). */
static uint64_t largest_bound_ns(const struct trace_report *tr)
{
	uint64_t b = max_bound_ns(tr);

	return tr->cut_bound_ns > b ? tr->cut_bound_ns : b;
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
	fprintf(f, "  bounds: compulsory %.3f %s, LP h2d %.3f %s, LP d2h %.3f %s, compute %.2f ms, time bound %.2f ms\n",
		tr->compulsory_bytes / u, un, tr->lp_h2d_bytes / u, un, tr->lp_d2h_bytes / u, un,
		tr->compute_ns / 1e6, tr->time_bound_ns / 1e6);
	if (tr->ti_solved)
		fprintf(f, "  time-indexed bound %.2f ms, larger bound %.2f ms\n",
			tr->ti_bound_ns / 1e6, max_bound_ns(tr) / 1e6);
	else
		fprintf(f, "  time-indexed bound not computed\n");
	fprintf(f, "  segment-cut bound %.2f ms, largest of all bounds %.2f ms\n",
		tr->cut_bound_ns / 1e6, largest_bound_ns(tr) / 1e6);
	fprintf(f, "  %-7s %9s %9s %8s %9s %10s %10s %10s %9s %9s %9s %9s %9s %9s\n", "policy", h2d,
		d2h, "fetches", "evictions", "compute ms", "modeled ms", "stall ms", "h2d/LP",
		"d2h/LP", "time/bnd", "time/max", "time/cut", "time/all");
	for (int i = 0; i < tr->nruns; i++) {
		const struct policy_run *pr = &tr->runs[i];
		const dao_stats *s = &pr->r.stats;

		if (pr->status != DAO_OK) {
			fprintf(f, "  %-7s failed: %s\n", dao_policy_name(pr->policy), pr->r.err);
			continue;
		}
		fprintf(f, "  %-7s %9.3f %9.3f %8llu %9llu %10.2f %10.2f %10.2f",
			dao_policy_name(pr->policy), s->h2d_bytes / u, s->d2h_bytes / u,
			(unsigned long long)s->fetches, (unsigned long long)s->evictions,
			pr->r.sim.compute_ns / 1e6, pr->r.sim.end_ns / 1e6, pr->r.sim.stall_ns / 1e6);
		print_ratio(f, ratio(s->h2d_bytes, tr->lp_h2d_bytes));
		print_ratio(f, ratio(s->d2h_bytes, tr->lp_d2h_bytes));
		print_ratio(f, ratio(pr->r.sim.end_ns, tr->time_bound_ns));
		print_ratio(f, ratio(pr->r.sim.end_ns, max_bound_ns(tr)));
		print_ratio(f, ratio(pr->r.sim.end_ns, tr->cut_bound_ns));
		print_ratio(f, ratio(pr->r.sim.end_ns, largest_bound_ns(tr)));
		fputc('\n', f);
	}
}

static void json_ratio(FILE *f, const char *key, double r)
{
	if (isnan(r))
		fprintf(f, "\"%s\": null", key);
	else
		fprintf(f, "\"%s\": %.6f", key, r);
}

#define U(x) ((unsigned long long)(x))

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
		   "\"stall_ns\": %llu, \"h2d_busy_ns\": %llu, \"d2h_busy_ns\": %llu, ",
		U(s->h2d_bytes), U(s->d2h_bytes), U(s->fetches), U(s->prefetches),
		U(s->writebacks), U(s->evictions), U(s->drops), U(s->stalls), U(s->kernels),
		U(s->peak_device_bytes), U(pr->r.sim.compute_ns), U(pr->r.sim.end_ns),
		U(pr->r.sim.stall_ns), U(pr->r.sim.h2d_busy_ns), U(pr->r.sim.d2h_busy_ns));
	json_ratio(f, "h2d_ratio_to_lp", ratio(s->h2d_bytes, tr->lp_h2d_bytes));
	fputs(", ", f);
	json_ratio(f, "d2h_ratio_to_lp", ratio(s->d2h_bytes, tr->lp_d2h_bytes));
	fputs(", ", f);
	json_ratio(f, "time_ratio_to_bound", ratio(pr->r.sim.end_ns, tr->time_bound_ns));
	fputs(", ", f);
	json_ratio(f, "time_ratio_to_time_indexed_bound",
		   tr->ti_solved ? ratio(pr->r.sim.end_ns, tr->ti_bound_ns) : NAN);
	fputs(", ", f);
	json_ratio(f, "time_ratio_to_max_bound", ratio(pr->r.sim.end_ns, max_bound_ns(tr)));
	fputs(", ", f);
	json_ratio(f, "time_ratio_to_segment_cut", ratio(pr->r.sim.end_ns, tr->cut_bound_ns));
	fputs(", ", f);
	json_ratio(f, "time_ratio_to_largest_bound",
		   ratio(pr->r.sim.end_ns, largest_bound_ns(tr)));
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
		fprintf(f, "\"max_kernel_bytes\": %llu, \"compulsory_bytes\": %llu, "
			   "\"lp_bound_h2d_bytes\": %llu, \"lp_bound_d2h_bytes\": %llu, "
			   "\"compute_ns\": %llu, \"time_bound_ns\": %llu, "
			   "\"time_indexed_bound_ns\": ",
			U(tr->max_kernel_bytes), U(tr->compulsory_bytes), U(tr->lp_h2d_bytes),
			U(tr->lp_d2h_bytes), U(tr->compute_ns), U(tr->time_bound_ns));
		if (tr->ti_solved)
			fprintf(f, "%llu", U(tr->ti_bound_ns));
		else
			fputs("null", f);
		fprintf(f, ", \"max_time_bound_ns\": %llu, \"segment_cut_bound_ns\": %llu, "
			   "\"largest_time_bound_ns\": %llu,\n   \"policies\": [",
			U(max_bound_ns(tr)), U(tr->cut_bound_ns), U(largest_bound_ns(tr)));
		for (int j = 0; j < tr->nruns; j++) {
			fputs(j ? ",\n    " : "\n    ", f);
			json_run(f, tr, &tr->runs[j]);
		}
		fputs("]}", f);
	}
	fputs("]}\n", f);
}
