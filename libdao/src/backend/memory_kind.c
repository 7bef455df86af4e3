/* SPDX-License-Identifier: MIT */
/*
 * memory_kind.c - the two kinds of device memory a backend offers
 * (backend.h): a separate copy, or the host copy's own pages.
 */
#include "backend/backend.h"

enum dao_vacate dao_separate_vacate(const struct dao_backend *be, bool on_device, bool dirty,
				    bool needed)
{
	if (!dirty)
		return DAO_VACATE_KEEP; /* the host copy is current, or the data is nowhere */
	return needed ? DAO_VACATE_COPY : DAO_VACATE_FORGET;
}

/* The pages leave the device either way: with their bytes when these are
 * still needed, else without (a clean drop is no drop at all). */
enum dao_vacate dao_unified_vacate(const struct dao_backend *be, bool on_device, bool dirty,
				   bool needed)
{
	return on_device && needed ? DAO_VACATE_COPY : DAO_VACATE_DISCARD;
}

bool dao_backend_no(const struct dao_backend *be)
{
	return false;
}

bool dao_backend_yes(const struct dao_backend *be)
{
	return true;
}
