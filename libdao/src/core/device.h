/* SPDX-License-Identifier: MIT */
/*
 * device.h - creating and destroying a device (device.c), from the settings
 * the api layer resolved.
 */
#ifndef DAO_CORE_DEVICE_H
#define DAO_CORE_DEVICE_H

#include "core/objects.h"

/* The settings a context opens with, resolved by the api layer (config.c)
 * from the dao_config, the environment and the defaults. */
struct resolved_config {
	dao_backend_kind backend;
	bool backend_explicit;
	dao_policy policy;
	bool policy_explicit;
	uint32_t lookahead;
	bool lookahead_explicit;
	dao_log_level log_level;
	uint64_t device_budget;
	uint32_t device_budget_percent;
	bool budget_explicit;
	uint64_t host_budget;
	uint32_t host_budget_percent;
	bool host_budget_explicit;
	uint32_t flags;
	char trace_path[4096];
	char job_name[64];
	char summary_path[4096];
};

/* A device on backend be (owned from then on, also on failure) with host
 * budget host_budget; starts its executor. */
dao_status device_create(struct dao_backend *be, const struct resolved_config *rc,
			 uint64_t host_budget, struct device **out);
void device_destroy(struct device *d); /* NULL: nothing */

#endif /* DAO_CORE_DEVICE_H */
