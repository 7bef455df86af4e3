/* SPDX-License-Identifier: MIT */
/*
 * families_lstm.c - training steps of a stacked LSTM unrolled over `seq`
 * time steps, one small kernel per gate product, cell update and
 * gradient: many kernels of a few microseconds each.
 *
 * Forward, layer by layer, each time step: lstm_x (input product into the
 * gates), lstm_h (recurrent product, accumulated), lstm_cell (the gates'
 * nonlinearities, new c and h); then per time step a fused output head
 * with softmax cross-entropy that writes the logits' gradient. Backward:
 * the head's two products per time step, then per layer from the top,
 * time steps in reverse, the cell's backward, the recurrent and input
 * gradients (none for the state before t = 0 or the network's input) and
 * both weight gradients, accumulated over time. Then Adam per weight.
 * Kernels per training step: 8 L S + 2 S + L + 1.
 *
 * Buffers: weights (input and recurrent per layer, each with its bias, the
 * output head) start on the host and stay; Adam's moments are created on
 * the device by the first step and stay (optimizer.c); inputs,
 * targets and initial states per step start on the host and are freed after
 * their last use; activations and gradients start nowhere and are freed
 * after their last use. Flops: 2mkn per product, the cell 20 and its
 * backward 30 per state element, softmax cross-entropy 5 per logit, Adam 12
 * per weight.
 */
#include <stdlib.h>

#include "family.h"

struct weight {
	uint32_t p, m, v, grad;
	uint64_t elems;
};

static void weight(struct tg_builder *b, struct weight *w, uint64_t elems, unsigned e,
		   const char *label, unsigned long long layer)
{
	uint64_t bytes = tg_mul(b, elems, e);

	w->elems = elems;
	w->p = tg_buffer(b, bytes, TG_HOST | TG_KEEP, "param", "%s.%llu", label, layer);
	w->m = tg_optim_state(b, bytes, label, layer, "m");
	w->v = tg_optim_state(b, bytes, label, layer, "v");
}

/* Accumulate into w's gradient: the first contribution overwrites it. */
static void wgrad(struct tg_builder *b, struct weight *w, unsigned e, const char *name,
		  uint64_t flops, const struct tg_list *r)
{
	int first = !w->grad;

	if (first)
		w->grad = tg_buffer(b, tg_mul(b, w->elems, e), 0, "grad", NULL);
	tg_kernel(b, name, flops, r, first ? TG_L(w->grad) : NULL, first ? NULL : TG_L(w->grad));
}

struct lstm {
	uint64_t L, S, B, H, C;
	unsigned e;
	struct weight *wx, *wh, out;
	/* per step, [l * S + t] */
	uint32_t *gates, *c, *h, *dup;
};

/* Adam for weight w (its moments written at the first step). */
static void adam(struct tg_builder *b, const struct weight *w, int first)
{
	tg_optim_step(b, "adam", tg_mul(b, 12, w->elems), w->grad, w->p,
		      (const uint32_t[]){ w->m, w->v }, 2, first);
}

