/* SPDX-License-Identifier: MIT */
/*
 * budget.c - the device budget against a backend's allocation unit
 * (backend.h, dao.h): every buffer takes whole units of the budget, so a
 * budget below one unit could hold no buffer at all. It is refused where
 * it is given, dao_open, rather than at the first create.
 */
#include "backend/backend.h"
#include "base/log.h"

dao_status dao_budget_check(const char *backend, uint64_t budget, uint64_t unit)
{
	if (budget >= unit)
		return DAO_OK;
	dao_err("backend %s: a device budget of %llu bytes is below its allocation unit of %llu "
		"bytes; every buffer takes whole units of the budget, so it could hold none",
		backend, (unsigned long long)budget, (unsigned long long)unit);
	return DAO_ERR_CONFIG;
}
