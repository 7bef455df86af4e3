/* SPDX-License-Identifier: MIT */
/*
 * fuzz_trace.c - libFuzzer harness for the dao-trace reader: any input
 * either parses into a consistent trace or is refused with "line N: ...";
 * never a crash, a leak or undefined behaviour.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dao_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
	if (!cond)
		abort();
}

/* What every consumer relies on: indices in range, operand ranges inside
 * the ops array, no id twice in a kernel, ids and sizes in range. */
static void check_trace(const struct dao_trace *t)
{
	size_t ops = 0, kernels = 0;

	for (size_t b = 0; b < t->nbufs; b++) {
		check(t->bufs[b].id >= 1 && t->bufs[b].id < DAO_TRACE_ID_LIMIT);
		check(t->bufs[b].bytes < DAO_TRACE_ID_LIMIT);
	}
	for (size_t e = 0; e < t->nevents; e++) {
		const struct dao_trace_event *ev = &t->events[e];

		switch (ev->type) {
		case DAO_TRACE_KERNEL:
			check(ev->u.kernel.first_op == ops);
			ops += ev->u.kernel.nops;
			check(ops <= t->nops);
			check(ev->u.kernel.name && ev->u.kernel.name[0]);
			for (uint32_t i = 0; i < ev->u.kernel.nops; i++) {
				const struct dao_trace_operand *o = &t->ops[ev->u.kernel.first_op + i];

				check(o->buf < t->nbufs);
				check(o->mode >= DAO_R && o->mode <= DAO_RW);
				for (uint32_t j = 0; j < i; j++)
					check(t->ops[ev->u.kernel.first_op + j].buf != o->buf);
			}
			kernels++;
			break;
		case DAO_TRACE_FREE:
			check(ev->u.free_buf < t->nbufs);
			break;
		case DAO_TRACE_ITERATION:
			break;
		default:
			check(0);
		}
	}
	check(ops == t->nops);
	check(kernels == t->nkernels);
	check(t->preamble != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dao_trace *t = NULL;
	char err[256];
	dao_status st = dao_trace_read_mem((const char *)data, size, &t, err, sizeof(err));

	if (st == DAO_OK) {
		check_trace(t);
		dao_trace_free(t);
	} else {
		check(st == DAO_ERR_FORMAT || st == DAO_ERR_NOMEM);
		check(t == NULL);
		check(strncmp(err, "line ", 5) == 0);
	}
	return 0;
}
