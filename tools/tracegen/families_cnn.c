/* SPDX-License-Identifier: MIT */
/*
 * families_cnn.c - training steps of a plain convolutional network (VGG
 * style): `stages` stages of `blocks` 3x3 convolutions, each followed by a
 * ReLU, the channels doubling from `width` at each stage and the image
 * halved by a 2x2 max pool between stages; then a global average pool, a
 * fully connected classifier and softmax cross-entropy. Backward in
 * reverse: the head, then per layer the ReLU's backward, the batch norm's
 * (with its scale and shift's gradient), the weight gradient and the input
 * gradient (none for the network's input); then SGD with momentum per
 * parameter, whose velocity the first step creates (optimizer.c). Kernels
 * per training step: 9 N + 2 S + 4 with N = stages x blocks convolutions
 * and S stages.
 *
 * Buffers: weights (each convolution's 3x3 kernels, its batch norm's scale
 * and shift, the classifier's weights and bias) start on the host and
 * stay, with their velocities; the
 * images and labels of each step start on the host; activations and
 * gradients start nowhere and are freed after their last use (backward
 * reads a convolution's input and output and its ReLU's output).
 * Flops: 2 x 9 Cin Cout per output pixel for a convolution (its two
 * gradients as much each), 1 per element for a ReLU, a pool or their
 * backward, 8 for a batch norm and 12 for its backward, 2 C K per image
 * for the classifier (and each of its gradients), 5 per logit for the
 * loss, 4 per parameter for SGD.
 */
#include <stdlib.h>

#include "family.h"

struct conv {
	uint32_t w, vel, grad;
	uint32_t bn, bn_vel, bn_grad; /* the batch norm's scale and shift */
	uint64_t elems, cin, cout, side; /* side: of its square output */
	uint32_t x, y, a; /* saved for backward: its input and output, the ReLU's output */
};

struct cnn {
	uint64_t S, N, blocks, B, C, e;
	struct conv *conv;
	uint32_t fc, fc_vel, fc_grad;
	uint64_t fc_elems, classes;
	uint32_t *pooled_from; /* per stage but the last: the activation its pool reads */
};

static uint32_t act(struct tg_builder *b, const struct cnn *n, uint64_t elems, const char *kind)
{
	return tg_buffer(b, tg_mul(b, elems, n->e), 0, kind, NULL);
}

/* Elements of a batch of side x side images of c channels. */
static uint64_t image(struct tg_builder *b, const struct cnn *n, uint64_t c, uint64_t side)
{
	return tg_mul(b, tg_mul(b, n->B, c), tg_mul(b, side, side));
}

static void sgd(struct tg_builder *b, uint64_t elems, uint32_t grad, uint32_t w, uint32_t vel,
		int first)
{
	tg_optim_step(b, "sgd", tg_mul(b, 4, elems), grad, w, &vel, 1, first);
}

