/* SPDX-License-Identifier: MIT */
/*
 * dao-bench - figures about libdao itself (not a test: it asserts nothing
 * about speed). Subcommands: overhead, copy, iterations.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinds/kinds.h"
#include "bench.h"

static void usage(FILE *f)
{
	char backends[256];

	kinds_list(backends, sizeof(backends), KINDS_BACKEND, KINDS_FIRST_NAMED_BACKEND, ", ",
		   " or ");
	fprintf(f,
		"usage: dao-bench overhead [--json] [--kernels N] [--live N,N,...]\n"
		"                          [--placement split|shared|both]\n"
		"       dao-bench copy [--json] [--backend B] [--buffer-bytes B] [--buffers N]\n"
		"                      [--rounds R]\n"
		"       dao-bench iterations [--json] [--kernels N]\n"
		"\n"
		"overhead  ns per empty kernel with 4 resident operands and ns per buffer\n"
		"          create, with each count of live buffers (default\n"
		"          1000,10000,100000,1000000), beside a plain function call (N kernels\n"
		"          per row, default 1000000); with the job thread and libdao's threads\n"
		"          on two CPUs (split) and on one (shared), default both\n"
		"copy      write-back and fetch throughput through libdao against memcpy:\n"
		"          N buffers of B bytes (default 8 of 64M) cycled R times (default 4)\n"
		"          through a budget that holds half of them, on backend B:\n"
		"          %s (default DAO_BACKEND\n"
		"          when set, else host)\n"
		"iterations  ns per empty kernel of a job that marks an iteration every\n"
		"          1000 kernels (4 of 1000 buffers of 4 KiB named in turn), with no\n"
		"          policy chosen, with dao and with plan, in a budget that holds every\n"
		"          buffer and in one that holds half; and the policy in force at the\n"
		"          end (N kernels per run, default 300000)\n",
		backends);
}

static int parse_count(const char *opt, const char *text, uint64_t lo, uint64_t hi,
		       uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || errno || *end || v < lo || v > hi) {
		fprintf(stderr, "dao-bench: %s: '%s' is not an integer in [%llu, %llu]\n", opt,
			text, (unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	*out = v;
	return 0;
}

static int only_for(const char *opt, const char *sub, bool applies)
{
	if (!applies)
		fprintf(stderr, "dao-bench: %s applies to '%s' only\n", opt, sub);
	return !applies;
}

static int parse_bytes(const char *opt, const char *text, uint64_t lo, uint64_t hi,
		       uint64_t *out)
{
	if (dao_parse_size(text, out) != DAO_OK || *out < lo || *out > hi) {
		fprintf(stderr, "dao-bench: %s: '%s' is not a size in [%llu, %llu] bytes\n", opt,
			text, (unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	return 0;
}

/* A comma-separated list of live-buffer counts; an empty item is an error. */
static int parse_live(const char *text, struct bench_options *o)
{
	char buf[256], *item = buf, *comma;

	if (strlen(text) >= sizeof(buf)) {
		fprintf(stderr, "dao-bench: --live: list too long\n");
		return -1;
	}
	strcpy(buf, text);
	for (o->nlive = 0;; item = comma + 1) {
		comma = strchr(item, ',');
		if (comma)
			*comma = 0;
		if (o->nlive == BENCH_MAX_LIVE) {
			fprintf(stderr, "dao-bench: --live: at most %d counts\n", BENCH_MAX_LIVE);
			return -1;
		}
		/* At least 4: the operands are distinct buffers. */
		if (parse_count("--live", item, 4, UINT64_C(1) << 24, &o->live[o->nlive]))
			return -1;
		o->nlive++;
		if (!comma)
			return 0;
	}
}

static int parse_backend(const char *text, dao_backend_kind *out)
{
	int kind = kinds_parse(KINDS_BACKEND, KINDS_FIRST_NAMED_BACKEND, text,
			       "dao-bench: --backend", NULL);

	if (!kind)
		return -1;
	*out = (dao_backend_kind)kind;
	return 0;
}

