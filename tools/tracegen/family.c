/* SPDX-License-Identifier: MIT */
/*
 * family.c - the family table, parameter parsing and the generate step
 * shared by every family.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"

const struct tg_family *const tg_families[] = {
	&tg_family_cholesky,  &tg_family_lu,	      &tg_family_gemm, &tg_family_stencil2d,
	&tg_family_stencil3d, &tg_family_transformer, &tg_family_lstm, &tg_family_cnn,
};
const unsigned tg_nfamilies = sizeof(tg_families) / sizeof(tg_families[0]);

const struct tg_family *tg_family_find(const char *name)
{
	for (unsigned i = 0; name && i < tg_nfamilies; i++)
		if (!strcmp(tg_families[i]->name, name))
			return tg_families[i];
	return NULL;
}

void tg_settings_init(struct tg_settings *s, const struct tg_family *f)
{
	memset(s, 0, sizeof(*s));
	s->family = f;
	s->elem_bytes = f->default_elem_bytes;
	for (unsigned i = 0; i < f->nparams; i++)
		s->val[i] = f->params[i].def;
}

int tg_settings_set(struct tg_settings *s, const char *name, const char *value, char *err,
		    size_t errlen)
{
	const struct tg_family *f = s->family;
	unsigned long long v;
	char *end;

	if (!strcmp(name, "dtype")) {
		if (value && !strcmp(value, "float32"))
			s->elem_bytes = 4;
		else if (value && !strcmp(value, "float64"))
			s->elem_bytes = 8;
		else {
			snprintf(err, errlen, "--dtype: '%s' is not float32 or float64",
				 value ? value : "");
			return -1;
		}
		return 0;
	}
	for (unsigned i = 0; i < f->nparams; i++) {
		const struct tg_param *p = &f->params[i];

		if (strcmp(p->name, name))
			continue;
		errno = 0;
		if (!value || value[0] < '0' || value[0] > '9' ||
		    (v = strtoull(value, &end, 10), errno) || *end) {
			snprintf(err, errlen, "--%s: '%s' is not a decimal number", name,
				 value ? value : "");
			return -1;
		}
		if (v < p->min || v > p->max) {
			snprintf(err, errlen, "--%s: %llu is outside %" PRIu64 "..%" PRIu64, name, v,
				 p->min, p->max);
			return -1;
		}
		s->val[i] = v;
		return 0;
	}
	snprintf(err, errlen, "%s has no parameter --%s", f->name, name);
	return -1;
}

uint64_t tg_get(const struct tg_settings *s, const char *name)
{
	for (unsigned i = 0; i < s->family->nparams; i++)
		if (!strcmp(s->family->params[i].name, name))
			return s->val[i];
	abort(); /* a family asked for a parameter it does not declare */
}

int tg_generate(const struct tg_settings *s, FILE *out, char *err, size_t errlen)
{
	const struct tg_family *f = s->family;
	struct tg_builder b;
	char desc[512];
	size_t len;
	int rc;

	len = (size_t)snprintf(desc, sizeof(desc), "model=%s", f->model);
	for (unsigned i = 0; i < f->nparams && len < sizeof(desc); i++)
		len += (size_t)snprintf(desc + len, sizeof(desc) - len, " %s=%" PRIu64,
					f->params[i].name, s->val[i]);
	if (len < sizeof(desc))
		snprintf(desc + len, sizeof(desc) - len, " dtype=%s generator=dao-tracegen",
			 s->elem_bytes == 8 ? "float64" : "float32");

	tg_init(&b);
	tg_preamble(&b, "%s", desc);
	f->generate(&b, s);
	rc = tg_write(&b, out);
	if (rc)
		snprintf(err, errlen, "%s", b.err);
	tg_destroy(&b);
	return rc;
}
