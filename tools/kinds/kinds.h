/* SPDX-License-Identifier: MIT */
/*
 * kinds.h - the backends and policies a tool offers, asked of the libdao it
 * runs with, so that no tool keeps a list of its own: libdao's tables
 * (libdao/src/backend/backends.c, libdao/src/policy/policy.c) are the one
 * list. dao.h numbers both kinds from 1 without a gap, and
 * dao_backend_name and dao_policy_name say "unknown" past the last
 * (tests/unit/test_kinds.c holds the tables to that).
 */
#ifndef DAO_TOOLS_KINDS_H
#define DAO_TOOLS_KINDS_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dao.h"

enum kinds_of { KINDS_BACKEND, KINDS_POLICY };

/* Where a list starts: after DEFAULT; for the backends a tool opens by
 * name, after auto too (auto is libdao's choice, not a backend). */
#define KINDS_FIRST_BACKEND (DAO_BACKEND_DEFAULT + 1)
#define KINDS_FIRST_NAMED_BACKEND (DAO_BACKEND_AUTO + 1)
#define KINDS_FIRST_POLICY (DAO_POLICY_DEFAULT + 1)

/* The name of value v (a dao_backend_kind or a dao_policy), NULL past the
 * last. */
static inline const char *kinds_name(enum kinds_of of, int v)
{
	const char *n = of == KINDS_POLICY ? dao_policy_name((dao_policy)v)
					   : dao_backend_name((dao_backend_kind)v);

	return strcmp(n, "unknown") ? n : NULL;
}

/* The value from `first` on named text; 0 (DEFAULT) when none is. */
static inline int kinds_find(enum kinds_of of, int first, const char *text)
{
	const char *n;

	for (int v = first; (n = kinds_name(of, v)); v++)
		if (!strcmp(n, text))
			return v;
	return 0;
}

/* How many values there are from `first` on. */
static inline int kinds_count(enum kinds_of of, int first)
{
	int v = first;

	while (kinds_name(of, v))
		v++;
	return v - first;
}

/* The names from `first` on into buf: sep between two, last before the
 * last one ("a, b or c"). Cut short if buf is too small. */
static inline const char *kinds_list(char *buf, size_t size, enum kinds_of of, int first,
				     const char *sep, const char *last)
{
	size_t used = 0;
	const char *n;

	buf[0] = '\0';
	for (int v = first; (n = kinds_name(of, v)) && used < size; v++) {
		const char *before = v == first ? "" : kinds_name(of, v + 1) ? sep : last;
		int w = snprintf(buf + used, size - used, "%s%s", before, n);

		if (w < 0)
			break;
		used += (size_t)w;
	}
	return buf;
}

/* The value from `first` on named text; else 0, after saying on stderr
 * "PREFIX: unknown backend|policy 'text' (names, extra)". extra: another
 * value the tool takes besides libdao's, or NULL. */
static inline int kinds_parse(enum kinds_of of, int first, const char *text, const char *prefix,
			      const char *extra)
{
	int v = kinds_find(of, first, text);
	char names[256];

	if (!v)
		fprintf(stderr, "%s: unknown %s '%s' (%s%s%s)\n", prefix,
			of == KINDS_POLICY ? "policy" : "backend", text,
			kinds_list(names, sizeof(names), of, first, ", ", ", "), extra ? ", " : "",
			extra ? extra : "");
	return v;
}

#endif /* DAO_TOOLS_KINDS_H */
