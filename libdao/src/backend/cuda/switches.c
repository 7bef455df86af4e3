/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/switches.h"
#include "base/log.h"

static const struct {
	const char *name;
	unsigned bits;
} names[] = {
	{ "no-discard", CU_NO_DISCARD },
	{ "no-accessed-by", CU_NO_ACCESSED_BY },
	{ "no-preferred-host", CU_NO_PREFERRED_HOST },
	{ "split-to-host", CU_SPLIT_TO_HOST },
	{ "no-advise", CU_NO_ACCESSED_BY | CU_NO_PREFERRED_HOST },
};

#define N_NAMES (sizeof(names) / sizeof(names[0]))
/* The single switches, in the order canon lists them. */
#define N_SINGLE 4

static dao_status refuse(const char *v, const char *name, size_t n)
{
	dao_err("DAO_CUDA_MANAGED=%s: '%.*s' is not a switch (a comma-separated list of "
		"no-discard, no-accessed-by, no-preferred-host, split-to-host, no-advise)",
		v, (int)n, name);
	return DAO_ERR_CONFIG;
}

dao_status cu_switches_read(unsigned *out, char canon[CU_SWITCHES_LEN])
{
	const char *v = getenv("DAO_CUDA_MANAGED"), *p;
	size_t used = 0;

	*out = 0;
	canon[0] = '\0';
	if (!v || !*v)
		return DAO_OK;
	for (p = v;;) {
		size_t n = strcspn(p, ",");
		size_t i;

		for (i = 0; i < N_NAMES; i++)
			if (strlen(names[i].name) == n && !strncmp(p, names[i].name, n))
				break;
		if (i == N_NAMES)
			return refuse(v, p, n);
		*out |= names[i].bits;
		if (!p[n])
			break;
		p += n + 1;
	}
	for (size_t i = 0; i < N_SINGLE; i++)
		if (*out & names[i].bits)
			used += (size_t)snprintf(canon + used, CU_SWITCHES_LEN - used, "%s%s",
						 used ? "," : "", names[i].name);
	return DAO_OK;
}
