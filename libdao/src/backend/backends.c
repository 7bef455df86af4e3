/* SPDX-License-Identifier: MIT */
/*
 * backends.c - the table of backends (backends.h). Without the CUDA toolkit
 * the CUDA kinds stay in the table and refuse to open, saying why.
 */
#include <stddef.h>
#include <string.h>

#include "backend/backends.h"
#include "base/log.h"
#ifdef DAO_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

static dao_status host_open(const struct dao_backend_entry *self, uint64_t budget,
			    uint32_t percent, struct dao_backend **out)
{
	return dao_backend_host_create(self->name,
				       dao_budget_bytes(budget, percent, dao_host_memory_bytes()),
				       out);
}

static dao_status cuda_open(const struct dao_backend_entry *self, uint64_t budget,
			    uint32_t percent, struct dao_backend **out)
{
#ifdef DAO_HAVE_CUDA
	return dao_backend_cuda_create(self->kind, self->name, budget, percent, out);
#else
	dao_err("backend %s: this libdao was built without CUDA support", self->name);
	return DAO_ERR_BACKEND;
#endif
}

/* In the order of their kinds: dao.h numbers them from 1 without a gap,
 * and the tools list them by asking dao_backend_name for 1, 2, ... until
 * it says "unknown" (tools/kinds/kinds.h). */
static const struct dao_backend_entry backends[] = {
	{ DAO_BACKEND_AUTO, "auto", NULL },
	{ DAO_BACKEND_HOST, "host", host_open },
	{ DAO_BACKEND_CUDA_MANAGED, "cuda-managed", cuda_open },
	{ DAO_BACKEND_CUDA_EXPLICIT, "cuda-explicit", cuda_open },
};

const struct dao_backend_entry *dao_backend_entry(dao_backend_kind kind)
{
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (backends[i].kind == kind)
			return &backends[i];
	return NULL;
}

const struct dao_backend_entry *dao_backend_named(const char *name)
{
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (!strcmp(backends[i].name, name))
			return &backends[i];
	return NULL;
}

const char *dao_backend_name(dao_backend_kind kind)
{
	const struct dao_backend_entry *e = dao_backend_entry(kind);

	if (kind == DAO_BACKEND_DEFAULT)
		return "default";
	return e ? e->name : "unknown";
}

const char *dao_backend_name_of(const struct dao_backend *be)
{
	return be->ops->name ? be->ops->name : dao_backend_name(be->kind);
}

dao_backend_kind dao_backend_auto_kind(void)
{
#ifdef DAO_HAVE_CUDA
	if (dao_cuda_usable())
		return DAO_BACKEND_CUDA_EXPLICIT;
#endif
	return DAO_BACKEND_HOST;
}
