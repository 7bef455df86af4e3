/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinds/kinds.h"
#include "options.h"

/* Beyond this the reference copies alone need terabytes. */
#define CHOL_MAX_N (1u << 20)
#define CHOL_MAX_THREADS 1024
/* libdao's own ceiling for the lookahead window (dao_open refuses more). */
#define CHOL_MAX_LOOKAHEAD 65536

static void usage(FILE *f)
{
	char backends[256], policies[256];

	kinds_list(backends, sizeof(backends), KINDS_BACKEND, KINDS_FIRST_NAMED_BACKEND, " | ",
		   " | ");
	kinds_list(policies, sizeof(policies), KINDS_POLICY, KINDS_FIRST_POLICY, " | ", " | ");
	fprintf(f,
		"usage: dao-cholesky --n N --tile T [--budget B] [options]\n"
		"\n"
		"Factor a random symmetric positive definite N x N matrix (A = L L^T) as\n"
		"T x T tiles, one libdao buffer per tile of the lower triangle, with the\n"
		"device limited to budget B; then check the residual ||A - L L^T||_F / ||A||_F.\n"
		"\n"
		"  --n N          matrix order (N not a multiple of T is padded with identity)\n"
		"  --tile T       tile order, 1 <= T <= N\n"
		"  --budget B     device budget: bytes with a K/M/G/T suffix (\"48M\"), or a\n"
		"                 percentage of the matrix bytes libdao holds (\"25%%\");\n"
		"                 without it, DAO_DEVICE_BUDGET (a percentage there is of\n"
		"                 device memory)\n"
		"  --compare      run again with an unlimited budget, print both, check that\n"
		"                 the two factors are bit-identical\n"
		"  --warm-up      first factor at most 3 x 3 tiles of order T, untimed, so\n"
		"                 that what a process pays once (CUDA module loading,\n"
		"                 library handles, thread start) falls on no timed run\n"
		"  --json         print one JSON object instead of text\n"
		"  --backend B    %s (default DAO_BACKEND,\n"
		"                 else host); on CUDA\n"
		"                 the tile kernels are cuSOLVER's and cuBLAS's;\n"
		"                 or uvm: no libdao, the tiles in cudaMallocManaged memory\n"
		"                 with no hints, on the whole card: the budget must hold\n"
		"                 the matrix and the matrix fit 15/16 of the free device\n"
		"                 memory, no oversubscription (needs a size or percentage\n"
		"                 --budget; no --policy, --lookahead; bytes moved are not\n"
		"                 known)\n"
		"  --policy P     %s (default: libdao's, DAO_POLICY)\n"
		"  --lookahead W  kernels libdao may see ahead (default: libdao's)\n"
		"  --seed S       seed of the random matrix (default 1)\n"
		"  --threads K    OpenBLAS threads inside one tile kernel (default 1)\n"
		"  --check C      full: ||A - L L^T||_F / ||A||_F, O(N^3) (default);\n"
		"                 sample: ||(A - L L^T) x||_2 / ||A||_F for a random sign\n"
		"                 vector x, O(N^2), the same bound (its square is the full\n"
		"                 residual's square in expectation)\n"
		"\n"
		"Exit status: 0 correct; 1 libdao or the system failed; 2 bad option, bad\n"
		"DAO_* variable, or a budget too small for the tiles of one kernel; 3 residual\n"
		"check failed or the budgeted and unlimited factors differ; 77 --backend uvm\n"
		"without a usable CUDA device (or built without CUDA).\n",
		backends, policies);
}

/* Strict unsigned decimal: digits only, no sign, no overflow, within [lo, hi]. */
static int parse_uint(const char *opt, const char *text, uint64_t lo, uint64_t hi,
		      uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (text[0] < '0' || text[0] > '9')
		goto bad;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || *end != '\0' || v < lo || v > hi)
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, "dao-cholesky: %s: '%s' is not an integer in [%llu, %llu]\n", opt, text,
		(unsigned long long)lo, (unsigned long long)hi);
	return -1;
}

static int parse_budget(const char *text, struct chol_options *o)
{
	size_t len = strlen(text);
	dao_status st;

	if (len > 1 && text[len - 1] == '%') {
		char *end;
		double p;

		errno = 0;
		p = strtod(text, &end);
		/* Only plain decimals: strtod would also take "inf", "0x1p3", " 5". */
		if (errno || end != text + len - 1 || strspn(text, "0123456789.") != len - 1 ||
		    !(p > 0.0) || p > 1000.0) {
			fprintf(stderr,
				"dao-cholesky: --budget: '%s' is not a percentage in (0, 1000]\n",
				text);
			return -1;
		}
		o->budget_is_percent = true;
		o->budget_percent = p;
		return 0;
	}
	st = dao_parse_size(text, &o->budget_bytes);
	if (st != DAO_OK || o->budget_bytes == 0) {
		fprintf(stderr,
			"dao-cholesky: --budget: '%s' is neither a size (\"48M\", \"1G\", bytes) "
			"nor a percentage (\"25%%\")%s%s\n",
			text, st != DAO_OK ? ": " : "", st != DAO_OK ? dao_strerror(st) : "");
		return -1;
	}
	o->budget_is_percent = false;
	return 0;
}

static int parse_backend(const char *text, struct chol_options *o)
{
	dao_backend_kind *out = &o->backend;
	int kind;

	o->uvm = strcmp(text, "uvm") == 0;
	if (o->uvm) {
		/* Tiles in managed memory: its 64 KiB pages round the budget
		 * a kernel needs, as on cuda-managed. */
		*out = DAO_BACKEND_CUDA_MANAGED;
		return 0;
	}
	kind = kinds_parse(KINDS_BACKEND, KINDS_FIRST_NAMED_BACKEND, text,
			   "dao-cholesky: --backend", "uvm");
	if (!kind)
		return -1;
	*out = (dao_backend_kind)kind;
	return 0;
}

