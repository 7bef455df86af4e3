/* SPDX-License-Identifier: MIT */
/*
 * dao-bench overhead: what libdao adds to each kernel when nothing has to
 * move. Empty kernels with four resident operands, with few and with many
 * live buffers (the table must not slow down as it grows), beside a plain
 * indirect call of the same function. Pipelined: launches back to back and
 * one dao_sync; synchronous: every launch waits for its kernel, the full
 * path from submission to completion (1/100 as many kernels).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define OPERANDS 4
/* Timed runs of each measurement; the fastest is kept (the machine may be
 * shared, and interference only ever adds time). */
#define REPEATS 3
/* A timed run stops after this long, with the kernels done so far. */
#define TIME_LIMIT_NS 5000000000ull
/* Small, but a whole allocation granule of the host arena. */
#define LIVE_BUFFER_BYTES 256

struct overhead_row {
	uint64_t live_buffers;
	uint64_t kernels;
	double ns_per_kernel;      /* queued back to back, one dao_sync at the end */
	double ns_per_kernel_sync; /* each launch followed by dao_sync */
	double ns_per_call;        /* the kernel function called directly */
	uint64_t moved;            /* fetches + evictions while measuring: should be 0 */
};

static int empty_kernel(const dao_kernel_args *args)
{
	(void)args;
	return 0;
}

/* Through a volatile pointer the compiler cannot inline or drop the call. */
static int (*volatile call_target)(const dao_kernel_args *) = empty_kernel;

static double call_loop(uint64_t calls)
{
	static char bytes[OPERANDS][LIVE_BUFFER_BYTES];
	void *ptrs[OPERANDS] = { bytes[0], bytes[1], bytes[2], bytes[3] };
	uint64_t sizes[OPERANDS] = { LIVE_BUFFER_BYTES, LIVE_BUFFER_BYTES, LIVE_BUFFER_BYTES,
				     LIVE_BUFFER_BYTES };
	dao_kernel_args args = { .ptrs = ptrs, .sizes = sizes, .count = OPERANDS };
	uint64_t t0 = bench_now_ns();

	for (uint64_t i = 0; i < calls; i++)
		call_target(&args);
	return (double)(bench_now_ns() - t0) / (double)calls;
}

/*
 * Launch up to n kernels, each followed by dao_sync when sync_each, and stop
 * early once limit_ns have passed (a slow path must not make the benchmark
 * run for hours). *done gets the number of kernels that ran.
 */
static dao_status launch_many(dao_ctx ctx, const dao_operand *ops, uint64_t n, bool sync_each,
			      uint64_t limit_ns, uint64_t *done)
{
	uint64_t start = bench_now_ns(), i;
	dao_status st = DAO_OK;

	for (i = 0; i < n && st == DAO_OK; i++) {
		st = dao_launch(ctx, empty_kernel, NULL, ops, OPERANDS);
		if (st == DAO_OK && sync_each)
			st = dao_sync(ctx);
		/* Reading the clock costs about as much as a pipelined
		 * empty kernel: then look only every 1024 kernels. */
		if ((sync_each || (i & 1023) == 1023) && bench_now_ns() - start > limit_ns) {
			i++;
			break;
		}
	}
	if (done)
		*done = i;
	return st == DAO_OK ? dao_sync(ctx) : st;
}

