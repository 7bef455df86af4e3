/* SPDX-License-Identifier: MIT */
/*
 * dao-bench overhead: what libdao adds to each kernel when nothing has to
 * move. Empty kernels with four resident operands, with 10^3 to 10^6 live
 * buffers (the table must not slow down as it grows), beside a plain
 * indirect call of the same function, and what creating a buffer costs.
 * Pipelined: launches back to back and one dao_sync; synchronous: every
 * launch waits for its kernel, the full path from submission to completion
 * (1/100 as many kernels).
 *
 * Each row runs in two placements, because a hand-off between threads
 * costs very different amounts in each: "split", the job thread and
 * libdao's threads on two different CPUs (every hand-off crosses CPUs), and
 * "shared", all of them on one CPU. Placement is set with affinity masks
 * alone: libdao's threads inherit the mask of the thread that opens the
 * context, so the job thread opens on one CPU and then moves to another.
 */
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	enum bench_placement placement;
	uint64_t live_buffers;
	uint64_t kernels;
	double ns_per_kernel;      /* queued back to back, one dao_sync at the end */
	double ns_per_kernel_sync; /* each launch followed by dao_sync */
	double ns_per_call;        /* the kernel function called directly */
	double ns_per_create;      /* dao_buffer_create, while the live buffers were made */
	double us_open;            /* the dao_open before them, not in ns_per_create */
	uint64_t moved;            /* fetches + evictions while measuring: should be 0 */
};

/* Through a volatile pointer the compiler cannot inline or drop the call. */
static int (*volatile call_target)(const dao_kernel_args *) = bench_empty_kernel;

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
		st = dao_launch(ctx, bench_empty_kernel, NULL, ops, OPERANDS);
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

/* The two CPUs the placements use, and the mask to return to. */
struct cpu_pair {
	cpu_set_t all;
	int a, b; /* b < 0: only one CPU is allowed, no split placement */
};

static void cpu_pair_init(struct cpu_pair *p)
{
	p->a = p->b = -1;
	if (sched_getaffinity(0, sizeof(p->all), &p->all)) {
		CPU_ZERO(&p->all);
		return;
	}
	for (int c = 0; c < CPU_SETSIZE && p->b < 0; c++) {
		if (!CPU_ISSET(c, &p->all))
			continue;
		if (p->a < 0)
			p->a = c;
		else
			p->b = c;
	}
}

static int pin_to(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one);
}

static dao_status timed_open(dao_ctx *ctx, double *us)
{
	uint64_t t0 = bench_now_ns();
	dao_status st = bench_open(bench_env_backend(), 0, DAO_POLICY_DEFAULT, ctx);

	*us = (double)(bench_now_ns() - t0) / 1e3;
	return st;
}

/* Open the context so that libdao's threads (created by dao_open, with the
 * opener's mask) land where the placement wants them. *us: dao_open's own
 * time (a row's first open in a process includes the first memory libdao
 * takes, which a later open finds again). */
static dao_status placed_open(const struct cpu_pair *cpus, enum bench_placement where,
			      dao_ctx *ctx, double *us)
{
	dao_status st;

	if (cpus->a < 0)
		return timed_open(ctx, us);
	if (pin_to(where == BENCH_SPLIT ? cpus->b : cpus->a))
		return DAO_ERR_INVALID;
	st = timed_open(ctx, us);
	if (st == DAO_OK && where == BENCH_SPLIT && pin_to(cpus->a)) {
		dao_close(*ctx, NULL);
		st = DAO_ERR_INVALID;
	}
	return st;
}

static void placed_restore(const struct cpu_pair *cpus)
{
	if (cpus->a >= 0)
		sched_setaffinity(0, sizeof(cpus->all), &cpus->all);
}

