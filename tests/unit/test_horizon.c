/* SPDX-License-Identifier: MIT */
/*
 * test_horizon.c - the prefetch horizon in modeled time (core/horizon.c):
 * which queued kernels are due for their fetches follows the flops and
 * bytes of the window against the device's rates, not a count of kernels;
 * the room the window needs, before an op or in all; cleaning ahead's
 * share of the d2h engine in modeled time; and a backend whose rates
 * cannot model time is refused at open.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/horizon.h"
#include "core/objects.h"
#include "dao_sim.h"
#include "tap.h"

#define MB 1000000ull

/* A window of up to 8 queued ops, each with up to 2 operands. */
struct window {
	struct dao_backend be;
	struct device *d;
	struct op op[8];
	struct opnd u[8][2];
	struct rec r[8][2];
	struct dao_block blk; /* any non-NULL block: "resident" */
	int n;
};

static struct window *window_new(void)
{
	struct window *w = calloc(1, sizeof(*w));

	/* 100 Tflop/s, 50 GB/s each way: a 1e11-flop kernel computes 1 ms
	 * while 50 MB copy in 1 ms. */
	w->be.rates = (struct dao_rates){ .h2d_bytes_per_s = 50e9,
					  .d2h_bytes_per_s = 50e9,
					  .flops_per_s = 100e12,
					  .mem_bytes_per_s = 3000e9 };
	w->d = aligned_alloc(_Alignof(struct device), sizeof(struct device));
	memset(w->d, 0, sizeof(*w->d));
	w->d->be = &w->be;
	return w;
}

static void window_free(struct window *w)
{
	free(w->d);
	free(w);
}

/* Queue a kernel of `flops` reading `in` bytes (resident or not) and
 * writing `out` bytes; 0 leaves that operand out. */
static struct op *push(struct window *w, enum op_kind kind, uint64_t flops, uint64_t in,
		       bool in_resident, uint64_t out)
{
	int i = w->n++;
	struct op *op = &w->op[i];

	op->kind = kind;
	op->seq = 100 + (uint64_t)i;
	op->flops = flops;
	op->opnd = w->u[i];
	if (in) {
		w->r[i][0].size = in;
		w->r[i][0].blk = in_resident ? &w->blk : NULL;
		w->u[i][op->nopnd] = (struct opnd){ .rec = &w->r[i][0], .op = op, .mode = MODE_R };
		w->r[i][0].uses.head = &w->u[i][op->nopnd++];
	}
	if (out) {
		w->r[i][1].size = out;
		w->u[i][op->nopnd] = (struct opnd){ .rec = &w->r[i][1], .op = op, .mode = MODE_W };
		w->r[i][1].uses.head = &w->u[i][op->nopnd++];
	}
	if (i)
		w->op[i - 1].next = op;
	else
		w->d->q.head = op;
	return op;
}

static void test_rates_valid(void)
{
	struct dao_rates ok = { 1, 1, 1, 1, 0 }, r;

	tap_ok(horizon_rates_valid(&ok), "positive finite rates can model time");
	r = ok;
	r.h2d_bytes_per_s = 0;
	tap_ok(!horizon_rates_valid(&r), "a zero h2d rate cannot");
	r = ok;
	r.flops_per_s = NAN;
	tap_ok(!horizon_rates_valid(&r), "a NaN compute rate cannot");
	r = ok;
	r.mem_bytes_per_s = INFINITY;
	tap_ok(!horizon_rates_valid(&r), "an infinite memory rate cannot");
	r = ok;
	r.d2h_bytes_per_s = -1;
	tap_ok(!horizon_rates_valid(&r), "a negative d2h rate cannot");
}

static void test_kernel_time(void)
{
	struct window *w = window_new();
	struct op *k = push(w, OP_KERNEL, 100000000000ull, 3000 * MB, true, 0);
	struct op *m = push(w, OP_KERNEL, 1000, 30000 * MB, true, 0);
	struct op *f = push(w, OP_FREE, 0, 0, false, 0);

	tap_ok(horizon_kernel_ns(w->d, k) == 1000000, "1e11 flops at 100 Tflop/s: 1 ms (%llu ns)",
	       (unsigned long long)horizon_kernel_ns(w->d, k));
	tap_ok(horizon_kernel_ns(w->d, m) == 10000000,
	       "a memory-bound kernel lasts its operand bytes at the memory rate (%llu ns)",
	       (unsigned long long)horizon_kernel_ns(w->d, m));
	tap_ok(horizon_kernel_ns(w->d, f) == 0, "an op that is not a kernel computes nothing");
	tap_ok(horizon_h2d_ns(w->d, 50 * MB) == 1000000, "50 MB at 50 GB/s: 1 ms");
	w->be.rates.launch_ns = 5000;
	tap_ok(horizon_kernel_ns(w->d, k) == 1005000, "the launch latency adds to a kernel");
	window_free(w);
}

