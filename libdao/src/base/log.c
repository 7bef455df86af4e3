/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

/* DAO_LOG_DEFAULT: not set, DAO_LOG or warn decides. */
static _Atomic int default_level = DAO_LOG_DEFAULT;

/* This thread's scopes; deeper nesting than this keeps the innermost
 * level that fits and still pops in pairs. */
#define SCOPE_DEPTH 8
static __thread unsigned char scope[SCOPE_DEPTH];
static __thread unsigned scope_depth;

void dao_log_set_level(dao_log_level level)
{
	if (level >= DAO_LOG_SILENT && level <= DAO_LOG_DEBUG)
		default_level = level;
}

dao_log_level dao_log_env_level(void)
{
	static const char *const names[] = { "silent", "error", "warn", "info", "debug" };
	const char *v = getenv("DAO_LOG");

	for (int i = 0; v && i < 5; i++)
		if (!strcmp(v, names[i]))
			return (dao_log_level)(DAO_LOG_SILENT + i);
	return DAO_LOG_DEFAULT;
}

dao_log_level dao_log_get_level(void)
{
	dao_log_level level = (dao_log_level)default_level;

	if (!level)
		level = dao_log_env_level();
	return level ? level : DAO_LOG_WARN;
}

void dao_log_scope_push(dao_log_level level)
{
	if (scope_depth < SCOPE_DEPTH)
		scope[scope_depth] = (unsigned char)level;
	scope_depth++;
}

void dao_log_scope_pop(void)
{
	if (scope_depth)
		scope_depth--;
}

static dao_log_level current_level(void)
{
	if (scope_depth) {
		unsigned i = scope_depth < SCOPE_DEPTH ? scope_depth : SCOPE_DEPTH;
		dao_log_level level = (dao_log_level)scope[i - 1];

		if (level)
			return level;
	}
	return dao_log_get_level();
}

static void emit(dao_log_level threshold, dao_log_level level, const char *fmt, va_list ap)
{
	static const char *const names[] = { "", "", "error", "warning", "info", "debug" };
	char line[1024];

	if (level < DAO_LOG_ERROR || level > DAO_LOG_DEBUG || level > threshold)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	/* One write per line so lines from several threads do not interleave. */
	fprintf(stderr, "dao: %s: %s\n", names[level], line);
}

void dao_log(dao_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(current_level(), level, fmt, ap);
	va_end(ap);
}

void dao_log_at(dao_log_level threshold, dao_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(threshold, level, fmt, ap);
	va_end(ap);
}