static int measure(const struct cpu_pair *cpus, uint64_t live, uint64_t kernels,
		   struct overhead_row *row)
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
	/* Fault the handle array in now: the create figure is libdao's, not
	 * this array's first touch (8 bytes a buffer, a page fault per 512).
	 * Through a volatile pointer, and not zeros: a memset of calloc's
	 * memory is dropped by the compiler, which knows it is zero already,
	 * and the kernel may take pages of zeros back (THP's underused
	 * shrinker). */
	for (uint64_t i = 0; i < live; i++)
		((volatile dao_buf *)bufs)[i].id = UINT64_MAX;
	st = placed_open(cpus, row->placement, &ctx, &row->us_open);
	if (st != DAO_OK) {
		free(bufs);
		return bench_fail("dao_open", st);
	}
	what = "dao_buffer_create";
	t0 = bench_now_ns();
	for (; created < live; created++) {
		st = dao_buffer_create(ctx, LIVE_BUFFER_BYTES, &bufs[created]);
		if (st != DAO_OK)
			goto out;
	}
	row->ns_per_create = (double)(bench_now_ns() - t0) / (double)live;
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
	placed_restore(cpus);
	free(bufs);
	return st == DAO_OK ? 0 : bench_fail(what, st);
}

static const char *placement_name(enum bench_placement p)
{
	return p == BENCH_SPLIT ? "split" : "shared";
}

int bench_overhead(const struct bench_options *o)
{
	struct overhead_row rows[2 * BENCH_MAX_LIVE] = { 0 };
	struct cpu_pair cpus;
	size_t n = 0;

	cpu_pair_init(&cpus);
	for (int p = BENCH_SPLIT; p <= BENCH_SHARED; p++) {
		if (!(o->placements & (1u << p)))
			continue;
		if (p == BENCH_SPLIT && cpus.b < 0) {
			fprintf(stderr, "dao-bench: one CPU allowed: no split placement\n");
			continue;
		}
		for (size_t i = 0; i < o->nlive; i++, n++) {
			rows[n].placement = (enum bench_placement)p;
			if (measure(&cpus, o->live[i], o->kernels, &rows[n]))
				return 1;
			if (rows[n].moved)
				fprintf(stderr,
					"dao-bench: warning: %" PRIu64 " fetches or evictions while "
					"measuring %" PRIu64 " live buffers: operands were not all "
					"resident\n",
					rows[n].moved, rows[n].live_buffers);
		}
	}
	if (o->json) {
		printf("[");
		for (size_t i = 0; i < n; i++)
			printf("%s{\"placement\":\"%s\",\"live_buffers\":%" PRIu64
			       ",\"operands\":%d,\"kernels\":%" PRIu64
			       ",\"ns_per_kernel\":%.1f,\"ns_per_kernel_sync\":%.1f"
			       ",\"ns_per_call\":%.2f,\"ns_per_create\":%.1f"
			       ",\"us_open\":%.1f}",
			       i ? "," : "", placement_name(rows[i].placement),
			       rows[i].live_buffers, OPERANDS, rows[i].kernels,
			       rows[i].ns_per_kernel, rows[i].ns_per_kernel_sync,
			       rows[i].ns_per_call, rows[i].ns_per_create, rows[i].us_open);
		printf("]\n");
		return 0;
	}
	printf("empty kernels, %d resident operands, host backend, %" PRIu64
	       " kernels per run\n\n",
	       OPERANDS, o->kernels);
	printf("%-9s %12s %22s %22s %14s %14s %10s\n", "placement", "live buffers",
	       "ns/kernel (pipelined)", "ns/kernel (+dao_sync)", "ns/plain call", "ns/create",
	       "us/open");
	for (size_t i = 0; i < n; i++)
		printf("%-9s %12" PRIu64 " %22.1f %22.1f %14.2f %14.1f %10.1f\n",
		       placement_name(rows[i].placement), rows[i].live_buffers,
		       rows[i].ns_per_kernel, rows[i].ns_per_kernel_sync, rows[i].ns_per_call,
		       rows[i].ns_per_create, rows[i].us_open);
	printf("\npipelined: launches back to back, one dao_sync at the end;\n"
	       "+dao_sync: each launch waits for its kernel (submission to completion);\n"
	       "split: the job thread and libdao's threads on two CPUs (CPU %d and %d);\n"
	       "shared: all of them on CPU %d; best of %d runs each;\n"
	       "ns/create: the row's creates, after its dao_open (us/open, not in it).\n",
	       cpus.a, cpus.b, cpus.a, REPEATS);
	return 0;
}
