/* SPDX-License-Identifier: MIT */
/*
 * main.c - daoctl's command line: which dao jobs run on this node, where
 * their data is, who pins how much (Documentation/daoctl.md, daoctl(1)).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dao.h"
#include "daoctl.h"

static void usage(FILE *f)
{
	fputs("usage: daoctl COMMAND [OPTIONS]\n"
	      "\n"
	      "Show the residency of every dao job on this node, live.\n"
	      "\n"
	      "Commands:\n"
	      "  status [--json|--prometheus]   node view: the module, its version, the node\n"
	      "                                 limit, pinned bytes and peak, refused pins,\n"
	      "                                 number of dao processes\n"
	      "  ps [--json|--prometheus]       one line per dao process, largest device\n"
	      "                                 footprint first\n"
	      "  show PID [--sort size|next|last] [--json]\n"
	      "                                 one process: its summary and its buffers,\n"
	      "                                 largest first (size), soonest needed first\n"
	      "                                 (next) or most recently used first (last)\n"
	      "  top                            ps refreshed every second with rates;\n"
	      "                                 q or Ctrl-C quits\n"
	      "  limit [BYTES]                  show the module's node limit on pinned memory,\n"
	      "                                 or set it (a whole number of MiB: 4096M, 8G;\n"
	      "                                 needs CAP_SYS_ADMIN or CAP_SYS_RESOURCE in\n"
	      "                                 the initial user namespace)\n"
	      "\n"
	      "Options:\n"
	      "  --json         one JSON object (schema \"daoctl/1\", see daoctl(1))\n"
	      "  --prometheus   node_exporter textfile-collector format\n"
	      "  -h, --help     this text\n"
	      "  --version      daoctl's version\n"
	      "\n"
	      "Without the dao module every read command works from what libdao publishes\n"
	      "in /dev/shm and says the module is not loaded. A user sees only their own\n"
	      "processes; root sees all. Segments of processes that died are removed.\n"
	      "\n"
	      "Exit status: 0 success, 1 failure (no such process, module absent for\n"
	      "limit, permission denied), 2 usage error.\n",
	      f);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("daoctl: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'daoctl --help'.\n", stderr);
	return EXIT_USAGE;
}

/* Strict decimal pid in [1, INT32_MAX]. */
static bool parse_pid(const char *text, uint32_t *out)
{
	uint64_t v = 0;

	if (!*text || *text == '0')
		return false;
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > INT32_MAX)
			return false;
	}
	*out = (uint32_t)v;
	return true;
}

static int cmd_limit(int argc, char **argv)
{
	char err[160], a[32];
	struct node n;
	uint64_t bytes;

	if (argc == 0) {
		node_query(&n);
		node_free(&n);
		if (!n.loaded) {
			fprintf(stderr, "daoctl: the dao module is %s\n",
				n.error[0] ? n.error : "not loaded");
			return EXIT_FAIL;
		}
		printf("%" PRIu64 " (%s)\n", n.limit, fmt_bytes(a, sizeof(a), n.limit));
		return EXIT_OK;
	}
	if (argc > 1)
		return usage_error("limit takes at most one argument, got '%s' too", argv[1]);
	if (dao_parse_size(argv[0], &bytes) != DAO_OK)
		return usage_error("limit: '%s' is not a size (bytes, or with a K/M/G/T suffix)",
				   argv[0]);
	if (bytes % (1u << 20))
		return usage_error("limit: '%s' is not a whole number of MiB", argv[0]);
	if (node_set_limit(bytes, err, sizeof(err))) {
		fprintf(stderr, "daoctl: %s\n", err);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'p' },
		{ "sort", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd;
	int format = FMT_TEXT, sort = SORT_SIZE, c, rc;
	bool sort_given = false;
	struct node n;
	struct scan s;
	uint32_t pid = 0;

	if (argc < 2)
		return usage_error("%s", "a command is required");
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "--version")) {
		printf("daoctl %d.%d.%d (segment layout %u)\n", DAO_VERSION_MAJOR,
		       DAO_VERSION_MINOR, DAO_VERSION_PATCH, DAO_PUB_VERSION);
		return EXIT_OK;
	}
	if (strcmp(cmd, "status") && strcmp(cmd, "ps") && strcmp(cmd, "show") &&
	    strcmp(cmd, "top") && strcmp(cmd, "limit"))
		return usage_error("unknown command '%s'", cmd);

	/* Options anywhere after the command; "--" ends them. */
	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
		case 'p':
			if (format != FMT_TEXT)
				return usage_error("%s", "--json and --prometheus exclude each other");
			format = c == 'j' ? FMT_JSON : FMT_PROM;
			break;
		case 's':
			if (!strcmp(optarg, "size"))
				sort = SORT_SIZE;
			else if (!strcmp(optarg, "next"))
				sort = SORT_NEXT;
			else if (!strcmp(optarg, "last"))
				sort = SORT_LAST;
			else
				return usage_error("--sort: '%s' is not size, next or last", optarg);
			sort_given = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			return usage_error("%s", "--version goes before the command");
		default:
			return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	argc -= optind;
	argv += optind;

	if (!strcmp(cmd, "limit")) {
		if (format != FMT_TEXT || sort_given)
			return usage_error("%s", "limit takes no --json, --prometheus or --sort");
		return cmd_limit(argc, argv);
	}
	if (sort_given && strcmp(cmd, "show"))
		return usage_error("--sort applies to show, not to %s", cmd);
	if (!strcmp(cmd, "top") && format != FMT_TEXT)
		return usage_error("%s", "top is interactive: use ps --json or ps --prometheus");
	if (!strcmp(cmd, "show")) {
		if (format == FMT_PROM)
			return usage_error("%s", "--prometheus applies to status and ps");
		if (argc != 1)
			return usage_error("%s", "show needs exactly one PID");
		if (!parse_pid(argv[0], &pid))
			return usage_error("show: '%s' is not a process id", argv[0]);
	} else if (argc) {
		return usage_error("unexpected argument '%s'", argv[0]);
	}
	if (!strcmp(cmd, "top"))
		return cmd_top();

	node_query(&n);
	rc = scan_segments(&s);
	if (rc) {
		fprintf(stderr, "daoctl: reading " DAO_PUB_DIR ": %s\n", strerror(-rc));
		node_free(&n);
		return EXIT_FAIL;
	}
	for (uint32_t i = 0; i < s.n; i++)
		s.procs[i].k = node_find(&n, s.procs[i].pid);
	sort_procs(&s);
	if (!strcmp(cmd, "status"))
		rc = cmd_status(&n, &s, format);
	else if (!strcmp(cmd, "ps"))
		rc = cmd_ps(&n, &s, format);
	else
		rc = cmd_show(&n, &s, pid, sort, format);
	scan_free(&s);
	node_free(&n);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "daoctl: writing the output failed: %s\n", strerror(errno));
		return EXIT_FAIL;
	}
	return rc;
}
