/* SPDX-License-Identifier: MIT */
/*
 * site.h - call sites: where a call into the model came from, a few frames
 * of backtrace, printed as binary+offset for addr2line.
 */
#ifndef DAO_CUDAMODEL_BASE_SITE_H
#define DAO_CUDAMODEL_BASE_SITE_H

#define CM_FRAMES 6

struct cm_site {
	void *pc[CM_FRAMES];
	int n;
};

/* The backtrace from the caller's caller on: called in an entry point, the
 * site is the application's (or a library's) call. */
void cm_site_here(struct cm_site *s);
void cm_site_print(const char *what, const struct cm_site *s);

#endif /* DAO_CUDAMODEL_BASE_SITE_H */