/* Three kernels of `flops` each: the next one's input resident, the two
 * after it missing in2 and in3 bytes. */
static struct window *three_kernels(uint64_t flops, uint64_t in2, uint64_t in3)
{
	struct window *w = window_new();

	push(w, OP_KERNEL, flops, 10 * MB, true, 0);
	push(w, OP_KERNEL, flops, in2, false, 0);
	push(w, OP_KERNEL, flops, in3, false, 0);
	return w;
}

static void test_due_follows_time(void)
{
	struct window *w = three_kernels(100000000000ull, 10 * MB, 10 * MB);

	tap_ok(horizon_due(w->d, &w->op[0]), "the next kernel is always due");
	tap_ok(horizon_due(w->d, &w->op[1]), "the kernel after it is due: nothing computes between");
	tap_ok(!horizon_due(w->d, &w->op[2]),
	       "compute-bound: 20 MB (0.4 ms) to copy over 1 ms of compute is not due");
	window_free(w);

	/* The same window where copying sets the pace. */
	w = three_kernels(100000000000ull, 40 * MB, 20 * MB);
	tap_ok(horizon_due(w->d, &w->op[2]),
	       "copy-bound: 60 MB (1.2 ms) to copy over 1 ms of compute is due");
	window_free(w);

	/* Shorter kernels, the same bytes: time, not the count, decides. */
	w = three_kernels(10000000000ull, 10 * MB, 10 * MB);
	tap_ok(horizon_due(w->d, &w->op[2]), "0.4 ms to copy over 0.1 ms of compute is due");
	window_free(w);
}

static void test_outputs_and_gaps(void)
{
	struct window *w = window_new();
	struct op *second, *third, *fifth;

	push(w, OP_KERNEL, 100000000000ull, 10 * MB, true, 0);
	second = push(w, OP_KERNEL, 100000000000ull, 0, false, 80 * MB);
	third = push(w, OP_KERNEL, 100000000000ull, 0, false, 80 * MB);
	push(w, OP_FREE, 0, 0, false, 0);
	fifth = push(w, OP_KERNEL, 100000000000ull, 10 * MB, true, 0);
	tap_ok(!horizon_due(w->d, second) && !horizon_due(w->d, third),
	       "an output moves no bytes: nothing to hide, not due");
	tap_ok(!horizon_due(w->d, fifth), "all resident: not due");
	tap_ok(!horizon_late(w->d, second, third),
	       "no missing input after kernel 2: waiting for it is not late");
	window_free(w);

	w = window_new();
	push(w, OP_KERNEL, 100000000000ull, 10 * MB, true, 0);
	second = push(w, OP_KERNEL, 100000000000ull, 10 * MB, true, 0);
	third = push(w, OP_KERNEL, 100000000000ull, 10 * MB, true, 0);
	push(w, OP_ITER, 0, 0, false, 0);
	fifth = push(w, OP_KERNEL, 100000000000ull, 40 * MB, false, 0);
	tap_ok(!horizon_due(w->d, fifth), "0.8 ms to copy over 2 ms of compute: not due");
	tap_ok(!horizon_late(w->d, second, fifth), "waiting for kernel 2: 1 ms to hide 0.8 ms");
	tap_ok(horizon_late(w->d, third, fifth),
	       "waiting for kernel 3: nothing computes in between, late");
	window_free(w);
}

/* The room the window's placements take at once, and its compute time. */
static void test_window_room(void)
{
	struct window *w = window_new();
	struct op *k1, *k2, *k3;

	k1 = push(w, OP_KERNEL, 100000000000ull, 10 * MB, false, 20 * MB);
	k2 = push(w, OP_KERNEL, 100000000000ull, 5 * MB, false, 0);
	k3 = push(w, OP_KERNEL, 100000000000ull, 7 * MB, true, 0);
	for (int i = 0; i < 2; i++)
		w->r[0][i].asize = w->r[0][i].size;
	w->r[1][0].asize = 5 * MB;
	w->r[2][0].asize = 7 * MB;
	tap_ok(horizon_peak_room(w->d, UINT64_MAX) == 35 * MB,
	       "nothing freed: the placements add up (%llu bytes)",
	       (unsigned long long)horizon_peak_room(w->d, UINT64_MAX));
	tap_ok(horizon_peak_room(w->d, k2->seq) == 30 * MB &&
		       horizon_peak_room(w->d, k3->seq) == 35 * MB &&
		       horizon_peak_room(w->d, k1->seq) == 0,
	       "before an op, only the placements of the ops before it count");
	w->r[0][1].released = true; /* k1's output, last used there */
	tap_ok(horizon_peak_room(w->d, UINT64_MAX) == 30 * MB,
	       "a released record's room comes back after its last use (%llu bytes)",
	       (unsigned long long)horizon_peak_room(w->d, UINT64_MAX));
	w->u[0][0].rec->uses.head = NULL; /* its next use is not this one */
	tap_ok(horizon_peak_room(w->d, UINT64_MAX) == 20 * MB,
	       "a record enters only at its next use (%llu bytes)",
	       (unsigned long long)horizon_peak_room(w->d, UINT64_MAX));
	tap_ok(horizon_compute_ns(w->d, NULL) == 3000000 && horizon_compute_ns(w->d, k3) == 2000000 &&
		       horizon_compute_ns(w->d, k1) == 0,
	       "the window's compute time, up to an op or whole");
	k2->flops = UINT64_MAX;
	w->be.rates.flops_per_s = 1e-300;
	w->be.rates.launch_ns = UINT64_MAX / 2;
	tap_ok(horizon_kernel_ns(w->d, k2) == UINT64_MAX &&
		       horizon_compute_ns(w->d, NULL) == UINT64_MAX,
	       "declared flops past any rate saturate, never wrap");
	window_free(w);
}

