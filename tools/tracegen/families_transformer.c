/* SPDX-License-Identifier: MIT */
/*
 * families_transformer.c - training steps of a GPT-style decoder: forward
 * through `layers` pre-norm blocks, loss, backward in reverse, Adam.
 *
 * Buffers: parameters (token and position embeddings, per block ln1, qkv,
 * proj, ln2, fc1, fc2 with their biases, the final norm; the output head is
 * tied to the token embedding) start on the host and stay live; Adam's two
 * moments are created on the device by the first step, which writes them,
 * and updated by the others (optimizer.c: the first iteration differs). Per step: token and target ids (host), activations (written in
 * forward, kept until the backward kernel that last reads them, then freed),
 * gradients (written in backward, freed after Adam reads them). The
 * attention scores are freed after the softmax (backward needs only the
 * probabilities), a block's intermediate sums after the residual add.
 *
 * Flops: a matrix product of (m x k)(k x n) is 2mkn; attention is
 * 2 b s^2 h per product (no causal saving); pointwise and normalisation
 * kernels count a few flops per element (layernorm 8, its backward 12, gelu
 * 8, its backward 10, softmax 5, its backward 4, add 1, Adam 12).
 */
#include <stdlib.h>

#include "family.h"

struct linear {
	uint32_t w; /* weight and bias in one buffer, as fused kernels keep them */
	uint64_t in, out;
};

struct block {
	uint32_t ln1, ln2;
	struct linear qkv, proj, fc1, fc2;
};

/* One parameter with its gradient for the current step and Adam state. */
struct param {
	uint32_t p, m, v, grad;
	uint64_t elems;
};

struct model {
	uint64_t layers, hidden, heads, seq, batch, vocab, e;
	uint64_t tokens;
	struct param *params; /* wte, wpe, lnf, then 6 per block */
	size_t nparams;
	struct block *blocks;
	uint32_t wte, wpe, lnf;
};

static uint32_t param(struct tg_builder *b, struct model *m, uint64_t elems, const char *label,
		      unsigned long long layer)
{
	struct param *p = &m->params[m->nparams++];
	uint64_t bytes = tg_mul(b, elems, m->e);

	p->elems = elems;
	p->p = tg_buffer(b, bytes, TG_HOST | TG_KEEP, "param", "%s.%llu", label, layer);
	p->m = tg_optim_state(b, bytes, label, layer, "m");
	p->v = tg_optim_state(b, bytes, label, layer, "v");
	return p->p;
}

static struct param *param_of(struct model *m, uint32_t p)
{
	for (size_t i = 0; i < m->nparams; i++)
		if (m->params[i].p == p)
			return &m->params[i];
	return NULL;
}

/* The gradient buffer of parameter p for this step (created on first ask). */
static uint32_t grad(struct tg_builder *b, struct model *m, uint32_t p)
{
	struct param *q = param_of(m, p);

	if (!q->grad)
		q->grad = tg_buffer(b, tg_mul(b, q->elems, m->e), 0, "grad", NULL);
	return q->grad;
}

/* Activation of `elems` elements. */
static uint32_t act(struct tg_builder *b, const struct model *m, uint64_t elems)
{
	return tg_buffer(b, tg_mul(b, elems, m->e), 0, "act", NULL);
}

static uint32_t gradbuf(struct tg_builder *b, const struct model *m, uint64_t elems)
{
	return tg_buffer(b, tg_mul(b, elems, m->e), 0, "grad", NULL);
}

static struct linear linear(struct tg_builder *b, struct model *m, uint64_t in, uint64_t out,
			    const char *label, unsigned long long layer)
{
	struct linear l = { 0, in, out };

	l.w = param(b, m, tg_add(b, tg_mul(b, in, out), out), label, layer);
	return l;
}

/* 2 * tokens * in * out */
static uint64_t mm(struct tg_builder *b, const struct model *m, uint64_t in, uint64_t out)
{
	return tg_mul(b, tg_mul(b, tg_mul(b, 2, m->tokens), in), out);
}

struct saved {
	uint32_t x, ln1, qkv, probs, attn, x1, ln2, h, g;
};

