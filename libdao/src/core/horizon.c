/* SPDX-License-Identifier: MIT */
/*
 * horizon.c - which queued kernels are due for their fetches, in modeled
 * time (horizon.h).
 *
 * The executor decides at each kernel's turn. A fetch issued now for a
 * later kernel k may take the space of records whose last use has been
 * issued, and copies while the kernels before k compute. Put off until
 * kernel a ends, it overlaps only the kernels between a and k; and the
 * copy engine moves fetches in the order they are issued, so k's fetch
 * also waits for the missing inputs of the kernels before it. Hence k's
 * fetch is late if put off until a ends (horizon_late) when
 *
 *     h2d time of the bytes the kernels after a up to k still need
 *         >=  compute time of the kernels after a and before k
 *
 * k is due (horizon_due) when it is late if put off until the next kernel
 * ends: the next decision may have to take the space that kernel frees.
 * The next kernel is always due, the one after it whenever it still needs
 * bytes; farther ones only where copying, not computing, sets the pace.
 * The dao policy (policy/dao.c, asked through core/ask.c) lets a due
 * fetch evict a victim that Belady's order would keep for now only when
 * waiting for the better victim (freed when its last use before k ends)
 * would also be late.
 *
 * Times come from the flops each launch declared, its operand bytes and
 * the backend's rates (backend.h: struct dao_rates), as the simulator
 * models a kernel; only their ratio matters. The walk is bounded: a kernel
 * more than HORIZON_SCAN_OPS ops away is not due.
 */
#include <math.h>

#include "backend/backend.h"
#include "core/horizon.h"

/* How many queued ops a walk looks through: a kernel beyond is not due,
 * and room and compute beyond are not counted. */
#define HORIZON_SCAN_OPS 256

bool horizon_rates_valid(const struct dao_rates *r)
{
	return r->h2d_bytes_per_s > 0 && isfinite(r->h2d_bytes_per_s) &&
	       r->d2h_bytes_per_s > 0 && isfinite(r->d2h_bytes_per_s) && r->flops_per_s > 0 &&
	       isfinite(r->flops_per_s) && r->mem_bytes_per_s > 0 && isfinite(r->mem_bytes_per_s);
}

/* Sums saturate: a job may declare any flops and sizes. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t ns_at(double amount, double per_s)
{
	double ns = amount * 1e9 / per_s;

	return ns >= 0x1p63 ? UINT64_C(1) << 63 : (uint64_t)ns;
}

uint64_t horizon_kernel_ns(const struct device *d, const struct op *op)
{
	const struct dao_rates *r = &d->be->rates;
	uint64_t bytes = 0, t_flops, t_mem;

	if (op->kind != OP_KERNEL)
		return 0;
	for (uint32_t i = 0; i < op->nopnd; i++)
		bytes = sat_add(bytes, op->opnd[i].rec->size);
	t_flops = ns_at((double)op->flops, r->flops_per_s);
	t_mem = ns_at((double)bytes, r->mem_bytes_per_s);
	return sat_add(t_flops > t_mem ? t_flops : t_mem, r->launch_ns);
}

uint64_t horizon_h2d_ns(const struct device *d, uint64_t bytes)
{
	return ns_at((double)bytes, d->be->rates.h2d_bytes_per_s);
}

uint64_t horizon_d2h_ns(const struct device *d, uint64_t bytes)
{
	return ns_at((double)bytes, d->be->rates.d2h_bytes_per_s);
}

void horizon_queue_clean(struct device *d, uint64_t bytes)
{
	d->res.clean_queue_ns = sat_add(d->res.clean_queue_ns, horizon_d2h_ns(d, bytes));
}

void horizon_queue_fetch(struct device *d, uint64_t bytes)
{
	d->res.fetch_queue_ns = sat_add(d->res.fetch_queue_ns, horizon_h2d_ns(d, bytes));
}

void horizon_kernel_passed(struct device *d, const struct op *op, uint64_t stall_ns)
{
	uint64_t passed;

	if (!d->res.clean_queue_ns && !d->res.fetch_queue_ns)
		return; /* nothing queued: no operand walk for this kernel */
	/* A stall a device measured (the simulator's is modeled) differs
	 * from run to run, and a deterministic device's decisions depend on
	 * the program alone: there only the kernel's modeled time passes. */
	if (d->be->holds_data && (d->flags & DAO_CONFIG_DETERMINISTIC))
		stall_ns = 0;
	passed = sat_add(horizon_kernel_ns(d, op), stall_ns);

	d->res.clean_queue_ns = d->res.clean_queue_ns > passed ? d->res.clean_queue_ns - passed : 0;
	d->res.fetch_queue_ns = d->res.fetch_queue_ns > passed ? d->res.fetch_queue_ns - passed : 0;
}

