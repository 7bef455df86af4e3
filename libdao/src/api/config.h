/* SPDX-License-Identifier: MIT */
/*
 * config.h - resolving a dao_config (config.c): struct fields first, then
 * the environment for what the struct leaves unset, then defaults.
 */
#ifndef DAO_API_CONFIG_H
#define DAO_API_CONFIG_H

#include "core/device.h"

dao_status config_resolve(const dao_config *cfg, struct resolved_config *out);
uint64_t config_percent_of(uint64_t total, uint32_t percent);

#endif /* DAO_API_CONFIG_H */
