/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "report.h"

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

static double gflops(const struct chol_problem *p, double seconds)
{
	/* n^3 / 3 for the padded order: what the kernels actually compute. */
	double n = (double)p->npad;

	return seconds > 0.0 ? n * n * n / 3.0 / seconds * 1e-9 : 0.0;
}

struct hex {
	char s[17];
};

static struct hex hash_hex(uint64_t h)
{
	struct hex x;

	snprintf(x.s, sizeof(x.s), "%016" PRIx64, h);
	return x;
}

/* One row of the table: a label, then one column per run. */
#define ROW(f, r, label, fmt, expr)                                              \
	do {                                                                     \
		const struct chol_outcome *o_ = &(r)->budgeted;                  \
		fprintf(f, "  %-22s" fmt, label, expr);                          \
		if ((r)->unlimited.run) {                                        \
			o_ = &(r)->unlimited;                                    \
			fprintf(f, "   " fmt, expr);                             \
		}                                                                \
		fputc('\n', f);                                                  \
	} while (0)

void chol_report_text(FILE *f, const struct chol_report *r)
{
	const struct chol_problem *p = r->p;
	const dao_info *info = &r->budgeted.run->info;

	fprintf(f, "dao-cholesky: n %" PRIu64 ", tile %" PRIu64, p->n, p->tile);
	if (p->npad != p->n)
		fprintf(f, " (padded to %" PRIu64 ")", p->npad);
	fprintf(f, ": %" PRIu64 " x %" PRIu64 " tiles, %" PRIu64 " held, %.1f MiB\n", p->nt,
		p->nt, chol_tile_count(p), mib(r->matrix_bytes));
	if (r->budgeted.run->transfers_unknown)
		fprintf(f, "backend %s: no libdao, the driver pages managed memory\n\n",
			info->backend_name);
	else
		fprintf(f, "backend %s, policy %s, lookahead %u\n\n", info->backend_name,
			info->policy_name, info->lookahead);
	fprintf(f, "  %-22s%14s", "", "budgeted");
	if (r->unlimited.run)
		fprintf(f, "   %14s", "unlimited");
	fputc('\n', f);
	ROW(f, r, "budget (MiB)", "%14.3f", mib(o_->run->info.device_budget));
	ROW(f, r, "budget (% of matrix)", "%14.1f",
	    100.0 * (double)o_->run->info.device_budget / (double)r->matrix_bytes);
	ROW(f, r, "residual", "%14.3e", o_->residual);
	ROW(f, r, "factor hash", "%16s", hash_hex(o_->hash).s);
	ROW(f, r, "seconds", "%14.3f", o_->run->seconds);
	ROW(f, r, "Gflop/s", "%14.2f", gflops(p, o_->run->seconds));
	ROW(f, r, "kernels", "%14" PRIu64, o_->run->kernels);
	if (r->budgeted.run->transfers_unknown) {
		/* Plain UVM: what the driver moved is not reported to us. */
		fprintf(f, "  %-22s%14s\n", "bytes moved", "unknown");
	} else {
		ROW(f, r, "host-to-device (MiB)", "%14.3f", mib(o_->run->stats.h2d_bytes));
		ROW(f, r, "device-to-host (MiB)", "%14.3f", mib(o_->run->stats.d2h_bytes));
		ROW(f, r, "evictions", "%14" PRIu64, o_->run->stats.evictions);
		ROW(f, r, "prefetches", "%14" PRIu64, o_->run->stats.prefetches);
		ROW(f, r, "stalls", "%14" PRIu64, o_->run->stats.stalls);
		ROW(f, r, "peak device (MiB)", "%14.3f", mib(o_->run->stats.peak_device_bytes));
	}
	fputc('\n', f);
	if (strcmp(r->check, "full") == 0)
		fprintf(f, "residual = ||A - L L^T||_F / ||A||_F, must be below 30 n eps = %.3e\n",
			r->threshold);
	else
		fprintf(f, "residual = ||(A - L L^T) x||_2 / ||A||_F for random signs x (sampled), "
			   "must be below 30 n eps = %.3e\n",
			r->threshold);
	if (r->unlimited.run)
		fprintf(f, "factors of the two runs: %s\n",
			r->identical ? "bit-identical" : "DIFFERENT");
	fprintf(f, "check: %s\n", r->passed ? "passed" : "FAILED");
}

static void json_run(FILE *f, const struct chol_problem *p, const struct chol_outcome *o)
{
	const struct chol_run_result *run = o->run;

	/* JSON has no NaN: a residual that is not a number is null. */
	if (isfinite(o->residual))
		fprintf(f, "\"residual\":%.17g,", o->residual);
	else
		fprintf(f, "\"residual\":null,");
	fprintf(f, "\"factor_hash\":\"%s\",", hash_hex(o->hash).s);
	fprintf(f, "\"seconds\":%.9g,\"gflops\":%.6g,\"kernels\":%" PRIu64, run->seconds,
		gflops(p, run->seconds), run->kernels);
	if (run->transfers_unknown) {
		/* Plain UVM: the driver does not report what it moved. */
		fprintf(f, ",\"h2d_bytes\":null,\"d2h_bytes\":null,\"evictions\":null,"
			   "\"prefetches\":null,\"stalls\":null,\"stall_ns\":null,"
			   "\"peak_device_bytes\":null,\"budget_bytes\":%" PRIu64
			   ",\"policy\":\"%s\",\"lookahead\":null",
			run->info.device_budget, run->info.policy_name);
		return;
	}
	fprintf(f,
		",\"h2d_bytes\":%" PRIu64 ",\"d2h_bytes\":%" PRIu64 ",\"evictions\":%" PRIu64
		",\"prefetches\":%" PRIu64 ",\"stalls\":%" PRIu64 ",\"stall_ns\":%" PRIu64
		",\"peak_device_bytes\":%" PRIu64 ",\"budget_bytes\":%" PRIu64
		",\"policy\":\"%s\",\"lookahead\":%u",
		run->stats.h2d_bytes, run->stats.d2h_bytes, run->stats.evictions,
		run->stats.prefetches, run->stats.stalls, run->stats.stall_ns,
		run->stats.peak_device_bytes, run->info.device_budget, run->info.policy_name,
		run->info.lookahead);
}

void chol_report_json(FILE *f, const struct chol_report *r)
{
	const struct chol_problem *p = r->p;

	fprintf(f,
		"{\"n\":%" PRIu64 ",\"tile\":%" PRIu64 ",\"padded_n\":%" PRIu64
		",\"tiles\":%" PRIu64 ",\"matrix_bytes\":%" PRIu64 ",\"backend\":\"%s\",",
		p->n, p->tile, p->npad, chol_tile_count(p), r->matrix_bytes,
		r->budgeted.run->info.backend_name);
	json_run(f, p, &r->budgeted);
	fprintf(f, ",\"check\":\"%s\",\"threshold\":%.17g,\"compare\":", r->check,
		r->threshold);
	if (r->unlimited.run) {
		fputc('{', f);
		json_run(f, p, &r->unlimited);
		fprintf(f, "},\"identical\":%s", r->identical ? "true" : "false");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\"passed\":%s}\n", r->passed ? "true" : "false");
}
