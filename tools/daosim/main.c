/* SPDX-License-Identifier: MIT */
/*
 * daosim - replay dao-traces through libdao's executor and policy on a
 * modeled device, and compare what they move and how long they take with
 * lower bounds (Documentation/daosim.md).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds/lp_bound.h"
#include "profile.h"
#include "replay.h"
#include "bounds/segment_cut.h"
#include "bounds/time_bound.h"
#include "report.h"

struct options {
	uint64_t budget_bytes; /* 0 when given as a percentage */
	double budget_percent; /* of peak live bytes; < 0 when given in bytes */
	dao_policy policies[DAOSIM_POLICIES];
	int npolicies;
	uint32_t lookahead;
	struct dao_sim_model model;
	int json;
	const char *plot;
	double ti_seconds; /* limit on the time-indexed LP; 0: not computed */
};

static void usage(FILE *f)
{
	fputs("usage: daosim [--budget BYTES|PCT%] [--policy dao|belady|lru|fifo|all]\n"
	      "              [--lookahead N] [--device NAME|FILE] [--json] [--plot FILE.svg]\n"
	      "              [--time-bound-limit SECONDS] TRACE...\n"
	      "  --budget     device budget: bytes (K/M/G/T suffixes) or a percentage of\n"
	      "               the trace's peak live bytes (default 50%)\n"
	      "  --policy     eviction policy to replay, or all four (default DAO_POLICY,\n"
	      "               else dao)\n"
	      "  --lookahead  kernels the job runs ahead of the device (default\n"
	      "               DAO_LOOKAHEAD, else 65536: the whole trace is known, as by an\n"
	      "               offline planner)\n"
	      "  --device     preset h100 or a100, or a device file (default h100)\n"
	      "  --json       one JSON document instead of the table\n"
	      "  --plot       write occupancy and copy activity over time as SVG\n"
	      "  --time-bound-limit  CPU seconds the time-indexed LP may take (default 10;\n"
	      "               0 skips it)\n",
	      f);
}

static int parse_budget(const char *s, struct options *o)
{
	size_t n = strlen(s);

	if (n > 1 && s[n - 1] == '%') {
		char *end;
		double v;

		errno = 0;
		v = strtod(s, &end);
		if (end != s + n - 1 || errno || !isfinite(v) || v <= 0 || v > 100) {
			fprintf(stderr, "daosim: --budget %s: a percentage must be in (0, 100]\n", s);
			return -1;
		}
		o->budget_percent = v;
		o->budget_bytes = 0;
		return 0;
	}
	if (dao_parse_size(s, &o->budget_bytes) != DAO_OK || o->budget_bytes == 0) {
		fprintf(stderr, "daosim: --budget %s: expected bytes (e.g. 2G) or a percentage (e.g. 25%%)\n",
			s);
		return -1;
	}
	o->budget_percent = -1;
	return 0;
}

static int parse_policy(const char *s, struct options *o)
{
	static const struct {
		const char *name;
		dao_policy p;
	} names[] = { { "dao", DAO_POLICY_DAO },
		      { "belady", DAO_POLICY_BELADY },
		      { "lru", DAO_POLICY_LRU },
		      { "fifo", DAO_POLICY_FIFO } };

	o->npolicies = 0;
	for (size_t i = 0; i < 4; i++) {
		if (strcmp(s, "all") == 0 || strcmp(s, names[i].name) == 0)
			o->policies[o->npolicies++] = names[i].p;
	}
	if (o->npolicies == 0) {
		fprintf(stderr, "daosim: --policy %s: expected dao, belady, lru, fifo or all\n", s);
		return -1;
	}
	return 0;
}

static int parse_device(const char *s, struct options *o)
{
	char err[256];
	dao_status st;

	if (dao_sim_model_preset(s, &o->model) == DAO_OK)
		return 0;
	st = dao_sim_model_load(s, &o->model, err, sizeof(err));
	if (st == DAO_OK)
		return 0;
	if (st == DAO_ERR_IO && !strchr(s, '/'))
		fprintf(stderr, "daosim: --device %s: not a preset (h100, a100) nor a readable file\n",
			s);
	else
		fprintf(stderr, "daosim: --device: %s\n", err);
	return -1;
}

