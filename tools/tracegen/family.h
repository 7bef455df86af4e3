/* SPDX-License-Identifier: MIT */
/*
 * family.h - the job families dao-tracegen writes, their parameters, and
 * the one entry point that turns a family and its settings into a trace.
 */
#ifndef DAO_TRACEGEN_FAMILY_H
#define DAO_TRACEGEN_FAMILY_H

#include <stdint.h>
#include <stdio.h>

#include "builder.h"

#define TG_MAX_PARAMS 12

struct tg_param {
	const char *name; /* the option is --NAME */
	uint64_t def, min, max;
	const char *help;
};

struct tg_family;

/* A family with its parameter values (in the order of family->params) and
 * its element type. */
struct tg_settings {
	const struct tg_family *family;
	uint64_t val[TG_MAX_PARAMS];
	unsigned elem_bytes; /* 4 (float32) or 8 (float64) */
};

struct tg_family {
	const char *name;  /* on the command line */
	const char *model; /* model= in the trace's comment */
	const char *summary;
	unsigned default_elem_bytes;
	const struct tg_param *params;
	unsigned nparams;
	/* Append the job's kernels; errors go through tg_fail. */
	void (*generate)(struct tg_builder *b, const struct tg_settings *s);
};

extern const struct tg_family *const tg_families[];
extern const unsigned tg_nfamilies;

/* The family named `name`, or NULL. */
const struct tg_family *tg_family_find(const char *name);

/* Defaults of family f. */
void tg_settings_init(struct tg_settings *s, const struct tg_family *f);

/* Set parameter `name` (without "--") from decimal `value`, or "dtype" from
 * float32/float64. Returns 0, or -1 with the reason in err. */
int tg_settings_set(struct tg_settings *s, const char *name, const char *value, char *err,
		    size_t errlen);

/* Value of parameter `name` (which must exist). */
uint64_t tg_get(const struct tg_settings *s, const char *name);

/* Generate the trace and write it to out. Returns 0, or -1 with the reason
 * in err (parameters that do not fit together, overflow, I/O). */
int tg_generate(const struct tg_settings *s, FILE *out, char *err, size_t errlen);

/* Optimizer state of a training family's parameter (optimizer.c): kept to
 * the end, created on the device by the first step, labelled
 * LABEL.LAYER.WHICH. */
uint32_t tg_optim_state(struct tg_builder *b, uint64_t bytes, const char *label,
			unsigned long long layer, const char *which);
/* One optimizer kernel for a parameter: reads its gradient, updates the
 * parameter, and writes its nstate state buffers at the first step (first
 * non-zero), updates them at the others. */
void tg_optim_step(struct tg_builder *b, const char *name, uint64_t flops, uint32_t grad,
		   uint32_t param, const uint32_t *state, unsigned nstate, int first);

/* The families, in families_*.c. */
extern const struct tg_family tg_family_cholesky, tg_family_lu, tg_family_gemm,
	tg_family_stencil2d, tg_family_stencil3d, tg_family_transformer, tg_family_lstm,
	tg_family_cnn;

#endif /* DAO_TRACEGEN_FAMILY_H */
