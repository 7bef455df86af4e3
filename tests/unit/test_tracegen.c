/* SPDX-License-Identifier: MIT */
/*
 * test_tracegen.c - dao-tracegen's families: every trace parses with
 * libdao's reader; kernel counts, flop totals and parameter counts match
 * closed formulas (written here independently of the generators); data
 * that starts on the host is read first and everything else written first;
 * transient buffers are freed and persistent ones are not; the same
 * parameters give the same bytes; traces of 50,000 kernels come out; bad
 * parameters are refused and write nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/tracegen/family.h"
#include "tap.h"
#include "dao_trace.h"

struct kv {
	const char *name, *value;
};

/* Generate family `fam` with the given settings into memory. Returns the
 * text (caller frees) or NULL with err set. */
static char *gen(const char *fam, const struct kv *kv, size_t *len, char *err, size_t errlen)
{
	const struct tg_family *f = tg_family_find(fam);
	struct tg_settings s;
	char *buf = NULL;
	FILE *m;
	int rc;

	if (!f) {
		snprintf(err, errlen, "no family %s", fam);
		return NULL;
	}
	tg_settings_init(&s, f);
	for (; kv && kv->name; kv++)
		if (tg_settings_set(&s, kv->name, kv->value, err, errlen))
			return NULL;
	m = open_memstream(&buf, len);
	if (!m) {
		snprintf(err, errlen, "open_memstream failed");
		return NULL;
	}
	rc = tg_generate(&s, m, err, errlen);
	fclose(m);
	if (rc) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int is_host_kind(const char *kind)
{
	return !strcmp(kind, "input") || !strcmp(kind, "param") || !strcmp(kind, "state");
}

static int is_transient_kind(const char *kind)
{
	return !strcmp(kind, "act") || !strcmp(kind, "grad");
}

struct facts {
	size_t kernels;
	long double flops;
	uint64_t param_bytes;
	size_t kernels_named_adam;
	int rules_ok; /* first access agrees with kind; every buffer used */
	int frees_ok; /* transients freed, persistent (not input) buffers not */
	char why[400];
};

/* Parse and check the format-level rules; fill the figures. */
static int examine(const char *text, size_t len, struct facts *fx)
{
	struct dao_trace *t;
	char err[256];
	uint32_t *first_mode;
	char *freed;

	memset(fx, 0, sizeof(*fx));
	if (dao_trace_read_mem(text, len, &t, err, sizeof(err)) != DAO_OK) {
		snprintf(fx->why, sizeof(fx->why), "reader: %s", err);
		return -1;
	}
	first_mode = calloc(t->nbufs + 1, sizeof(*first_mode));
	freed = calloc(t->nbufs + 1, 1);
	fx->rules_ok = fx->frees_ok = 1;
	for (size_t i = 0; i < t->nevents; i++) {
		const struct dao_trace_event *e = &t->events[i];

		if (e->type == DAO_TRACE_FREE) {
			freed[e->u.free_buf] = 1;
			continue;
		}
		if (e->type != DAO_TRACE_KERNEL)
			continue;
		fx->kernels++;
		fx->flops += e->u.kernel.flops;
		if (!strcmp(e->u.kernel.name, "adam"))
			fx->kernels_named_adam++;
		for (uint32_t j = 0; j < e->u.kernel.nops; j++) {
			const struct dao_trace_operand *o = &dao_trace_kernel_ops(t, e)[j];

			if (!first_mode[o->buf])
				first_mode[o->buf] = o->mode;
		}
	}
	for (size_t b = 0; b < t->nbufs; b++) {
		const struct dao_trace_buffer *bf = &t->bufs[b];
		const char *kind = bf->kind ? bf->kind : "";
		int host = is_host_kind(kind);

		if (!strcmp(kind, "param"))
			fx->param_bytes += bf->bytes;
		if (!first_mode[b] && fx->rules_ok) {
			fx->rules_ok = 0;
			snprintf(fx->why, sizeof(fx->why), "buffer %llu never used",
				 (unsigned long long)bf->id);
		} else if (fx->rules_ok && host != (first_mode[b] != DAO_W)) {
			fx->rules_ok = 0;
			snprintf(fx->why, sizeof(fx->why), "buffer %llu (%s) first accessed with mode %u",
				 (unsigned long long)bf->id, kind, first_mode[b]);
		}
		if (fx->frees_ok && is_transient_kind(kind) != freed[b] && strcmp(kind, "input")) {
			fx->frees_ok = 0;
			snprintf(fx->why + strlen(fx->why), sizeof(fx->why) - strlen(fx->why),
				 " buffer %llu (%s) %sfreed", (unsigned long long)bf->id, kind,
				 freed[b] ? "" : "not ");
		}
	}
	free(first_mode);
	free(freed);
	dao_trace_free(t);
	return 0;
}

struct expect {
	const char *family;
	struct kv kv[8];
	unsigned long long kernels; /* the closed formula's value */
};

static unsigned long long cholesky_kernels(unsigned long long T)
{
	return T + T * (T - 1) + T * (T - 1) * (T - 2) / 6;
}

static unsigned long long lu_kernels(unsigned long long T)
{
	return T + T * (T - 1) + (T - 1) * T * (2 * T - 1) / 6;
}

static unsigned long long transformer_kernels(unsigned long long L, unsigned long long iters)
{
	return iters * (34 * L + 11);
}

static unsigned long long cnn_kernels(unsigned long long S, unsigned long long blocks,
				      unsigned long long iters)
{
	return iters * (9 * S * blocks + 2 * S + 4);
}

static unsigned long long lstm_kernels(unsigned long long L, unsigned long long S,
				       unsigned long long iters)
{
	return iters * (8 * L * S + 2 * S + L + 1);
}

static void check_case(const struct expect *c)
{
	char err[300], label[200];
	struct facts fx;
	size_t len, len2;
	char *text, *again;
	size_t n = 0;

	n = (size_t)snprintf(label, sizeof(label), "%s", c->family);
	for (const struct kv *kv = c->kv; kv->name && n < sizeof(label); kv++)
		n += (size_t)snprintf(label + n, sizeof(label) - n, " --%s %s", kv->name, kv->value);
	text = gen(c->family, c->kv, &len, err, sizeof(err));
	if (!tap_ok(text != NULL, "%s: generated (%s)", label, text ? "ok" : err)) {
		tap_ok(0, "%s: parses", label);
		return;
	}
	tap_ok(examine(text, len, &fx) == 0, "%s: parses with libdao's reader %s", label, fx.why);
	tap_ok(fx.kernels == c->kernels, "%s: %zu kernels, formula %llu", label, fx.kernels,
	       c->kernels);
	tap_ok(fx.rules_ok, "%s: host data read first, the rest written first %s", label, fx.why);
	tap_ok(fx.frees_ok, "%s: transients freed after last use, the rest kept %s", label, fx.why);
	again = gen(c->family, c->kv, &len2, err, sizeof(err));
	tap_ok(again && len2 == len && !memcmp(text, again, len), "%s: deterministic", label);
	free(again);
	free(text);
}

/* Total flops against the algorithms' closed forms. */
static void check_flops(void)
{
	char err[300];
	struct facts fx;
	size_t len;
	char *text;

	text = gen("gemm", (struct kv[]){ { "mt", "3" }, { "nt", "5" }, { "kt", "7" },
					  { "tile", "100" }, { NULL, NULL } },
		   &len, err, sizeof(err));
	tap_ok(text && !examine(text, len, &fx) && fx.flops == 2.0L * 300 * 500 * 700,
	       "gemm: total flops are 2 m n k");
	free(text);

	text = gen("cholesky", (struct kv[]){ { "tiles", "10" }, { "tile", "300" }, { NULL, NULL } },
		   &len, err, sizeof(err));
	tap_ok(text && !examine(text, len, &fx) &&
		       fx.flops / (3000.0L * 3000 * 3000 / 3) > 0.999L &&
		       fx.flops / (3000.0L * 3000 * 3000 / 3) < 1.001L,
	       "cholesky: total flops are n^3/3 (%.6Lg)", fx.flops / (3000.0L * 3000 * 3000 / 3));
	free(text);

	text = gen("lu", (struct kv[]){ { "tiles", "10" }, { "tile", "300" }, { NULL, NULL } }, &len,
		   err, sizeof(err));
	tap_ok(text && !examine(text, len, &fx) &&
		       fx.flops / (2 * 3000.0L * 3000 * 3000 / 3) > 0.999L &&
		       fx.flops / (2 * 3000.0L * 3000 * 3000 / 3) < 1.001L,
	       "lu: total flops are 2n^3/3 (%.6Lg)", fx.flops / (2 * 3000.0L * 3000 * 3000 / 3));
	free(text);

	/* 2-D, 3 fields, 2 steps: per point and field 2 (5 + 3 - 1) flops. */
	text = gen("stencil2d", (struct kv[]){ { "n", "400" }, { "tile", "100" }, { "steps", "2" },
					       { NULL, NULL } },
		   &len, err, sizeof(err));
	tap_ok(text && !examine(text, len, &fx) && fx.flops == 2.0L * 3 * 400 * 400 * 2 * 7,
	       "stencil2d: total flops are steps x fields x points x 2 (5 + fields - 1)");
	free(text);
	text = gen("stencil3d", (struct kv[]){ { "n", "40" }, { "tile", "10" }, { "arrays", "2" },
					       { NULL, NULL } },
		   &len, err, sizeof(err));
	tap_ok(text && !examine(text, len, &fx) && fx.flops == 4.0L * 2 * 40 * 40 * 40 * 2 * 8,
	       "stencil3d: total flops are steps x fields x points x 2 (7 + fields - 1)");
	free(text);
}

/* Parameter counts against the models' published sizes. */
static void check_params(void)
{
	char err[300];
	struct facts fx;
	size_t len;
	char *text;

	/* GPT-2 small: 124,439,808 parameters (vocab 50257, 1024 positions). */
	text = gen("transformer",
		   (struct kv[]){ { "vocab", "50257" }, { "seq", "1024" }, { "iters", "1" }, { NULL, NULL } },
		   &len, err, sizeof(err));
	tap_ok(text && !examine(text, len, &fx) && fx.param_bytes == 124439808ull * 4,
	       "transformer: GPT-2 small has 124,439,808 parameters (%llu bytes)",
	       (unsigned long long)fx.param_bytes);
	tap_ok(fx.kernels_named_adam == 6 * 12 + 3, "transformer: one Adam kernel per parameter");
	free(text);

	/* LSTM: per layer 4H(I + H) weights and 4H biases; head C H + C. */
	text = gen("lstm", (struct kv[]){ { "layers", "3" }, { "hidden", "64" }, { "classes", "10" },
					  { "seq", "5" }, { NULL, NULL } },
		   &len, err, sizeof(err));
	tap_ok(text && !examine(text, len, &fx) &&
		       fx.param_bytes == 4ull * (3 * (4 * 64 * (64 + 64) + 4 * 64) + 10 * 64 + 10),
	       "lstm: parameters 4H(I+H)+4H per layer plus the head");
	free(text);
}

/*
 * The training families' first step differs as a real job's does: it
 * creates the optimizer's state, writing it (w), where every later step
 * updates it (rw); nothing else about the optimizer kernels changes.
 */
static void check_first_step(void)
{
	static const struct {
		const char *family, *kernel;
		unsigned nstate;
		struct kv kv[8];
	} fams[] = {
		{ "transformer", "adam", 2,
		  { { "layers", "1" }, { "hidden", "8" }, { "heads", "2" }, { "seq", "4" },
		    { "batch", "1" }, { "vocab", "10" } } },
		{ "lstm", "adam", 2, { { "layers", "2" }, { "seq", "3" }, { "hidden", "4" } } },
		{ "cnn", "sgd", 1,
		  { { "stages", "2" }, { "blocks", "1" }, { "width", "2" }, { "image", "4" } } },
	};

	for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
		char err[300];
		size_t len, steps[3] = { 0 }, as_wanted[3] = { 0 };
		char *text = gen(fams[f].family, fams[f].kv, &len, err, sizeof(err));
		struct dao_trace *t = NULL;
		int it = -1;

		if (!text || dao_trace_read_mem(text, len, &t, err, sizeof(err)))
			tap_bail("%s: %s", fams[f].family, err);
		for (size_t i = 0; i < t->nevents; i++) {
			const struct dao_trace_event *e = &t->events[i];
			unsigned w = 0, rw = 0;

			if (e->type == DAO_TRACE_ITERATION && it < 2)
				it++;
			if (e->type != DAO_TRACE_KERNEL || strcmp(e->u.kernel.name, fams[f].kernel) ||
			    it < 0)
				continue;
			for (uint32_t j = 0; j < e->u.kernel.nops; j++) {
				uint32_t mode = dao_trace_kernel_ops(t, e)[j].mode;

				w += mode == DAO_W;
				rw += mode == DAO_RW;
			}
			steps[it]++;
			as_wanted[it] += it == 0 ? w == fams[f].nstate && rw == 1
						 : w == 0 && rw == fams[f].nstate + 1;
		}
		tap_ok(it == 2 && steps[0] && steps[0] == steps[1] && steps[1] == steps[2] &&
			       as_wanted[0] == steps[0] && as_wanted[1] == steps[1] &&
			       as_wanted[2] == steps[2],
		       "%s: three steps by default; the first writes the optimizer's state, the others update it",
		       fams[f].family);
		dao_trace_free(t);
		free(text);
	}
}

