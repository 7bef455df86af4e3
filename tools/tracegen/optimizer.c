/* SPDX-License-Identifier: MIT */
/*
 * optimizer.c - the optimizer state and step the training families share
 * (family.h). A training job allocates its optimizer's state on the device
 * at the first step, which initialises it from the gradient (Adam: m =
 * (1 - b1) g, v = (1 - b2) g^2; SGD with momentum: the velocity is the
 * gradient) without reading it; later steps update it. So the first
 * iteration of a trace differs from the others as a real job's does: its
 * state buffers are written (w) where later iterations update them (rw),
 * and nothing of them is copied from the host.
 */
#include "family.h"

uint32_t tg_optim_state(struct tg_builder *b, uint64_t bytes, const char *label,
			unsigned long long layer, const char *which)
{
	return tg_buffer(b, bytes, TG_KEEP, "optim", "%s.%llu.%s", label, layer, which);
}

void tg_optim_step(struct tg_builder *b, const char *name, uint64_t flops, uint32_t grad,
		   uint32_t param, const uint32_t *state, unsigned nstate, int first)
{
	struct tg_list w = { 0 }, rw = { 0 };

	tg_list_add(b, &rw, param);
	for (unsigned i = 0; i < nstate; i++)
		tg_list_add(b, first ? &w : &rw, state[i]);
	tg_kernel(b, name, flops, TG_L(grad), w.n ? &w : NULL, &rw);
}
