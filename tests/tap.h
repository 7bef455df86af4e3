/* SPDX-License-Identifier: MIT */
/*
 * tap.h - a minimal Test Anything Protocol emitter for the user-space tests.
 * Each test program prints a plan and one line per check; prove reads them.
 *
 * prove shows a test's stderr but hides its stdout comments, so, as with
 * Test::More's diag and note: what explains a failure goes to stderr (the
 * comments printed after a failing check, until the next check, and the
 * test's replay line, printed once at its first failure or bail-out), and
 * every other comment goes to stdout, keeping passing tests quiet.
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
/* The last check failed (not a TODO one): tap_diag explains it on stderr. */
static int tap_last_failed;
/* How to replay this run (a seed), set by the test; printed to stderr at
 * the first failure or bail-out so that a CI log is enough to replay it. */
static char tap_replay[128];
static int tap_replay_shown;

static inline void tap_show_replay(void)
{
	if (tap_replay[0] && !tap_replay_shown) {
		tap_replay_shown = 1;
		fprintf(stderr, "# %s\n", tap_replay);
		fflush(stderr);
	}
}

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
	tap_last_failed = !cond && !tap_todo;
	if (tap_last_failed)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (tap_todo)
		printf(" # TODO %s", tap_todo);
	printf("\n");
	fflush(stdout);
	if (tap_last_failed)
		tap_show_replay();
	return cond;
}

/* A comment: on stderr right after a failing check, else on stdout. */
__attribute__((format(printf, 1, 2))) static inline void tap_diag(const char *fmt, ...)
{
	FILE *f = tap_last_failed ? stderr : stdout;
	va_list ap;

	fprintf(f, "# ");
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fprintf(f, "\n");
	fflush(f);
}

__attribute__((format(printf, 1, 2))) static inline void tap_bail(const char *fmt, ...)
{
	va_list ap;

	tap_show_replay();
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