static void step(struct tg_builder *b, struct lstm *n, int first)
{
	uint64_t L = n->L, S = n->S, B = n->B, H = n->H, C = n->C;
	unsigned e = n->e;
	uint64_t BH = tg_mul(b, B, H), BH4 = tg_mul(b, BH, 4), BC = tg_mul(b, B, C);
	uint64_t gate_mm = tg_mul(b, tg_mul(b, 2, BH4), H), head_mm = tg_mul(b, tg_mul(b, 2, BH), C);
	uint32_t *input = calloc(S, sizeof(uint32_t)), *targets = calloc(S, sizeof(uint32_t));
	uint32_t *dlogits = calloc(S, sizeof(uint32_t)), *h0 = calloc(L, sizeof(uint32_t));
	uint32_t *c0 = calloc(L, sizeof(uint32_t));

#define AT(a, l, t) (a)[(l) * S + (t)]
	if (!input || !targets || !dlogits || !h0 || !c0) {
		tg_fail(b, "out of memory");
		goto out;
	}
	for (uint64_t l = 0; l < L; l++) {
		n->wx[l].grad = n->wh[l].grad = 0;
		h0[l] = tg_buffer(b, tg_mul(b, BH, e), TG_HOST, "input", "h0.%llu",
				  (unsigned long long)l);
		c0[l] = tg_buffer(b, tg_mul(b, BH, e), TG_HOST, "input", "c0.%llu",
				  (unsigned long long)l);
	}
	n->out.grad = 0;
	for (uint64_t t = 0; t < S; t++) {
		input[t] = tg_buffer(b, tg_mul(b, BH, e), TG_HOST, "input", "x%llu",
				     (unsigned long long)t);
		targets[t] = tg_buffer(b, tg_mul(b, B, 4), TG_HOST, "input", "y%llu",
				       (unsigned long long)t);
	}

	/* forward */
	for (uint64_t l = 0; l < L && !b->failed; l++) {
		for (uint64_t t = 0; t < S; t++) {
			uint32_t x = l ? AT(n->h, l - 1, t) : input[t];

			AT(n->gates, l, t) = tg_buffer(b, tg_mul(b, BH4, e), 0, "act", NULL);
			AT(n->c, l, t) = tg_buffer(b, tg_mul(b, BH, e), 0, "act", NULL);
			AT(n->h, l, t) = tg_buffer(b, tg_mul(b, BH, e), 0, "act", NULL);
			tg_kernel(b, "lstm_x", gate_mm, TG_L(x, n->wx[l].p), TG_L(AT(n->gates, l, t)),
				  NULL);
			tg_kernel(b, "lstm_h", gate_mm, TG_L(t ? AT(n->h, l, t - 1) : h0[l], n->wh[l].p),
				  NULL, TG_L(AT(n->gates, l, t)));
			tg_kernel(b, "lstm_cell", tg_mul(b, 20, BH),
				  TG_L(AT(n->gates, l, t), t ? AT(n->c, l, t - 1) : c0[l]),
				  TG_L(AT(n->c, l, t), AT(n->h, l, t)), NULL);
		}
	}
	for (uint64_t t = 0; t < S && !b->failed; t++) {
		dlogits[t] = tg_buffer(b, tg_mul(b, BC, e), 0, "grad", NULL);
		tg_kernel(b, "head_xent", tg_add(b, head_mm, tg_mul(b, 5, BC)),
			  TG_L(AT(n->h, L - 1, t), n->out.p, targets[t]), TG_L(dlogits[t]), NULL);
	}

	/* backward: the head, then the layers from the top */
	for (uint64_t t = S; t-- > 0 && !b->failed;) {
		AT(n->dup, L - 1, t) = tg_buffer(b, tg_mul(b, BH, e), 0, "grad", NULL);
		tg_kernel(b, "head_dgrad", head_mm, TG_L(dlogits[t], n->out.p),
			  TG_L(AT(n->dup, L - 1, t)), NULL);
		wgrad(b, &n->out, e, "head_wgrad", head_mm, TG_L(dlogits[t], AT(n->h, L - 1, t)));
	}
	for (uint64_t l = L; l-- > 0 && !b->failed;) {
		uint32_t dhrec = 0, dc = 0;

		for (uint64_t t = S; t-- > 0 && !b->failed;) {
			uint32_t dg = tg_buffer(b, tg_mul(b, BH4, e), 0, "grad", NULL);
			uint32_t dc_prev = t ? tg_buffer(b, tg_mul(b, BH, e), 0, "grad", NULL) : 0;
			uint32_t hprev = t ? AT(n->h, l, t - 1) : h0[l];
			uint32_t x = l ? AT(n->h, l - 1, t) : input[t];
			struct tg_list r, w;

			tg_list_clear(&r);
			tg_list_add(b, &r, AT(n->dup, l, t));
			if (dhrec)
				tg_list_add(b, &r, dhrec);
			if (dc)
				tg_list_add(b, &r, dc);
			tg_list_add(b, &r, AT(n->gates, l, t));
			tg_list_add(b, &r, AT(n->c, l, t));
			tg_list_add(b, &r, t ? AT(n->c, l, t - 1) : c0[l]);
			tg_list_clear(&w);
			tg_list_add(b, &w, dg);
			if (dc_prev)
				tg_list_add(b, &w, dc_prev);
			tg_kernel(b, "lstm_cell_bwd", tg_mul(b, 30, BH), &r, &w, NULL);
			dhrec = 0;
			if (t) {
				dhrec = tg_buffer(b, tg_mul(b, BH, e), 0, "grad", NULL);
				tg_kernel(b, "lstm_h_dgrad", gate_mm, TG_L(dg, n->wh[l].p), TG_L(dhrec),
					  NULL);
			}
			if (l) {
				AT(n->dup, l - 1, t) = tg_buffer(b, tg_mul(b, BH, e), 0, "grad", NULL);
				tg_kernel(b, "lstm_x_dgrad", gate_mm, TG_L(dg, n->wx[l].p),
					  TG_L(AT(n->dup, l - 1, t)), NULL);
			}
			wgrad(b, &n->wx[l], e, "lstm_x_wgrad", gate_mm, TG_L(dg, x));
			wgrad(b, &n->wh[l], e, "lstm_h_wgrad", gate_mm, TG_L(dg, hprev));
			dc = dc_prev;
		}
	}

	/* optimizer */
	for (uint64_t l = 0; l < L && !b->failed; l++) {
		adam(b, &n->wx[l], first);
		adam(b, &n->wh[l], first);
	}
	adam(b, &n->out, first);
#undef AT
out:
	free(input);
	free(targets);
	free(dlogits);
	free(h0);
	free(c0);
}