static void step(struct tg_builder *b, struct cnn *n, int first)
{
	uint64_t side0 = n->conv[0].side, side = side0, c = n->conv[n->N - 1].cout;
	uint32_t x, pooled, logits, dlogits, dpooled, dx = 0;
	uint32_t images = tg_buffer(b, tg_mul(b, image(b, n, 3, side0), n->e), TG_HOST, "input",
				    "images");
	uint32_t labels = tg_buffer(b, tg_mul(b, n->B, 4), TG_HOST, "input", "labels");

	/* forward */
	x = images;
	for (uint64_t i = 0; i < n->N && !b->failed; i++) {
		struct conv *k = &n->conv[i];
		uint64_t out = image(b, n, k->cout, k->side);
		uint32_t y = act(b, n, out, "act"), z;

		if (i && i % n->blocks == 0) { /* a new stage: pool the last one's output */
			uint32_t p = act(b, n, image(b, n, k->cin, k->side), "act");

			n->pooled_from[i / n->blocks - 1] = x;
			tg_kernel(b, "maxpool", image(b, n, k->cin, side), TG_L(x), TG_L(p), NULL);
			x = p;
		}
		side = k->side;
		k->x = x;
		k->y = y;
		tg_kernel(b, "conv", tg_mul(b, tg_mul(b, 18, out), k->cin), TG_L(x, k->w), TG_L(y),
			  NULL);
		z = act(b, n, out, "act");
		tg_kernel(b, "batchnorm", tg_mul(b, 8, out), TG_L(y, k->bn), TG_L(z), NULL);
		k->a = act(b, n, out, "act");
		tg_kernel(b, "relu", out, TG_L(z), TG_L(k->a), NULL);
		x = k->a;
	}
	pooled = act(b, n, tg_mul(b, n->B, c), "act");
	tg_kernel(b, "avgpool", image(b, n, c, side), TG_L(x), TG_L(pooled), NULL);
	logits = act(b, n, tg_mul(b, n->B, n->classes), "act");
	tg_kernel(b, "fc", tg_mul(b, tg_mul(b, 2, n->B), tg_mul(b, c, n->classes)),
		  TG_L(pooled, n->fc), TG_L(logits), NULL);
	dlogits = act(b, n, tg_mul(b, n->B, n->classes), "grad");
	tg_kernel(b, "softmax_xent", tg_mul(b, 5, tg_mul(b, n->B, n->classes)),
		  TG_L(logits, labels), TG_L(dlogits), NULL);

	/* backward */
	dpooled = act(b, n, tg_mul(b, n->B, c), "grad");
	tg_kernel(b, "fc_dgrad", tg_mul(b, tg_mul(b, 2, n->B), tg_mul(b, c, n->classes)),
		  TG_L(dlogits, n->fc), TG_L(dpooled), NULL);
	n->fc_grad = act(b, n, n->fc_elems, "grad");
	tg_kernel(b, "fc_wgrad", tg_mul(b, tg_mul(b, 2, n->B), tg_mul(b, c, n->classes)),
		  TG_L(dlogits, pooled), TG_L(n->fc_grad), NULL);
	dx = act(b, n, image(b, n, c, side), "grad");
	tg_kernel(b, "avgpool_bwd", image(b, n, c, side), TG_L(dpooled), TG_L(dx), NULL);
	for (uint64_t i = n->N; i-- > 0 && !b->failed;) {
		struct conv *k = &n->conv[i];
		uint64_t out = image(b, n, k->cout, k->side);
		uint32_t dz = act(b, n, out, "grad"), dy = act(b, n, out, "grad");

		tg_kernel(b, "relu_bwd", out, TG_L(dx, k->a), TG_L(dz), NULL);
		k->bn_grad = act(b, n, tg_mul(b, 2, k->cout), "grad");
		tg_kernel(b, "batchnorm_bwd", tg_mul(b, 12, out), TG_L(dz, k->y, k->bn),
			  TG_L(dy, k->bn_grad), NULL);
		k->grad = act(b, n, k->elems, "grad");
		tg_kernel(b, "conv_wgrad", tg_mul(b, tg_mul(b, 18, out), k->cin), TG_L(dy, k->x),
			  TG_L(k->grad), NULL);
		if (i == 0)
			break; /* no gradient for the images */
		dx = act(b, n, image(b, n, k->cin, k->side), "grad");
		tg_kernel(b, "conv_dgrad", tg_mul(b, tg_mul(b, 18, out), k->cin), TG_L(dy, k->w),
			  TG_L(dx), NULL);
		if (i % n->blocks == 0) { /* back through the pool before this stage */
			uint32_t from = n->pooled_from[i / n->blocks - 1];
			uint32_t dfrom = act(b, n, image(b, n, k->cin, 2 * k->side), "grad");

			tg_kernel(b, "maxpool_bwd", image(b, n, k->cin, 2 * k->side), TG_L(dx, from),
				  TG_L(dfrom), NULL);
			dx = dfrom;
		}
	}

	/* optimizer */
	for (uint64_t i = 0; i < n->N && !b->failed; i++) {
		const struct conv *k = &n->conv[i];

		sgd(b, k->elems, k->grad, k->w, k->vel, first);
		sgd(b, tg_mul(b, 2, k->cout), k->bn_grad, k->bn, k->bn_vel, first);
	}
	sgd(b, n->fc_elems, n->fc_grad, n->fc, n->fc_vel, first);
}