static int parse_placement(const char *text, unsigned *out)
{
	if (strcmp(text, "split") == 0)
		*out = 1u << BENCH_SPLIT;
	else if (strcmp(text, "shared") == 0)
		*out = 1u << BENCH_SHARED;
	else if (strcmp(text, "both") == 0)
		*out = (1u << BENCH_SPLIT) | (1u << BENCH_SHARED);
	else {
		fprintf(stderr, "dao-bench: --placement: '%s' is not split, shared or both\n",
			text);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum { O_JSON = 1, O_KERNELS, O_LIVE, O_PLACEMENT, O_BUFFER_BYTES, O_BUFFERS, O_ROUNDS,
	       O_BACKEND, O_HELP };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "kernels", required_argument, NULL, O_KERNELS },
		{ "live", required_argument, NULL, O_LIVE },
		{ "placement", required_argument, NULL, O_PLACEMENT },
		{ "buffer-bytes", required_argument, NULL, O_BUFFER_BYTES },
		{ "buffers", required_argument, NULL, O_BUFFERS },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "backend", required_argument, NULL, O_BACKEND },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_options o = {
		.kernels = 1000000, .buffer_bytes = 64u << 20, .buffers = 8, .rounds = 4,
		.live = { 1000, 10000, 100000, 1000000 }, .nlive = 4,
		.placements = (1u << BENCH_SPLIT) | (1u << BENCH_SHARED),
		.backend = bench_env_backend(),
	};
	bool is_overhead, is_copy, is_iterations;
	int c, err = 0;

	if (argc < 2 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	is_overhead = strcmp(argv[1], "overhead") == 0;
	is_copy = strcmp(argv[1], "copy") == 0;
	is_iterations = strcmp(argv[1], "iterations") == 0;
	if (is_iterations)
		o.kernels = 300000;
	if (!is_overhead && !is_copy && !is_iterations) {
		fprintf(stderr, "dao-bench: unknown subcommand '%s'\n", argv[1]);
		usage(stderr);
		return 2;
	}
	opterr = 0;
	optind = 2;
	while (!err && (c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case O_JSON:
			o.json = true;
			break;
		case O_KERNELS:
			err = only_for("--kernels", "overhead' and 'iterations",
				       is_overhead || is_iterations) ||
			      parse_count("--kernels", optarg, 1, UINT64_C(1) << 32, &o.kernels);
			break;
		case O_LIVE:
			err = only_for("--live", "overhead", is_overhead) || parse_live(optarg, &o);
			break;
		case O_PLACEMENT:
			err = only_for("--placement", "overhead", is_overhead) ||
			      parse_placement(optarg, &o.placements);
			break;
		case O_BUFFER_BYTES:
			/* At most 1 TiB: buffers x bytes must not overflow. */
			err = only_for("--buffer-bytes", "copy", is_copy) ||
			      parse_bytes("--buffer-bytes", optarg, 1, UINT64_C(1) << 40,
					  &o.buffer_bytes);
			break;
		case O_BUFFERS:
			err = only_for("--buffers", "copy", is_copy) ||
			      parse_count("--buffers", optarg, 2, 4096, &o.buffers);
			break;
		case O_ROUNDS:
			err = only_for("--rounds", "copy", is_copy) ||
			      parse_count("--rounds", optarg, 1, 1u << 20, &o.rounds);
			break;
		case O_BACKEND:
			err = only_for("--backend", "copy", is_copy) ||
			      parse_backend(optarg, &o.backend);
			break;
		case O_HELP:
			usage(stdout);
			return 0;
		default:
			/* getopt_long sets optopt to the option's value when its
			 * argument is missing, to 0 when it is unknown. */
			fprintf(stderr, "dao-bench: %s '%s'\n",
				optopt ? "missing value for" : "unknown option", argv[optind - 1]);
			err = 1;
		}
	}
	if (!err && optind < argc) {
		fprintf(stderr, "dao-bench: unexpected argument '%s'\n", argv[optind]);
		err = 1;
	}
	if (err) {
		usage(stderr);
		return 2;
	}
	return is_overhead ? bench_overhead(&o) : is_copy ? bench_copy(&o) : bench_iterations(&o);
}
