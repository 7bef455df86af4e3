/* SPDX-License-Identifier: MIT */
/* inject.c - runtime calls failed on purpose (inject.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/inject.h"
#include "base/report.h"

#define MAX_TARGETS 8
#define MAX_CALLS 64 /* distinct runtime functions counted: more than the model has */

static struct target {
	char name[48]; /* a function's name, or "all" */
	uint64_t at;
	bool onwards;
} targets[MAX_TARGETS];
static int ntargets;
static bool counting;

/* Counted under a lock of its own: entry points call here before they
 * take the model's. Names are the entry points' literals. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	const char *name;
	uint64_t n;
} calls[MAX_CALLS];
static int ncalls;
static uint64_t all_calls;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void print_counts(void)
{
	pthread_mutex_lock(&mu);
	fprintf(stderr, "cudamodel: DAO_CUDAMODEL_FAIL: calls all=%" PRIu64, all_calls);
	for (int i = 0; i < ncalls; i++)
		fprintf(stderr, " %s=%" PRIu64, calls[i].name, calls[i].n);
	fprintf(stderr, "\n");
	pthread_mutex_unlock(&mu);
}

static void parse_target(const char *spec, const char *s, size_t len)
{
	struct target *t = &targets[ntargets];
	const char *colon = memchr(s, ':', len);
	char *end;

	if (ntargets == MAX_TARGETS || !colon || colon == s ||
	    (size_t)(colon - s) >= sizeof(t->name) || colon[1] < '1' || colon[1] > '9')
		cm_fail("DAO_CUDAMODEL_FAIL=%s: not a list of NAME:N[+], all:N[+] or count", spec);
	memcpy(t->name, s, (size_t)(colon - s));
	errno = 0;
	t->at = strtoull(colon + 1, &end, 10);
	t->onwards = end < s + len && *end == '+';
	if (t->onwards)
		end++;
	if (errno || end != s + len)
		cm_fail("DAO_CUDAMODEL_FAIL=%s: not a list of NAME:N[+], all:N[+] or count", spec);
	ntargets++;
}

static void parse(void)
{
	const char *spec = getenv("DAO_CUDAMODEL_FAIL");

	if (!spec || !*spec)
		return;
	for (const char *s = spec; *s;) {
		size_t len = strcspn(s, ",");

		if (len == 5 && !strncmp(s, "count", 5))
			counting = true;
		else
			parse_target(spec, s, len);
		s += len;
		if (*s == ',')
			s++;
	}
	if (counting)
		atexit(print_counts);
}

static bool hits(const struct target *t, uint64_t n)
{
	return n == t->at || (t->onwards && n > t->at);
}

cudaError_t cm_inject(const char *call, cudaError_t err)
{
	uint64_t n = 0, all;
	bool fail = false, first = false;
	int i;

	pthread_once(&once, parse);
	if (!ntargets && !counting)
		return cudaSuccess;
	pthread_mutex_lock(&mu);
	all = ++all_calls;
	for (i = 0; i < ncalls && strcmp(calls[i].name, call); i++)
		;
	if (i == ncalls && ncalls < MAX_CALLS)
		calls[ncalls++].name = call;
	if (i < MAX_CALLS)
		n = ++calls[i].n;
	for (int t = 0; t < ntargets; t++) {
		uint64_t c = strcmp(targets[t].name, "all") ? (strcmp(targets[t].name, call) ? 0 : n)
							    : all;

		if (c && hits(&targets[t], c)) {
			fail = true;
			first |= c == targets[t].at;
		}
	}
	pthread_mutex_unlock(&mu);
	if (!fail)
		return cudaSuccess;
	if (first)
		fprintf(stderr, "cudamodel: DAO_CUDAMODEL_FAIL: failing %s (call %" PRIu64
				" of it, %" PRIu64 " of all) with %s\n",
			call, n, all, cudaGetErrorName(err));
	return err;
}
