/* SPDX-License-Identifier: MIT */
/* report.c - failures and refused calls (report.h). */
#include <stdio.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/report.h"

/* Counted outside the lock: a refusal may happen with or without it. */
static uint64_t misuses;

void cm_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "cudamodel: ERROR: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	fflush(stderr);
	_exit(CM_EXIT);
}

cudaError_t cm_vmisuse(const char *call, cudaError_t err, const struct cm_site *site,
		       const char *fmt, va_list ap)
{
	__atomic_add_fetch(&misuses, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "cudamodel: %s refused (%s): ", call, cudaGetErrorName(err));
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	cm_site_print("called from", site);
	return cm_ret(err);
}

cudaError_t cm_misuse(const char *call, cudaError_t err, const char *fmt, ...)
{
	struct cm_site site;
	va_list ap;

	cm_site_here(&site);
	va_start(ap, fmt);
	err = cm_vmisuse(call, err, &site, fmt, ap);
	va_end(ap);
	return err;
}

uint64_t cm_misuses(void)
{
	return __atomic_load_n(&misuses, __ATOMIC_RELAXED);
}