/* Bad parameters: refused with a reason, nothing written. */
static void check_refusals(void)
{
	const struct tg_family *f = tg_family_find("stencil2d");
	struct tg_settings s;
	char err[300] = "", *buf = NULL;
	size_t len = 0;
	FILE *m;

	tg_settings_init(&s, f);
	tap_ok(tg_settings_set(&s, "tile", "0", err, sizeof(err)) && strstr(err, "outside"),
	       "a parameter below its minimum is refused (%s)", err);
	tap_ok(tg_settings_set(&s, "tile", "12x", err, sizeof(err)) && strstr(err, "decimal"),
	       "a malformed number is refused (%s)", err);
	tap_ok(tg_settings_set(&s, "tile", "-1", err, sizeof(err)) && strstr(err, "decimal"),
	       "a negative number is refused (%s)", err);
	tap_ok(tg_settings_set(&s, "tiles", "4", err, sizeof(err)) && strstr(err, "no parameter"),
	       "an unknown parameter is refused (%s)", err);
	tap_ok(tg_settings_set(&s, "dtype", "float16", err, sizeof(err)) && strstr(err, "float32"),
	       "an unknown dtype is refused (%s)", err);
	tap_ok(tg_family_find("bogus") == NULL && tg_family_find(NULL) == NULL,
	       "an unknown family is not found");

	tg_settings_init(&s, f);
	tg_settings_set(&s, "n", "1000", err, sizeof(err));
	tg_settings_set(&s, "tile", "300", err, sizeof(err));
	m = open_memstream(&buf, &len);
	tap_ok(tg_generate(&s, m, err, sizeof(err)) && strstr(err, "not a multiple"),
	       "a grid that the tiles do not divide is refused (%s)", err);
	fclose(m);
	tap_ok(len == 0, "and nothing is written");
	free(buf);

	f = tg_family_find("transformer");
	tg_settings_init(&s, f);
	tg_settings_set(&s, "heads", "7", err, sizeof(err));
	buf = NULL;
	m = open_memstream(&buf, &len);
	tap_ok(tg_generate(&s, m, err, sizeof(err)) && strstr(err, "multiple of --heads"),
	       "heads that do not divide the width are refused (%s)", err);
	fclose(m);
	free(buf);

	f = tg_family_find("transformer");
	tg_settings_init(&s, f);
	tg_settings_set(&s, "seq", "1048576", err, sizeof(err));
	tg_settings_set(&s, "batch", "65536", err, sizeof(err));
	buf = NULL;
	m = open_memstream(&buf, &len);
	tap_ok(tg_generate(&s, m, err, sizeof(err)) && strstr(err, "overflow"),
	       "sizes beyond 2^63 are refused (%s)", err);
	fclose(m);
	tap_ok(len == 0, "and nothing is written");
	free(buf);

	f = tg_family_find("lstm");
	tg_settings_init(&s, f);
	tg_settings_set(&s, "layers", "1000", err, sizeof(err));
	tg_settings_set(&s, "seq", "1000000", err, sizeof(err));
	buf = NULL;
	m = open_memstream(&buf, &len);
	tap_ok(tg_generate(&s, m, err, sizeof(err)) && strstr(err, "kernels"),
	       "more kernels than the limit are refused (%s)", err);
	fclose(m);
	free(buf);
}

