/* SPDX-License-Identifier: MIT */
/*
 * options.c - checks of the plugin's option values, without libdao: the
 * plugin is loaded into srun, sbatch and slurmstepd, which must not depend
 * on the job's library being installed where they run. The names of the
 * policies and backends come from libdao's tables at build time
 * (dao_kind_names.h, written by tools/kinds).
 */
#include <stdint.h>
#include <string.h>

#include "dao_kind_names.h"
#include "options.h"

/* Digits only; false on none or overflow of uint64_t. */
static int parse_decimal(const char **p, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*out = v;
	return 1;
}

const char *dao_opt_check_budget(const char *text)
{
	static const char suffixes[] = "kKmMgGtT";
	const char *p = text;
	unsigned shift = 0;
	uint64_t v;

	if (!text || !*text)
		return "empty: give bytes with an optional K, M, G or T suffix, or N% (1 to 100)";
	if (!parse_decimal(&p, &v))
		return "not a size: give bytes with an optional K, M, G or T suffix (\"8G\"), "
		       "or N% of device memory (\"25%\")";
	if (*p == '%') {
		if (p[1])
			return "trailing characters after the percentage";
		if (v < 1 || v > 100)
			return "a percentage must be 1 to 100";
		return NULL;
	}
	if (*p && strchr(suffixes, *p)) {
		shift = (unsigned)(strchr(suffixes, *p) - suffixes) / 2 * 10 + 10;
		p++;
		if (*p == 'i' || *p == 'I')
			p++;
		if (*p == 'b' || *p == 'B')
			p++;
	}
	if (*p)
		return "not a size: give bytes with an optional K, M, G or T suffix (\"8G\"), "
		       "or N% of device memory (\"25%\")";
	if (v == 0)
		return "a budget of zero bytes cannot hold anything";
	/* libdao refuses budgets of 2^63 bytes and more. */
	if (v > (UINT64_MAX >> 1 >> shift))
		return "too large";
	return NULL;
}

static const char *check_name(const char *text, const char *const *names, const char *why)
{
	for (; *names; names++)
		if (text && !strcmp(text, *names))
			return NULL;
	return why;
}

const char *dao_opt_check_policy(const char *text)
{
	static const char *const names[] = { DAO_KIND_POLICIES, NULL };

	return check_name(text, names, "unknown policy (" DAO_KIND_POLICIES_COMMAS ")");
}

const char *dao_opt_check_backend(const char *text)
{
	static const char *const names[] = { DAO_KIND_BACKENDS, NULL };

	return check_name(text, names, "unknown backend (" DAO_KIND_BACKENDS_COMMAS ")");
}

const char *dao_opt_check_lookahead(const char *text)
{
	const char *p = text;
	uint64_t v;

	if (!text || !parse_decimal(&p, &v) || *p)
		return "not a number of kernels";
	if (v < 1 || v > 65536)
		return "must be 1 to 65536 kernels";
	return NULL;
}