uint64_t horizon_walk_end(const struct device *d)
{
	const struct op *head = d->q.head;

	/* Seqs are consecutive: the walk's n-th op is head's seq + n. */
	if (head && d->q.next_seq - head->seq > HORIZON_SCAN_OPS)
		return head->seq + HORIZON_SCAN_OPS;
	return d->q.next_seq;
}

uint64_t horizon_compute_ns(const struct device *d, const struct op *end)
{
	const struct op *op = d->q.head;
	uint64_t compute_ns = 0;
	unsigned n = 0;

	for (; op && op != end && n < HORIZON_SCAN_OPS; op = op->next, n++)
		compute_ns = sat_add(compute_ns, horizon_kernel_ns(d, op));
	return compute_ns;
}

/*
 * A record not on the device takes its room at its first use in the window
 * (its next use is that one); a released record gives its room back after
 * its last use. The largest running total is the most the window's
 * placements take at once, before anything they need is evicted.
 */
uint64_t horizon_peak_room(const struct device *d, uint64_t before)
{
	const struct op *op = d->q.head;
	uint64_t net = 0, peak = 0;
	unsigned n = 0;

	for (; op && op->seq < before && n < HORIZON_SCAN_OPS; op = op->next, n++) {
		if (op->kind != OP_KERNEL)
			continue;
		/* A host kernel places nothing (its operands stay on the host). */
		for (uint32_t i = 0; i < op->nopnd && !op->on_host; i++) {
			const struct opnd *u = &op->opnd[i];

			if (!u->rec->blk && u->rec->uses.head == u)
				net = sat_add(net, u->rec->asize);
		}
		if (net > peak)
			peak = net;
		for (uint32_t i = 0; i < op->nopnd; i++) {
			const struct opnd *u = &op->opnd[i];

			if (u->rec->released && !u->next_use)
				net = net > u->rec->asize ? net - u->rec->asize : 0;
		}
	}
	return peak;
}

/* Bytes of op's inputs that are not on the device (none for a host
 * kernel, which fetches nothing). */
static uint64_t missing_bytes(const struct op *op)
{
	uint64_t bytes = 0;

	if (op->on_host)
		return 0;
	for (uint32_t i = 0; i < op->nopnd; i++) {
		const struct opnd *u = &op->opnd[i];

		if (u->mode != MODE_W && !u->rec->blk)
			bytes = sat_add(bytes, u->rec->size);
	}
	return bytes;
}

bool horizon_late(const struct device *d, const struct op *after, const struct op *target)
{
	uint64_t missing = 0, compute_ns = 0;
	const struct op *op = d->q.head;
	unsigned n = 0;

	for (; op && n < HORIZON_SCAN_OPS; op = op->next, n++) {
		if (op->kind != OP_KERNEL || (after && op->seq <= after->seq))
			continue;
		missing = sat_add(missing, missing_bytes(op));
		if (op == target)
			return missing && horizon_h2d_ns(d, missing) >= compute_ns;
		compute_ns = sat_add(compute_ns, horizon_kernel_ns(d, op));
	}
	return false;
}

bool horizon_due(const struct device *d, const struct op *target)
{
	const struct op *op = d->q.head;
	unsigned n = 0;

	for (; op && n < HORIZON_SCAN_OPS; op = op->next, n++)
		if (op->kind == OP_KERNEL)
			return op == target || horizon_late(d, op, target);
	return false;
}
