/* SPDX-License-Identifier: MIT */
/*
 * tap.h - a minimal Test Anything Protocol emitter for the user-space tests.
 * Each test program prints a plan and one line per check; prove reads them.
 */
#ifndef DAO_TAP_H
#define DAO_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n;
static int tap_failed;
/* While set, checks are reported with a TAP "# TODO" directive: a known
 * defect whose failure prove reports but does not count. */
static const char *tap_todo;

static inline void tap_plan(int n)
{
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline void tap_plan_done(void)
{
	printf("1..%d\n", tap_n);
	fflush(stdout);
}

__attribute__((format(printf, 2, 3))) static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (!cond && !tap_todo)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (tap_todo)
		printf(" # TODO %s", tap_todo);
	printf("\n");
	fflush(stdout);
	return cond;
}

__attribute__((format(printf, 1, 2))) static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

__attribute__((format(printf, 1, 2))) static inline void tap_bail(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(1);
}

/* Exit status for the end of main(). */
static inline int tap_exit(void)
{
	return tap_failed ? 1 : 0;
}

#define TAP_IS_U64(got, want, name)                                                         \
	do {                                                                                \
		unsigned long long g_ = (unsigned long long)(got);                          \
		unsigned long long w_ = (unsigned long long)(want);                         \
		if (!tap_ok(g_ == w_, "%s", name))                                          \
			tap_diag("  got %llu, want %llu (%s:%d)", g_, w_, __FILE__, __LINE__); \
	} while (0)

#define TAP_IS_STATUS(got, want, name)                                                   \
	do {                                                                             \
		dao_status g_ = (got);                                                   \
		dao_status w_ = (want);                                                  \
		if (!tap_ok(g_ == w_, "%s", name))                                       \
			tap_diag("  got %d (%s), want %d (%s) (%s:%d)", (int)g_,         \
				 dao_strerror(g_), (int)w_, dao_strerror(w_), __FILE__, \
				 __LINE__);                                              \
	} while (0)

#endif /* DAO_TAP_H */
