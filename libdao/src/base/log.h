/* SPDX-License-Identifier: MIT */
/*
 * log.h - libdao's diagnostics on stderr.
 *
 * Each message is filtered by the level of the context it belongs to: the
 * thread's innermost log scope (an API call on a context, dao_open of a
 * config, the executor running one context's op). Outside any scope the
 * process default applies: dao_log_set_level's, else DAO_LOG, else warn.
 */
#ifndef DAO_LOG_H
#define DAO_LOG_H

#include "dao.h"

/* The process default (tests). */
void dao_log_set_level(dao_log_level level);
dao_log_level dao_log_get_level(void);
/* DAO_LOG from the environment, DAO_LOG_DEFAULT when unset or not valid. */
dao_log_level dao_log_env_level(void);

/* Log at `level` on this thread until the matching pop. Scopes nest (a
 * kernel function calling the API on the executor). */
void dao_log_scope_push(dao_log_level level);
void dao_log_scope_pop(void);

__attribute__((format(printf, 2, 3))) void dao_log(dao_log_level level, const char *fmt, ...);
/* As dao_log, filtered by `threshold` instead of the thread's scope. */
__attribute__((format(printf, 3, 4))) void dao_log_at(dao_log_level threshold,
						      dao_log_level level, const char *fmt, ...);

#define dao_err(...) dao_log(DAO_LOG_ERROR, __VA_ARGS__)
#define dao_warn(...) dao_log(DAO_LOG_WARN, __VA_ARGS__)
#define dao_info(...) dao_log(DAO_LOG_INFO, __VA_ARGS__)
#define dao_dbg(...) dao_log(DAO_LOG_DEBUG, __VA_ARGS__)

#endif /* DAO_LOG_H */
