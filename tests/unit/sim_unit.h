/* SPDX-License-Identifier: MIT */
/*
 * sim_unit.h - what daosim's hand-worked tests share: a trace from its
 * text, and a device model in round units (a flop 1 ns, a byte 1 ns to copy
 * either way; operand bytes cost at most 1 ns of kernel time, the ceiling
 * of a tiny figure, so a kernel of >= 1 flop takes its flops in ns), so
 * that the figures in their comments can be worked out by hand.
 */
#ifndef DAO_TEST_SIM_UNIT_H
#define DAO_TEST_SIM_UNIT_H

#include <string.h>

#include "dao_sim.h"
#include "dao_trace.h"
#include "tap.h"

static inline struct dao_trace *parse(const char *text)
{
	struct dao_trace *t = NULL;
	char err[256];

	if (dao_trace_read_mem(text, strlen(text), &t, err, sizeof(err)))
		tap_bail("test trace does not parse: %s", err);
	return t;
}

static inline void unit_model(struct dao_sim_model *m)
{
	dao_sim_model_preset("h100", m);
	m->flops_per_s = 1e9;
	m->mem_bytes_per_s = 1e15;
	m->h2d_bytes_per_s = 1e9;
	m->d2h_bytes_per_s = 1e9;
	m->launch_ns = 0;
}

#endif /* DAO_TEST_SIM_UNIT_H */
