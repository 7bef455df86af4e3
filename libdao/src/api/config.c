/* SPDX-License-Identifier: MIT */
/*
 * config.c - the configuration a context opens with: struct fields first,
 * then the environment for what the struct leaves unset, then defaults.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/config.h"
#include "backend/backends.h"
#include "base/log.h"
#include "policy/policy.h"

void dao_config_init(dao_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
}

dao_status dao_parse_size(const char *text, uint64_t *bytes)
{
	unsigned long long v;
	char *end;
	unsigned shift = 0;

	if (!text || !bytes)
		return DAO_ERR_NULL;
	while (isspace((unsigned char)*text))
		text++;
	if (!isdigit((unsigned char)*text))
		return DAO_ERR_FORMAT;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno == ERANGE)
		return DAO_ERR_OVERFLOW;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (shift && (*end == 'b' || *end == 'B'))
		end++;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return DAO_ERR_FORMAT;
	if (shift && v > (UINT64_MAX >> shift))
		return DAO_ERR_OVERFLOW;
	*bytes = (uint64_t)v << shift;
	return DAO_OK;
}

/* "N%" -> percent, else a size. */
static dao_status parse_budget(const char *text, uint64_t *bytes, uint32_t *percent)
{
	size_t n = strlen(text);
	char *end;
	unsigned long p;

	if (n > 1 && text[n - 1] == '%') {
		if (!isdigit((unsigned char)text[0]))
			return DAO_ERR_FORMAT;
		errno = 0;
		p = strtoul(text, &end, 10);
		if (errno || end != text + n - 1 || p == 0 || p > 100)
			return DAO_ERR_FORMAT;
		*percent = (uint32_t)p;
		*bytes = 0;
		return DAO_OK;
	}
	*percent = 0;
	return dao_parse_size(text, bytes);
}

static int lookup(const char *text, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(text, names[i]))
			return i;
	return -1;
}

static dao_status env_error(const char *var, const char *val)
{
	dao_err("%s=\"%s\" is not valid", var, val);
	return DAO_ERR_CONFIG;
}

dao_log_level config_log_level(const dao_config *cfg)
{
	dao_log_level level = DAO_LOG_DEFAULT;

	if (cfg && cfg->size == sizeof(*cfg) && (unsigned)cfg->log_level <= DAO_LOG_DEBUG)
		level = cfg->log_level;
	if (!level)
		level = dao_log_env_level();
	return level ? level : DAO_LOG_WARN;
}

dao_status config_resolve(const dao_config *cfg, struct resolved_config *o)
{
	static const char *const levels[] = { NULL, "silent", "error", "warn", "info", "debug" };
	dao_config def;
	const char *v;
	int i;

	if (!cfg) {
		dao_config_init(&def);
		cfg = &def;
	}
	memset(o, 0, sizeof(*o));
	if (cfg->size != sizeof(*cfg) || cfg->flags & ~DAO_CONFIG_FLAGS_ALL ||
	    (cfg->flags & DAO_CONFIG_PLAN_ORDER) == DAO_CONFIG_PLAN_ORDER ||
	    (cfg->backend != DAO_BACKEND_DEFAULT && !dao_backend_entry(cfg->backend)) ||
	    !policy_valid(cfg->policy) || (unsigned)cfg->log_level > DAO_LOG_DEBUG ||
	    cfg->lookahead > DAO_MAX_LOOKAHEAD || cfg->device_budget_percent > 100 ||
	    cfg->reserved0 || cfg->device_budget >= (1ull << 63) || cfg->host_budget >= (1ull << 63))
		return DAO_ERR_CONFIG;
	o->flags = cfg->flags;

	o->log_level = cfg->log_level;
	if (!o->log_level && (v = getenv("DAO_LOG")) && *v) {
		if ((i = lookup(v, levels, 6)) <= 0)
			return env_error("DAO_LOG", v);
		o->log_level = (dao_log_level)i;
	}
	if (!o->log_level)
		o->log_level = DAO_LOG_WARN;

	o->backend = cfg->backend;
	if (!o->backend && (v = getenv("DAO_BACKEND")) && *v) {
		const struct dao_backend_entry *e = dao_backend_named(v);

		if (!e)
			return env_error("DAO_BACKEND", v);
		o->backend = e->kind;
	}
	o->backend_explicit = o->backend > DAO_BACKEND_AUTO;
	if (!o->backend)
		o->backend = DAO_BACKEND_AUTO;

	o->policy = cfg->policy;
	if (!o->policy && (v = getenv("DAO_POLICY")) && *v) {
		const struct dao_policy_entry *e = policy_named(v);

		if (!e)
			return env_error("DAO_POLICY", v);
		o->policy = e->id;
	}
	o->policy_explicit = o->policy != 0;
	if (!o->policy)
		o->policy = policy_default();

	o->lookahead = cfg->lookahead;
	if (!o->lookahead && (v = getenv("DAO_LOOKAHEAD")) && *v) {
		uint64_t n;

		if (dao_parse_size(v, &n) != DAO_OK || n == 0 || n > DAO_MAX_LOOKAHEAD)
			return env_error("DAO_LOOKAHEAD", v);
		o->lookahead = (uint32_t)n;
	}
	o->lookahead_explicit = o->lookahead != 0;
	if (!o->lookahead)
		o->lookahead = 64;

	o->device_budget = cfg->device_budget;
	o->device_budget_percent = cfg->device_budget ? 0 : cfg->device_budget_percent;
	if (!o->device_budget && !o->device_budget_percent && (v = getenv("DAO_DEVICE_BUDGET")) &&
	    *v) {
		if (parse_budget(v, &o->device_budget, &o->device_budget_percent) != DAO_OK ||
		    (!o->device_budget && !o->device_budget_percent) ||
		    o->device_budget >= (1ull << 63))
			return env_error("DAO_DEVICE_BUDGET", v);
	}
	o->budget_explicit = o->device_budget || o->device_budget_percent;
	if (!o->budget_explicit)
		o->device_budget_percent = 50;

	o->host_budget = cfg->host_budget;
	if (!o->host_budget && (v = getenv("DAO_HOST_BUDGET")) && *v) {
		if (parse_budget(v, &o->host_budget, &o->host_budget_percent) != DAO_OK ||
		    (!o->host_budget && !o->host_budget_percent) || o->host_budget >= (1ull << 63))
			return env_error("DAO_HOST_BUDGET", v);
	}
	o->host_budget_explicit = o->host_budget || o->host_budget_percent;
	if (!o->host_budget && !o->host_budget_percent)
		o->host_budget_percent = 100;

	v = cfg->trace_path;
	if (!v)
		v = getenv("DAO_TRACE");
	if (v && *v) {
		if (strlen(v) >= sizeof(o->trace_path))
			return DAO_ERR_CONFIG;
		strcpy(o->trace_path, v);
	}
	/* Not a field of dao_config (an ABI change): the environment only. */
	v = getenv("DAO_SUMMARY");
	if (v && *v) {
		if ((strcmp(v, "stderr") && v[0] != '/') || strlen(v) >= sizeof(o->summary_path))
			return env_error("DAO_SUMMARY", v);
		strcpy(o->summary_path, v);
	}
	v = cfg->job_name;
	if (!v)
		v = getenv("DAO_JOB");
	if (v && *v)
		snprintf(o->job_name, sizeof(o->job_name), "%s", v);
	return DAO_OK;
}
