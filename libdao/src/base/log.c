/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>

#include "base/log.h"

static _Atomic int log_level = DAO_LOG_WARN;

void dao_log_set_level(dao_log_level level)
{
	if (level >= DAO_LOG_SILENT && level <= DAO_LOG_DEBUG)
		log_level = level;
}

dao_log_level dao_log_get_level(void)
{
	return (dao_log_level)log_level;
}

void dao_log(dao_log_level level, const char *fmt, ...)
{
	static const char *const names[] = { "", "", "error", "warning", "info", "debug" };
	char line[1024];
	va_list ap;

	if ((int)level > log_level || level < DAO_LOG_ERROR)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write per line so lines from several threads do not interleave. */
	fprintf(stderr, "dao: %s: %s\n", names[level], line);
}