/* what: "--lookahead " or "DAO_LOOKAHEAD=", for the message. */
static int parse_lookahead(const char *what, const char *s, struct options *o)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v == 0 || v > 65536 || s[0] == '-') {
		fprintf(stderr, "daosim: %s%s: expected 1..65536\n", what, s);
		return -1;
	}
	o->lookahead = (uint32_t)v;
	return 0;
}

/* DAO_POLICY and DAO_LOOKAHEAD are the defaults the flags override, as for
 * every dao tool. DAO_DEVICE_BUDGET is not: a percentage there is of device
 * memory, daosim's is of the trace's peak, so its budget is --budget only. */
static int env_defaults(struct options *o)
{
	const char *v = getenv("DAO_POLICY");

	if (v && *v) {
		if (!strcmp(v, "all") || parse_policy(v, o)) {
			fprintf(stderr, "daosim: DAO_POLICY=%s: expected dao, belady, lru or fifo\n",
				v);
			return -1;
		}
	}
	v = getenv("DAO_LOOKAHEAD");
	if (v && *v && parse_lookahead("DAO_LOOKAHEAD=", v, o))
		return -1;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "budget", required_argument, NULL, 'b' },
		{ "policy", required_argument, NULL, 'p' },
		{ "lookahead", required_argument, NULL, 'l' },
		{ "device", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, 'o' },
		{ "time-bound-limit", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->budget_percent = 50;
	o->policies[0] = DAO_POLICY_DAO;
	o->npolicies = 1;
	dao_sim_model_preset("h100", &o->model);
	o->lookahead = 65536; /* DAO_MAX_LOOKAHEAD: the whole trace */
	if (env_defaults(o))
		return -1;
	o->ti_seconds = 10;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (parse_budget(optarg, o))
				return -1;
			break;
		case 'p':
			if (parse_policy(optarg, o))
				return -1;
			break;
		case 'l':
			if (parse_lookahead("--lookahead ", optarg, o))
				return -1;
			break;
		case 'd':
			if (parse_device(optarg, o))
				return -1;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'o':
			o->plot = optarg;
			break;
		case 't': {
			char *end;
			double v;

			errno = 0;
			v = strtod(optarg, &end);
			if (!*optarg || *end || errno || !isfinite(v) || v < 0 || v > 86400) {
				fprintf(stderr,
					"daosim: --time-bound-limit %s: expected seconds in 0..86400\n",
					optarg);
				return -1;
			}
			o->ti_seconds = v;
			break;
		}
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "daosim: unknown or incomplete option '%s'\n",
				argv[optind - 1]);
			usage(stderr);
			return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "daosim: no trace given\n");
		usage(stderr);
		return -1;
	}
	return 0;
}