/* Cleaning ahead's share of the d2h engine and the h2d engine's queue of
 * fetches, in modeled time: each copy adds its time to its own engine's,
 * each kernel takes off its own time and the stall before it from both,
 * down to nothing, never wrapping. */
static void test_copy_queues(void)
{
	struct window *w = window_new();
	struct op *k = push(w, OP_KERNEL, 100000000000ull, 0, false, 0); /* 1 ms */
	struct dev_residency *q = &w->d->res;

	horizon_queue_clean(w->d, 100 * MB); /* 2 ms at 50 GB/s */
	tap_ok(q->clean_queue_ns == 2000000 && !q->fetch_queue_ns,
	       "a write-back of 100 MB queues 2 ms on the d2h engine only (%llu ns)",
	       (unsigned long long)q->clean_queue_ns);
	horizon_queue_fetch(w->d, 50 * MB);
	tap_ok(q->fetch_queue_ns == 1000000 && q->clean_queue_ns == 2000000,
	       "a fetch of 50 MB queues 1 ms on the h2d engine only (%llu ns)",
	       (unsigned long long)q->fetch_queue_ns);
	horizon_kernel_passed(w->d, k, 500000);
	tap_ok(q->clean_queue_ns == 500000 && !q->fetch_queue_ns,
	       "a kernel of 1 ms after a stall of 0.5 ms leaves 0.5 ms of the one (%llu ns), "
	       "nothing of the other (%llu ns)",
	       (unsigned long long)q->clean_queue_ns, (unsigned long long)q->fetch_queue_ns);
	horizon_kernel_passed(w->d, k, 0);
	tap_ok(q->clean_queue_ns == 0, "time past the queue leaves nothing, not a debt");
	horizon_queue_clean(w->d, 100 * MB);
	horizon_queue_fetch(w->d, 100 * MB);
	w->be.holds_data = true; /* a real device: its stalls are measured */
	w->d->flags = DAO_CONFIG_DETERMINISTIC;
	horizon_kernel_passed(w->d, k, 500000);
	tap_ok(q->clean_queue_ns == 1000000 && q->fetch_queue_ns == 1000000,
	       "a deterministic device with measured stalls counts the kernel's time only "
	       "(%llu and %llu ns)",
	       (unsigned long long)q->clean_queue_ns, (unsigned long long)q->fetch_queue_ns);
	w->d->flags = 0;
	horizon_kernel_passed(w->d, k, 500000);
	tap_ok(!q->clean_queue_ns && !q->fetch_queue_ns, "another counts the stall too");
	q->clean_queue_ns = q->fetch_queue_ns = UINT64_MAX - 1;
	horizon_queue_clean(w->d, 100 * MB);
	horizon_queue_fetch(w->d, 100 * MB);
	tap_ok(q->clean_queue_ns == UINT64_MAX && q->fetch_queue_ns == UINT64_MAX,
	       "the queues saturate, never wrap");
	horizon_kernel_passed(w->d, k, UINT64_MAX);
	tap_ok(!q->clean_queue_ns && !q->fetch_queue_ns, "so does the time passed");
	window_free(w);
}

static void test_open_refuses_bad_rates(void)
{
	struct dao_sim_model m;
	struct dao_backend *be;
	dao_config cfg;
	dao_ctx ctx = DAO_CTX_NULL;
	dao_status st;

	dao_sim_model_preset("h100", &m);
	if (dao_backend_sim_create(&m, 1 << 20, 0, &be) != DAO_OK)
		tap_bail("sim backend");
	be->rates.flops_per_s = 0;
	dao_config_init(&cfg);
	cfg.log_level = DAO_LOG_SILENT;
	st = dao_open_on_backend(&cfg, be, &ctx);
	tap_ok(st == DAO_ERR_INVALID && ctx.id == 0, "a backend without a compute rate is refused (%s)",
	       dao_strerror(st));
}

int main(void)
{
	test_rates_valid();
	test_kernel_time();
	test_due_follows_time();
	test_outputs_and_gaps();
	test_window_room();
	test_copy_queues();
	test_open_refuses_bad_rates();
	tap_plan_done();
	return tap_exit();
}
