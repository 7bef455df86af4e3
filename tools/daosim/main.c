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

#include "../kinds/kinds.h"
#include "bounds/bound.h"
#include "profile.h"
#include "replay.h"
#include "report.h"

/* More than libdao's table of policies holds (a list names each once). */
#define MAX_POLICIES 16

struct options {
	uint64_t budget_bytes; /* 0 when given as a percentage */
	double budget_percent; /* of peak live bytes; < 0 when given in bytes */
	/* the policies replayed, in the order given (--policy all: every
	 * policy libdao has, in its table's order) */
	dao_policy policies[MAX_POLICIES];
	int npolicies;
	uint32_t lookahead;
	struct dao_sim_model model;
	int json;
	const char *plot;
	int segments; /* --segments */
	enum replay_marks marks; /* --mark-ends, --one-iteration */
	uint32_t plan_order;     /* --plan-order: 0 or a DAO_CONFIG_PLAN_* flag */
	bool plan_eager;         /* --plan-eager */
	/* per row of bound_table with a limit_option: its CPU-time limit; 0:
	 * not computed */
	double limit_s[BOUND_TABLE_MAX];
};

static void usage(FILE *f)
{
	char policies[256];

	kinds_list(policies, sizeof(policies), KINDS_POLICY, KINDS_FIRST_POLICY, "|", "|");
	fprintf(f, "usage: daosim [--budget BYTES|PCT%%] [--policy %s[,...]|all]\n", policies);
	fputs("              [--lookahead N] [--device NAME|FILE] [--json] [--plot FILE.svg]\n"
	      "              [--segments] [--mark-ends|--one-iteration]\n"
	      "              [--plan-order chosen|dao|clean-first] [--plan-eager]\n              ",
	      f);
	for (size_t i = 0; i < bound_count; i++)
		if (bound_table[i]->limit_option)
			fprintf(f, "[--%s SECONDS] ", bound_table[i]->limit_option);
	fputs("TRACE...\n"
	      "  --budget     device budget: bytes (K/M/G/T suffixes) or a percentage of\n"
	      "               the trace's peak live bytes (default 50%)\n"
	      "  --policy     eviction policy to replay, several separated by commas, or\n"
	      "               all of them (default DAO_POLICY, else dao)\n"
	      "  --lookahead  kernels the job runs ahead of the device (default\n"
	      "               DAO_LOOKAHEAD, else 65536: the whole trace is known, as by an\n"
	      "               offline planner)\n"
	      "  --device     preset h100 or a100, or a device file (default h100)\n"
	      "  --json       one JSON document instead of the table\n"
	      "  --plot       write occupancy and copy activity over time as SVG\n"
	      "  --segments   the segment-cut bound's segments, and each policy's time\n"
	      "               (and copy engines' busy time) over each of them\n"
	      "  --mark-ends  replay as a job that marks an iteration at the trace's\n"
	      "               start and end too (a candidate of the planner's)\n"
	      "  --one-iteration  the same, the trace's own marks dropped: the whole\n"
	      "               trace is one iteration (a candidate of the planner's)\n"
	      "  --plan-order the plan policy's order of eviction: each plan's replay\n"
	      "               chooses, or dao's, or clean first (default chosen)\n"
	      "  --plan-eager the plan policy's prefetches take their room at once: the\n"
	      "               best victim now, not one still in use that will be better\n"
	      "               (a candidate of the planner's)\n",
	      f);
	for (size_t i = 0; i < bound_count; i++) {
		const struct bound *b = bound_table[i];

		if (b->limit_option)
			fprintf(f, "  --%s  %s (default %g;\n               0 skips it)\n",
				b->limit_option, b->limit_help, b->limit_default_s);
	}
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

/* --policy: one name, names separated by commas (each at most once), or
 * all. */
static int parse_policy(const char *s, struct options *o)
{
	char names[256];
	const char *p = s;
	int n = 0;

	if (strcmp(s, "all") == 0) {
		n = kinds_count(KINDS_POLICY, KINDS_FIRST_POLICY);
		if (n > MAX_POLICIES) { /* a table grown past MAX_POLICIES */
			fprintf(stderr,
				"daosim: --policy all: libdao has %d policies, daosim replays %d at most\n",
				n, MAX_POLICIES);
			return -1;
		}
		for (int i = 0; i < n; i++)
			o->policies[i] = (dao_policy)(KINDS_FIRST_POLICY + i);
		o->npolicies = n;
		return 0;
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		char name[64];
		int policy = 0;

		if (len < sizeof(name)) {
			memcpy(name, p, len);
			name[len] = '\0';
			policy = kinds_find(KINDS_POLICY, KINDS_FIRST_POLICY, name);
		}
		if (!policy) {
			fprintf(stderr,
				"daosim: --policy %s: '%.*s': expected %s, several separated by "
				"commas, or all alone\n",
				s, (int)(len < sizeof(name) ? len : sizeof(name)), p,
				kinds_list(names, sizeof(names), KINDS_POLICY, KINDS_FIRST_POLICY,
					   ", ", ", "));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (o->policies[i] == (dao_policy)policy) {
				fprintf(stderr, "daosim: --policy %s: %s named twice\n", s, name);
				return -1;
			}
		}
		if (n == MAX_POLICIES) {
			fprintf(stderr, "daosim: --policy %s: more than %d policies\n", s,
				MAX_POLICIES);
			return -1;
		}
		o->policies[n++] = (dao_policy)policy;
		if (!p[len])
			break;
		p += len + 1;
	}
	o->npolicies = n;
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

static int parse_plan_order(const char *s, struct options *o)
{
	if (replay_plan_order_named(s, &o->plan_order)) {
		fprintf(stderr, "daosim: --plan-order %s: expected chosen, dao or clean-first\n", s);
		return -1;
	}
	return 0;
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

/* --OPTION SECONDS of bound row i. */
static int parse_limit(size_t i, const char *s, struct options *o)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < 0 || v > 86400) {
		fprintf(stderr, "daosim: --%s %s: expected seconds in 0..86400\n",
			bound_table[i]->limit_option, s);
		return -1;
	}
	o->limit_s[i] = v;
	return 0;
}

/* DAO_POLICY and DAO_LOOKAHEAD are the defaults the flags override, as for
 * every dao tool. DAO_DEVICE_BUDGET is not: a percentage there is of device
 * memory, daosim's is of the trace's peak, so its budget is --budget only. */
static int env_defaults(struct options *o)
{
	const char *v = getenv("DAO_POLICY");
	char names[256];

	if (v && *v) {
		o->policies[0] = (dao_policy)kinds_find(KINDS_POLICY, KINDS_FIRST_POLICY, v);
		o->npolicies = 1;
		if (!o->policies[0]) {
			fprintf(stderr, "daosim: DAO_POLICY=%s: expected %s\n", v,
				kinds_list(names, sizeof(names), KINDS_POLICY, KINDS_FIRST_POLICY,
					   ", ", " or "));
			return -1;
		}
	}
	v = getenv("DAO_LOOKAHEAD");
	if (v && *v && parse_lookahead("DAO_LOOKAHEAD=", v, o))
		return -1;
	return 0;
}

/* The long options: daosim's own, then one per bound row with a limit
 * (val OPT_LIMIT + its index), then --help. */
enum { OPT_LIMIT = 256 };
static const struct option own_options[] = {
	{ "budget", required_argument, NULL, 'b' },
	{ "policy", required_argument, NULL, 'p' },
	{ "lookahead", required_argument, NULL, 'l' },
	{ "device", required_argument, NULL, 'd' },
	{ "json", no_argument, NULL, 'j' },
	{ "plot", required_argument, NULL, 'o' },
	{ "segments", no_argument, NULL, 's' },
	{ "mark-ends", no_argument, NULL, 'm' },
	{ "one-iteration", no_argument, NULL, 'i' },
	{ "plan-order", required_argument, NULL, 'r' },
	{ "plan-eager", no_argument, NULL, 'e' },
};
#define NOWN (sizeof(own_options) / sizeof(own_options[0]))

static void long_options(struct option *opts)
{
	size_t n = 0;

	for (size_t i = 0; i < NOWN; i++)
		opts[n++] = own_options[i];
	for (size_t i = 0; i < bound_count; i++)
		if (bound_table[i]->limit_option)
			opts[n++] = (struct option){ bound_table[i]->limit_option,
						     required_argument, NULL, OPT_LIMIT + (int)i };
	opts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	opts[n] = (struct option){ NULL, 0, NULL, 0 };
}

static int parse_args(int argc, char **argv, struct options *o)
{
	struct option longopts[NOWN + BOUND_TABLE_MAX + 2];
	int c;

	long_options(longopts);
	memset(o, 0, sizeof(*o));
	o->budget_percent = 50;
	o->policies[0] = DAO_POLICY_DAO;
	o->npolicies = 1;
	dao_sim_model_preset("h100", &o->model);
	o->lookahead = 65536; /* DAO_MAX_LOOKAHEAD: the whole trace */
	if (env_defaults(o))
		return -1;
	for (size_t i = 0; i < bound_count; i++)
		o->limit_s[i] = bound_table[i]->limit_default_s;
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
		case 's':
			o->segments = 1;
			break;
		case 'm':
			if (o->marks == REPLAY_MARKS_TRACE)
				o->marks = REPLAY_MARKS_ENDS;
			break;
		case 'i':
			o->marks = REPLAY_MARKS_ONE_ITERATION;
			break;
		case 'r':
			if (parse_plan_order(optarg, o))
				return -1;
			break;
		case 'e':
			o->plan_eager = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			if (c >= OPT_LIMIT && (size_t)(c - OPT_LIMIT) < bound_count) {
				if (parse_limit((size_t)(c - OPT_LIMIT), optarg, o))
					return -1;
				break;
			}
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

/* The settings every run of a trace replays with, but its policy and
 * budget: the planner counts them too (bound_input.runs). */
static struct replay_opts run_settings(const struct options *o)
{
	return (struct replay_opts){
		.lookahead = o->lookahead,
		.marks = o->marks,
		.plan_order = o->plan_order,
		.plan_eager = o->plan_eager,
	};
}

/* Row i of bound_table for one trace, into tr->bounds[i]; -1 after
 * printing why the trace cannot go on. */
static int solve_bound(const char *path, const struct dao_trace *t,
		       const struct trace_profile *p, const struct options *o,
		       struct trace_report *tr, size_t i)
{
	const struct bound *b = bound_table[i];
	struct replay_opts runs = run_settings(o);
	struct bound_input in = {
		.trace = t,
		.profile = p,
		.model = &o->model,
		.budget = tr->budget_bytes,
		.cpu_limit_s = b->limit_option ? o->limit_s[i] : 0,
		.before = tr->bounds,
		.nbefore = i,
		.runs = &runs,
	};
	struct bound_schedule sched = { 0 };
	char err[512];
	uint64_t v = 0;
	dao_status st;

	if (b->json_schedule)
		in.schedule = &sched;
	if (b->limit_option && o->limit_s[i] == 0)
		return 0; /* skipped: not known */
	st = b->solve(&in, &v, err, sizeof(err));
	if (st == DAO_ERR_RANGE) {
		/* a missing bound is no failed run: the rest stands */
		fprintf(stderr, "daosim: %s: %s left out: %s\n", path, b->name, err);
	} else if (st) {
		fprintf(stderr, "daosim: %s: %s: %s\n", path, b->name, err);
		return -1;
	}
	tr->bounds[i] = (struct bound_value){ .known = st == DAO_OK, .value = st ? 0 : v,
					      .schedule = sched };
	return 0;
}

/* Bounds and replays for one trace; -1 after printing why it cannot run. */
static int simulate(const char *path, const struct options *o, struct trace_report *tr)
{
	struct dao_trace *t;
	struct trace_profile p;
	char err[512];
	dao_status st;
	int n;

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
	if (tr->budget_bytes == 0) {
		/* Only a percentage can come to 0 (parse_budget refuses 0 bytes):
		 * of a trace that holds no data, or too little to take a share of. */
		fprintf(stderr,
			"daosim: %s: %g%% of the trace's peak live bytes (%llu bytes) is no budget: give --budget in bytes\n",
			path, o->budget_percent, (unsigned long long)p.peak_live_bytes);
		goto fail;
	}
	if (tr->budget_bytes < p.max_kernel_bytes) {
		fprintf(stderr,
			"daosim: %s: a budget of %llu bytes is smaller than the largest kernel's operands (%llu bytes)\n",
			path, (unsigned long long)tr->budget_bytes,
			(unsigned long long)p.max_kernel_bytes);
		goto fail;
	}
	for (size_t i = 0; i < bound_count; i++)
		if (solve_bound(path, t, &p, o, tr, i))
			goto fail;
	if (o->segments) {
		struct segment_cut sc;

		st = segment_cut_segments(t, &p, &o->model, tr->budget_bytes, &sc, &tr->segs,
					  &tr->nsegs, err, sizeof(err));
		if (st) {
			fprintf(stderr, "daosim: %s: segments: %s\n", path,
				st == DAO_ERR_NOMEM ? "out of memory" : err);
			goto fail;
		}
		tr->segments = true;
	}
	n = o->npolicies;
	tr->runs = calloc((size_t)n, sizeof(*tr->runs));
	if (!tr->runs) {
		fprintf(stderr, "daosim: %s: out of memory\n", path);
		goto fail;
	}
	for (int i = 0; i < n; i++) {
		struct policy_run *pr = &tr->runs[tr->nruns++];
		dao_policy policy = o->policies[i];
		struct replay_opts ro = run_settings(o);

		ro.policy = policy;
		ro.budget = tr->budget_bytes;
		pr->policy = policy;
		pr->status = replay_sim(t, &p, &ro, &o->model, o->plot || o->segments, &pr->r);
		if (pr->status)
			fprintf(stderr, "daosim: %s: policy %s: %s\n", path,
				dao_policy_name(pr->policy), pr->r.err);
	}
	trace_profile_free(&p);
	dao_trace_free(t);
	return 0;
fail:
	free(tr->segs);
	tr->segs = NULL;
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
	for (size_t i = 0; i < bound_count; i++)
		if (bound_table[i]->prepare)
			bound_table[i]->prepare(); /* refused: slower, the same figures */
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
	for (int i = 0; i < ntr; i++) {
		for (int j = 0; j < trs[i].nruns; j++)
			replay_result_free(&trs[i].runs[j].r);
		free(trs[i].runs);
		free(trs[i].segs);
	}
	free(trs);
	return failed ? 1 : 0;
}