static void gen_lstm(struct tg_builder *b, const struct tg_settings *s)
{
	struct lstm n = {
		.L = tg_get(s, "layers"),
		.S = tg_get(s, "seq"),
		.B = tg_get(s, "batch"),
		.H = tg_get(s, "hidden"),
		.C = tg_get(s, "classes"),
		.e = s->elem_bytes,
	};
	uint64_t iters = tg_get(s, "iters"), LS = n.L * n.S;

	if (LS > TG_MAX_KERNELS / 8 / iters) {
		tg_fail(b, "more than %u kernels", TG_MAX_KERNELS);
		return;
	}
	n.wx = calloc(n.L, sizeof(*n.wx));
	n.wh = calloc(n.L, sizeof(*n.wh));
	n.gates = calloc(LS, sizeof(uint32_t));
	n.c = calloc(LS, sizeof(uint32_t));
	n.h = calloc(LS, sizeof(uint32_t));
	n.dup = calloc(LS, sizeof(uint32_t));
	if (!n.wx || !n.wh || !n.gates || !n.c || !n.h || !n.dup) {
		tg_fail(b, "out of memory");
		goto out;
	}
	for (uint64_t l = 0; l < n.L; l++) {
		uint64_t four_h = tg_mul(b, 4, n.H);

		weight(b, &n.wx[l], tg_add(b, tg_mul(b, four_h, n.H), four_h), n.e, "wx", l);
		weight(b, &n.wh[l], tg_mul(b, four_h, n.H), n.e, "wh", l);
	}
	weight(b, &n.out, tg_add(b, tg_mul(b, n.C, n.H), n.C), n.e, "out", 0);
	for (uint64_t it = 0; it < iters && !b->failed; it++) {
		tg_iteration(b, it);
		step(b, &n, it == 0);
	}
out:
	free(n.wx);
	free(n.wh);
	free(n.gates);
	free(n.c);
	free(n.h);
	free(n.dup);
}

static const struct tg_param p_lstm[] = {
	{ "layers", 2, 1, 1000, "stacked LSTM layers" },
	{ "seq", 200, 1, 1000000, "time steps unrolled" },
	{ "batch", 32, 1, 1u << 16, "sequences per step" },
	{ "hidden", 512, 1, 1u << 16, "state width (also the input width)" },
	{ "classes", 256, 1, 1u << 22, "outputs of the head per time step" },
	{ "iters", 3, 1, 10000, "training steps" },
};

const struct tg_family tg_family_lstm = {
	.name = "lstm",
	.model = "lstm",
	.summary = "stacked LSTM training steps unrolled over time: many small kernels",
	.default_elem_bytes = 4,
	.params = p_lstm,
	.nparams = 6,
	.generate = gen_lstm,
};