/* Bounds and replays for one trace; -1 after printing why it cannot run. */
static int simulate(const char *path, const struct options *o, struct trace_report *tr)
{
	struct dao_trace *t;
	struct trace_profile p;
	char err[512];
	dao_status st;

	memset(tr, 0, sizeof(*tr));
	tr->path = path;
	st = dao_trace_read_file(path, &t, err, sizeof(err));
	if (st) {
		if (st == DAO_ERR_FORMAT)
			fprintf(stderr, "daosim: %s: %s\n", path, err);
		else
			fprintf(stderr, "daosim: %s\n", err);
		return -1;
	}
	if (trace_profile_build(t, trace_flops_scale(t), &p)) {
		fprintf(stderr, "daosim: %s: out of memory\n", path);
		dao_trace_free(t);
		return -1;
	}
	tr->nkernels = t->nkernels;
	tr->nbufs = t->nbufs;
	tr->flops_scale = p.flops_scale;
	tr->peak_live_bytes = p.peak_live_bytes;
	tr->budget_percent = o->budget_percent;
	tr->budget_bytes = o->budget_bytes;
	if (o->budget_percent >= 0)
		tr->budget_bytes = (uint64_t)floor((double)p.peak_live_bytes * o->budget_percent / 100);
	tr->max_kernel_bytes = p.max_kernel_bytes;
	tr->compulsory_bytes = p.compulsory_bytes;
	if (tr->budget_bytes < p.max_kernel_bytes || tr->budget_bytes == 0) {
		fprintf(stderr,
			"daosim: %s: a budget of %llu bytes is smaller than the largest kernel's operands (%llu bytes)\n",
			path, (unsigned long long)tr->budget_bytes,
			(unsigned long long)p.max_kernel_bytes);
		goto fail;
	}
	if (lp_bound_bytes(&p, tr->budget_bytes, LP_H2D, &tr->lp_h2d_bytes, err, sizeof(err)) ||
	    lp_bound_bytes(&p, tr->budget_bytes, LP_D2H, &tr->lp_d2h_bytes, err, sizeof(err))) {
		fprintf(stderr, "daosim: %s: LP bound: %s\n", path, err);
		goto fail;
	}
	tr->compute_ns = profile_compute_ns(&p, &o->model);
	tr->time_bound_ns =
		report_time_bound_ns(&o->model, tr->compute_ns, tr->lp_h2d_bytes, tr->lp_d2h_bytes);
	{
		struct segment_cut sc;

		st = segment_cut_bound(t, &p, &o->model, tr->budget_bytes, &sc, err, sizeof(err));
		if (st) {
			fprintf(stderr, "daosim: %s: segment-cut bound: %s\n", path, err);
			goto fail;
		}
		tr->cut_bound_ns = sc.ns;
	}
	if (o->ti_seconds > 0) {
		struct time_bound tb;

		st = time_bound_solve(&p, &o->model, tr->budget_bytes, o->ti_seconds, &tb, err,
				      sizeof(err));
		if (st == DAO_ERR_RANGE) {
			/* a missing bound is no failed run: the rest stands */
			fprintf(stderr, "daosim: %s: time-indexed bound left out: %s\n", path, err);
		} else if (st) {
			fprintf(stderr, "daosim: %s: time-indexed bound: %s\n", path, err);
			goto fail;
		} else {
			tr->ti_solved = 1;
			tr->ti_bound_ns = tb.ns;
		}
	}
	for (int i = 0; i < o->npolicies; i++) {
		struct policy_run *pr = &tr->runs[tr->nruns++];
		struct replay_opts ro = {
			.policy = o->policies[i],
			.lookahead = o->lookahead,
			.budget = tr->budget_bytes,
		};

		pr->policy = o->policies[i];
		pr->status = replay_sim(t, &p, &ro, &o->model, o->plot != NULL, &pr->r);
		if (pr->status)
			fprintf(stderr, "daosim: %s: policy %s: %s\n", path,
				dao_policy_name(pr->policy), pr->r.err);
	}
	trace_profile_free(&p);
	dao_trace_free(t);
	return 0;
fail:
	trace_profile_free(&p);
	dao_trace_free(t);
	return -1;
}

int main(int argc, char **argv)
{
	struct options o;
	struct trace_report *trs;
	int ntr = 0, failed = 0;

	if (parse_args(argc, argv, &o))
		return 2;
	time_bound_keep_heap(); /* faster LP solves; refused, glibc's defaults stay */
	trs = calloc((size_t)(argc - optind), sizeof(*trs));
	if (!trs) {
		fprintf(stderr, "daosim: out of memory\n");
		return 1;
	}
	for (int i = optind; i < argc; i++) {
		if (simulate(argv[i], &o, &trs[ntr])) {
			failed = 1;
			continue;
		}
		for (int j = 0; j < trs[ntr].nruns; j++)
			failed |= trs[ntr].runs[j].status != DAO_OK;
		if (!o.json)
			report_text(stdout, &o.model, &trs[ntr]);
		ntr++;
	}
	if (o.json)
		report_json(stdout, &o.model, trs, (size_t)ntr);
	if (o.plot && report_svg(o.plot, &o.model, trs, (size_t)ntr)) {
		fprintf(stderr, "daosim: %s: %s\n", o.plot, strerror(errno));
		failed = 1;
	}
	for (int i = 0; i < ntr; i++)
		for (int j = 0; j < trs[i].nruns; j++)
			replay_result_free(&trs[i].runs[j].r);
	free(trs);
	return failed ? 1 : 0;
}
