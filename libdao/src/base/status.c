/* SPDX-License-Identifier: MIT */
#include "dao.h"

const char *dao_strerror(dao_status status)
{
	switch (status) {
	case DAO_OK: return "success";
	case DAO_ERR_NULL: return "a required pointer argument is NULL";
	case DAO_ERR_INVALID: return "invalid argument";
	case DAO_ERR_OVERFLOW: return "size or offset overflows";
	case DAO_ERR_RANGE: return "range lies outside the buffer";
	case DAO_ERR_HANDLE: return "buffer handle is released, stale or was never issued";
	case DAO_ERR_FOREIGN: return "buffer handle belongs to another context";
	case DAO_ERR_CLOSED: return "context is closed or was never opened";
	case DAO_ERR_BUDGET: return "operands do not fit in the device budget";
	case DAO_ERR_HOST_BUDGET: return "host budget exhausted";
	case DAO_ERR_NOMEM: return "out of memory";
	case DAO_ERR_BACKEND: return "backend unavailable or failed";
	case DAO_ERR_CONFIG: return "invalid configuration";
	case DAO_ERR_CONFLICT: return "configuration conflicts with a context open on the same device";
	case DAO_ERR_KERNEL: return "a kernel reported failure";
	case DAO_ERR_IO: return "input/output error";
	case DAO_ERR_FORMAT: return "malformed input";
	case DAO_ERR_FAILED: return "context failed earlier; see dao_sync";
	case DAO_ERR_LIMIT: return "a fixed limit of libdao is reached";
	case DAO_ERR_REENTRANT: return "not allowed inside a kernel function of the same device";
	case DAO_ERR_LOST: return "the buffer's latest contents were lost when the context failed";
	}
	return "unknown status";
}