static int parse_policy(const char *text, dao_policy *out)
{
	int policy = kinds_parse(KINDS_POLICY, KINDS_FIRST_POLICY, text, "dao-cholesky: --policy",
				 NULL);

	if (!policy)
		return -1;
	*out = (dao_policy)policy;
	return 0;
}

static int parse_check(const char *text, enum chol_check *out)
{
	if (strcmp(text, "full") == 0)
		*out = CHOL_CHECK_FULL;
	else if (strcmp(text, "sample") == 0)
		*out = CHOL_CHECK_SAMPLE;
	else {
		fprintf(stderr, "dao-cholesky: --check: unknown check '%s' (full, sample)\n", text);
		return -1;
	}
	return 0;
}

int chol_parse_options(int argc, char **argv, struct chol_options *o, bool *help)
{
	enum { O_N = 1, O_TILE, O_BUDGET, O_COMPARE, O_JSON, O_POLICY, O_LOOKAHEAD, O_SEED,
	       O_THREADS, O_HELP, O_BACKEND, O_WARM_UP, O_CHECK };
	static const struct option longopts[] = {
		{ "n", required_argument, NULL, O_N },
		{ "tile", required_argument, NULL, O_TILE },
		{ "budget", required_argument, NULL, O_BUDGET },
		{ "compare", no_argument, NULL, O_COMPARE },
		{ "warm-up", no_argument, NULL, O_WARM_UP },
		{ "json", no_argument, NULL, O_JSON },
		{ "policy", required_argument, NULL, O_POLICY },
		{ "lookahead", required_argument, NULL, O_LOOKAHEAD },
		{ "seed", required_argument, NULL, O_SEED },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "help", no_argument, NULL, O_HELP },
		{ "backend", required_argument, NULL, O_BACKEND },
		{ "check", required_argument, NULL, O_CHECK },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->threads = 1;
	/* Without --backend: DAO_BACKEND when set (libdao reads it and
	 * refuses a bad one), else host, the backend the tile kernels need
	 * no GPU for. */
	o->backend = getenv("DAO_BACKEND") && *getenv("DAO_BACKEND") ? DAO_BACKEND_DEFAULT
								      : DAO_BACKEND_HOST;
	*help = false;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case O_N:
			if (parse_uint("--n", optarg, 1, CHOL_MAX_N, &o->n))
				return CHOL_EXIT_USAGE;
			break;
		case O_TILE:
			if (parse_uint("--tile", optarg, 1, CHOL_MAX_N, &o->tile))
				return CHOL_EXIT_USAGE;
			break;
		case O_BUDGET:
			if (parse_budget(optarg, o))
				return CHOL_EXIT_USAGE;
			o->budget_given = true;
			break;
		case O_COMPARE:
			o->compare = true;
			break;
		case O_WARM_UP:
			o->warm_up = true;
			break;
		case O_JSON:
			o->json = true;
			break;
		case O_BACKEND:
			if (parse_backend(optarg, o))
				return CHOL_EXIT_USAGE;
			break;
		case O_POLICY:
			if (parse_policy(optarg, &o->policy))
				return CHOL_EXIT_USAGE;
			break;
		case O_LOOKAHEAD:
			if (parse_uint("--lookahead", optarg, 1, CHOL_MAX_LOOKAHEAD, &v))
				return CHOL_EXIT_USAGE;
			o->lookahead = (uint32_t)v;
			break;
		case O_SEED:
			if (parse_uint("--seed", optarg, 0, UINT64_MAX, &o->seed))
				return CHOL_EXIT_USAGE;
			break;
		case O_THREADS:
			if (parse_uint("--threads", optarg, 1, CHOL_MAX_THREADS, &v))
				return CHOL_EXIT_USAGE;
			o->threads = (int)v;
			break;
		case O_CHECK:
			if (parse_check(optarg, &o->check))
				return CHOL_EXIT_USAGE;
			break;
		case O_HELP:
			usage(stdout);
			*help = true;
			return CHOL_EXIT_OK;
		default:
			/* getopt_long sets optopt to the option's value when
			 * its argument is missing, to 0 when it is unknown. */
			if (optopt)
				fprintf(stderr, "dao-cholesky: option %s needs a value\n",
					argv[optind - 1]);
			else
				fprintf(stderr, "dao-cholesky: unknown option '%s'\n",
					argv[optind - 1]);
			usage(stderr);
			return CHOL_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dao-cholesky: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return CHOL_EXIT_USAGE;
	}
	if (o->uvm && (!o->budget_given || o->policy != DAO_POLICY_DEFAULT || o->lookahead)) {
		fprintf(stderr, "dao-cholesky: --backend uvm runs without libdao: it needs --budget "
				"and takes no --policy or --lookahead\n");
		return CHOL_EXIT_USAGE;
	}
	if (!o->n || !o->tile || (!o->budget_given && !(getenv("DAO_DEVICE_BUDGET") &&
							    *getenv("DAO_DEVICE_BUDGET")))) {
		fprintf(stderr, "dao-cholesky: --n, --tile and --budget (or DAO_DEVICE_BUDGET) "
				"are required\n");
		usage(stderr);
		return CHOL_EXIT_USAGE;
	}
	if (o->tile > o->n) {
		fprintf(stderr, "dao-cholesky: --tile %llu is larger than --n %llu\n",
			(unsigned long long)o->tile, (unsigned long long)o->n);
		return CHOL_EXIT_USAGE;
	}
	return CHOL_EXIT_OK;
}