static int measure(uint64_t live, uint64_t kernels, struct overhead_row *row)
{
	static const uint8_t zeros[LIVE_BUFFER_BYTES];
	dao_operand ops[OPERANDS];
	dao_stats before, after;
	dao_buf *bufs = calloc(live, sizeof(*bufs));
	uint64_t created = 0, t0, sync_kernels = kernels / 100 ? kernels / 100 : 1;
	dao_status st;
	const char *what;
	dao_ctx ctx;

	if (!bufs) {
		fprintf(stderr, "dao-bench: out of memory for %" PRIu64 " handles\n", live);
		return 1;
	}
	st = bench_open(0, DAO_POLICY_DEFAULT, &ctx);
	if (st != DAO_OK) {
		free(bufs);
		return bench_fail("dao_open", st);
	}
	what = "dao_buffer_create";
	for (; created < live; created++) {
		st = dao_buffer_create(ctx, LIVE_BUFFER_BYTES, &bufs[created]);
		if (st != DAO_OK)
			goto out;
	}
	/* Operands spread over the table, not its first slots. */
	for (int i = 0; i < OPERANDS; i++) {
		ops[i].buf = bufs[(live - 1) * (uint64_t)i / (OPERANDS - 1)];
		ops[i].mode = i == OPERANDS - 1 ? DAO_RW : DAO_R;
		what = "dao_write";
		st = dao_write(ctx, ops[i].buf, 0, zeros, sizeof(zeros));
		if (st != DAO_OK)
			goto out;
	}
	/* Make the operands resident before the clock starts. */
	what = "warm-up";
	st = launch_many(ctx, ops, 1000, false, UINT64_MAX, NULL);
	if (st != DAO_OK)
		goto out;
	what = "dao_stats_get";
	st = dao_stats_get(ctx, &before);
	if (st != DAO_OK)
		goto out;

	what = "dao_launch";
	for (int r = 0; r < REPEATS; r++) {
		uint64_t done;
		double ns;

		t0 = bench_now_ns();
		st = launch_many(ctx, ops, kernels, false, TIME_LIMIT_NS, &done);
		if (st != DAO_OK)
			goto out;
		ns = (double)(bench_now_ns() - t0) / (double)done;
		if (r == 0 || ns < row->ns_per_kernel)
			row->ns_per_kernel = ns;

		t0 = bench_now_ns();
		st = launch_many(ctx, ops, sync_kernels, true, TIME_LIMIT_NS, &done);
		if (st != DAO_OK)
			goto out;
		ns = (double)(bench_now_ns() - t0) / (double)done;
		if (r == 0 || ns < row->ns_per_kernel_sync)
			row->ns_per_kernel_sync = ns;
	}

	what = "dao_stats_get";
	st = dao_stats_get(ctx, &after);
	if (st != DAO_OK)
		goto out;
	row->moved = (after.fetches - before.fetches) + (after.evictions - before.evictions);
	row->live_buffers = live;
	row->kernels = kernels;
	for (int r = 0; r < REPEATS; r++) {
		double ns = call_loop(kernels);

		if (r == 0 || ns < row->ns_per_call)
			row->ns_per_call = ns;
	}
out:
	bench_close(ctx, bufs, created, &st, &what);
	free(bufs);
	return st == DAO_OK ? 0 : bench_fail(what, st);
}

int bench_overhead(const struct bench_options *o)
{
	static const uint64_t live[] = { 1000, 1000000 };
	struct overhead_row rows[sizeof(live) / sizeof(live[0])] = { 0 };
	size_t n = sizeof(live) / sizeof(live[0]);

	for (size_t i = 0; i < n; i++) {
		if (measure(live[i], o->kernels, &rows[i]))
			return 1;
		if (rows[i].moved)
			fprintf(stderr,
				"dao-bench: warning: %" PRIu64 " fetches or evictions while "
				"measuring %" PRIu64 " live buffers: operands were not all resident\n",
				rows[i].moved, rows[i].live_buffers);
	}
	if (o->json) {
		printf("[");
		for (size_t i = 0; i < n; i++)
			printf("%s{\"live_buffers\":%" PRIu64 ",\"operands\":%d,\"kernels\":%" PRIu64
			       ",\"ns_per_kernel\":%.1f,\"ns_per_kernel_sync\":%.1f"
			       ",\"ns_per_call\":%.2f}",
			       i ? "," : "", rows[i].live_buffers, OPERANDS, rows[i].kernels,
			       rows[i].ns_per_kernel, rows[i].ns_per_kernel_sync,
			       rows[i].ns_per_call);
		printf("]\n");
		return 0;
	}
	printf("empty kernels, %d resident operands, host backend, %" PRIu64
	       " kernels per run\n\n",
	       OPERANDS, o->kernels);
	printf("%14s %22s %22s %16s\n", "live buffers", "ns/kernel (pipelined)",
	       "ns/kernel (+dao_sync)", "ns/plain call");
	for (size_t i = 0; i < n; i++)
		printf("%14" PRIu64 " %22.1f %22.1f %16.2f\n", rows[i].live_buffers,
		       rows[i].ns_per_kernel, rows[i].ns_per_kernel_sync, rows[i].ns_per_call);
	printf("\npipelined: launches back to back, one dao_sync at the end;\n"
	       "+dao_sync: each launch waits for its kernel (submission to completion);\n"
	       "best of %d runs each.\n", REPEATS);
	return 0;
}
