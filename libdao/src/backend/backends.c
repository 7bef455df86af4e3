/* SPDX-License-Identifier: MIT */
/*
 * backends.c - the table of backends (backends.h). Without the CUDA toolkit
 * the CUDA kinds stay in the table and refuse to open, saying why.
 */
#include <stddef.h>

#include "backend/backends.h"
#include "base/log.h"
#ifdef DAO_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

static dao_status host_open(uint64_t budget, uint32_t percent, struct dao_backend **out)
{
	return dao_backend_host_create(dao_budget_bytes(budget, percent, dao_host_memory_bytes()),
				       out);
}

#ifdef DAO_HAVE_CUDA
static dao_status cuda_managed_open(uint64_t budget, uint32_t percent, struct dao_backend **out)
{
	return dao_backend_cuda_create(DAO_BACKEND_CUDA_MANAGED, budget, percent, out);
}

static dao_status cuda_explicit_open(uint64_t budget, uint32_t percent, struct dao_backend **out)
{
	return dao_backend_cuda_create(DAO_BACKEND_CUDA_EXPLICIT, budget, percent, out);
}
#else
static dao_status no_cuda(dao_backend_kind kind)
{
	dao_err("backend %s: this libdao was built without CUDA support", dao_backend_name(kind));
	return DAO_ERR_BACKEND;
}

static dao_status cuda_managed_open(uint64_t budget, uint32_t percent, struct dao_backend **out)
{
	return no_cuda(DAO_BACKEND_CUDA_MANAGED);
}

static dao_status cuda_explicit_open(uint64_t budget, uint32_t percent, struct dao_backend **out)
{
	return no_cuda(DAO_BACKEND_CUDA_EXPLICIT);
}
#endif

static const struct dao_backend_entry backends[] = {
	[DAO_BACKEND_HOST] = { DAO_BACKEND_HOST, "host", host_open },
	[DAO_BACKEND_CUDA_MANAGED] = { DAO_BACKEND_CUDA_MANAGED, "cuda-managed", cuda_managed_open },
	[DAO_BACKEND_CUDA_EXPLICIT] = { DAO_BACKEND_CUDA_EXPLICIT, "cuda-explicit", cuda_explicit_open },
};

const struct dao_backend_entry *dao_backend_entry(dao_backend_kind kind)
{
	if ((unsigned)kind >= sizeof(backends) / sizeof(backends[0]) || !backends[kind].create)
		return NULL;
	return &backends[kind];
}

dao_backend_kind dao_backend_auto_kind(void)
{
#ifdef DAO_HAVE_CUDA
	if (dao_cuda_usable())
		return DAO_BACKEND_CUDA_EXPLICIT;
#endif
	return DAO_BACKEND_HOST;
}
