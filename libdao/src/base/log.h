/* SPDX-License-Identifier: MIT */
/*
 * log.h - libdao's diagnostics on stderr, filtered by DAO_LOG or the level of
 * the most recently opened context.
 */
#ifndef DAO_LOG_H
#define DAO_LOG_H

#include "dao.h"

void dao_log_set_level(dao_log_level level);
dao_log_level dao_log_get_level(void);

__attribute__((format(printf, 2, 3))) void dao_log(dao_log_level level, const char *fmt, ...);

#define dao_err(...) dao_log(DAO_LOG_ERROR, __VA_ARGS__)
#define dao_warn(...) dao_log(DAO_LOG_WARN, __VA_ARGS__)
#define dao_info(...) dao_log(DAO_LOG_INFO, __VA_ARGS__)
#define dao_dbg(...) dao_log(DAO_LOG_DEBUG, __VA_ARGS__)

#endif /* DAO_LOG_H */