static void step(struct tg_builder *b, struct model *m, int first)
{
	uint64_t T = m->tokens, H = m->hidden, S = m->seq, B = m->batch;
	uint64_t TH = tg_mul(b, T, H), att = tg_mul(b, tg_mul(b, tg_mul(b, B, m->heads), S), S);
	uint64_t attmm = tg_mul(b, tg_mul(b, tg_mul(b, 2, B), tg_mul(b, S, S)), H);
	struct saved *sv = calloc(m->layers, sizeof(*sv));
	uint32_t tokens, targets, x, lnf_out, logits, dlogits, loss, dy;

	if (!sv) {
		tg_fail(b, "out of memory");
		return;
	}
	for (size_t i = 0; i < m->nparams; i++)
		m->params[i].grad = 0;
	tokens = tg_buffer(b, tg_mul(b, T, 4), TG_HOST, "input", "tokens");
	targets = tg_buffer(b, tg_mul(b, T, 4), TG_HOST, "input", "targets");

	/* forward */
	x = act(b, m, TH);
	tg_kernel(b, "embedding", TH, TG_L(tokens, m->wte, m->wpe), TG_L(x), NULL);
	for (uint64_t l = 0; l < m->layers && !b->failed; l++) {
		const struct block *k = &m->blocks[l];
		struct saved *v = &sv[l];
		uint32_t scores, proj, mlp;

		v->x = x;
		v->ln1 = act(b, m, TH);
		tg_kernel(b, "layernorm", tg_mul(b, 8, TH), TG_L(x, k->ln1), TG_L(v->ln1), NULL);
		v->qkv = act(b, m, tg_mul(b, 3, TH));
		tg_kernel(b, "qkv", mm(b, m, H, tg_mul(b, 3, H)), TG_L(v->ln1, k->qkv.w), TG_L(v->qkv), NULL);
		scores = act(b, m, att);
		tg_kernel(b, "attn_scores", attmm, TG_L(v->qkv), TG_L(scores), NULL);
		v->probs = act(b, m, att);
		tg_kernel(b, "softmax", tg_mul(b, 5, att), TG_L(scores), TG_L(v->probs), NULL);
		v->attn = act(b, m, TH);
		tg_kernel(b, "attn_values", attmm, TG_L(v->probs, v->qkv), TG_L(v->attn), NULL);
		proj = act(b, m, TH);
		tg_kernel(b, "proj", mm(b, m, H, H), TG_L(v->attn, k->proj.w), TG_L(proj), NULL);
		v->x1 = act(b, m, TH);
		tg_kernel(b, "add", TH, TG_L(x, proj), TG_L(v->x1), NULL);
		v->ln2 = act(b, m, TH);
		tg_kernel(b, "layernorm", tg_mul(b, 8, TH), TG_L(v->x1, k->ln2), TG_L(v->ln2), NULL);
		v->h = act(b, m, tg_mul(b, 4, TH));
		tg_kernel(b, "fc1", mm(b, m, H, tg_mul(b, 4, H)), TG_L(v->ln2, k->fc1.w), TG_L(v->h), NULL);
		v->g = act(b, m, tg_mul(b, 4, TH));
		tg_kernel(b, "gelu", tg_mul(b, 32, TH), TG_L(v->h), TG_L(v->g), NULL);
		mlp = act(b, m, TH);
		tg_kernel(b, "fc2", mm(b, m, tg_mul(b, 4, H), H), TG_L(v->g, k->fc2.w), TG_L(mlp), NULL);
		x = act(b, m, TH);
		tg_kernel(b, "add", TH, TG_L(v->x1, mlp), TG_L(x), NULL);
	}
	lnf_out = act(b, m, TH);
	tg_kernel(b, "layernorm", tg_mul(b, 8, TH), TG_L(x, m->lnf), TG_L(lnf_out), NULL);
	logits = act(b, m, tg_mul(b, T, m->vocab));
	tg_kernel(b, "lm_head", mm(b, m, H, m->vocab), TG_L(lnf_out, m->wte), TG_L(logits), NULL);
	dlogits = gradbuf(b, m, tg_mul(b, T, m->vocab));
	loss = act(b, m, 1);
	tg_kernel(b, "cross_entropy", tg_mul(b, 5, tg_mul(b, T, m->vocab)), TG_L(logits, targets),
		  TG_L(dlogits, loss), NULL);

	/* backward */
	{
		uint32_t dlnf = gradbuf(b, m, TH);

		tg_kernel(b, "lm_head_dgrad", mm(b, m, m->vocab, H), TG_L(dlogits, m->wte),
			  TG_L(dlnf), NULL);
		tg_kernel(b, "lm_head_wgrad", mm(b, m, m->vocab, H), TG_L(dlogits, lnf_out),
			  TG_L(grad(b, m, m->wte)), NULL);
		dy = gradbuf(b, m, TH);
		tg_kernel(b, "layernorm_bwd", tg_mul(b, 12, TH), TG_L(dlnf, x, m->lnf),
			  TG_L(dy, grad(b, m, m->lnf)), NULL);
	}
	for (uint64_t l = m->layers; l-- > 0 && !b->failed;) {
		const struct block *k = &m->blocks[l];
		const struct saved *v = &sv[l];
		uint32_t dg, dh, dln2, dx1, dattn, dprobs, dscores, dqkv, dln1, dx;

		dg = gradbuf(b, m, tg_mul(b, 4, TH));
		tg_kernel(b, "fc2_dgrad", mm(b, m, H, tg_mul(b, 4, H)), TG_L(dy, k->fc2.w), TG_L(dg), NULL);
		tg_kernel(b, "fc2_wgrad", mm(b, m, H, tg_mul(b, 4, H)), TG_L(dy, v->g),
			  TG_L(grad(b, m, k->fc2.w)), NULL);
		dh = gradbuf(b, m, tg_mul(b, 4, TH));
		tg_kernel(b, "gelu_bwd", tg_mul(b, 40, TH), TG_L(dg, v->h), TG_L(dh), NULL);
		dln2 = gradbuf(b, m, TH);
		tg_kernel(b, "fc1_dgrad", mm(b, m, H, tg_mul(b, 4, H)), TG_L(dh, k->fc1.w), TG_L(dln2), NULL);
		tg_kernel(b, "fc1_wgrad", mm(b, m, H, tg_mul(b, 4, H)), TG_L(dh, v->ln2),
			  TG_L(grad(b, m, k->fc1.w)), NULL);
		dx1 = gradbuf(b, m, TH);
		tg_kernel(b, "layernorm_bwd", tg_mul(b, 12, TH), TG_L(dln2, v->x1, k->ln2),
			  TG_L(dx1, grad(b, m, k->ln2)), NULL);
		tg_kernel(b, "add", TH, TG_L(dy), NULL, TG_L(dx1));
		dattn = gradbuf(b, m, TH);
		tg_kernel(b, "proj_dgrad", mm(b, m, H, H), TG_L(dx1, k->proj.w), TG_L(dattn), NULL);
		tg_kernel(b, "proj_wgrad", mm(b, m, H, H), TG_L(dx1, v->attn),
			  TG_L(grad(b, m, k->proj.w)), NULL);
		dprobs = gradbuf(b, m, att);
		dqkv = gradbuf(b, m, tg_mul(b, 3, TH));
		tg_kernel(b, "attn_values_bwd", tg_mul(b, 2, attmm), TG_L(dattn, v->probs, v->qkv),
			  TG_L(dprobs, dqkv), NULL);
		dscores = gradbuf(b, m, att);
		tg_kernel(b, "softmax_bwd", tg_mul(b, 4, att), TG_L(dprobs, v->probs), TG_L(dscores),
			  NULL);
		tg_kernel(b, "attn_scores_bwd", tg_mul(b, 2, attmm), TG_L(dscores, v->qkv), NULL,
			  TG_L(dqkv));
		dln1 = gradbuf(b, m, TH);
		tg_kernel(b, "qkv_dgrad", mm(b, m, H, tg_mul(b, 3, H)), TG_L(dqkv, k->qkv.w), TG_L(dln1), NULL);
		tg_kernel(b, "qkv_wgrad", mm(b, m, H, tg_mul(b, 3, H)), TG_L(dqkv, v->ln1),
			  TG_L(grad(b, m, k->qkv.w)), NULL);
		dx = gradbuf(b, m, TH);
		tg_kernel(b, "layernorm_bwd", tg_mul(b, 12, TH), TG_L(dln1, v->x, k->ln1),
			  TG_L(dx, grad(b, m, k->ln1)), NULL);
		tg_kernel(b, "add", TH, TG_L(dx1), NULL, TG_L(dx));
		dy = dx;
	}
	tg_kernel(b, "embedding_bwd", tg_mul(b, 2, TH), TG_L(dy, tokens), TG_L(grad(b, m, m->wpe)),
		  TG_L(grad(b, m, m->wte)));

	/* optimizer */
	for (size_t i = 0; i < m->nparams && !b->failed; i++) {
		const struct param *p = &m->params[i];

		tg_optim_step(b, "adam", tg_mul(b, 12, p->elems), p->grad, p->p,
			      (const uint32_t[]){ p->m, p->v }, 2, first);
	}
	free(sv);
}