int main(void)
{
	const struct expect cases[] = {
		{ "cholesky", { { "tiles", "1" }, { "tile", "8" } }, cholesky_kernels(1) },
		{ "cholesky", { { "tiles", "7" }, { "tile", "64" } }, cholesky_kernels(7) },
		{ "cholesky", { { "tiles", "12" }, { "tile", "32" }, { "dtype", "float32" } },
		  cholesky_kernels(12) },
		{ "lu", { { "tiles", "1" }, { "tile", "8" } }, lu_kernels(1) },
		{ "lu", { { "tiles", "9" }, { "tile", "64" } }, lu_kernels(9) },
		{ "gemm", { { "mt", "4" }, { "nt", "3" }, { "kt", "5" }, { "tile", "64" } }, 4 * 3 * 5 },
		{ "gemm", { { "mt", "1" }, { "nt", "1" }, { "kt", "1" }, { "tile", "1" } }, 1 },
		{ "stencil2d", { { "n", "640" }, { "tile", "128" }, { "arrays", "3" }, { "steps", "3" } },
		  3 * 3 * 5 * 5 },
		{ "stencil2d", { { "n", "64" }, { "tile", "64" }, { "arrays", "1" }, { "steps", "2" } },
		  2 },
		{ "stencil3d", { { "n", "96" }, { "tile", "32" }, { "arrays", "4" }, { "steps", "2" } },
		  2 * 4 * 27 },
		{ "transformer",
		  { { "layers", "2" }, { "hidden", "64" }, { "heads", "4" }, { "seq", "32" },
		    { "batch", "2" }, { "vocab", "100" }, { "iters", "3" } },
		  transformer_kernels(2, 3) },
		{ "transformer",
		  { { "layers", "1" }, { "hidden", "8" }, { "heads", "1" }, { "seq", "1" },
		    { "batch", "1" }, { "vocab", "1" } },
		  transformer_kernels(1, 3) }, /* three steps by default */
		{ "lstm",
		  { { "layers", "3" }, { "seq", "7" }, { "batch", "4" }, { "hidden", "16" },
		    { "classes", "5" }, { "iters", "2" } },
		  lstm_kernels(3, 7, 2) },
		{ "lstm", { { "layers", "1" }, { "seq", "1" }, { "hidden", "4" } }, lstm_kernels(1, 1, 3) },
		{ "cnn",
		  { { "stages", "3" }, { "blocks", "2" }, { "width", "4" }, { "image", "8" },
		    { "batch", "2" }, { "classes", "5" }, { "iters", "2" } },
		  cnn_kernels(3, 2, 2) },
		{ "cnn", { { "stages", "1" }, { "blocks", "1" }, { "width", "1" }, { "image", "1" } },
		  cnn_kernels(1, 1, 3) },
		/* 50,000 kernels and more, for timing the bounds. */
		{ "cholesky", { { "tiles", "67" }, { "tile", "512" } }, cholesky_kernels(67) },
		{ "lstm", { { "layers", "4" }, { "seq", "1500" }, { "iters", "1" } },
		  lstm_kernels(4, 1500, 1) },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
	tap_ok(cholesky_kernels(67) >= 50000 && lstm_kernels(4, 1500, 1) >= 50000,
	       "the large cases have at least 50,000 kernels");
	check_flops();
	check_params();
	check_first_step();
	check_refusals();
	tap_plan_done();
	return tap_exit();
}
