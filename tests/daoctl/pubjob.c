/* SPDX-License-Identifier: MIT */
/*
 * pubjob.c - a small libdao job for daoctl's end-to-end tests.
 *
 *   dao-pubjob [--buffers N] [--size BYTES] [--budget BYTES] [--kernels K]
 *              [--iterate I] [--hold] [--forever]
 *
 * Buffer i (label "buf<i>") holds (i + 1) * BYTES; kernel k updates buffer
 * k mod N and reads the next one, so a budget below the total forces
 * evictions; --iterate marks an iteration (dao_iteration) after every I
 * kernels. After the kernels the job syncs and prints, on one line, its own
 * view as JSON: {"pid":..,"stats":{dao_stats},"buffers":[{"label","size"}]}.
 * --hold then waits for a line (or EOF) on stdin before closing, so a test
 * can compare daoctl's view with the job's while nothing moves; --forever
 * keeps launching kernels until SIGTERM or SIGINT.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dao.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int touch(const dao_kernel_args *a)
{
	unsigned char *p = a->ptrs[0];

	if (a->sizes[0])
		p[0]++;
	return 0;
}

static void die(const char *what, dao_status st)
{
	fprintf(stderr, "dao-pubjob: %s: %s\n", what, dao_strerror(st));
	exit(1);
}

static uint64_t size_arg(const char *opt, const char *text)
{
	uint64_t v;

	if (dao_parse_size(text, &v) != DAO_OK) {
		fprintf(stderr, "dao-pubjob: %s: '%s' is not a size\n", opt, text);
		exit(2);
	}
	return v;
}

static void print_stats(dao_ctx ctx, const uint64_t *sizes, uint32_t n)
{
	dao_stats s;
	dao_status st = dao_stats_get(ctx, &s);

	if (st != DAO_OK)
		die("dao_stats_get", st);
	printf("{\"pid\":%d,\"stats\":{\"h2d_bytes\":%" PRIu64 ",\"d2h_bytes\":%" PRIu64
	       ",\"fetches\":%" PRIu64 ",\"prefetches\":%" PRIu64 ",\"writebacks\":%" PRIu64
	       ",\"evictions\":%" PRIu64 ",\"drops\":%" PRIu64 ",\"stalls\":%" PRIu64
	       ",\"stall_ns\":%" PRIu64 ",\"kernels\":%" PRIu64 ",\"device_bytes\":%" PRIu64
	       ",\"peak_device_bytes\":%" PRIu64 ",\"host_bytes\":%" PRIu64
	       ",\"live_buffers\":%" PRIu64 ",\"budget_bytes\":%" PRIu64
	       ",\"host_budget_bytes\":%" PRIu64 "},\"buffers\":[",
	       (int)getpid(), s.h2d_bytes, s.d2h_bytes, s.fetches, s.prefetches, s.writebacks,
	       s.evictions, s.drops, s.stalls, s.stall_ns, s.kernels, s.device_bytes,
	       s.peak_device_bytes, s.host_bytes, s.live_buffers, s.budget_bytes,
	       s.host_budget_bytes);
	for (uint32_t i = 0; i < n; i++)
		printf("%s{\"label\":\"buf%u\",\"size\":%" PRIu64 "}", i ? "," : "", i, sizes[i]);
	printf("]}\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "buffers", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "budget", required_argument, NULL, 'b' },
		{ "kernels", required_argument, NULL, 'k' },
		{ "iterate", required_argument, NULL, 'i' },
		{ "hold", no_argument, NULL, 'H' },
		{ "forever", no_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t size = 64 << 10, budget = 0, kernels = 100, n = 8, every = 0;
	bool hold = false, forever = false;
	dao_config cfg;
	dao_ctx ctx;
	dao_buf *bufs;
	uint64_t *sizes;
	dao_status st;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': n = size_arg("--buffers", optarg); break;
		case 's': size = size_arg("--size", optarg); break;
		case 'b': budget = size_arg("--budget", optarg); break;
		case 'k': kernels = size_arg("--kernels", optarg); break;
		case 'i': every = size_arg("--iterate", optarg); break;
		case 'H': hold = true; break;
		case 'F': forever = true; break;
		default: return 2;
		}
	}
	if (n < 2 || n > 4096 || optind != argc) {
		fprintf(stderr, "dao-pubjob: --buffers is 2..4096 and nothing else follows\n");
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	dao_config_init(&cfg);
	cfg.backend = DAO_BACKEND_HOST;
	cfg.device_budget = budget;
	st = dao_open(&cfg, &ctx);
	if (st != DAO_OK)
		die("dao_open", st);
	bufs = calloc(n, sizeof(*bufs));
	sizes = calloc(n, sizeof(*sizes));
	if (!bufs || !sizes)
		die("calloc", DAO_ERR_NOMEM);
	for (uint32_t i = 0; i < n; i++) {
		char label[16];

		sizes[i] = size * (i + 1);
		st = dao_buffer_create(ctx, sizes[i], &bufs[i]);
		if (st != DAO_OK)
			die("dao_buffer_create", st);
		snprintf(label, sizeof(label), "buf%u", i);
		st = dao_set_label(ctx, bufs[i], label);
		if (st != DAO_OK)
			die("dao_set_label", st);
	}
	for (uint64_t k = 0; forever ? !stop : k < kernels; k++) {
		dao_operand ops[2] = {
			{ bufs[k % n], k < n ? DAO_W : DAO_RW },
			{ bufs[(k + 1) % n], DAO_R },
		};

		/* The first pass writes every buffer before anything reads it. */
		if (k < n)
			ops[1] = ops[0];
		st = dao_launch_named(ctx, "touch", size, touch, NULL, ops, k < n ? 1 : 2);
		if (st != DAO_OK)
			die("dao_launch", st);
		if (every && (k + 1) % every == 0 && (st = dao_iteration(ctx)) != DAO_OK)
			die("dao_iteration", st);
	}
	st = dao_sync(ctx);
	if (st != DAO_OK)
		die("dao_sync", st);
	print_stats(ctx, sizes, (uint32_t)n);
	if (hold) {
		char line[64];

		if (!fgets(line, sizeof(line), stdin) && ferror(stdin))
			perror("dao-pubjob: stdin");
	}
	for (uint32_t i = 0; i < n; i++)
		(void)dao_release(ctx, bufs[i]);
	st = dao_close(ctx, NULL);
	free(bufs);
	free(sizes);
	return st == DAO_OK ? 0 : 1;
}