static void gen_transformer(struct tg_builder *b, const struct tg_settings *s)
{
	struct model m = {
		.layers = tg_get(s, "layers"),
		.hidden = tg_get(s, "hidden"),
		.heads = tg_get(s, "heads"),
		.seq = tg_get(s, "seq"),
		.batch = tg_get(s, "batch"),
		.vocab = tg_get(s, "vocab"),
		.e = s->elem_bytes,
	};
	uint64_t iters = tg_get(s, "iters");

	if (m.hidden % m.heads) {
		tg_fail(b, "--hidden %llu is not a multiple of --heads %llu",
			(unsigned long long)m.hidden, (unsigned long long)m.heads);
		return;
	}
	m.tokens = tg_mul(b, m.batch, m.seq);
	m.params = calloc(3 + 6 * m.layers, sizeof(*m.params));
	m.blocks = calloc(m.layers, sizeof(*m.blocks));
	if (!m.params || !m.blocks) {
		tg_fail(b, "out of memory");
		goto out;
	}
	m.wte = param(b, &m, tg_mul(b, m.vocab, m.hidden), "wte", 0);
	m.wpe = param(b, &m, tg_mul(b, m.seq, m.hidden), "wpe", 0);
	for (uint64_t l = 0; l < m.layers; l++) {
		struct block *k = &m.blocks[l];

		k->ln1 = param(b, &m, tg_mul(b, 2, m.hidden), "ln1", l);
		k->qkv = linear(b, &m, m.hidden, tg_mul(b, 3, m.hidden), "qkv", l);
		k->proj = linear(b, &m, m.hidden, m.hidden, "proj", l);
		k->ln2 = param(b, &m, tg_mul(b, 2, m.hidden), "ln2", l);
		k->fc1 = linear(b, &m, m.hidden, tg_mul(b, 4, m.hidden), "fc1", l);
		k->fc2 = linear(b, &m, tg_mul(b, 4, m.hidden), m.hidden, "fc2", l);
	}
	m.lnf = param(b, &m, tg_mul(b, 2, m.hidden), "lnf", 0);
	for (uint64_t it = 0; it < iters && !b->failed; it++) {
		tg_iteration(b, it);
		step(b, &m, it == 0);
	}
out:
	free(m.params);
	free(m.blocks);
}

static const struct tg_param p_transformer[] = {
	{ "layers", 12, 1, 1000, "decoder blocks" },
	{ "hidden", 768, 1, 1u << 16, "model width" },
	{ "heads", 12, 1, 1024, "attention heads (divide hidden)" },
	{ "seq", 1024, 1, 1u << 20, "tokens per sequence" },
	{ "batch", 4, 1, 1u << 16, "sequences per step" },
	{ "vocab", 50304, 1, 1u << 22, "vocabulary (tied embedding and output head)" },
	{ "iters", 3, 1, 10000, "training steps" },
};

const struct tg_family tg_family_transformer = {
	.name = "transformer",
	.model = "transformer",
	.summary = "GPT-style training steps: forward, loss, backward, Adam",
	.default_elem_bytes = 4,
	.params = p_transformer,
	.nparams = 7,
	.generate = gen_transformer,
};
