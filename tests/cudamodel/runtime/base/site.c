/* SPDX-License-Identifier: MIT */
/* site.c - call sites (site.h). */
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <string.h>

#include "base/site.h"

void cm_site_here(struct cm_site *s)
{
	void *pc[CM_FRAMES + 2];
	int n = backtrace(pc, CM_FRAMES + 2);

	/* Drop this function and the model's entry point. */
	s->n = n > 2 ? n - 2 : 0;
	memcpy(s->pc, pc + 2, (size_t)s->n * sizeof(void *));
}

void cm_site_print(const char *what, const struct cm_site *s)
{
	fprintf(stderr, "cudamodel:   %s\n", what);
	for (int i = 0; i < s->n; i++) {
		Dl_info info;

		if (dladdr(s->pc[i], &info) && info.dli_fname) {
			if (info.dli_sname)
				fprintf(stderr, "cudamodel:     #%d %s (%s+0x%lx)\n", i, info.dli_sname,
					info.dli_fname,
					(unsigned long)((char *)s->pc[i] - (char *)info.dli_fbase));
			else
				fprintf(stderr, "cudamodel:     #%d %s+0x%lx\n", i, info.dli_fname,
					(unsigned long)((char *)s->pc[i] - (char *)info.dli_fbase));
		} else {
			fprintf(stderr, "cudamodel:     #%d %p\n", i, s->pc[i]);
		}
	}
}
