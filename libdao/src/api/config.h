/* SPDX-License-Identifier: MIT */
/*
 * config.h - resolving a dao_config (config.c): struct fields first, then
 * the environment for what the struct leaves unset, then defaults.
 */
#ifndef DAO_API_CONFIG_H
#define DAO_API_CONFIG_H

#include "core/device.h"

dao_status config_resolve(const dao_config *cfg, struct resolved_config *out);
/* The level a config asks for (field, else DAO_LOG, else warn), known before
 * anything else of it is checked, so its own errors honour it. */
dao_log_level config_log_level(const dao_config *cfg);

#endif /* DAO_API_CONFIG_H */