static void gen_cnn(struct tg_builder *b, const struct tg_settings *s)
{
	struct cnn n = {
		.S = tg_get(s, "stages"),
		.blocks = tg_get(s, "blocks"),
		.B = tg_get(s, "batch"),
		.classes = tg_get(s, "classes"),
		.e = s->elem_bytes,
	};
	uint64_t width = tg_get(s, "width"), side = tg_get(s, "image");
	uint64_t iters = tg_get(s, "iters"), cin = 3;

	if (side % (UINT64_C(1) << (n.S - 1))) {
		tg_fail(b, "--image %llu is not a multiple of 2^(stages - 1) = %llu",
			(unsigned long long)side, (unsigned long long)(UINT64_C(1) << (n.S - 1)));
		return;
	}
	n.N = n.S * n.blocks;
	if ((9 * n.N + 2 * n.S + 4) * iters > TG_MAX_KERNELS) {
		tg_fail(b, "more than %u kernels", TG_MAX_KERNELS);
		return;
	}
	n.conv = calloc(n.N, sizeof(*n.conv));
	n.pooled_from = calloc(n.S, sizeof(*n.pooled_from));
	if (!n.conv || !n.pooled_from) {
		tg_fail(b, "out of memory");
		goto out;
	}
	for (uint64_t i = 0; i < n.N && !b->failed; i++) {
		struct conv *k = &n.conv[i];
		uint64_t stage = i / n.blocks, bytes;

		k->cin = cin;
		k->cout = tg_mul(b, width, UINT64_C(1) << stage);
		k->side = side >> stage;
		k->elems = tg_mul(b, tg_mul(b, 9, k->cin), k->cout);
		bytes = tg_mul(b, k->elems, n.e);
		k->w = tg_buffer(b, bytes, TG_HOST | TG_KEEP, "param", "conv.%llu",
				 (unsigned long long)i);
		k->vel = tg_optim_state(b, bytes, "conv", i, "vel");
		bytes = tg_mul(b, tg_mul(b, 2, k->cout), n.e);
		k->bn = tg_buffer(b, bytes, TG_HOST | TG_KEEP, "param", "bn.%llu",
				  (unsigned long long)i);
		k->bn_vel = tg_optim_state(b, bytes, "bn", i, "vel");
		cin = k->cout;
	}
	n.C = cin;
	n.fc_elems = tg_add(b, tg_mul(b, n.C, n.classes), n.classes);
	n.fc = tg_buffer(b, tg_mul(b, n.fc_elems, n.e), TG_HOST | TG_KEEP, "param", "fc.0");
	n.fc_vel = tg_optim_state(b, tg_mul(b, n.fc_elems, n.e), "fc", 0, "vel");
	for (uint64_t it = 0; it < iters && !b->failed; it++) {
		tg_iteration(b, it);
		step(b, &n, it == 0);
	}
out:
	free(n.conv);
	free(n.pooled_from);
}

static const struct tg_param p_cnn[] = {
	{ "stages", 4, 1, 16, "stages (the image halves between them)" },
	{ "blocks", 4, 1, 64, "3x3 convolutions per stage" },
	{ "width", 64, 1, 1u << 14, "channels of the first stage (doubled at each)" },
	{ "image", 64, 1, 1u << 14, "side of the square input images" },
	{ "batch", 32, 1, 1u << 16, "images per step" },
	{ "classes", 1000, 1, 1u << 22, "outputs of the classifier" },
	{ "iters", 3, 1, 10000, "training steps" },
};

const struct tg_family tg_family_cnn = {
	.name = "cnn",
	.model = "cnn",
	.summary = "plain CNN training steps (VGG style): convolutions, pools, SGD with momentum",
	.default_elem_bytes = 4,
	.params = p_cnn,
	.nparams = 7,
	.generate = gen_cnn,
};
